"""Stage 1, load: YAML files -> plain JSON-like values with a source position for every node.

PyYAML silently keeps the last of duplicate keys and expands aliases without bound, so this
composes the node graph itself and converts it, reporting duplicates and refusing alias bombs.
Mapping keys keep their source text (``-100123`` stays a string, ``on`` does not become True).

Most files are read faster from the parser's events instead (``_EventReader``): it gives the
same values and positions for every file it accepts, and declines every file with anything
the node-graph reader would report or treat specially (which then reads it).
"""

from __future__ import annotations

import gc
import math
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import yaml

from ..diagnostics import Diagnostics, Pos

JsonPath = tuple[str | int, ...]

# An alias may be expanded, but the expanded document may not grow past this many nodes more
# than the composed graph holds: enough for any real file, far too little for a billion laughs.
ALIAS_EXPANSION_LIMIT = 100_000
# Deeper nesting than any definitions file needs; far below Python's recursion limit.
MAX_DEPTH = 64
# Python refuses to convert longer digit strings to int (sys.get_int_max_str_digits).
MAX_INT_DIGITS = 4300
# Pos is a named tuple: made straight from its fields, without its keyword __new__ (one for
# every value and key of every file)
_new_pos = tuple.__new__


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFile:
    """One definitions file: its data plus the position of every value and mapping key."""

    path: str
    data: Any
    value_pos: dict[JsonPath, Pos]
    key_pos: dict[JsonPath, Pos]

    def pos(self, path: JsonPath) -> Pos:
        """The position of the value at ``path`` (or of its nearest ancestor)."""
        found = self.value_pos.get(path)
        while found is None and path:
            path = path[:-1]
            found = self.value_pos.get(path)
        return found if found is not None else Pos(file=self.path, line=1, col=1)

    def kpos(self, path: JsonPath) -> Pos:
        """The position of the mapping key for ``path``, falling back to the value's."""
        return self.key_pos.get(path) or self.pos(path)

    def __reduce__(self) -> tuple[Callable[..., SourceFile], tuple[Any, ...]]:
        # Positions pickled as columns: a 20 MB file has 1.7 million, and one Pos at a time
        # (a Python __reduce__ call each) took longer to pickle than loading the file did.
        return _unpickle_source, (self.path, self.data, _pack(self.path, self.value_pos),
                                  _pack(self.path, self.key_pos))


_Packed = tuple[list[JsonPath], "array[int]", "array[int]"] | dict[JsonPath, Pos]


def _pack(file: str, positions: dict[JsonPath, Pos]) -> _Packed:
    """Paths, lines and columns of ``positions`` (all in ``file``; else the dict itself)."""
    if not set(map(itemgetter(0), positions.values())) <= {file}:
        return positions
    return (list(positions), array("l", map(itemgetter(1), positions.values())),
            array("l", map(itemgetter(2), positions.values())))


def _unpack(file: str, packed: _Packed) -> dict[JsonPath, Pos]:
    if isinstance(packed, dict):
        return packed
    with paused_gc():
        paths, lines, cols = packed
        return {path: _new_pos(Pos, (file, line, col))
                for path, line, col in zip(paths, lines, cols, strict=True)}


def _unpickle_source(path: str, data: Any, value_pos: _Packed, key_pos: _Packed) -> SourceFile:
    return SourceFile(path=path, data=data, value_pos=_unpack(path, value_pos),
                      key_pos=_unpack(path, key_pos))


# libyaml's parser gives the same nodes and marks, several times faster; fall back when absent.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Budget(Exception):
    pass


class _TooDeep(Exception):
    def __init__(self, pos: Pos) -> None:
        self.pos = pos


class _Converter:
    def __init__(self, file: str, diags: Diagnostics, loader: yaml.SafeLoader) -> None:
        self.file = file
        self.diags = diags
        self.loader = loader
        self.value_pos: dict[JsonPath, Pos] = {}
        self.key_pos: dict[JsonPath, Pos] = {}
        self.visited: set[int] = set()
        self.extra = 0

    def mark(self, node: yaml.Node) -> Pos:
        return Pos(file=self.file, line=node.start_mark.line + 1,
                   col=node.start_mark.column + 1)

    def convert(self, node: yaml.Node, path: JsonPath) -> Any:
        if id(node) in self.visited:
            self.extra += 1
            if self.extra > ALIAS_EXPANSION_LIMIT:
                raise _Budget
        self.visited.add(id(node))
        self.value_pos[path] = self.mark(node)
        if len(path) > MAX_DEPTH:
            raise _TooDeep(self.mark(node))
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node)

    def scalar(self, node: yaml.Node) -> Any:
        """A JSON value; anything JSON cannot carry is an error at its position (TC009)."""
        if node.tag == "tag:yaml.org,2002:timestamp":
            return node.value  # dates stay strings: JSON has no date type
        if node.tag == "tag:yaml.org,2002:int" and len(node.value) > MAX_INT_DIGITS:
            return self.refuse(node, f"an integer with {len(node.value)} digits is too large")
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, LookupError, yaml.YAMLError) as exc:
            # LookupError: PyYAML's own index and key errors (`!!bool 0x1F`, `!!int ""`)
            return self.refuse(node, f"cannot read this value ({exc})")
        if isinstance(value, float) and not math.isfinite(value):
            return self.refuse(node, f"{node.value} is not a JSON number",
                               hint="JSON (and every provider) accepts finite numbers only")
        if value is not None and not isinstance(value, (str, int, float, bool)):
            return self.refuse(node, f"a {node.tag.rsplit(':', 1)[-1]} value has no JSON form",
                               hint="definitions hold JSON values: strings, numbers, "
                                    "booleans, null, lists and mappings")
        return value

    def refuse(self, node: yaml.Node, message: str, hint: str | None = None) -> None:
        self.diags.error(self.mark(node), "TC009", message, hint=hint)

    def mapping(self, node: yaml.MappingNode, path: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first: dict[str, Pos] = {}
        for key_node, value_node in node.value:
            kpos = self.mark(key_node)
            if not isinstance(key_node, yaml.ScalarNode):
                self.diags.error(kpos, "TC004", "mapping keys must be plain scalars")
                continue
            key = str(key_node.value)
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.diags.error(kpos, "TC004", "YAML merge keys (<<) are not supported",
                                 hint="write the keys out; definitions are reviewed as text")
                continue
            if key in first:
                self.diags.error(kpos, "TC003", f'duplicate key "{key}"',
                                 hint=f"first defined at {first[key]}; YAML would silently "
                                      "keep only the last one")
                continue
            first[key] = kpos
            self.key_pos[(*path, key)] = kpos
            out[key] = self.convert(value_node, (*path, key))
        return out


class _Decline(Exception):
    """The event reader leaves the file to the node-graph reader."""


_SCALAR, _MAP, _MAP_END, _SEQ, _SEQ_END = (yaml.ScalarEvent, yaml.MappingStartEvent,
                                           yaml.MappingEndEvent, yaml.SequenceStartEvent,
                                           yaml.SequenceEndEvent)
_STR_TAG = "tag:yaml.org,2002:str"
_NOTHING = object()


class _EventReader:
    """Plain values and positions straight from the parser's events, without a node graph
    and without a constructor call for each string: many times faster than ``_Converter``.

    It reads only files in which every key is a distinct plain string and no node has an
    anchor, alias or explicit tag, nests too deep or lacks a JSON form; anything else (and
    every syntax error) declines, and the node-graph reader reads the file again and reports
    exactly what it always did. What it accepts it reads as ``_Converter`` does: plain
    scalars through the loader's own implicit resolvers and constructors, the same marks.
    """

    def __init__(self, loader: yaml.SafeLoader, file: str) -> None:
        # events are PyYAML's untyped Event objects: Any here
        self.next: Callable[[], Any] = loader.get_event
        self.resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = loader.resolve
        self.loader = loader
        self.file = file
        self.value_pos: dict[JsonPath, Pos] = {}
        self.key_pos: dict[JsonPath, Pos] = {}
        self.plain_values: dict[str, Any] = {}  # plain scalar text -> its value

    def document(self) -> Any:
        nxt = self.next
        if not isinstance(nxt(), yaml.StreamStartEvent):
            raise _Decline
        if not isinstance(nxt(), yaml.DocumentStartEvent):
            raise _Decline  # an empty file
        data = self.node(nxt(), ())
        if not isinstance(nxt(), yaml.DocumentEndEvent) or not isinstance(
                nxt(), yaml.StreamEndEvent):
            raise _Decline  # several documents
        return data

    def node(self, event: Any, path: JsonPath) -> Any:
        mark = event.start_mark
        self.value_pos[path] = _new_pos(Pos, (self.file, mark.line + 1, mark.column + 1))
        if event.anchor is not None or len(path) > MAX_DEPTH:
            raise _Decline
        kind = type(event)
        if kind is _SCALAR:
            if event.tag is not None:
                raise _Decline
            if not event.implicit[0]:
                return event.value  # quoted or block: a string
            value = self.plain_values.get(event.value, _NOTHING)
            return value if value is not _NOTHING else self.plain(event.value)
        if event.tag is not None:
            raise _Decline
        if kind is _MAP:
            return self.mapping(path)
        if kind is _SEQ:
            return self.sequence(path)
        raise _Decline  # an alias

    def mapping(self, path: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nxt, key_pos, file = self.next, self.key_pos, self.file
        while True:
            event = nxt()
            if type(event) is not _SCALAR:
                if type(event) is _MAP_END:
                    return out
                raise _Decline  # a mapping or sequence as a key
            key: str = event.value
            if (event.anchor is not None or event.tag is not None or key in out
                    or (key == "<<" and event.implicit[0])):
                raise _Decline  # a duplicate or merge key
            mark: Any = event.start_mark
            kpath = (*path, key)
            key_pos[kpath] = _new_pos(Pos, (file, mark.line + 1, mark.column + 1))
            out[key] = self.node(nxt(), kpath)

    def sequence(self, path: JsonPath) -> list[Any]:
        out: list[Any] = []
        nxt = self.next
        event = nxt()
        while type(event) is not _SEQ_END:
            out.append(self.node(event, (*path, len(out))))
            event = nxt()
        return out

    def plain(self, text: str) -> Any:
        """A plain scalar's value as ``_Converter.scalar`` reads it; declines what it would
        refuse."""
        tag = self.resolve(yaml.ScalarNode, text, (True, False))
        if tag in (_STR_TAG, "tag:yaml.org,2002:timestamp"):
            value: Any = text  # dates stay strings: JSON has no date type
        elif tag == "tag:yaml.org,2002:int" and len(text) > MAX_INT_DIGITS:
            raise _Decline
        else:
            try:
                value = self.loader.construct_object(yaml.ScalarNode(tag, text), deep=True)
            except (ValueError, TypeError, LookupError, yaml.YAMLError) as exc:
                raise _Decline from exc
            if (isinstance(value, float) and not math.isfinite(value)) or (
                    value is not None and not isinstance(value, (str, int, float, bool))):
                raise _Decline
        self.plain_values[text] = value
        return value


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside: for code that makes millions of small objects and
    no cycles (values, positions, the document model, a build's tables, two builds read for
    ``toolc diff``). Each collection the allocations would trigger walks every object still
    alive, and at a 20 MB file these walks cost more than the work itself (measured: twice
    the CPU time of the event reader, three times that of the channel model; a third of a
    diff at 100,000 groups). Reference counting still frees everything that is dropped."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_events(text: str, file: str) -> SourceFile | None:
    """The file through ``_EventReader``, or None when it declines."""
    loader = _Loader(text)
    reader = _EventReader(loader, file)
    try:
        with paused_gc():
            data = reader.document()
    except (_Decline, yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()
    return SourceFile(path=file, data=data, value_pos=reader.value_pos, key_pos=reader.key_pos)


def _utf8(raw: bytes, file: str, diags: Diagnostics) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        diags.error(Pos(file=file, line=line, col=col), "TC001",
                    f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
                    hint="save the file as UTF-8")
        return None
    return text.removeprefix("\ufeff")


def load_yaml(raw: bytes, file: str, diags: Diagnostics) -> SourceFile | None:
    """Parse one file; report problems into ``diags`` and return None when unusable."""
    text = _utf8(raw, file, diags)
    if text is None:
        return None
    fast = _read_events(text, file)
    return fast if fast is not None else _read_graph(text, file, diags)


def _read_graph(text: str, file: str, diags: Diagnostics) -> SourceFile | None:
    """The node-graph reader: every file the event reader declines, with its diagnostics."""
    loader = _Loader(text)
    try:
        with paused_gc():
            node = loader.get_single_node()
            if node is None:
                diags.error(Pos(file=file, line=1, col=1), "TC006", "file is empty",
                            hint="a definitions file starts with `version: 1`")
                return None
            conv = _Converter(file, diags, loader)
            data = conv.convert(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = Pos(file=file, line=mark.line + 1 if mark else 1,
                  col=mark.column + 1 if mark else 1)
        diags.error(pos, "TC002", f"YAML syntax error: {exc.problem or exc.context}")
        return None
    except yaml.YAMLError as exc:
        diags.error(Pos(file=file, line=1, col=1), "TC002", f"YAML error: {exc}")
        return None
    except (_TooDeep, RecursionError) as exc:
        pos = exc.pos if isinstance(exc, _TooDeep) else Pos(file=file, line=1, col=1)
        diags.error(pos, "TC009", f"values nest deeper than {MAX_DEPTH} levels",
                    hint="definitions never need this depth; flatten the value")
        return None
    except _Budget:
        diags.error(Pos(file=file, line=1, col=1), "TC005",
                    f"YAML aliases expand to more than {ALIAS_EXPANSION_LIMIT} extra nodes",
                    hint="refusing a possible alias bomb; write the values out")
        return None
    finally:
        loader.dispose()
    return SourceFile(path=file, data=data, value_pos=conv.value_pos, key_pos=conv.key_pos)


def discover(root: Path) -> list[Path]:
    """Every ``*.yaml``/``*.yml`` below ``root`` in sorted relative-path order."""
    found = [p for p in root.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml")]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())

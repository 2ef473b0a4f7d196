"""The loader as it was before the event-driven reader (toolc 2026-11): an oracle for the
differential tests (tests/test_yamlsrc_differential.py), not part of the product. Kept verbatim
so that any change in what the product reads, positions or reports shows up as a difference."""

from __future__ import annotations

import math
from typing import Any

import yaml
from toolc.diagnostics import Diagnostics, Pos
from toolc.pipeline.yamlsrc import (
    ALIAS_EXPANSION_LIMIT,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    JsonPath,
    SourceFile,
)

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
        except (ValueError, TypeError, yaml.YAMLError) as exc:
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
    loader = _Loader(text)
    try:
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

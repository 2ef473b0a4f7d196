"""Stage 4b, shard the tables: one file per channel account, read only when a request needs it.

``tables.py`` interns every stack of a build into one list, so one ``tables.json`` held
everything and importing a 100,000-group runtime read and hashed all of it. Here the tables
are split for writing (``split_tables``) and put back together for the readers of a build
directory (``join_tables``: ``toolc diff``, ``toolc explain --build``, ``serve-mcp``), which
keep working on the one-dictionary form.

* ``tables.json`` keeps what every request needs (agents, providers, masks, gates, subagent
  and sender layers) with its own compact interning, and per channel an index: its rule and
  the shard file of its own group map (with Discord's spaces) and of each account's map.
* a **shard** (``tables/<channel>[.<account>].<hash>.shard``) holds one map. Its bytes
  depend on that map alone (``shard_text``): its stacks are written inline, bitsets as runs,
  never as indices into a shared list, so a change elsewhere leaves it byte-identical (the
  incremental build can store it; ``toolc diff`` knows it is unchanged from its digest).

A shard is text: a JSON header line (entry counts, Discord's spaces), then one line per group
id, ``<id as JSON>\\t<entry as JSON>``, sorted, then the case-folded ids (``<folded id as
JSON>\\t<exact id as JSON>``), sorted. The runtime splits it into lines and finds an id by
bisection, parsing only the entries a request reaches, so touching a 10,000-group shard costs
its hash and one split, not a parse of every entry.

An inline stack is ``mention/fixed/flags/preserve/layer/layer...``: bitsets as runs
``start.length.start.length`` (empty: no bit), a layer as ``witness,allow,deny`` with ``-``
for a witness that never strips.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..targets import request_rules
from . import groups

SHARD_FORMAT = 1
SHARD_DIR = "tables"
SHARD_SUFFIX = ".shard"
_SLUG_BAD = re.compile(r"[^a-z0-9_-]+")

Leaf = int | str | None  # an entry's stack: an index (-1: no lists), an inline stack, or None


# ``json.dumps`` with options builds an encoder per call; one encoder, made once, writes
# the same bytes (it keeps no state between calls)
_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                            allow_nan=False).encode
_key_text = json.JSONEncoder(ensure_ascii=False).encode


def _key(text: str) -> str:
    """A map key as its line starts (JSON never writes a raw tab or newline in a string)."""
    return _key_text(text)


def _runs(bits: int) -> str:
    return ".".join(map(str, run_list(bits)))


def run_list(bits: int) -> list[int]:
    """A bit set as runs: ``[start, length, ...]`` of its runs of ones, lowest first."""
    out: list[int] = []
    digits = bin(bits)[:1:-1]  # bit i is character i
    start = digits.find("1")
    while start >= 0:
        end = digits.find("0", start)
        end = len(digits) if end < 0 else end
        out += [start, end - start]
        start = digits.find("1", end)
    return out


def _bits(runs: str) -> int:
    bits = 0
    if runs:
        parts = [int(x) for x in runs.split(".")]
        for k in range(0, len(parts), 2):
            bits |= ((1 << parts[k + 1]) - 1) << parts[k]
    return bits


# -- the one-dictionary form's interning -------------------------------------------------------
class _Read:
    """Stacks of a one-dictionary ``tables.json`` by index, as inline text."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.bitsets: list[str] = data["bitsets"]
        self.layers: list[str] = data["layers"]
        self.stacks: list[str] = data["stacks"]
        self.flags: list[int] = data.get("stack_flags") or []
        self.preserve: list[int] = data.get("stack_preserve") or []
        self._texts: dict[int, str] = {}
        self._witnesses: dict[int, int] = {}

    def runs(self, index: int) -> str:
        return self.bitsets[index]

    def witnesses(self, index: int) -> int:
        """The tools stack ``index``'s stripping layers test (a bitset over the tools)."""
        out = self._witnesses.get(index)
        if out is None:
            out = 0
            for i in self.stacks[index].split(".")[2:]:
                w = int(self.layers[int(i)].split(".", 1)[0])
                if w >= 0:
                    out |= _bits(self.runs(w))
            self._witnesses[index] = out
        return out

    def text(self, index: int) -> str:
        text = self._texts.get(index)
        if text is None:
            raw = [int(x) for x in self.stacks[index].split(".")]
            layers = []
            for i in raw[2:]:
                w, a, d = (int(x) for x in self.layers[i].split("."))
                layers.append(f"{'-' if w < 0 else self.runs(w)},{self.runs(a)},{self.runs(d)}")
            flags = self.flags[index] if self.flags else 0
            preserve = self.runs(self.preserve[index]) if self.preserve else ""
            text = self._texts[index] = "/".join(
                [self.runs(raw[0]), self.runs(raw[1]), str(flags), preserve, *layers])
        return text


def text_witnesses(text: str) -> int:
    """The tools an inline stack's stripping layers test (``_Read.witnesses`` of its text)."""
    out = 0
    for layer in text.split("/")[4:]:
        runs = layer.split(",", 1)[0]
        if runs != "-":
            out |= _bits(runs)
    return out


class _Intern:
    """A fresh interning of stacks (given as inline text) into the one-dictionary lists."""

    def __init__(self, flags: bool, preserve: bool) -> None:
        self.bitsets: list[str] = []
        self.layers: list[str] = []
        self.stacks: list[str] = []
        self.flags: list[int] | None = [] if flags else None
        self.preserve: list[int] | None = [] if preserve else None
        self._bit_ids: dict[str, int] = {}
        self._layer_ids: dict[str, int] = {}
        self._stack_ids: dict[str, int] = {}

    def bitset(self, runs: str) -> int:
        index = self._bit_ids.get(runs)
        if index is None:
            index = self._bit_ids[runs] = len(self.bitsets)
            self.bitsets.append(runs)
        return index

    def stack(self, text: str) -> int:
        index = self._stack_ids.get(text)
        if index is None:
            mention, fixed, flags, preserve, *layers = text.split("/")
            parts = [self.bitset(mention), self.bitset(fixed)]
            for layer in layers:
                w, a, d = layer.split(",")
                key = ".".join(map(str, (-1 if w == "-" else self.bitset(w), self.bitset(a),
                                         self.bitset(d))))
                if key not in self._layer_ids:
                    self._layer_ids[key] = len(self.layers)
                    self.layers.append(key)
                parts.append(self._layer_ids[key])
            index = self._stack_ids[text] = len(self.stacks)
            self.stacks.append(".".join(map(str, parts)))
            if self.flags is not None:
                self.flags.append(int(flags))
            elif int(flags):
                raise ValueError(f"stack {text!r}: admission flags in tables without them")
            if self.preserve is not None:
                self.preserve.append(self.bitset(preserve))
            elif preserve:
                raise ValueError(f"stack {text!r}: lean tools in tables without them")
        return index

    def into(self, data: dict[str, Any]) -> None:
        data["bitsets"], data["layers"], data["stacks"] = self.bitsets, self.layers, self.stacks
        if self.flags is not None:
            data["stack_flags"] = self.flags
        if self.preserve is not None:
            data["stack_preserve"] = self.preserve


def _map_leaf(leaf: Leaf, to: Callable[[Any], Any]) -> Any:
    """An entry's stack through ``to`` (None and -1 stay)."""
    if leaf is None or (isinstance(leaf, int) and leaf < 0):
        return leaf
    return to(leaf)


def map_entry(entry: list[Any] | None, to: Callable[[Any], Any]) -> list[Any] | None:
    """An ENTRY (``[tools]`` or ``[tools, id, e164, username, name, wildcard(, channel)]``)
    with every stack passed through ``to``."""
    if entry is None:
        return None
    out: list[Any] = [_map_leaf(entry[0], to)]
    if len(entry) > 1:
        out += [{k: _map_leaf(v, to) for k, v in bucket.items()} for bucket in entry[1:5]]
        out.append(_map_leaf(entry[5], to))
        out += [{k: _map_leaf(v, to) for k, v in bucket.items()} for bucket in entry[6:]]
    return out


def _map_gmap(gmap: Mapping[str, Any] | None, to: Callable[[Any], Any]) -> dict[str, Any] | None:
    if gmap is None:
        return None
    exact = {k: map_entry(e, to) for k, e in gmap["exact"].items()}
    # folded values are entries of exact (the first id, in definition order, that folds)
    folded = {k: map_entry(e, to) for k, e in gmap["folded"].items()}
    return {"exact": exact, "folded": folded}


def _map_spaces(spaces: Mapping[str, Any] | None, to: Callable[[Any], Any]) -> Any:
    if spaces is None:
        return None
    return {"order": list(spaces["order"]),
            "entries": {k: [map_entry(e[0], to), e[1], _map_gmap(e[2], to)]
                        for k, e in spaces["entries"].items()}}


# -- one map -> one shard ----------------------------------------------------------------------
def shard_text(gmap: Mapping[str, Any] | None, spaces: Mapping[str, Any] | None = None) -> str:
    """One shard's text from one group map (and, for a channel's own shard, Discord's spaces)
    whose stacks are inline text already (``inline_gmap``): a pure function of the map, so an
    incremental build can store it by the map's content."""
    exact = dict(gmap["exact"]) if gmap is not None else {}
    lines = sorted(f"{_key(k)}\t{_compact(e)}" for k, e in exact.items())
    folded: list[str] = []
    if gmap is not None:
        for lower, entry in gmap["folded"].items():
            # the exact id whose entry the folded id reaches (first in definition order)
            target = next(k for k in exact if k != "*" and k.lower() == lower and exact[k] == entry)
            folded.append(f"{_key(lower)}\t{_key(target)}")
    head = {"format": SHARD_FORMAT, "groups": gmap is not None, "exact": len(lines),
            "folded": len(folded), "spaces": spaces}
    return "\n".join([_compact(head), *lines, *sorted(folded)]) + "\n"


def shard_name(channel: str, account: str | None) -> str:
    """The file of a channel's own map (``account`` None) or of one account's map: readable
    slugs, and a hash of the exact names so that no two maps share a file."""
    digest = hashlib.sha256(_compact([channel, account]).encode()).hexdigest()[:12]
    slugs = [_SLUG_BAD.sub("-", channel.lower())[:40] or "-"]
    if account is not None:
        slugs.append(_SLUG_BAD.sub("-", account.lower())[:40] or "-")
    return f"{SHARD_DIR}/{'.'.join(slugs)}.{digest}{SHARD_SUFFIX}"


# -- split (for writing) and join (for reading) ------------------------------------------------
def split_tables(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The one-dictionary tables as ``tables.json``'s data plus the shard files
    (``{relative path: text}``); the global part is interned afresh, so it holds only the
    stacks and bitsets that agents, providers, subagents and sender layers use."""
    read = _Read(data)
    intern = _Intern("stack_flags" in data, "stack_preserve" in data)

    def glob(index: int) -> int:
        return intern.stack(read.text(index))

    def stack_or_none(index: int) -> int:
        return -1 if index < 0 else glob(index)

    out = {k: v for k, v in data.items()
           if k not in ("bitsets", "layers", "stacks", "stack_flags", "stack_preserve")}
    out["masks"] = {k: intern.bitset(read.runs(v)) for k, v in data["masks"].items()}
    out["gates"] = [{**g, "bits": intern.bitset(read.runs(g["bits"]))} for g in data["gates"]]
    out["agent_records"] = [
        {**r, "stack": glob(r["stack"]), "sandbox": glob(r["sandbox"]),
         "bp": {k: [glob(v[0]), *v[1:]] for k, v in r["bp"].items()},
         "sd": map_entry(r.get("sd"), glob)} for r in data["agent_records"]]
    out["global_bp"] = {k: [glob(v[0]), *v[1:]] for k, v in data["global_bp"].items()}
    out["provider_profiles"] = [[stack_or_none(i) for i in row]
                                for row in data["provider_profiles"]]
    out["subagent"] = {**data["subagent"], "stacks": [glob(i) for i in data["subagent"]["stacks"]]}
    out["senders"] = map_entry(data.get("senders"), glob)
    shards: dict[str, str] = {}
    channels: dict[str, Any] = {}
    # 2026.9's channel classes are formed across every channel at once: none is summarized
    summarize = not request_rules(data).group_id_needs_session
    for name, raw in data["channels"].items():
        ch = json.loads(raw)
        channels[name] = _split_channel(name, ch, read.text, shards)
        if summarize and ch["rule"]["kind"] == "groups":
            channels[name]["summary"] = channel_summary(name, ch, read.witnesses)
    out["channels"] = channels
    out["sharded"] = SHARD_FORMAT
    intern.into(out)
    return out, shards


def channel_summary(name: str, ch: dict[str, Any], witnesses: Callable[[int], int]
                    ) -> dict[str, Any]:
    """What ``toolc diff`` needs of a channel whose shards are the same on both sides, so
    that it can leave them unread: how many classes the channel tells apart (per
    availability mode, ``pipeline.groups.channel_rows``), the tools that the stripping layers
    of the stacks those classes reach test, and those of every stack its shards hold
    (``witnesses``: of one stack by index, as a bitset over the tools). ``split_tables``
    summarizes a whole-build channel, ``tables.channel_shards`` one compiled on its own."""
    found = groups.channel_summary(name, ch, witnesses)
    stacks: set[int] = set()
    for gmap in groups.channel_maps(ch):
        for entry in gmap["exact"].values():
            stacks.update(_entry_stacks(entry))
    every = 0
    for stack in stacks:
        every |= witnesses(stack)
    return {"classes": found["classes"], "witnesses": _runs(found["witnesses"]),
            "all_witnesses": _runs(every)}


def _entry_stacks(entry: list[Any]) -> Iterator[int]:
    """The stacks an entry names: its tools, its sender rules (typed ones too), its ``*``
    rule."""
    leaves = [entry[0]] if len(entry) == 1 else [
        entry[0], entry[5], *(s for bucket in (*entry[1:5], *entry[6:]) for s in bucket.values())]
    return (leaf for leaf in leaves if leaf is not None and leaf >= 0)


def _split_channel(name: str, ch: dict[str, Any], text: Callable[[int], str] | None,
                   shards: dict[str, str]) -> dict[str, Any]:
    """``text``: a stack's inline text by index (None: the maps hold their texts)."""
    def inline(gmap: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        return gmap if text is None else _map_gmap(gmap, text)

    own = None
    if ch["groups"] is not None or ch["spaces"] is not None:
        own = shard_name(name, None)
        spaces = ch["spaces"] if text is None else _map_spaces(ch["spaces"], text)
        shards[own] = shard_text(inline(ch["groups"]), spaces)
    accounts: dict[str, str | None] = {}
    for acc, gmap in ch["accounts"].items():
        accounts[acc] = None if gmap is None else shard_name(name, acc)
        if gmap is not None:
            shards[shard_name(name, acc)] = shard_text(inline(gmap))
    folded = {}
    for lower, gmap in ch["accounts_folded"].items():
        # an account whose map the folded id reaches (maps alike: the same answers)
        folded[lower] = next(accounts[a] for a in sorted(ch["accounts"])
                             if a.lower() == lower and ch["accounts"][a] == gmap)
    return {"rule": ch["rule"], "topics": ch["topics"], "e164": ch["e164"],
            "groups": own if ch["groups"] is not None else None,
            "spaces": own if ch["spaces"] is not None else None,
            "accounts": accounts, "accounts_folded": folded}


def parse_shard(text: str) -> tuple[dict[str, Any] | None, Any]:
    """A shard's (group map, spaces) with inline stacks, every entry parsed (readers)."""
    lines = text.split("\n")
    head = json.loads(lines[0])
    if head.get("format") != SHARD_FORMAT:
        raise ValueError(f"shard format {head.get('format')!r}, expected {SHARD_FORMAT}")
    n, m = int(head["exact"]), int(head["folded"])

    def section(part: list[str]) -> dict[str, Any]:
        # "<key>\t<value>" is "<key>:<value>" as a JSON member: one parse for all of them
        members: dict[str, Any] = json.loads(
            "{" + ",".join(line.replace("\t", ":", 1) for line in part) + "}")
        return members

    exact = section(lines[1:1 + n])
    folded = {k: exact[target] for k, target in section(lines[1 + n:1 + n + m]).items()}
    gmap = {"exact": exact, "folded": folded} if head["groups"] else None
    return gmap, head["spaces"]


def map_shard(gmap: Mapping[str, Any] | None, spaces: Mapping[str, Any] | None,
              to: Callable[[Any], Any]) -> tuple[dict[str, Any] | None, Any]:
    """A parsed shard (``parse_shard``) with every inline stack passed through ``to``."""
    return _map_gmap(gmap, to), _map_spaces(spaces, to)


def assemble_channel(index: Mapping[str, Any],
                     shard: Callable[[str], tuple[dict[str, Any] | None, Any]]
                     ) -> dict[str, Any]:
    """One channel of ``tables.json``'s index with its shards' maps in place, the form a
    joined channel parses to (``shard``: a shard's (group map, spaces) by file name)."""
    def part(name: str | None) -> tuple[dict[str, Any] | None, Any]:
        return (None, None) if name is None else shard(name)

    return {"rule": index["rule"], "topics": index["topics"], "e164": index["e164"],
            "groups": part(index["groups"])[0], "spaces": part(index["spaces"])[1],
            "accounts": {a: part(s)[0] for a, s in index["accounts"].items()},
            "accounts_folded": {k: part(s)[0] for k, s in index["accounts_folded"].items()}}


def channel_shards(index: Mapping[str, Any]) -> list[str]:
    """The shard files one channel of ``tables.json``'s index names, each once, in order."""
    names = [index["groups"], index["spaces"], *index["accounts"].values()]
    return list(dict.fromkeys(n for n in names if n is not None))


def join_tables(data: Mapping[str, Any], read: Callable[[str], bytes]) -> dict[str, Any]:
    """The one-dictionary tables from ``tables.json``'s data and its shards (``read``: a
    shard's bytes by path relative to the runtime package, checked by the caller). Data
    written before shards (no ``shards`` marker) is returned as it is."""
    if not data.get("sharded"):
        return dict(data)
    intern = _Intern("stack_flags" in data, "stack_preserve" in data)
    own = _Read(data)
    out = dict(data)
    # the global stacks keep their indices: interned first, in order
    for i in range(len(own.stacks)):
        intern.stack(own.text(i))
    out["masks"] = {k: intern.bitset(own.runs(v)) for k, v in data["masks"].items()}
    out["gates"] = [{**g, "bits": intern.bitset(own.runs(g["bits"]))} for g in data["gates"]]
    cache: dict[str, tuple[dict[str, Any] | None, Any]] = {}

    def shard(name: str) -> tuple[dict[str, Any] | None, Any]:
        if name not in cache:
            gmap, spaces = parse_shard(read(name).decode("utf-8"))
            cache[name] = (_map_gmap(gmap, intern.stack), _map_spaces(spaces, intern.stack))
        return cache[name]

    out["channels"] = {name: _compact(assemble_channel(ch, shard))
                       for name, ch in data["channels"].items()}
    del out["sharded"]
    intern.into(out)
    return out

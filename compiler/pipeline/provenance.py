"""Stage 4b, decision provenance: which layer and rule of the definitions removes a tool.

``tables.json`` folds a request's layers into few bitsets and interns them, so it cannot say
which rule decided. This stage writes the same structure once more with a *provenance record*
in place of every stack: per layer its label (``agents.coder.tools``), its pass bitsets and the
``file:line:col`` of its allow list and of every deny entry. The runtime reads it
(``provenance.json``) only when a decision log asks for the deciding layer: the hot path never
does (``toolc_runtime._decisions``).

A record is ``{"label", "w", "a", "d", "m", "allow", "deny"}``: ``w`` the witness (None: the
layer never strips), ``a`` / ``d`` the pass sets with and without the allow list, ``m`` the
optional tools its allow list names (bitsets as runs, as in ``tables.json``), ``allow`` the
allow list's position and ``deny`` ``[[text, pos, runs(, the plugin tools it unloads)]]``.

The group layer is sharded as the tables are (``toolc.pipeline.shards``): ``provenance.json``
holds the agents', providers', subagent and sender layers, their records interned (the
structures hold indices into ``records``), and per channel the index of its shards; a shard
(``provenance/<channel>[.<account>].<hash>.shard``, in a table shard's format) holds one
group map with each record inline, as its compact JSON text (a string), so its bytes depend
on that map alone, as a table shard's do, and a channel is compiled on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from ..diagnostics import BUILTIN, Diagnostics, Pos
from .analyze import Resolved
from .model import AgentDef, ChannelDef, Entry, EntryList, Policy, ProviderPolicy
from .policy import (
    LayerPolicy,
    admission_names,
    pick_policy,
    profile_policy,
    sandbox_policy,
    subagent_policy,
)
from .recording import ChannelUnit, Recorder
from .shards import SHARD_DIR, _split_channel
from .tables import _RUN_CACHE_LIMIT, NEVER, Part, TableBuilder, _runs, _texts
from .yamlsrc import paused_gc

PROVENANCE_FORMAT = 2  # 2: the group layer in shards with inline records
PROVENANCE_DIR = "provenance"
_RECORD = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_string = encode_basestring  # a JSON string as _RECORD writes it (ensure_ascii=False)
# Bitsets repeat (pass sets, a deny entry's tools): their runs and the runs' JSON are kept,
# by value, for a build (bounded; recomputing one is always right).
_RUN_JSON: dict[int, tuple[list[int], str]] = {}


def runs_json(bits: int) -> tuple[list[int], str]:
    """``_runs(bits)`` and its JSON (``_RECORD.encode``), one lookup for both."""
    found = _RUN_JSON.get(bits)
    if found is None:
        if len(_RUN_JSON) >= _RUN_CACHE_LIMIT:
            _RUN_JSON.clear()
        runs = _runs(bits)
        found = _RUN_JSON[bits] = (runs, _RECORD.encode(runs))
    return found


def _json(text: str | None) -> str:
    return "null" if text is None else _string(text)


def _pos(pos: Pos | None, files: tuple[str, ...]) -> str | None:
    """``file:line:col`` with the file named as ``sources/`` names it (relative to the
    definitions directory, whatever directory the build ran in: builds stay identical)."""
    if pos is None:
        return None
    if pos == BUILTIN:
        return "built-in"
    return f"{_file_name(pos.file, files)}:{pos.line}:{pos.col}"


def _file_name(file: str, files: tuple[str, ...]) -> str:
    return next((f for f in files if file == f or file.endswith(f"/{f}")), file)


class ProvenanceBuilder(TableBuilder):
    """The tables' structure with a provenance record index wherever a stack index was."""

    def __init__(self, resolved: Resolved) -> None:
        # warnings are the table builder's to report; this pass only repeats the layers
        super().__init__(resolved, Diagnostics())
        self.records: list[dict[str, Any]] = []
        self._record_ids: dict[str, int] = {}
        self._files = tuple(sorted(resolved.defs.files, key=len, reverse=True))
        self._names: dict[str, str] = {}  # a position's file -> its name in ``files``
        self._deny_runs: dict[tuple[str, bool], tuple[list[list[int]], str]] = {}  # ``deny_runs``

    def pos(self, pos: Pos | None) -> str | None:
        if pos is None or pos == BUILTIN:
            return _pos(pos, self._files)
        name = self._names.get(pos.file)
        if name is None:
            name = self._names[pos.file] = _file_name(pos.file, self._files)
        return f"{name}:{pos.line}:{pos.col}"

    def record(self, policy: LayerPolicy | None, *, strips: bool, label: str,
               lists: Sequence[EntryList | None] = (), profile: bool = False) -> int | None:
        """The interned record of one layer (None: the step has no lists). ``lists``: the
        allow lists it was made of, in order (the first one's position is the allow list's,
        as ``toolc explain`` shows it; without them, the first entry's)."""
        part = self.layer(policy, strips=strips, label=label, profile=profile)
        return self.record_of(part, policy, label=label, lists=lists)

    def record_of(self, part: Part, policy: LayerPolicy | None, *, label: str,
                  lists: Sequence[EntryList | None] = ()) -> int | None:
        """``record`` of a layer already compiled (``part``: ``TableBuilder.layer``'s)."""
        layer, mention, _, _ = part
        if layer is None or policy is None:
            return None
        witness, allow_pass, deny_pass = layer
        pos = self.pos
        deny: list[list[Any]] = []
        deny_json = []
        for entry in policy.deny or ():
            runs, tail = self.deny_runs(entry, policy.expands_groups)
            at = pos(entry.pos)
            if self._records is None:
                deny.append([entry.text, at, *runs])
            deny_json.append(f"[{_string(entry.text)},{_json(at)}{tail}]")
        given = next((lst.pos for lst in lists if lst is not None), None)
        allow = given if given is not None else policy.allow[0].pos if policy.allow else None
        allow_at = pos(allow)
        a, a_json = runs_json(allow_pass)
        d, d_json = runs_json(deny_pass)
        m, m_json = runs_json(mention)
        w, w_json = (None, "null") if witness == NEVER else runs_json(witness)
        # the key is the record's inline text in a shard (``channel_provenance``):
        # ``_RECORD.encode(rec)``, written from its parts (keys in sorted order), which a test
        # holds equal
        text = (f'{{"a":{a_json},"allow":{_json(allow_at)},"d":{d_json},'
                f'"deny":[{",".join(deny_json)}],"label":{_string(label)},"m":{m_json},'
                f'"w":{w_json}}}')
        if self._records is not None:
            # a channel's records in one pass with its tables (``record_both``): their shard
            # writes their text alone
            return self._records.record(text)
        rec = {"label": label, "w": w, "a": a, "d": d, "m": m, "allow": allow_at, "deny": deny}
        return self.intern_record(text, rec)

    def deny_runs(self, entry: Entry, expands: bool) -> tuple[list[list[int]], str]:
        """A deny entry's tools as runs, and the plugin tools it unloads when there are any,
        and their JSON (each after a comma), kept per normalized name and whether the step
        hands its lists on with core groups expanded (``LayerPolicy.expands_groups``): deny
        lists repeat their names, and both depend on these alone."""
        name = entry.name
        found = self._deny_runs.get((name, expands))
        if found is None:
            bits, _ = self.list_bits([name]) if name else (0, False)
            # 2026.9: a deny entry naming a plugin (or, expanded, a core group holding one)
            # keeps the plugin from loading at all
            admission = self.target.optional_admitted_by_wildcard
            blocked = (self.blocked_plugins(admission_names(self.r, (entry,), expands=expands))
                       if admission and name else 0)
            pairs = [runs_json(b) for b in ([bits | blocked, blocked] if blocked else [bits])]
            found = self._deny_runs[(name, expands)] = ([runs for runs, _ in pairs],
                                             "".join(f",{text}" for _, text in pairs))
        return found

    def intern_record(self, key: str, rec: dict[str, Any]) -> int:
        if key not in self._record_ids:
            self._record_ids[key] = len(self.records)
            self.records.append(rec)
        return self._record_ids[key]

    def group_stack(self, block: Any, label: str = "group tools.allow", *,
                    path: str = "") -> Any:
        policy = pick_policy(block)
        if self._both is not None:
            if policy is None:
                return -1
            # one layer, its stack for the tables and its record (its warnings: the tables')
            part = self.layer(policy, strips=True, label=label)
            record = self.record_of(part, policy, label=path or label, lists=_lists(block))
            return _Both(self._both.stack(*self.stack_args([part])), record)
        found = self.record(policy, strips=True, label=path or label, lists=_lists(block))
        return -1 if found is None else found

    # a channel's tables and provenance in one pass: where its stacks and records go
    _both: Recorder | None = None
    _records: Recorder | None = None

    @contextmanager
    def recording_both(self, stacks: Recorder, records: Recorder) -> Iterator[None]:
        """Record the stacks into ``stacks`` and the records' texts into ``records``:
        compiling a channel then gives its tables' entry and its provenance's at once
        (``record_both``)."""
        self._both, self._records = stacks, records
        try:
            yield
        finally:
            del self._both, self._records

    def agent_entry(self, agent: AgentDef | None) -> dict[str, Any]:
        g = self.r.defs.tools_config
        a, profile_ref, profile_also, profile = self.agent_profile(agent)
        at = f"agents.{agent.id}.tools" if agent else "agent tools"
        where = f"profiles.{profile_ref.text}" if profile_ref else "tools.profile"
        full = self.r.target.full_profile_allows_all
        return {
            "stack": [self.record(profile_policy(profile, profile_also, full_allows_all=full),
                                  strips=True, label=where, profile=True,
                                  lists=(profile.allow if profile else None, profile_also)),
                      self.record(pick_policy(g.policy), strips=True, label="tools",
                                  lists=_lists(g.policy)),
                      self.record(pick_policy(a.policy if a else None), strips=True, label=at,
                                  lists=_lists(a.policy if a else None))],
            "bp": {bp.key: self.bp_entry(bp, f'{at}.byProvider."{bp.key}"')
                   for bp in (a.by_provider if a else ())},
            # 2026.9 tools.toolsBySender of the agent (an ENTRY of records, as in tables)
            "sd": self.sender_entry(a.by_sender, f"{at}.toolsBySender") if a else None,
            "sandbox": self.record(sandbox_policy(self.r, a), strips=False,
                                   label=f"{at}.sandbox.tools" if a and (
                                       a.sandbox_allow or a.sandbox_deny)
                                   else "tools.sandbox.tools",
                                   lists=(a.sandbox_allow if a and a.sandbox_allow
                                          else g.sandbox_allow,)),
        }

    def bp_entry(self, bp: ProviderPolicy, label: str) -> int | None:
        return self.record(pick_policy(bp.policy), strips=True, label=label,
                           lists=_lists(bp.policy))

    def profiles(self, profile_ids: Sequence[str], also_lists: Sequence[Any]) -> list[Any]:
        out = []
        for name in profile_ids:
            profile = self.r.defs.profiles.get(name)
            full = self.r.target.full_profile_allows_all
            out.append([self.record(profile_policy(profile, also, full_allows_all=full),
                                    strips=True, profile=True, label=f"profiles.{name}",
                                    lists=(profile.allow if profile else None, also))
                        for also in [None, *also_lists]])
        return out

    def provenance(self) -> dict[str, Any]:
        defs = self.r.defs
        configs = [defs.tools_config, *(a.tools for a in defs.agents if a.tools)]
        bps = [bp for c in configs for bp in c.by_provider]
        profile_ids = sorted({bp.profile.text for bp in bps if bp.profile})
        also_lists, seen = [], []
        for bp in bps:  # the order of TableBuilder.build: the same indices
            also = bp.policy.also_allow
            if also is not None and _texts(also) not in seen:
                seen.append(_texts(also))
                also_lists.append(also)
        agents, ids = [self.agent_entry(None)], set()
        for agent in defs.agents:
            if agent.id not in ids:
                ids.add(agent.id)
                agents.append(self.agent_entry(agent))
        data = {
            "format": PROVENANCE_FORMAT,
            "tools": [self.pos(t.pos) for t in self.tools],
            "agents": agents,
            "global_bp": {bp.key: self.bp_entry(bp, f'tools.byProvider."{bp.key}"')
                          for bp in defs.tools_config.by_provider},
            "provider_profiles": self.profiles(profile_ids, also_lists),
            "senders": self.sender_entry(defs.tools_config.by_sender),
            "subagent": [self.record(subagent_policy(self.r, leaf=leaf), strips=False,
                                     label="tools.subagents.tools" + (" (leaf)" if leaf else ""))
                         for leaf in (False, True)],
            # per channel its shards' index (``channel_provenance``), added by the pipeline
            "channels": {},
        }
        data["records"] = self.records
        return data


def _lists(block: Policy | None) -> tuple[EntryList | None, ...]:
    return () if block is None else (block.allow, block.also_allow)


class _Both(NamedTuple):
    """A block compiled in one pass: its stack (tables) and its record (provenance)."""

    stack: int
    record: int | None


def record_both(builder: ProvenanceBuilder, ch: ChannelDef) -> tuple[ChannelUnit, ChannelUnit]:
    """A channel's tables and provenance recorded in one pass (``units.record_channel`` of
    a TableBuilder and of a ProvenanceBuilder, each layer compiled once): the tables' unit
    carries the warnings."""
    diags, local = builder.diags, Diagnostics()
    stacks, records = Recorder(), Recorder()
    builder.diags = local
    try:
        # a channel's tables and records are many small objects and no cycles (``paused_gc``)
        with builder.recording_both(stacks, records), paused_gc():
            entry = builder.channel(ch)
    finally:
        builder.diags = diags
    tape = records.tape
    # the provenance's entry holds each record's text (its shard writes them inline)
    return ((stacks.tape, _pick(entry, lambda both: both.stack), tuple(local.items)),
            (tape, _pick(entry, lambda both: -1 if both.record is None
                         else tape[both.record][0]), ()))


def _pick(value: Any, leaf: Callable[[_Both], Any]) -> Any:
    """``value`` with every _Both replaced by ``leaf`` of it."""
    if type(value) is _Both:
        return leaf(value)
    if isinstance(value, dict):
        return {k: _pick(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_pick(v, leaf) for v in value]
    return value


def channel_provenance(name: str, unit: ChannelUnit) -> tuple[dict[str, Any], dict[str, str]]:
    """A channel's provenance recorded (``record_both``: each record's text in its entry):
    its entry in ``provenance.json``'s ``channels`` and its shards, records inline."""
    _, entry, _ = unit
    shards: dict[str, str] = {}
    with paused_gc():  # as ``record_both``
        index = _split_channel(name, entry, None, shards)
    return _moved_index(index), {_moved(path): text for path, text in shards.items()}


def _moved(path: str) -> str:
    """A table shard's name as the provenance shard of the same map."""
    return PROVENANCE_DIR + path.removeprefix(SHARD_DIR)


def _moved_index(index: dict[str, Any]) -> dict[str, Any]:
    def move(path: str | None) -> str | None:
        return None if path is None else _moved(path)

    return {**index, "groups": move(index["groups"]), "spaces": move(index["spaces"]),
            "accounts": {k: move(v) for k, v in index["accounts"].items()},
            "accounts_folded": {k: move(v) for k, v in index["accounts_folded"].items()}}

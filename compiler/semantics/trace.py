"""What the reference interpreter records (``toolc explain``): each tool's decision, the lists
a layer reads and why, and the group layer's match."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..diagnostics import BUILTIN, Pos
from ..pipeline.analyze import PLUGINS_GROUP
from ..pipeline.model import (
    AccountDef,
    Entry,
    EntryList,
    GroupConfig,
    Policy,
    SenderRule,
    ToolDef,
)
from ..pipeline.policy import (
    LayerPolicy,
    pattern_match,
)
from ..rules.names import (
    normalize_tool_name,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    kept: bool
    reason: str
    entry: Entry | None = None
    # which rule: inventory, deny (entry), allow (entry), exec (apply_patch allowed through
    # an entry that allows exec), open (no allow list), closed (not in the allow list)
    rule: Literal["inventory", "deny", "allow", "exec", "open", "closed"] = "inventory"

    def render(self) -> str:
        where = f" ({self.entry.pos})" if self.entry and self.entry.pos != BUILTIN else ""
        return self.reason + where


ListKind = Literal["allow", "alsoAllow", "deny"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyList:
    """One list a layer reads, named by its place in the definitions (``tools.deny``,
    ``channels.telegram.groups."-100123".toolsBySender."id:42".allow``) or as built in."""

    label: str
    kind: ListKind
    pos: Pos  # the list's own position; BUILTIN for toolc's built-in lists
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """Why a layer reads what it reads (which profile, group or sender rule), and where."""

    text: str
    pos: Pos | None = None


@dataclass(slots=True, kw_only=True)
class StepTrace:
    label: str
    active: bool
    stripped: bool = False
    decisions: dict[str, Decision] = field(default_factory=dict)
    layer: str = ""  # short name: profile, global, agent, group, ...
    lists: tuple[PolicyList, ...] = ()
    notes: tuple[Note, ...] = ()
    skip: str = ""  # why an inactive layer has no policy

    def list_of(self, entry: Entry, kinds: tuple[ListKind, ...]) -> PolicyList | None:
        """The list an entry came from. ``alsoAllow`` without ``allow`` adds a ``*`` entry
        carrying the alsoAllow list's own position."""
        for lst in self.lists:
            if lst.kind in kinds and entry in lst.entries:
                return lst
        if entry.text == "*":
            return next((lst for lst in self.lists
                         if lst.kind == "alsoAllow" and lst.pos == entry.pos), None)
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    names: tuple[str, ...]
    inventory: Mapping[str, Decision]
    steps: tuple[StepTrace, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Step:
    label: str
    policy: LayerPolicy | None
    strips: bool
    layer: str = ""
    lists: tuple[PolicyList, ...] = ()
    notes: tuple[Note, ...] = ()
    skip: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """2026.9's load-time plugin lists: every step's normalized allow entries (an implicit
    ``*`` from alsoAllow excluded), whether the defaults are included (no entry at all, or
    an alsoAllow-only list), and every deny entry."""

    entries: frozenset[str]
    defaults: bool
    deny: tuple[tuple[str, Entry], ...]

    def allows(self, t: ToolDef) -> bool:
        """createPluginToolAllowlist().allowsTool: ``*``, group:plugins or the plugin id;
        or the tool's name by exact name or glob (core groups are not expanded)."""
        plugin = normalize_tool_name(t.plugin or "")
        if {"*", PLUGINS_GROUP, plugin} & self.entries:
            return True
        name = normalize_tool_name(t.name)
        return any(pattern_match(e, name) for e in self.entries)

    def decide(self, t: ToolDef, origin: Entry) -> Decision:
        plugin = normalize_tool_name(t.plugin or "")
        for pattern, entry in self.deny:
            if pattern_match(pattern, plugin) or pattern_match(pattern, PLUGINS_GROUP):
                return Decision(kept=False, reason=f'plugin {t.plugin} is not loaded: deny '
                                f'entry "{entry.text}" matches it', entry=entry, rule="deny")
        if self.allows(t):
            return Decision(kept=True, reason="present", entry=origin)
        if t.optional:
            return Decision(kept=False, reason="optional plugin tool: no allow list names "
                            "it, its plugin, group:plugins or a pattern matching it",
                            entry=origin)
        if self.defaults:
            return Decision(kept=True, reason="present", entry=origin)
        return Decision(kept=False, reason="plugin tool not loaded: allow lists exist and none "
                        "names it, its plugin, group:plugins or a pattern matching it (a core "
                        "group does not load a plugin tool)", entry=origin)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMatch:
    """The group layer's block (None: no group policy, ``skip`` says why), its path, and
    what matched: the map (an account's own, or the channel's), the group entry and rule."""

    block: Policy | None
    where: str = ""
    skip: str = ""
    map_where: str = ""  # channels.telegram or channels.telegram.accounts.work
    account: AccountDef | None = None  # set when the account's own groups are used
    group_id: str = ""  # as requested (trimmed)
    candidate: str = ""  # the id looked up (a topic's chat id first)
    entry: GroupConfig | None = None  # the entry that applies (maybe the "*" group)
    specific: GroupConfig | None = None  # the entry declared for the id, if any
    rule: SenderRule | None = None
    # Slack and Discord rules: how the entry was chosen, in the definitions' words
    found: tuple[Note, ...] = ()

    def notes(self) -> tuple[Note, ...]:
        """How the block was found, in the definitions' words, with positions."""
        if self.found:
            return self.found
        if self.entry is None:
            return ()
        out: list[Note] = []
        if self.account is not None:
            out.append(Note(text=f"account {self.account.id} has its own groups: "
                            f"{self.map_where}.groups", pos=self.account.pos))
        gw = f"{self.map_where}.groups.{key_text(self.entry.id)}"
        if self.entry is self.specific:
            topic = (f" (the chat of topic {self.group_id})"
                     if self.candidate != self.group_id else "")
            out.append(Note(text=f"{gw} is group {self.candidate}{topic}", pos=self.entry.pos))
        elif self.specific is None:
            out.append(Note(text=f"{gw} applies: group {self.candidate} is not declared in "
                            f"{self.map_where}.groups", pos=self.entry.pos))
        else:
            out.append(Note(text=f"{gw} applies: {self.map_where}.groups."
                            f"{key_text(self.specific.id)} has no rule for this sender and "
                            "no tools", pos=self.specific.pos))
        if self.rule is not None:
            who = "any sender" if self.rule.kind == "*" else "this sender"
            out.append(Note(text=f"{self.where} matches {who}", pos=self.rule.pos))
        elif self.entry.senders:
            out.append(Note(text=f"no {gw}.toolsBySender rule matches this sender: the "
                            "group's tools apply", pos=self.entry.pos))
        return tuple(out)

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def key_text(key: str) -> str:
    """A mapping key in a dotted path: bare when it is a plain word, else JSON-quoted."""
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def block_lists(where: str, block: Policy | None) -> tuple[PolicyList, ...]:
    """The allow, alsoAllow and deny lists of a ``{allow, alsoAllow, deny}`` block."""
    if block is None:
        return ()
    out = []
    for kind, lst in (("allow", block.allow), ("alsoAllow", block.also_allow),
                      ("deny", block.deny)):
        if lst is not None:
            out.append(PolicyList(label=f"{where}.{kind}", kind=kind,  # type: ignore[arg-type]
                                  pos=lst.pos, entries=lst.items))
    return tuple(out)


def _entry_list(label: str, kind: ListKind, lst: EntryList | None) -> tuple[PolicyList, ...]:
    return () if lst is None else (PolicyList(label=label, kind=kind, pos=lst.pos,
                                              entries=lst.items),)



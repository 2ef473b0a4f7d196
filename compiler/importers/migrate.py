"""``toolc migrate --openclaw 2026.9``: the rewrite of a 2026.3 project's definitions, as a
plan (``{relative path: new text}`` plus the paths to delete and what was done), computed in
memory from the files' bytes; nothing here writes. ``api.project.migrate`` builds both sides,
prints the access diff and publishes the plan.

What the plan does, mirroring what OpenClaw 2026.9's own upgrade (``openclaw doctor --fix``)
does to a config:

- ``openclaw: "2026.9"``: the key's value where files say it, else a new line after the
  ``version`` of the first policy file;
- starter files byte-identical to the 2026.3 starter (with or without the editor directive)
  are replaced by the 2026.9 starter, and the 2026.9 starter's new files are added; a 2026.3
  starter file 2026.9 has no counterpart for is deleted unless the project names its tools;
- tools the release renamed (``Target.renames``: ``cron`` -> ``automations``, ``image`` ->
  ``view_image``) are renamed in every policy list, group, assertion and catalog entry; globs
  that matched an old name are reported, never rewritten;
- a roster of several agents without a ``default: true`` agent gets ``ownership: explicit``
  (doctor's ``runtime.agents-explicit-ownership``), without which 2026.9 refuses it;
- such a roster's configured channels without a channel-wide binding get one to the first
  agent (doctor's ``repairUnownedChannelAccountBindings``), so that a message 2026.3 gave
  the first agent is not refused (migrate_routing);
- an allow list whose group names plugin tools (``group:memory``: memory-core's) gets the
  plugin id next to the group: 2026.9 loads a plugin's tools only for a list naming them or
  their plugin (``createPluginToolAllowlist``), never through a group (TC142 otherwise).

``bindings`` and ``session`` carry over as written; what 2026.9 routes differently, and the
tools a moved chat gains or loses, is noted (migrate_routing).

Edits are made in the text at the positions the YAML parser reports, so comments, quoting and
layout stay as the user wrote them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..diagnostics import Diagnostics
from ..pipeline.analyze import (
    PLUGINS_GROUP,
    Resolved,
    _all_policy_lists,
    analyze,
    pattern_matches,
)
from ..pipeline.frontend import load_files, read_sources
from ..pipeline.model import Definitions, Entry, EntryList, ToolsConfig
from ..pipeline.policy import policy_name
from ..pipeline.yamlsrc import SourceFile
from ..targets import DEFAULT_KEY, NEWEST_KEY, Target, target
from ..targets.starter import STARTER_FILES, starter_text
from .migrate_routing import bindings_insert, fallback_bindings, routing_notes
from .starter import with_directive


class MigrationError(ValueError):
    """The project cannot be migrated as it is (its definitions have errors)."""


@dataclass(slots=True)
class Plan:
    """The rewrite: new texts by relative path, paths to delete, and what was done."""

    source: str  # the release the project followed
    target: str  # the release it follows after the rewrite
    files: dict[str, str] = field(default_factory=dict)  # changed or new files
    deleted: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # one line per change, for the report
    notes: list[str] = field(default_factory=list)  # what the user should look at

    @property
    def changed(self) -> bool:
        return bool(self.files or self.deleted)


@dataclass(frozen=True, slots=True)
class _Edit:
    line: int  # 1-based
    col: int  # 1-based: where the scalar starts (a quote or its first character)
    old: str  # the scalar's value
    new: str


def plan_migration(files: Mapping[str, bytes], display: str, to: str) -> Plan:
    """The plan that moves the definitions ``files`` (``{relative path: bytes}``) to the
    release ``to``; MigrationError when the definitions do not load."""
    diags = Diagnostics()
    defs = load_files(files, display, diags)
    if defs is None or diags.has_errors():
        raise MigrationError("the definitions have errors; fix them first (toolc validate):\n"
                             + "\n".join(d.render() for d in diags.sorted()
                                         if d.severity == "error"))
    source = defs.openclaw or DEFAULT_KEY
    plan = Plan(source=source, target=to)
    if source == to:
        return plan
    if (source, to) != (DEFAULT_KEY, NEWEST_KEY):
        raise MigrationError(f"toolc migrates {DEFAULT_KEY} projects to {NEWEST_KEY}, not "
                             f"{source} to {to}")
    texts = {rel: raw.decode("utf-8") for rel, raw in files.items()}
    sources = {s.path.removeprefix(display + "/"): s
               for s in read_sources(files, display, Diagnostics())[0]}
    new = target(to)
    replaced = _replace_starter(texts, defs, new, plan)
    edits: dict[str, list[_Edit]] = {}
    # (line index to insert before, counted in the file as read; text)
    inserts: dict[str, list[tuple[int, str]]] = {}
    _renames(defs, sources, display, new, replaced, edits, plan)
    _openclaw_key(sources, to, replaced, edits, inserts, plan)
    if _ownership(defs, sources, display, inserts, plan):
        _fallback_bindings(defs, sources, texts, display, inserts, plan)
    for rel in sorted({*edits, *inserts}):
        plan.files[rel] = _apply(texts[rel], edits.get(rel, []), inserts.get(rel, []), rel,
                                 plan)
    _plugin_ids_beside_groups(texts, display, plan)
    _routing_notes(texts, display, defs, plan)
    return plan


# -- the starter ---------------------------------------------------------------------------------
def _replace_starter(texts: dict[str, str], defs: Definitions, new: Target,
                     plan: Plan) -> set[str]:
    """Starter files as shipped -> the new starter; returns the paths replaced or deleted."""
    old_files, new_files = STARTER_FILES[plan.source], STARTER_FILES[new.key]
    done: set[str] = set()
    directive = False
    for rel in old_files:
        if rel not in texts:
            continue
        shipped = starter_text(plan.source, rel)
        if texts[rel] not in (shipped, with_directive(rel, shipped)):
            plan.notes.append(f"{rel}: edited since `toolc init`, so not replaced by the "
                              f"{new.key} starter (its tools are renamed; compare it with "
                              f"`toolc init --openclaw {new.key}` output)")
            continue
        has = texts[rel] != shipped
        directive = directive or has
        if rel in new_files:
            text = starter_text(new.key, rel)
            plan.files[rel] = with_directive(rel, text) if has else text
            if plan.files[rel] == texts[rel]:
                del plan.files[rel]
                done.add(rel)
                continue
            plan.done.append(f"{rel}: replaced by the OpenClaw {new.key} starter")
        elif named := _named_tools(defs, rel):
            plan.notes.append(f"{rel}: the {plan.source} starter file, kept: the policies name "
                              f"{', '.join(named)}, which the OpenClaw {new.key} starter has no "
                              "tool for")
            flagged = sorted(t.name for t in defs.tools if t.pos.file.endswith("/" + rel)
                             and t.owner_only and new.owner_only_names
                             and t.name not in new.owner_only_names)
            if flagged:
                plan.notes.append(f"{rel}: {', '.join(flagged)} stay owner-only by this file's "
                                  f"ownerOnly flag (toolc honours it); OpenClaw {new.key} does "
                                  "not name them owner-only: drop the flag to follow it")
            continue
        else:
            plan.deleted.append(rel)
            plan.done.append(f"{rel}: deleted (the {plan.source} starter file; the "
                             f"OpenClaw {new.key} starter has none)")
        done.add(rel)
    if "catalog/10-core.yaml" in done:
        for rel in new_files:
            if rel in texts or rel in plan.files:
                continue
            text = starter_text(new.key, rel)
            plan.files[rel] = with_directive(rel, text) if directive else text
            plan.done.append(f"{rel}: added (the OpenClaw {new.key} starter)")
    return done


def _named_tools(defs: Definitions, rel: str) -> list[str]:
    """Tools of the starter file ``rel`` that a policy, group or assertion names."""
    own = {t.name for t in defs.tools if t.pos.file.endswith("/" + rel)}
    named = {e.name for e in _entries(defs)}
    return sorted(own & named)


# -- renames -------------------------------------------------------------------------------------
def _entries(defs: Definitions) -> Iterator[Entry]:
    """Every tool name the definitions write outside the catalog."""
    for lst in _all_policy_lists(defs):
        yield from lst.items
    for group in defs.groups:
        yield from group.members
    for assertion in defs.assertions:
        yield from assertion.tools


def _renames(defs: Definitions, sources: Mapping[str, SourceFile], display: str, new: Target,
             skip: set[str], edits: dict[str, list[_Edit]], plan: Plan) -> None:
    renames = dict(new.renames)
    for entry in _entries(defs):
        rel = entry.pos.file.removeprefix(display + "/")
        if rel in skip:
            continue
        if entry.name in renames:
            edits.setdefault(rel, []).append(_Edit(entry.pos.line, entry.pos.col, entry.text,
                                                   renames[entry.name]))
        elif "*" in entry.name:
            for old, renamed in renames.items():
                if pattern_matches(entry.name, old) and not pattern_matches(entry.name, renamed):
                    plan.notes.append(f"{entry.pos}: pattern {entry.text!r} matched {old}, "
                                      f"which OpenClaw {new.key} calls {renamed}: check it")
    for rel, src in sorted(sources.items()):
        if rel in skip:
            continue
        for i, tool in enumerate(src.data.get("catalog", []) or []):
            name = tool.get("name") if isinstance(tool, dict) else None
            if name in renames:
                pos = src.pos(("catalog", i, "name"))
                edits.setdefault(rel, []).append(_Edit(pos.line, pos.col, name, renames[name]))


# -- the openclaw key and the roster --------------------------------------------------------------
def _openclaw_key(sources: Mapping[str, SourceFile], to: str, skip: set[str],
                  edits: dict[str, list[_Edit]], inserts: dict[str, list[tuple[int, str]]],
                  plan: Plan) -> None:
    said = [(rel, src) for rel, src in sorted(sources.items()) if "openclaw" in src.data]
    for rel, src in said:
        pos = src.pos(("openclaw",))
        edits.setdefault(rel, []).append(_Edit(pos.line, pos.col, str(src.data["openclaw"]),
                                               to))
        plan.done.append(f"{rel}: openclaw: {src.data['openclaw']!r} -> {to!r}")
    if said:
        return
    found = _policy_file(sources, skip)
    if found is None:  # only starter files, all replaced: the key gets a file of its own
        rel = next(f"openclaw{n or ''}.yaml" for n in range(len(sources) + 1)
                   if f"openclaw{n or ''}.yaml" not in sources)
        plan.files[rel] = ("version: 1\n\n# The OpenClaw release these definitions follow.\n"
                           f'openclaw: "{to}"\n')
        plan.done.append(f'{rel}: added, with openclaw: "{to}"')
        return
    rel, src = found
    inserts.setdefault(rel, []).append((src.kpos(("version",)).line, f'openclaw: "{to}"\n'))
    plan.done.append(f'{rel}: added openclaw: "{to}"')


def _policy_file(sources: Mapping[str, SourceFile], skip: set[str]
                 ) -> tuple[str, SourceFile] | None:
    """Where a new top-level key goes: the first file with policy sections, else the first
    file the migration does not replace (None: there is none)."""
    ordered = [(rel, src) for rel, src in sorted(sources.items()) if rel not in skip]
    for rel, src in ordered:
        if set(src.data) & {"tools", "agents", "channels"}:
            return rel, src
    return ordered[0] if ordered else None


def _ownership(defs: Definitions, sources: Mapping[str, SourceFile], display: str,
               inserts: dict[str, list[tuple[int, str]]], plan: Plan) -> bool:
    """``agents.ownership: explicit`` for a roster 2026.9 refuses without it (True: added)."""
    if len(defs.agents) < 2 or any(a.default for a in defs.agents) or defs.agents_ownership:
        return False
    rel = defs.agents[0].pos.file.removeprefix(display + "/")
    src = sources[rel]
    first = next(iter(src.data["agents"]))
    at = src.kpos(("agents", first))
    agents_line = src.kpos(("agents",)).line
    if at.line <= agents_line:
        plan.notes.append(f"{rel}: add `ownership: explicit` to agents by hand (OpenClaw "
                          "2026.9 refuses a roster of several agents without a default)")
        return False
    inserts.setdefault(rel, []).append((at.line - 1, " " * (at.col - 1)
                                        + "ownership: explicit\n"))
    plan.done.append(f"{rel}: added agents.ownership: explicit (several agents, none with "
                     "default: true: as `openclaw doctor --fix` does; a request must now name "
                     "its agent, or mark one agent default: true to keep 2026.3's fallback to "
                     "the first agent)")
    return True


def _fallback_bindings(defs: Definitions, sources: Mapping[str, SourceFile],
                       texts: Mapping[str, str], display: str,
                       inserts: dict[str, list[tuple[int, str]]], plan: Plan) -> None:
    """An explicit roster refuses a message no binding routes: keep 2026.3's route of it (the
    first agent) on every configured channel, as doctor does."""
    added = fallback_bindings(defs)
    if not added:
        return
    home = defs.agents[0].pos.file.removeprefix(display + "/")
    found = bindings_insert(added, sources, texts, home)
    first = added[0][1]
    channels = ", ".join(c for c, _ in added)
    if found is None:
        plan.notes.append(f"add a channel-wide binding to {first} for {channels} by hand "
                          f"({{agentId: {first}, match: {{channel: <channel>, accountId: "
                          '"*"}}): OpenClaw 2026.9 refuses a message no binding routes once the '
                          "roster is explicit, where 2026.3 gave it the first agent")
        return
    rel, index, text = found
    inserts.setdefault(rel, []).append((index, text))
    plan.done.append(f"{rel}: added a channel-wide binding to {first} for {channels} (as "
                     "`openclaw doctor --fix` does: with the roster explicit, OpenClaw 2026.9 "
                     "would refuse a message there no binding routes; 2026.3 gave it the first "
                     "agent, and so does the binding)")


def _routing_notes(texts: Mapping[str, str], display: str, before: Definitions,
                   plan: Plan) -> None:
    """What 2026.9 routes differently (migrate_routing), over the rewritten files."""
    if not before.bindings and not any(a.default for a in before.agents) \
            and not {c.name for c in before.channels} & {"signal", "matrix"}:
        return  # nothing is routed differently
    _, resolved = _rewritten(texts, display, plan)
    if resolved is not None:
        plan.notes.extend(routing_notes(before, resolved))


def _rewritten(texts: Mapping[str, str], display: str, plan: Plan
               ) -> tuple[dict[str, str], Resolved | None]:
    """The project's texts as the plan rewrites them, and their analysis (None where they
    have errors: api.migrate builds the result and reports them)."""
    new_texts = {rel: plan.files.get(rel, text) for rel, text in texts.items()
                 if rel not in plan.deleted}
    new_texts.update({rel: text for rel, text in plan.files.items() if rel not in new_texts})
    diags = Diagnostics()
    defs = load_files({rel: t.encode("utf-8") for rel, t in new_texts.items()}, display, diags)
    resolved = analyze(defs, diags) if defs is not None and not diags.has_errors() else None
    return new_texts, None if resolved is None or diags.has_errors() else resolved


# -- plugin ids beside groups ----------------------------------------------------------------------
def _allow_lists(config: ToolsConfig) -> Iterator[EntryList]:
    blocks = [config.policy, *(bp.policy for bp in config.by_provider),
              *(rule.policy for rule in config.by_sender)]
    if config.subagents:
        blocks.append(config.subagents)
    yield from (b.allow for b in blocks if b.allow)
    if config.sandbox_allow:
        yield config.sandbox_allow


def _plugin_ids_beside_groups(texts: Mapping[str, str], display: str, plan: Plan) -> None:
    """Second pass, over the rewritten files: after an allow list's group entry whose members
    include non-optional plugin tools the list does not otherwise admit, add their plugin ids
    (what TC142 asks for), so the migrated project keeps what 2026.3 loaded through the
    group."""
    new_texts, resolved = _rewritten(texts, display, plan)
    if resolved is None:
        return  # api.migrate builds the result and reports its errors
    defs = resolved.defs
    plugin_of = {t.name: t.plugin for t in resolved.tools if t.plugin and not t.optional}
    lists = [lst for c in (defs.tools_config, *(a.tools for a in defs.agents if a.tools))
             for lst in _allow_lists(c)]
    lists += [block.allow for ch in defs.channels for gmap in ch.entry_maps() for g in gmap
              for block in (g.tools, *(s.policy for s in g.senders)) if block and block.allow]
    appends: dict[str, list[tuple[int, int, str, str]]] = {}
    for lst in lists:
        names = [policy_name(resolved, e.name) for e in lst.items]
        added: set[str] = set()
        for entry, name in zip(lst.items, names, strict=True):
            if name not in resolved.groups or name == PLUGINS_GROUP:
                continue
            ids = sorted({plugin_of[m] for m in resolved.groups[name] if m in plugin_of
                          and not any(n in (m, plugin_of[m], PLUGINS_GROUP)
                                      or ("*" in n and pattern_matches(n, m))
                                      for n in names)} - added)
            if ids:
                added.update(ids)
                rel = entry.pos.file.removeprefix(display + "/")
                appends.setdefault(rel, []).append((entry.pos.line, entry.pos.col, entry.text,
                                                    ", ".join(ids)))
    for rel, items in sorted(appends.items()):
        lines = new_texts[rel].splitlines(keepends=True)
        for line_no, col, text, shown in sorted(items, reverse=True):
            done = _append_after(lines, line_no, col, text, shown)
            where = f"{rel}:{line_no}:{col}"
            if done:
                plan.done.append(f"{where}: added {shown} beside {text!r} (OpenClaw "
                                 f"{plan.target} loads plugin tools only for a list naming "
                                 "them or their plugin, never through a group)")
            else:
                plan.notes.append(f"{where}: add {shown} beside {text!r} by hand (OpenClaw "
                                  f"{plan.target} does not load plugin tools through a group)")
        plan.files[rel] = "".join(lines)


def _append_after(lines: list[str], line_no: int, col: int, text: str, ids: str) -> bool:
    """Put ``ids`` after the list item at ``line_no``:``col`` (a flow item gets ``, ids``, a
    block item a new ``- ids`` line); False when the line is not as the parser said."""
    line = lines[line_no - 1]
    start = col - 1
    if start >= len(line):
        return False
    if line[start] in "\"'":
        end = line.find(line[start], start + 1)
        if end < 0:
            return False
        end += 1
    elif line[start:start + len(text)] == text:
        end = start + len(text)
    else:
        return False
    dash = line[:start].rstrip()
    if dash.endswith("-") and not dash[:-1].strip():  # a block sequence item
        ending = line[len(line.rstrip("\r\n")):] or "\n"
        for one in reversed(ids.split(", ")):
            lines.insert(line_no, line[:start] + one + ending)
        return True
    lines[line_no - 1] = line[:end] + ", " + ids + line[end:]
    return True


# -- editing text at parser positions -------------------------------------------------------------
def _apply(text: str, file_edits: list[_Edit], inserts: list[tuple[int, str]], rel: str,
           plan: Plan) -> str:
    """Replacements first (the parser's line numbers hold), then inserted lines from the
    bottom up."""
    lines = text.splitlines(keepends=True)
    by_line: dict[int, list[_Edit]] = {}
    for edit in file_edits:
        by_line.setdefault(edit.line, []).append(edit)
    for number, line_edits in by_line.items():
        line = lines[number - 1]
        for edit in sorted(line_edits, key=lambda e: e.col, reverse=True):
            replaced = _replace_scalar(line, edit)
            if replaced is None:
                plan.notes.append(f"{rel}:{edit.line}:{edit.col}: could not rewrite "
                                  f"{edit.old!r} as {edit.new!r}: do it by hand")
                continue
            line = replaced
            plan.done.append(f"{rel}:{edit.line}:{edit.col}: {edit.old} -> {edit.new}")
        lines[number - 1] = line
    for index, new_line in sorted(inserts, key=lambda x: x[0], reverse=True):
        lines.insert(index, new_line)
    return "".join(lines)


def _replace_scalar(line: str, edit: _Edit) -> str | None:
    start = edit.col - 1
    if start >= len(line):
        return None
    quote = line[start]
    if quote in "\"'":
        end = line.find(quote, start + 1)
        if end < 0 or line[start + 1:end].strip().lower() != edit.old.strip().lower():
            return None
        return line[:start + 1] + edit.new + line[end:]
    if line[start:start + len(edit.old)] != edit.old:
        return None
    return line[:start] + edit.new + line[start + len(edit.old):]


def unified_diff(before: Mapping[str, str], plan: Plan) -> str:
    """The plan as a unified diff of the files (for ``--check``)."""
    out: list[str] = []
    for rel in sorted({*plan.files, *plan.deleted}):
        old = before.get(rel, "")
        new = "" if rel in plan.deleted else plan.files[rel]
        out += difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                    fromfile=f"a/{rel}" if rel in before else "/dev/null",
                                    tofile="/dev/null" if rel in plan.deleted else f"b/{rel}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


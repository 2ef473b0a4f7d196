"""Start a project: the starter definitions (``toolc init``) and an OpenClaw config turned
into definitions (``toolc import-openclaw``); move it to a newer OpenClaw release (``toolc
migrate``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..audit.explain import explain as explain_tool
from ..builds.compile import resolve_definitions
from ..diagnostics import DefinitionsError, Diagnostics
from ..importers.migrate import MigrationError, Plan, plan_migration, unified_diff
from ..importers.openclaw import ConfigError, ImportRefused, ImportResult, import_openclaw
from ..importers.openclaw_load import load_config
from ..importers.openclaw_secrets import Secrets
from ..importers.starter import ProjectWriteError, init_files, write_new_files
from ..pipeline.analyze import Resolved
from ..pipeline.frontend import read_tree
from ..review.diff import DiffResult, compute_diff, side_from_definitions, to_text
from ..runtime._errors import AgentSelectionRequiredError
from ..semantics.factored import bit_indices
from ..targets import NEWEST_KEY, target


@dataclass(frozen=True, slots=True, kw_only=True)
class InitResult:
    """What ``init`` wrote below its directory, and which of those files existed before."""

    written: tuple[str, ...]
    replaced: tuple[str, ...]


def init(definitions: Path = Path("definitions"), *, force: bool = False,
         openclaw: str = NEWEST_KEY) -> InitResult:
    """Write the starter definitions of the OpenClaw release ``openclaw`` (core catalog,
    profiles, dialects, an example policy naming the release, the editor schema) into
    ``definitions``; other files there are kept. ProjectWriteError when a file init writes
    exists (unless ``force``: then only those are overwritten)."""
    files = init_files(openclaw)
    replaced = tuple(sorted(rel for rel in files if (definitions / rel).exists()))
    write_new_files(files, definitions, force=force, refuse_non_empty=False)
    return InitResult(written=tuple(sorted(files)), replaced=replaced)


def import_openclaw_config(config: Path, out: Path = Path("definitions"), *,
                           force: bool = False, allow_partial: bool = False,
                           openclaw: str | None = None) -> ImportResult:
    """Write definitions meaning what the OpenClaw config file ``config`` (JSON or JSON5, its
    ``$include`` files read as OpenClaw reads them) means into ``out`` (new or empty unless
    ``force``), and return the report. ImportRefused (several messages) when a key that could
    change tool access is left out (unless ``allow_partial``) or a secret would be kept;
    ConfigError when the config cannot be read; ProjectWriteError when ``out`` is refused.
    ``openclaw`` names the release to follow (None: the config's meta.lastTouchedVersion,
    else the newest; ``ImportResult.openclaw`` says which and why).
    Messages are redacted: secrets are never written nor printed. ``validate(out)`` checks
    the result as ``toolc import-openclaw`` does."""
    try:
        loaded = load_config(config, config.as_posix())
        result = import_openclaw(loaded.config, config.name, allow_partial=allow_partial,
                                 included=loaded.included, openclaw=openclaw)
    except ImportRefused:
        raise
    except ConfigError as exc:  # before the config is known: redact by shape
        raise ConfigError(Secrets().redact(str(exc))) from None
    write_new_files(result.files, out, force=force, refuse_non_empty=True)
    return result


# -- migrate -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Why:
    """Why one access change happens: one representative request of its first group of
    classes, explained on both sides, and the rule (a renamed tool, the release's catalog, or
    the Target switch behind the layer that decides differently)."""

    tool: str
    sign: str  # "+" gained, "-" lost
    where: str  # the group of classes, in the diff's words
    context: dict[str, Any]
    before: str
    after: str
    rule: str

    def text(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(self.context.items())) or "no context"
        return (f"{self.sign} {self.tool} ({self.where}): e.g. {shown}\n"
                f"    before: {self.before}\n    after:  {self.after}\n    rule:   {self.rule}")


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrateResult:
    """What ``migrate`` did (or, with ``check``, would do) and the access diff it causes."""

    plan: Plan
    file_diff: str  # unified diff of the definitions files
    diff: DiffResult | None  # None: nothing changes
    why: tuple[Why, ...]
    written: bool

    @property
    def changed(self) -> bool:
        return self.plan.changed

    def diff_text(self) -> str:
        if self.diff is None:
            return "access: nothing changes (the project already follows OpenClaw " \
                   f"{self.plan.target})\n"
        text = to_text(self.diff)
        if self.why:
            text += "why (one request of each change, explained before and after):\n"
            text += "".join(w.text() + "\n" for w in self.why)
        return text


def migrate(definitions: Path = Path("definitions"), *, openclaw: str = NEWEST_KEY,
            check: bool = False) -> MigrateResult:
    """Rewrite the 2026.3 project ``definitions`` to follow OpenClaw ``openclaw`` (see
    ``importers.migrate``) and compute the access diff the upgrade causes (both sides
    compiled, ``review.diff.compute_diff``). The new definitions are written to a copy of the
    directory beside it and checked; only then is the copy swapped in (two renames; the old
    directory is removed after), so the project is never half-written. ``check``: nothing is
    written. MigrationError when the project has errors or the rewrite would not build;
    ProjectWriteError for a symbolic link on the way."""
    shown = definitions.as_posix().rstrip("/")
    if definitions.is_symlink():
        raise ProjectWriteError(f"{shown} is a symbolic link; refusing to rewrite through it")
    diags = Diagnostics()
    files = read_tree(definitions, diags)
    if files is None:
        raise MigrationError("\n".join(str(d) for d in diags.sorted()))
    plan = plan_migration(files, shown, openclaw)
    before_texts = {rel: raw.decode("utf-8") for rel, raw in files.items()}
    if not plan.changed:
        return MigrateResult(plan=plan, file_diff="", diff=None, why=(), written=False)
    work = Path(tempfile.mkdtemp(prefix=f".{definitions.name}.toolc-migrate-",
                                 dir=definitions.resolve().parent))
    try:
        new = work / definitions.name
        shutil.copytree(definitions, new, symlinks=True)
        write_new_files(plan.files, new, force=True, refuse_non_empty=False)
        for rel in plan.deleted:
            (new / rel).unlink()
        try:
            after_side = side_from_definitions(new, f"{shown} (OpenClaw {openclaw})")
        except DefinitionsError as exc:
            errors = "\n".join(d.render() for d in exc.diagnostics if d.severity == "error")
            raise MigrationError(
                "the migrated definitions would not build (nothing was written; `toolc "
                "migrate --check` shows the rewrite):\n"
                + errors.replace(new.as_posix(), shown)) from None
        before_side = side_from_definitions(definitions, f"{shown} (OpenClaw {plan.source})")
        diff = compute_diff(before_side, after_side)
        why = _explain_changes(diff, definitions, new, openclaw)
        result = MigrateResult(plan=plan, file_diff=unified_diff(before_texts, plan),
                               diff=diff, why=why, written=not check)
        if not check:
            _swap(definitions, new, work)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _swap(definitions: Path, new: Path, work: Path) -> None:
    """Put ``new`` where ``definitions`` is: at every moment one complete project exists at
    one of the two paths."""
    old = work / "previous"
    os.rename(definitions, old)
    try:
        os.rename(new, definitions)
    except OSError:
        os.rename(old, definitions)
        raise


# Which switches of a Target decide in a layer (by words of the layer's name).
_LAYER_SWITCHES = (
    ("owner", ("owner_unknown_keeps", "ownerOnly (the release's owner-only set)")),
    ("apply_patch", ("apply_patch", "apply_patch_implied_by")),
    ("subagent", ("subagent_deny_always", "subagent_deny_leaf",
                  "subagent_allow_lifts_default_deny", "default_max_spawn_depth")),
    ("sandbox", ("sandbox_default_allow", "sandbox_default_deny", "sandbox_also_allow",
                 "sandbox_allow_lifts_default_deny")),
    ("plugin", ("plugin_only_allowlist_restricts", "optional_admitted_by_wildcard")),
    ("sender", ("global_sender_layer", "channel_sender_keys")),
    ("group", ("group_id_needs_session",)),
    ("provider", ("slash_model_is_prefixed",)),
    ("profile", ("profiles (the release's built-in profiles)",)),
    ("agent", ("agent_selection",)),
)


def _explain_changes(diff: DiffResult, before: Path, after: Path, to: str) -> tuple[Why, ...]:
    renames = dict(target(to).renames)
    old_name = {new: old for old, new in renames.items()}
    sides = (resolve_definitions(before), resolve_definitions(after))
    out = []
    for change in diff.changes:
        for sign, cubes in (("+", change.gained), ("-", change.lost)):
            if not cubes:
                continue
            cube = cubes[0][0]
            point = [bit_indices(bits)[0] for bits in cube]
            context = diff.space.flags(point)
            names = (old_name.get(change.tool, change.tool), change.tool)
            if change.tool in renames and sign == "-":
                names = (change.tool, renames[change.tool])
            said = [_said(side, name, context) for side, name in zip(sides, names, strict=True)]
            out.append(Why(tool=change.tool, sign=sign, where=diff.words.cube(cube),
                           context=context, before=said[0][0], after=said[1][0],
                           rule=_rule(change.tool, renames, said[0], said[1], to)))
    return tuple(out)


def _said(resolved: Resolved, tool: str, context: dict[str, Any]) -> tuple[str, str | None]:
    """(what explain says, the deciding layer) for one side; a tool the side's catalog does
    not have is said so."""
    if tool not in {t.name for t in resolved.defs.tools}:
        return f"{tool} is not in the catalog", "catalog"
    try:
        found = explain_tool(resolved, tool, context)
    except AgentSelectionRequiredError as exc:  # the release refuses to build tools at all
        return f"the request is refused: {exc}", "agent selection"
    if found.visible:
        return f"{tool} visible", None
    row = next(r for r in found.rows if r.result in ("absent", "removed"))
    return f"{tool} removed by {row.layer}: {row.rule}", row.layer


def _rule(tool: str, renames: dict[str, str], before: tuple[str, str | None],
          after: tuple[str, str | None], to: str) -> str:
    if tool in renames or tool in renames.values():
        pairs = ", ".join(f"{a} -> {b}" for a, b in renames.items())
        return f"renamed by OpenClaw {to} (Target.renames: {pairs})"
    if "catalog" in (before[1], after[1]):
        return f"the OpenClaw {to} catalog (compiler/targets/data/openclaw-{to}.json)"
    layer = after[1] or before[1] or ""
    # the layer's own name first, then the tool, then what explain said on either side
    for said in (layer, tool, f"{before[0]} {after[0]}"):
        for word, switches in _LAYER_SWITCHES:
            if word in said.lower():
                return f"layer {layer}: Target switch {' / '.join(switches)}"
    return f"layer {layer} decides differently under OpenClaw {to}"

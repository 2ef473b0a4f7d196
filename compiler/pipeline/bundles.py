"""Stage 4b, provider schemas and alias shims: every tool cleaned for every dialect.

Produces the runtime's ``bundles.json`` (ready-to-send tool objects per dialect, wire names,
the maps that decode incoming calls, alias shims) and ``schema-notes.json`` (every change the
cleaner made, for review). Cleaner errors (a recursive schema a dialect cannot express, ...)
are build errors at the tool's position; lossy steps are recorded, never silent.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostics
from ..runtime._dialects import DEFAULT_DIALECT, DIALECTS, DialectRegistry
from ..schema import (
    CleanedSchema,
    clean_schema,
    lint_tool_list,
    responses_envelope,
    tool_envelope,
)
from ..schema.aliases import apply_param_aliases, required_groups
from .analyze import Resolved
from .model import Definitions, ToolDef

# Groups that accept an empty string (an edit may replace text with nothing; OpenClaw #19085).
ALLOW_EMPTY = ("newText",)
OPENAI_DIALECTS = ("openai", "openai-strict")


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundles:
    data: dict[str, Any]
    notes: dict[str, Any]
    lossy: dict[str, list[str]]  # dialect -> "tool: message" for each lossy step


@functools.lru_cache(maxsize=4096)
def _clean(parameters: str, dialect: str) -> CleanedSchema:
    """Cleaning is pure and catalogs repeat schemas: cache by content (results are frozen).
    The key keeps author order: property order carries meaning (strict mode, Gemini)."""
    return clean_schema(json.loads(parameters), dialect)


def pointer_text(pointer: Iterable[str | int]) -> str:
    """A pointer as ``a/b/0`` (the runtime walks the same spelling)."""
    return "/".join(str(p) for p in pointer)


class _BundleBuilder:
    def __init__(self, resolved: Resolved, diags: Diagnostics) -> None:
        self.r = resolved
        self.diags = diags

    def cleaned(self, tool: ToolDef, dialect: str) -> CleanedSchema:
        params = apply_param_aliases(dict(tool.parameters), dict(tool.param_aliases))
        result = _clean(json.dumps(params), dialect)
        for note in result.errors:
            where = pointer_text(note.pointer) or "(root)"
            self.diags.error(tool.pos, "TC201", f'"{tool.name}" cannot be expressed for '
                             f"{dialect} at {where}: {note.message}",
                             hint="simplify the schema or drop the dialect for this provider")
        return result

    def dialect(self, dialect: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        tools: dict[str, Any] = {}
        responses: dict[str, Any] = {}
        wire: dict[str, str] = {}
        decode: dict[str, Any] = {}
        notes: dict[str, Any] = {}
        lossy: list[str] = []
        for tool in self.r.tools:
            cleaned = self.cleaned(tool, dialect)
            name = dict(tool.wire_names).get(dialect, tool.name)
            wire[tool.name] = name
            tools[tool.name] = tool_envelope(dialect, name=name, description=tool.description,
                                             cleaned=cleaned, title=tool.label)
            if dialect in OPENAI_DIALECTS:
                responses[tool.name] = responses_envelope(
                    name=name, description=tool.description, cleaned=cleaned)
            if cleaned.property_renames or cleaned.nullable_optionals:
                decode[tool.name] = {
                    "renames": {pointer_text(k): dict(v)
                                for k, v in cleaned.property_renames.items()},
                    "nullable": {pointer_text(k): list(v)
                                 for k, v in cleaned.nullable_optionals.items()}}
            if cleaned.notes:
                notes[tool.name] = [{"code": n.code, "severity": n.severity,
                                     "pointer": pointer_text(n.pointer), "message": n.message,
                                     "lossy": n.lossy} for n in cleaned.notes]
            lossy += [f"{tool.name}: {n.message}" for n in cleaned.notes if n.lossy]
        self.lint(dialect, tools)
        bundle: dict[str, Any] = {"tools": tools, "wire": wire, "decode": decode}
        if responses:
            bundle["responses"] = responses
        return bundle, notes, lossy

    def lint(self, dialect: str, envelopes: dict[str, Any]) -> None:
        """Per-tool rules on the whole catalog (any tool can be in some resolved set)."""
        positions = {t.name: t.pos for t in self.r.tools}
        by_wire = {e.get("name", e.get("function", {}).get("name")): n
                   for n, e in envelopes.items()}
        for v in lint_tool_list(dialect, list(envelopes.values())):
            if v.tool is None:
                continue  # counts depend on the request: checked on example contexts below
            tool = by_wire.get(v.tool, v.tool)
            pos = positions.get(tool) if tool else None
            if pos is not None:
                self.diags.warning(pos, "TC210", f"{dialect}: {v.message}",
                                   hint=f"lint {v.code}")

    def build(self) -> Bundles:
        defs = self.r.defs
        data: dict[str, Any] = {"providers": dialect_registry(defs).to_json(),
                                "dialects": {}, "aliases": {}}
        notes: dict[str, Any] = {}
        lossy: dict[str, list[str]] = {}
        for dialect in DIALECTS:
            bundle, dialect_notes, lost = self.dialect(dialect)
            data["dialects"][dialect] = bundle
            notes[dialect] = dialect_notes
            lossy[dialect] = lost
        for tool in self.r.tools:
            aliases = dict(tool.param_aliases)
            if aliases:
                groups = required_groups(dict(tool.parameters), aliases)
                data["aliases"][tool.name] = {
                    "map": aliases, "groups": [[label, list(keys)] for label, keys in groups],
                    "allowEmpty": [k for _, keys in groups for k in keys if k in ALLOW_EMPTY]}
        return Bundles(data=data, notes=notes, lossy=lossy)


def dialect_registry(defs: Definitions) -> DialectRegistry:
    """The definitions' ``providers:`` table as the runtime reads it."""
    entries = {p.key: p.dialect for p in defs.provider_dialects}
    return DialectRegistry(entries=entries, default=defs.default_dialect or DEFAULT_DIALECT)


def build_bundles(resolved: Resolved, diags: Diagnostics) -> Bundles:
    return _BundleBuilder(resolved, diags).build()

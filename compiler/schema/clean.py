"""`clean_schema`: normalize, resolve references, walk with the dialect's hook and table."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Final

from ..runtime._dialects import DIALECTS
from . import anthropic, gemini, gemini_json, mcp, openai, openai_strict
from .model import CleanedSchema, SchemaNote
from .normalize import normalize_schema
from .refs import resolve_refs
from .walker import Ctx, Dialect, walk

REGISTRY: Final[dict[str, Dialect]] = {
    d.name: d
    for d in (
        openai.DIALECT,
        openai_strict.DIALECT,
        anthropic.DIALECT,
        gemini.DIALECT,
        gemini_json.DIALECT,
        mcp.DIALECT,
    )
}


def clean_schema(parameters: dict[str, Any], dialect: str) -> CleanedSchema:
    """The tool's parameters schema rewritten for `dialect` (one of `DIALECTS`).

    Nothing is dropped silently: each constraint the dialect cannot carry is appended to the
    description of its node and reported by a lossy note; notes with severity "error" (a
    recursive schema Gemini cannot express, an unresolvable `$ref`, ...) must fail the build.
    For "openai-strict", `strict` is True only when the strict rewrite is lossless; otherwise
    the plain "openai" form is returned with `strict` False.
    """
    spec = REGISTRY.get(dialect)
    if spec is None:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    normalized, notes = normalize_schema(
        copy.deepcopy(parameters), flatten_root_union=spec.flatten_root_union
    )
    return _clean(normalized, notes, spec)


def _clean(
    normalized: dict[str, Any], notes: tuple[SchemaNote, ...], spec: Dialect
) -> CleanedSchema:
    ctx = Ctx(spec, normalized)
    resolved = resolve_refs(copy.deepcopy(normalized), spec.refs, ctx)
    ctx.root = resolved
    schema = walk(resolved, ctx)
    result = CleanedSchema(
        dialect=spec.name,
        schema=schema,
        notes=(*notes, *ctx.items),
        strict=spec.strict,
        property_renames=ctx.renames,
        nullable_optionals=ctx.nullables,
    )
    if spec.fallback is None:
        return result
    blockers = [n for n in result.notes if n.lossy or n.severity == "error"]
    blockers += [_problem(p) for p in (spec.verify(schema) if spec.verify else [])]
    if not blockers:
        return result
    plain = _clean(normalized, notes, spec.fallback)
    fallback = tuple(_fallback_note(n) for n in blockers)
    return dataclasses.replace(plain, dialect=spec.name, notes=(*plain.notes, *fallback))


def _problem(message: str) -> SchemaNote:
    return SchemaNote(
        code="strict-check", severity="error", pointer=(), message=message, lossy=False
    )


def _fallback_note(blocker: SchemaNote) -> SchemaNote:
    return SchemaNote(
        code="strict-fallback",
        severity="warning",
        pointer=blocker.pointer,
        message=f"strict mode not used: {blocker.message}",
        lossy=False,
    )

"""Whole-request checks on a list of tool envelopes: names, counts, lengths, schemas."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..runtime._dialects import DIALECTS
from .checks import nodes, schema_problems
from .keywords import dict_at, list_at
from .refs import def_cycles

NAME_PATTERNS: Final = {
    "openai": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "openai-strict": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    # The live API now says {1,128}, but Claude Code's tool search still caps names at 64.
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    # Dev API error text: letter/underscore first, then alphanumerics, _ . -; max 64.
    "gemini": re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"),
    "gemini-json": re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"),
    "mcp": re.compile(r"^[A-Za-z0-9._-]{1,128}$"),
}
MAX_TOOLS: Final = {"openai": 128, "openai-strict": 128, "gemini": 128, "gemini-json": 128}
MAX_DESCRIPTION: Final = {"openai": 1024, "openai-strict": 1024}
ANTHROPIC_STRICT_TOOLS: Final = 20
ANTHROPIC_STRICT_OPTIONAL: Final = 24
ANTHROPIC_STRICT_UNIONS: Final = 16
_SCHEMA_KEY: Final = {
    "anthropic": "input_schema",
    "gemini": "parameters",
    "gemini-json": "parametersJsonSchema",
    "mcp": "inputSchema",
}
_MISSING: Final = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class LintViolation:
    code: str
    tool: str | None
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tool:
    name: str | None
    description: Any
    schema: Any
    strict: bool
    extra_keys: frozenset[str]


def lint_tool_list(dialect: str, envelopes: Sequence[dict[str, Any]]) -> list[LintViolation]:
    """Every reason the provider would reject this tool list (envelopes as built by
    `tool_envelope` / `responses_envelope`, or hand-written)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    tools = [_unwrap(dialect, e) for e in envelopes]
    found = _count(dialect, tools) + _duplicates(tools)
    for tool in tools:
        found += _name(dialect, tool) + _description(dialect, tool) + _schema(dialect, tool)
    if dialect == "anthropic":
        found += _anthropic_strict([t for t in tools if t.strict])
    return found


def _unwrap(dialect: str, envelope: dict[str, Any]) -> _Tool:
    body = envelope
    if dialect in ("openai", "openai-strict") and isinstance(envelope.get("function"), dict):
        body = envelope["function"]  # Chat Completions; otherwise the Responses flat form
    key = _SCHEMA_KEY.get(dialect, "parameters")
    name = body.get("name")
    return _Tool(
        name=name if isinstance(name, str) else None,
        description=body.get("description"),
        schema=body.get(key, _MISSING),
        strict=body.get("strict") is True,
        extra_keys=frozenset(body),
    )


def _count(dialect: str, tools: list[_Tool]) -> list[LintViolation]:
    limit = MAX_TOOLS.get(dialect)
    if limit is None or len(tools) <= limit:
        return []
    return [
        LintViolation(
            code="too-many-tools",
            tool=None,
            message="Invalid 'tools': array too "
            f"long. Expected an array with maximum length {limit}, but got an array with length "
            f"{len(tools)} instead.",
        )
    ]


def _duplicates(tools: list[_Tool]) -> list[LintViolation]:
    counts = Counter(t.name for t in tools if t.name is not None)
    return [
        LintViolation(
            code="duplicate-name",
            tool=name,
            message=f"Tool names must be unique ({name!r} appears {n} times).",
        )
        for name, n in sorted(counts.items())
        if n > 1
    ]


def _name(dialect: str, tool: _Tool) -> list[LintViolation]:
    pattern = NAME_PATTERNS[dialect]
    if tool.name is not None and pattern.match(tool.name):
        return []
    return [
        LintViolation(
            code="name-pattern",
            tool=tool.name,
            message=f"tool name {tool.name!r} does not match the pattern '{pattern.pattern}'.",
        )
    ]


def _description(dialect: str, tool: _Tool) -> list[LintViolation]:
    limit = MAX_DESCRIPTION.get(dialect)
    text = tool.description
    if limit is None or not isinstance(text, str) or len(text) <= limit:
        return []
    return [
        LintViolation(
            code="description-too-long",
            tool=tool.name,
            message="string too long. "
            f"Expected a string with maximum length {limit}, but got a string with length "
            f"{len(text)} instead.",
        )
    ]


def _schema(dialect: str, tool: _Tool) -> list[LintViolation]:
    schema = tool.schema
    if schema is _MISSING:
        # OpenAI and Gemini read a missing schema as "no arguments"; the others require one.
        if dialect in ("anthropic", "mcp"):
            return [
                LintViolation(
                    code="schema-missing",
                    tool=tool.name,
                    message=f"{_SCHEMA_KEY[dialect]}: Field required.",
                )
            ]
        return []
    if dialect == "gemini" and "parametersJsonSchema" in tool.extra_keys:
        return [
            LintViolation(
                code="schema-conflict",
                tool=tool.name,
                message="parameters and parametersJsonSchema are mutually exclusive.",
            )
        ]
    strict = tool.strict and dialect == "openai-strict"
    return [
        LintViolation(code="schema", tool=tool.name, message=m)
        for m in schema_problems(dialect, schema, strict=strict)
    ]


def _anthropic_strict(tools: list[_Tool]) -> list[LintViolation]:
    """Request-level limits of Anthropic strict tool use (counted without following $ref)."""
    found = []
    if len(tools) > ANTHROPIC_STRICT_TOOLS:
        found.append(
            LintViolation(
                code="anthropic-strict-limit",
                tool=None,
                message=f"{len(tools)} strict tools > {ANTHROPIC_STRICT_TOOLS}.",
            )
        )
    optional = unions = 0
    for tool in tools:
        schema = tool.schema if isinstance(tool.schema, dict) else {}
        found += _anthropic_strict_schema(tool.name, schema)
        for _, node in nodes({k: v for k, v in schema.items() if k != "$defs"}):
            props = dict_at(node, "properties")
            required = list_at(node, "required")
            optional += sum(1 for n in props if n not in required)
            unions += sum(1 for s in props.values() if _is_union(s))
    if optional > ANTHROPIC_STRICT_OPTIONAL:
        found.append(
            LintViolation(
                code="anthropic-strict-limit",
                tool=None,
                message=f"{optional} "
                f"optional parameters in strict tools > {ANTHROPIC_STRICT_OPTIONAL}.",
            )
        )
    if unions > ANTHROPIC_STRICT_UNIONS:
        found.append(
            LintViolation(
                code="anthropic-strict-limit",
                tool=None,
                message=f"{unions} "
                f"union-typed parameters in strict tools > {ANTHROPIC_STRICT_UNIONS}.",
            )
        )
    return found


def _anthropic_strict_schema(name: str | None, schema: dict[str, Any]) -> list[LintViolation]:
    found = [
        LintViolation(
            code="anthropic-strict-recursion",
            tool=name,
            message=f"$defs/{d} is recursive; strict tools cannot be recursive.",
        )
        for d in def_cycles(schema)
    ]
    for at, node in nodes(schema):
        if node.get("type") == "object" and node.get("additionalProperties") is not False:
            found.append(
                LintViolation(
                    code="anthropic-strict-schema",
                    tool=name,
                    message=f"In "
                    f"context={tuple(map(str, at))!r}, strict tools need "
                    "additionalProperties: false on every object.",
                )
            )
    return found


def _is_union(schema: Any) -> bool:
    return isinstance(schema, dict) and ("anyOf" in schema or isinstance(schema.get("type"), list))

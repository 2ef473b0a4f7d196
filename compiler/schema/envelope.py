"""The exact wire object of one tool per dialect."""

from __future__ import annotations

from typing import Any

from .model import CleanedSchema

_OPENAI = ("openai", "openai-strict")


def tool_envelope(
    dialect: str,
    *,
    name: str,
    description: str,
    cleaned: CleanedSchema,
    title: str | None = None,
) -> dict[str, Any]:
    """Chat Completions function tool (openai, openai-strict), Anthropic tool, Gemini
    FunctionDeclaration (camelCase JSON) or MCP Tool; `title` is used by MCP only."""
    if cleaned.dialect != dialect:
        raise ValueError(f"schema was cleaned for {cleaned.dialect!r}, not {dialect!r}")
    schema = cleaned.schema
    if dialect in _OPENAI:
        function = {"name": name, "description": description, "parameters": schema}
        return {"type": "function", "function": {**function, "strict": _strict(cleaned)}}
    if dialect == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    if dialect == "gemini":
        # A zero-argument function omits `parameters` (an OBJECT needs non-empty properties).
        has_args = bool(schema.get("properties"))
        return {
            "name": name,
            "description": description,
            **({"parameters": schema} if has_args else {}),
        }
    if dialect == "gemini-json":
        return {"name": name, "description": description, "parametersJsonSchema": schema}
    if dialect == "mcp":
        tool = {"name": name, "description": description, "inputSchema": schema}
        return {**tool, "title": title} if title is not None else tool
    raise ValueError(f"unknown dialect {dialect!r}")


def responses_envelope(*, name: str, description: str, cleaned: CleanedSchema) -> dict[str, Any]:
    """Responses API function tool. `strict` is always written: the API defaults it to true."""
    if cleaned.dialect not in _OPENAI:
        raise ValueError(f"Responses tools need an openai dialect, not {cleaned.dialect!r}")
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": cleaned.schema,
        "strict": _strict(cleaned),
    }


def _strict(cleaned: CleanedSchema) -> bool:
    return cleaned.dialect == "openai-strict" and cleaned.strict

"""The system prompt's tool list: what the model is told it may call."""

from __future__ import annotations

import re
from typing import Final

from ._bundles import wire_names
from ._tables import ToolDefinition, ToolSet

HEADING: Final = "## Tool availability (filtered by policy)"
_SENTENCE: Final = re.compile(r"(.+?[.!?])(?:\s|$)")


def tool_summary(tool: ToolDefinition) -> str:
    """A tool's one-line summary: its ``summary``, else its description's first sentence,
    else its label."""
    if tool.summary.strip():
        return " ".join(tool.summary.split())
    text = " ".join(tool.description.split())
    found = _SENTENCE.match(text)
    return found.group(1) if found else (text or tool.label)


def system_prompt_tools(toolset: ToolSet, *, dialect: str | None = None) -> str:
    """The "Tool availability (filtered by policy)" section of a system prompt: the heading,
    then ``- name: summary`` for each tool of ``toolset`` in catalog order. With ``dialect``,
    names are the ones the model calls in that dialect (``Read`` for Anthropic)."""
    wire = wire_names(dialect) if dialect is not None else {}
    lines = [HEADING]
    lines += [f"- {wire.get(t.name, t.name)}: {tool_summary(t)}" for t in toolset]
    return "\n".join(lines) + "\n"

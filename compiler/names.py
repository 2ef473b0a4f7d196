"""Name normalization shared by the front end and the reference interpreter (OpenClaw rules)."""

from __future__ import annotations

import re

TOOL_NAME_ALIASES = {"bash": "exec", "apply-patch": "apply_patch"}
DEFAULT_AGENT_ID = "main"
_AGENT_ID_OK = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_AGENT_ID_BAD_RUN = re.compile(r"[^a-z0-9_-]+")


def normalize_tool_name(raw: str) -> str:
    """Trim, lowercase, then the whole-string aliases (``bash`` -> ``exec``)."""
    name = raw.strip().lower()
    return TOOL_NAME_ALIASES.get(name, name)


def normalize_agent_id(raw: str | None) -> str:
    """OpenClaw's agent id normalization; empty or missing means the default agent."""
    value = (raw or "").strip().lower()
    if not value:
        return DEFAULT_AGENT_ID
    if _AGENT_ID_OK.match(value):
        return value
    value = _AGENT_ID_BAD_RUN.sub("-", value).strip("-")[:64]
    return value or DEFAULT_AGENT_ID


def model_key(provider: str, model: str) -> str:
    """The byProvider/providers key of a model (section 5.3 CLASSIC): ``provider/model``, or
    the model id itself when it already contains ``/`` (normalized inputs)."""
    return model if "/" in model else f"{provider}/{model}"


def normalize_key(raw: str | None) -> str:
    """Provider, model, channel and byProvider keys: trimmed and lowercased."""
    return (raw or "").strip().lower()

"""Name normalization shared by the front end and the reference interpreter (OpenClaw rules)."""

from __future__ import annotations

import re

from .channels import CHANNEL_RULES

TOOL_NAME_ALIASES = {"bash": "exec", "apply-patch": "apply_patch"}
DEFAULT_AGENT_ID = "main"
_AGENT_ID_OK = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
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
    if _AGENT_ID_OK.fullmatch(value):
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


# Channel ids as OpenClaw 2026.3.2 normalizes a message channel (``normalizeChatChannelId``).
CHANNEL_ALIASES = {"imsg": "imessage", "internet-relay-chat": "irc", "google-chat": "googlechat",
                   "gchat": "googlechat"}
# Channels whose group resolver ignores case (OpenClaw: only IRC) and that never match
# ``e164:`` sender keys (IRC's resolver does not pass the phone number).
CASE_INSENSITIVE_GROUP_CHANNELS = frozenset(n for n, r in CHANNEL_RULES.items() if r.fold_case)
NO_E164_CHANNELS = frozenset(n for n, r in CHANNEL_RULES.items() if not r.e164)
# Channels whose group ids carry a topic suffix (``-100123:topic:7``): the chat id comes first.
TOPIC_GROUP_CHANNELS = frozenset(n for n, r in CHANNEL_RULES.items() if r.topics)
DEFAULT_ACCOUNT_ID = "default"
_TELEGRAM_CHAT = re.compile(r"-?[0-9]+")
_TELEGRAM_TOPIC = re.compile(r"[0-9]+")


def normalize_channel(raw: str | None) -> str | None:
    """A message channel: trimmed, lowercased, aliases resolved; blank is None."""
    value = (raw or "").strip().lower()
    return CHANNEL_ALIASES.get(value, value) or None


def normalize_account_id(raw: str | None) -> str:
    """OpenClaw's ``normalizeAccountId``: blank is ``default``; invalid runs become ``-``."""
    value = (raw or "").strip()
    if not value:
        return DEFAULT_ACCOUNT_ID
    lower = value.lower()
    if not _AGENT_ID_OK.fullmatch(lower):
        lower = _AGENT_ID_BAD_RUN.sub("-", lower).strip("-")[:64]
    if not lower or lower in ("__proto__", "prototype", "constructor"):
        return DEFAULT_ACCOUNT_ID
    return lower


def group_candidates(channel: str, group_id: str) -> tuple[str, ...]:
    """The ids a channel's group resolver tries, in order (Telegram: the chat id of a topic
    first, then the id as given, which OpenClaw's generic resolver tries next)."""
    gid = group_id.strip()
    if channel in TOPIC_GROUP_CHANNELS:
        parts = [p for p in gid.split(":") if p]
        chat = None
        if (len(parts) >= 3 and parts[1] == "topic" and _TELEGRAM_CHAT.fullmatch(parts[0])
                and _TELEGRAM_TOPIC.fullmatch(parts[2])):
            chat = parts[0]
        elif (len(parts) >= 2 and _TELEGRAM_CHAT.fullmatch(parts[0])
              and _TELEGRAM_TOPIC.fullmatch(parts[1])):
            chat = parts[0]
        if chat is not None and chat != gid:
            return (chat, gid)
    return (gid,)

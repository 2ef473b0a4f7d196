"""The resolve() contexts the latency figures are taken over: drawn with a seeded RNG from the
names a definitions directory uses (agents, provider keys, channels, groups, accounts, senders)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def _load_docs(defs: Path) -> dict[str, Any]:
    """The top-level keys of a definitions directory (only what contexts are drawn from)."""
    merged: dict[str, Any] = {}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(p for p in defs.rglob("*") if p.suffix in (".yaml", ".yml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        for key, value in doc.items():
            if key not in ("version", "catalog"):
                merged[key] = value
    return merged

@dataclass(frozen=True, slots=True, kw_only=True)
class Universe:
    agents: list[str]
    provider_keys: list[str]
    channels: dict[str, list[str]]  # channel -> group ids (channel-level map)
    accounts: dict[str, dict[str, list[str]]]  # channel -> account -> group ids
    senders: list[tuple[str, str]]  # (kind, value) from toolsBySender keys


def universe(defs: Path) -> Universe:
    docs = _load_docs(defs)
    agents_doc = docs.get("agents") or {}
    agents = sorted(str(a["id"]) for a in agents_doc.get("list") or [])
    keys: set[str] = set((docs.get("tools") or {}).get("byProvider") or {})
    for agent in agents_doc.get("list") or []:
        keys |= set(((agent.get("tools") or {}).get("byProvider")) or {})
    keys |= set((docs.get("providers") or {}).get("entries") or {})
    channels: dict[str, list[str]] = {}
    accounts: dict[str, dict[str, list[str]]] = {}
    senders: set[tuple[str, str]] = set()

    def collect(groups: dict[str, Any]) -> list[str]:
        for cfg in groups.values():
            for key in (cfg or {}).get("toolsBySender") or {}:
                kind, sep, value = str(key).partition(":")
                if sep and kind in ("id", "e164", "username", "name"):
                    senders.add((kind, value))
        return sorted(g for g in groups if g != "*")

    for name, cfg in sorted((docs.get("channels") or {}).items()):
        channels[name] = collect((cfg or {}).get("groups") or {})
        for acc, acc_cfg in sorted(((cfg or {}).get("accounts") or {}).items()):
            accounts.setdefault(name, {})[acc] = collect((acc_cfg or {}).get("groups") or {})
    return Universe(
        agents=agents,
        provider_keys=sorted(keys),
        channels=channels,
        accounts=accounts,
        senders=sorted(senders),
    )

def universe_of_build(out: Path, package: str = "toolc_runtime") -> Universe:
    """The same names as ``universe``, read from a build instead of its definitions: agents
    and provider keys from ``tables.json``, group ids and sender keys from the table shards.
    For the sizes whose YAML is too large to load whole just to draw contexts (bench-huge);
    sender values are the normalized ones the tables hold."""
    root = out / package
    tables = json.loads((root / "tables.json").read_text(encoding="utf-8"))
    keys: set[str] = set(tables.get("global_bp") or {})
    for record in tables.get("agent_records") or []:
        keys |= set(record.get("bp") or {})
    senders: set[tuple[str, str]] = set()

    def collect(shard: str | None) -> list[str]:
        if shard is None:
            return []
        lines = (root / shard).read_text(encoding="utf-8").split("\n")
        head = json.loads(lines[0])
        groups = []
        for line in lines[1 : 1 + int(head["exact"])]:
            key, _, entry = line.partition("\t")
            group = json.loads(key)
            if group != "*":
                groups.append(group)
            buckets = json.loads(entry)[1:5]
            for kind, bucket in zip(("id", "e164", "username", "name"), buckets, strict=False):
                senders.update((kind, str(value)) for value in bucket)
        return sorted(groups)

    channels: dict[str, list[str]] = {}
    accounts: dict[str, dict[str, list[str]]] = {}
    for name, ch in sorted((tables.get("channels") or {}).items()):
        channels[name] = collect(ch.get("groups"))
        for acc, shard in sorted((ch.get("accounts") or {}).items()):
            accounts.setdefault(name, {})[acc] = collect(shard)
    return Universe(agents=sorted(tables.get("agents") or {}), provider_keys=sorted(keys),
                    channels=channels, accounts=accounts, senders=sorted(senders))

CONTEXT_KEYS = (
    "agent_id",
    "session_key",
    "model_provider",
    "model_id",
    "message_provider",
    "account_id",
    "group_id",
    "sender_id",
    "sender_e164",
    "sender_username",
    "sender_name",
    "sender_is_owner",
    "sandboxed",
    "spawn_depth",
)
_MODELS = ("gpt-5", "gpt-5-codex", "gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-pro", "model-1")
_SENDER_FIELD = {
    "id": "sender_id",
    "e164": "sender_e164",
    "username": "sender_username",
    "name": "sender_name",
}

def _draw_provider(rng: random.Random, u: Universe, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.1 or not u.provider_keys:
        return
    if r < 0.18:
        kw["model_provider"], kw["model_id"] = "acme-unknown", "model-x"
        return
    key = rng.choice(u.provider_keys)
    provider, _, model = key.partition("/")
    kw["model_provider"] = provider if rng.random() < 0.9 else provider.upper()
    if model:
        kw["model_id"] = model
    elif rng.random() < 0.7:
        kw["model_id"] = rng.choice(_MODELS)


def _draw_sender(rng: random.Random, u: Universe, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.3:
        return
    if r < 0.45 or not u.senders:
        kw["sender_id"] = str(rng.randrange(10**6, 10**7))
        kw["sender_name"] = "Stranger"
        return
    kind, value = rng.choice(u.senders)
    if kind == "username" and rng.random() < 0.5:
        value = value.lstrip("@")
    kw[_SENDER_FIELD[kind]] = value if rng.random() < 0.9 else value.upper()
    if kind != "id" and rng.random() < 0.5:
        kw["sender_id"] = str(rng.randrange(10**6, 10**7))


def _draw_group(rng: random.Random, u: Universe, agent: str | None, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.25 or not u.channels:
        return
    if r < 0.3:
        kw["message_provider"], kw["group_id"] = "nochannel", "-100777"
        return
    channel = rng.choice(sorted(u.channels))
    groups = u.channels[channel]
    accounts = u.accounts.get(channel, {})
    if accounts and rng.random() < 0.4:
        account = rng.choice(sorted(accounts))
        kw["account_id"] = account if rng.random() < 0.9 else "no-such-account"
        groups = accounts[account] or groups
    q = rng.random()
    group = rng.choice(groups) if groups and q < 0.8 else ("-100999999" if q < 0.9 else None)
    if group is not None and rng.random() < 0.35:
        # group context from the session key instead of explicit keywords
        topic = f":topic:{rng.randrange(100)}" if rng.random() < 0.2 else ""
        kw["session_key"] = f"agent:{agent or 'main'}:{channel}:group:{group}{topic}"
        return
    kw["message_provider"] = channel
    if group is not None:
        kw["group_id"] = group


def draw_contexts(u: Universe, n: int, seed: str) -> list[dict[str, Any]]:
    """``n`` resolve() keyword sets, the same for the same definitions and seed."""
    rng = random.Random(seed)
    contexts = []
    for _ in range(n):
        kw: dict[str, Any] = {}
        r = rng.random()
        agent = rng.choice(u.agents) if u.agents and r < 0.8 else ("ghost" if r < 0.85 else None)
        _draw_provider(rng, u, kw)
        _draw_group(rng, u, agent, kw)
        _draw_sender(rng, u, kw)
        if "session_key" not in kw and rng.random() < 0.12:
            depth = 2 if rng.random() < 0.3 else 1
            kw["session_key"] = f"agent:{agent or 'main'}" + ":subagent:x" * depth
            if rng.random() < 0.5:
                kw["spawn_depth"] = depth
        if agent is not None and ("session_key" not in kw or rng.random() < 0.5):
            kw["agent_id"] = agent
        q = rng.random()
        if q < 0.1:
            kw["sender_is_owner"] = True
        elif q < 0.2:
            kw["sender_is_owner"] = False
        if rng.random() < 0.15:
            kw["sandboxed"] = True
        contexts.append(dict(sorted(kw.items())))
    return contexts

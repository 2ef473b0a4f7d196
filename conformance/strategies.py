"""Random OpenClaw configs (only what OpenClaw's config can express) and random request contexts.

The `tools`, `agents`, `channels` and `plugins` sections are OpenClaw's own config shape: the
same dict goes to OpenClaw as JSON and, with the catalog added, to toolc as definitions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests import strategies as shared

# Plugin stand-ins: `lobster` names one of its tools after itself (OpenClaw's own plugin does).
PLUGINS: dict[str, list[str]] = {"lobster": ["lobster", "lobster_status"],
                                 "voice_pack": ["voice_call", "voice_admin"],
                                 "search_kit": ["code_grep"]}
CORE = ["read", "write", "edit", "apply_patch", "exec", "process", "web_search", "web_fetch",
        "memory_search", "memory_get", "sessions_list", "sessions_history", "sessions_send",
        "sessions_spawn", "subagents", "session_status", "browser", "canvas", "message", "cron",
        "gateway", "nodes", "agents_list", "image", "tts", "pdf", "whatsapp_login"]
GROUPS = ["group:fs", "group:runtime", "group:web", "group:memory", "group:sessions", "group:ui",
          "group:messaging", "group:automation", "group:nodes", "group:agents", "group:media",
          "group:openclaw", "group:plugins"]
ENTRY_POOL = [*CORE, *GROUPS, *PLUGINS, *(t for ts in PLUGINS.values() for t in ts),
              "memory-core", "*", "web_*", "sess*", "*_get", "bash", " Exec ", "apply-patch",
              "unknown_tool", "GROUP:FS"]
PROFILES = ["minimal", "coding", "messaging", "full"]
BP_KEYS = ["openai", "anthropic", "google", "openai-codex", "openai/gpt-5", "gpt-5",
           "anthropic/claude-x", "openrouter"]
CHANNELS = ["telegram", "whatsapp", "irc", "signal", "imessage", "googlechat", "bluebubbles",
            "feishu", "matrix", "msteams", "zalo", "mattermost"]
KEYED_CHANNELS = ["slack", "discord"]
GROUP_IDS = ["-100", "-100:topic:7", "g1", "G1", "*"]
MODELS = ["gpt-5", "GPT-5", "openai/gpt-5", "o3", "claude-x", "anthropic/claude-x"]

entries = st.lists(st.sampled_from(ENTRY_POOL), max_size=4)


def policy_block(*, profile: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    return shared.policy_block(profile=profile, pool=ENTRY_POOL, profiles=PROFILES)


def by_provider() -> st.SearchStrategy[dict[str, Any]]:
    return shared.by_provider(keys=BP_KEYS, pool=ENTRY_POOL, profiles=PROFILES)


def apply_patch() -> st.SearchStrategy[dict[str, Any]]:
    return shared.apply_patch(models=MODELS)


def group_map() -> st.SearchStrategy[dict[str, Any]]:
    return shared.group_map(ids=GROUP_IDS, pool=ENTRY_POOL)


@st.composite
def config(draw: st.DrawFn) -> dict[str, Any]:
    """One OpenClaw config: tools, agents, channels, plugins."""
    tools: dict[str, Any] = draw(policy_block(profile=True))
    if draw(st.booleans()):
        tools["byProvider"] = draw(by_provider())
    if draw(st.booleans()):
        tools["sandbox"] = {"tools": {k: draw(entries) for k in draw(st.lists(
            st.sampled_from(["allow", "deny"]), max_size=2, unique=True))}}
    if draw(st.booleans()):
        tools["subagents"] = {"tools": draw(policy_block())}
    if draw(st.integers(0, 3)) > 0:
        tools["exec"] = {"applyPatch": draw(apply_patch())}
    agents = []
    for aid in draw(st.lists(st.sampled_from(["main", "a1", "a2"]), max_size=3, unique=True)):
        agent: dict[str, Any] = {"id": aid}
        if draw(st.integers(0, 4)) > 0:
            at = draw(policy_block(profile=True))
            if draw(st.booleans()):
                at["byProvider"] = draw(by_provider())
            if draw(st.booleans()):
                at["sandbox"] = {"tools": {"allow": draw(entries)}}
            if draw(st.integers(0, 3)) == 0:
                at["exec"] = {"applyPatch": draw(apply_patch())}
            agent["tools"] = at
        if draw(st.integers(0, 2)) == 0:
            agent["sandbox"] = draw(SANDBOX_BLOCKS)
        if draw(st.integers(0, 3)) == 0:
            agent["default"] = draw(st.booleans())
        agents.append(agent)
    channels: dict[str, Any] = {}
    for ch in draw(st.lists(st.sampled_from(KEYED_CHANNELS), max_size=2, unique=True)):
        channels[ch] = draw(shared.keyed_channel(ch, pool=ENTRY_POOL))
    for ch in draw(st.lists(st.sampled_from(CHANNELS), max_size=3, unique=True)):
        c: dict[str, Any] = {}
        if draw(st.integers(0, 3)) > 0:
            c["groups"] = draw(group_map())
        if draw(st.booleans()):
            c["accounts"] = {acc: ({"groups": draw(group_map())} if draw(st.booleans()) else {})
                             for acc in draw(st.lists(st.sampled_from(["work", "home",
                                                                        "default"]),
                                                      max_size=2, unique=True))}
        channels[ch] = c
    plugins: dict[str, Any] = {"entries": {p: {"enabled": draw(st.integers(0, 4)) > 0}
                                           for p in draw(st.lists(st.sampled_from(
                                               [*PLUGINS, "memory-core"]), max_size=2,
                                               unique=True))}}
    if draw(st.integers(0, 15)) == 0:
        plugins["enabled"] = False
    defaults: dict[str, Any] = {"subagents": {"maxSpawnDepth": draw(st.integers(1, 3))}}
    if draw(st.booleans()):
        defaults["sandbox"] = draw(SANDBOX_BLOCKS)
    out = {"tools": tools, "agents": {"defaults": defaults, "list": agents},
           "channels": channels, "plugins": plugins}
    if draw(st.integers(0, 2)) == 0:
        # mainKey: OpenClaw's loader forces it to "main" (the oracle applies that too)
        out["session"] = {k: v for k, v in (
            ("scope", draw(st.sampled_from([None, "global", "per-sender"]))),
            ("mainKey", draw(st.sampled_from([None, "main", "boss"])))) if v is not None}
    return out


SANDBOX_BLOCKS = shared.SANDBOX_BLOCKS


@st.composite
def plugin_tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Which plugin tools exist and which of them are optional."""
    out = []
    for pid, names in PLUGINS.items():
        if draw(st.integers(0, 3)) > 0:
            out.append({"id": pid, "tools": [{"name": n, "optional": draw(st.integers(0, 2)) == 0}
                                             for n in names]})
    return out


def _opt(*values: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from([None, *values])


# Every key is drawn (None = not passed); values cluster on what the configs declare. toolc's
# own `spawn_depth` keyword is left out: OpenClaw reads that from its session store.
contexts = st.fixed_dictionaries({
    "agent_id": _opt("main", "a1", "A1 ", "a2", "nobody", "", "a 1"),
    "session_key": _opt(
        "agent:a1:telegram:group:g1", "agent:main:whatsapp:group:G1:topic:9",
        "agent:a2:subagent:x", "agent:main:subagent:a:subagent:b", "subagent:x",
        "agent:a1:telegram:dm:5", "telegram:group:g2", "agent:A2:telegram:channel:g1:thread:1",
        "agent:nobody:whatsapp:group:*", "agent:a1:subagent:x:telegram:group:g1",
        "agent:main:telegram:group:-100:topic:7", "Agent:a1:telegram:Group:g1",
        "irc:group:G1", "agent::a1:telegram:group:-100", "agent:main:subagent:y",
        "agent:main:slack:channel:c1", "agent:a1:discord:channel:g1:thread:2",
        "agent:main:discord:channel:111", "agent:main:imsg:group:g1",
        "agent:main:feishu:group:g1", "agent:main:msteams:channel:g1",
        # main sessions and their aliases (sandbox mode non-main), as written and not
        "main", "agent:main:main", "agent:a1:main", "agent:a2:main", "global", "MAIN",
        "Agent:a1:main", " agent:a1:main ", "agent:A1:main", "agent:nobody:main",
        "agent:a1:x", "agent:a 1:main", "boss", "agent:main:boss", "agent:a1:main\x1f",
        "\ufeffagent:a1:main"),
    "spawned_by": _opt("agent:main:telegram:group:g1", "agent:a2:whatsapp:group:G1:thread:4",
                       "telegram:group:-100:topic:7", "agent:main:irc:channel:g1",
                       "agent:main:telegram:dm:5"),
    "model_provider": _opt("openai", "anthropic", "google", "openai-codex", "OpenAI ",
                           "openrouter"),
    "model_id": _opt(*MODELS, "x/y"),
    "message_provider": _opt(*CHANNELS, *KEYED_CHANNELS, *KEYED_CHANNELS, "Telegram",
                             "voice", "internet-relay-chat", "gchat", "bb", "Slack"),
    "account_id": _opt("work", "WORK", "home", "default", " wo rk "),
    "group_id": _opt("g1", "G1", "g2", "*", "zzz", "-100", "-100:topic:7", "-100:7", " g1 ",
                     "C1", "c1", "general", "111", " C1"),
    "group_space": _opt("111", "My Guild", "my-guild", "#my_guild", "G2", "g2", "other"),
    "group_channel": _opt("#general", "General", "general", "Dev Ops", "#dev-ops", "c1",
                          "#C1", "g1", "x", " #general"),
    "sender_id": _opt("42", "@42", "7", " 42 ", "alice"),
    "sender_e164": _opt("+1555", "+1666"),
    "sender_username": _opt("alice", "@Alice", "42"),
    "sender_name": _opt("Bob", "42", "alice"),
    "sender_is_owner": _opt(True, False),
    "sandboxed": _opt(True, False),
}).map(lambda d: {k: v for k, v in d.items() if v is not None})

"""Random OpenClaw 2026.9 configs and request contexts (the shapes a 2026.9.6 gateway reads).

Beside what ``strategies`` draws for 2026.3, a config here may carry: the keyed roster
``agents.entries`` or the legacy ``agents.list`` (migrated by the loader), ``default: true``
agents and ``agents.ownership``, per-agent and global ``tools.toolsBySender`` with typed keys
(``channel:<channel>:<id>``, ``id:``, ``username:``, ``name:``, ``e164:``, ``*`` and legacy
untyped keys), ``tools.sandbox.tools.alsoAllow``, ``tools.exec.mode`` and ``tools.exec.applyPatch``
(global and per agent), ``tools.subagents.tools`` with ``alsoAllow``,
``agents.defaults.subagents.maxSpawnDepth``, ``experimental.localModelLean`` (per agent and
default), ``byProvider`` keys with model ids containing ``/``, plugin-only allowlists, optional
plugin tools, plugin slots, and ``groups`` maps (with per-group ``toolsBySender``) for every
channel whose config schema accepts them in 2026.9.6, Telegram (the one channel with its own
group resolver) among them. A few draws are configs the release's loader refuses (``allow`` beside
``alsoAllow`` in one scope, ``agents.defaults.tools``, a multi-agent roster without an owner): the
oracle answers those with ``InvalidConfig``.

Contexts add ``sender_is_owner`` True/False/None, requests without an agent id, cron session keys,
and group ids with and without a session key that names the group.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Plugin stand-ins beside the bundled plugins the oracle always has (browser, canvas,
# memory-core, ...): `lobster` names one of its tools after itself.
PLUGINS: dict[str, list[str]] = {"lobster": ["lobster", "lobster_status"],
                                 "voice_pack": ["voice_call", "voice_admin"],
                                 "search_kit": ["code_grep"]}
CORE9 = ["ls", "read", "write", "edit", "apply_patch", "exec", "process", "web_search",
         "web_fetch", "memory_search", "memory_get", "sessions", "sessions_list",
         "sessions_history", "sessions_search", "sessions_send", "sessions_spawn",
         "sessions_yield", "subagents", "session_status", "conversations_list",
         "conversations_send", "conversations_turn", "browser", "canvas", "screen", "terminal",
         "portal", "message", "automations", "gateway", "plugins", "openclaw", "nodes",
         "computer", "mobile_ui", "agents_list", "progress_card", "view_image", "tts", "pdf",
         "image_generate", "secrets", "theme"]
OLD_NAMES = ["cron", "image", "whatsapp_login", "bash"]
BUNDLED_PLUGIN_TOOLS = ["file_fetch", "dir_list", "talk_voice", "node_inference", "intent",
                        "workboard_list", "llm-task", "browser", "canvas"]
BUNDLED_PLUGIN_IDS = ["browser", "canvas", "memory-core", "file-transfer", "workboard",
                      "llm-task", "talk-voice", "ollama"]
GROUPS = ["group:fs", "group:runtime", "group:web", "group:memory", "group:sessions", "group:ui",
          "group:messaging", "group:automation", "group:nodes", "group:agents", "group:media",
          "group:openclaw", "group:plugins"]
ENTRY_POOL = [*CORE9, *OLD_NAMES, *GROUPS, *PLUGINS, *(t for ts in PLUGINS.values() for t in ts),
              *BUNDLED_PLUGIN_TOOLS, *BUNDLED_PLUGIN_IDS, "*", "web_*", "sess*", "*_get",
              "workboard_*", " Exec ", "apply-patch", "unknown_tool", "GROUP:FS"]
PROFILES = ["minimal", "coding", "messaging", "full"]
BP_KEYS = ["openai", "anthropic", "google", "openai-codex", "openai/gpt-5", "gpt-5",
           "anthropic/claude-x", "openrouter", "openrouter/anthropic/claude-x", "ollama/llama3"]
# channels whose 2026.9.6 config schema accepts `groups.<id>.tools` (telegram has its own
# resolver; the others go through the generic resolveChannelGroupToolsPolicy)
GROUP_CHANNELS = ["telegram", "whatsapp", "irc", "signal", "imessage", "feishu", "matrix"]
# what each channel's 2026.9.6 schema refuses inside `groups.<id>` (probed with the release's
# loader: `loadconfig`); googlechat, mattermost and line take no `tools` there at all
NO_GROUP_SENDERS = {"feishu", "matrix"}
NO_GROUP_ALSO_ALLOW = {"feishu"}
KEYED_CHANNELS = ["slack", "discord"]
GROUP_IDS = ["-100", "-100:topic:7", "g1", "G1", "*", "-100:topic:7:sender:42"]
MODELS = ["gpt-5", "GPT-5", "openai/gpt-5", "o3", "claude-x", "anthropic/claude-x",
          "openrouter/anthropic/claude-x"]
SENDER_KEYS = ["channel:telegram:42", "channel:whatsapp:+1555", "channel:Telegram:@42",
               "id:42", "42", "@42", "username:@alice", "username:42", "name:Bob",
               "e164:+1555", "*", "channel:irc:alice"]
AGENT_IDS = ["main", "a1", "a2"]
EXEC_MODES = ["deny", "allowlist", "ask", "auto", "full"]


def rare(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws. Hypothesis favours the ends of an integer range, so the
    rare value is the middle one, not 0."""
    return st.integers(0, n - 1).map(lambda i: i == n // 2)


@st.composite
def policy_block(draw: st.DrawFn, *, profile: bool = False, invalid: bool = False
                 ) -> dict[str, Any]:
    """allow or alsoAllow, deny. 2026.9 refuses allow beside alsoAllow in one scope: with
    ``invalid``, 1 draw in 15 tries it."""
    block: dict[str, Any] = {}
    widen = draw(st.sampled_from(["allow", "alsoAllow", None, None]))
    if widen is not None:
        block[widen] = draw(st.lists(st.sampled_from(ENTRY_POOL), max_size=4))
    if invalid and widen is not None and draw(rare(15)):
        other = "alsoAllow" if widen == "allow" else "allow"
        block[other] = draw(st.lists(st.sampled_from(ENTRY_POOL), min_size=1, max_size=2))
    if draw(st.booleans()):
        block["deny"] = draw(st.lists(st.sampled_from(ENTRY_POOL), max_size=3))
    if profile and draw(st.booleans()):
        block["profile"] = draw(st.sampled_from(PROFILES))
    return block


@st.composite
def by_provider(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(BP_KEYS), max_size=3, unique_by=str.lower))
    return {k: draw(policy_block(profile=True)) for k in keys}


@st.composite
def senders(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(SENDER_KEYS), min_size=1, max_size=3, unique=True))
    return {k: draw(policy_block()) for k in keys}


@st.composite
def exec_block(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        patch: dict[str, Any] = {}
        enabled = draw(st.sampled_from([None, True, False]))
        if enabled is not None:
            patch["enabled"] = enabled
        if draw(st.booleans()):
            patch["allowModels"] = draw(st.lists(st.sampled_from(MODELS), max_size=2))
        out["applyPatch"] = patch
    if draw(st.booleans()):
        out["mode"] = draw(st.sampled_from(EXEC_MODES))
    return out


SANDBOX_MODES = st.sampled_from([{}, {"mode": "off"}, {"mode": "non-main"}, {"mode": "all"}])


@st.composite
def sandbox_tools(draw: st.DrawFn) -> dict[str, Any]:
    return {"tools": draw(policy_block())}


@st.composite
def agent_block(draw: st.DrawFn) -> dict[str, Any]:
    agent: dict[str, Any] = {}
    if draw(st.integers(0, 4)) > 0:
        tools = draw(policy_block(profile=True))
        if draw(st.integers(0, 2)) == 0:
            tools["byProvider"] = draw(by_provider())
        if draw(st.integers(0, 2)) == 0:
            tools["sandbox"] = draw(sandbox_tools())
        if draw(st.integers(0, 3)) == 0:
            tools["exec"] = draw(exec_block())
        if draw(st.integers(0, 2)) == 0:
            tools["toolsBySender"] = draw(senders())
        agent["tools"] = tools
    if draw(st.integers(0, 2)) == 0:
        agent["sandbox"] = draw(SANDBOX_MODES)
    if draw(st.integers(0, 5)) == 0:
        agent["experimental"] = {"localModelLean": draw(st.booleans())}
    return agent


@st.composite
def agents(draw: st.DrawFn) -> dict[str, Any]:
    """The roster as agents.entries (keyed) or agents.list (legacy), defaults, ownership."""
    ids = draw(st.lists(st.sampled_from(AGENT_IDS), max_size=3, unique=True))
    roster = {aid: draw(agent_block()) for aid in ids}
    if len(ids) > 1:
        # 2026.9.6 refuses a multi-agent roster without an owner: mostly give it one
        owner = ("none" if draw(rare(8))
                 else draw(st.sampled_from(["default", "ownership"])))
        if owner == "default":
            roster[draw(st.sampled_from(ids))]["default"] = True
        elif owner == "ownership":
            pass
    else:
        owner = "single"
        if ids and draw(st.integers(0, 3)) == 0:
            roster[ids[0]]["default"] = draw(st.booleans())
    defaults: dict[str, Any] = {}
    if draw(st.integers(0, 3)) > 0:
        # 2026.9.6 accepts 1..5; 1 draw in 30 tries 6 (refused)
        depth = 6 if draw(rare(30)) else draw(st.integers(1, 5))
        defaults["subagents"] = {"maxSpawnDepth": depth}
    if draw(st.booleans()):
        defaults["sandbox"] = draw(SANDBOX_MODES)
    if draw(st.integers(0, 5)) == 0:
        defaults["experimental"] = {"localModelLean": True}
    if draw(rare(30)):
        defaults["tools"] = draw(policy_block())  # the loader refuses this key
    out: dict[str, Any] = {"defaults": defaults}
    if owner == "ownership":
        out["ownership"] = "explicit"
    if draw(st.booleans()):
        out["entries"] = roster
    else:
        out["list"] = [{"id": aid, **block} for aid, block in roster.items()]
    return out


@st.composite
def group_map(draw: st.DrawFn, channel: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for gid in draw(st.lists(st.sampled_from(GROUP_IDS), max_size=3, unique=True)):
        node: dict[str, Any] = {}
        if draw(st.integers(0, 3)) > 0:
            node["tools"] = draw(policy_block())
            if channel in NO_GROUP_ALSO_ALLOW:
                node["tools"].pop("alsoAllow", None)
        if channel not in NO_GROUP_SENDERS and draw(st.integers(0, 3)) == 0:
            node["toolsBySender"] = draw(senders())
        out[gid] = node
    return out


@st.composite
def channels(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ch in draw(st.lists(st.sampled_from(GROUP_CHANNELS), max_size=3, unique=True)):
        c: dict[str, Any] = {}
        if draw(st.integers(0, 3)) > 0:
            c["groups"] = draw(group_map(ch))
        if draw(st.integers(0, 2)) == 0:
            c["accounts"] = {acc: ({"groups": draw(group_map(ch))} if draw(st.booleans()) else {})
                             for acc in draw(st.lists(st.sampled_from(["work", "home"]),
                                                      min_size=1, max_size=2, unique=True))}
        out[ch] = c
    for ch in draw(st.lists(st.sampled_from(KEYED_CHANNELS), max_size=1)):
        policy = {"tools": draw(policy_block())}
        out[ch] = ({"channels": {"C1": policy, "general": policy}} if ch == "slack"
                   else {"guilds": {"111": {"channels": {"g1": policy}}}})
    return out


@st.composite
def plugins_block(draw: st.DrawFn) -> dict[str, Any]:
    ids = [*PLUGINS, *BUNDLED_PLUGIN_IDS]
    out: dict[str, Any] = {"entries": {p: {"enabled": draw(st.integers(0, 4)) > 0}
                                       for p in draw(st.lists(st.sampled_from(ids),
                                                              max_size=2, unique=True))}}
    if draw(st.integers(0, 5)) == 0:
        out["allow"] = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True))
    if draw(st.integers(0, 7)) == 0:
        out["deny"] = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True))
    if draw(st.integers(0, 7)) == 0:
        out["slots"] = {"memory": draw(st.sampled_from(["none", "memory-core"]))}
    if draw(st.integers(0, 15)) == 0:
        out["enabled"] = False
    return out


@st.composite
def config(draw: st.DrawFn) -> dict[str, Any]:
    """One OpenClaw 2026.9 config: tools, agents, channels, plugins, session."""
    tools: dict[str, Any] = draw(policy_block(profile=True, invalid=True))
    if draw(st.integers(0, 4)) == 0:
        # a plugin-only allowlist: 2026.9 restricts with it (2026.3 stripped it)
        tools["allow"] = draw(st.lists(st.sampled_from([*PLUGINS, "group:plugins",
                                                        "lobster_status", "workboard_*"]),
                                       min_size=1, max_size=2))
        tools.pop("alsoAllow", None)
    if draw(st.booleans()):
        tools["byProvider"] = draw(by_provider())
    if draw(st.booleans()):
        tools["sandbox"] = draw(sandbox_tools())
    if draw(st.booleans()):
        tools["subagents"] = {"tools": draw(policy_block())}
    if draw(st.integers(0, 2)) > 0:
        tools["exec"] = draw(exec_block())
    if draw(st.integers(0, 2)) == 0:
        tools["toolsBySender"] = draw(senders())
    out: dict[str, Any] = {"tools": tools, "agents": draw(agents()),
                           "channels": draw(channels()), "plugins": draw(plugins_block())}
    if draw(st.integers(0, 2)) == 0:
        out["session"] = {k: v for k, v in (
            ("scope", draw(st.sampled_from([None, "global", "per-sender"]))),
            ("mainKey", draw(st.sampled_from([None, "main", "boss"])))) if v is not None}
    return out


@st.composite
def plugin_tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Which stand-in plugin tools exist and which of them are optional."""
    out = []
    for pid, names in PLUGINS.items():
        if draw(st.integers(0, 3)) > 0:
            out.append({"id": pid, "tools": [{"name": n, "optional": draw(st.integers(0, 2)) == 0}
                                             for n in names]})
    return out


def _opt(*values: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from([None, *values])


SESSION_KEYS = [
    "agent:a1:telegram:group:-100", "agent:main:telegram:group:-100:topic:7",
    "agent:a1:telegram:group:-100:topic:7:sender:42", "agent:main:whatsapp:group:G1",
    "agent:a2:subagent:x", "agent:main:subagent:a:subagent:b",
    "agent:main:subagent:a:subagent:b:subagent:c:subagent:d:subagent:e", "subagent:x",
    "agent:a1:telegram:direct:5", "telegram:group:g1", "agent:a1:irc:channel:g1",
    "agent:main:signal:group:g1", "agent:main:imessage:group:g1", "agent:main:feishu:group:g1",
    "agent:main:matrix:channel:g1", "agent:main:slack:channel:c1",
    "agent:main:discord:channel:g1", "agent:a1:subagent:x:telegram:group:-100",
    "agent:main:cron:job1", "cron:job1", "agent:nobody:whatsapp:group:g1",
    "main", "agent:main:main", "agent:a1:main", "agent:a2:main", "global", "Agent:a1:main",
    "agent:a1:x", "boss", "agent:main:boss"]

# Every key is drawn (None = not passed); values cluster on what the configs declare.
contexts = st.fixed_dictionaries({
    "agent_id": _opt(None, None, "main", "a1", "A1 ", "a2", "nobody"),
    "session_key": _opt(*SESSION_KEYS),
    "spawned_by": _opt("agent:main:telegram:group:-100", "agent:a2:whatsapp:group:G1",
                       "agent:main:irc:channel:g1", "agent:main:telegram:direct:5"),
    "model_provider": _opt("openai", "anthropic", "google", "openai-codex", "OpenAI ",
                           "openrouter", "ollama"),
    "model_id": _opt(*MODELS, "x/y", "llama3"),
    "message_provider": _opt(*GROUP_CHANNELS, *KEYED_CHANNELS, "Telegram", "voice", "node",
                             "webchat", "discord-voice"),
    "account_id": _opt("work", "WORK", "home", "default"),
    "group_id": _opt("g1", "G1", "-100", "-100:topic:7", "zzz", "C1", "111", " g1 "),
    "group_space": _opt("111", "my-guild", "other"),
    "group_channel": _opt("#general", "general", "c1", "g1"),
    "sender_id": _opt("42", "@42", "+1555", "alice"),
    "sender_e164": _opt("+1555", "+1666"),
    "sender_username": _opt("alice", "@Alice", "42"),
    "sender_name": _opt("Bob", "alice"),
    "sender_is_owner": _opt(True, False),
    "sandboxed": _opt(True, False, None, None),
}).map(lambda d: {k: v for k, v in d.items() if v is not None})


@st.composite
def aimed_contexts(draw: st.DrawFn, cfg: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """``n`` contexts, half of them aimed at a channel the config declares: its group ids with
    and without a session key that names the group, so the trusted-group rule is exercised."""
    out = []
    declared = sorted(cfg.get("channels", {}))
    for _ in range(n):
        ctx = draw(contexts)
        if declared and draw(st.booleans()):
            name = draw(st.sampled_from(declared))
            channel = cfg["channels"][name]
            keys = sorted({k for m in [channel.get("groups") or {},
                                       *[(a or {}).get("groups") or {}
                                         for a in (channel.get("accounts") or {}).values()]]
                           for k in m if k != "*"}) or ["g1"]
            gid = draw(st.sampled_from(keys))
            ctx = {**ctx, "message_provider": name, "group_id": gid}
            how = draw(st.sampled_from(["named", "named", "unnamed", "other"]))
            agent = ctx.get("agent_id", "main").strip().lower() or "main"
            if how == "named":
                ctx["session_key"] = f"agent:{agent}:{name}:group:{gid}"
            elif how == "unnamed":
                ctx.pop("session_key", None)
            else:
                ctx["session_key"] = f"agent:{agent}:{name}:group:other"
            if draw(st.integers(0, 2)) == 0:
                ctx["account_id"] = draw(st.sampled_from(["work", "home", "default"]))
        out.append(ctx)
    return out

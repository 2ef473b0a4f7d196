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

from conformance import strategies as strategies3

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


# -- messages in (routing mode: ``python -m conformance --openclaw 2026.9 --routing``) --------
# A config there also carries route `bindings` with every tier resolveAgentRoute has (peer,
# the thread's parent peer, a peer wildcard, guild with roles, guild, team, account: specific,
# the default one, "*"; channel) and per-binding `session` overrides, and `session.dmScope`,
# `groupScope` and `identityLinks`; the messages are drawn mostly from what the bindings name,
# so every tier is reached, with the near misses around it (case, other kind, other account).
ROUTE_CHANNELS = ["telegram", "whatsapp", "signal", "matrix", "discord", "slack", "msteams",
                  "irc"]
# accountId as written in a binding: absent (the default account only), "*" (every account)
ROUTE_ACCOUNTS = [None, None, "*", "work", "Work Acc!", "default", "WORK", "home", "", " * "]
PEER_KINDS = ["direct", "group", "channel"]
# chat ids: case (lowercased in keys except Signal groups and Matrix rooms), topics, Matrix
# room ids, ids that look like numbers, a wildcard
PEER_IDS = ["-100", "-100:topic:7", "G1", "g1", "AbC", "!Room:Example.org", "42", "Bob",
            "alice", "C1"]
BINDING_PEER_IDS = [*PEER_IDS, " g1 "]
GUILDS = ["111", "222"]
TEAMS = ["t1", "T1"]
ROLES = ["r1", "r2", "r3"]
DM_SCOPES = ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]
GROUP_SCOPES = ["main", "per-group"]
# identityLinks: canonical name -> `id` or `channel:id`, compared case-insensitively
IDENTITY_LINKS = [{"bob": ["telegram:42", "Bob"]}, {"alice": ["ALICE", "signal:AbC"]},
                  {"bob": ["42"], "carol": ["whatsapp:bob"]}]
MESSAGE_ACCOUNTS = ["work", "Work Acc!", "WORK", "default", "home", " work ", "work-acc"]


def _roster_ids(cfg: dict[str, Any]) -> list[str]:
    agents_ = cfg.get("agents") or {}
    if "entries" in agents_:
        return list(agents_["entries"])
    return [a["id"] for a in agents_.get("list") or ()]


@st.composite
def binding(draw: st.DrawFn, roster: list[str], declared: list[str], release: str = "2026.9"
            ) -> dict[str, Any]:
    """One route binding: one tier's constraints, sometimes with an extra condition (roles
    without a guild, a guild on a peer binding) and (2026.9) a session override. (A peer id
    "*" is a wildcard of its kind in 2026.9.6 and a chat named "*" in 2026.3.2.)"""
    ids = roster or ["main"]
    agent = draw(st.sampled_from(ids))
    if draw(st.integers(0, 5)) == 0:
        agent = agent.upper()  # agent ids in bindings compare case-insensitively
    elif draw(st.integers(0, 7).map(lambda i: i == 0) if release == "2026.9" else rare(30)):
        # main routes to main in 2026.9.6 whatever the roster; in 2026.3.2 an undeclared main
        # goes to the default agent (toolc refuses it, TC170: kept rare there)
        agent = "main"
    # half on a channel the config declares (its groups' policies then apply to the route)
    channels_ = declared if declared and draw(st.booleans()) else ROUTE_CHANNELS
    match: dict[str, Any] = {"channel": draw(st.sampled_from(channels_))}
    if draw(st.integers(0, 9)) == 0:
        match["channel"] = match["channel"].capitalize()
    account = draw(st.sampled_from(ROUTE_ACCOUNTS))
    if account is not None:
        match["accountId"] = account
    tier = draw(st.sampled_from(["peer", "peer", "wildcard", "guild", "guild+roles", "team",
                                 "account", "channel"]))
    if tier in ("peer", "wildcard"):
        pid = "*" if tier == "wildcard" else draw(st.sampled_from(BINDING_PEER_IDS))
        match["peer"] = {"kind": draw(st.sampled_from(PEER_KINDS)), "id": pid}
    if tier in ("guild", "guild+roles") or (tier == "peer" and draw(rare(6))):
        match["guildId"] = draw(st.sampled_from(GUILDS))
    if tier == "guild+roles" or draw(rare(12)):
        match["roles"] = draw(st.lists(st.sampled_from(ROLES), min_size=1, max_size=2,
                                       unique=True))
    if tier == "team":
        match["teamId"] = draw(st.sampled_from(TEAMS))
    if tier == "channel":
        match["accountId"] = "*"
    out: dict[str, Any] = {"agentId": agent, "match": match}
    if release == "2026.9" and draw(st.integers(0, 3)) == 0:
        session = {k: v for k, v in (("dmScope", draw(_opt(*DM_SCOPES))),
                                     ("groupScope", draw(_opt(*GROUP_SCOPES)))) if v is not None}
        out["session"] = session
    if draw(rare(10)):
        out["type"] = "route"
    if draw(rare(10)):
        out["comment"] = "drawn"
    return out


# The rosters that decide a message's default agent: none (main), a sole agent (with or without
# a default: true marker, which the loader drops), several with one default (the loader adds
# channel-wide bindings to it), ownership explicit (no default: unmatched messages are refused).
# Rarely, what the loader refuses: explicit beside a default marker, several without an owner.
ROSTER_SHAPES = ["none", "sole", "sole default", "default", "default", "default", "explicit",
                 "explicit"]
# 2026.3.2 has no ownership: several agents without a marker make the first the default
ROSTER_SHAPES_3 = ["none", "sole", "sole default", "default", "default", "ownerless"]


def _shape_roster(draw: st.DrawFn, agents_: dict[str, Any], release: str) -> None:
    """Reshape the drawn roster (its agents' blocks kept) into one of ``ROSTER_SHAPES``."""
    shape = draw(st.sampled_from(ROSTER_SHAPES if release == "2026.9" else ROSTER_SHAPES_3))
    if release == "2026.9" and draw(rare(12)):
        shape = draw(st.sampled_from(["explicit default", "ownerless"]))
    keyed = "entries" in agents_
    blocks = dict(agents_["entries"]) if keyed else {a["id"]: {k: v for k, v in a.items()
                                                             if k != "id"}
                                                    for a in agents_.get("list") or ()}
    count = {"none": 0, "sole": 1, "sole default": 1}.get(shape)
    if count is None:
        count = draw(st.integers(2, 3))
    ids = draw(st.permutations(AGENT_IDS))[:count]
    roster = {aid: {k: v for k, v in blocks.get(aid, {}).items() if k != "default"}
              for aid in ids}
    if shape in ("sole default", "default", "explicit default"):
        roster[draw(st.sampled_from(ids))]["default"] = True
    agents_.pop("ownership", None)
    if shape.startswith("explicit"):
        agents_["ownership"] = "explicit"
    agents_.pop("entries", None)
    agents_.pop("list", None)
    if keyed:
        agents_["entries"] = roster
    else:
        agents_["list"] = [{"id": aid, **block} for aid, block in roster.items()]


@st.composite
def routing_config(draw: st.DrawFn, release: str = "2026.9") -> dict[str, Any]:
    """A config (2026.9: ``config``, 2026.3: ``strategies.config``) with route bindings and
    the session settings that shape the session key; the roster decides the default agent (a
    ``default: true`` agent, a sole agent, ``ownership: explicit`` without one, or none)."""
    cfg = draw(config() if release == "2026.9" else strategies3.config())
    # refused by the loader, as the tool-policy mode checks: here it would only hide the route
    cfg["agents"].get("defaults", {}).pop("tools", None)
    _shape_roster(draw, cfg["agents"], release)
    roster = _roster_ids(cfg)
    for name, gid in [(n, g) for n, _, g in _configured_groups(cfg)]:
        node = cfg["channels"][name]["groups"].get(gid) if gid in (
            cfg["channels"][name].get("groups") or {}) else None
        if node is not None and not node.get("tools") and draw(st.booleans()):
            # a policy for the group its routed runs meet (most drawn groups have none)
            node["tools"] = {"deny": [draw(st.sampled_from(["exec", "read", "group:fs",
                                                            "message", "sessions_send"]))]}
    declared = sorted(cfg.get("channels") or {})
    cfg["bindings"] = draw(st.lists(binding(roster, declared, release),
                                    min_size=0 if draw(rare(8)) else 1,
                                    max_size=7))
    if draw(rare(25)):
        # an agent the roster does not declare (the loader refuses it; an empty roster too)
        cfg["bindings"].append({"agentId": draw(st.sampled_from(["nobody", "a1"])),
                                "match": {"channel": "telegram"}})
    session = dict(cfg.get("session") or {})
    if draw(st.booleans()):
        session["dmScope"] = draw(st.sampled_from(DM_SCOPES))
    if release == "2026.9" and draw(st.integers(0, 2)) == 0:
        session["groupScope"] = draw(st.sampled_from([*GROUP_SCOPES, "per-group"]))
    if draw(st.integers(0, 2)) == 0:
        session["identityLinks"] = draw(st.sampled_from(IDENTITY_LINKS))
    if session:
        cfg["session"] = session
    return cfg


@st.composite
def _peer_near(draw: st.DrawFn, kind: str, pid: str) -> list[str]:
    """A binding's peer, or one near it (another kind, another case, another id)."""
    how = draw(st.sampled_from(["same", "same", "kind", "case", "other"]))
    if pid == "*" or how == "other":
        pid = draw(st.sampled_from(PEER_IDS))
    if how == "kind":
        kind = draw(st.sampled_from([*PEER_KINDS, "dm"]))
    elif how == "case":
        pid = pid.swapcase()
    return [kind, pid]


@st.composite
def message(draw: st.DrawFn, cfg: dict[str, Any], release: str = "2026.9") -> dict[str, Any]:
    """One inbound message: aimed at one of the config's bindings (its channel, account,
    peer, guild, team, roles; often a near miss), at one of its configured groups (so the
    routed run meets the group's policy), or drawn freely; with a sender and the model of
    the run."""
    aim = draw(st.sampled_from(["binding", "binding", "group", "group", "free"]))
    if aim == "binding" and cfg.get("bindings"):
        msg = draw(_at_binding(cfg))
    elif aim == "group" and _configured_groups(cfg):
        msg = draw(_at_group(cfg))
    else:
        msg = draw(_free(cfg))
    if release == "2026.9":  # route inputs 2026.3.2 does not have
        if draw(rare(12)):
            msg["default_agent_id"] = draw(st.sampled_from([*_roster_ids(cfg), "main", "A1",
                                                            "nobody"]))
        if draw(rare(12)):
            msg["dm_scope"] = draw(st.sampled_from(DM_SCOPES))
        if draw(rare(12)):
            msg["group_scope"] = draw(st.sampled_from(GROUP_SCOPES))
    return {**msg, **draw(message_sender)}


@st.composite
def _at_binding(draw: st.DrawFn, cfg: dict[str, Any]) -> dict[str, Any]:
    match = draw(st.sampled_from(cfg["bindings"]))["match"]
    msg: dict[str, Any] = {"channel": match["channel"]}
    account = match.get("accountId")
    if account not in (None, "*") and draw(st.integers(0, 3)) > 0:
        msg["account_id"] = account
    elif draw(st.booleans()):
        msg["account_id"] = draw(st.sampled_from(MESSAGE_ACCOUNTS))
    peer = match.get("peer")
    if peer is not None and draw(st.integers(0, 3)) > 0:
        near = draw(_peer_near(peer["kind"], peer["id"]))
        if draw(st.integers(0, 2)) == 0:  # a thread whose parent is the bound chat
            msg["parent_peer"] = near
            near = [near[0], draw(st.sampled_from(PEER_IDS))]
        msg["peer"] = near
    elif draw(st.integers(0, 3)) > 0:
        msg["peer"] = [draw(st.sampled_from(PEER_KINDS)), draw(st.sampled_from(PEER_IDS))]
    if "guildId" in match and draw(st.integers(0, 3)) > 0:
        msg["guild_id"] = match["guildId"]
    if "teamId" in match and draw(st.integers(0, 3)) > 0:
        team = match["teamId"]
        msg["team_id"] = team if draw(st.integers(0, 3)) else team.swapcase()
    if match.get("roles") and draw(st.integers(0, 2)) > 0:
        msg["member_role_ids"] = [draw(st.sampled_from(match["roles"]))]
    return msg


def _configured_groups(cfg: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """(channel, account or None, group id) of every group the config's channels name."""
    out = []
    for name, channel in sorted((cfg.get("channels") or {}).items()):
        out += [(name, None, g) for g in channel.get("groups") or {} if g != "*"]
        for account, block in sorted((channel.get("accounts") or {}).items()):
            out += [(name, account, g) for g in (block or {}).get("groups") or {} if g != "*"]
    return out


@st.composite
def _at_group(draw: st.DrawFn, cfg: dict[str, Any]) -> dict[str, Any]:
    channel, account, gid = draw(st.sampled_from(_configured_groups(cfg)))
    msg: dict[str, Any] = {"channel": channel,
                           "peer": [draw(st.sampled_from(["group", "group", "channel"])), gid]}
    if account is not None and draw(st.integers(0, 3)) > 0:
        msg["account_id"] = account
    if draw(st.integers(0, 4)) == 0:
        msg["parent_peer"] = ["group", gid]
        msg["peer"] = ["group", draw(st.sampled_from(PEER_IDS))]
    return msg


@st.composite
def _free(draw: st.DrawFn, cfg: dict[str, Any]) -> dict[str, Any]:
    declared = sorted(cfg.get("channels") or {})
    msg: dict[str, Any] = {"channel": draw(st.sampled_from([*declared, *ROUTE_CHANNELS,
                                                             "Telegram"]))}
    if draw(st.booleans()):
        msg["account_id"] = draw(st.sampled_from(MESSAGE_ACCOUNTS))
    if draw(st.integers(0, 4)) > 0:
        msg["peer"] = [draw(st.sampled_from([*PEER_KINDS, "dm"])),
                       draw(st.sampled_from([*PEER_IDS, " g1 "]))]
    if "peer" in msg and draw(st.integers(0, 3)) == 0:
        msg["parent_peer"] = [draw(st.sampled_from(PEER_KINDS)),
                              draw(st.sampled_from(PEER_IDS))]
    if draw(st.integers(0, 3)) == 0:
        msg["guild_id"] = draw(st.sampled_from(GUILDS))
    if draw(st.integers(0, 5)) == 0:
        msg["team_id"] = draw(st.sampled_from(TEAMS))
    if draw(st.integers(0, 3)) == 0:
        msg["member_role_ids"] = draw(st.lists(st.sampled_from(ROLES), max_size=2,
                                               unique=True))
    return msg


message_sender = st.fixed_dictionaries({
    "sender_id": _opt("42", "@42", "+1555", "alice", "Bob"),
    "sender_e164": _opt("+1555"),
    "sender_username": _opt("alice", "@Alice"),
    "sender_name": _opt("Bob"),
    "sender_is_owner": _opt(True, False),
    "model_provider": _opt("openai", "anthropic", "ollama"),
    "model_id": _opt("gpt-5", "claude-x", "llama3"),
    "sandboxed": _opt(True, False, None, None),
}).map(lambda d: {k: v for k, v in d.items() if v is not None})


def messages(cfg: dict[str, Any], n: int, release: str = "2026.9"
             ) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(message(cfg, release), min_size=n, max_size=n)

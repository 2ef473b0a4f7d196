"""Hypothesis strategies: random (valid) definitions and random request contexts."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

CORE = ["read", "write", "edit", "apply_patch", "exec", "process", "web_search", "web_fetch",
        "sessions_list", "sessions_send", "session_status", "memory_get", "message", "cron",
        "gateway", "browser", "image"]
# plug_b names one of its own tools after itself (OpenClaw's `lobster`: allowed)
PLUGIN_TOOLS = {"plug_a": ["pa_one", "pa_two"], "plug_b": ["pb_one", "plug_b"]}
SECTIONS = ["fs", "runtime", "web", "ui", "sessions"]
PROVIDERS = ["openai", "anthropic", "google", "openai-codex"]
MODELS = ["gpt-5", "openai/gpt-5", "claude", "anthropic/claude", "o3"]
CHANNELS = ["telegram", "whatsapp", "irc"]
KEYED_CHANNELS = ["slack", "discord"]  # channels whose rule tries several keys
ENTRY_POOL = [*CORE, "pa_one", "pa_two", "pb_one", "plug_a", "plug_b", "group:plugins", "*",
              "web_*", "sess*", "*_get", "bash", " Exec ", "apply-patch", "wat", "group:fs",
              "group:runtime", "group:web", "group:g1", "group:g2", "group:nope", "",
              "whatsapp_login"]
PROFILES = ["minimal", "coding", "messaging", "full", "custom"]
BP_KEYS = ["openai", "anthropic", "openai/gpt-5", "anthropic/claude", "OpenAI", "gpt-5",
           "openai/o3"]

GROUP_IDS = ["g1", "G1", "g2", "*", "-100", "-100:topic:7"]
# Slack channel keys and Discord guild/channel keys: ids, names, "#" names and slugs
CHANNEL_KEYS = ["C1", "c1", "#general", "general", "dev-ops", "*", "g1"]
GUILD_KEYS = ["111", "my-guild", "*", "G2"]
GUILD_SLUGS = ["My Guild", "#Other", "111"]
SENDER_KEYS = ["id:42", "42", "@42", "ID:42", "username:@alice", "username:42", "name:Bob",
               "name:42", "e164:+1555", "*"]

entries = st.lists(st.sampled_from(ENTRY_POOL), max_size=4)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def policy_block(draw: st.DrawFn, *, profile: bool = False, pool: list[str] = ENTRY_POOL,
                 profiles: list[str] = PROFILES) -> dict[str, Any]:
    block: dict[str, Any] = {}
    for key in ("allow", "alsoAllow", "deny"):
        value = draw(maybe(st.lists(st.sampled_from(pool), max_size=4)))
        if value is not None:
            block[key] = value
    if profile and draw(st.booleans()):
        block["profile"] = draw(st.sampled_from(profiles))
    return block


@st.composite
def by_provider(draw: st.DrawFn, *, keys: list[str] = BP_KEYS, pool: list[str] = ENTRY_POOL,
                profiles: list[str] = PROFILES) -> dict[str, Any]:
    # keys that differ only in case are an error (TC126), so draw them unique by case
    chosen = draw(st.lists(st.sampled_from(keys), max_size=3, unique_by=str.lower))
    return {k: draw(policy_block(profile=True, pool=pool, profiles=profiles)) for k in chosen}


@st.composite
def tool(draw: st.DrawFn, name: str, plugin: str | None) -> dict[str, Any]:
    t: dict[str, Any] = {"name": name, "description": f"The {name} tool.",
                         "parameters": {"type": "object", "properties": {}}}
    groups = draw(st.lists(st.sampled_from(SECTIONS), max_size=2, unique=True))
    if groups:
        t["groups"] = groups
    if draw(st.integers(0, 5)) == 0:
        t["ownerOnly"] = True
    if plugin:
        t["plugin"] = plugin
        if draw(st.booleans()):
            t["optional"] = True
    if draw(st.integers(0, 4)) == 0 or name == "apply_patch":
        avail: dict[str, Any] = {}
        if draw(st.booleans()) or name == "apply_patch":
            avail["providers"] = draw(st.lists(st.sampled_from(PROVIDERS), max_size=2,
                                               unique=True))
        if draw(st.integers(0, 3)) == 0:
            avail["models"] = draw(st.lists(st.sampled_from(MODELS), max_size=2, unique=True))
        if draw(st.integers(0, 3)) == 0:
            avail["channels"] = draw(st.lists(st.sampled_from(CHANNELS), max_size=1))
        if draw(st.integers(0, 3)) == 0:
            avail["excludeChannels"] = draw(st.lists(st.sampled_from([*CHANNELS, "voice"]),
                                                     max_size=2))
        t["availability"] = avail
    return t


@st.composite
def group_map(draw: st.DrawFn, *, ids: list[str] = GROUP_IDS,
              pool: list[str] = ENTRY_POOL) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for gid in draw(st.lists(st.sampled_from(ids), max_size=3, unique=True)):
        g: dict[str, Any] = {}
        if draw(st.booleans()):
            g["tools"] = draw(policy_block(pool=pool))
        senders = draw(st.lists(st.sampled_from(SENDER_KEYS), max_size=3, unique=True))
        if senders:
            g["toolsBySender"] = {k: draw(policy_block(pool=pool)) for k in senders}
        out[gid] = g
    return out


@st.composite
def keyed_channel(draw: st.DrawFn, name: str, *, pool: list[str] = ENTRY_POOL
                  ) -> dict[str, Any]:
    """Slack ``channels`` (and per account) or Discord ``guilds`` with ``channels``."""
    if name == "slack":
        c: dict[str, Any] = {}
        if draw(st.integers(0, 3)) > 0:
            c["channels"] = draw(group_map(ids=CHANNEL_KEYS, pool=pool))
        if draw(st.booleans()):
            c["accounts"] = {acc: ({"channels": draw(group_map(ids=CHANNEL_KEYS, pool=pool))}
                                   if draw(st.booleans()) else {})
                             for acc in draw(st.lists(st.sampled_from(["work", "default"]),
                                                      max_size=1))}
        return c
    guilds: dict[str, Any] = {}
    for gid in draw(st.lists(st.sampled_from(GUILD_KEYS), max_size=2, unique=True)):
        guild = draw(group_map(ids=[gid], pool=pool)).get(gid, {})
        if draw(st.booleans()):
            guild["slug"] = draw(st.sampled_from(GUILD_SLUGS))
        if draw(st.booleans()):
            guild["channels"] = draw(group_map(ids=CHANNEL_KEYS, pool=pool))
        guilds[gid] = guild
    return {"guilds": guilds}


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    """One definitions file's worth of data (split into files by the test)."""
    names = draw(st.lists(st.sampled_from(CORE), min_size=1, max_size=len(CORE), unique=True))
    catalog = [draw(tool(n, None)) for n in names]
    if draw(st.booleans()):
        catalog.append({"name": "whatsapp_login", "description": "Log in.", "channel":
                        "whatsapp", "ownerOnly": draw(st.booleans()),
                        "parameters": {"type": "object"}})
    for plugin, tools in PLUGIN_TOOLS.items():
        if draw(st.booleans()):
            catalog.extend(draw(tool(n, plugin)) for n in tools)
    groups = {"group:g1": draw(st.lists(st.sampled_from([*CORE, "web_*", "pa_one", "group:fs"]),
                                        min_size=1, max_size=3)),
              "group:g2": draw(st.lists(st.sampled_from(["group:g1", "exec", "read", "s*"]),
                                        min_size=1, max_size=2))}
    profiles = {"minimal": {"allow": ["session_status"]},
                "coding": {"allow": ["group:fs", "group:runtime", "group:sessions", "image"]},
                "messaging": {"allow": ["message", "sessions_list", "sessions_send"]},
                "full": {}, "custom": draw(policy_block())}
    profiles["custom"].pop("alsoAllow", None)
    tools_cfg: dict[str, Any] = draw(policy_block(profile=True))
    if draw(st.booleans()):
        tools_cfg["byProvider"] = draw(by_provider())
    if draw(st.booleans()):
        tools_cfg["sandbox"] = {"tools": {k: draw(entries) for k in
                                          draw(st.lists(st.sampled_from(["allow", "deny"]),
                                                        max_size=2, unique=True))}}
    if draw(st.booleans()):
        sub = draw(policy_block())
        tools_cfg["subagents"] = {"tools": sub}
    if draw(st.integers(0, 3)) > 0:
        tools_cfg["exec"] = {"applyPatch": draw(apply_patch())}
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
                at["exec"] = draw(st.sampled_from([{}, {"applyPatch": draw(apply_patch())}]))
            agent["tools"] = at
        if draw(st.integers(0, 2)) == 0:
            agent["sandbox"] = draw(SANDBOX_BLOCKS)
        if draw(st.integers(0, 3)) == 0:
            agent["default"] = draw(st.booleans())
        agents.append(agent)
    channels: dict[str, Any] = {}
    keyed = draw(st.lists(st.sampled_from(KEYED_CHANNELS), max_size=1))
    for ch in draw(st.lists(st.sampled_from(CHANNELS), max_size=2, unique=True)):
        c: dict[str, Any] = {}
        if draw(st.integers(0, 3)) > 0:
            c["groups"] = draw(group_map())
        if draw(st.booleans()):
            c["accounts"] = {acc: ({"groups": draw(group_map())} if draw(st.booleans()) else {})
                             for acc in draw(st.lists(
                                 st.sampled_from(["work", "Work", "home", "default"]),
                                 max_size=2, unique_by=str.lower))}
        channels[ch] = c
    # after the generic ones: brute-force diff tests keep only the first channel, and keyed
    # channels have more classes (their share of those tests stays small)
    for ch in keyed:
        channels[ch] = draw(keyed_channel(ch))
    plugins = {"entries": {p: {"enabled": draw(st.integers(0, 3)) > 0}
                           for p in PLUGIN_TOOLS if any(t.get("plugin") == p for t in catalog)}}
    defaults: dict[str, Any] = {"subagents": {"maxSpawnDepth": draw(st.integers(1, 3))}}
    if draw(st.booleans()):
        defaults["sandbox"] = draw(SANDBOX_BLOCKS)
    out = {"catalog": catalog, "groups": groups, "profiles": profiles, "plugins": plugins,
           "tools": tools_cfg, "agents": {"defaults": defaults, "list": agents},
           "channels": channels}
    if draw(st.integers(0, 2)) == 0:
        out["session"] = draw(st.sampled_from([{}, {"scope": "global"},
                                               {"scope": "per-sender"}]))
    return out


# -- OpenClaw 2026.9 build-time layer shapes (engB; the request-time ones are apart) ----------
# The names 2026.9's layer rules treat specially: `automations` (`cron` is its alias),
# `progress_card` (`update_plan`), `canvas` with `show_widget`, a `memory-core` plugin tool that
# `group:memory` names but never loads; sandbox alsoAllow, localModelLean, maxSpawnDepth unset
# (the release's default 5). `full` profiles are allow `*` there.
CORE_9 = ["automations", "progress_card", "canvas", "show_widget", "tts", "view_image"]
ENTRY_POOL_9 = ["update_plan", "cron", "canvas", "write", "group:memory", "memory_*",
                "memory-core", "plug_*", "group:*", "p*", "*", "browser", "message"]


@st.composite
def build_time_2026_9(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` following OpenClaw 2026.9, with the shapes its build-time layer rules read
    (a roster the release accepts: one ``default: true`` agent among several)."""
    out = {**data, "openclaw": "2026.9", "catalog": list(data["catalog"]),
           "tools": dict(data["tools"]), "agents": dict(data["agents"]),
           "plugins": {"entries": dict(data["plugins"]["entries"])}}
    names = {t["name"] for t in out["catalog"]}
    extra = draw(st.lists(st.sampled_from(CORE_9), max_size=len(CORE_9), unique=True))
    out["catalog"] += [draw(tool(n, None)) for n in extra if n not in names]
    if draw(st.booleans()):
        mem = draw(tool("memory_search", "memory-core"))
        out["catalog"].append({**mem, "groups": ["memory"]})
        out["plugins"]["entries"]["memory-core"] = {"enabled": True}
    tools_cfg = out["tools"]
    for key in ("allow", "deny"):
        if key in tools_cfg and draw(st.booleans()):
            tools_cfg[key] = [*tools_cfg[key], draw(st.sampled_from(ENTRY_POOL_9))]
    if draw(st.integers(0, 2)) == 0:
        sandbox = dict(tools_cfg.get("sandbox", {}).get("tools", {}))
        sandbox["alsoAllow"] = draw(st.lists(st.sampled_from([*ENTRY_POOL, *ENTRY_POOL_9]),
                                             max_size=3))
        tools_cfg["sandbox"] = {"tools": sandbox}
    defaults = out["agents"]["defaults"] = {**out["agents"]["defaults"]}
    defaults["subagents"] = dict(defaults["subagents"])
    if draw(st.booleans()):  # unset: 2026.9's default maxSpawnDepth (5)
        defaults["subagents"].pop("maxSpawnDepth", None)
    if draw(st.integers(0, 2)) == 0:
        defaults["experimental"] = {"localModelLean": draw(st.booleans())}
    roster = []
    for drawn in out["agents"]["list"]:
        agent = {k: v for k, v in drawn.items() if k != "default"}
        at = agent.get("tools")
        if at is not None and "allow" in at and draw(st.booleans()):
            agent["tools"] = {**at, "allow": [*at["allow"], draw(st.sampled_from(ENTRY_POOL_9))]}
        if draw(st.integers(0, 3)) == 0:
            agent["experimental"] = {"localModelLean": draw(st.booleans())}
        roster.append(agent)
    if len(roster) > 1:
        roster[draw(st.integers(0, len(roster) - 1))]["default"] = True
    out["agents"]["list"] = roster
    return out


# OpenClaw's sandbox blocks as far as definitions carry them (mode only; {} = unset)
SANDBOX_BLOCKS = st.sampled_from([{}, {"mode": "off"}, {"mode": "non-main"}, {"mode": "all"}])


@st.composite
def apply_patch(draw: st.DrawFn, *, models: list[str] = MODELS) -> dict[str, Any]:
    ap: dict[str, Any] = {}
    if draw(st.integers(0, 3)) > 0:
        ap["enabled"] = draw(st.integers(0, 3)) > 0
    if draw(st.booleans()):
        ap["allowModels"] = draw(st.lists(st.sampled_from([*models, " ", "GPT-5"]),
                                          max_size=2))
    return ap


def _opt(*values: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from([None, *values])


# Every key is drawn (None = not passed) and values cluster on what the definitions declare,
# so group, sender and subagent rules are hit often, not by luck.
contexts = st.fixed_dictionaries({
    "agent_id": _opt("main", "a1", "A1 ", "a2", "nobody", "", "a 1"),
    "session_key": _opt(
        "agent:a1:telegram:group:g1", "agent:main:whatsapp:group:G1:topic:9",
        "agent:a2:subagent:x", "agent:main:subagent:a:subagent:b", "subagent:x",
        "agent:a1:telegram:dm:5", "telegram:group:g2", "agent:A2:telegram:channel:g1:thread:1",
        "agent:nobody:whatsapp:group:*", "agent:a1:subagent:x:telegram:group:g1",
        "agent:main:telegram:group:-100:topic:7", "Agent:a1:telegram:Group:g1", "irc:group:G1",
        "agent::a1:telegram:group:g2", "agent:main:telegram:group: ", "agent:a1:subagent:y",
        "agent:main:slack:channel:c1", "agent:a1:discord:channel:g1:thread:2",
        # main sessions and their aliases (sandbox mode non-main), as written and not
        "main", "agent:main:main", "agent:a1:main", "agent:a2:main", "global", "Agent:a1:main",
        " agent:a1:main ", "agent:A1:main", "agent:nobody:main", "agent:a1:x", "MAIN",
        "agent:a 1:main", "agent:a1:main\x1f", "\ufeffagent:a1:main"),
    "spawned_by": _opt("agent:main:telegram:group:g1", "agent:a2:whatsapp:group:G1:thread:4",
                       "telegram:group:-100:topic:7", "agent:main:irc:channel:g1",
                       "agent:main:telegram:dm:5", ""),
    "model_provider": _opt(*PROVIDERS, "OpenAI ", "other", ""),
    "model_id": _opt(*MODELS, "GPT-5", "x/y", ""),
    "message_provider": _opt(*CHANNELS, *CHANNELS, *KEYED_CHANNELS, "Telegram", "", "voice",
                             "internet-relay-chat", " ", "node", "discord-voice"),
    "account_id": _opt("work", "WORK", "home", "Work", "none", "default", " wo rk ", ""),
    "group_id": _opt("g1", "G1", "g2", "*", "zzz", "", "-100:topic:7", "-100:7", " g1 ",
                     "-100:topic:x", "C1", "general", " C1"),
    "group_space": _opt("111", "My Guild", "my-guild", "#my_guild", "G2", "g2", "other", " "),
    "group_channel": _opt("#general", "General", "general", "Dev Ops", "#dev-ops", "c1",
                          "#C1", "g1", "x"),
    "sender_id": _opt("42", "@42", "7", " 42 ", "alice"),
    "sender_e164": _opt("+1555", "+1666"),
    "sender_username": _opt("alice", "@Alice", "42"),
    "sender_name": _opt("Bob", "42", "alice"),
    "sender_is_owner": _opt(True, False),
    "sandboxed": _opt(True, False),
    "spawn_depth": _opt(0, 1, 2, 3, 5),
}).map(lambda d: {k: v for k, v in d.items() if v is not None})


def split_files(data: dict[str, Any], order: list[int]) -> dict[str, Any]:
    """Spread one definitions dict over several files (catalog in two halves)."""
    catalog = data["catalog"]
    half = len(catalog) // 2
    parts: list[dict[str, Any]] = [{"catalog": catalog[:half]}, {"catalog": catalog[half:]}]
    parts += [{k: v} for k, v in data.items() if k != "catalog"]
    return {f"f{order[i] if i < len(order) else i:02d}_{i}.yaml": part
            for i, part in enumerate(parts)}


# -- OpenClaw 2026.9 request-time shapes (owner, agent selection, trusted group ids, the
# sender layer, byProvider model keys). Kept apart from the build-time shapes' helpers.
TARGETS = ("2026.3", "2026.9")
SENDER_KEYS_2026_9 = [*SENDER_KEYS, "channel:telegram:42", "channel:Telegram:@42",
                      "channel:whatsapp:7", "channel:irc:alice", "id:@42"]  # "channel:x": TC132
# provider-prefixed slash model ids (2026.9: openai + openai/gpt-5 is openai/openai/gpt-5)
BP_KEYS_2026_9 = [*BP_KEYS, "openai/openai/gpt-5", "anthropic/anthropic/claude", "openai/x/y"]


@st.composite
def senders_2026_9(draw: st.DrawFn, *, pool: list[str] = ENTRY_POOL) -> dict[str, Any]:
    """A ``toolsBySender`` map with 2026.9's typed keys (``channel:<channel>:<id>``)."""
    keys = draw(st.lists(st.sampled_from(SENDER_KEYS_2026_9), max_size=3, unique=True))
    return {k: draw(policy_block(pool=pool)) for k in keys}


@st.composite
def request_time_2026_9(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` following OpenClaw 2026.9, with the shapes its request-time rules read:
    tools.toolsBySender globally and per agent, channel: keys in group sender rules,
    provider-prefixed slash byProvider keys, and rosters the release can (or, given no
    agent, cannot) choose from."""
    data = {**data, "openclaw": "2026.9"}
    tools = data["tools"] = dict(data["tools"])
    if draw(st.booleans()):
        tools["toolsBySender"] = draw(senders_2026_9())
    if draw(st.booleans()):
        tools["byProvider"] = draw(by_provider(keys=BP_KEYS_2026_9))
    agents = data["agents"] = dict(data["agents"])
    roster = []
    for drawn in agents["list"]:
        agent = dict(drawn)
        if draw(st.integers(0, 2)) == 0:
            agent["tools"] = {**agent.get("tools", {}), "toolsBySender": draw(senders_2026_9())}
        agent.pop("default", None)
        roster.append(agent)
    # rosters 2026.9's loader accepts (TC108): none, one agent, several with one
    # `default: true`, or several under `ownership: explicit` (a request naming no agent is
    # then refused: AgentSelectionRequiredError)
    if not roster:
        del agents["list"]
    elif len(roster) > 1:
        if draw(st.booleans()):
            roster[draw(st.integers(0, len(roster) - 1))]["default"] = True
        else:
            agents["ownership"] = "explicit"
    elif draw(st.booleans()):
        roster[0]["default"] = True
    if roster:
        agents["list"] = roster
    channels = data["channels"] = dict(data["channels"])
    for name in [c for c in CHANNELS if c in channels and draw(st.booleans())]:
        groups = draw(group_map())
        for group in groups.values():
            if "toolsBySender" in group:
                group["toolsBySender"] = draw(senders_2026_9())
        channels[name] = {**channels[name], "groups": groups}
    return data


@st.composite
def definitions_for(draw: st.DrawFn, target: str) -> dict[str, Any]:
    """:func:`definitions` following ``target`` (2026.9: with :func:`build_time_2026_9` and
    :func:`request_time_2026_9`, so both halves of the release's rules meet in one draw)."""
    data = draw(definitions())
    if target != "2026.9":
        return data
    return draw(request_time_2026_9(draw(build_time_2026_9(data))))


# Contexts that reach 2026.9's request-time rules: group ids scoped by topic and sender,
# thread suffixes, delivery routes (sender channel), malformed agent keys, webchat owners.
contexts_2026_9 = st.one_of(contexts, st.tuples(contexts, st.fixed_dictionaries({
    "session_key": _opt("agent:a1:telegram:group:g1:topic:7:sender:42",
                        "agent:main:telegram:group:-100:sender:42", "agent:a2:telegram:direct:42",
                        "agent:main:whatsapp:work:dm:7", "agent:a1:telegram:group:g1:thread:x",
                        "agent:a1:TELEGRAM:GROUP:G1", "agent::telegram:group:g1", "agent:x",
                        "agent:a1::telegram:group:g1", "telegram:group:g1:topic:3"),
    "message_provider": _opt("webchat", "telegram"),
    "group_id": _opt("g1", "g1:topic:7", "-100", "G1"),
    "sender_is_owner": _opt(True, False),
})).map(lambda pair: {**pair[0], **{k: v for k, v in pair[1].items() if v is not None}}))


# -- routing (issue 32): bindings, session settings and inbound messages ----------------------
# Channels a binding or a message names: configured ones, others, the cases the session key
# keeps (Signal groups, Matrix rooms), an alias (imsg: imessage) and blank or padded ones.
ROUTE_CHANNELS = ["telegram", "whatsapp", "irc", "discord", "slack", "signal", "matrix"]
BINDING_CHANNELS = [*ROUTE_CHANNELS, " Telegram ", "WhatsApp", "imsg", "imessage", " "]
MESSAGE_CHANNELS = [*ROUTE_CHANNELS, *ROUTE_CHANNELS, "Telegram", " irc ", "imsg", "imessage",
                    "", "voice"]
ROUTE_ACCOUNTS = ["work", "Work", "default", "home", " wo rk ", "", "Home!"]
PEER_IDS = ["-100", "42", "Alice", "alice", "*", "g1", "G1", " 42 ", "AbC", "!Room:x"]
GUILD_IDS = ["111", "222", " 111 "]
TEAM_IDS = ["T1", "t1"]
ROLE_IDS = ["r1", "r2", "R1"]
PEER_KINDS_WRITTEN = ["direct", "group", "channel"]
DM_SCOPES = ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]
GROUP_SCOPES = ["main", "per-group"]
LINKED = {"alice": ["42", "telegram:7", "Signal:AbC"], "Bob": ["irc:bob", "Alice"],
          "7": ["whatsapp:42"]}


@st.composite
def binding(draw: st.DrawFn, agents: list[str], *, with_session: bool,
            main_ok: bool = True) -> dict[str, Any]:
    """A route binding to a declared agent (any case) or, where it compiles, ``main``, with
    every kind of match: account (absent, ``*``, an id), peer (wildcards and blank ids
    included), guild, team, roles, and (2026.9) its own session scopes."""
    agent = draw(st.sampled_from([*agents, "main"] if main_ok or not agents else agents))
    if draw(st.integers(0, 3)) == 0:
        agent = agent.upper()
    match: dict[str, Any] = {"channel": draw(st.sampled_from(BINDING_CHANNELS))}
    account = draw(_opt("*", "*", *ROUTE_ACCOUNTS))
    if account is not None:
        match["accountId"] = account
    if draw(st.integers(0, 2)) == 0:
        match["peer"] = {"kind": draw(st.sampled_from(PEER_KINDS_WRITTEN)),
                         "id": draw(st.sampled_from([*PEER_IDS, "*", " "]))}
    for key, pool in (("guildId", [*GUILD_IDS, ""]), ("teamId", TEAM_IDS)):
        if draw(st.integers(0, 3)) == 0:
            match[key] = draw(st.sampled_from(pool))
    if draw(st.integers(0, 1 if "guildId" in match else 4)) == 0:  # roles: mostly with a guild
        match["roles"] = draw(st.lists(st.sampled_from(ROLE_IDS), max_size=2))
    out: dict[str, Any] = {"agentId": agent, "match": match}
    if with_session and draw(st.integers(0, 3)) == 0:
        out["session"] = draw(st.fixed_dictionaries({}, optional={
            "dmScope": st.sampled_from(DM_SCOPES), "groupScope": st.sampled_from(GROUP_SCOPES)}))
    return out


@st.composite
def routing_for(draw: st.DrawFn, target: str) -> dict[str, Any]:
    """:func:`definitions_for` with route bindings (up to 8) and the session settings that
    shape the key: dmScope, identityLinks and (2026.9) groupScope."""
    data = draw(definitions_for(target))
    agents = [a["id"] for a in data["agents"].get("list", [])]
    nine = target == "2026.9"
    # a binding to an undeclared main is TC170 under 2026.3 once a roster is declared
    data["bindings"] = draw(st.lists(binding(agents, with_session=nine, main_ok=nine),
                                     max_size=10))
    # channels no group policy needs, configured all the same (the loader's added bindings)
    extra = draw(st.lists(st.sampled_from(["imessage", "signal", "matrix"]), max_size=2))
    data["channels"] = {**data["channels"], **{name: {} for name in extra}}
    session = dict(data.get("session", {}))
    if draw(st.booleans()):
        session["dmScope"] = draw(st.sampled_from(DM_SCOPES))
    if nine and draw(st.integers(0, 2)) == 0:
        session["groupScope"] = draw(st.sampled_from(GROUP_SCOPES))
    if draw(st.integers(0, 2)) == 0:
        session["identityLinks"] = LINKED
    if session:
        data["session"] = session
    return data


def _peer(kinds: list[str]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.tuples(st.sampled_from(kinds), st.sampled_from(PEER_IDS)))


@st.composite
def _aimed(draw: st.DrawFn, written: dict[str, Any]) -> dict[str, Any]:
    """A message aimed at one binding: its channel, account, peer (a wildcard's kind with
    any id; a group as a channel and the reverse; as the thread's parent), guild, team and
    roles, each kept or changed, so every tier is reached and just missed."""
    match = written["match"]
    out: dict[str, Any] = {"channel": match["channel"]}
    if "accountId" in match and match["accountId"] != "*" and draw(st.integers(0, 3)):
        out["account_id"] = match["accountId"]
    peer = match.get("peer")
    if peer is not None and draw(st.integers(0, 4)):
        kind = {"group": "channel", "channel": "group"}.get(peer["kind"], peer["kind"])
        chat = (draw(st.sampled_from([peer["kind"], kind])),
                draw(st.sampled_from(PEER_IDS)) if peer["id"] == "*" else peer["id"])
        if draw(st.integers(0, 3)):
            out["peer"] = chat
        else:
            out["parent_peer"] = chat
            out["peer"] = (chat[0], draw(st.sampled_from(PEER_IDS)))
    for key, keyword in (("guildId", "guild_id"), ("teamId", "team_id")):
        if key in match and draw(st.integers(0, 4)):
            out[keyword] = match[key]
    if match.get("roles") and draw(st.integers(0, 3)):
        out["member_role_ids"] = [draw(st.sampled_from(match["roles"])),
                                  *draw(st.lists(st.sampled_from(ROLE_IDS), max_size=1))]
    return out


@st.composite
def messages(draw: st.DrawFn, target: str, bindings: list[dict[str, Any]] = []) -> dict[str, Any]:  # noqa: B006
    """An inbound message: ``route``'s keywords (None = not passed), then the sender, owner
    flag, model and sandbox flag ``resolve_message`` adds; most aimed at one of ``bindings``."""
    out: dict[str, Any] = {
        "channel": draw(st.sampled_from(MESSAGE_CHANNELS)),
        "account_id": draw(_opt(*ROUTE_ACCOUNTS, "WORK")),
        "peer": draw(_peer(["direct", "dm", "group", "channel", "Group", "direct", "group"])),
        "parent_peer": draw(st.one_of(st.none(), st.none(), _peer(["group", "channel"]))),
        "guild_id": draw(_opt(*GUILD_IDS, "333", "")),
        "team_id": draw(_opt(*TEAM_IDS, "")),
        "member_role_ids": draw(st.lists(st.sampled_from(ROLE_IDS), max_size=2)),
    }
    if bindings and draw(st.integers(0, 3)):
        aimed = draw(_aimed(draw(st.sampled_from(bindings))))
        out = {**{k: v for k, v in out.items() if draw(st.booleans())}, **aimed}
    if target == "2026.9":
        out["default_agent_id"] = draw(st.sampled_from([None] * 6 + ["a1", "A2", "main", "x"]))
        out["dm_scope"] = draw(st.sampled_from([None] * 3 + DM_SCOPES))
        out["group_scope"] = draw(st.sampled_from([None] * 3 + GROUP_SCOPES))
    out.update({
        "sender_id": draw(_opt("42", "@42", "7")),
        "sender_username": draw(_opt("alice", "@Alice")),
        "sender_e164": draw(_opt("+1555")),
        "sender_name": draw(_opt("Bob")),
        "sender_is_owner": draw(_opt(True, False)),
        "model_provider": draw(_opt(*PROVIDERS)),
        "model_id": draw(_opt(*MODELS)),
        "sandboxed": draw(_opt(True, False)),
    })
    return {k: v for k, v in out.items() if v is not None}


@st.composite
def routing_cases(draw: st.DrawFn, target: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """:func:`routing_for` and up to 24 :func:`messages`, most aimed at its bindings."""
    data = draw(routing_for(target))
    return data, draw(st.lists(messages(target, data["bindings"]), min_size=1, max_size=24))


ROUTE_KEYWORDS = ("account_id", "peer", "parent_peer", "guild_id", "team_id",
                  "member_role_ids", "default_agent_id", "dm_scope", "group_scope")

"""Which OpenClaw config keys ``toolc import-openclaw`` may leave out without making the
imported policy wider than the gateway's.

A key left out is *access-relevant* when OpenClaw could refuse or restrict a tool call because
of it that the imported definitions would allow (a read-only sandbox workspace, elevated
exec, safe bins, message actions, agent-to-agent rules, ...; the sandbox mode itself is
imported). Such keys are errors unless ``--allow-partial``.
Keys that only decide whether a tool exists at all (``tools.web.search.enabled``, a memory
slot) are not: a tool the gateway does not have cannot be called. Keys of admission (who may
talk to the bot: ``dmPolicy``, ``allowFrom``), transport, models and credentials are not
either. Conservative by default: a key not named here under ``tools``, ``agents``,
``channels`` or ``plugins``, and any unknown top-level key, is access-relevant.
"""

from __future__ import annotations

from typing import Any

Path = tuple[str | int, ...]

# Top-level sections with no tool-access meaning, except the sub-keys named. (`bindings` are
# imported: openclaw_routing says what it leaves out and why.)
TOP_LEVEL: dict[str, frozenset[str]] = {
    name: frozenset() for name in (
        "$schema", "meta", "wizard", "diagnostics", "logging", "cli", "update", "ui",
        "secrets", "auth", "models", "env", "broadcast", "audio", "media",
        "messages", "session", "hooks", "web", "discovery", "canvasHost", "talk", "memory",
        "skills", "approvals", "acp", "nodeHost", "cron")}
TOP_LEVEL.update({
    # node commands the `nodes` tool may run; the HTTP tool-invocation deny list
    "gateway": frozenset({"nodes", "tools"}),
    # `!` host shell and config-writing chat commands bypass tool policy
    "commands": frozenset({"bash", "config", "debug", "elevated"}),
    # browser `act: evaluate` switch, SSRF policy of the browser tool
    "browser": frozenset({"evaluateEnabled", "ssrfPolicy"}),
})

TOOLS_IRRELEVANT = frozenset({"web", "media", "links", "loopDetection", "subagents"})
EXEC_IRRELEVANT = frozenset({"timeoutSec", "backgroundMs", "cleanupMs", "notifyOnExit",
                             "notifyOnExitEmptySuccess", "approvalRunningNoticeMs", "node"})
SUBAGENTS_IRRELEVANT = frozenset({"model", "thinking", "maxConcurrent", "archiveAfterMinutes",
                                  "maxChildrenPerAgent", "runTimeoutSeconds",
                                  "announceTimeoutMs"})
DEFAULTS_IRRELEVANT = frozenset({
    "model", "models", "imageModel", "pdfModel", "workspace", "repoRoot", "skipBootstrap",
    "bootstrapMaxChars", "bootstrapTotalMaxChars", "userTimezone", "timeFormat",
    "envelopeTimezone", "envelopeTimestamp", "envelopeElapsed", "contextTokens",
    "cliBackends", "memorySearch", "contextPruning", "compaction", "thinkingDefault",
    "verboseDefault", "blockStreamingDefault", "blockStreamingBreak", "blockStreamingChunk",
    "blockStreamingCoalesce", "humanDelay", "timeoutSeconds", "mediaMaxMb",
    "typingIntervalSeconds", "typingMode", "heartbeat", "maxConcurrent",
    "imageMaxDimensionPx", "pdfMaxBytesMb", "pdfMaxPages", "reasoningDefault",
    # later releases' model and display settings
    "mediaModels", "decisionModel", "toolProgressDetail", "embeddedAgent", "modelPolicy"})
AGENT_IRRELEVANT = frozenset({"name", "default", "workspace", "agentDir", "model", "identity",
                              "groupChat", "humanDelay", "heartbeat", "memorySearch",
                              "params", "skills", "thinkingDefault", "reasoningDefault"})
# Channel keys of transport, credentials, admission and reply style (any depth below a
# channel, accounts and group entries included).
CHANNEL_IRRELEVANT = frozenset({
    "enabled", "name", "botToken", "token", "tokenFile", "appToken", "userToken",
    "signingSecret", "webhookUrl", "webhookSecret", "webhookPath", "webhookHost",
    "webhookPort", "mode", "dmPolicy", "allowFrom", "groupPolicy", "groupAllowFrom",
    "requireMention", "mentionPatterns", "historyLimit", "dmHistoryLimit", "dms", "dm",
    "textChunkLimit", "chunkMode", "mediaMaxMb", "streaming", "streamMode", "blockStreaming",
    "blockStreamingCoalesce", "replyToMode", "reactionLevel", "ackReaction",
    "reactionNotifications", "configWrites", "capabilities", "proxy", "linkPreview",
    "markdown", "heartbeat", "responsePrefix", "retry", "timeoutSeconds", "network",
    "users", "roles", "systemPrompt", "skills", "topics", "allow", "autoThread",
    "includeThreadStarter", "thread", "replyToModeByChatType", "sendReadReceipts",
    "selfChatMode", "debounceMs", "cliPath", "dbPath", "service", "region", "password",
    "serverUrl", "baseUrl", "host", "port", "nick", "nickserv", "tls", "username",
    "realname", "account", "accountId", "appId", "appSecret", "clientId", "clientSecret",
    "tenantId", "encryptKey", "verificationToken", "domain", "homeserver", "accessToken",
    "userId", "deviceName", "encryption", "autoJoin", "secret", "signal", "httpUrl",
    "httpHost", "httpPort", "autoStart", "ignoreAttachments", "ignoreStories",
    "sendAttachments", "defaultTo", "typingIndicator", "nativeStreaming", "intents",
    "pluralkit", "guildIds", "channelAccessToken", "channelSecret", "serviceAccount",
    "serviceAccountFile", "audienceType", "audience", "botUser", "relays", "privateKey",
    "profile", "renderMode", "groupSessionScope", "replyInThread", "slashCommand",
    "commands", "draftChunk", "customCommands", "emoji", "statusReactions", "slug",
    "dangerouslyAllowNameMatching", "allowBots", "defaultAccount",
    # seen in the docs' examples of 2026.3.2 and 2026.9.6 (transport, admission, display)
    "accountSid", "activity", "activityType", "activityUrl", "agentId", "aliases",
    "allowInsecureSsl", "allowPrivateNetwork", "allowedRoles", "allowedUserIds", "appKey",
    "appPassword", "applicationId", "attachmentRoots", "authToken", "authType",
    "authorization", "autoAcceptDmInvites", "autoAcceptGroupInvites", "autoDiscoverChannels",
    "autoJoinAllowlist", "botLoopProtection", "botName", "botSecret", "channel", "channels",
    "chatmode", "code", "defaultAuthorizedShips", "direct", "dmAllowlist", "email",
    "eventQueue", "expiresIn", "fromNumber", "groupChannels", "guilds", "handle",
    "heartbeatVisibility", "ignoreOtherMentions", "includeAttachments", "incomingUrl",
    "maxLinesPerMessage", "mentionAliases", "obtainmentTimestamp", "oncharPrefixes",
    "ownerShip", "postAs", "presenceEvents", "publicWebhookUrl", "rateLimitPerMinute",
    "reactionAllowlist", "refreshToken", "relayUrl", "remoteAttachmentRoots", "remoteHost",
    "resolveSenderNames", "secretFile", "serviceUrl", "sharePointSiteId", "ship", "status",
    "suppressEmbeds", "threadBindings", "transport", "tts", "ui", "url", "voice", "webhook"})
# Keys that always touch tool access wherever they are.
ALWAYS_RELEVANT = frozenset({"tools", "toolsBySender", "actions", "elevated", "sandbox",
                             "execApprovals"})
# (allow and deny are imported as disabled entries, see openclaw._plugin_lists)
PLUGINS_IRRELEVANT = frozenset({"load", "installs", "slots", "allow", "deny"})
PLUGIN_ENTRY_IRRELEVANT = frozenset({"config", "hooks", "apiKey", "env"})
SANDBOX_OFF = "off"
# Keys of a sandbox block besides the imported `mode`: the container's set-up, which decides
# what a sandboxed command can reach, not which tools a session has.
SANDBOX_IRRELEVANT = frozenset({"scope", "perSession", "workspaceRoot", "docker", "prune"})


def sandbox_mode(config: dict[str, Any], path: Path, value: Any) -> str:
    """The sandbox mode of the agent (or defaults) whose ``sandbox`` block is at ``path``."""
    mode = value.get("mode") if isinstance(value, dict) else None
    if mode is None and path[:2] in (("agents", "list"), ("agents", "entries")):
        agents = config.get("agents")
        defaults = agents.get("defaults") if isinstance(agents, dict) else None
        sandbox = defaults.get("sandbox") if isinstance(defaults, dict) else None
        mode = sandbox.get("mode") if isinstance(sandbox, dict) else None
    return mode if isinstance(mode, str) else SANDBOX_OFF


def access_reason(config: dict[str, Any], path: Path, value: Any) -> str | None:
    """Why leaving out ``path`` (holding ``value``) could widen tool access (None: it cannot)."""
    keys = [p for p in path if isinstance(p, str)]
    top = keys[0] if keys else ""
    if keys[:2] == ["session", "groupScope"]:  # (imported for 2026.9)
        return ("OpenClaw 2026.9's session.groupScope: whether a group chat gets a session of "
                "its own, and so its group's tool policy (--openclaw 2026.9 imports it)")
    if top in TOP_LEVEL:
        relevant = TOP_LEVEL[top]
        if len(keys) == 1:
            named = sorted(relevant & set(value)) if isinstance(value, dict) else []
            return f"its {', '.join(named)} settings restrict tool use" if named else None
        return f"{keys[1]} settings restrict tool use" if keys[1] in relevant else None
    if keys[-1] == "elevated" and isinstance(value, dict) and value.get("enabled") is False:
        return None  # toolc has no elevated mode: off is what it does
    if top == "tools":
        return _tools_reason(keys[1:])
    if top == "agents":
        return _agents_reason(config, path, keys[1:], value)
    if top == "channels":
        return _channel_reason(keys[1:], value)
    if top == "plugins":
        if len(keys) > 1 and keys[1] in PLUGINS_IRRELEVANT:
            return None
        if len(keys) > 3 and keys[1] == "entries" and keys[3] in PLUGIN_ENTRY_IRRELEVANT:
            return None
        return "an unknown plugins key"
    return "an unknown top-level key (OpenClaw may use it to restrict tools)"


def _tools_reason(keys: list[str]) -> str | None:
    if not keys or keys[0] in TOOLS_IRRELEVANT:
        return None
    if keys[0] == "exec" and len(keys) > 1 and keys[1] in EXEC_IRRELEVANT:
        return None
    known = {"elevated": "elevated exec runs outside the sandbox and approvals",
             "agentToAgent": "agent-to-agent messaging rules",
             "sessions": "session visibility rules of the sessions tools",
             "fs": "file tools' workspace restriction",
             "message": "message tool restrictions",
             "exec": "exec settings that decide what runs",
             "toolsBySender": "OpenClaw 2026.9's sender policies (--openclaw 2026.9 imports "
                              "them)"}
    return known.get(keys[0], "an unknown tools key")


def _agents_reason(config: dict[str, Any], path: Path, keys: list[str],
                   value: Any) -> str | None:
    if not keys:
        return None
    if keys == ["entries"]:
        return "OpenClaw 2026.9's agent roster (--openclaw 2026.9 imports it)"
    if "sandbox" in keys[:3 if keys[0] == "entries" else 2]:
        return _sandbox_reason(config, path, keys, value)
    if keys[0] == "defaults":
        rest = keys[1:]
    elif keys[0] in ("list", "entries"):
        # agents.list[i] (the index is no key) or 2026.9's agents.entries.<id>
        rest = keys[1:] if keys[0] == "list" else keys[2:]
        if rest and rest[0] == "tools":
            return _tools_reason(rest[1:])
        if rest and rest[0] in AGENT_IRRELEVANT:
            return None
    else:
        return "an unknown agents key"
    if not rest or rest[0] in DEFAULTS_IRRELEVANT:
        return None
    if rest[0] == "subagents" and len(rest) > 1 and rest[1] in SUBAGENTS_IRRELEVANT:
        return None
    if rest[0] == "subagents" and len(rest) > 1 and rest[1] == "allowAgents":
        return "which agents sessions_spawn may target"
    if rest[0] == "elevatedDefault":
        return "elevated exec by default"
    return "an unknown agents key"


def _at(config: Any, path: Path) -> Any:
    for step in path:
        if isinstance(config, dict) and isinstance(step, str):
            config = config.get(step)
        elif isinstance(config, list) and isinstance(step, int) and step < len(config):
            config = config[step]
        else:
            return None
    return config


def _sandbox_reason(config: dict[str, Any], path: Path, keys: list[str],
                    value: Any) -> str | None:
    """A sandbox key left out (``mode`` is imported): relevant only where sessions are
    sandboxed, and only keys that change what a sandboxed session's tools are."""
    at = path[: path.index("sandbox") + 1]
    mode = sandbox_mode(config, at, value if path == at else _at(config, at))
    if mode == SANDBOX_OFF:
        return None
    inner = keys[keys.index("sandbox") + 1:]
    if not inner:
        return None
    if inner[0] in SANDBOX_IRRELEVANT:
        return None
    if inner[0] == "workspaceAccess":
        if value != "ro":
            return None
        return ("workspaceAccess ro: OpenClaw gives sandboxed sessions no write, edit or "
                "apply_patch tool, which toolc definitions cannot say")
    if inner[0] == "sessionToolsVisibility":
        return "session visibility rules of the sessions tools in sandboxed sessions"
    if inner[0] == "browser":
        return "the sandboxed browser tool's host control"
    return "an unknown sandbox key"


def _channel_reason(keys: list[str], value: Any) -> str | None:
    if not keys or keys[0] == "defaults":
        return None
    last = keys[-1]
    if last in ALWAYS_RELEVANT:
        return f"`{last}` restricts tool use in this channel"
    if _holds_relevant(value):
        return "holds tool-access settings"
    if last in CHANNEL_IRRELEVANT or len(keys) == 1:
        return None
    # map entries (groups.<id>, accounts.<id>, ...) are keys we cannot know: their content
    # was checked above; a fixed key we do not know counts
    parent = keys[-2] if len(keys) > 1 else ""
    if parent in {"groups", "accounts", "channels", "guilds", "teams", "rooms", "topics",
                  "dms", "users"}:
        return None
    return "an unknown channel key"


def _holds_relevant(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in ALWAYS_RELEVANT or _holds_relevant(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_relevant(v) for v in value)
    return False

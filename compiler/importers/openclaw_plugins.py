"""OpenClaw's plugin ids and the tools their plugins register, for the import's stubs.

Taken from the releases, not guessed: 2026.3.2 registers tools in code
(``extensions/<dir>/index.ts`` and ``src/*.ts``: ``api.registerTool({name: ...}, {optional})``,
read by hand); 2026.9.6 declares them in its manifests
(``dist/extensions/*/openclaw.plugin.json``, ``contracts.tools``). Plugin ids are the
manifests' ``id`` of both releases. Tool names are OpenClaw's (``llm-task`` has a hyphen).
"""

from __future__ import annotations

# tool -> plugin id, 2026.3.2 (bundled plugins, extensions/)
TOOLS_2026_3_2: dict[str, str] = {
    "diffs": "diffs", "feishu_app_scopes": "feishu", "feishu_bitable_create_app": "feishu",
    "feishu_bitable_create_record": "feishu", "feishu_bitable_get_meta": "feishu",
    "feishu_bitable_get_record": "feishu", "feishu_bitable_list_records": "feishu",
    "feishu_bitable_update_record": "feishu", "feishu_chat": "feishu", "feishu_doc":
    "feishu", "feishu_drive": "feishu", "feishu_perm": "feishu", "feishu_wiki": "feishu",
    "llm-task": "llm-task", "lobster": "lobster", "memory_forget": "memory-lancedb",
    "memory_recall": "memory-lancedb", "memory_store": "memory-lancedb", "tlon": "tlon",
    "voice_call": "voice-call", "zalouser": "zalouser",
}
# plugin tools registered with {optional: true} in 2026.3.2
OPTIONAL_2026_3_2 = frozenset({"lobster", "llm-task"})
# tool -> plugin id, later releases' manifests (tools 2026.3.2 has as core tools left out)
TOOLS_LATER: dict[str, str] = {
    "code_execution": "xai", "crabbox": "crabbox", "dir_fetch": "file-transfer", "dir_list":
    "file-transfer", "file_fetch": "file-transfer", "file_write": "file-transfer", "intent":
    "memory-core", "node_inference": "ollama", "onepassword": "onepassword", "talk_voice":
    "talk-voice", "wiki_apply": "memory-wiki", "wiki_get": "memory-wiki", "wiki_lint":
    "memory-wiki", "wiki_search": "memory-wiki", "wiki_status": "memory-wiki",
    "workboard_attachment_add": "workboard", "workboard_attachment_delete": "workboard",
    "workboard_attachment_read": "workboard", "workboard_block": "workboard",
    "workboard_board_archive": "workboard", "workboard_board_create": "workboard",
    "workboard_board_delete": "workboard", "workboard_boards": "workboard",
    "workboard_claim": "workboard", "workboard_comment": "workboard", "workboard_complete":
    "workboard", "workboard_create": "workboard", "workboard_decompose": "workboard",
    "workboard_dispatch": "workboard", "workboard_heartbeat": "workboard", "workboard_link":
    "workboard", "workboard_list": "workboard", "workboard_move": "workboard",
    "workboard_notify_advance": "workboard", "workboard_notify_events": "workboard",
    "workboard_notify_list": "workboard", "workboard_notify_subscribe": "workboard",
    "workboard_notify_unsubscribe": "workboard", "workboard_promote": "workboard",
    "workboard_proof": "workboard", "workboard_protocol_violation": "workboard",
    "workboard_read": "workboard", "workboard_reassign": "workboard", "workboard_reclaim":
    "workboard", "workboard_release": "workboard", "workboard_runs": "workboard",
    "workboard_specify": "workboard", "workboard_stats": "workboard", "workboard_unblock":
    "workboard", "workboard_worker_log": "workboard", "x_search": "xai",
}
PLUGIN_IDS = frozenset({
    "a2a", "acpx", "active-memory", "admin-http-rpc", "alibaba", "anthropic", "apple-fm",
    "azure-speech", "beam", "bluebubbles", "bonjour", "browser", "canvas", "clawrouter",
    "code-mode-quickjs", "copilot-proxy", "crabbox", "cua-computer", "deepgram",
    "device-pair", "diagnostics-otel", "diffs", "discord", "document-extract", "elevenlabs",
    "fal", "feishu", "file-transfer", "geolocation", "github", "github-copilot", "google",
    "google-gemini-cli-auth", "googlechat", "huggingface", "imap", "imessage", "irc",
    "line", "linux-node", "litellm", "llm-task", "lmstudio", "lobster", "logbook", "matrix",
    "mattermost", "memory-core", "memory-lancedb", "memory-wiki", "microsoft",
    "microsoft-foundry", "migrate-claude", "migrate-hermes", "minimax",
    "minimax-portal-auth", "msteams", "nextcloud-talk", "nostr", "nvidia", "oc-path",
    "ollama", "onepassword", "open-prose", "openai", "opencode-go", "openrouter",
    "phone-control", "policy", "qwen-portal-auth", "reef", "runway", "senseaudio",
    "session-share", "sglang", "signal", "slack", "synology-chat", "talk-voice", "telegram",
    "thread-ownership", "tlon", "together", "tts-local-cli", "twitch", "vault", "vllm",
    "voice-call", "web-readability", "webhooks", "whatsapp", "workboard", "xai", "zalo",
    "zalouser",
})
# Bundled plugins of 2026.3.2 (extensions/): disabled unless enabled in the config, except
# these (BUNDLED_ENABLED_BY_DEFAULT in dist/plugin-sdk/config-*.js, resolveEnableState).
BUNDLED_2026_3_2 = frozenset({
    "acpx", "bluebubbles", "copilot-proxy", "device-pair", "diagnostics-otel", "diffs",
    "discord", "feishu", "google-gemini-cli-auth", "googlechat", "imessage", "irc", "line",
    "llm-task", "lobster", "matrix", "mattermost", "memory-core", "memory-lancedb",
    "minimax-portal-auth", "msteams", "nextcloud-talk", "nostr", "open-prose",
    "phone-control", "qwen-portal-auth", "signal", "slack", "synology-chat", "talk-voice",
    "telegram", "thread-ownership", "tlon", "twitch", "voice-call", "whatsapp", "zalo",
    "zalouser",
})
BUNDLED_ENABLED_BY_DEFAULT = frozenset({"device-pair", "phone-control", "talk-voice"})


def plugin_tools(plugin_id: str) -> list[str]:
    """The tools a known plugin registers (2026.3.2 first), in name order."""
    own = sorted(t for t, p in TOOLS_2026_3_2.items() if p == plugin_id)
    return own or sorted(t for t, p in TOOLS_LATER.items() if p == plugin_id)


def tool_plugin(tool: str) -> str | None:
    """The plugin id that registers ``tool`` (None: not a known plugin tool)."""
    return TOOLS_2026_3_2.get(tool) or TOOLS_LATER.get(tool)

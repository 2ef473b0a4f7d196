// The oracle for openclaw@2026.9.x: the release's own compiled tool-policy functions, chained in
// the order of createOpenClawCodingToolsInternal, over name-only tool stand-ins. Runs on Node >= 24
// (conformance/node.sh). The JSON-lines protocol of oracle.mjs, one request per stdin line:
//   {"op": "resolve", "config": {...}, "plugins": [{"id", "tools": [{"name", "optional"}]}],
//    "contexts": [{...toolc keywords...}]}
//     -> {"results": [{"tools": [...], "warnings": [...]} | {"error_kind", "error", ...}]}
//     The config goes through the release's own loader first (createConfigIO().loadConfig());
//     a config it refuses gives {"error_kind": "InvalidConfig", "issues": [...]} per context, a
//     context OpenClaw refuses to build tools for {"error_kind": "AgentSelectionRequired", ...}.
//   {"op": "selfcheck", "config": {...}, "contexts": [...]} -> {"results": [{"mine", "real"}]}:
//     the real createOpenClawCodingTools beside this chaining (plugins switched off).
//   {"op": "loadconfig", "path": "/abs/openclaw.json"} (or "config": {...}) -> {"config": {...}}
//     or {"error_kind": "InvalidConfig", "issues": [...]}.
//   {"op": "catalog"} -> the release's target data, read from its own modules (see extract.py).
//   {"op": "time", "config", "plugins", "contexts", "iterations"} -> {"ns": [per context, the
//     mean ns of one evaluation over `iterations` back-to-back runs]} (timing.mjs)
//   {"op": "schemas"} -> {"schemas": {tool: parameters}, "notBuilt": [...]}: the parameter schema
//     of every tool the real createOpenClawCodingTools builds under SCHEMA_PROBES (see there).
//   {"op": "route", "config", "plugins", "messages": [{"channel", "account_id", "peer": [kind, id],
//    "parent_peer", "guild_id", "team_id", "member_role_ids", "default_agent_id", "dm_scope",
//    "group_scope", sender fields, "sender_is_owner", "model_provider", "model_id", "sandboxed"}]}
//     -> {"results": [{"route": {agent_id, session_key, main_session_key, matched_by, channel,
//     account_id}, "context": {the routed run's context}, "tools": [...] | "tools_error": {...}}
//     | {"error_kind", ...}]}: resolveAgentRoute over the loaded config, then the tool policy of
//     the run it starts (routedRun).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { timed } from "./timing.mjs";

// OpenClaw logs to stdout (console.log) on some paths: stdout carries only the protocol's
// answers, everything else goes to stderr.
const answerOut = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

const pkg = process.argv[2];
const dist = path.join(pkg, "dist");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolc-oracle9-"));
process.env.OPENCLAW_STATE_DIR = path.join(scratch, "state");
process.env.OPENCLAW_CONFIG_PATH = path.join(scratch, "openclaw.json");
process.env.HOME = scratch;
fs.mkdirSync(process.env.OPENCLAW_STATE_DIR, { recursive: true });
fs.writeFileSync(process.env.OPENCLAW_CONFIG_PATH, "{}\n");

// ---------------------------------------------------------------------------------------------
// Finding the chunks by content. The dist chunks are content-hashed and renamed from release to
// release: start at the chunk that defines createOpenClawCodingToolsInternal and walk its static
// imports breadth-first, so the exports come from the very module instances the real code uses.
const TOP = fs.readdirSync(dist).filter((f) => f.endsWith(".mjs") || f.endsWith(".js"));
const sources = new Map();
function source(file) {
  if (!sources.has(file)) sources.set(file, fs.readFileSync(path.join(dist, file), "utf8"));
  return sources.get(file);
}
function declares(text, name) {
  const n = name.replace(/[$]/g, "\\$");
  return new RegExp(`^(?:async )?function\\*? ${n}\\(|^(?:const|let|var) ${n} =|^class ${n}\\b`, "m")
    .test(text);
}
function importsAs(text, name) {
  const n = name.replace(/[$]/g, "\\$");
  return new RegExp(`^import \\{[^}]*\\b(?:\\w+ as )?${n}\\b[^}]*\\} from`, "m").test(text);
}
function staticImports(file, text) {
  const out = [];
  for (const m of text.matchAll(/^import (?:[^"']*? from )?["'](\.\/[^"']+)["'];?$/gm)) {
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1])));
  }
  return out;
}
const root = TOP.find((f) => declares(source(f), "createOpenClawCodingToolsInternal"));
if (!root) throw new Error(`oracle9: no chunk defines createOpenClawCodingToolsInternal in ${dist}`);
const order = [root];
for (let i = 0, seen = new Set(order); i < order.length; i++) {
  for (const dep of staticImports(order[i], source(order[i]))) {
    if (!seen.has(dep) && fs.existsSync(path.join(dist, dep))) { seen.add(dep); order.push(dep); }
  }
}

// What the chaining needs, and where each lives: the root chunk's own binding when it has one
// (declared or imported: the same instance createOpenClawCodingToolsInternal calls), else the
// first chunk in breadth-first import order that declares it.
const FROM_ROOT = ["createOpenClawCodingTools", "createOpenClawCodingToolsInternal",
  "resolveConversationCapabilityProfile", "resolveExecToolConfig",
  "resolveConfiguredApplyPatchPolicy", "GATEWAY_OWNER_ONLY_CORE_TOOLS",
  "appendRuntimePluginToolGrant", "filterToolsByMessageProvider", "applyModelProviderToolPolicy",
  "resolveConversationToolPolicies", "buildConversationToolPolicyPipelineSteps",
  "applyToolPolicyPipeline", "applyDelegationCapability", "filterRequesterYieldTools",
  "buildDeclaredToolAllowlistContext", "normalizeToolPolicyName", "TOOL_DENY_BY_MESSAGE_PROVIDER",
  "TOOL_ALLOW_BY_MESSAGE_PROVIDER", "resolveLocalModelLeanPreserveToolNames",
  "resolveGatewayMessageChannel"];
const DEEPER = ["createPluginToolAllowlist", "normalizeDenylist", "denylistBlocksName",
  "denylistBlocksPlugin", "resolveSandboxRuntimeStatus", "resolveSandboxToolPolicyForAgent",
  "CORE_TOOL_DEFINITIONS", "CORE_TOOL_SECTION_ORDER", "CORE_TOOL_GROUPS",
  "resolveCoreToolProfilePolicy", "SUBAGENT_TOOL_DENY_ALWAYS", "SUBAGENT_TOOL_DENY_LEAF",
  "DEFAULT_TOOL_ALLOW", "DEFAULT_TOOL_DENY", "resolveStoredSubagentCapabilities",
  "DEFAULT_GATEWAY_HTTP_TOOL_DENY", "expandToolGroups", "LOCAL_MODEL_LEAN_DENY_TOOL_NAMES"];
// The config loader is not on the tool path: found by content anywhere in dist/.
const ANYWHERE = ["createConfigIO", "DEFAULT_SLOT_BY_KEY", "listBundledChannelPlugins",
  "setActivePluginRegistry", "createEmptyPluginRegistry", "normalizePluginsConfig",
  "resolveEffectivePluginActivationState", "resolveMemorySlotDecision",
  // routing (the `route` op): the gateway's own resolveAgentRoute, and the group id an inbound
  // run derives from the message (get-reply: resolveGroupSessionKey(sessionCtx)?.id)
  "resolveAgentRoute", "resolveGroupSessionKey"];
const WANTED = {};
const place = (file, name) => { (WANTED[file] ??= []).push(name); };
const rootText = source(root);
for (const name of FROM_ROOT) {
  if (declares(rootText, name) || importsAs(rootText, name)) place(root, name);
  else DEEPER.push(name);
}
for (const name of DEEPER) {
  const file = order.find((f) => declares(source(f), name));
  if (!file) throw new Error(`oracle9: ${name} not found from ${root}`);
  place(file, name);
}
for (const name of ANYWHERE) {
  const file = order.find((f) => declares(source(f), name))
    ?? TOP.find((f) => declares(source(f), name));
  if (!file) throw new Error(`oracle9: ${name} not found in ${dist}`);
  place(file, name);
}
const targets = {};
for (const [file, names] of Object.entries(WANTED)) {
  targets[pathToFileURL(path.join(dist, file)).href] = names;
}
register(new URL("./hooks.mjs", import.meta.url), { data: { targets } });
const oc = {};
for (const url of Object.keys(targets)) {
  const mod = await import(url);
  for (const [key, value] of Object.entries(mod)) {
    if (key.startsWith("__toolc_")) oc[key.slice(8)] = value;
  }
}
for (const names of Object.values(WANTED)) {
  for (const n of names) if (!(n in oc)) throw new Error(`oracle9: ${n} not exported`);
}
const CHUNKS = Object.fromEntries(Object.entries(WANTED).map(([f, n]) => [f, [...n].sort()]));

// ---------------------------------------------------------------------------------------------
// The bundled plugins that register tools, from their manifests (extensions/*/openclaw.plugin.json):
// contracts.tools, toolMetadata (optional, availability signals), enabledByDefault.
function bundledToolPlugins() {
  const out = [];
  for (const base of [path.join(dist, "extensions"), path.join(pkg, "extensions")]) {
    if (!fs.existsSync(base)) continue;
    for (const dir of fs.readdirSync(base).sort()) {
      const file = path.join(base, dir, "openclaw.plugin.json");
      if (!fs.existsSync(file)) continue;
      const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
      const tools = manifest.contracts?.tools ?? [];
      if (tools.length === 0 || out.some((p) => p.id === manifest.id)) continue;
      const meta = manifest.toolMetadata ?? {};
      out.push({ id: manifest.id, enabledByDefault: manifest.enabledByDefault === true,
        kind: manifest.kind ?? null,
        tools: tools.map((name) => ({ name, optional: meta[name]?.optional === true,
          profiles: meta[name]?.profiles ?? [],
          // tools that exist only with provider credentials or plugin config
          requires: [...(meta[name]?.authSignals ?? []).map((s) => `auth:${s.provider}`),
            ...(meta[name]?.configSignals ?? []).map((s) => `config:${s.rootPath}`)] })) });
    }
  }
  return out;
}
const BUNDLED = bundledToolPlugins();
const CORE_IDS = oc.CORE_TOOL_DEFINITIONS.map((t) => t.id);
const PLUGIN_OWNED = new Set(BUNDLED.flatMap((p) => p.tools.map((t) => t.name)));
// Catalog tools createOpenClawTools builds only for a kind of run the toolc context does not
// describe (heartbeat runs, swarm collectors, GitHub publication, task suggestions).
const RUN_MODE_ONLY = new Set(["heartbeat_respond", "github_identity_status", "github_publish",
  "suggest_task", "dismiss_task"]);
// Built only from runtime state the harness, like toolc, takes as present: media models
// (view_image, pdf, *_generate), client capabilities (screen), a primary bootstrap session
// (ask_user, secrets), the canvas host (show_widget), swarm config (agents_wait), skill and
// progress-card construction gates, memory-core's `intent` factory. The self-check leaves them out
// of the comparison.
const ASSUMED = ["intent", "view_image", "pdf", "image_generate", "music_generate", "video_generate",
  "screen", "ask_user", "secrets", "show_widget", "agents_wait", "skill_workshop",
  "progress_card", "web_search", "web_fetch"];
// Not built in a sandboxed run (createOpenClawTools: `options.sandboxed ? [] : [terminal, portal]`).
const HOST_ONLY = new Set(["terminal", "portal"]);
const CODING = ["ls", "read", "edit", "write"];
const SHELL = ["exec", "process"];
// The other core tools, in catalog order: every tool of the catalog not owned by a bundled plugin,
// built from runtime state (models, API keys, canvas host...) taken as present, as toolc does.
const OPENCLAW_TOOLS = CORE_IDS.filter((n) => !PLUGIN_OWNED.has(n) && !RUN_MODE_ONLY.has(n)
  && ![...CODING, ...SHELL, "apply_patch"].includes(n));
// The bundled plugins the oracle stands in for by default: those whose tools need no credentials
// or plugin config to exist.
const DEFAULT_PLUGINS = BUNDLED.filter((p) => p.tools.every((t) => t.requires.length === 0))
  .map((p) => ({ id: p.id, bundled: true, enabledByDefault: p.enabledByDefault, kind: p.kind,
    tools: p.tools.map((t) => ({ name: t.name, optional: t.optional })) }));

// plugins.* enablement for the stand-ins, by the release's own activation rules
// (resolveEffectivePluginActivationState over normalizePluginsConfig: enabled, deny, entries,
// the memory slot, allow, bundled defaults) and memory-slot exclusivity (resolveMemorySlotDecision).
function pluginEnabled(config, plugin) {
  const normalized = oc.normalizePluginsConfig(config.plugins);
  const state = oc.resolveEffectivePluginActivationState({ id: plugin.id,
    origin: plugin.bundled ? "bundled" : "global", config: normalized, rootConfig: config,
    enabledByDefault: plugin.enabledByDefault === true });
  if (!state.enabled) return false;
  return oc.resolveMemorySlotDecision({ id: plugin.id, kind: plugin.kind ?? undefined,
    slot: normalized.slots.memory }).enabled;
}

// The channel plugins a running gateway has loaded: the bundled channel plugins (2026.9.6 bundles
// only Telegram) of the channels the config declares. Their `groups.resolveToolPolicy` and
// session-conversation parsing are what resolveGroupToolPolicyOutcome reaches; every other
// channel gets OpenClaw's generic resolveChannelGroupToolsPolicy.
const BUNDLED_CHANNELS = new Map(oc.listBundledChannelPlugins().map((p) => [p.id, p]));
let activeChannels = null;
function activateChannels(config) {
  const ids = Object.keys(config.channels ?? {}).filter((id) => BUNDLED_CHANNELS.has(id)
    && config.channels[id]?.enabled !== false).sort();
  const key = ids.join(",");
  if (key === activeChannels) return;
  const registry = oc.createEmptyPluginRegistry();
  for (const id of ids) {
    registry.channels.push({ pluginId: id, plugin: BUNDLED_CHANNELS.get(id), origin: "bundled",
      source: "toolc-oracle9" });
  }
  oc.setActivePluginRegistry(registry, `toolc-oracle9:${key}`);
  activeChannels = key;
}

// ---------------------------------------------------------------------------------------------
// The config as a 2026.9 gateway holds it: the release's own loader ($include, agents.list ->
// agents.entries, validation, defaults). Some projections are non-enumerable: keep the object.
let loads = 0;
function loadConfig(raw) {
  const dir = path.join(scratch, `cfg-${loads++}`);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "openclaw.json");
  fs.writeFileSync(file, JSON.stringify(raw ?? {}));
  return loadConfigFile(file);
}
function loadConfigFile(file) {
  try {
    return { config: oc.createConfigIO({ configPath: file }).loadConfig() };
  } catch (err) {
    if (err?.code === "INVALID_CONFIG") {
      // details: the loader's "- <path>: <message>" lines (io.invalid-config: formatConfigIssueLines)
      const details = typeof err.details === "string" ? err.details : "";
      const issues = details.split("\n").filter((l) => l.startsWith("- ")).map((l) => {
        const m = l.slice(2).match(/^([^:\s]*): (.*)$/s);
        return m ? { path: m[1], message: m[2] } : { path: "", message: l.slice(2) };
      });
      return { failure: { error_kind: "InvalidConfig", error: details || String(err.message),
        issues } };
    }
    return { failure: { error_kind: errorKind(err), error: String(err?.message ?? err) } };
  }
}
function errorKind(err) {
  const name = err?.name ?? "Error";
  return name.endsWith("Error") && name !== "Error" ? name.slice(0, -5) : name;
}

// ---------------------------------------------------------------------------------------------
// One context, in the order of createOpenClawCodingToolsInternal.
function resolveOne(config, plugins, ctx) {
  try {
    activateChannels(config);
    return resolveChecked(config, plugins, ctx);
  } catch (err) {
    if (err?.name === "AgentSelectionRequiredError" || err?.code === "AGENT_SELECTION_REQUIRED") {
      return { error_kind: "AgentSelectionRequired", error: String(err.message),
        agentIds: err.agentIds ?? [], surface: err.surface ?? null };
    }
    return { error_kind: errorKind(err), error: String(err?.message ?? err) };
  }
}

function sandboxFor(config, ctx) {
  // runEmbeddedAttempt -> resolveSandboxContext: sandboxed from the session key and the sandbox
  // mode (resolveSandboxRuntimeStatus), or toolc's explicit sandboxed=true.
  const status = oc.resolveSandboxRuntimeStatus({ cfg: config, sessionKey: ctx.session_key,
    agentId: ctx.agent_id });
  if (!(ctx.sandboxed === true || status.sandboxed)) return undefined;
  return { enabled: true, tools: oc.resolveSandboxToolPolicyForAgent(config, status.agentId) };
}

function resolveChecked(config, plugins, ctx, opts = {}) {
  const sandbox = sandboxFor(config, ctx);
  const capabilityProfile = oc.resolveConversationCapabilityProfile({
    config, sessionKey: ctx.session_key, agentId: ctx.agent_id,
    messageProvider: ctx.message_provider, groupId: ctx.group_id,
    groupChannel: ctx.group_channel, groupSpace: ctx.group_space, spawnedBy: ctx.spawned_by,
    agentAccountId: ctx.account_id, senderId: ctx.sender_id, senderName: ctx.sender_name,
    senderUsername: ctx.sender_username, senderE164: ctx.sender_e164,
    senderIsOwner: ctx.sender_is_owner, modelProvider: ctx.model_provider,
    modelId: ctx.model_id, sandboxToolPolicy: sandbox?.tools });
  const { agentId } = capabilityProfile.policy;
  const execConfig = oc.resolveExecToolConfig({ cfg: config, agentId });
  const applyPatch = oc.resolveConfiguredApplyPatchPolicy({ config: execConfig.applyPatch,
    workspaceOnly: false, readOnly: false, requireWorkspaceOnly: false,
    modelProvider: ctx.model_provider, modelId: ctx.model_id });
  const ownerOnlyDeny = ctx.sender_is_owner === false ? [...oc.GATEWAY_OWNER_ONLY_CORE_TOOLS] : [];
  const ownerOnlyCoreToolPolicy = ownerOnlyDeny.length > 0 ? { deny: ownerOnlyDeny } : undefined;
  const pluginToolAllowlist = oc.appendRuntimePluginToolGrant(
    capabilityProfile.policy.explicitToolAllowlist, undefined);
  const pluginToolDenylist = [...capabilityProfile.policy.explicitToolDenylist, ...ownerOnlyDeny];
  const tools = [...CODING, ...(applyPatch.applyPatchEnabled ? ["apply_patch"] : []), ...SHELL,
    ...OPENCLAW_TOOLS.filter((n) => !(sandbox && HOST_ONLY.has(n))),
    ...(transcriptsBuilt(config, ctx) ? ["transcripts"] : [])].map((name) => ({ name }));
  const meta = new Map();
  if (!opts.noPlugins) {
    tools.push(...pluginTools(config, [...DEFAULT_PLUGINS, ...plugins], tools, meta,
      pluginToolAllowlist, pluginToolDenylist));
  }
  const forProvider = oc.filterToolsByMessageProvider(tools, ctx.message_provider);
  const localModelLeanPreserveToolNames = oc.resolveLocalModelLeanPreserveToolNames({
    toolNames: capabilityProfile.policy.explicitToolOverrideAllowlist });
  const forModel = oc.applyModelProviderToolPolicy(forProvider, { config, agentId,
    sessionKey: ctx.session_key, modelProvider: ctx.model_provider, modelId: ctx.model_id,
    localModelLeanPreserveToolNames });
  // createEmbeddedMessageInvocationPolicy's filter: the conversation policies and pipeline steps,
  // the owner-only deny as a step after the sandbox one, the runtime allowlist step included.
  const policies = oc.resolveConversationToolPolicies({ capabilityProfile,
    additionalProfileAllow: [], additionalPolicyAllow: [] });
  const declaredToolAllowlist = oc.buildDeclaredToolAllowlistContext({ config,
    metadataSnapshot: undefined, workspaceDir: scratch, toolDenylist: pluginToolDenylist });
  const warnings = [];
  const filtered = oc.applyToolPolicyPipeline({
    tools: forModel, toolMeta: (tool) => meta.get(tool), warn: (m) => warnings.push(m),
    steps: oc.buildConversationToolPolicyPipelineSteps({ capabilityProfile, policies,
      additionalStepsAfterSandbox: [{ policy: ownerOnlyCoreToolPolicy,
        label: "gateway sender owner-only tools" }],
      includeRuntimeToolPolicy: true }),
    declaredToolAllowlist });
  const delegated = oc.applyDelegationCapability(filtered, undefined);
  const final = oc.filterRequesterYieldTools(delegated, ctx.session_key);
  return { tools: final.map((t) => t.name), warnings, agentId: agentId ?? null };
}

// `transcripts`, a core tool outside the catalog (no section, group or profile): createOpenClawTools
// builds it for a channel caller (resolveTranscriptCaller: a gateway message channel and a
// sender id) unless `transcripts.enabled` is false.
function transcriptsBuilt(config, ctx) {
  if (config.transcripts?.enabled === false) return false;
  const channel = oc.resolveGatewayMessageChannel(ctx.message_provider)?.trim().toLowerCase();
  return Boolean(channel && ctx.sender_id?.trim());
}

// resolveOpenClawPluginToolsForOptions -> resolvePluginToolsFromRegistry, for stand-ins: each
// stand-in tool is one registration (entry.optional = the tool's optional flag) whose manifest
// declares it; enablement as pluginEnabled; availability signals are taken as met.
function pluginTools(config, plugins, coreTools, meta, allowlistRaw, denylistRaw) {
  if (config.plugins?.enabled === false) return [];
  const allowlist = oc.createPluginToolAllowlist(allowlistRaw);
  const denylist = oc.normalizeDenylist(denylistRaw);
  const existingNormalized = new Set(coreTools.map((t) => oc.normalizeToolPolicyName(t.name)));
  const owners = new Map();
  const out = [];
  for (const plugin of plugins) {
    if (!pluginEnabled(config, plugin)) continue;
    if (oc.denylistBlocksPlugin({ pluginId: plugin.id, denylist })) continue;
    // resolvePluginToolPluginIds: is any of the plugin's tools selected at all?
    const allowsPlugin = allowlist.allowsPlugin(plugin.id);
    const selected = plugin.tools.filter((t) => (allowsPlugin
      || (allowlist.includesDefaults && !t.optional) || allowlist.allowsTool(plugin.id, t.name))
      && !oc.denylistBlocksName(t.name, denylist));
    if (selected.length === 0) continue;
    const idKey = oc.normalizeToolPolicyName(plugin.id);
    if (existingNormalized.has(idKey) && owners.get(idKey) !== plugin.id) continue;
    for (const t of plugin.tools) {
      if (oc.denylistBlocksName(t.name, denylist)) continue;
      if (!((!t.optional && allowlist.includesDefaults)
        || (allowlist.size > 0 && allowlist.allowsTool(plugin.id, t.name)))) continue;
      if (t.optional && !allowlist.allowsTool(plugin.id, t.name)) continue;
      const key = oc.normalizeToolPolicyName(t.name);
      if (existingNormalized.has(key)) continue;
      existingNormalized.add(key);
      owners.set(key, plugin.id);
      const tool = { name: t.name };
      meta.set(tool, { pluginId: plugin.id, optional: !!t.optional });
      out.push(tool);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
function catalog() {
  const profiles = {};
  for (const name of ["minimal", "coding", "messaging", "full"]) {
    const p = oc.resolveCoreToolProfilePolicy(name);
    profiles[name] = { allow: p?.allow ?? null, deny: p?.deny ?? null };
  }
  const sections = Object.fromEntries(oc.CORE_TOOL_SECTION_ORDER.map((s) => [s.id, s.label]));
  const probe = oc.resolveSandboxToolPolicyForAgent({}, undefined);
  return {
    release: JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version,
    tools: oc.CORE_TOOL_DEFINITIONS.map((t) => ({ name: t.id, section: t.sectionId,
      description: t.description, profiles: [...t.profiles],
      openclawGroup: t.includeInOpenClawGroup === true })),
    sections,
    groups: oc.CORE_TOOL_GROUPS,
    profiles,
    ownerOnly: [...oc.GATEWAY_OWNER_ONLY_CORE_TOOLS],
    subagentDeny: { always: [...oc.SUBAGENT_TOOL_DENY_ALWAYS],
      leaf: [...oc.SUBAGENT_TOOL_DENY_LEAF] },
    sandbox: { allow: [...oc.DEFAULT_TOOL_ALLOW], deny: [...oc.DEFAULT_TOOL_DENY],
      resolvedAllow: probe.allow, resolvedDeny: probe.deny },
    maxSpawnDepth: defaultMaxSpawnDepth(),
    messageProviderDeny: oc.TOOL_DENY_BY_MESSAGE_PROVIDER,
    messageProviderAllow: oc.TOOL_ALLOW_BY_MESSAGE_PROVIDER,
    gatewayHttpDeny: [...oc.DEFAULT_GATEWAY_HTTP_TOOL_DENY],
    localModelLeanDeny: [...oc.LOCAL_MODEL_LEAN_DENY_TOOL_NAMES],
    plugins: BUNDLED,
    memorySlotDefault: oc.DEFAULT_SLOT_BY_KEY.memory,
    harness: { chunks: CHUNKS, root, coding: CODING, shell: SHELL, openclawTools: OPENCLAW_TOOLS,
      runModeOnly: [...RUN_MODE_ONLY], hostOnly: [...HOST_ONLY], assumed: ASSUMED,
      outsideCatalog: ["transcripts"],
      defaultPlugins: DEFAULT_PLUGINS.map((p) => p.id),
      bundledChannels: [...BUNDLED_CHANNELS.keys()].sort(),
      // bundled channel plugins with their own group tool-policy resolver
      groupResolvers: [...BUNDLED_CHANNELS.values()]
        .filter((p) => typeof p.groups?.resolveToolPolicy === "function").map((p) => p.id).sort() },
  };
}

// The default maxSpawnDepth, measured through resolveStoredSubagentCapabilities: the deepest
// subagent session key that is still an orchestrator (can spawn) under an empty config, plus one.
function defaultMaxSpawnDepth() {
  const cfg = oc.createConfigIO({ configPath: process.env.OPENCLAW_CONFIG_PATH }).loadConfig();
  for (let depth = 1; depth <= 64; depth++) {
    const key = `agent:main${":subagent:x".repeat(depth)}`;
    const caps = oc.resolveStoredSubagentCapabilities(key, { cfg });
    if (caps.role === "leaf") return depth;
  }
  return null;
}

// The real createOpenClawCodingTools beside this chaining, on plugin-free contexts.
function selfcheck(rawConfig, contexts, withPlugins) {
  const raw = withPlugins ? rawConfig
    : { ...rawConfig, plugins: { ...(rawConfig.plugins ?? {}), enabled: false } };
  const loaded = loadConfig(raw);
  if (loaded.failure) {
    return contexts.map(() => ({ mine: loaded.failure, real: null, skipped: "InvalidConfig" }));
  }
  const config = loaded.config;
  activateChannels(config);
  return contexts.map((ctx) => {
    let mine;
    try {
      mine = resolveChecked(config, [], ctx, { noPlugins: !withPlugins }).tools;
    } catch (err) {
      mine = { error_kind: errorKind(err) };
    }
    // createOpenClawCodingTools takes the sandbox context the runner resolved before it (a
    // provisioned container): those contexts, and the ones whose sandbox status the runner
    // already refuses, are not compared here.
    let sandbox;
    try {
      sandbox = sandboxFor(config, ctx);
    } catch (err) {
      return { mine, real: null, skipped: `sandbox status: ${errorKind(err)}` };
    }
    if (sandbox) return { mine, real: null, skipped: "sandboxed" };
    const dir = fs.mkdtempSync(path.join(scratch, "agent-"));
    let real;
    try {
      real = oc.createOpenClawCodingTools({ config, sessionKey: ctx.session_key,
        agentId: ctx.agent_id, modelProvider: ctx.model_provider, modelId: ctx.model_id,
        messageProvider: ctx.message_provider, groupId: ctx.group_id,
        groupChannel: ctx.group_channel, groupSpace: ctx.group_space,
        spawnedBy: ctx.spawned_by, agentAccountId: ctx.account_id, senderId: ctx.sender_id,
        senderName: ctx.sender_name, senderUsername: ctx.sender_username,
        senderE164: ctx.sender_e164, senderIsOwner: ctx.sender_is_owner,
        agentDir: dir, workspaceDir: dir }).map((t) => t.name);
    } catch (err) {
      real = { error_kind: errorKind(err), error: String(err?.message ?? err) };
    }
    return { mine, real, agree: sameAnswer(mine, real) };
  });
}
function sameAnswer(mine, real) {
  if (!Array.isArray(mine) || !Array.isArray(real)) {
    return !Array.isArray(mine) && !Array.isArray(real) && mine.error_kind === real.error_kind;
  }
  const strip = (names) => [...new Set(names)].filter((n) => !ASSUMED.includes(n)).sort();
  return JSON.stringify(strip(mine)) === JSON.stringify(strip(real));
}

// The parameter schemas of the tools, as the release's own factories build them: the real
// createOpenClawCodingTools (bundled plugins loaded for real) on a config and run options that
// make every catalog tool exist. Nothing here reaches the network: tools are built, never run.
//   - imageModel/pdfModel/mediaModels: view_image, pdf and the *_generate tools exist only with
//     a model for them (resolveOptionalMediaToolFactoryPlan);
//   - clientCaps: screen and show_widget need a client that renders them (filterToolsByClientCaps);
//   - enableHeartbeatTool, githubPublicationAvailable, taskSuggestionDeliveryMode: the run-mode
//     tools (RUN_MODE_ONLY);
//   - plugins.entries: the bundled plugins that are off by default, and a placeholder xAI key
//     (never sent: the tool is only built) because xai registers its tools only when a key
//     resolves; its billed tools exist only for an xAI model, hence the second probe.
// A schema that depends on the deployment (the message tool's actions follow the configured
// channels; none here) is the one this config gives.
const SCHEMA_PROBE_CONFIG = {
  agents: { defaults: { imageModel: "openai/gpt-5", pdfModel: "openai/gpt-5",
    mediaModels: { image: "openai/gpt-image-1", video: "openai/sora-2", music: "google/lyria" } } },
  tools: { alsoAllow: ["workboard", "llm-task"] },
  plugins: { entries: { xai: { config: { webSearch: { apiKey: "toolc-schema-probe" } } },
    "memory-wiki": { enabled: true }, workboard: { enabled: true }, "llm-task": { enabled: true },
    crabbox: { enabled: true }, onepassword: { enabled: true } } },
};
const SCHEMA_PROBES = [{ modelProvider: "openai", modelId: "gpt-5" },
  { modelProvider: "xai", modelId: "grok-4" }];
function schemas() {
  const loaded = loadConfig(SCHEMA_PROBE_CONFIG);
  if (loaded.failure) return { error: `schemas: the probe config is refused: ${loaded.failure.error}` };
  const out = {};
  const conflicts = [];
  for (const probe of SCHEMA_PROBES) {
    const dir = fs.mkdtempSync(path.join(scratch, "agent-"));
    const tools = oc.createOpenClawCodingTools({ config: loaded.config, ...probe,
      sessionKey: "agent:main:main", agentId: "main", messageProvider: "telegram", senderId: "1",
      senderIsOwner: true, agentDir: dir, workspaceDir: dir, modelHasVision: true,
      enableHeartbeatTool: true, githubPublicationAvailable: true,
      taskSuggestionDeliveryMode: "gateway", clientCaps: ["inline-widgets", "ui-commands"] });
    for (const tool of tools) {
      // TypeBox marks its objects with symbol keys, which JSON leaves out: plain JSON Schema.
      const schema = JSON.parse(JSON.stringify(tool.parameters ?? null));
      if (!(tool.name in out)) out[tool.name] = schema;
      else if (JSON.stringify(out[tool.name]) !== JSON.stringify(schema)) conflicts.push(tool.name);
    }
  }
  const expected = [...CORE_IDS, "transcripts", ...BUNDLED.flatMap((p) => p.tools.map((t) => t.name))];
  return { schemas: out, conflicts: [...new Set(conflicts)].sort(),
    notBuilt: [...new Set(expected.filter((n) => !(n in out)))].sort() };
}

const configs = new Map();
function loadedFor(raw) {
  const key = JSON.stringify(raw ?? {});
  if (!configs.has(key)) {
    if (configs.size > 64) configs.clear();
    configs.set(key, loadConfig(raw));
  }
  return configs.get(key);
}

// ---------------------------------------------------------------------------------------------
// Messages in: the release's own resolveAgentRoute over the config its loader produced (the
// loader's added channel-wide bindings, legacy default agent and mainKey included), then the
// tool policy of the run the route starts, with what an inbound run passes (get-reply's
// FollowupRun.run -> runEmbeddedPiAgent -> createOpenClawCodingTools): agentId and sessionKey
// of the route, messageProvider the channel, agentAccountId the route's account, groupId
// resolveGroupSessionKey(sessionCtx)?.id, groupSpace ctx.GroupSpace (the guild or team),
// groupChannel ctx.GroupChannel (a display name toolc's request does not carry: left out; no
// group resolver of 2026.9.6 reads it), and the sender fields.
function routeOne(config, plugins, msg) {
  let route;
  try {
    activateChannels(config);
    route = oc.resolveAgentRoute({ cfg: config, channel: msg.channel, accountId: msg.account_id,
      peer: pair(msg.peer), parentPeer: pair(msg.parent_peer), guildId: msg.guild_id,
      teamId: msg.team_id, memberRoleIds: msg.member_role_ids ?? [],
      defaultAgentId: msg.default_agent_id, dmScope: msg.dm_scope, groupScope: msg.group_scope });
  } catch (err) {
    if (err?.name === "AgentSelectionRequiredError" || err?.code === "AGENT_SELECTION_REQUIRED") {
      return { error_kind: "AgentSelectionRequired", error: String(err.message),
        agentIds: err.agentIds ?? [] };
    }
    return { error_kind: errorKind(err), error: String(err?.message ?? err) };
  }
  const ctx = routedRun(msg, route);
  const result = resolveOne(config, plugins, ctx);
  return { route: { agent_id: route.agentId, session_key: route.sessionKey,
    main_session_key: route.mainSessionKey, matched_by: route.matchedBy, channel: route.channel,
    account_id: route.accountId }, context: ctx,
    ...("tools" in result ? { tools: result.tools } : { tools_error: result }) };
}
function pair(value) {
  return Array.isArray(value) ? { kind: value[0], id: value[1] } : undefined;
}
function routedRun(msg, route) {
  const ctx = { agent_id: route.agentId, session_key: route.sessionKey,
    message_provider: route.channel, account_id: route.accountId };
  const [kind, id] = Array.isArray(msg.peer) ? msg.peer : [];
  if (kind === "group" || kind === "channel") {
    // The session context of a group message: From/To as "<channel>:<kind>:<id>" with the chat
    // type and provider (the shape whose group id is the chat's own id on every channel).
    const target = `${route.channel}:${kind}:${id}`;
    const group = oc.resolveGroupSessionKey({ From: `${kind}:${id}`, To: target,
      OriginatingTo: target, ChatType: kind, Provider: route.channel });
    if (group?.id) ctx.group_id = group.id;
    const space = msg.guild_id ?? msg.team_id;
    if (space) ctx.group_space = space;
  }
  for (const key of ["sender_id", "sender_e164", "sender_username", "sender_name",
    "sender_is_owner", "model_provider", "model_id", "sandboxed"]) {
    if (msg[key] !== undefined && msg[key] !== null) ctx[key] = msg[key];
  }
  return ctx;
}

function handle(req) {
  if (req.op === "catalog") return catalog();
  if (req.op === "schemas") return schemas();
  if (req.op === "loadconfig") {
    const loaded = req.path ? loadConfigFile(path.resolve(req.path)) : loadConfig(req.config);
    return loaded.failure ?? { config: JSON.parse(JSON.stringify(loaded.config)) };
  }
  if (req.op === "selfcheck") {
    return { assumed: ASSUMED, results: selfcheck(req.config ?? {}, req.contexts, req.plugins === true) };
  }
  const loaded = loadedFor(req.config);
  if (loaded.failure) return { results: (req.contexts ?? req.messages).map(() => loaded.failure) };
  if (req.op === "route") {
    return { results: req.messages.map((m) => routeOne(loaded.config, req.plugins ?? [], m)) };
  }
  if (req.op === "time") {  // the config loaded once, outside the timing (timing.mjs)
    const plugins = req.plugins ?? [];
    return timed(req.contexts, req.iterations ?? 200, (c) => resolveOne(loaded.config, plugins, c));
  }
  return { results: req.contexts.map((c) => resolveOne(loaded.config, req.plugins ?? [], c)) };
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of rl) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = handle(JSON.parse(line));
  } catch (err) {
    answer = { error: String(err?.stack ?? err) };
  }
  answerOut(JSON.stringify(answer) + "\n");
}

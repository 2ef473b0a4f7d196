// The oracle: OpenClaw's own compiled tool-policy functions, chained as
// createOpenClawCodingTools chains them (openclaw@2026.3.2), over name-only tool stand-ins.
// Protocol: one JSON request per stdin line, one JSON answer per stdout line.
//   {"op": "catalog"} -> core tool groups, built-in profiles, owner-only names
//   {"op": "resolve", "config": {...}, "plugins": [{"id", "tools": [{"name", "optional"}]}],
//    "contexts": [{...toolc keywords...}]} -> {"results": [{"tools": [...], "warnings": [...]}]}
//   {"op": "selfcheck", "config": {...}, "contexts": [...]} -> the real
//    createOpenClawCodingTools beside this chaining, for plugin-free contexts
//   {"op": "time", "config", "plugins", "contexts", "iterations"} -> {"ns": [per context, the
//    mean ns of one evaluation over `iterations` back-to-back runs]} (timing.mjs)
//   {"op": "route", "config", "plugins", "messages": [{"channel", "account_id", "peer": [kind, id],
//    "parent_peer", "guild_id", "team_id", "member_role_ids", sender fields, ...}]} ->
//    {"results": [{"route": {...}, "context": {...}, "tools": [...]} | {"error_kind", ...}]}:
//    resolveAgentRoute, then the tool policy of the run it starts (as oracle9's route op)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { timed } from "./timing.mjs";

const pkg = process.argv[2];
const dist = path.join(pkg, "dist");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolc-oracle-"));
process.env.OPENCLAW_STATE_DIR = path.join(scratch, "state");
process.env.OPENCLAW_CONFIG_PATH = path.join(scratch, "openclaw.json");
process.env.HOME = scratch;
fs.mkdirSync(process.env.OPENCLAW_STATE_DIR, { recursive: true });
fs.writeFileSync(process.env.OPENCLAW_CONFIG_PATH, "{}\n");

// The chunk extensionAPI.js re-exports runEmbeddedPiAgent from, and the helpers chunk it imports.
const api = fs.readFileSync(path.join(dist, "extensionAPI.js"), "utf8");
const embedded = api.match(/pi-embedded-(?!helpers)[A-Za-z0-9_-]+\.js/)[0];
const embeddedSource = fs.readFileSync(path.join(dist, embedded), "utf8");
const helpers = embeddedSource.match(/pi-embedded-helpers-[A-Za-z0-9_-]+\.js/)[0];
// The config loader's chunk the helpers import (applySessionDefaults: session.mainKey).
const helpersSource = fs.readFileSync(path.join(dist, helpers), "utf8");
const loader = helpersSource.match(/model-selection-[A-Za-z0-9_-]+\.js/)[0];
// Messages in (the `route` op): the routing chunk and the sessions chunk the embedded runner
// imports (resolveAgentRoute; resolveGroupSessionKey, the group id an inbound run passes).
const routing = embeddedSource.match(/resolve-route-[A-Za-z0-9_-]+\.js/)[0];
const sessions = embeddedSource.match(/sessions-[A-Za-z0-9_-]+\.js/)[0];
const WANTED = {
  [routing]: ["resolveAgentRoute"],
  [sessions]: ["resolveGroupSessionKey"],
  [embedded]: ["resolveEffectiveToolPolicy", "resolveGroupToolPolicy", "resolveSubagentToolPolicy",
    "resolveToolProfilePolicy", "mergeAlsoAllowPolicy", "collectExplicitAllowlist",
    "applyOwnerOnlyToolPolicy", "applyToolPolicyPipeline", "buildDefaultToolPolicyPipelineSteps",
    "isSubagentSessionKey", "getSubagentDepthFromSessionStore", "normalizeToolName",
    "isOpenAIProvider", "isApplyPatchAllowedForModel", "applyMessageProviderToolPolicy",
    "resolveExecConfig", "isOptionalToolAllowed", "normalizeAllowlist",
    "createOpenClawCodingTools", "SUBAGENT_TOOL_DENY_ALWAYS", "SUBAGENT_TOOL_DENY_LEAF",
    "TOOL_DENY_BY_MESSAGE_PROVIDER"],
  [helpers]: ["resolveSandboxToolPolicyForAgent", "isOwnerOnlyToolName", "CORE_TOOL_GROUPS",
    "resolveSandboxRuntimeStatus", "CORE_TOOL_DEFINITIONS", "DEFAULT_TOOL_ALLOW",
    "DEFAULT_TOOL_DENY"],
  [loader]: ["applySessionDefaults"],
};
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
  for (const n of names) if (!(n in oc)) throw new Error(`oracle: ${n} not found in ${dist}`);
}

// Core tools as createOpenClawCodingTools builds them (names only), in its order. Tools whose
// construction depends on runtime state (image/pdf models, web API keys, the message tool
// switch, read-only sandboxes) are taken as present, as toolc does: policy decides.
const CODING = ["read", "write", "edit"];
const OPENCLAW_TOOLS = ["browser", "canvas", "nodes", "cron", "message", "tts", "gateway",
  "agents_list", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn",
  "subagents", "session_status", "web_search", "web_fetch", "image", "pdf"];
const MEMORY_CORE = { id: "memory-core", tools: [{ name: "memory_search" }, { name: "memory_get" }] };


// resolveEffectiveEnableState of OpenClaw 2026.3.2 (dist/plugin-sdk/config-*.js:
// resolveEnableState and isBundledChannelEnabledByChannelConfig) for the stand-ins; a
// stand-in says whether OpenClaw bundles its plugin (`bundled`).
const BUNDLED_ENABLED_BY_DEFAULT = new Set(["device-pair", "phone-control", "talk-voice"]);

function pluginsEnabled(config, plugin) {
  const plugins = config.plugins ?? {};
  const id = plugin.id;
  if (plugins.enabled === false) return false;
  if ((plugins.deny ?? []).includes(id)) return false;
  const allow = plugins.allow ?? [];
  if (allow.length > 0 && !allow.includes(id)) return false;
  if (plugins.slots?.memory === id) return true;
  const entry = plugins.entries?.[id];
  if (entry?.enabled === true) return true;
  if (entry?.enabled === false) return false;
  if (plugin.bundled && !BUNDLED_ENABLED_BY_DEFAULT.has(id)) {
    const channel = config.channels?.[id];
    return !!channel && typeof channel === "object" && !Array.isArray(channel)
      && channel.enabled === true;
  }
  return true;
}

function resolveOne(rawConfig, plugins, ctx, loaded) {
  // as OpenClaw's loader hands the config on (session.mainKey is forced to "main"); `loaded`:
  // that already done (the timing mode loads once, as a gateway does)
  const config = loaded ?? oc.applySessionDefaults(rawConfig, { warn: () => {} });
  const sessionKey = ctx.session_key;
  const eff = oc.resolveEffectiveToolPolicy({ config, sessionKey, agentId: ctx.agent_id,
    modelProvider: ctx.model_provider, modelId: ctx.model_id });
  const groupPolicy = oc.resolveGroupToolPolicy({ config, sessionKey,
    spawnedBy: ctx.spawned_by, messageProvider: ctx.message_provider,
    groupId: ctx.group_id, groupSpace: ctx.group_space, groupChannel: ctx.group_channel,
    accountId: ctx.account_id, senderId: ctx.sender_id,
    senderName: ctx.sender_name, senderUsername: ctx.sender_username,
    senderE164: ctx.sender_e164 });
  const profilePolicy = oc.resolveToolProfilePolicy(eff.profile);
  const providerProfilePolicy = oc.resolveToolProfilePolicy(eff.providerProfile);
  const profileWith = oc.mergeAlsoAllowPolicy(profilePolicy, eff.profileAlsoAllow);
  const providerProfileWith = oc.mergeAlsoAllowPolicy(providerProfilePolicy,
    eff.providerProfileAlsoAllow);
  const subagentPolicy = oc.isSubagentSessionKey(sessionKey) && sessionKey
    ? oc.resolveSubagentToolPolicy(config, oc.getSubagentDepthFromSessionStore(sessionKey,
      { cfg: config }))
    : undefined;
  // Sandboxed: what OpenClaw's runtime status decides from the session key and the sandbox
  // mode (runEmbeddedAttempt -> resolveSandboxContext), or toolc's explicit sandboxed=true
  // (a caller that knows better); an explicit false cannot lift it.
  const sandboxed = ctx.sandboxed === true
    || oc.resolveSandboxRuntimeStatus({ cfg: config, sessionKey: ctx.session_key }).sandboxed;
  const sandboxTools = sandboxed
    ? oc.resolveSandboxToolPolicyForAgent(config, eff.agentId) : undefined;
  const execConfig = oc.resolveExecConfig({ cfg: config, agentId: eff.agentId });
  const applyPatch = execConfig.applyPatch;
  const modelProvider = ctx.model_provider;
  const applyPatchEnabled = !!applyPatch?.enabled && oc.isOpenAIProvider(modelProvider)
    && oc.isApplyPatchAllowedForModel({ modelProvider, modelId: ctx.model_id,
      allowModels: applyPatch?.allowModels });
  const tools = [...CODING, ...(applyPatchEnabled ? ["apply_patch"] : []), "exec", "process"]
    .map((name) => ({ name }));
  if (config.channels?.whatsapp) tools.push({ name: "whatsapp_login" });
  const coreTools = OPENCLAW_TOOLS.map((name) => ({ name }));
  tools.push(...coreTools);
  // resolvePluginTools, with stand-ins for the plugin registry
  const meta = new Map();
  if (config.plugins?.enabled !== false) {
    const allowlist = oc.normalizeAllowlist(oc.collectExplicitAllowlist([profilePolicy,
      providerProfilePolicy, eff.globalPolicy, eff.globalProviderPolicy, eff.agentPolicy,
      eff.agentProviderPolicy, groupPolicy, sandboxTools, subagentPolicy]));
    const existing = new Set(coreTools.map((t) => t.name));
    const existingNormalized = new Set([...existing].map((n) => oc.normalizeToolName(n)));
    for (const plugin of [MEMORY_CORE, ...plugins]) {
      if (!pluginsEnabled(config, plugin)) continue;
      if (existingNormalized.has(oc.normalizeToolName(plugin.id))) continue;
      for (const t of plugin.tools) {
        if (t.optional && !oc.isOptionalToolAllowed({ toolName: t.name, pluginId: plugin.id,
          allowlist })) continue;
        if (existing.has(t.name)) continue;
        existing.add(t.name);
        const tool = { name: t.name };
        meta.set(tool, { pluginId: plugin.id, optional: !!t.optional });
        tools.push(tool);
      }
    }
  }
  const warnings = [];
  const filtered = oc.applyOwnerOnlyToolPolicy(
    oc.applyMessageProviderToolPolicy(tools, ctx.message_provider),
    ctx.sender_is_owner === true);
  const result = oc.applyToolPolicyPipeline({
    tools: filtered, toolMeta: (tool) => meta.get(tool), warn: (m) => warnings.push(m),
    steps: [...oc.buildDefaultToolPolicyPipelineSteps({ profilePolicy: profileWith,
      profile: eff.profile, providerProfilePolicy: providerProfileWith,
      providerProfile: eff.providerProfile, globalPolicy: eff.globalPolicy,
      globalProviderPolicy: eff.globalProviderPolicy, agentPolicy: eff.agentPolicy,
      agentProviderPolicy: eff.agentProviderPolicy, groupPolicy, agentId: eff.agentId }),
    { policy: sandboxTools, label: "sandbox tools.allow" },
    { policy: subagentPolicy, label: "subagent tools.allow" }],
  });
  return { tools: result.map((t) => t.name), warnings };
}

// Messages in: resolveAgentRoute over the config as the loader hands it on
// (applySessionDefaults), then the tool policy of the routed run with what 2026.3.2's inbound
// run passes (pi-embedded: runEmbeddedPiAgent's agentId, sessionKey, messageProvider, groupId
// resolveGroupSessionKey(sessionCtx)?.id, groupSpace ctx.GroupSpace, the sender fields); the
// account is the route's (sessionCtx.AccountId, the account the channel received it on).
function routeOne(rawConfig, plugins, msg) {
  const config = oc.applySessionDefaults(rawConfig, { warn: () => {} });
  let route;
  try {
    route = oc.resolveAgentRoute({ cfg: config, channel: msg.channel, accountId: msg.account_id,
      peer: pair(msg.peer), parentPeer: pair(msg.parent_peer), guildId: msg.guild_id,
      teamId: msg.team_id, memberRoleIds: msg.member_role_ids ?? [] });
  } catch (err) {
    return { error_kind: err?.name ?? "Error", error: String(err?.message ?? err) };
  }
  const ctx = { agent_id: route.agentId, session_key: route.sessionKey,
    message_provider: route.channel, account_id: route.accountId };
  const [kind, id] = Array.isArray(msg.peer) ? msg.peer : [];
  if (kind === "group" || kind === "channel") {
    // From is "<channel>:<kind>:<id>", and on a gateway the channel's plugin is loaded, so the
    // channel is one of getGroupSurfaces() (core channels + plugin channel ids). The oracle
    // loads no channel plugin: the head is a surface that always is one (webchat), which
    // reads the id exactly as the channel's own head would (the tail, lowercased).
    const group = oc.resolveGroupSessionKey({ From: `webchat:${kind}:${id}`, ChatType: kind,
      Provider: route.channel });
    if (group?.id) ctx.group_id = group.id;
    const space = msg.guild_id ?? msg.team_id;
    if (space) ctx.group_space = space;
  }
  for (const key of ["sender_id", "sender_e164", "sender_username", "sender_name",
    "sender_is_owner", "model_provider", "model_id", "sandboxed"]) {
    if (msg[key] !== undefined && msg[key] !== null) ctx[key] = msg[key];
  }
  return { route: { agent_id: route.agentId, session_key: route.sessionKey,
    main_session_key: route.mainSessionKey, matched_by: route.matchedBy, channel: route.channel,
    account_id: route.accountId }, context: ctx, tools: resolveOne(rawConfig, plugins, ctx).tools };
}
function pair(value) {
  return Array.isArray(value) ? { kind: value[0], id: value[1] } : undefined;
}

function catalog() {
  const profiles = {};
  for (const name of ["minimal", "coding", "messaging", "full"]) {
    profiles[name] = oc.resolveToolProfilePolicy(name) ?? {};
  }
  const names = new Set([...CODING, "apply_patch", "exec", "process", ...OPENCLAW_TOOLS,
    "whatsapp_login", ...Object.values(oc.CORE_TOOL_GROUPS).flat()]);
  for (const t of oc.CORE_TOOL_DEFINITIONS) names.add(t.id);
  return { groups: oc.CORE_TOOL_GROUPS, profiles,
    ownerOnly: [...names].filter((n) => oc.isOwnerOnlyToolName(n)).sort(),
    // the rest of the release's target data (conformance/extract.py)
    release: JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version,
    definitions: oc.CORE_TOOL_DEFINITIONS.map((t) => ({ name: t.id, section: t.sectionId,
      description: t.description, profiles: [...(t.profiles ?? [])],
      openclawGroup: t.includeInOpenClawGroup === true })),
    subagentDeny: { always: [...oc.SUBAGENT_TOOL_DENY_ALWAYS],
      leaf: [...oc.SUBAGENT_TOOL_DENY_LEAF] },
    sandbox: { allow: [...oc.DEFAULT_TOOL_ALLOW], deny: [...oc.DEFAULT_TOOL_DENY] },
    maxSpawnDepth: defaultMaxSpawnDepth(),
    messageProviderDeny: oc.TOOL_DENY_BY_MESSAGE_PROVIDER };
}

// The default maxSpawnDepth, measured through resolveSubagentToolPolicy under an empty config:
// the first depth whose deny list carries the leaf-only tools.
function defaultMaxSpawnDepth() {
  const leaf = oc.SUBAGENT_TOOL_DENY_LEAF[0];
  for (let depth = 1; depth <= 64; depth++) {
    if (oc.resolveSubagentToolPolicy({}, depth).deny.includes(leaf)) return depth;
  }
  return null;
}

async function selfcheck(config, contexts) {
  const out = [];
  for (const ctx of contexts) {
    const mine = resolveOne(config, [], ctx).tools;
    const dir = fs.mkdtempSync(path.join(scratch, "agent-"));
    const real = oc.createOpenClawCodingTools({ config, sessionKey: ctx.session_key,
      agentId: ctx.agent_id, modelProvider: ctx.model_provider,
      modelId: ctx.model_id, messageProvider: ctx.message_provider,
      groupId: ctx.group_id, senderId: ctx.sender_id, senderIsOwner: ctx.sender_is_owner,
      agentDir: dir, workspaceDir: dir }).map((t) => t.name);
    out.push({ mine, real });
  }
  return out;
}

function timeContexts(rawConfig, plugins, contexts, iterations) {
  const config = oc.applySessionDefaults(rawConfig, { warn: () => {} });
  return timed(contexts, iterations, (ctx) => resolveOne(rawConfig, plugins, ctx, config));
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of rl) {
  if (!line.trim()) continue;
  let answer;
  try {
    const req = JSON.parse(line);
    if (req.op === "catalog") answer = catalog();
    else if (req.op === "selfcheck") answer = { results: await selfcheck(req.config, req.contexts) };
    else if (req.op === "route") {
      answer = { results: req.messages.map((m) => routeOne(req.config, req.plugins ?? [], m)) };
    }
    else if (req.op === "time") {
      answer = timeContexts(req.config, req.plugins ?? [], req.contexts, req.iterations ?? 200);
    }
    else answer = { results: req.contexts.map((c) => resolveOne(req.config, req.plugins ?? [], c)) };
  } catch (err) {
    answer = { error: String(err?.stack ?? err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}

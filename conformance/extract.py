"""``python -m conformance.extract``: each OpenClaw release's target data, read from its own code.

Starts each release's oracle (``oracle.mjs`` on Node 20 for 2026.3.2, ``oracle9.mjs`` on Node 24
for 2026.9.6; both installed by ``make conformance-setup``), asks it for its ``catalog`` (the
values come from the release's modules as they run, not from copied lists) and writes one JSON
file per release line to ``compiler/targets/data/openclaw-<major.minor>.json``, sorted keys, two
spaces, LF, final newline: the same bytes for the same release. ``--check`` compares instead of
writing and exits 1 on drift.

Fields (both releases unless marked):

``release``
    The npm version the data was read from (``package.json``), e.g. ``"2026.9.6"``.
``tools``
    The core tool catalog in the release's catalog order (``CORE_TOOL_DEFINITIONS``), each
    ``{"name", "section", "description", "profiles", "openclawGroup"}``: ``section`` the catalog
    section id (``group:<section>`` is its group), ``profiles`` the built-in profiles that list it,
    ``openclawGroup`` whether ``group:openclaw`` includes it (``includeInOpenClawGroup``). In
    2026.9 some catalog entries are built by bundled plugins (``browser``, ``canvas``,
    ``memory_*``, ``code_execution``, ``x_search``): see ``plugins`` and ``localModelLeanDeny``
    (2026.9) The tools ``experimental.localModelLean`` (per agent or ``agents.defaults``) removes
    unless an explicit allow entry names them (``LOCAL_MODEL_LEAN_DENY_TOOL_NAMES``).
``groupResolvers``
    (2026.9) The bundled channel plugins with their own group tool-policy resolver
    (``groups.resolveToolPolicy``): only ``telegram``; every other channel's ``groups`` map goes
    through the generic ``resolveChannelGroupToolsPolicy``.
``coreBuilt``.
``sections``
    (2026.9) Section id -> label, in order (``CORE_TOOL_SECTION_ORDER``).
``groups``
    ``CORE_TOOL_GROUPS``: group name -> member tool names, in catalog order, including
    ``group:openclaw``. ``group:plugins`` is not a catalog group (it is resolved at run time).
``profiles``
    Profile name -> ``{"allow": [...] | null, "deny": [...] | null}`` as
    ``resolveCoreToolProfilePolicy`` (2026.9) / ``resolveToolProfilePolicy`` (2026.3) returns it
    (``null`` = the key is absent). 2026.9's ``coding`` and ``messaging`` carry the
    ``bundle-mcp`` entry; ``full`` is ``allow: ["*"]`` in 2026.9 and no policy in 2026.3.
``ownerOnly``
    Sorted owner-only tool names: 2026.9's ``GATEWAY_OWNER_ONLY_CORE_TOOLS`` (removed only when the
    sender is known not to be the owner), 2026.3's names ``isOwnerOnlyToolName`` accepts among the
    catalog and channel tools (removed unless the sender is the owner).
``subagentDeny``
    ``{"always": [...], "leaf": [...]}``: ``SUBAGENT_TOOL_DENY_ALWAYS`` and
    ``SUBAGENT_TOOL_DENY_LEAF`` (the latter only for subagents that cannot spawn).
``sandbox``
    ``{"allow": [...], "deny": [...]}``: the sandbox defaults ``DEFAULT_TOOL_ALLOW`` /
    ``DEFAULT_TOOL_DENY`` (the deny list names channel ids too).
``maxSpawnDepth``
    The default ``agents.defaults.subagents.maxSpawnDepth``, measured through the release's own
    subagent policy (the first depth at which a subagent is a leaf under an empty config).
``messageProviderDeny``
    Message provider -> tools removed for it (``TOOL_DENY_BY_MESSAGE_PROVIDER``).
``messageProviderAllow``
    (2026.9) Message provider -> the only tools it keeps (``TOOL_ALLOW_BY_MESSAGE_PROVIDER``).
``gatewayHttpDeny``
    (2026.9) ``DEFAULT_GATEWAY_HTTP_TOOL_DENY``, the tools ``POST /tools/invoke`` denies by default.
``localModelLeanDeny``
    (2026.9) The tools ``experimental.localModelLean`` (per agent or ``agents.defaults``) removes
    unless an explicit allow entry names them (``LOCAL_MODEL_LEAN_DENY_TOOL_NAMES``).
``groupResolvers``
    (2026.9) The bundled channel plugins with their own group tool-policy resolver
    (``groups.resolveToolPolicy``): only ``telegram``; every other channel's ``groups`` map goes
    through the generic ``resolveChannelGroupToolsPolicy``.
``coreBuilt``
    (2026.9) The catalog tools OpenClaw's core builds (the catalog minus the bundled plugins'
    tools), in catalog order; ``runModeOnly`` those of them built only for kinds of runs a policy
    context does not describe (heartbeat, GitHub publication, task suggestions), ``hostOnly``
    those not built in a sandboxed run (``terminal``, ``portal``).
``outsideCatalog``
    (2026.9) Core tools OpenClaw builds that its catalog does not list (no section, group or
    profile; only ``*``-style entries reach them): ``transcripts``, built for a channel caller
    (a message channel and a sender id) unless ``transcripts.enabled`` is false.
``memorySlotDefault``
    (2026.9) The plugin the memory slot selects when ``plugins.slots.memory`` is unset
    (``DEFAULT_SLOT_BY_KEY.memory``): it is enabled although its manifest is not
    ``enabledByDefault``.
``parameters``
    (2026.9) Tool name -> its parameter schema (JSON Schema, as the tool object's
    ``parameters`` serialises), for every core and bundled-plugin tool, read from the tool
    objects the release's own ``createOpenClawCodingTools`` builds (bundled plugins loaded for
    real) under oracle9's schema probe: a config and run options that make each tool exist
    (media models, client capabilities, run-mode flags, the off-by-default bundled plugins, an
    xAI model and a placeholder key: see ``SCHEMA_PROBE_CONFIG`` in oracle9.mjs). Tools are
    built, never run; no network. Sorted by tool name; each schema keeps the release's own key
    order (a schema's ``properties`` order is what a model is shown). A schema that follows the
    deployment is the probe's: the ``message`` tool's ``action`` enum lists the actions of the
    configured channels (none in the probe: ``send``).
``parametersOptionalMarkers``
    (2026.9) Where the release's schemas carried TypeBox's ``"~optional": true`` property marker
    (``tool:/json/pointer``): TypeBox's own bookkeeping, not JSON Schema (a validator ignores
    it; toolc's OpenAI-strict cleaning would refuse strict mode over it). Each marked property is
    absent from its object's ``required`` (checked), so removing the marker changes no meaning:
    the extractor removes it and lists it here.
``parametersNotBuilt``
    (2026.9) Bundled-plugin tools the probe cannot build without outside state (``crabbox``
    needs its CLI's lease, ``onepassword`` a 1Password broker): no schema in ``parameters``.
``plugins``
    Bundled plugin id -> ``{"tools": [...], "optional": [...], "enabledByDefault": bool,
    "profiles": {tool: [profile...]}, "requires": {tool: ["auth:<provider>" | "config:<path>"]}}``:
    2026.9 from each bundled manifest (``contracts.tools``, ``toolMetadata``,
    ``enabledByDefault``), 2026.3 from each bundled extension's ``registerTool`` calls (names and
    ``optional: true``; 2026.3 manifests declare no tools), ``enabledByDefault`` there from
    OpenClaw's own default set. ``profiles`` / ``requires`` only list tools that have them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "compiler" / "targets" / "data"
RELEASES = {"2026.3": "2026.3.2", "2026.9": "2026.9.6"}
# 2026.3.2's bundled plugins enabled without configuration (its resolveEnableState), the same
# set oracle.mjs stands in for.
BUNDLED_ENABLED_2026_3 = ("device-pair", "phone-control", "talk-voice")


def setup(version: str) -> tuple[str, Path]:
    """The node binary and the installed package directory for a release."""
    node = "node"
    if not version.startswith("2026.3."):
        node = _run(["bash", str(HERE / "node.sh")])
    package = _run(["bash", str(HERE / "fetch.sh")], env_version=version)
    return node, Path(package)


def _run(cmd: list[str], env_version: str | None = None) -> str:
    env = dict(os.environ)
    if env_version:
        env["OPENCLAW_VERSION"] = env_version
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env)
    return out.stdout.strip().splitlines()[-1]


def _policy(p: Mapping[str, Any] | None) -> dict[str, Any]:
    p = p or {}
    return {"allow": p.get("allow") or None, "deny": p.get("deny") or None}


def ask(node: str, script: str, package: Path, op: str) -> dict[str, Any]:
    proc = subprocess.run([node, str(HERE / script), str(package)],
                          input=json.dumps({"op": op}) + "\n",
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          check=True, timeout=600)
    answer: dict[str, Any] = json.loads(proc.stdout.splitlines()[0])
    if "error" in answer:
        raise RuntimeError(f"{script} {op}: {answer['error']}")
    return answer


def parameters_2026_9(answer: Mapping[str, Any]) -> dict[str, Any]:
    """``parameters`` and ``parametersNotBuilt`` from oracle9's ``schemas`` answer."""
    if answer["conflicts"]:
        # one schema per tool: a tool whose schema followed the model provider would need a
        # per-provider field, which no 2026.9.6 tool does
        raise RuntimeError(f"schemas differ between probes: {answer['conflicts']}")
    markers: list[str] = []
    schemas = {name: _without_optional_markers(answer["schemas"][name], name, "", markers)
               for name in sorted(answer["schemas"])}
    return {"parameters": schemas, "parametersNotBuilt": sorted(answer["notBuilt"]),
            "parametersOptionalMarkers": sorted(markers)}


_OPTIONAL_MARKER = "~optional"


def _without_optional_markers(node: Any, tool: str, at: str, found: list[str]) -> Any:
    """``node`` without TypeBox's ``~optional`` markers; their pointers appended to ``found``."""
    if isinstance(node, list):
        return [_without_optional_markers(v, tool, f"{at}/{i}", found) for i, v in enumerate(node)]
    if not isinstance(node, dict):
        return node
    props = node.get("properties")
    if isinstance(props, dict):
        required = set(node.get("required") or ())
        for name, prop in props.items():
            if isinstance(prop, dict) and _OPTIONAL_MARKER in prop and name in required:
                raise RuntimeError(f"{tool}:{at}/properties/{name}: marked optional but required")
    out = {}
    for key, value in node.items():
        pointer = f"{at}/{key.replace('~', '~0').replace('/', '~1')}"
        if key == _OPTIONAL_MARKER:
            found.append(f"{tool}:{at}")
            continue
        out[key] = _without_optional_markers(value, tool, pointer, found)
    return out


def data_2026_9(cat: Mapping[str, Any]) -> dict[str, Any]:
    plugins = {}
    for p in cat["plugins"]:
        plugins[p["id"]] = {
            "tools": [t["name"] for t in p["tools"]],
            "optional": [t["name"] for t in p["tools"] if t["optional"]],
            "enabledByDefault": p["enabledByDefault"],
            "profiles": {t["name"]: t["profiles"] for t in p["tools"] if t["profiles"]},
            "requires": {t["name"]: t["requires"] for t in p["tools"] if t["requires"]},
        }
    harness = cat["harness"]
    plugin_owned = {t for p in plugins.values() for t in p["tools"]}
    return {
        "release": cat["release"],
        "tools": cat["tools"],
        "sections": cat["sections"],
        "groups": cat["groups"],
        "profiles": {name: _policy(p) for name, p in cat["profiles"].items()},
        "ownerOnly": sorted(cat["ownerOnly"]),
        "subagentDeny": cat["subagentDeny"],
        "sandbox": {"allow": cat["sandbox"]["allow"], "deny": cat["sandbox"]["deny"]},
        "maxSpawnDepth": cat["maxSpawnDepth"],
        "messageProviderDeny": cat["messageProviderDeny"],
        "messageProviderAllow": cat["messageProviderAllow"],
        "gatewayHttpDeny": cat["gatewayHttpDeny"],
        "localModelLeanDeny": cat["localModelLeanDeny"],
        "groupResolvers": cat["harness"]["groupResolvers"],
        "coreBuilt": [t["name"] for t in cat["tools"] if t["name"] not in plugin_owned],
        "runModeOnly": sorted(harness["runModeOnly"]),
        "hostOnly": sorted(harness["hostOnly"]),
        "outsideCatalog": sorted(harness["outsideCatalog"]),
        "plugins": plugins,
        "memorySlotDefault": cat["memorySlotDefault"],
    }


def plugins_2026_3(package: Path) -> dict[str, Any]:
    """2026.3.2's bundled plugins that register tools, from their TypeScript entry points."""
    out: dict[str, Any] = {}
    for index in sorted((package / "extensions").glob("*/index.ts")):
        text = index.read_text("utf-8")
        if "registerTool(" not in text:
            continue
        pid_match = re.search(r'\bid: "([a-z0-9-]+)"', text)
        manifest = index.parent / "openclaw.plugin.json"
        pid = json.loads(manifest.read_text("utf-8"))["id"] if manifest.exists() else (
            pid_match.group(1) if pid_match else index.parent.name)
        names = _registered_names(index.parent, text)
        if not names:
            continue
        optional = names if re.search(r"optional:\s*true", text) else []
        out[pid] = {"tools": names, "optional": optional,
                    "enabledByDefault": pid in BUNDLED_ENABLED_2026_3 or pid == "memory-core",
                    "profiles": {}, "requires": {}}
    return out


def _registered_names(folder: Path, index_text: str) -> list[str]:
    declared = re.search(r"names:\s*\[([^\]]*)\]", index_text)
    if declared:
        return re.findall(r'"([^"]+)"', declared.group(1))
    names = re.findall(r'\bname: "([a-z0-9_-]+)"', index_text)
    if names:
        return list(dict.fromkeys(names))
    # the tool factory's module (src/*tool*.ts) names the tool
    for src in sorted(folder.glob("src/*tool*.ts")):
        if src.name.endswith(".test.ts"):
            continue
        found = re.findall(r'\bname: "([a-z0-9_-]+)"', src.read_text("utf-8"))
        if found:
            return [found[0]]
    return []


def data_2026_3(cat: Mapping[str, Any], package: Path) -> dict[str, Any]:
    return {
        "release": cat["release"],
        "tools": cat["definitions"],
        "groups": cat["groups"],
        "profiles": {name: _policy(p) for name, p in cat["profiles"].items()},
        "ownerOnly": sorted(cat["ownerOnly"]),
        "subagentDeny": cat["subagentDeny"],
        "sandbox": cat["sandbox"],
        "maxSpawnDepth": cat["maxSpawnDepth"],
        "messageProviderDeny": cat["messageProviderDeny"],
        "plugins": plugins_2026_3(package),
    }


def render(data: Mapping[str, Any]) -> str:
    """Sorted keys throughout, except inside the tool schemas of ``parameters`` (release order)."""
    out = {key: _sorted(data[key]) for key in sorted(data)}
    if "parameters" in data:
        out["parameters"] = {name: data["parameters"][name] for name in sorted(data["parameters"])}
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def extract(line: str) -> dict[str, Any]:
    version = RELEASES[line]
    node, package = setup(version)
    if line == "2026.3":
        return data_2026_3(ask(node, "oracle.mjs", package, "catalog"), package)
    return {**data_2026_9(ask(node, "oracle9.mjs", package, "catalog")),
            **parameters_2026_9(ask(node, "oracle9.mjs", package, "schemas"))}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.extract", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--openclaw", choices=sorted(RELEASES), action="append",
                        help="release line (default: both)")
    parser.add_argument("--check", action="store_true", help="compare with disk, exit 1 on drift")
    args = parser.parse_args()
    drift = 0
    for line in args.openclaw or sorted(RELEASES):
        text = render(extract(line))
        path = DATA / f"openclaw-{line}.json"
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                print(f"{path}: differs from openclaw@{RELEASES[line]}", file=sys.stderr)
                drift = 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8", newline="\n")
        print(f"{path.relative_to(HERE.parent)}: openclaw@{RELEASES[line]}")
    return drift


if __name__ == "__main__":
    sys.exit(main())

"""The starter definitions of each target (``toolc init``, ``toolc import-openclaw``, ``toolc
migrate``), and ``python -m toolc.targets.starter [--check]``, which generates 2026.9's.

Each target's starter is package data in ``starter-<key>/``. 2026.3's is the core catalog
toolc shipped for OpenClaw 2026.3.2 (written by hand from that release and tested against it).
2026.9's is generated from the release's own data (``data/openclaw-2026.9.json``, read from its
code by ``python -m conformance.extract``): every tool of its catalog with its section groups,
``group:openclaw`` membership, owner-only flag and the bundled plugin that builds it (``browser``,
``canvas``, ``memory-core``, ``xai``), memory-core's ``intent``, and the built-in profiles. The
data carries each tool's parameter schema as the release's own factories build it (the
``parameters`` field): every tool gets that schema. A tool 2026.3 already had (under its 2026.3
name, see ``Target.renames``) keeps the 2026.3 starter's label, long description, wire names,
``externalContent`` flag and the Claude-Code parameter aliases whose canonical parameter the
release's schema still has at the top level (the others are listed in the generated header).
``--check`` exits 1 when the files on disk differ.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from . import NEWEST_KEY, target

# The files of a starter, relative to ``starter-<key>/`` (and to a project's definitions/).
STARTER_FILES: Mapping[str, tuple[str, ...]] = {
    "2026.3": ("catalog/10-core.yaml", "catalog/20-channels.yaml", "plugins/memory-core.yaml",
               "profiles.yaml", "providers.yaml"),
    "2026.9": ("catalog/10-core.yaml", "plugins/browser.yaml", "plugins/canvas.yaml",
               "plugins/memory-core.yaml", "plugins/xai.yaml", "profiles.yaml",
               "providers.yaml"),
}
# Bundled plugins whose tools the 2026.9 starter declares, and whether the starter enables
# them: xai's tools need xAI credentials (``requires``), so they are known names but off until
# the user turns the plugin on; memory-core is the default memory slot.
_PLUGINS_2026_9 = {"browser": None, "canvas": None, "memory-core": None, "xai": False}
# Profile entries that are no tool of the starter: ``bundle-mcp`` is the plugin id OpenClaw
# gives configured MCP servers (toolc imports those with ``toolc import-mcp``).
_PROFILE_ENTRIES_LEFT_OUT = ("bundle-mcp",)
_NEWEST = NEWEST_KEY


def starter_dir(key: str) -> Traversable:
    return resources.files("toolc.targets").joinpath(f"starter-{key}")


def starter_text(key: str, rel: str) -> str:
    """One file of a target's starter, as shipped."""
    node = starter_dir(key)
    for part in rel.split("/"):
        node = node.joinpath(part)
    return node.read_text("utf-8")


def _dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=96,
                          default_flow_style=False)


def _old_tools() -> dict[str, dict[str, Any]]:
    """2026.3's starter tools by name."""
    out: dict[str, dict[str, Any]] = {}
    for rel in STARTER_FILES["2026.3"]:
        data = yaml.safe_load(starter_text("2026.3", rel))
        for tool in data.get("catalog", []):
            out[tool["name"]] = tool
    return out


def _tool(entry: Mapping[str, Any], data: Mapping[str, Any], old: Mapping[str, Any] | None,
          plugin: str | None) -> dict[str, Any]:
    name = entry["name"]
    groups = [entry["section"]] if entry.get("section") else []
    if entry.get("openclawGroup"):
        groups.append("openclaw")
    tool: dict[str, Any] = {"name": name}
    tool["label"] = (old or {}).get("label") or name.replace("_", " ").title()
    tool["summary"] = entry["description"]
    tool["description"] = (old or {}).get("description") or entry["description"]
    if plugin:
        tool["plugin"] = plugin
    if groups:
        tool["groups"] = groups
    if name in data["ownerOnly"]:
        tool["ownerOnly"] = True
    if plugin and name in data["plugins"][plugin].get("optional", ()):
        tool["optional"] = True
    # externalContent describes what the tool returns, which the release's data does not hold:
    # 2026.9.6 still wraps web_fetch's text (wrapWebContent) and the browser's
    # (wrapBrowserExternalText), as 2026.3.2 did.
    for key in ("externalContent", "wireNames"):
        if old and key in old:
            tool[key] = old[key]
    parameters = data["parameters"].get(name)
    if parameters is None:
        # never an open object in place of the release's schema: the data must carry it
        raise ValueError(f"{name}: no parameter schema in the release data (parametersNotBuilt)")
    aliases = _kept_aliases((old or {}).get("paramAliases", {}), parameters)
    if aliases:
        tool["paramAliases"] = aliases
    tool["parameters"] = parameters
    return tool


def _kept_aliases(aliases: Mapping[str, str], parameters: Mapping[str, Any]) -> dict[str, str]:
    """2026.3's Claude-Code aliases that still name a top-level parameter of the release's
    schema (and are not parameters themselves); `dropped_aliases` lists the others."""
    props = parameters.get("properties") or {}
    return {a: c for a, c in aliases.items() if c in props and a not in props}


def dropped_aliases(data: Mapping[str, Any], renames: Mapping[str, str]) -> list[str]:
    """``tool.alias -> canonical`` for each 2026.3 alias the release's schema has no place for."""
    old_names = {new: old for old, new in renames.items()}
    old = _old_tools()
    out = []
    for name, parameters in sorted(data["parameters"].items()):
        aliases = old.get(old_names.get(name, name), {}).get("paramAliases", {})
        kept = _kept_aliases(aliases, parameters)
        out += [f"{name}.{a} -> {c}" for a, c in aliases.items() if a not in kept]
    return out


def _header(lines: list[str]) -> str:
    wrapped = textwrap.wrap(" ".join(lines), width=96, break_on_hyphens=False)
    return "version: 1\n\n" + "".join(f"# {line}\n" for line in wrapped)


def generate_2026_9() -> dict[str, str]:
    """The 2026.9 starter files ``{relative path: text}``, from the release's data."""
    tgt = target(_NEWEST)
    data = tgt.data
    release = data["release"]
    old_names = {new: old for old, new in tgt.renames.items()}
    old = _old_tools()
    catalog = {t["name"]: t for t in data["tools"]}
    core = [_tool(catalog[n], data, old.get(old_names.get(n, n)), None)
            for n in data["coreBuilt"]]
    # core tools outside the catalog (no section, group or profile): `transcripts`
    core += [_tool({"name": n, "description": f"{n} (a core tool outside the catalog)"}, data,
                   None, None) for n in data.get("outsideCatalog", [])]
    files = {"catalog/10-core.yaml": _header([
        f"OpenClaw {release}'s core tools in its catalog order (CORE_TOOL_DEFINITIONS minus the",
        "tools bundled plugins build: see plugins/). Generated by `python -m",
        "toolc.targets.starter` from compiler/targets/data/openclaw-2026.9.json; do not edit the",
        "starter copy in compiler/targets/starter-2026.9/ by hand. `groups` are the catalog",
        "sections (`openclaw` marks group:openclaw); `summary` is the release's own line.",
        "`parameters` are the release's own schemas (the tool objects its factories build);",
        "tools 2026.3 had keep that starter's label, description, wire names and the",
        "Claude-Code aliases whose parameter the release's schema still has (dropped:",
        f"{'; '.join(dropped_aliases(data, tgt.renames)) or 'none'}).",
        "Some of these are built only for some runs",
        f"(heartbeats, task suggestions: {', '.join(data.get('runModeOnly', []))}) or only",
        f"outside the sandbox ({', '.join(data.get('hostOnly', []))}). Last, the core tools",
        "the release builds outside its catalog (no group or profile names them:",
        f"{', '.join(data.get('outsideCatalog', []))}, built for channel callers).",
    ]) + "\n" + _dump({"catalog": core})}
    for plugin, enabled in _PLUGINS_2026_9.items():
        info = data["plugins"][plugin]
        tools = [_tool(catalog.get(n, {"name": n, "description": f"{plugin}: {n}"}), data,
                     old.get(old_names.get(n, n)), plugin) for n in info["tools"]]
        lines = [f"OpenClaw {release}'s bundled `{plugin}` plugin: its tools are plugin tools",
                 f"(`group:plugins` and the plugin id `{plugin}` cover them). Generated by",
                 "`python -m toolc.targets.starter`."]
        body: dict[str, Any] = {}
        if enabled is not None:
            needs = sorted({r for rs in info.get("requires", {}).values() for r in rs})
            lines += ["Off here: its tools need credentials OpenClaw checks at run time",
                      f"({', '.join(needs)}); set `enabled: true` where they are configured."]
            body["plugins"] = {"entries": {plugin: {"enabled": enabled}}}
        body["catalog"] = tools
        files[f"plugins/{plugin}.yaml"] = _header(lines) + "\n" + _dump(body)
    profiles: dict[str, Any] = {}
    for name, prof in data["profiles"].items():
        block = {k: [e for e in v if e not in _PROFILE_ENTRIES_LEFT_OUT]
                 for k, v in prof.items() if v is not None}
        profiles[name] = block
    files["profiles.yaml"] = _header([
        f"OpenClaw {release}'s built-in profiles, as resolveCoreToolProfilePolicy returns them",
        "(`full` allows `*`). Generated by `python -m toolc.targets.starter`; left out: "
        + ", ".join(f"`{e}`" for e in _PROFILE_ENTRIES_LEFT_OUT)
        + " (configured MCP servers).",
    ]) + "\n" + _dump({"profiles": profiles})
    files["providers.yaml"] = starter_text("2026.3", "providers.yaml")
    return files


def _write(root: Path, files: Mapping[str, str], check: bool) -> int:
    drift = []
    for rel, text in sorted(files.items()):
        path = root / rel
        if check:
            if not path.is_file() or path.read_text("utf-8") != text:
                drift.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    for rel in drift:
        print(f"{root.as_posix()}/{rel}: differs from the generated starter "
              "(run `python -m toolc.targets.starter`)", file=sys.stderr)
    return 1 if drift else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolc.targets.starter",
                                     description="Generate the OpenClaw 2026.9 starter.")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "starter-2026.9")
    args = parser.parse_args(argv)
    return _write(args.out, generate_2026_9(), args.check)


if __name__ == "__main__":
    sys.exit(main())

"""Reading an OpenClaw config as the gateway does, for ``toolc import-openclaw``: the file,
what kind of file it is (refusing exec-approvals files, plugin manifests, package.json, MCP
client configs and toolc definitions by name), and its ``$include`` directives.

``$include`` follows OpenClaw 2026.3.2's loader (dist/plugin-sdk/config-*.js, ``src/config/
includes.ts``): in any object, a string or an array of strings; paths relative to the
including file; every include inside the top config's directory, also after resolving
symbolic links; a regular file of at most 2 MiB with one link; at most 10 levels; a file
already on the chain is a cycle (refused); an array's files are deep-merged in order (objects
merge recursively, arrays concatenate, other values: the later wins); sibling keys are merged
over the included object, which must then be an object; ``__proto__``, ``prototype`` and
``constructor`` keys are skipped by the merge.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from .openclaw import ConfigError, _Dict, parse_config, path_text

INCLUDE_KEY = "$include"
MAX_INCLUDE_DEPTH = 10
MAX_INCLUDE_FILE_BYTES = 2 * 1024 * 1024
BLOCKED_KEYS = frozenset({"__proto__", "prototype", "constructor"})

# Top-level keys of an OpenClaw config (the zod schema of 2026.3.2, plus `mcp` of later
# releases): a JSON object with none of them is not a config.
CONFIG_KEYS = frozenset({
    "$schema", "meta", "env", "wizard", "diagnostics", "logging", "cli", "update", "browser",
    "ui", "secrets", "auth", "acp", "models", "nodeHost", "agents", "tools", "bindings",
    "broadcast", "audio", "media", "messages", "commands", "approvals", "session", "cron",
    "hooks", "web", "channels", "discovery", "canvasHost", "talk", "gateway", "memory",
    "skills", "plugins", "mcp", INCLUDE_KEY})


@dataclass(slots=True)
class LoadedConfig:
    config: dict[str, Any]
    included: list[str] = field(default_factory=list)  # relative to the config's directory


def what_else(data: dict[str, Any], name: str) -> str | None:
    """What a JSON object that is not an OpenClaw config is (None: it may be one)."""
    keys = set(data)
    if "version" in keys and ({"socket", "defaults"} & keys or _allowlists(data)):
        return "an OpenClaw exec-approvals file (~/.openclaw/exec-approvals.json)"
    if name == "openclaw.plugin.json" or ("id" in keys and keys & {"configSchema", "uiHints"}):
        return "an OpenClaw plugin manifest (openclaw.plugin.json)"
    if name == "package.json" or ("name" in keys and keys & {
            "dependencies", "devDependencies", "scripts", "main", "exports"}):
        return "an npm package.json"
    if keys & {"mcpServers", "servers"} and not keys & (CONFIG_KEYS - {"mcp"}):
        return "an MCP client config (mcpServers)"
    if "version" in keys and keys & {"catalog", "profiles", "groups", "providers",
                                     "assertions"}:
        return "toolc definitions (build them with `toolc build`)"
    if not keys & (CONFIG_KEYS - {"$schema"}):
        shown = ", ".join(sorted(keys)[:5]) or "none"
        return f"not an OpenClaw config (no OpenClaw top-level key; its keys: {shown})"
    return None


def _allowlists(data: dict[str, Any]) -> bool:
    agents = data.get("agents")
    return isinstance(agents, dict) and any(
        isinstance(a, dict) and "allowlist" in a for a in agents.values())


def load_config(path: Path, display: str) -> LoadedConfig:
    """The config at ``path`` with its includes resolved; ConfigError when it cannot be read,
    is another kind of file, or an include is refused (as OpenClaw refuses it)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{display}: cannot read ({exc.strerror or exc})") from exc
    data = parse_config(raw, display)
    other = what_else(data, path.name)
    if other is not None:
        raise ConfigError(f"{display}: this is {other}, not an OpenClaw config "
                          "(openclaw.json); nothing imported")
    root = Path(os.path.abspath(path)).parent
    loader = _Includes(root=root, real_root=Path(os.path.realpath(root)), display=display)
    config = loader.process(data, Path(os.path.abspath(path)), (Path(os.path.abspath(path)),),
                            ())
    if not isinstance(config, dict):
        raise ConfigError(f"{display}: the included content is not an object")
    return LoadedConfig(config=config, included=sorted(set(loader.included)))


@dataclass(slots=True)
class _Includes:
    root: Path
    real_root: Path
    display: str
    included: list[str] = field(default_factory=list)

    def process(self, node: Any, base: Path, chain: tuple[Path, ...],
                at: tuple[str | int, ...]) -> Any:
        if isinstance(node, list):
            return [self.process(v, base, chain, (*at, i)) for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        if INCLUDE_KEY not in node:
            out = _Dict((k, self.process(v, base, chain, (*at, k))) for k, v in node.items())
            out.duplicates = getattr(node, "duplicates", [])
            return out
        included = self.resolve(node[INCLUDE_KEY], base, chain, (*at, INCLUDE_KEY))
        rest = {k: v for k, v in node.items() if k != INCLUDE_KEY}
        if not rest:
            return included
        if not isinstance(included, dict):
            raise self.error(at, "sibling keys require the included content to be an object")
        processed = _Dict((k, self.process(v, base, chain, (*at, k))) for k, v in rest.items())
        processed.duplicates = getattr(node, "duplicates", [])
        return deep_merge(included, processed)

    def resolve(self, value: Any, base: Path, chain: tuple[Path, ...],
                at: tuple[str | int, ...]) -> Any:
        if isinstance(value, str):
            return self.load(value, base, chain, at)
        if isinstance(value, list):
            merged: Any = _Dict()
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    raise self.error((*at, i), "an $include array item must be a string")
                merged = deep_merge(merged, self.load(item, base, chain, (*at, i)))
            return merged
        raise self.error(at, "$include must be a string or an array of strings")

    def load(self, include: str, base: Path, chain: tuple[Path, ...],
             at: tuple[str | int, ...]) -> Any:
        target = Path(os.path.normpath(base.parent / include))
        if not _inside(self.root, target):
            raise self.error(at, f"include {include!r} escapes the config's directory "
                                 "(OpenClaw refuses it)")
        if os.path.exists(target) and not _inside(self.real_root,
                                                  Path(os.path.realpath(target))):
            raise self.error(at, f"include {include!r} resolves outside the config's directory "
                                 "through a symbolic link (OpenClaw refuses it)")
        if target in chain:
            names = " -> ".join(self.rel(p) for p in (*chain, target))
            raise self.error(at, f"circular $include: {names}")
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise self.error(at, f"$include nests deeper than {MAX_INCLUDE_DEPTH} levels")
        raw = self.read(include, target, at)
        self.included.append(self.rel(target))
        parsed = parse_config_value(raw, f"{self.display_dir()}{self.rel(target)}")
        return self.process(parsed, target, (*chain, target), at)

    def read(self, include: str, target: Path, at: tuple[str | int, ...]) -> bytes:
        # the real path (checked inside the root above), opened without following a link
        # swapped in since; non-blocking so that a FIFO cannot hang the import
        try:
            fd = os.open(os.path.realpath(target), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise self.error(at, f"cannot read include {include!r} "
                                 f"({exc.strerror or exc})") from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 \
                    or info.st_size > MAX_INCLUDE_FILE_BYTES:
                raise self.error(at, f"include {include!r} is not a regular file of at most "
                                     "2 MiB with a single link (OpenClaw refuses it)")
            with os.fdopen(os.dup(fd), "rb") as handle:
                return handle.read(MAX_INCLUDE_FILE_BYTES + 1)
        finally:
            os.close(fd)

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def display_dir(self) -> str:
        parent = Path(self.display).parent.as_posix()
        return "" if parent == "." else parent + "/"

    def error(self, at: tuple[str | int, ...], message: str) -> ConfigError:
        return ConfigError(f"{self.display}: {path_text(at) or INCLUDE_KEY}: {message}")


def parse_config_value(raw: bytes, display: str) -> Any:
    """An included file: any JSON5 value (an object where it has sibling keys)."""
    try:
        return parse_config(raw, display)
    except ConfigError as exc:
        if "an OpenClaw config is a JSON object" not in str(exc):
            raise
    return json5.loads(raw.decode("utf-8").removeprefix("\ufeff"))


def _inside(root: Path, target: Path) -> bool:
    return target == root or root in target.parents


def deep_merge(target: Any, source: Any) -> Any:
    """OpenClaw's ``deepMerge``: arrays concatenate, objects merge recursively, else source."""
    if isinstance(target, list) and isinstance(source, list):
        return [*target, *source]
    if isinstance(target, dict) and isinstance(source, dict):
        out = _Dict(target)
        out.duplicates = [*getattr(target, "duplicates", []), *getattr(source, "duplicates", [])]
        for key, value in source.items():
            if key in BLOCKED_KEYS:
                continue
            out[key] = deep_merge(out[key], value) if key in out else value
        return out
    return source

"""Stages 1-2: read a definitions directory into the document model, reporting every problem."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import json5
import jsonschema

from ..diagnostics import Diagnostic, Diagnostics, Pos, did_you_mean
from ..rules.channels import rule_for
from ..rules.names import normalize_agent_id, normalize_channel, normalize_key
from ..targets import KEYS, Target, keys, target
from ..targets.grammar import LOOSE_SENDER_KEYS, SenderKeyGrammar, SenderKind, js_trim
from .memo import UnitCache
from .model import (
    AccountDef,
    AgentDef,
    AssertionDef,
    Availability,
    BindingDef,
    ChannelDef,
    Definitions,
    Entry,
    EntryList,
    GroupConfig,
    GroupDef,
    PatternValue,
    PluginEntry,
    Policy,
    ProfileDef,
    ProviderDialect,
    ProviderPolicy,
    SenderRule,
    SessionDef,
    SpaceConfig,
    ToolDef,
    ToolsConfig,
)
from .schemagate import Check, compile_gate
from .workers import map_in_workers, worker_count
from .yamlsrc import JsonPath, SourceFile, discover, load_yaml, paused_gc

SUPPORTED_VERSION = 1


@cache
def definitions_schema() -> dict[str, Any]:
    text = resources.files("toolc").joinpath("definitions.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def read_tree(root: Path, diags: Diagnostics) -> dict[str, bytes] | None:
    """The bytes of every YAML file below ``root`` by relative path (sorted), read once: the
    build compiles exactly these bytes and ships them in ``sources/``. Reports what
    ``tree_paths`` reports."""
    paths = tree_paths(root, diags)
    if paths is None:
        return None
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in paths}


def tree_paths(root: Path, diags: Diagnostics) -> list[Path] | None:
    """Every YAML file below ``root`` in relative-path order; reports a missing or empty
    directory (None) and files that are not YAML."""
    display = root.as_posix().rstrip("/")
    if not root.is_dir():
        diags.error(Pos(file=display, line=1, col=1), "TC007",
                    "definitions directory does not exist")
        return None
    paths = discover(root)
    for other in ignored_files(root):
        pos = Pos(file=f"{display}/{other}", line=1, col=1)
        if is_openclaw_config(root / other):
            diags.error(pos, "TC010", "an OpenClaw config: definitions/ does not read it",
                        hint=f"turn it into definitions with `toolc import-openclaw "
                             f"{display}/{other} -o DIR`, then move the config (it holds "
                             f"tokens) out of {display}/")
            continue
        diags.warning(pos, "TC008", "not a *.yaml or *.yml file: ignored",
                      hint="JSON is YAML: rename it to .yaml if it holds definitions")
    if not paths:
        diags.error(Pos(file=display, line=1, col=1), "TC007",
                    "definitions directory holds no *.yaml or *.yml files")
        return None
    return paths


def read_sources(files: Mapping[str, bytes], display: str, diags: Diagnostics
                 ) -> tuple[list[SourceFile], bool]:
    """Load every file of ``files`` (sorted by relative path), checking encoding, syntax and
    version; positions name ``display/<relative path>``.

    Returns the mappings that loaded (also those with a version problem, so that their other
    errors are reported in the same run) and whether every file loaded.
    """
    sources = []
    complete = True
    for rel in sorted(files):
        src = load_yaml(files[rel], f"{display}/{rel}", diags)
        if src is None or not isinstance(src.data, dict):
            complete = False
        if src is not None:
            _check_version(src, diags)
            if isinstance(src.data, dict):
                sources.append(src)
    return sources, complete


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedFile:
    """One file through the per-file stages (load, version, structure, folded keys): the
    unit the incremental cache stores (``toolc.builds.cache``, kind ``file``)."""

    source: SourceFile | None  # None: not loadable, or not a mapping
    complete: bool  # loaded, and a mapping
    structural_ok: bool
    diagnostics: tuple[Diagnostic, ...]  # load, version and structure problems
    folded: tuple[Diagnostic, ...]  # TC126, reported once every file is structurally sound


# Files are loaded in worker processes when at least this many bytes are to be loaded.
PARALLEL_MIN_BYTES = 8 << 20


def _load_task(task: tuple[bytes, str]) -> LoadedFile:
    return load_one(*task)


def _load_all(files: Mapping[str, bytes], display: str, cache: UnitCache | None
              ) -> list[LoadedFile]:
    """``load_one`` of every file in path order: unchanged files from the cache, the others
    in worker processes (both cores) when there is much to read; each worker returns its
    files' values and positions, and the YAML node graphs stay in the workers."""
    rels = sorted(files)
    keys = [None if cache is None else
            cache.key("file", [f"{display}/{rel}", hashlib.sha256(files[rel]).hexdigest()])
            for rel in rels]
    loaded: list[LoadedFile | None] = [None] * len(rels)
    if cache is not None:
        for i, key in enumerate(keys):
            assert key is not None
            hit, value = cache.get(key)
            cache.stats.count("file", hit)
            loaded[i] = value if hit else None
    pending = [i for i, one in enumerate(loaded) if one is None]
    size = sum(len(files[rels[i]]) for i in pending)
    workers = worker_count(len(pending)) if size >= PARALLEL_MIN_BYTES else 1
    # largest first, so one big file does not run alone at the end
    order = sorted(pending, key=lambda i: -len(files[rels[i]]))
    tasks = [(files[rels[i]], f"{display}/{rels[i]}") for i in order]
    for i, one in zip(order, map_in_workers(_load_task, tasks, workers), strict=True):
        loaded[i] = one
        key = keys[i]
        if cache is not None and key is not None:
            cache.put(key, one)
    return [one for one in loaded if one is not None]


def load_one(raw: bytes, path: str) -> LoadedFile:
    """The per-file stages of ``load_files`` for one file (positions name ``path``)."""
    diags = Diagnostics()
    src = load_yaml(raw, path, diags)
    complete = src is not None and isinstance(src.data, dict)
    if src is not None:
        _check_version(src, diags)
    structural_ok = check_structure(src, diags) if src is not None and complete else True
    folded = Diagnostics()
    if src is not None and complete and structural_ok:
        check_folded_keys(src, folded)
    return LoadedFile(source=src if complete else None, complete=complete,
                      structural_ok=structural_ok, diagnostics=tuple(diags.items),
                      folded=tuple(folded.items))


# Top-level keys of an OpenClaw config (2026.3.2) that definitions never have.
OPENCLAW_ONLY_KEYS = frozenset({
    "gateway", "models", "auth", "session", "messages", "env", "hooks", "cron", "bindings",
    "identity", "logging", "routing", "skills", "browser", "ui", "talk", "commands", "wizard",
    "meta", "diagnostics", "update", "broadcast", "audio", "memory", "discovery",
    "canvasHost", "approvals", "nodeHost", "web", "$include"})
OPENCLAW_POLICY_KEYS = frozenset({"tools", "agents", "channels", "plugins"})


def is_openclaw_config(path: Path) -> bool:
    """A ``*.json5`` file, or a JSON(5) object without ``version`` that has OpenClaw's
    top-level keys: someone dropped their OpenClaw config into definitions/."""
    if path.suffix not in (".json", ".json5"):
        return False
    if path.suffix == ".json5":
        return True
    try:
        data = json5.loads(path.read_bytes()[:5_000_000].decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and "version" not in data and bool(
        set(data) & (OPENCLAW_ONLY_KEYS | OPENCLAW_POLICY_KEYS))


def ignored_files(root: Path) -> list[str]:
    """Files below ``root`` that are not definitions (hidden files and folders excepted)."""
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or rel.name.endswith("~"):
            continue
        if path.is_file() and path.suffix not in (".yaml", ".yml"):
            out.append(rel.as_posix())
    return sorted(out)


def _check_version(src: SourceFile, diags: Diagnostics) -> bool:
    """Report a missing or unsupported version; the file's other errors are still checked."""
    start = Pos(file=src.path, line=1, col=1)
    if not isinstance(src.data, dict):
        diags.error(start, "TC006", "a definitions file must be a mapping")
        return False
    if "version" not in src.data:
        diags.error(start, "TC101", "missing `version` key",
                    hint="start the file with `version: 1`")
        return False
    version = src.data["version"]
    if version != SUPPORTED_VERSION or isinstance(version, bool):
        diags.error(src.pos(("version",)), "TC101", f"unsupported version {version!r}",
                    hint=f"this toolc reads version {SUPPORTED_VERSION}")
        return False
    return True


@cache
def _ecma(pattern: str) -> re.Pattern[str]:
    """A JSON Schema pattern with ECMA-262's meaning of a final ``$`` (end of the string;
    Python's ``$`` also matches before a final newline, which let ``"exec\\n"`` through)."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any
             ) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not _ecma(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_StrictPatterns = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, {"pattern": _pattern})


def _release_schema(releases: tuple[str, ...]) -> dict[str, Any]:
    """The shipped schema with ``openclaw`` naming every registered release (the shipped
    ones, which the file lists for editors, and any stub a test registers)."""
    schema = definitions_schema()
    props = dict(schema["properties"])
    props["openclaw"] = {**props["openclaw"], "enum": list(releases)}
    return {**schema, "properties": props}


@cache
def _validator(releases: tuple[str, ...] = KEYS) -> Any:
    # The shipped schema uses $defs for editors; validating with every $ref inlined once
    # avoids a reference lookup per node (the schema has no recursion).
    schema = _release_schema(releases)
    return _StrictPatterns(_inline(schema, schema["$defs"]))


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@cache
def _gate(releases: tuple[str, ...] = KEYS) -> Check:
    schema = _release_schema(releases)
    return compile_gate(_inline(schema, schema["$defs"]), _ecma)


def check_structure(src: SourceFile, diags: Diagnostics) -> bool:
    """Validate one file against the shipped JSON Schema; every error gets its position."""
    if _gate(keys())(src.data):
        return True  # valid (the gate is exact): nothing for jsonschema to report
    return _schema_errors(src, diags)


def _schema_errors(src: SourceFile, diags: Diagnostics) -> bool:
    """``check_structure`` by ``jsonschema``, whose errors say what is wrong and where."""
    validator = _validator(keys())
    ok = True
    for err in validator.iter_errors(src.data):
        if list(err.absolute_path) == ["version"] or (
                err.validator == "required" and not err.absolute_path
                and "version" not in src.data and err.validator_value == ["version"]):
            continue  # reported by _check_version (TC101)
        ok = False
        _report_schema_error(src, err, diags)
    return ok


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
             dict: "object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _path_text(path: JsonPath) -> str:
    text = ""
    for p in path:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "the file"


def _report_schema_error(src: SourceFile, err: jsonschema.ValidationError,
                         diags: Diagnostics) -> None:
    path: JsonPath = tuple(err.absolute_path)
    where = _path_text(path)
    schema: dict[str, Any] = err.schema if isinstance(err.schema, dict) else {}
    instance: Any = err.instance
    expected: Any = err.validator_value
    if err.validator == "additionalProperties":
        known = list(schema.get("properties", {}))
        shaped = _shaped_channel(path)
        for key in instance:
            if key not in known:
                diags.error(src.kpos((*path, key)), "TC110", f'unknown key "{key}" in {where}',
                            hint=shaped or did_you_mean(key, known)
                            or f"known keys: {', '.join(known)}")
        return
    if err.validator == "propertyNames":
        key = str(instance)
        diags.error(src.kpos((*path, key)), "TC114", f'invalid name "{key}" in {where}',
                    hint=f"names must match {schema.get('pattern')}")
        return
    pos = src.pos(path)
    if err.validator == "type":
        diags.error(pos, "TC111",
                    f"{where}: expected {expected}, got {_json_type(instance)}")
    elif err.validator == "required":
        missing = [k for k in expected if k not in instance]
        diags.error(pos, "TC112", f"{where}: missing required key \"{missing[0]}\"")
    elif err.validator in ("enum", "const"):
        allowed = expected if err.validator == "enum" else [expected]
        diags.error(pos, "TC113", f"{where}: {instance!r} is not one of "
                    + ", ".join(json.dumps(a) for a in allowed),
                    hint=did_you_mean(instance, map(str, allowed))
                    if isinstance(instance, str) else None)
    elif err.validator == "pattern":
        diags.error(pos, "TC114", f"{where}: {instance!r} does not match {expected}")
    elif err.validator == "oneOf" and "x-message" in schema:
        diags.error(pos, "TC119", f"{where}: {schema['x-message']}")
    else:
        diags.error(pos, "TC119", f"{where}: {err.message}")


def _shaped_channel(path: JsonPath) -> str | None:
    """A channel key spelled other than OpenClaw's id loses its own shape (``Slack:``)."""
    if len(path) != 2 or path[0] != "channels" or not isinstance(path[1], str):
        return None
    name = normalize_key(path[1])
    if name != path[1] and rule_for(name).map_key != "groups":
        return f'write the key as "{name}" (OpenClaw\'s channel id) to use its shape'
    return None


# Top-level keys that several files may hold: `catalog` and `assertions` lists are
# concatenated; `plugins` entries are merged (a plugin file declares its own entry beside its
# tools), each plugin id and `plugins.enabled` in one file only; `channels` are merged, each
# channel in one file only (a file per channel keeps the incremental cache's units small).
REPEATABLE = frozenset({"catalog", "assertions", "plugins", "channels"})
# `openclaw` may be said in every file, as long as the files agree (TC105).
AGREEING = frozenset({"openclaw"})


def merge_sections(sources: list[SourceFile],
                   diags: Diagnostics) -> dict[str, list[tuple[SourceFile, Any]]]:
    """Top-level key -> its (file, value) definitions; only ``catalog``, ``assertions``,
    ``plugins`` and ``channels`` may repeat (``plugins`` and ``channels`` without conflicts
    between files: see ``_plugin_conflicts`` and ``_channel_conflicts``)."""
    sections: dict[str, list[tuple[SourceFile, Any]]] = {}
    for src in sources:
        for key, value in src.data.items():
            if key == "version":
                continue
            if key in AGREEING and key in sections:
                first_src, first_value = sections[key][0]
                if value != first_value:
                    diags.error(src.pos((key,)), "TC105",
                                f"{key}: {value!r} here but {first_value!r} at "
                                f"{first_src.pos((key,))}",
                                hint="every definitions file that names the OpenClaw release "
                                     "must name the same one")
                continue
            if key not in REPEATABLE and key in sections:
                first = sections[key][0][0].kpos((key,))
                diags.error(src.kpos((key,)), "TC103",
                            f'top-level key "{key}" is already defined at {first}',
                            hint="only `catalog`, `assertions`, `plugins` and `channels` may "
                                 "appear in more than one file")
                continue
            if key == "plugins" and not _plugin_conflicts(sections.get(key, []), src, diags):
                continue
            kept = (_channel_conflicts(sections.get(key, []), src, diags)
                    if key == "channels" else value)
            sections.setdefault(key, []).append((src, kept))
    return sections


def _channel_folded(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().casefold()


def _channel_conflicts(earlier: list[tuple[SourceFile, Any]], src: SourceFile,
                       diags: Diagnostics) -> dict[str, Any]:
    """``src``'s channels less those another file already defines (TC103, naming both
    places; compared as TC126 compares keys): one channel, accounts and all, lives in one
    file, so a large deployment can keep a file per channel."""
    seen = {_channel_folded(name): (other, name)
            for other, value in earlier for name in value}
    kept: dict[str, Any] = {}
    for name, block in src.data["channels"].items():
        first = seen.get(_channel_folded(name))
        if first is None:
            kept[name] = block
            continue
        other, other_name = first
        diags.error(src.kpos(("channels", name)), "TC103",
                    f'channel "{name}" is already defined at '
                    f'{other.kpos(("channels", other_name))}',
                    hint="a channel lives in one file; merge the two definitions")
    return kept


def _plugin_conflicts(earlier: list[tuple[SourceFile, Any]], src: SourceFile,
                      diags: Diagnostics) -> bool:
    """Report what ``src``'s ``plugins`` repeats from other files (TC103, naming both
    places); False when there is any conflict (its section is then ignored)."""
    ok = True
    data = src.data["plugins"]
    for other, other_data in earlier:
        if "enabled" in data and "enabled" in other_data:
            diags.error(src.kpos(("plugins", "enabled")), "TC103",
                        "plugins.enabled is already set at "
                        f"{other.kpos(('plugins', 'enabled'))}",
                        hint="set it in one file; plugin entries may be spread over files")
            ok = False
        theirs = {k.strip().lower(): k for k in other_data.get("entries", {})}
        for key in data.get("entries", {}):
            if key.strip().lower() in theirs:
                first = other.kpos(("plugins", "entries", theirs[key.strip().lower()]))
                diags.error(src.kpos(("plugins", "entries", key)), "TC103",
                            f'plugin "{key}" is already declared at {first}',
                            hint="declare each plugin in one file (its plugin file)")
                ok = False
    return ok


class _Builder:
    """Turns structurally valid sections into the typed document model."""

    def __init__(self, src: SourceFile, *, senders: SenderKeyGrammar = LOOSE_SENDER_KEYS
                 ) -> None:
        self.src = src
        self.sender_keys = senders  # the target's toolsBySender key grammar

    def entry_list(self, value: Any, path: JsonPath) -> EntryList | None:
        if value is None:
            return None
        items = tuple(Entry(text=t, pos=self.src.pos((*path, i))) for i, t in enumerate(value))
        return EntryList(items=items, pos=self.src.pos(path))

    def policy(self, value: dict[str, Any], path: JsonPath) -> Policy:
        return Policy(allow=self.entry_list(value.get("allow"), (*path, "allow")),
                      also_allow=self.entry_list(value.get("alsoAllow"), (*path, "alsoAllow")),
                      deny=self.entry_list(value.get("deny"), (*path, "deny")),
                      pos=self.src.pos(path))

    def assertion(self, value: dict[str, Any], path: JsonPath) -> AssertionDef:
        kind: Literal["never", "always"] = "never" if "never" in value else "always"
        body, p = value[kind], (*path, kind)
        tools = body.get("tools", body.get("tool"))
        tkey = "tools" if "tools" in body else "tool"
        items = [tools] if isinstance(tools, str) else tools
        entries = tuple(Entry(text=t, pos=self.src.pos((*p, tkey) if isinstance(tools, str)
                                                       else (*p, tkey, i)))
                        for i, t in enumerate(items))
        where: dict[str, PatternValue] = {}
        for key, v in body.items():
            if key in ("tools", "tool"):
                continue
            where[key] = (v if isinstance(v, bool) or v == "*" else
                          (v,) if isinstance(v, str) else tuple(v))
        parts = [f"{tkey}: " + (json.dumps(tools) if isinstance(tools, str)
                                else "[" + ", ".join(items) + "]")]
        parts += [f"{k}: {json.dumps(v) if not isinstance(v, list) else '[' + ', '.join(v) + ']'}"
                  for k, v in body.items() if k not in ("tools", "tool")]
        return AssertionDef(kind=kind, pos=self.src.kpos(p), tools=entries, where=where,
                            field_pos={k: self.src.pos((*p, k)) for k in body},
                            text=f"{kind} {{{', '.join(parts)}}}", because=value.get("because"))

    def profile_ref(self, value: dict[str, Any], path: JsonPath) -> Entry | None:
        if "profile" not in value:
            return None
        return Entry(text=value["profile"], pos=self.src.pos((*path, "profile")))

    def by_provider(self, value: dict[str, Any], path: JsonPath) -> tuple[ProviderPolicy, ...]:
        out: dict[str, ProviderPolicy] = {}
        for key, block in value.items():
            p = (*path, key)
            # Keys that normalize equal: the last one wins (CLASSIC).
            out[normalize_key(key)] = ProviderPolicy(
                key=normalize_key(key), key_pos=self.src.kpos(p),
                profile=self.profile_ref(block, p), policy=self.policy(block, p))
        return tuple(out.values())

    def tools_config(self, value: dict[str, Any], path: JsonPath) -> ToolsConfig:
        sandbox = value.get("sandbox", {}).get("tools", {})
        sb_path = (*path, "sandbox", "tools")
        subagents = value.get("subagents", {}).get("tools")
        exec_block = value.get("exec", {})
        apply_patch = exec_block.get("applyPatch")
        models = (apply_patch or {}).get("allowModels")
        ex_path = (*path, "exec")
        return ToolsConfig(
            profile=self.profile_ref(value, path),
            policy=self.policy(value, path),
            by_provider=self.by_provider(value.get("byProvider", {}), (*path, "byProvider")),
            sandbox_allow=self.entry_list(sandbox.get("allow"), (*sb_path, "allow")),
            sandbox_deny=self.entry_list(sandbox.get("deny"), (*sb_path, "deny")),
            subagents=(None if subagents is None
                       else self.policy(subagents, (*path, "subagents", "tools"))),
            apply_patch_set=apply_patch is not None,
            apply_patch_enabled=(apply_patch or {}).get("enabled"),
            # blank entries match nothing but still make the list non-empty (2026.3.2)
            apply_patch_models=None if models is None else tuple(normalize_key(m) for m in models),
            exec_host=self.exec_value(exec_block, ex_path, "host"),
            exec_security=self.exec_value(exec_block, ex_path, "security"),
            exec_ask=self.exec_value(exec_block, ex_path, "ask"),
            exec_allowlist=self.entry_list(exec_block.get("allowlist"), (*ex_path, "allowlist")),
            by_sender=self.senders(value.get("toolsBySender", {}), (*path, "toolsBySender")),
            sandbox_also_allow=self.entry_list(sandbox.get("alsoAllow"), (*sb_path, "alsoAllow")),
            exec_mode=self.exec_value(exec_block, ex_path, "mode"),
        )

    def exec_value(self, block: dict[str, Any], path: JsonPath, key: str) -> Entry | None:
        if key not in block:
            return None
        return Entry(text=block[key], pos=self.src.pos((*path, key)))

    def tool(self, value: dict[str, Any], path: JsonPath) -> ToolDef:
        avail = value.get("availability")
        return ToolDef(
            name=value["name"], label=value.get("label", value["name"]),
            summary=value.get("summary", value["description"].strip().split("\n")[0]),
            description=value["description"], groups=tuple(value.get("groups", ())),
            parameters=value["parameters"], owner_only=value.get("ownerOnly") is True,
            plugin=value.get("plugin"), optional=value.get("optional") is True,
            channel=normalize_key(value["channel"]) if "channel" in value else None,
            availability=None if avail is None else Availability(
                providers=_keyset(avail.get("providers")), models=_keyset(avail.get("models")),
                channels=_keyset(avail.get("channels")),
                exclude_channels=_keyset(avail.get("excludeChannels"))),
            param_aliases=tuple(value.get("paramAliases", {}).items()),
            wire_names=tuple(value.get("wireNames", {}).items()),
            external_content=value.get("externalContent") is True,
            upstream_sha256=value.get("upstreamSha256"),
            pos=self.src.pos(path))

    def group_map(self, value: dict[str, Any], path: JsonPath) -> tuple[GroupConfig, ...]:
        # JS key order: OpenClaw's case-folded and slug passes take the first key in it
        return tuple(self.group(gid, block, (*path, gid)) for gid, block in js_key_order(value))

    def senders(self, value: dict[str, Any], path: JsonPath) -> tuple[SenderRule, ...]:
        written = {key: index for index, key in enumerate(value)}
        return tuple(self.sender(key, block, (*path, key), written[key])
                     for key, block in js_key_order(value))

    def group(self, gid: str, value: dict[str, Any], path: JsonPath) -> GroupConfig:
        senders = self.senders(value.get("toolsBySender", {}), (*path, "toolsBySender"))
        tools = value.get("tools")
        return GroupConfig(id=gid, pos=self.src.kpos(path), senders=senders,
                           tools=None if tools is None else self.policy(tools, (*path, "tools")))

    def sender(self, key: str, value: dict[str, Any], path: JsonPath, index: int) -> SenderRule:
        kind, sender, channel = sender_key(self.sender_keys, key)
        return SenderRule(kind=kind, value=sender, key=key, index=index,
                          pos=self.src.kpos(path), policy=self.policy(value, path),
                          channel=channel)

    def channel(self, name: str, value: dict[str, Any], path: JsonPath) -> ChannelDef:
        """A channel in OpenClaw's own shape: its rule names the map (``groups``, Slack's
        ``channels``, Discord's ``guilds``)."""
        with paused_gc():  # a large channel is a million small objects, no cycles
            return self._channel(name, value, path)

    def _channel(self, name: str, value: dict[str, Any], path: JsonPath) -> ChannelDef:
        channel = normalize_key(name)
        rule = rule_for(channel)
        key = rule.map_key
        if rule.kind == "nested":
            guilds = value.get(key)
            spaces = None if guilds is None else tuple(
                self.space(gid, block, (*path, key, gid), rule.inner_key)
                for gid, block in js_key_order(guilds))
            return ChannelDef(name=channel, pos=self.src.kpos(path), accounts=(), groups=None,
                              spaces=spaces)
        groups = value.get(key)
        accounts = tuple(
            AccountDef(id=acc, pos=self.src.kpos((*path, "accounts", acc)),
                       groups=None if key not in block else
                       self.group_map(block[key], (*path, "accounts", acc, key)))
            for acc, block in value.get("accounts", {}).items())
        return ChannelDef(name=channel, pos=self.src.kpos(path), accounts=accounts,
                          groups=None if groups is None
                          else self.group_map(groups, (*path, key)))

    def binding(self, value: dict[str, Any], path: JsonPath, index: int) -> BindingDef:
        """One route binding, its values as OpenClaw 2026.9.6's ``resolveAgentRoute`` reads
        them (``normalizeBindingMatch``): the channel lowercased, ids and the account trimmed,
        an empty roles list as none."""
        match = value["match"]
        peer = match.get("peer")
        roles = match.get("roles")
        session = value.get("session", {})
        account = match.get("accountId")
        return BindingDef(
            agent_id=normalize_agent_id(value["agentId"]),
            agent_pos=self.src.pos((*path, "agentId")),
            channel=js_trim(match["channel"]).lower(),
            account=js_trim(account) if account is not None else None,
            peer_kind=peer["kind"] if peer is not None else None,
            peer_id=js_trim(str(peer["id"])) if peer is not None else None,
            guild_id=js_trim(match["guildId"]) or None if "guildId" in match else None,
            team_id=js_trim(match["teamId"]) or None if "teamId" in match else None,
            roles=tuple(roles) if roles else None,
            dm_scope=session.get("dmScope"), group_scope=session.get("groupScope"),
            index=index, pos=self.src.pos(path))

    def space(self, gid: str, value: dict[str, Any], path: JsonPath, inner: str) -> SpaceConfig:
        channels = value.get(inner)
        return SpaceConfig(entry=self.group(gid, value, path), slug=value.get("slug"),
                           channels=None if channels is None
                           else self.group_map(channels, (*path, inner)))


def js_key_order(mapping: dict[str, Any]) -> list[tuple[str, Any]]:
    """Items in the order OpenClaw sees them: a JavaScript object lists integer-like keys
    (array indices such as ``"42"``) first, ascending, then the others in source order. It
    decides which of two keys that normalize equal wins (``42`` before ``id:42``)."""
    def index(key: str) -> int | None:
        if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0"):
            number = int(key)
            return number if number < 2**32 - 1 else None
        return None

    if not any(k[:1].isdigit() for k in mapping):
        return list(mapping.items())  # no key is an index (most maps): source order
    numbered = sorted((index(k), k) for k in mapping if index(k) is not None)
    ordered = [k for _, k in numbered] + [k for k in mapping if index(k) is None]
    return [(k, mapping[k]) for k in ordered]


def sender_key(senders: SenderKeyGrammar, key: str) -> tuple[SenderKind, str, str | None]:
    """What a ``toolsBySender`` key names under a target's grammar (``target.senders``): the
    sender's kind and value, and a typed key's channel with its alias resolved."""
    parsed = senders.parse(key)
    channel = normalize_channel(parsed.channel) if parsed.channel is not None else None
    return parsed.kind, parsed.value, channel


def _keyset(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(normalize_key(v) for v in values if v.strip())


def _one(sections: dict[str, list[tuple[SourceFile, Any]]], key: str, *,
         senders: SenderKeyGrammar = LOOSE_SENDER_KEYS) -> Iterator[_Builder]:
    for src, _ in sections.get(key, [])[:1]:
        yield _Builder(src, senders=senders)


def _release(sections: dict[str, list[tuple[SourceFile, Any]]]) -> Target:
    """The target the ``openclaw`` key names (structure checks passed: a known value)."""
    return target(next((value for _, value in sections.get("openclaw", [])[:1]), None))


def _agents(sections: dict[str, list[tuple[SourceFile, Any]]], senders: SenderKeyGrammar
            ) -> tuple[list[AgentDef], Pos | None, int | None, str | None, dict[str, Any]]:
    """The roster (``agents.list``, or 2026.9's ``agents.entries`` map in JavaScript key order;
    both when a file has both, TC107/TC108 report it), where it is, and the defaults."""
    agents: list[AgentDef] = []
    roster_pos: Pos | None = None
    defaults: dict[str, Any] = {}
    for b in _one(sections, "agents", senders=senders):
        data = b.src.data["agents"]
        defaults = data.get("defaults", {})
        rosters: list[tuple[Literal["list", "entries"], list[tuple[str | int, Any]]]] = []
        if "list" in data:
            rosters.append(("list", list(enumerate(data["list"]))))
        if "entries" in data:
            rosters.append(("entries", list(js_key_order(data["entries"]))))
        for kind, items in rosters:
            roster_pos = roster_pos or b.src.kpos(("agents", kind))
            for i, (key, agent) in enumerate(items):
                ap: JsonPath = ("agents", kind, key)
                agents.append(AgentDef(
                    id=normalize_agent_id(agent["id"] if kind == "list" else str(key)),
                    pos=b.src.pos((*ap, "id")) if kind == "list" else b.src.kpos(ap),
                    tools=(b.tools_config(agent["tools"], (*ap, "tools"))
                           if "tools" in agent else None),
                    default=agent.get("default") is True,
                    sandbox_mode=agent.get("sandbox", {}).get("mode"),
                    roster=kind, index=i,
                    local_model_lean=agent.get("experimental", {}).get("localModelLean")))
    max_depth = defaults.get("subagents", {}).get("maxSpawnDepth")
    return agents, roster_pos, max_depth, defaults.get("sandbox", {}).get("mode"), defaults


# Mappings whose keys OpenClaw compares case-insensitively (or after lowercasing): two keys
# that fold equal would silently drop one key's rules, deny lists included.
_FOLDED_MAPS: tuple[tuple[str | None, ...], ...] = (
    ("channels",), ("channels", None, "accounts"), ("tools", "byProvider"),
    ("agents", "list", None, "tools", "byProvider"), ("providers", "entries"),
    ("plugins", "entries"),
)


def check_folded_keys(src: SourceFile, diags: Diagnostics) -> None:
    """Keys of one mapping that differ only in case, spacing or Unicode form (TC126)."""
    for shape in _FOLDED_MAPS:
        for path, mapping in _walk(src.data, shape, ()):
            first: dict[str, str] = {}
            for key in mapping:
                folded = unicodedata.normalize("NFKC", key).strip().casefold()
                if folded in first:
                    other = src.kpos((*path, first[folded]))
                    diags.error(src.kpos((*path, key)), "TC126",
                                f'key "{key}" differs only in case or spacing from '
                                f'"{first[folded]}" (defined at {other})',
                                hint="OpenClaw would apply only one of them; merge the two")
                else:
                    first[folded] = key


def _walk(node: Any, shape: tuple[str | None, ...], path: JsonPath
          ) -> Iterator[tuple[JsonPath, dict[str, Any]]]:
    """The mappings at ``shape`` below ``node`` (None: every key or index)."""
    if not shape:
        if isinstance(node, dict):
            yield path, node
        return
    step, rest = shape[0], shape[1:]
    if step is None:
        items: list[tuple[str | int, Any]] = (list(node.items()) if isinstance(node, dict)
                                               else list(enumerate(node))
                                               if isinstance(node, list) else [])
        for key, child in items:
            yield from _walk(child, rest, (*path, key))
    elif isinstance(node, dict) and step in node:
        yield from _walk(node[step], rest, (*path, step))


def check_release_keys(sources: list[SourceFile], current: Target, diags: Diagnostics) -> None:
    """Keys only another OpenClaw release reads (TC107): its config shapes mean nothing to the
    release these definitions follow (its loader would refuse them), so they are errors."""
    for other in (target(k) for k in keys() if k != current.key):
        for shape in other.config_keys:
            if shape in current.config_keys:
                continue
            for src in sources:
                for path, _ in _walk_keys(src.data, shape, ()):
                    diags.error(src.kpos(path), "TC107",
                                f"{_path_text(path)} is read by OpenClaw {other.key} only; "
                                f"these definitions follow OpenClaw {current.key}",
                                hint=f'add `openclaw: "{other.key}"` to a definitions file to '
                                     f"follow OpenClaw {other.key}"
                                     + (f" (`toolc migrate --openclaw {other.key}` rewrites "
                                        "the project)" if other.renames else ""))
        for shape, value in other.config_values:
            if (shape, value) in current.config_values:
                continue
            for src in sources:
                for path, found in _walk_keys(src.data, shape, ()):
                    if found == value:
                        diags.error(src.pos(path), "TC107",
                                    f"{_path_text(path)}: {value!r} is read by OpenClaw "
                                    f"{other.key} only; these definitions follow OpenClaw "
                                    f"{current.key}",
                                    hint=f'add `openclaw: "{other.key}"` to a definitions file '
                                         f"to follow OpenClaw {other.key}")


def _walk_keys(node: Any, shape: tuple[str | None, ...], path: JsonPath
               ) -> Iterator[tuple[JsonPath, Any]]:
    """The values at ``shape`` below ``node`` (None: every key or index), the last step a
    key that is present."""
    if len(shape) == 1:
        key = shape[0]
        if key is not None and isinstance(node, dict) and key in node:
            yield (*path, key), node[key]
        return
    for parent, child in _walk(node, shape[:-1], path):
        yield from _walk_keys(child, shape[-1:], parent)


def build_model(sources: list[SourceFile], sections: dict[str, list[tuple[SourceFile, Any]]],
                root: str) -> Definitions:
    """Assemble the document model from structurally valid sections."""
    tools: list[ToolDef] = []
    for src, catalog in sections.get("catalog", []):
        b = _Builder(src)
        tools.extend(b.tool(t, ("catalog", i)) for i, t in enumerate(catalog))

    groups: tuple[GroupDef, ...] = ()
    for b in _one(sections, "groups"):
        data = b.src.data["groups"]
        groups = tuple(GroupDef(name=k, pos=b.src.kpos(("groups", k)),
                                members=b.entry_list(v, ("groups", k)).items)  # type: ignore[union-attr]
                       for k, v in data.items())
    profiles: dict[str, ProfileDef] = {}
    for b in _one(sections, "profiles"):
        for name, block in b.src.data["profiles"].items():
            p = ("profiles", name)
            profiles[name] = ProfileDef(name=name, pos=b.src.kpos(p),
                                        allow=b.entry_list(block.get("allow"), (*p, "allow")),
                                        deny=b.entry_list(block.get("deny"), (*p, "deny")))
    plugins_enabled, plugin_entries = True, list[PluginEntry]()
    for src, data in sections.get("plugins", []):
        if "enabled" in data:
            plugins_enabled = data["enabled"] is not False
        plugin_entries.extend(
            PluginEntry(id=k.strip().lower(), enabled=v.get("enabled", True) is not False,
                        pos=src.kpos(("plugins", "entries", k)))
            for k, v in data.get("entries", {}).items())
    default_dialect, dialects = None, tuple[ProviderDialect, ...]()
    for b in _one(sections, "providers"):
        data = b.src.data["providers"]
        default_dialect = data.get("default")
        dialects = tuple(ProviderDialect(key=normalize_key(k), dialect=v["dialect"],
                                         pos=b.src.kpos(("providers", "entries", k)))
                         for k, v in data.get("entries", {}).items())
    senders = _release(sections).senders
    tools_config = ToolsConfig(policy=Policy(pos=Pos(file="<builtin>", line=0, col=0)))
    for b in _one(sections, "tools", senders=senders):
        tools_config = b.tools_config(b.src.data["tools"], ("tools",))
    agents, roster_pos, max_depth, sandbox_mode, defaults = _agents(sections, senders)
    # several files may hold channels (each channel in one file), in file order
    channels = tuple(_Builder(src, senders=senders).channel(name, block, ("channels", name))
                     for src, value in sections.get("channels", [])
                     for name, block in value.items())
    assertions = [_Builder(src).assertion(item, ("assertions", i))
                  for src, items in sections.get("assertions", []) for i, item in enumerate(items)]
    return Definitions(
        assertions=tuple(assertions),
        files=tuple(s.path.removeprefix(root + "/") for s in sources), tools=tuple(tools),
        groups=groups,
        profiles=profiles, plugins_enabled=plugins_enabled, plugin_entries=tuple(plugin_entries),
        default_dialect=default_dialect, provider_dialects=dialects, tools_config=tools_config,
        agents=tuple(agents), max_spawn_depth=max_depth, channels=channels,
        sandbox_mode=sandbox_mode,
        session_scope=next((b.src.data["session"].get("scope") for b in _one(sections, "session")),
                           None),
        session=next((_session(b) for b in _one(sections, "session")), SessionDef()),
        bindings=tuple(b.binding(item, ("bindings", i), i) for b in _one(sections, "bindings")
                       for i, item in enumerate(b.src.data["bindings"])),
        openclaw=next((b.src.data["openclaw"] for b in _one(sections, "openclaw")), None),
        openclaw_pos=next((b.src.pos(("openclaw",)) for b in _one(sections, "openclaw")),
                          Pos(file=sources[0].path, line=1, col=1) if sources else None),
        agents_ownership=next((b.src.data["agents"].get("ownership")
                               for b in _one(sections, "agents")), None),
        roster_pos=roster_pos,
        local_model_lean=defaults.get("experimental", {}).get("localModelLean"))


def _session(b: _Builder) -> SessionDef:
    """``session``: scope, and 2026.9's routing settings (identityLinks in JavaScript key
    order, the order OpenClaw tries them in)."""
    data = b.src.data["session"]
    links = data.get("identityLinks")
    return SessionDef(
        scope=data.get("scope"), dm_scope=data.get("dmScope"), group_scope=data.get("groupScope"),
        identity_links=None if links is None else tuple(
            (k, tuple(v)) for k, v in js_key_order(links)),
        pos=b.src.kpos(("session",)))


def load_definitions(root: Path, diags: Diagnostics, cache: UnitCache | None = None
                     ) -> Definitions | None:
    """Read, check the structure of, and model a definitions directory (``cache``: the
    per-file stages come from the incremental cache where the file is unchanged)."""
    files = read_tree(root, diags)
    if files is None:
        return None
    return load_files(files, root.as_posix().rstrip("/"), diags, cache)


def load_files(files: Mapping[str, bytes], display: str, diags: Diagnostics,
               cache: UnitCache | None = None) -> Definitions | None:
    """Check the structure of, and model, definitions given as ``{relative path: bytes}``
    (a directory's files, or a build's ``sources.json``); positions name ``display/...``.

    Structural problems in any file stop here (after reporting all of them), because the
    semantic checks that follow would only add confusing follow-on errors.
    """
    loaded = _load_all(files, display, cache)
    for one in loaded:
        diags.extend(one.diagnostics)
    sources = [one.source for one in loaded if one.source is not None]
    complete = all(one.complete for one in loaded)
    structural_ok = all(one.structural_ok for one in loaded)
    if not complete or not structural_ok or not sources:
        return None
    for one in loaded:
        diags.extend(one.folded)
    # A section defined twice is reported and its second definition ignored: that cannot
    # cause follow-on errors, so the semantic checks still run in the same pass.
    sections = merge_sections(sources, diags)
    check_release_keys(sources, _release(sections), diags)
    defs = build_model(sources, sections, display)
    digests = {f"{display}/{rel}": hashlib.sha256(raw).hexdigest()
               for rel, raw in files.items()}
    # Every file loaded as UTF-8 (or load_yaml reported it), so decoding cannot fail here.
    return replace(defs, texts={rel: raw.decode("utf-8") for rel, raw in sorted(files.items())},
                   unit_base=unit_base(sources, digests, defs), file_digests=digests)


# Top-level keys a file may hold beside ``channels`` and still leave the other channels' cache
# entries valid when it changes (their values go into the key, not the file's bytes).
_CHANNEL_FILE_KEYS = frozenset({"version", "openclaw", "channels"})


def unit_base(sources: list[SourceFile], digests: Mapping[str, str], defs: Definitions) -> str:
    """What every channel's compiled tables depend on besides the channel itself: every file
    without a ``channels`` section byte for byte; of a file with one, its other top-level
    values (a file that holds more than channels counts whole); the channels' names (tool
    availability reads them). Positions inside other channels never reach a channel's
    tables, so editing one channel file leaves the others' entries valid."""
    h = hashlib.sha256()
    for src in sorted(sources, key=lambda s: s.path):
        if "channels" in src.data and set(src.data) <= _CHANNEL_FILE_KEYS:
            rest = {k: v for k, v in src.data.items() if k != "channels"}
            part = "json:" + json.dumps(rest, sort_keys=True, ensure_ascii=False)
        else:
            part = "sha256:" + digests[src.path]
        h.update(f"{src.path}\0{part}\0".encode())
    h.update("\0".join(sorted(ch.name for ch in defs.channels)).encode())
    return h.hexdigest()

"""Serve a build over MCP (``toolc serve-mcp``), its bearer-token identities (``toolc identity
add``) and MCP servers' tools as catalog YAML (``toolc import-mcp``). Everything that needs the
MCP SDK is imported when called: without the extra ``toolc[mcp]`` a call raises
MissingExtraError, which names it."""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from ..builds.read import BuildError, read_build_file, read_manifest
from ..rules.context import ignored_group
from ..runtime._errors import UntrustedGroupError
from ..serve import mcp_identity
from ..serve.options import ServeOptionError, ServeOptions

# The optional extras (pyproject's [project.optional-dependencies]) and what each brings.
EXTRAS: Final = {"mcp": "the MCP Python SDK, anyio, starlette and uvicorn",
                  "sign": "pyjwt and cryptography",
                  "oci": "oras, pyjwt and cryptography",
                  "metrics": "prometheus-client, for serve-mcp's /metrics",
                  "otel": "opentelemetry-sdk, for decision-log spans"}


class MissingExtraError(Exception):
    """An optional extra of toolc is missing or broken: a usage problem (the CLI exits 2)."""


class McpError(Exception):
    """Serving or importing failed: the port is taken, an upstream is unreachable, or
    (``strict``) a context names an agent the build lacks (the CLI exits 1)."""


def extra_module(command: str, name: str, extra: str = "mcp") -> ModuleType:
    """``toolc.<name>``, or MissingExtraError naming the extra when anything its import chain
    needs is missing or too old (any ImportError from outside toolc itself)."""
    try:
        return importlib.import_module(f"toolc.{name}")
    except ImportError as exc:
        missing = exc.name or ""
        if missing == "toolc" or missing.startswith("toolc."):
            raise  # toolc's own module is missing: a broken install, reported as internal
        what = f"module {missing!r} is missing" if isinstance(exc, ModuleNotFoundError) and \
            missing else f"importing it failed ({exc})"
        raise MissingExtraError(
            f"toolc {command} needs the optional extra toolc[{extra}] ({EXTRAS[extra]}), and "
            f"{what}: install it with {install_hint(extra)}") from exc


def install_hint(extra: str) -> str:
    """The pip command that adds ``extra`` to this very install: from the git ref, wheel or
    checkout it came from (pip's ``direct_url.json``), never a bare index name."""
    generic = (f"pip install 'toolc[{extra}] @ git+<repo-url>@<ref>' (or "
               f"pip install '<toolc wheel>[{extra}]')")
    # A source tree's toolc.egg-info can shadow the installed record on sys.path: take the
    # first record pip wrote its origin into.
    texts = (d.read_text("direct_url.json") for d in metadata.distributions(name="toolc"))
    try:
        origin = json.loads(next((t for t in texts if t), ""))
    except ValueError:
        return generic
    url = origin.get("url") if isinstance(origin, dict) else None
    if not isinstance(url, str):
        return generic
    vcs = origin.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("commit_id"), str):
        return f"pip install 'toolc[{extra}] @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}'"
    local = url.removeprefix("file://")
    if isinstance(origin.get("dir_info"), dict) and origin["dir_info"].get("editable"):
        return f"pip install -e '{local}[{extra}]'"
    return f"pip install '{local}[{extra}]'"


def upstream_specs(command: str, values: tuple[str, ...] | list[str]) -> list[Any]:
    """``NAME=COMMAND`` / ``NAME=URL`` values parsed (``UpstreamSpec``), each NAME once;
    ServeOptionError (option ``upstreams``) otherwise."""
    upstream = extra_module(command, "serve.mcp_upstream")
    try:
        specs = [upstream.UpstreamSpec.parse(v) for v in values]
    except ValueError as exc:
        raise ServeOptionError(str(exc), "upstreams") from exc
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ServeOptionError("each upstream NAME may be given once", "upstreams")
    return specs


def serve_mcp(build_dir: Path = Path("build"), **options: Any) -> None:
    """Serve the build's tools over MCP until stdin closes (stdio) or until interrupted
    (``http="[HOST:]PORT"``, which needs ``identities``, the bearer-token file; over HTTP
    each request's token gives its context, so ``context`` must be empty). The keywords are
    ``ServeOptions``' fields (``serve_with`` takes the value itself). ``impl`` and ``hooks`` are
    ``MODULE:ATTR``; ``upstreams`` are ``NAME=COMMAND`` or ``NAME=URL``. ``verify_key`` (a
    public key file, toolc[sign]) refuses any build not signed by it, at start and at every
    reload, before a byte of it runs; ``watch`` (``oci://REF``, toolc[oci]) pulls new builds
    of REF into ``build_dir`` every ``watch_interval`` seconds (one worker polls for all
    those sharing ``build_dir``). As ``toolc serve-mcp``: raises MissingExtraError,
    ServeOptionError, BuildError (no build; SignatureError, an unsigned or wrongly signed
    one) or McpError. ``decision_log``: a file to append one JSON line per decision to
    (rotated), senders hashed with the key in ``decision_log_key`` (created when missing;
    else a random key per process). Over HTTP ``/metrics`` is served (with toolc[metrics]),
    behind the bearer tokens unless ``metrics_public``. Over HTTP, ``workers`` processes
    serve the port, sharing sessions and per-identity limits; ``http_stack`` is ``"lean"``
    (toolc's own ASGI app) or ``"sdk"`` (the MCP SDK's, one worker only: its sessions live
    in its process)."""
    options["context"] = options.get("context") or {}
    options["upstreams"] = tuple(options.get("upstreams", ()))
    serve_with(ServeOptions(build_dir=Path(build_dir), **options))


def serve_with(options: ServeOptions) -> None:
    """``serve_mcp`` with its options as one value (checked when it was made): what they
    name is loaded (each by the module that uses it), then the server runs."""
    server = extra_module("serve-mcp", "serve.mcp_server")
    loaded = _server_options(server, options)
    server.setup_logging()
    unavailable = extra_module("serve-mcp", "serve.mcp_upstream").UpstreamUnavailable
    try:
        server.run(loaded, options.address)
    except (unavailable, server.ServeError) as exc:  # an upstream, the port, --strict
        raise McpError(str(exc)) from exc
    finally:
        loaded.observer.close()


def _server_options(server: ModuleType, options: ServeOptions) -> Any:
    """The server's own options (``mcp_server.Options``): the identities file, the
    implementations and hooks imported, the signature check, the registry poller, the
    upstreams parsed, the limits and the observer, each refused with the reason when it
    cannot be used."""
    identity = extra_module("serve-mcp", "serve.mcp_identity")
    context, identities = options.context, options.identities
    try:
        # over stdio, the context is checked as an identity's is (a message, or resolve's)
        context = identity.check_context(context, "the context") if context else {}
        ids = identity.IdentitySource(identities) if identities is not None else None
        impl_source = server.import_attr(options.impl) if options.impl else None
        hooks_source = server.import_attr(options.hooks) if options.hooks else None
    except (identity.IdentitiesError, ValueError, ImportError, AttributeError) as exc:
        raise ServeOptionError(str(exc)) from exc
    build_dir = options.build_dir
    verify, key = _verifier(options.verify_key)
    poller = _poller(options.watch, build_dir, key)
    read_manifest(build_dir)  # BuildError now, with the reason, when there is no build
    specs = upstream_specs("serve-mcp", options.upstreams)
    limits = extra_module("serve-mcp", "serve.mcp_http").Limits(
        options.max_sessions_per_identity, options.max_inflight_per_identity)
    return server.Options(
        build_dir=build_dir, context=context, identities=ids, impls=impl_source,
        hooks=hooks_source, upstreams=specs, reload_interval=options.reload_interval,
        strict=options.strict, limits=limits, verify=verify, poller=poller,
        watch_interval=options.watch_interval, observer=_observer(options),
        workers=options.workers, http_stack=options.http_stack)


def _observer(options: ServeOptions) -> Any:
    """Decision logs and metrics (``serve.observe``): ``--metrics-public`` needs the extra
    toolc[metrics]; a decision-log key that cannot be read is refused."""
    observe = extra_module("serve-mcp", "serve.observe")
    if options.metrics_public:  # asked for by name: a missing extra is an error, not a warning
        try:
            importlib.import_module("prometheus_client")
        except ImportError as exc:
            raise MissingExtraError(
                "toolc serve-mcp --metrics-public needs the optional extra toolc[metrics] "
                f"({EXTRAS['metrics']}): install it with {install_hint('metrics')}") from exc
    metrics = observe.metrics_or_none(True) if options.http is not None else None
    observer = observe.Observer(decision_log=options.decision_log,
                                key_file=options.decision_log_key, metrics=metrics,
                                metrics_public=options.metrics_public)
    if options.decision_log_key is not None:
        try:
            observe.read_key(options.decision_log_key)
        except observe.ObserveError as exc:
            raise ServeOptionError(str(exc)) from exc
    return observer


def add_identity(path: Path, name: str, context: Mapping[str, Any] | None = None, *,
                 request: Mapping[str, Any] | None = None,
                 build_dir: Path | None = Path("build")) -> str:
    """Append identity ``name`` for a new bearer token to the identities file ``path``
    (created when missing) and return the token (only its sha256 is stored), as ``toolc
    identity add``. The identity stands for ``context`` (``resolve``'s keywords) or for the
    message-level ``request`` (``toolc_runtime.Request``'s fields, stored as they are;
    peers as ``KIND:ID`` or a ``(kind, id)`` pair), which serve-mcp routes as OpenClaw routes
    the message.

    A context naming a group the build's release would ignore (OpenClaw 2026.9: a
    ``group_id``, ``group_space`` or ``group_channel`` its session key does not name) is
    refused with UntrustedGroupError: served, it would get the tools without the group's
    restrictions. The release is read from ``build_dir``; without a build there, the
    group is refused (2026.9's rule; pass the build a 2026.3 project serves, or
    ``build_dir=None`` for no check). IdentitiesError for a malformed name, context or file."""
    if request is not None:
        if context:
            raise mcp_identity.IdentitiesError("give a context or a message-level request, "
                                               "not both")
        return mcp_identity.add_identity(path, name, dict(request))
    context = dict(context or {})
    if build_dir is not None and _ignores_untrusted_groups(build_dir):
        found = ignored_group(*(_text(context.get(k)) for k in (
            "session_key", "spawned_by", "group_id", "group_space", "group_channel")))
        if found is not None:
            raise UntrustedGroupError(*found, session_key=_text(context.get("session_key")))
    return mcp_identity.add_identity(path, name, context)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None  # a wrong type: refused by the file check


def _ignores_untrusted_groups(build_dir: Path) -> bool:
    """Whether the build's release ignores a group its session key does not name (2026.9's
    ``resolveTrustedGroupId``); True without a readable build there."""
    try:
        manifest = read_manifest(build_dir)
        tables = json.loads(read_build_file(build_dir, f"{manifest['package']}/tables.json",
                                            manifest))
        return bool(tables["target"]["group_id_needs_session"])
    except (BuildError, ValueError, KeyError, TypeError):
        return True


def _verifier(key_file: Path | None) -> tuple[Any, Any]:
    """``--verify-key``: (a check of a build directory returning its verified files, the
    public key), or (None, None). The key is read now: a bad one fails the start."""
    if key_file is None:
        return None, None
    signing = extra_module("serve-mcp", "ship.signing", "sign")
    key = signing.load_public_key(key_file)
    return (lambda build_dir: signing.verify(build_dir, key).files), key


def _poller(watch: str | None, build_dir: Path, key: Any) -> Any:
    """``--watch oci://REF``: the registry poller; when ``build_dir`` holds no build yet,
    the first pull happens now (and fails the start with the reason)."""
    if watch is None:
        return None
    oci = extra_module("serve-mcp", "ship.oci", "oci")
    try:
        poller = oci.Poller(watch, build_dir, key)
        if not (build_dir / "manifest.json").exists():  # workers starting together: one
            oci.pull(watch, build_dir, key=key)  # installs it, the others find it there
    except oci.RegistryError as exc:
        raise McpError(f"--watch {watch}: {exc}") from exc
    return poller


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportedTools:
    """What ``import_mcp`` wrote: the catalog file, the plugin and its number of tools."""

    path: Path
    plugin: str
    count: int


def import_mcp(upstream: str, out: Path | None = None,
               definitions: Path = Path("definitions")) -> ImportedTools:
    """Snapshot the tools/list of the MCP server ``upstream`` (``NAME=COMMAND`` or
    ``NAME=URL``) into catalog YAML (plugin NAME, schemas verbatim) at ``out`` (default:
    ``definitions/plugins/NAME.yaml``). As ``toolc import-mcp``: raises MissingExtraError,
    ServeOptionError (option ``upstreams``) or McpError (the server is unreachable)."""
    mod = extra_module("import-mcp", "serve.mcp_upstream")
    spec = upstream_specs("import-mcp", (upstream,))[0]
    try:
        text, count = mod.snapshot(spec)
    except mod.UpstreamUnavailable as exc:
        raise McpError(str(exc)) from exc
    path = out or definitions / "plugins" / f"{spec.name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return ImportedTools(path=path, plugin=spec.name, count=count)

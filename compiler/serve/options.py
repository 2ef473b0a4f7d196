"""What ``toolc serve-mcp`` is asked for, as one typed value checked when it is made.

``ServeOptions`` holds the options as given (paths, ``MODULE:ATTR`` and ``NAME=...`` strings,
numbers); its constructor refuses the ones that cannot be used or cannot go together, with the
message the CLI prints. The CLI (``toolc.cli.serve``) and the API (``toolc.api.serve_mcp``) both
build it; ``toolc.api.serve_with`` then loads what it names (identities, implementations, hooks,
upstreams, keys) into the server's own options (``mcp_server.Options``), each checked by the
module that loads it. Standard library only: it is made before anything needs the extra
toolc[mcp].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

HTTP_STACKS: Final = ("lean", "sdk")  # toolc's lean ASGI app, or the MCP SDK's (one worker)


class ServeOptionError(ValueError):
    """Options that cannot go together or cannot be used (the CLI exits 2); ``option`` names
    the parameter when one value is wrong (``http``, ``upstreams``), else it is None."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


def host_port(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (HOST: 127.0.0.1); ServeOptionError (option ``http``) otherwise."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise ServeOptionError(f"{value!r}: expected HOST:PORT or PORT", "http")
    return host or "127.0.0.1", number


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    """The options of ``toolc serve-mcp`` (see ``toolc.api.serve_mcp`` for each one's
    meaning); ServeOptionError when made with options that cannot be used."""

    build_dir: Path = Path("build")
    context: Mapping[str, Any] = field(default_factory=dict)  # over stdio: who calls
    http: str | None = None  # [HOST:]PORT
    identities: Path | None = None  # with http: the bearer-token file
    impl: str | None = None  # MODULE:ATTR
    hooks: str | None = None  # MODULE:ATTR
    upstreams: tuple[str, ...] = ()  # NAME=COMMAND or NAME=URL
    reload_interval: float = 1.0
    strict: bool = False
    max_sessions_per_identity: int = 16
    max_inflight_per_identity: int = 8
    verify_key: Path | None = None
    watch: str | None = None  # oci://REF
    watch_interval: float = 30.0
    decision_log: Path | None = None
    decision_log_key: Path | None = None
    metrics_public: bool = False
    workers: int = 1
    http_stack: str = "lean"

    def __post_init__(self) -> None:
        _check_transport(self)
        _check_workers(self)
        if self.decision_log_key is not None and self.decision_log is None:
            raise ServeOptionError("--decision-log-key is for --decision-log")
        if self.http is not None and self.context:
            raise ServeOptionError("over --http the identities file gives each request's "
                                   "context; drop the context flags")
        if self.http is not None:
            host_port(self.http)
        if self.watch is not None and not self.watch.startswith("oci://"):
            raise ServeOptionError(f"{self.watch!r}: expected oci://REGISTRY/REPO:TAG", "watch")

    @property
    def address(self) -> tuple[str, int] | None:
        """Where to serve HTTP (host, port); None: stdio."""
        return None if self.http is None else host_port(self.http)


def _check_transport(options: ServeOptions) -> None:
    """HTTP takes its callers from the identities file, stdio from the context."""
    if options.http is not None and options.identities is None:
        raise ServeOptionError("--http needs --identities (toolc identity add makes one)")
    if options.http is None and options.identities is not None:
        raise ServeOptionError("--identities is for --http (over stdio the flags give the "
                               "context)")
    if options.metrics_public and options.http is None:
        raise ServeOptionError("--metrics-public is for --http (/metrics is an HTTP path)")


def _check_workers(options: ServeOptions) -> None:
    """Several workers serve one HTTP port, with the lean stack (the SDK's keeps its sessions
    in its process)."""
    if options.workers < 1:
        raise ServeOptionError("--workers must be at least 1", "workers")
    if options.workers > 1 and options.http is None:
        raise ServeOptionError("--workers is for --http (stdio serves one client)")
    if options.http_stack not in HTTP_STACKS:
        raise ServeOptionError(f"{options.http_stack!r}: expected lean or sdk", "http_stack")
    if options.http_stack == "sdk" and options.workers > 1:
        raise ServeOptionError("--http-stack sdk serves one worker (the SDK keeps its sessions "
                               "in its process); use the lean stack for --workers")

"""What ``toolc serve-mcp`` tells its operators: decision logs and Prometheus metrics.

Each loaded build gets a ``DecisionLog`` of its own runtime (``decision_log``), writing to the
sinks this process shares across reloads: the ``--decision-log`` file (rotated) and, with
``--http``, the metrics below. The sender key is read from ``--decision-log-key`` at every
build load (rotation: write a new key into the file; lines say ``sender_key_id``); without
the option each process makes a random key.

``/metrics`` (Prometheus text; the extra ``toolc[metrics]``, prometheus-client):

- ``toolc_tool_calls_total{tool,verdict,layer}``: calls, allowed or refused, by the layer that
  refused (``""`` when allowed);
- ``toolc_tool_refusals_total{tool,layer}``: the refused ones alone;
- ``toolc_tool_lists_total``: tool lists answered;
- ``toolc_approvals_pending`` and ``toolc_approvals_total{outcome}``: exec approvals;
- ``toolc_reloads_total{outcome}``: new builds served (``ok``) or refused (``refused``);
- ``toolc_build_info{digest,target}``: the build being served (the manifest's sha256).

Label values come from the build only, so no client can add series: ``tool`` is a tool of
the build that logged the call, or ``(unknown)`` for a name it does not have (whatever a
client asked for; the decision log keeps the name); ``layer`` is a layer label of the
build's provenance or a fixed name of the runtime (``catalog``, ``exec-policy``, ...),
never a sender key (a ``toolsBySender`` entry is named by its position).
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

LOG: Final = logging.getLogger("toolc.mcp")
METRICS_PATH: Final = "/metrics"
KEY_BYTES: Final = 32
UNKNOWN_TOOL: Final = "(unknown)"  # the ``tool`` label of a name the build does not have


class ObserveError(Exception):
    """A decision log or key file that cannot be used (the message says why)."""


def read_key(path: Path) -> bytes:
    """The HMAC key in ``path`` (hex or raw text, at least 16 bytes); a missing file is
    created with a random key, readable by its owner only."""
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        except OSError as exc:
            raise ObserveError(f"{path.as_posix()}: cannot create the key file ({exc})") from exc
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(KEY_BYTES) + "\n")
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ObserveError(f"{path.as_posix()}: unreadable key file ({exc})") from exc
    if len(key) < 16:
        raise ObserveError(f"{path.as_posix()}: the key must be at least 16 bytes")
    return key


class Metrics:
    """The Prometheus metrics of one serve-mcp process (a private registry)."""

    def __init__(self) -> None:
        import prometheus_client as prom  # noqa: PLC0415 - the extra toolc[metrics]

        self._prom = prom
        self.registry = prom.CollectorRegistry()
        r = self.registry
        self.calls = prom.Counter("toolc_tool_calls", "Tool calls, by verdict and the layer "
                                  "that refused them", ("tool", "verdict", "layer"), registry=r)
        self.refusals = prom.Counter("toolc_tool_refusals", "Refused tool calls by the deciding "
                                     "layer", ("tool", "layer"), registry=r)
        self.lists = prom.Counter("toolc_tool_lists", "Tool lists answered", registry=r)
        self.pending = prom.Gauge("toolc_approvals_pending", "Exec approvals waiting for an "
                                  "answer", registry=r)
        self.approvals = prom.Counter("toolc_approvals", "Exec approvals by outcome",
                                      ("outcome",), registry=r)
        self.reloads = prom.Counter("toolc_reloads", "New builds served or refused",
                                    ("outcome",), registry=r)
        self.build = prom.Info("toolc_build", "The build being served", registry=r)

    def for_build(self, names: Iterable[str]) -> BuildMetrics:
        """The sink of one build's decision log: its tool names are the ``tool`` labels."""
        return BuildMetrics(self, frozenset(names))

    def count(self, record: Mapping[str, Any], names: frozenset[str]) -> None:
        """A decision record of a build whose tools are ``names`` (a tool outside them is
        counted as ``(unknown)``)."""
        event, verdict = record.get("event"), str(record.get("verdict"))
        if event == "list":
            self.lists.inc()
        elif event == "call":
            tool = str(record.get("tool"))
            tool = tool if tool in names else UNKNOWN_TOOL
            layer = str(record.get("layer") or "")
            self.calls.labels(tool, verdict, layer).inc()
            if verdict == "refuse":
                self.refusals.labels(tool, layer).inc()
        elif event == "approval":
            if verdict == "asked":
                self.pending.inc()
            else:
                self.pending.dec()
                self.approvals.labels(verdict).inc()

    def serving(self, digest: str, target: str | None) -> None:
        self.build.info({"digest": digest, "target": target or ""})

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return self._prom.generate_latest(self.registry), self._prom.CONTENT_TYPE_LATEST


@dataclass(frozen=True, slots=True)
class BuildMetrics:
    """``Metrics`` as the sink of one build's decision log (``Metrics.for_build``)."""

    metrics: Metrics
    names: frozenset[str]

    def emit(self, record: Mapping[str, Any]) -> None:
        """A decision record (the runtime's DecisionLog sink protocol)."""
        self.metrics.count(record, self.names)


@dataclass(slots=True)
class Observer:
    """Decision-log and metrics settings of one serve-mcp process."""

    decision_log: Path | None = None
    key_file: Path | None = None
    metrics: Metrics | None = None
    metrics_public: bool = False
    _file_sink: Any = None
    _key: bytes = field(default_factory=lambda: secrets.token_bytes(KEY_BYTES))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def active(self) -> bool:
        return self.decision_log is not None or self.metrics is not None

    def decision_log_for(self, rt: ModuleType, digest: str) -> Any:
        """A DecisionLog of ``rt`` (one build's runtime) over the shared sinks, or None."""
        if not self.active:
            return None
        sinks: list[Any] = []
        if self.decision_log is not None:
            with self._lock:
                if self._file_sink is None:
                    self._file_sink = rt.FileSink(self.decision_log)
            sinks.append(self._file_sink)
        if self.metrics is not None:
            sinks.append(self.metrics.for_build(rt.TOOL_NAMES))
        key = read_key(self.key_file) if self.key_file is not None else self._key
        return rt.DecisionLog(sinks, sender_key=key, build_digest=digest)

    def serving(self, log: Any, digest: str) -> None:
        if self.metrics is not None:
            self.metrics.serving(digest, getattr(log, "target", None))

    def reloaded(self, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.reloads.labels(outcome).inc()

    def close(self) -> None:
        if self._file_sink is not None:
            self._file_sink.close()


def metrics_or_none(wanted: bool) -> Metrics | None:
    """Metrics when prometheus-client is installed; None (logged) when it is not."""
    if not wanted:
        return None
    try:
        return Metrics()
    except ImportError:
        LOG.warning("no %s: prometheus-client is not installed (pip install 'toolc[metrics]')",
                    METRICS_PATH)
        return None

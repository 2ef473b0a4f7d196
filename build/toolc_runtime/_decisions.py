"""Decision logs: every decision the runtime is asked, as one JSON line (and optionally a span).

A ``DecisionLog`` holds the sinks and the sender key; ``log.request(**resolve_keywords)``
binds it to one request (a ``RequestLog``), whose ``resolve()`` logs the tool list and which
``wrap(..., decisions=request_log)`` uses to log every call (allowed or refused, with the
deciding layer) and every exec approval (asked, granted, denied). Without ``decisions`` the
wrapper does one ``is None`` check per call.

Senders are never logged raw unless asked (``raw_senders=True``): ``sender`` is
``HMAC-SHA256(key, sender)`` and ``sender_key_id`` the first 16 hex digits of the key's
sha256, so lines hashed under different keys are never compared by mistake. Arguments are
redacted unless ``log_arguments=True``, and so is everything derived from them: the message a
refused or failed call gave the model can quote its command, a key or a value, so ``reason``
is a code and a fixed text (``approval-timeout: the exec approval was not answered in
time``; ``_errors.REASONS``) and a call-path refusal's ``rule`` that text alone; with
``log_arguments=True`` they carry the model's message.

A layer is named by its label in ``provenance.json``: names from the build, a
``toolsBySender`` entry by its position (``tools.toolsBySender[2]``), never by its key (a
sender id, written beside the keyed hash of the same sender, would undo it).

The deciding layer of a refused tool is found only when a line is written: the compiled
tables fold layers together, so ``provenance.json`` (written beside them by ``toolc build``)
repeats their structure with one record per layer (label, pass sets, the ``file:line:col``
of its allow list and deny entries, positions in the definitions ``sources/`` holds). It is
read on the first such lookup; its group layer is sharded as the tables are (a shard under
``provenance/`` per group map, each record inline as its JSON text), and a shard is read
when a lookup first reaches it.

Sinks: ``FileSink`` (size-rotated with ``logging.handlers.RotatingFileHandler``'s rollover),
``StdoutSink``, ``OtelSink`` (OpenTelemetry spans after the GenAI semantic conventions;
``opentelemetry`` is imported only when one is made), or any object with ``emit(record)``.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import datetime
import hashlib
import hmac
import json
import logging
import logging.handlers
import os
import secrets
import sys
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple, Protocol

from . import FILE_SHA256, PACKAGE_NAME, read_verified
from ._errors import (
    REASONS,
    AbortError,
    ExecDeniedError,
    InvalidArgumentsError,
    ToolBlockedError,
    ToolNotPermittedError,
    logged_reason,
    printable,
)
from ._groups import _group_stack, _requester_stacks
from ._policy import (
    _admitted,
    _built,
    _full_model_key,
    _present,
    _subagent_stack,
    resolve,
)
from ._route import Request
from ._sessions import (
    _CHANNEL_ALIASES,
    _NO_SESSION,
    _agent_record,
    _normalize_id,
    _request_agent,
    _sandboxed_by_mode,
    _select_agent,
    _Session,
    _session,
    _text,
)
from ._shards import _lazy_channel
from ._tables import (
    _AGENTS,
    _AP_BIT,
    _CRON_DROP,
    _GLOBAL_BP,
    _INDEX,
    _NO_AGENT,
    _NON_OWNER,
    _PROVIDER_PROFILES,
    _SUBAGENT_LEAF,
    RULES,
    AgentRecord,
    Stack,
    ToolSet,
    _stack,
)

PROVENANCE: Final = "provenance.json"
REDACTED: Final = "[redacted]"
_UTC: Final = datetime.UTC
_LOG: Final = logging.getLogger(f"{PACKAGE_NAME}.decisions")
Record = dict[str, Any]


class Sink(Protocol):
    """Where decision records go: ``emit`` gets each record (a JSON-ready dict)."""

    def emit(self, record: Mapping[str, Any]) -> None: ...


# JSON string literals (ensure_ascii=False), as the encoder below writes them
_STRING: Final = json.encoder.encode_basestring
# one encoder for every line: json.dumps with options would build a new one per call
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


class DecisionRecord(dict[str, Any]):
    """A record (a plain dict to sinks) that carries its JSON line, assembled from the
    request's fields encoded once and this decision's own: the file sink's hot path."""

    __slots__ = ("line",)
    line: str


def _line(record: Mapping[str, Any]) -> str:
    line = getattr(record, "line", None)
    return line if isinstance(line, str) else _json(record) + "\n"


class FileSink:
    """One JSON line per record, appended to ``path`` (opened ``O_APPEND``, mode 0600); at
    ``max_bytes`` the file is rotated (``path.1`` ... ``path.<backups>``) by
    ``logging.handlers.RotatingFileHandler.doRollover``. Thread-safe.

    ``buffered=True`` (the default): the caller's thread only queues the line; a writer
    thread appends what has queued every ``flush_interval`` seconds, one ``write`` per batch
    (so lines of several processes never interleave within a line). The queue is bounded: at
    ``max_pending`` lines the caller writes the batch itself, so no line is ever dropped.
    ``flush()`` writes what is queued now; ``close()`` and a normal interpreter exit write
    everything. A crash (SIGKILL, ``os._exit``, power loss) loses at most the lines queued in
    the last ``flush_interval``. ``buffered=False`` writes each line in the caller's thread
    before ``emit`` returns (one system call per line)."""

    LINES: Final = True  # emit() reads only the record's JSON line

    def __init__(  # noqa: PLR0913 - one keyword per option
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = 64 << 20,
        backups: int = 5,
        buffered: bool = True,
        flush_interval: float = 0.1,
        max_pending: int = 10_000,
    ) -> None:
        self.path: Final = os.fspath(path)
        # the stdlib's rotation (file names, renames); it never writes here (delay=True)
        self._rotator = logging.handlers.RotatingFileHandler(
            self.path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True
        )
        self._max = max_bytes
        self._lock = threading.Lock()
        self._fd = self._open()
        self._size = os.fstat(self._fd).st_size
        self.buffered: Final = buffered
        # deque.append and popleft are atomic: the caller's side takes no lock
        self._pending: collections.deque[str] = collections.deque()
        self._max_pending = max(1, max_pending)
        self._closed = threading.Event()
        self._is_closed = False  # _closed as a plain attribute: emit's one test
        self._writer: threading.Thread | None = None
        if buffered:
            self._writer = threading.Thread(
                target=self._write_every,
                args=(flush_interval,),
                name=f"{PACKAGE_NAME}-decision-log",
                daemon=True,
            )
            self._writer.start()
            _OPEN_SINKS.add(self)

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def emit(self, record: Mapping[str, Any]) -> None:
        if self._is_closed:
            raise ValueError(f"decision log {self.path} is closed")
        if not self.buffered:
            with self._lock:
                self._append([_line(record)])
            return
        pending = self._pending
        pending.append(_line(record))
        if len(pending) >= self._max_pending:
            self.flush()  # the writer fell behind: the caller writes, memory stays bounded

    def flush(self) -> None:
        """Write every queued line now."""
        with self._lock:
            pending = self._pending
            lines = [pending.popleft() for _ in range(len(pending))]
            if lines and self._fd >= 0:
                self._append(lines)

    def _append(self, lines: list[str]) -> None:
        """Write ``lines`` (the lock held), rotating before a line that would take a
        non-empty file past ``max_bytes``."""
        batch: list[bytes] = []
        size = self._size
        for line in lines:
            data = line.encode("utf-8")
            if self._max > 0 and size and size + len(data) > self._max:
                self._write(batch)
                batch = []
                os.close(self._fd)
                self._rotator.doRollover()
                self._fd = self._open()
                size = self._size = 0
            batch.append(data)
            size += len(data)
        self._write(batch)

    def _write(self, batch: list[bytes]) -> None:
        view = memoryview(b"".join(batch))
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
            self._size += written

    def _write_every(self, interval: float) -> None:
        while not self._closed.wait(interval):
            try:
                self.flush()
            except Exception as exc:  # a full disk must not end the writer
                _LOG.error("decision log %s: %s", self.path, exc)

    def close(self) -> None:
        """Write what is queued, stop the writer and close the file (idempotent)."""
        self._is_closed = True
        self._closed.set()
        if self._writer is not None and self._writer is not threading.current_thread():
            self._writer.join()
        try:
            self.flush()
        finally:
            with self._lock:
                if self._fd >= 0:
                    os.close(self._fd)
                    self._fd = -1
            _OPEN_SINKS.discard(self)


# Buffered sinks still open: an interpreter that exits normally writes their queues.
_OPEN_SINKS: Final[weakref.WeakSet[FileSink]] = weakref.WeakSet()


@atexit.register
def _close_open_sinks() -> None:
    for sink in list(_OPEN_SINKS):
        with contextlib.suppress(Exception):
            sink.close()


class StdoutSink:
    """One JSON line per record on standard output (the stream as it is at each record)."""

    LINES: Final = True

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def emit(self, record: Mapping[str, Any]) -> None:
        line = _line(record)
        with self._lock:
            sys.stdout.write(line)
            sys.stdout.flush()


class OtelSink:
    """Each call decision as an OpenTelemetry span ``execute_tool <tool>`` (GenAI semantic
    conventions: ``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``)
    with ``toolc.*`` attributes; its start and end are the call's. Needs the extra
    ``toolc[otel]`` (opentelemetry-sdk) or any OpenTelemetry API; ``tracer_provider``
    defaults to the global one."""

    def __init__(self, tracer_provider: Any = None) -> None:
        from opentelemetry import trace  # noqa: PLC0415 - the optional dependency, on demand

        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self._tracer = provider.get_tracer(PACKAGE_NAME)
        self._error = trace.StatusCode.ERROR

    def emit(self, record: Mapping[str, Any]) -> None:
        if record.get("event") != "call":
            return
        end = int(record["epoch_ns"])
        start = end - int(record.get("duration_ms", 0.0) * 1e6)
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": record["tool"],
            "gen_ai.tool.type": "function",
            **({"gen_ai.tool.call.id": record["tool_call_id"]} if record["tool_call_id"] else {}),
            **{f"toolc.{k}": v for k, v in record.items() if k in _SPAN_KEYS and v is not None},
        }
        # a span's name is what tracing back ends group by: a name from the build, or one
        # fixed word for any name the client made up (unbounded otherwise)
        shown = record["tool"] if record["tool"] in _INDEX else "(unknown)"
        span = self._tracer.start_span(
            f"execute_tool {shown}", start_time=start, attributes=attributes
        )
        if record["verdict"] != "allow" or record.get("outcome") == "error":
            span.set_attribute("error.type", str(record.get("layer") or record["outcome"]))
            span.set_status(self._error, str(record.get("rule") or record.get("reason") or ""))
        span.end(end_time=end)


_SPAN_KEYS: Final = frozenset(
    (
        "build",
        "target",
        "agent",
        "channel",
        "group",
        "sender",
        "sender_key_id",
        "verdict",
        "outcome",
        "layer",
        "rule",
        "source",
        "approval_id",
    )
)


# -- the deciding layer ----------------------------------------------------------------------------
_PROV: list[dict[str, Any]] = []
_PROV_CHANNELS: dict[str, dict[str, Any]] = {}
_PROV_LOCK: Final = threading.Lock()


def _provenance() -> dict[str, Any] | None:
    """``provenance.json`` parsed (None: a build made without it)."""
    if not _PROV:
        name = PROVENANCE
        if name not in FILE_SHA256:
            return None
        with _PROV_LOCK:
            if not _PROV:
                _PROV.append(json.loads(read_verified(name)))
    return _PROV[0]


def _bits(runs: list[int]) -> int:
    bits = 0
    for k in range(0, len(runs), 2):
        bits |= ((1 << runs[k + 1]) - 1) << runs[k]
    return bits


def _prov_channel(name: str) -> dict[str, Any] | None:
    """A channel's provenance in the tables' shape: its maps read from its provenance shards
    when first looked into (a build before them: the channel's JSON in provenance.json)."""
    channel = _PROV_CHANNELS.get(name)
    if channel is None:
        prov = _provenance()
        raw = prov["channels"].get(name) if prov else None
        if raw is None:
            return None
        if isinstance(raw, str):
            channel = json.loads(raw)
        else:
            channel = _lazy_channel(raw)
        _PROV_CHANNELS[name] = channel
    return channel


# A layer's record: an index into provenance.json's records, or (a shard's) its JSON text.
RecordRef = int | str


def _record(prov: dict[str, Any], ref: RecordRef) -> dict[str, Any]:
    if isinstance(ref, str):
        found: dict[str, Any] = json.loads(ref)
        return found
    return prov["records"][ref]  # type: ignore[no-any-return]


def _ref(found: Any) -> RecordRef | None:
    """A lookup's answer as a record (None: no lists, or nothing configured)."""
    if isinstance(found, str) or (isinstance(found, int) and found >= 0):
        return found
    return None


def _same(index: int | None) -> int | None:
    return index


class _Path(NamedTuple):
    """One request's path through the tables, as ``resolve_uncached`` takes it: the present
    set, its stacks, the provenance records of its layers in order (None: a layer without
    lists), the agent's record and session."""

    present: int
    stacks: list[Stack]
    records: list[RecordRef | None]
    record: AgentRecord
    session: _Session
    unbuilt: int  # available tools the release does not build for this run


def _path(ctx: Mapping[str, Any], prov: dict[str, Any]) -> _Path:  # noqa: PLR0915
    """``resolve_uncached``'s steps (``_policy``), each stack paired with its provenance
    record: the group and sender lookups run twice, once over the tables and once over
    ``provenance.json`` (the same structure with records at the leaves)."""
    key = _text(ctx.get("session_key"))
    session = _session(key) if key else _NO_SESSION
    agent_id = _text(ctx.get("agent_id"))
    if RULES.agent_selection:
        raw: str | None = _select_agent(agent_id, key)
    else:
        raw = _request_agent(agent_id, key, session)
    selected = raw if RULES.agent_selection else None
    sandboxed = ctx.get("sandboxed") is True or _sandboxed_by_mode(key, selected)
    record = _NO_AGENT if raw is None else _agent_record(raw)
    index = 0 if raw is None else _AGENTS.get(_normalize_id(raw) or "main", 0)
    entry = prov["agents"][index]
    provider, model = ctx.get("model_provider"), ctx.get("model_id")
    provider = provider.strip().lower() or None if provider else None
    model = model.strip().lower() or None if model else None
    explicit = _text(ctx.get("message_provider"))
    message = explicit.strip().lower() if explicit else None
    available = _present(record.apply_patch, provider, model, message)
    # createOpenClawTools (2026.9): tools built for some runs only (host-only, caller-only)
    present = _built(available, sandboxed, ctx.get("sender_id"), message)
    unbuilt = available & ~present
    owner = ctx.get("sender_is_owner")
    if owner is False if RULES.owner_unknown_keeps else owner is not True:
        present &= _NON_OWNER
    stacks: list[Stack] = [record.stack]
    profile_rec, global_rec, agent_rec = entry["stack"]
    named: list[int | None] = [None, None, None]  # agent provider, global provider, profile
    if provider is not None:
        _provider_path(record, entry, prov, provider, model, stacks, named)
    # explain's step order (the reference interpreter's): the first layer there that
    # removes the tool is the deciding one
    records: list[RecordRef | None] = [
        profile_rec,
        named[2],
        global_rec,
        named[1],
        agent_rec,
        named[0],
    ]
    sender = (
        ctx.get("sender_id"),
        ctx.get("sender_e164"),
        ctx.get("sender_username"),
        ctx.get("sender_name"),
    )
    spawned_key = _text(ctx.get("spawned_by"))
    where = (_text(ctx.get("group_space")), _text(ctx.get("group_channel")))
    if RULES.group_id_needs_session:
        request = (key, spawned_key, ctx.get("group_id"), message, ctx.get("account_id"))
        found = _requester_stacks(request, where, sender, owner is True, record)
        hooks = (_prov_channel, _same, entry.get("sd"), prov.get("senders"))
        ids = _requester_stacks(request, where, sender, owner is True, record, hooks)
        _pair(found, ids, stacks, records)
    else:
        spawned = _session(spawned_key) if spawned_key else _NO_SESSION
        group = _text(ctx.get("group_id")) or session.group or spawned.group
        channel = message if explicit else session.channel or spawned.channel
        channel = _CHANNEL_ALIASES.get(channel, channel) if channel else None
        if channel and group:
            args = (channel, group, ctx.get("account_id"), sender, where)
            hit = _group_stack(*args)
            if hit is not None:
                stacks.append(hit)
                rid = _group_stack(*args, channels=_prov_channel, leaf=_same)
                records.append(_ref(rid))
    if sandboxed:
        stacks.append(record.sandbox)
        records.append(entry["sandbox"])
    sub = _subagent_stack(session, key, ctx.get("spawn_depth"))
    if sub is not None:
        stacks.append(sub)
        records.append(prov["subagent"][1 if sub is _SUBAGENT_LEAF else 0])
    return _Path(present, stacks, records, record, session, unbuilt)


def _pair(found: list[Any], ids: list[Any], stacks: list[Stack], records: list[Any]) -> None:
    """The requester stacks and their records (the same lookups: the same length)."""
    for stack, rid in zip(found, ids, strict=True):
        stacks.append(stack)
        records.append(_ref(rid))


def _provider_path(  # noqa: PLR0913, PLR0917 - _provider_stacks inputs and both outputs
    record: AgentRecord,
    entry: dict[str, Any],
    prov: dict[str, Any],
    provider: str,
    model: str | None,
    stacks: list[Stack],
    named: list[int | None],
) -> None:
    """``_provider_stacks``, and the records of its layers in ``named``: [agent provider,
    global provider, provider profile]."""
    full = _full_model_key(provider, model)
    bp = record.by_provider
    ae_key = next((k for k in (full, provider) if k and bp and k in bp), None)
    ge_key = next((k for k in (full, provider) if k and k in _GLOBAL_BP), None)
    profile = also = -1
    if ae_key is not None:
        stacks.append(bp[ae_key].stack)
        named[0] = entry["bp"].get(ae_key)
        profile, also = bp[ae_key].profile, bp[ae_key].also
    if ge_key is not None:
        ge = _GLOBAL_BP[ge_key]
        stacks.append(ge.stack)
        named[1] = prov["global_bp"].get(ge_key)
        profile = ge.profile if profile < 0 else profile
        also = ge.also if also < 0 else also
    if profile >= 0:
        chosen = _PROVIDER_PROFILES[profile][also + 1]
        if chosen >= 0:
            stacks.append(_stack(chosen))
            named[2] = prov["provider_profiles"][profile][also + 1]


def deciding_layer(  # noqa: PLR0911 - one return per kind of reason
    tool: str, **context: Any
) -> tuple[str, str, str | None] | None:
    """Why ``tool`` is not in ``resolve(**context)``'s set: (layer, rule, ``file:line:col``
    of the rule, None when nothing in the definitions points at it); None when it is in the
    set. Costs about two uncached ``resolve``s; only decision logging calls it."""
    if tool in resolve(**context).names:
        return None
    index = _INDEX.get(tool)
    if index is None:
        return ("catalog", f"no tool {tool} in this build", None)
    prov = _provenance()
    if prov is None:
        return ("policy", "removed by the policy (this build has no provenance.json)", None)
    bit = 1 << index
    pos = prov["tools"][index]
    path = _path(context, prov)
    if path.unbuilt & bit:
        why = f"{tool} is built for some runs only (createOpenClawTools), not this one"
        return ("inventory", why, pos)
    if not path.present & bit:
        if _NON_OWNER & bit:
            if bit == _AP_BIT:
                rule = "apply_patch needs tools.exec.applyPatch enabled (and the model allowed)"
                return ("availability", rule, pos)
            why = f"{tool} is not available for this provider, model or channel"
            return ("availability", why, pos)
        return ("owner-only", f"{tool} is ownerOnly and the sender is not an owner", pos)
    admitted = _admitted(path.present, path.stacks, path.record.lean)
    if path.session.cron:
        admitted &= ~_CRON_DROP
    if not admitted & bit:
        if path.session.cron and _CRON_DROP & bit:
            return ("cron", f"{tool} is not offered to cron sessions", pos)
        return ("optional", f"{tool} is a plugin tool that no allow list admits here", pos)
    records = [None if rid is None else _record(prov, rid) for rid in path.records]
    for found in records:  # 2026.9: a deny entry naming a plugin unloads it first
        for item in found["deny"] if found is not None else ():
            if len(item) > 3 and _bits(item[3]) & bit:
                why = f'{tool}\'s plugin is not loaded: deny entry "{item[0]}" matches it'
                return ("inventory", why, item[1])
    for rec in records:  # each layer on its own (the agent stack folds three)
        if rec is None:
            continue
        applies = rec["w"] is None or bool(_bits(rec["w"]) & path.present)
        if _bits(rec["a"] if applies else rec["d"]) & bit:
            continue
        label = rec["label"]
        for text, at, runs, *_ in rec["deny"]:
            if _bits(runs) & bit:
                return (label, f'denied by "{text}" in {label}.deny', at)
        return (label, f"not in {label}.allow", rec["allow"])
    return ("policy", "removed by the policy", None)


def _where(ctx: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """The (agent, channel, group) a decision line names: the agent as ``resolve`` selects
    it (normalized), the message channel and group as the request or its session key give
    them."""
    key = _text(ctx.get("session_key"))
    session = _session(key) if key else _NO_SESSION
    agent_id = _text(ctx.get("agent_id"))
    raw = (
        _select_agent(agent_id, key)
        if RULES.agent_selection
        else _request_agent(agent_id, key, session)
    )
    agent = None if raw is None else (_normalize_id(raw) or "main")
    explicit = _text(ctx.get("message_provider"))
    channel = explicit.strip().lower() if explicit else session.channel
    channel = _CHANNEL_ALIASES.get(channel, channel) if channel else None
    return agent, channel, _text(ctx.get("group_id")) or session.group


# -- the log ---------------------------------------------------------------------------------------
def _build_identity(build_digest: str | None, target: str | None) -> tuple[str | None, str | None]:
    """The sha256 of the build's manifest.json and its ``target`` (when the build has one),
    read from beside the runtime package unless given."""
    if build_digest is not None and target is not None:
        return build_digest, target
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(os.path.dirname(here), "manifest.json"), "rb") as file:
            raw = file.read()
    except OSError:
        return build_digest, target
    if build_digest is None:
        build_digest = hashlib.sha256(raw).hexdigest()
    if target is None:
        try:
            found = json.loads(raw).get("target")
        except (ValueError, AttributeError):
            found = None
        target = found if isinstance(found, str) else None
    return build_digest, target


class DecisionLog:
    """Where decision lines go and how senders are hashed (see the module docstring).

    ``sinks``: FileSink, StdoutSink, OtelSink or any object with ``emit(record)``.
    ``sender_key``: the HMAC key for sender ids (bytes or text); None makes a random key for
    this process (hashes then correlate only within it). ``raw_senders=True`` logs sender
    ids as they are; ``log_arguments=True`` logs call arguments (else ``"[redacted]"``).
    ``build_digest`` and ``target`` default to the sha256 and ``target`` of the build's
    manifest.json. ``layers=False`` skips the deciding-layer lookup of refused calls."""

    def __init__(  # noqa: PLR0913 - one keyword per option
        self,
        sinks: Iterable[Sink],
        *,
        sender_key: bytes | str | None = None,
        raw_senders: bool = False,
        log_arguments: bool = False,
        build_digest: str | None = None,
        target: str | None = None,
        layers: bool = True,
    ) -> None:
        self.sinks: Final = tuple(sinks)
        key = sender_key.encode() if isinstance(sender_key, str) else sender_key
        self._key = key if key else secrets.token_bytes(32)
        self.sender_key_id: Final = hashlib.sha256(self._key).hexdigest()[:16]
        self.raw_senders: Final = raw_senders
        self.log_arguments: Final = log_arguments
        self.layers: Final = layers
        self.build_digest, self.target = _build_identity(build_digest, target)
        self._sinks = self.sinks
        # only line sinks (file, stdout): the records they get need no dict of their own
        self.lines_only: Final = all(getattr(s, "LINES", False) for s in self.sinks)

    def sender_hash(self, sender: str) -> str:
        """The keyed hash a line carries for ``sender``."""
        return hmac.new(self._key, sender.encode("utf-8"), hashlib.sha256).hexdigest()

    def request(self, message: Request | None = None, /, **context: Any) -> RequestLog:
        """This log bound to one request: a message-level ``Request`` (the run it starts:
        the route's agent and session key, the channel, the chat, the sender), or
        ``resolve``'s keywords."""
        if message is None:
            return RequestLog(self, context)
        if not isinstance(message, Request):
            raise TypeError(f"request() takes a Request, got {type(message).__name__}")
        if context:
            raise TypeError("request() takes a Request or resolve's keywords, not both")
        # the chat the message came in is what OpenClaw's run passes as its group, trusted
        # only where the route's session key names it: the release's answer, as
        # resolve_request gives it, not a caller's group to refuse
        return RequestLog(self, {**message.context(), "strict": False})

    def emit(self, record: Record) -> None:
        """Send one record to every sink (a failing sink is reported, never raised)."""
        for sink in self._sinks:
            try:
                sink.emit(record)
            except Exception as exc:
                _LOG.error("decision log sink %s failed: %s", type(sink).__name__, printable(exc))


_SECOND: list[tuple[int, str]] = [(-1, "")]


def _now() -> tuple[str, int]:
    """(ISO 8601 UTC with milliseconds, epoch ns); the date part is formatted once a second."""
    ns = time.time_ns()
    second, rest = divmod(ns, 1_000_000_000)
    cached = _SECOND[0]
    if cached[0] != second:
        text = datetime.datetime.fromtimestamp(second, _UTC).strftime("%Y-%m-%dT%H:%M:%S")
        cached = _SECOND[0] = (second, text)
    return f"{cached[1]}.{rest // 1_000_000:03d}Z", ns


_REFUSALS: Final = (
    (ToolNotPermittedError, "owner-guard", ExecDeniedError),
    (InvalidArgumentsError, "arguments", None),
    (ToolBlockedError, "hooks", None),
)


# Line ends JSON leaves unescaped (ensure_ascii=False), which ``str.splitlines`` and other
# readers take for a line's end: escaped, so a hostile value cannot split a line.
_LINE_ENDS: Final = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def _one_line(line: str) -> str:
    if "\u2028" in line or "\u2029" in line or "\x85" in line:
        return line.translate(_LINE_ENDS)
    return line


class RequestLog:
    """A DecisionLog bound to one request: give it to ``wrap(..., decisions=...)``."""

    __slots__ = ("_base", "_base_json", "context", "log")

    def __init__(self, log: DecisionLog, context: Mapping[str, Any]) -> None:
        self.log: Final = log
        self.context: Final = dict(context)
        where = _where(self.context)
        sender = next(
            (
                v
                for v in (context.get(k) for k in ("sender_id", "sender_e164", "sender_username"))
                if isinstance(v, str) and v.strip()
            ),
            None,
        )
        if sender is not None and not log.raw_senders:
            sender = log.sender_hash(sender.strip())
        self._base: Final[Record] = {
            "build": log.build_digest,
            "target": log.target,
            "agent": where[0],
            "channel": where[1],
            "group": where[2],
            "sender": sender,
            "sender_key_id": None if log.raw_senders else log.sender_key_id,
        }
        self._base_json: Final = _json(self._base)[1:-1]

    def _emit(self, event: str, fields: Record, encoded: str | None = None) -> None:
        """One record; ``encoded``: ``fields`` as JSON object members, when the caller has
        them (the allowed call's fast path)."""
        stamp, ns = _now()
        log = self.log
        record = (
            DecisionRecord()
            if log.lines_only
            else DecisionRecord(time=stamp, epoch_ns=ns, event=event, **self._base, **fields)
        )
        body = encoded if encoded is not None else _json(fields)[1:-1]
        record.line = _one_line(
            f'{{"time":"{stamp}","epoch_ns":{ns},"event":"{event}",{self._base_json},{body}}}\n'
        )
        log.emit(record)

    def resolve(self) -> ToolSet:
        """``resolve(**context)``, logged as one ``list`` line (the tools it holds)."""
        toolset = resolve(**self.context)
        self.listed(toolset.names)
        return toolset

    def listed(self, names: Iterable[str]) -> None:
        """Log a tool list this request was given (the names it holds)."""
        shown = list(names)
        self._emit("list", {"verdict": "list", "tools": shown, "count": len(shown)})

    def refused(
        self, tool: str, tool_call_id: str | None, reason: str, *, code: str = "not-available"
    ) -> None:
        """A call of a tool outside the request's set (or no tool at all): ``reason`` is the
        model's message, ``code`` (``_errors.REASONS``) what is logged unless arguments are."""
        layer = rule = source = None
        if self.log.layers:
            found = deciding_layer(tool, **self.context)
            if found is not None:
                layer, rule, source = found
        self._emit(
            "call",
            {
                "tool": tool,
                "tool_call_id": tool_call_id,
                "verdict": "refuse",
                "outcome": "refused",
                "layer": layer,
                "rule": rule,
                "source": source,
                "reason": f"{code}: {reason if self.log.log_arguments else REASONS[code]}",
                "duration_ms": 0.0,
                "arguments": REDACTED,
            },
        )

    def call(
        self,
        tool: str,
        tool_call_id: str | None,
        failure: BaseException | None,
        started: float,
        arguments: object = None,
    ) -> None:
        """One call of a tool in the set: allowed (it ran, ``outcome`` ok or error) or
        refused by the owner guard, the arguments, a hook or the exec policy."""
        log = self.log
        if failure is None and not log.log_arguments and log.lines_only:
            duration = round((time.perf_counter() - started) * 1000, 3)
            call_id = "null" if tool_call_id is None else _STRING(tool_call_id)
            self._emit(
                "call",
                {},
                f'"tool":{_STRING(tool)},"tool_call_id":{call_id},"verdict":"allow",'
                '"outcome":"ok","layer":null,"rule":null,"source":null,"reason":null,'
                f'"duration_ms":{duration!r},"arguments":"{REDACTED}"',
            )
            return
        verdict, outcome, layer, rule = "allow", "ok", None, None
        source = reason = None
        if failure is not None:
            # the model's message may quote the arguments: a code and its fixed text instead
            code, why = logged_reason(failure, detailed=log.log_arguments)
            reason = f"{code}: {why}"
        if isinstance(failure, AbortError):
            outcome = "aborted"
        elif failure is not None:
            outcome = "error"
            for kind, name, other in _REFUSALS:
                if isinstance(failure, kind):
                    verdict, outcome, layer = "refuse", "refused", name
                    if other is not None and isinstance(failure, other):
                        layer = "exec-policy"
                    rule = why
                    break
            if layer == "owner-guard":
                prov = _provenance() if self.log.layers else None
                index = _INDEX.get(tool)
                source = prov["tools"][index] if prov and index is not None else None
                rule = f"{tool} is ownerOnly and the sender is not an owner"
        shown = arguments if self.log.log_arguments else REDACTED
        self._emit(
            "call",
            {
                "tool": tool,
                "tool_call_id": tool_call_id,
                "verdict": verdict,
                "outcome": outcome,
                "layer": layer,
                "rule": rule,
                "source": source,
                "reason": reason,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                "arguments": shown,
            },
        )

    def approval(
        self,
        event: str,
        tool: str,
        tool_call_id: str | None,
        approval_id: str,
        decision: str | None = None,
    ) -> None:
        """An exec approval: ``asked``, then ``granted`` or ``denied`` (``decision``:
        allow-once, allow-always, deny, or None for a timeout)."""
        self._emit(
            "approval",
            {
                "tool": tool,
                "tool_call_id": tool_call_id,
                "verdict": event,
                "approval_id": approval_id,
                "decision": decision,
            },
        )

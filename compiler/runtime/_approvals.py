"""Exec approvals, the tool firewall (OpenClaw 2026.3.2's ``tools.exec`` host, security, ask
and allowlists; ``exec-approvals.ts``, ``exec-approvals-allowlist.ts``, ``bash-tools.exec``).

Each agent's policy was compiled into the tables. A command runs on the sandbox host without
approvals; on the gateway or a node host ``security: deny`` refuses it, ``ask: always`` asks
every time, and ``ask: on-miss`` with ``security: allowlist`` asks when the command cannot be
analysed or its executable matches no allowlist pattern (without asking, ``ask: off``, such a
command is refused). Patterns are globs over the executable's resolved path, symlinks
resolved (``*`` within a path segment, ``**`` across segments, ``?`` one character but ``/``,
``[c]`` the character c, ``~`` the home directory), case-sensitive but on Windows (as
2026.9.6); ``*`` alone matches any command that can be analysed. On the gateway and node
hosts a request's ``env`` may not set a variable that changes what runs (``_hostenv``):
such a request is refused whatever the security mode, as OpenClaw refuses it.

``ApprovalManager`` holds pending approvals: thread-safe, awaitable, timeouts resolve to None.
A gateway waits for the decision in process (``request``, then the waiter); an agent framework
that pauses the run for a person and resumes it later hands the decision in from outside
(``defer``, ``submit``, ``claim``): it is bound to the tool call's id and to the digest of
the request that was evaluated, so it cannot approve another command.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import PACKAGE_NAME
from ._context import CallContext
from ._errors import ExecDeniedError, printable
from ._hostenv import env_violation
from ._sessions import exec_config
from ._shell import (
    CommandAnalysis,
    analyze_command,
    glob_escape,
    match_allowlist,
    resolve_executable,
)

Decision = Literal["allow-once", "allow-always", "deny"]
DECISIONS: Final[tuple[Decision, ...]] = ("allow-once", "allow-always", "deny")
HOSTS: Final = ("sandbox", "gateway", "node")
SECURITY: Final = ("deny", "allowlist", "full")  # narrowest first
ASK: Final = ("off", "on-miss", "always")  # least asking first
EXEC_TOOL: Final = "exec"
DEFAULT_TIMEOUT_S: Final = 120.0
RESOLVED_GRACE_S: Final = 15.0


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """An agent's compiled ``tools.exec`` approval policy (defaults applied)."""

    host: str
    security: str
    ask: str
    allowlist: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExecVerdict:
    """What the policy says about one command."""

    host: str
    security: str
    ask: str
    analysis: CommandAnalysis
    executable: str | None  # the path allowlist patterns are matched against
    matched: str | None  # the pattern that matched
    requires_approval: bool
    denied: str | None  # why exec is refused without asking (None: not refused)
    agent_key: str | None  # the agent whose allowlist applies (None: no agent)
    denied_code: str | None = None  # ``denied`` as a code a log may carry (``REASONS``)


# -- the policy ---------------------------------------------------------------------------------
def exec_policy(
    context: CallContext | None = None, *, approvals: ApprovalManager | None = None
) -> ExecPolicy:
    """The exec policy for a request's agent (``agent_id``, else the session key's, as in
    ``resolve``; the global policy when there is no declared agent), with the allowlist
    entries ``approvals`` added at run time (allow-always)."""
    return _policy_for(context, approvals)[1]


def _policy_for(
    context: CallContext | None, approvals: ApprovalManager | None
) -> tuple[str | None, ExecPolicy]:
    ctx = context or CallContext()
    agent, (host, security, ask, patterns) = exec_config(ctx.agent_id, ctx.session_key)
    extra = approvals.allowlist(agent) if approvals is not None else ()
    return agent, ExecPolicy(host, security, ask, _dedupe((*patterns, *extra)))


def _dedupe(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Trimmed, blanks and exact duplicates dropped (patterns are case-sensitive)."""
    return tuple(p for p in dict.fromkeys(p.strip() for p in patterns) if p)


def _choice(value: str | None, allowed: tuple[str, ...], name: str) -> str | None:
    if value is None:
        return None
    normalized = value.strip().lower() if isinstance(value, str) else None
    if normalized not in allowed:
        raise ValueError(f"exec {name} must be one of {', '.join(allowed)}, got {value!r}")
    return normalized


def evaluate_exec(  # noqa: PLR0913 - the exec tool's own keywords
    command: str,
    context: CallContext | None = None,
    *,
    host: str | None = None,
    security: str | None = None,
    ask: str | None = None,
    cwd: str | None = None,
    path: str | None = None,
    env: object = None,
    approvals: ApprovalManager | None = None,
) -> ExecVerdict:
    """The policy's verdict on ``command`` for ``context``'s agent.

    ``host``, ``security`` and ``ask`` are what the call requested (the exec tool's own
    parameters): a host other than the configured one is refused, a security can only be
    narrower and an ask only stricter than configured (ValueError for unknown values).
    ``env`` is the call's environment: on the gateway and node hosts a variable that changes
    what runs (``PATH``, ``LD_PRELOAD``, ``BASH_ENV``, ``HOME``...) is refused. ``cwd`` is the
    absolute directory the command runs in (relative executables and PATH entries are
    resolved there; without it they cannot be), ``path`` (default: this process's PATH) the
    search path of bare names.
    """
    agent, policy = _policy_for(context, approvals)
    requested = _choice(host, HOSTS, "host")
    verdict = ExecVerdict(
        host=policy.host,
        security=min(
            policy.security, _choice(security, SECURITY, "security") or "full", key=SECURITY.index
        ),
        ask=max(policy.ask, _choice(ask, ASK, "ask") or "off", key=ASK.index),
        analysis=analyze_command(command),
        executable=None,
        matched=None,
        requires_approval=False,
        denied=None,
        agent_key=agent,
    )
    if requested is not None and requested != policy.host:
        why = (
            f"exec host not allowed (requested {requested}; this agent runs exec on {policy.host})"
        )
        return dataclasses.replace(verdict, denied=why, denied_code="host-not-allowed")
    if policy.host == "sandbox":  # approvals guard host execution only
        return verdict
    violation = env_violation(env)  # before anything else, as OpenClaw's validateHostEnv
    if violation is not None:
        return dataclasses.replace(verdict, denied=violation, denied_code="env-not-allowed")
    if verdict.security == "deny":
        denied = f"exec denied: host={policy.host} security=deny"
        return dataclasses.replace(verdict, denied=denied, denied_code="security-deny")
    executable = resolve_executable(verdict.analysis, cwd=cwd, path=path)
    matched = match_allowlist(policy.allowlist, verdict.analysis, executable)
    satisfied = verdict.security == "full" or matched is not None
    needs = verdict.ask == "always" or (verdict.ask == "on-miss" and not satisfied)
    missed = not (needs or satisfied)
    return dataclasses.replace(
        verdict,
        executable=executable,
        matched=matched,
        requires_approval=needs,
        denied="exec denied: allowlist-miss" if missed else None,
        denied_code="allowlist-miss" if missed else None,
    )


def requires_approval(  # noqa: PLR0913 - the exec tool's own keywords
    command: str,
    context: CallContext | None = None,
    *,
    host: str | None = None,
    security: str | None = None,
    ask: str | None = None,
    cwd: str | None = None,
    path: str | None = None,
    env: object = None,
    approvals: ApprovalManager | None = None,
) -> bool:
    """Whether ``command`` needs an approval before it runs: always for ``ask: always``; for
    ``ask: on-miss`` with ``security: allowlist`` when it cannot be analysed or matches no
    allowlist pattern; never otherwise. A command the policy refuses outright (``security:
    deny`` on a gateway or node host, a host it may not use, an allowlist miss that may not
    be asked about) raises ExecDeniedError. Keywords as in ``evaluate_exec``."""
    verdict = evaluate_exec(
        command,
        context,
        host=host,
        security=security,
        ask=ask,
        cwd=cwd,
        path=path,
        env=env,
        approvals=approvals,
    )
    if verdict.denied is not None:
        raise ExecDeniedError(verdict.denied, tool="exec", code=verdict.denied_code)
    return verdict.requires_approval


# -- the approval manager -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ExecApprovalRequest:
    """What an approver is asked about (OpenClaw's ``exec.approval.request``)."""

    command: str
    cwd: str | None = None
    host: str = "gateway"
    security: str = "allowlist"
    ask: str = "on-miss"
    agent_id: str | None = None  # the agent whose allowlist allow-always extends
    session_key: str | None = None
    resolved_path: str | None = None  # the executable: allow-always adds exactly this path
    env_keys: tuple[str, ...] = ()  # the variables the call sets (OpenClaw's ``envKeys``)
    reason: str = ""  # why the policy asks (``ask=always``, an allowlist miss, no analysis)
    # what allow-always would trust, in words (``allow_always_scope``); derived, never passed
    allow_always: str = dataclasses.field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "allow_always", allow_always_scope(self))


def allow_always_pattern(request: ExecApprovalRequest) -> str | None:
    """The allowlist entry allow-always adds for ``request``: a pattern matching exactly its
    executable (``glob_escape``: ``/opt/a*b`` is ``/opt/a[*]b``), or None when it adds
    nothing (as OpenClaw, only an allowlist policy learns, and only a known absolute path)."""
    path = request.resolved_path
    if request.security != "allowlist" or not isinstance(path, str):
        return None
    if not os.path.isabs(path) or "\0" in path:
        return None  # no file a shell runs: nothing exact to learn
    return glob_escape(path)  # a literal: "/**" must not approve every command


def allow_always_scope(request: ExecApprovalRequest) -> str:
    """What choosing allow-always for ``request`` would trust, in one sentence: the
    executable with any arguments from then on, not only the command shown (approving
    ``rm -r out`` always lets ``rm -rf /etc`` run unasked later). Every surface that asks a
    person shows this sentence (``ExecApprovalRequest.allow_always``)."""
    if allow_always_pattern(request) is not None:
        path = _shown(str(request.resolved_path))
        return (
            f"Allow always would trust {path} with any arguments from now on, "
            "not only this command."
        )
    if request.security != "allowlist":
        why = f"security={request.security}"
    elif request.resolved_path is None:
        why = "the executable is not known"
    else:
        why = "the executable is not an absolute path"
    return f"Allow always would add nothing to the allowlist ({why}): it allows this call once."


def _shown(path: str) -> str:
    """A path as a person can read it: quoted, with escapes, when it holds a character that
    does not print or blanks at either end (a file name with a newline must not forge a line
    of the request)."""
    return path if path.isprintable() and path == path.strip() else repr(path)


def request_digest(request: ExecApprovalRequest, params: Mapping[str, Any] | None = None) -> str:
    """The sha256 of an evaluated request: the approval request and the exact params the
    implementation would run with (canonical JSON). A decision handed in from outside is
    bound to it, so it approves this command, in this directory, with this environment."""
    value = {"request": dataclasses.asdict(request), "params": params}
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRecord:
    """One approval: times in epoch milliseconds; ``decision`` None while pending and after
    a timeout (then ``resolved_at_ms`` is set)."""

    id: str
    request: ExecApprovalRequest
    created_at_ms: int
    expires_at_ms: int
    resolved_at_ms: int | None = None
    decision: Decision | None = None
    resolved_by: str | None = None
    digest: str = ""  # request_digest of what was evaluated (a deferred approval's binding)
    params: Mapping[str, Any] | None = None  # a deferred approval: the params it runs with
    arguments: str = ""  # a deferred approval: the digest of the model's own arguments


class ApprovalWaiter:
    """The decision of one approval, for threads (``wait()``) and asyncio (``await``).

    Waiting never hangs: at the approval's expiry it resolves to None (a timeout)."""

    __slots__ = ("_decision", "_event", "_futures", "_lock", "_manager", "deadline", "id")

    def __init__(self, manager: ApprovalManager, record_id: str, deadline: float) -> None:
        self.id = record_id
        self._manager = manager
        self.deadline = deadline  # time.monotonic() of the expiry
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._decision: Decision | None = None
        self._futures: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def done(self) -> bool:
        """The approval was resolved or expired."""
        return self._event.is_set()

    @property
    def decision(self) -> Decision | None:
        """The decision so far (None while pending and after a timeout)."""
        return self._decision

    def wait(self) -> Decision | None:
        """Block until the approval is resolved (its decision) or expires (None)."""
        if not self._event.wait(max(0.0, self.deadline - time.monotonic())):
            self._manager.expire(self.id)
        return self._decision

    async def wait_async(self) -> Decision | None:
        """Await the decision (None at expiry) without blocking the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                return self._decision
            self._futures.append((loop, future))
        try:
            await asyncio.wait_for(future, max(0.0, self.deadline - time.monotonic()))
        except TimeoutError:
            self._manager.expire(self.id)
        finally:
            with self._lock:
                self._futures = [(lp, f) for lp, f in self._futures if f is not future]
        return self._decision

    def __await__(self) -> Generator[Any, None, Decision | None]:
        return self.wait_async().__await__()

    def settle(self, decision: Decision | None) -> None:
        """Set the outcome (the manager's part) and wake every waiter."""
        with self._lock:
            self._decision = decision
            self._event.set()
            futures, self._futures = self._futures, []
        for loop, future in futures:
            try:
                loop.call_soon_threadsafe(_wake, future)
            except RuntimeError:  # that loop is closed: its waiter is gone
                pass


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(slots=True)
class _Entry:
    record: ApprovalRecord
    waiter: ApprovalWaiter
    purge_at: float | None = None  # monotonic time after which a resolved record goes
    claimed: bool = False  # a deferred approval's decision was used by its call (once)
    deferred: bool = False  # decided outside: kept until its call claims it or it expires


def _now_ms() -> int:
    return int(time.time() * 1000)


class ApprovalManager:
    """Pending exec approvals (OpenClaw's ``ExecApprovalManager``), thread-safe and asyncio
    friendly. ``request`` registers an approval and returns its waiter; an approver calls
    ``resolve``; a waiter that outlives ``timeout_s`` gets None. Resolved records stay
    ``grace_s`` seconds for late waiters. ``allow-always`` adds the request's executable to its
    agent's allowlist in memory (used by ``evaluate_exec`` and ``wrap``) and reports it to
    ``on_allow_always(agent_id, pattern)`` so the gateway can persist it: a pattern that
    matches that one absolute path and nothing else (``glob_escape``: ``/opt/a*b`` is stored
    as ``/opt/a[*]b``); a path that is not absolute is not learned."""

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        grace_s: float = RESOLVED_GRACE_S,
        on_allow_always: Callable[[str | None, str], None] | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        self._on_allow_always = on_allow_always
        self._logger = logger or logging.getLogger(f"{PACKAGE_NAME}.approvals")
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._allow: dict[str | None, tuple[str, ...]] = {}

    def create(
        self,
        request: ExecApprovalRequest,
        *,
        record_id: str | None = None,
        timeout_s: float | None = None,
        digest: str | None = None,
    ) -> ApprovalRecord:
        """A new pending record (not yet registered); a blank id gets a random one, a missing
        digest ``request_digest(request)``."""
        now = _now_ms()
        timeout = self.timeout_s if timeout_s is None else timeout_s
        rid = record_id.strip() if record_id and record_id.strip() else str(uuid.uuid4())
        return ApprovalRecord(
            id=rid,
            request=request,
            created_at_ms=now,
            expires_at_ms=now + int(timeout * 1000),
            digest=digest if digest is not None else request_digest(request),
        )

    def register(self, record: ApprovalRecord) -> ApprovalWaiter:
        """Register ``record`` and return its waiter. Registering a pending id again returns
        the same waiter; an id resolved within the grace period raises ValueError."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(record.id)
            if entry is not None:
                if entry.record.resolved_at_ms is None:
                    return entry.waiter
                raise ValueError(f"approval id {record.id!r} already resolved")
            timeout_s = max(0.0, (record.expires_at_ms - record.created_at_ms) / 1000)
            waiter = ApprovalWaiter(self, record.id, time.monotonic() + timeout_s)
            self._entries[record.id] = _Entry(record, waiter)
            return waiter

    def request(
        self,
        request: ExecApprovalRequest,
        *,
        record_id: str | None = None,
        timeout_s: float | None = None,
    ) -> ApprovalWaiter:
        """``create`` then ``register``."""
        return self.register(self.create(request, record_id=record_id, timeout_s=timeout_s))

    def resolve(
        self,
        record_id: str,
        decision: Decision,
        resolved_by: str | None = None,
        *,
        digest: str | None = None,
    ) -> bool:
        """Decide a pending approval; False when it is unknown, expired or already decided,
        or when ``digest`` is given and is not the record's. Any decision but
        ``allow-once``, ``allow-always`` or ``deny`` is a ValueError."""
        if decision not in DECISIONS or not isinstance(decision, str):
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        with self._lock:
            self._sweep()
            current = self._entries.get(record_id)
            if digest is not None and (current is None or current.record.digest != digest):
                self._logger.warning(
                    "decision for approval %s refused: other request", printable(record_id)
                )
                return False
            entry = self._settle(record_id, decision, resolved_by)
            added = (
                self._extend(entry.record.request) if entry and decision == "allow-always" else None
            )
        if added is not None:
            self._report(*added)
        return entry is not None

    # -- decisions collected elsewhere (a framework's human-in-the-loop pause) ----------------
    def defer(  # noqa: PLR0913 - the request, its binding and its timeout
        self,
        request: ExecApprovalRequest,
        *,
        call_id: str,
        digest: str,
        params: Mapping[str, Any] | None = None,
        arguments: str = "",
        timeout_s: float | None = None,
    ) -> tuple[ApprovalRecord, bool]:
        """The approval of tool call ``call_id`` for the evaluated request ``digest``, whose
        decision comes from outside (``submit``): ``(record, fresh)``, ``fresh`` True when
        it was registered now, False when an earlier pass of the same call registered it
        (pending, or decided and not yet claimed). ``params`` (the evaluated params the call
        runs with) and ``arguments`` (a digest of the model's own arguments) let the resumed
        call find them again (``resumable``). ExecDeniedError when the call's approval
        was asked for another request (the command, its directory or environment changed,
        or a hook changed them, since it was shown: that record is expired) or when its
        decision was already used (a call runs once per approval)."""
        if not call_id:
            raise ValueError("a deferred approval needs the tool call id")
        with self._lock:
            self._sweep()
            entry = self._entries.get(call_id)
            if entry is not None and entry.record.digest != digest:
                if entry.record.resolved_at_ms is None:
                    self._finish(entry, None, "superseded")
                    raise ExecDeniedError(
                        f"Exec denied (approval-mismatch): the request changed after its "
                        f"approval was asked for: {request.command}",
                        tool="exec",
                        code="approval-mismatch",
                    )
                del self._entries[call_id]  # an old call under a reused id: its own record
                entry = None
            if entry is not None:
                if entry.claimed or (
                    entry.record.resolved_at_ms is not None and entry.record.decision is None
                ):
                    why = "approval-used" if entry.claimed else "approval-timeout"
                    raise ExecDeniedError(
                        f"Exec denied ({why}): {request.command}", tool="exec", code=why
                    )
                return entry.record, False
            record = dataclasses.replace(
                self.create(request, record_id=call_id, timeout_s=timeout_s, digest=digest),
                params=params,
                arguments=arguments,
            )
            timeout = max(0.0, (record.expires_at_ms - record.created_at_ms) / 1000)
            waiter = ApprovalWaiter(self, record.id, time.monotonic() + timeout)
            self._entries[record.id] = _Entry(record, waiter, deferred=True)
            return record, True

    def resumable(self, call_id: str, *, arguments: str) -> ApprovalRecord | None:
        """The deferred approval of tool call ``call_id`` when the resumed call carries the
        same model arguments (``arguments``: their digest) and it can still be decided or
        used: its evaluated params run without evaluating the call again."""
        record = self.asked(call_id, arguments=arguments)
        if record is None or (record.resolved_at_ms is not None and record.decision is None):
            return None  # timed out
        return record

    def asked(self, call_id: str, *, arguments: str) -> ApprovalRecord | None:
        """The deferred approval of tool call ``call_id`` asked for with the same model
        arguments (``arguments``: their digest) and not used yet: pending, decided, or timed
        out (while it is kept). A framework that evaluates the call again before it runs
        (LangGraph runs a node again on resume) finds the approval the person was shown."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(call_id)
            if entry is None or entry.claimed or not entry.record.arguments:
                return None
            return entry.record if entry.record.arguments == arguments else None

    def submit(
        self, call_id: str, decision: Decision, *, digest: str, resolved_by: str | None = None
    ) -> bool:
        """Hand in a decision collected elsewhere for the pending approval of tool call
        ``call_id``. It counts only for the request that was evaluated: ``digest`` must be the
        record's (``ApprovalRecord.digest``, carried by the framework's pause); otherwise,
        or when the approval is not pending, nothing changes and the answer is False.
        ``allow-always`` extends the allowlist as ``resolve`` does."""
        return self.resolve(call_id, decision, resolved_by, digest=digest)

    def claim(self, call_id: str, *, digest: str) -> Decision | None:
        """The decision of the deferred approval ``call_id`` for the request ``digest``, once:
        the call that runs on it takes it, a second claim gets None (as does a pending,
        expired, unknown or other request's approval)."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(call_id)
            if entry is None or entry.claimed or entry.record.digest != digest:
                return None
            if entry.record.decision is None:
                return None
            entry.claimed = True
            entry.purge_at = time.monotonic() + self.grace_s
            return entry.record.decision

    def expire(self, record_id: str, resolved_by: str | None = None) -> bool:
        """Resolve a pending approval to None (a timeout); False when it is not pending."""
        with self._lock:
            return self._settle(record_id, None, resolved_by) is not None

    def snapshot(self, record_id: str) -> ApprovalRecord | None:
        """The record as it is now (pending, or resolved within the grace period)."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(record_id)
            return entry.record if entry else None

    def waiter(self, record_id: str) -> ApprovalWaiter | None:
        """The waiter of a pending approval, or of one resolved within the grace period (a
        late waiter gets its decision at once); None when there is no such approval."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(record_id)
            return entry.waiter if entry else None

    def pending(self) -> list[ApprovalRecord]:
        """Approvals still waiting for a decision, oldest first."""
        with self._lock:
            self._sweep()
            return [e.record for e in self._entries.values() if e.record.resolved_at_ms is None]

    def allowlist(self, agent_id: str | None) -> tuple[str, ...]:
        """Patterns allow-always added for ``agent_id`` (None: requests of no agent)."""
        return self._allow.get(agent_id, ())

    # -- under the lock ------------------------------------------------------------------------
    def _settle(
        self, record_id: str, decision: Decision | None, resolved_by: str | None
    ) -> _Entry | None:
        entry = self._entries.get(record_id)
        if entry is None or entry.record.resolved_at_ms is not None:
            return None
        if decision is not None and time.monotonic() >= entry.waiter.deadline:
            self._finish(entry, None, None)  # it timed out before this decision came
            return None
        self._finish(entry, decision, resolved_by)
        return entry

    def _finish(self, entry: _Entry, decision: Decision | None, resolved_by: str | None) -> None:
        entry.record = dataclasses.replace(
            entry.record, resolved_at_ms=_now_ms(), decision=decision, resolved_by=resolved_by
        )
        now = time.monotonic()
        entry.purge_at = now + self.grace_s
        if entry.deferred and decision is not None:  # the resumed call may come later
            entry.purge_at = max(entry.purge_at, entry.waiter.deadline)
        entry.waiter.settle(decision)

    def _sweep(self) -> None:
        """Expire overdue approvals and drop resolved ones past their grace period."""
        now = time.monotonic()
        for key, entry in list(self._entries.items()):
            if entry.purge_at is None and now >= entry.waiter.deadline:
                self._finish(entry, None, None)
            elif entry.purge_at is not None and now >= entry.purge_at:
                del self._entries[key]

    def _extend(self, request: ExecApprovalRequest) -> tuple[str | None, str] | None:
        pattern = allow_always_pattern(request)  # what the request told the person
        if pattern is None:
            return None
        current = self._allow.get(request.agent_id, ())
        if pattern in current:
            return None
        self._allow[request.agent_id] = (*current, pattern)
        return request.agent_id, pattern

    def _report(self, agent_id: str | None, pattern: str) -> None:
        if self._on_allow_always is None:
            return
        try:
            self._on_allow_always(agent_id, pattern)
        except Exception as exc:
            self._logger.warning(
                "allow-always callback failed: pattern=%s error=%s",
                printable(pattern),
                printable(exc),
            )


# -- the wrapped exec call's helpers (_wrap) ---------------------------------------------------
def arguments_digest(params: Mapping[str, Any]) -> str:
    """A digest of a call's validated arguments (what binds a resumed call to its pause)."""
    text = json.dumps(
        params, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ask_reason(verdict: ExecVerdict) -> str:
    """Why the policy asks about a command (what an approver is told)."""
    if verdict.ask == "always":
        return "ask=always: every command is asked about"
    if not verdict.analysis.ok:
        why = verdict.analysis.reason or "not one simple command"
        return f"the command cannot be analysed ({why})"
    if verdict.executable is None:
        return "the executable cannot be resolved"
    return f"allowlist miss: no pattern matches {verdict.executable}"


def exec_workdir(requested: object, workspace: str | None) -> str | None:
    """The directory an exec command runs in, absolute with its symlinks resolved: the
    call's workdir (relative to the workspace), else the workspace; None when that is not
    known (then nothing relative can be resolved: the gateway's own cwd is never used)."""
    # trimmed, as OpenClaw reads it (``params.workdir?.trim()``)
    directory = requested.strip() or None if isinstance(requested, str) else None
    if directory is not None and os.path.isabs(directory):
        return os.path.realpath(directory)
    if workspace is None:
        return None
    return os.path.realpath(os.path.join(workspace, directory or "."))


def decided(params: Mapping[str, Any], decision: Decision | None) -> None:
    """An approval's outcome: allow-once and allow-always run the command."""
    if decision in ("allow-once", "allow-always"):
        return
    why = "user-denied" if decision == "deny" else "approval-timeout"
    raise ExecDeniedError(f"Exec denied ({why}): {params.get('command')}", tool=EXEC_TOOL, code=why)

"""Exec approvals: the compiled tools.exec policy, requires_approval, command analysis,
allowlist matching, the approval manager and the exec gate of the wrapped path."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from toolc.runtime._hostenv import blocked_key, env_violation
from toolc.runtime._shell import (
    analyze_command,
    glob_escape,
    match_allowlist,
    pattern_breadth,
    pattern_can_match,
    resolve_executable,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory with an executable ~/bin/mytool (the global allowlist has ~/bin/*)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    tool = tmp_path / "bin" / "mytool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    return tmp_path


def ctx(rt: ModuleType, agent: str | None = None, **kw: Any) -> Any:
    return rt.CallContext(agent_id=agent, **kw)


# -- the compiled policy ------------------------------------------------------------------------
def test_policies_compile_with_openclaw_defaults(rt: ModuleType) -> None:
    policy = rt.exec_policy
    assert policy(ctx(rt)) == rt.ExecPolicy("sandbox", "deny", "on-miss", ("~/bin/*",))
    assert policy(ctx(rt, "plain")) == policy(ctx(rt))
    assert policy(ctx(rt, "ops")) == rt.ExecPolicy(
        "gateway", "allowlist", "on-miss", ("~/bin/*", "/work/scripts/*", "/usr/bin/true"))
    assert policy(ctx(rt, "closed")).security == "deny"
    assert policy(ctx(rt, "quiet")) == rt.ExecPolicy("node", "allowlist", "off", ("~/bin/*",))
    # the session key names the agent when there is no agent id, as for resolve()
    assert policy(rt.CallContext(session_key="agent:ops:main")).host == "gateway"
    assert policy(ctx(rt, "nobody")).host == "sandbox"


def test_requires_approval(rt: ModuleType, home: Path) -> None:
    path = str(home / "bin")
    ask = rt.requires_approval
    assert ask("mytool --fast", ctx(rt, "ops"), path=path) is False  # ~/bin/* matches
    assert ask("./scripts/build.sh", ctx(rt, "ops"), cwd="/work") is False
    assert ask("rm -rf /", ctx(rt, "ops"), path=path) is True  # not on the allowlist
    for unanalysable in ("mytool && rm x", "mytool | tee f", "mytool; rm x", "mytool $(rm x)",
                         "mytool > out", "env mytool", "bash -c mytool", "FOO=1 mytool"):
        assert ask(unanalysable, ctx(rt, "ops"), path=path) is True, unanalysable
    assert ask("mytool", ctx(rt, "strict"), path=path) is True  # ask: always
    assert ask("anything at all", ctx(rt, "open")) is False  # full, off
    assert ask("anything at all", ctx(rt)) is False  # the sandbox host asks nothing
    # what the call asks for can only be stricter
    assert ask("mytool", ctx(rt, "ops"), path=path, ask="always") is True
    assert ask("anything", ctx(rt, "open"), security="allowlist", ask="on-miss") is True


@pytest.mark.parametrize(("agent", "command", "kw", "why"), [
    ("closed", "ls", {}, "exec denied: host=gateway security=deny"),
    ("quiet", "rm x", {}, "exec denied: allowlist-miss"),
    ("ops", "ls", {"host": "node"}, "exec host not allowed (requested node"),
    ("open", "ls", {"security": "deny"}, "exec denied: host=gateway security=deny"),
])
def test_refused_outright(rt: ModuleType, agent: str, command: str, kw: dict[str, str],
                          why: str) -> None:
    with pytest.raises(rt.ExecDeniedError, match=why.replace("(", r"\(")):
        rt.requires_approval(command, ctx(rt, agent), **kw)


def test_malformed_values_are_refused(rt: ModuleType) -> None:
    with pytest.raises(ValueError, match="exec ask"):
        rt.requires_approval("ls", ctx(rt, "ops"), ask="sometimes")
    with pytest.raises(TypeError):
        rt.exec_policy(rt.CallContext(agent_id=3))  # type: ignore[arg-type]


# -- analysis and matching (pure helpers) -------------------------------------------------------
@pytest.mark.parametrize(("command", "argv"), [
    ("ls -la", ("ls", "-la")),
    ("git commit -m 'a $b; c'", ("git", "commit", "-m", "a $b; c")),
    ('echo "two words" x', ("echo", "two words", "x")),
    ("ls *.py ~/x", ("ls", "*.py", "~/x")),
])
def test_simple_commands_are_analysed(command: str, argv: tuple[str, ...]) -> None:
    assert analyze_command(command).argv == argv


@pytest.mark.parametrize("command", [
    "", "  ", "a && b", "a || b", "a; b", "a | b", "a & b", "a > f", "a < f", "(a)", "a `b`",
    "a $(b)", 'a "$HOME"', "a\nb", "a 'unterminated", "x=1 a", "sudo a", "/usr/bin/env a",
    "timeout 5 a", "sh -c a", "a \\; b", "# comment", "a {b,c}",
    # builtins that run code hidden in quoted arguments, keywords, globs, tilde forms
    "printf -v 'a[$(id)]' x", "trap 'rm -rf x' EXIT", "coproc x", "if", "''", "/bin/l?",
    "~root/x", "~+/x", '~"/x"',
])
def test_anything_else_cannot_be_analysed(command: str) -> None:
    assert not analyze_command(command).ok


def test_patterns_match_resolved_paths(home: Path) -> None:
    analysis = analyze_command("mytool")
    target = str(home / "bin" / "mytool")
    assert match_allowlist(("~/bin/*",), analysis, target) == "~/bin/*"
    assert match_allowlist(("~/bin/my*",), analysis, target) == "~/bin/my*"
    if os.name != "nt":  # case matters but on Windows (2026.9.6)
        assert match_allowlist(("~/BIN/MY*",), analysis, target) is None
    assert match_allowlist(("~/*",), analysis, target) is None  # * stays in one segment
    assert match_allowlist(("~/**",), analysis, target) == "~/**"
    assert match_allowlist(("mytool",), analysis, target) is None  # a bare name never matches
    assert match_allowlist(("*",), analysis, None) == "*"
    assert match_allowlist(("*",), analyze_command("a | b"), None) is None
    assert not pattern_can_match("rg") and pattern_can_match("/usr/bin/rg")
    assert not pattern_can_match("./bin/*") and pattern_can_match("**/bin/rg")


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("/usr/bin/?s", "/usr/bin/ls", True),
    ("/usr/?/ls", "/usr///ls", False),  # ? never matches a separator
    ("/opt/[*]", "/opt/*", True),
    ("/opt/[*]", "/opt/x", False),
    ("/opt/[[]x]", "/opt/[x]", True),
    ("/opt/[ab]", "/opt/[ab]", True),  # more than one character: literal, as in OpenClaw
    ("/opt/**", "/opt/a/b", True),
    ("/opt/*", "/opt/a/b", False),
])
def test_pattern_syntax(pattern: str, path: str, matches: bool) -> None:
    got = match_allowlist((pattern,), analyze_command("x"), path)
    assert (got == pattern) is matches


@pytest.mark.parametrize("path", ["/opt/a*b", "/**", "/x/[y]/?", "/t/trailing ", "/a]b"])
def test_glob_escape_matches_exactly_that_path(path: str) -> None:
    pattern = glob_escape(path)
    analysis = analyze_command("x")
    assert match_allowlist((pattern,), analysis, path) == pattern
    for other in ("/opt/aXb", "/a", "/x/y/z", "/t/trailing", "/x/[y]/!", "/ab"):
        assert match_allowlist((pattern,), analysis, other) is None, (pattern, other)
    assert pattern_breadth(pattern) is None


def test_pattern_breadth() -> None:
    assert pattern_breadth(" * ") == "matches every command"
    assert pattern_breadth("~/**") == pattern_breadth("**/rg") == "matches a whole directory tree"
    assert pattern_breadth("/usr/bin/*") is None and pattern_breadth("/[*][*]") is None


def test_resolution_never_uses_this_process_s_cwd(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    relative, bare = analyze_command("bin/tool"), analyze_command("tool")
    assert resolve_executable(relative) is None  # where it runs is not known
    assert resolve_executable(relative, cwd="bin") is None  # nor relative to what
    assert resolve_executable(relative, cwd=str(tmp_path)) == str(tool)
    assert resolve_executable(bare, path="bin") is None
    assert resolve_executable(bare, path=f"/nonexistent{os.pathsep}bin", cwd=str(tmp_path)) == (
        str(tool))
    link = tmp_path / "link"
    link.symlink_to(tool)
    assert resolve_executable(analyze_command(str(link))) == str(tool)  # symlinks resolved


def test_host_env_lists() -> None:
    assert blocked_key("path") and blocked_key("LD_anything") and blocked_key("git_config_x")
    assert not blocked_key("LANG") and not blocked_key("LDFLAGSX")
    assert env_violation({"LANG": "C"}) is None and env_violation(None) is None
    assert env_violation({"PATH": "/x"}) == (
        "Security Violation: Custom 'PATH' variable is forbidden during host execution.")
    assert env_violation({"HOME": "/x", " X": "y"}) == (
        "Security Violation: blocked override keys: HOME; invalid non-portable override keys: "
        "' X'.")


# -- the approval manager -----------------------------------------------------------------------
def request(rt: ModuleType, command: str = "rm x", **kw: Any) -> Any:
    return rt.ExecApprovalRequest(command=command, **kw)


def test_register_is_idempotent_and_resolve_records_who(rt: ModuleType) -> None:
    manager = rt.ApprovalManager()
    record = manager.create(request(rt), record_id="a1")
    waiter = manager.register(record)
    assert manager.register(record) is waiter
    assert manager.request(request(rt, "other"), record_id="a1") is waiter
    assert [r.id for r in manager.pending()] == ["a1"]
    assert record.expires_at_ms - record.created_at_ms == 120_000
    assert manager.resolve("a1", "allow-once", resolved_by="alice")
    assert not manager.resolve("a1", "deny")  # decided already
    snapshot = manager.snapshot("a1")
    assert (snapshot.decision, snapshot.resolved_by) == ("allow-once", "alice")
    assert waiter.wait() == "allow-once" and manager.pending() == []
    with pytest.raises(ValueError, match="already resolved"):
        manager.register(record)
    with pytest.raises(ValueError, match="decision must be one of"):
        manager.resolve("a1", "yes")  # type: ignore[arg-type]
    assert not manager.resolve("unknown", "deny")


def test_a_timeout_resolves_to_none(rt: ModuleType) -> None:
    manager = rt.ApprovalManager(timeout_s=0.05)
    waiter = manager.request(request(rt))
    started = time.monotonic()
    assert waiter.wait() is None and time.monotonic() - started < 2
    assert not manager.resolve(waiter.id, "allow-once")  # too late
    assert manager.snapshot(waiter.id).resolved_at_ms is not None
    late = manager.request(request(rt), timeout_s=0.01)
    time.sleep(0.03)
    assert not manager.resolve(late.id, "allow-once") and late.wait() is None


def test_resolved_records_stay_for_late_waiters(rt: ModuleType) -> None:
    manager = rt.ApprovalManager(grace_s=0.1)
    waiter = manager.request(request(rt))
    manager.resolve(waiter.id, "deny")
    late = manager.waiter(waiter.id)
    assert late is waiter and late.wait() == "deny"
    time.sleep(0.15)
    assert manager.waiter(waiter.id) is None and manager.snapshot(waiter.id) is None


def test_async_waiters_are_woken_from_other_threads(rt: ModuleType) -> None:
    manager = rt.ApprovalManager(timeout_s=5)

    async def scenario() -> tuple[Any, Any]:
        waiter = manager.request(request(rt))
        threading.Timer(0.02, manager.resolve, (waiter.id, "allow-always")).start()
        quick = manager.request(request(rt), timeout_s=0.02)
        return await waiter, await quick.wait_async()

    assert asyncio.run(asyncio.wait_for(scenario(), 5)) == ("allow-always", None)


def test_allow_always_extends_the_agent_s_allowlist(rt: ModuleType,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    persisted: list[tuple[str | None, str]] = []
    manager = rt.ApprovalManager(on_allow_always=lambda agent, p: persisted.append((agent, p)))
    waiter = manager.request(request(rt, agent_id="ops", resolved_path="/opt/bin/tool"))
    manager.resolve(waiter.id, "allow-always")
    assert persisted == [("ops", "/opt/bin/tool")]
    assert manager.allowlist("ops") == ("/opt/bin/tool",)
    assert "/opt/bin/tool" in rt.exec_policy(ctx(rt, "ops"), approvals=manager).allowlist
    assert not rt.requires_approval("/opt/bin/tool -x", ctx(rt, "ops"), approvals=manager)
    # only an allowlist policy learns, and a failing callback is logged, not raised
    full = manager.request(request(rt, security="full", resolved_path="/x"))
    manager.resolve(full.id, "allow-always")
    broken = rt.ApprovalManager(on_allow_always=lambda agent, p: 1 / 0)
    with caplog.at_level(logging.WARNING):
        assert broken.resolve(broken.request(request(rt, resolved_path="/y")).id, "allow-always")
    assert persisted == [("ops", "/opt/bin/tool")] and "allow-always callback failed" in caplog.text


def _together(*targets: Any) -> None:
    """Start every target in its own thread at once and wait for all (bounded)."""
    barrier = threading.Barrier(len(targets))

    def run(target: Any) -> None:
        barrier.wait(5)
        target()

    threads = [threading.Thread(target=run, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)


def test_concurrent_registration_and_resolution(rt: ModuleType) -> None:
    manager = rt.ApprovalManager(timeout_s=10)
    ids = [f"id{i}" for i in range(25)]
    got: dict[str, set[int]] = {i: set() for i in ids}
    wins: list[tuple[str, str]] = []
    decided: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def register() -> None:  # every thread registers every id: one waiter per id
        for rid in ids:
            waiter = manager.request(request(rt), record_id=rid)
            with lock:
                got[rid].add(id(waiter))

    def wait() -> None:
        for rid in ids[:3]:
            decision = manager.waiter(rid).wait()
            with lock:
                decided.append((rid, decision))

    def resolve(decision: str) -> Any:
        def run() -> None:
            for rid in ids:
                if manager.resolve(rid, decision):
                    with lock:
                        wins.append((rid, decision))
        return run

    _together(register, register, register, register)
    assert all(len(waiters) == 1 for waiters in got.values()) and len(manager.pending()) == 25
    _together(wait, wait, resolve("allow-once"), resolve("deny"), resolve("allow-always"))
    assert sorted(rid for rid, _ in wins) == sorted(ids)  # exactly one decision per approval
    winner = dict(wins)
    assert len(decided) == 6 and all(winner[rid] == d for rid, d in decided)
    assert all(manager.snapshot(rid).decision == winner[rid] for rid in ids)


# -- the exec gate of the wrapped path ----------------------------------------------------------
def _exec(args: dict[str, Any], call: Any) -> str:
    return f"ran {args['command']}"


def test_the_wrapped_exec_asks_and_waits(rt: ModuleType, home: Path) -> None:
    manager = rt.ApprovalManager(timeout_s=5)
    tools = rt.wrap(rt.resolve(agent_id="ops"), {"exec": _exec},
                    context=ctx(rt, "ops", session_key="agent:ops:main"), approvals=manager)

    def approve(decision: str) -> None:
        deadline = time.monotonic() + 5
        while not manager.pending() and time.monotonic() < deadline:
            time.sleep(0.005)
        record = manager.pending()[0]
        assert record.request.agent_id == "ops" and record.request.host == "gateway"
        manager.resolve(record.id, decision, resolved_by="owner")

    assert tools.call("exec", {"command": "./scripts/t.sh", "workdir": "/work"}).text == (
        "ran ./scripts/t.sh")  # on the allowlist: no approval
    threading.Thread(target=approve, args=("deny",)).start()
    denied = tools.call("exec", {"command": "/usr/local/bin/x"})
    assert denied.details["error"] == "Exec denied (user-denied): /usr/local/bin/x"
    threading.Thread(target=approve, args=("allow-always",)).start()
    assert tools.call("exec", {"command": "/usr/local/bin/x"}).text == "ran /usr/local/bin/x"
    assert tools.call("exec", {"command": "/usr/local/bin/x -v"}).text.startswith("ran")  # learnt
    assert manager.pending() == []


def test_the_wrapped_exec_fails_closed(rt: ModuleType) -> None:
    no_approver = rt.wrap(rt.resolve(agent_id="strict"), {"exec": _exec}, context=ctx(rt, "strict"))
    assert no_approver.call("exec", {"command": "ls"}).details["error"] == (
        "exec denied: approval required, and no approver is set up")
    closed = rt.wrap(rt.resolve(agent_id="closed"), {"exec": _exec}, context=ctx(rt, "closed"))
    assert closed.call("exec", {"command": "ls"}).details["error"] == (
        "exec denied: host=gateway security=deny")
    sandboxed = rt.wrap(rt.resolve(), {"exec": _exec})
    assert sandboxed.call("exec", {"command": "rm -rf / | x"}).text.startswith("ran")
    manager = rt.ApprovalManager(timeout_s=0.05)
    timed_out = rt.wrap(rt.resolve(agent_id="strict"), {"exec": _exec},
                        context=ctx(rt, "strict"), approvals=manager)
    assert timed_out.call("exec", {"command": "ls"}).details["error"] == (
        "Exec denied (approval-timeout): ls")


def test_an_abort_ends_the_wait_for_an_approval(rt: ModuleType) -> None:
    manager = rt.ApprovalManager(timeout_s=30)
    signal = rt.AbortSignal()
    tools = rt.wrap(rt.resolve(agent_id="strict"), {"exec": _exec}, context=ctx(rt, "strict"),
                    approvals=manager, signal=signal)
    threading.Timer(0.05, signal.abort).start()
    started = time.monotonic()
    with pytest.raises(rt.AbortError):
        tools.call("exec", {"command": "ls"})
    assert time.monotonic() - started < 5

    async def async_abort() -> None:
        run = rt.AbortSignal()
        atools = rt.wrap(rt.resolve(agent_id="strict"), {"exec": _exec},
                         context=ctx(rt, "strict"), approvals=manager, signal=run)
        asyncio.get_running_loop().call_later(0.05, run.abort)
        with pytest.raises(rt.AbortError):
            await atools.acall("exec", {"command": "ls"})

    asyncio.run(asyncio.wait_for(async_abort(), 5))
    assert os.environ.get("HOME")  # nothing here touched the environment


def test_the_workspace_must_be_absolute_and_workdir_is_trimmed(rt: ModuleType,
                                                              tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workspace must be an absolute path"):
        rt.wrap(rt.resolve(agent_id="ops"), {"exec": _exec}, workspace="relative/dir")
    got: list[dict[str, Any]] = []
    tools = rt.wrap(rt.resolve(agent_id="open"), {"exec": lambda a, c: got.append(a)},
                    context=ctx(rt, "open"), workspace=tmp_path)
    tools.call("exec", {"command": "ls"})
    tools.call("exec", {"command": "ls", "workdir": f"  {tmp_path}  "})
    assert [a["workdir"] for a in got] == [os.path.realpath(tmp_path)] * 2

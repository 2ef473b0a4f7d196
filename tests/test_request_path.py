"""The runtime's request path after its speed-ups (issue 22): the same answers on the fast
paths as on the general ones, and the buffered decision-log sink's flush, close and bound
(issue 23). No timing: what is checked is behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from toolc.api import compile_files
from toolc.pipeline.writer import publish

from tests.helpers import ROOT, import_runtime


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("request-path") / "build"
    files, _, _ = compile_files(ROOT / "definitions", package="toolc_hot_shipped")
    publish(files, out)
    return import_runtime(out, "toolc_hot_shipped")


class Text(str):
    """A str subclass: not the exact type the fast checks accept, still a valid value."""


class Depth(int):
    pass


CONTEXTS: list[dict[str, Any]] = [
    {},
    {"agent_id": "main", "session_key": "agent:main:telegram:group:-100123",
     "message_provider": "telegram", "group_id": "-100123", "sender_id": "42"},
    {"agent_id": "viewer", "model_provider": "openai", "model_id": "gpt-5",
     "sender_is_owner": True, "sandboxed": True},
    {"session_key": "agent:main:subagent:x", "spawn_depth": 2, "group_id": "  "},
    {"agent_id": "support", "message_provider": " Slack ", "group_id": "C1",
     "session_key": "agent:support:slack:channel:C1", "sender_username": "@alice"},
]


@pytest.mark.parametrize("ctx", CONTEXTS)
def test_subclassed_values_take_the_general_check_and_agree(shipped: ModuleType,
                                                            ctx: dict[str, Any]) -> None:
    """A str or int subclass fails the exact-type fast check, passes _check and gets the
    same tools as the plain value."""
    wrapped = {k: Text(v) if isinstance(v, str) else Depth(v) if type(v) is int else v
               for k, v in ctx.items()}
    assert shipped.resolve_uncached(**wrapped).names == shipped.resolve_uncached(**ctx).names
    assert shipped.resolve(**ctx).names == shipped.resolve_uncached(**ctx).names


@pytest.mark.parametrize(("key", "value"), [("agent_id", 1), ("sender_is_owner", 1),
                                            ("sandboxed", "yes"), ("spawn_depth", True),
                                            ("spawn_depth", -1), ("group_id", b"g")])
def test_ill_typed_values_still_raise_naming_the_keyword(shipped: ModuleType, key: str,
                                                          value: object) -> None:
    with pytest.raises(TypeError, match=key):
        shipped.resolve_uncached(**{key: value})


def _impls() -> dict[str, Any]:
    return {"read": lambda args, call: f"read {args}", "gateway": lambda args, call: "ok",
            "write": lambda args, call: None}


CALLS: list[tuple[str, Any]] = [
    ("read", {"path": "a.txt"}),
    ("read", {"file_path": "a.txt"}),  # an alias, mapped to path
    ("read", {}),  # a required group missing: OpenClaw's message
    ("read", {"path": "   "}),  # blank does not satisfy the group
    ("read", {"path": 5}),  # strict validation
    ("read", '{"path": "b.txt"}'),  # JSON text
    ("read", "not json"),
    ("gateway", {}),  # owner-only: refused for a non-owner
    ("write", {"path": "a", "content": "x"}),  # None: the ok JSON result
]


@pytest.mark.parametrize("validate", [True, False])
def test_the_plain_path_answers_as_the_general_one(shipped: ModuleType, validate: bool) -> None:
    """A call without signal, hooks or approver takes _run_plain; the same call with a
    signal takes the full path (_path): results are identical."""
    ctx = shipped.CallContext(agent_id="main", sender_is_owner=False)
    toolset = shipped.resolve(agent_id="main", sender_is_owner=True)
    tools = shipped.wrap(toolset, _impls(), context=ctx, validate=validate)
    for name, args in CALLS:
        if name not in tools:
            continue
        plain = tools[name].call(args, tool_call_id="c1")
        general = tools[name].call(args, tool_call_id="c1", signal=shipped.AbortSignal())
        assert plain == general, (name, args)


def test_an_awaitable_result_is_refused_on_the_plain_path(shipped: ModuleType) -> None:
    async def late(args: Any, call: Any) -> str:
        return "never"

    class Sneaky:
        def __call__(self, args: Any, call: Any) -> Any:
            return late(args, call)

    tools = shipped.wrap(shipped.resolve(agent_id="main"), {"read": Sneaky()}, validate=False)
    result = tools["read"].call({"path": "x"})
    assert result.is_error and "acall" in result.text


# -- the buffered file sink -----------------------------------------------------------------------
def _log(shipped: ModuleType, sink: Any) -> Any:
    request = shipped.DecisionLog([sink], sender_key=b"k" * 16).request(agent_id="main")
    return shipped.wrap(request.resolve(), _impls(), validate=False, decisions=request)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_buffered_lines_are_written_by_flush_and_close(shipped: ModuleType,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path, flush_interval=3600)  # the writer never wakes in this test
    tools = _log(shipped, sink)
    for _ in range(3):
        tools["read"].call({"path": "x"})
    assert path.read_text() == ""  # queued in the caller's thread, not yet written
    sink.flush()
    assert [x["event"] for x in _lines(path)] == ["list", "call", "call", "call"]
    tools["read"].call({"path": "y"})
    sink.close()
    assert len(_lines(path)) == 5
    sink.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        sink.emit({"event": "late"})


def test_the_queue_is_bounded_the_caller_writes(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path, flush_interval=3600, max_pending=4)
    tools = _log(shipped, sink)
    for _ in range(7):
        tools["read"].call({"path": "x"})
    assert len(_lines(path)) == 8  # 1 list + 7 calls reached 4 pending twice
    sink.close()


def test_unbuffered_writes_before_emit_returns(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path, buffered=False)
    tools = _log(shipped, sink)
    tools["read"].call({"path": "x"})
    assert len(_lines(path)) == 2
    sink.close()


def test_a_batch_rotates_line_by_line(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path, max_bytes=2000, backups=2, flush_interval=3600)
    tools = _log(shipped, sink)
    for _ in range(40):
        tools["read"].call({"path": "x"})
    sink.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["d.jsonl", "d.jsonl.1", "d.jsonl.2"]
    assert all(p.stat().st_size <= 2000 for p in tmp_path.iterdir())


def test_exit_writes_the_queue_a_crash_loses_it(shipped: ModuleType, tmp_path: Path) -> None:
    """A normal interpreter exit writes what is queued (atexit); ``os._exit`` (a crash)
    loses the lines of the last interval, as the docs say."""
    package = shipped.__name__
    build = Path(shipped.__file__).parent.parent
    script = (
        "import os, sys\n"
        f"sys.path.insert(0, {str(build)!r})\n"
        f"import {package} as rt\n"
        "sink = rt.FileSink(sys.argv[1], flush_interval=3600)\n"
        "rt.DecisionLog([sink]).request(agent_id='main').resolve()\n"
        "if sys.argv[2] == 'crash':\n"
        "    os._exit(0)\n"
    )
    for how, expected in (("exit", 1), ("crash", 0)):
        path = tmp_path / f"{how}.jsonl"
        subprocess.run([sys.executable, "-c", script, str(path), how], check=True,
                       env={**os.environ, "PYTHONPATH": ""})
        assert len(path.read_text().splitlines()) == expected, how

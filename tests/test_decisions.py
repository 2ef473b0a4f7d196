"""Decision logs (toolc_runtime._decisions): the deciding layer of every removed tool agrees with
``toolc explain``; one JSON line per call, refusal and exec approval; senders hashed with the
HMAC key, arguments redacted; the file sink rotates; OpenTelemetry spans follow the GenAI
semantic conventions (checked with the SDK's in-memory exporter)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from toolc.api import compile_files, resolve_definitions
from toolc.audit.explain import explain
from toolc.diagnostics import BUILTIN, Pos
from toolc.pipeline.writer import publish

from tests.helpers import ROOT, import_runtime, write_definitions

KEY = b"test-key-0123456789"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The shipped definitions, built with provenance.json."""
    out = tmp_path_factory.mktemp("decisions") / "build"
    files, _, _ = compile_files(ROOT / "definitions", package="toolc_dec_shipped")
    publish(files, out)
    return import_runtime(out, "toolc_dec_shipped")


def _contexts() -> list[dict[str, Any]]:
    out = []
    for agent in (None, "main", "viewer", "support"):
        for channel, group in ((None, None), ("telegram", "-100123"), ("slack", "C1")):
            # the session key names the group too (2026.9 trusts a group only from it)
            key = f"agent:{agent or 'main'}:{channel}:group:{group}" if channel else None
            for sender, owner, provider, sandboxed in (
                (None, None, None, None), ("42", True, "anthropic", None),
                ("7", False, "openai", True), (None, True, None, True),
            ):
                out.append({"agent_id": agent, "message_provider": channel, "group_id": group,
                            "session_key": key, "sender_id": sender, "sender_is_owner": owner,
                            "model_provider": provider, "sandboxed": sandboxed})
    return out


def _shown(pos: Pos | None, files: list[str]) -> str | None:
    if pos is None:
        return None
    if pos == BUILTIN:
        return "built-in"
    name = next((f for f in files if pos.file.endswith(f"/{f}") or pos.file == f), pos.file)
    return f"{name}:{pos.line}:{pos.col}"


def test_the_deciding_layer_is_the_rule_explain_names(shipped: ModuleType) -> None:
    """For every tool and a grid of requests: removed exactly when resolve leaves it out, and
    at the very file:line:col ``toolc explain`` points at."""
    decisions = shipped._load_through("_decisions")
    resolved = resolve_definitions(ROOT / "definitions")
    files = sorted(resolved.defs.files, key=len, reverse=True)
    kinds = set()
    for ctx in _contexts():
        names = set(shipped.resolve(**ctx).names)
        for tool in shipped.TOOL_NAMES:
            found = decisions.deciding_layer(tool, **ctx)
            assert (found is None) == (tool in names), (tool, ctx)
            if found is None:
                continue
            row = next(r for r in explain(resolved, tool, ctx).rows
                       if r.result in ("absent", "removed"))
            assert found[2] == _shown(row.pos, files), (tool, ctx, found, row)
            kinds.add(found[0].split(".")[0])
    # the grid reaches profiles, agents, channels (sender rules), byProvider, owner-only, ...
    assert {"profiles", "agents", "channels", "owner-only", "optional"} <= kinds


def test_deciding_layer_words(shipped: ModuleType) -> None:
    decisions = shipped._load_through("_decisions")
    layer, rule, source = decisions.deciding_layer("exec", agent_id="viewer")
    assert layer == "agents.viewer.tools"
    assert rule == 'denied by "group:runtime" in agents.viewer.tools.deny'
    assert source is not None and source.startswith("deployment/agents.yaml:")
    assert decisions.deciding_layer("read", agent_id="viewer") is None
    assert decisions.deciding_layer("nope") == ("catalog", "no tool nope in this build", None)


# -- the log lines -----------------------------------------------------------------------------
def _impls() -> dict[str, Any]:
    return {"read": lambda args, call: "text", "exec": lambda args, call: "ran",
            "gateway": lambda args, call: "ok"}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_one_line_per_decision(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    sink = shipped.FileSink(path)
    log = shipped.DecisionLog([sink], sender_key=KEY)
    # an OpenClaw run of the viewer agent in the group (its session key names the group)
    request = log.request(agent_id="viewer", message_provider="telegram", group_id="-100123",
                          session_key="agent:viewer:telegram:group:-100123", sender_id="42")
    toolset = request.resolve()
    tools = shipped.wrap(toolset, _impls(), context=shipped.CallContext(agent_id="viewer"),
                         validate=False, decisions=request)
    assert tools.call("read", {"path": "secret.txt"}, tool_call_id="c1").text == "text"
    refused = tools.call("exec", {"command": "rm -rf /"}, tool_call_id="c2")
    assert refused.is_error
    sink.close()
    listed, allowed, denied = _lines(path)
    expected_hash = hmac.new(KEY, b"42", hashlib.sha256).hexdigest()
    for line in (listed, allowed, denied):
        assert line["agent"] == "viewer" and line["channel"] == "telegram"
        assert line["group"] == "-100123" and line["sender"] == expected_hash
        assert line["sender_key_id"] == hashlib.sha256(KEY).hexdigest()[:16]
        assert len(line["build"]) == 64 and line["time"].endswith("Z")
    assert listed["event"] == "list" and "read" in listed["tools"]
    assert allowed["verdict"] == "allow" and allowed["tool"] == "read"
    assert allowed["tool_call_id"] == "c1" and allowed["arguments"] == "[redacted]"
    assert denied["verdict"] == "refuse" and denied["tool"] == "exec"
    assert denied["layer"] == "agents.viewer.tools" and denied["source"].startswith(
        "deployment/agents.yaml:")
    raw = path.read_text("utf-8")
    assert '"42"' not in raw and "secret.txt" not in raw and "rm -rf" not in raw


def test_raw_senders_and_arguments_only_when_asked(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path)
    log = shipped.DecisionLog([sink], raw_senders=True, log_arguments=True)
    request = log.request(agent_id="main", sender_id="42", sender_is_owner=False)
    tools = shipped.wrap(request.resolve(), _impls(), validate=False, decisions=request)
    tools.call("read", {"path": "a.txt"})
    tools.call("gateway", {})  # owner-only: not in a non-owner's set
    sink.close()
    _, call, owner = _lines(path)
    assert call["sender"] == "42" and call["sender_key_id"] is None
    assert call["arguments"] == {"path": "a.txt"}
    assert owner["tool"] == "gateway" and owner["verdict"] == "refuse"


def test_random_key_by_default(shipped: ModuleType) -> None:
    one, two = shipped.DecisionLog([]), shipped.DecisionLog([])
    assert one.sender_key_id != two.sender_key_id
    assert one.sender_hash("42") != two.sender_hash("42")


def test_the_file_sink_rotates(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path, max_bytes=2000, backups=2)
    log = shipped.DecisionLog([sink], sender_key=KEY)
    request = log.request(agent_id="main")
    tools = shipped.wrap(request.resolve(), _impls(), validate=False, decisions=request)
    for _ in range(40):
        tools.call("read", {"path": "x"})
    sink.close()
    rotated = sorted(p.name for p in tmp_path.iterdir())
    assert rotated == ["d.jsonl", "d.jsonl.1", "d.jsonl.2"]
    assert all(p.stat().st_size <= 2000 for p in tmp_path.iterdir())
    assert all(json.loads(line)["tool"] == "read" for p in tmp_path.iterdir()
               for line in p.read_text().splitlines())


def test_stdout_sink(shipped: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    log = shipped.DecisionLog([shipped.StdoutSink()], sender_key=KEY)
    log.request(agent_id="main").resolve()
    assert json.loads(capsys.readouterr().out)["event"] == "list"


def test_a_failing_sink_never_breaks_a_call(shipped: ModuleType) -> None:
    class Broken:
        def emit(self, record: Any) -> None:
            raise OSError("disk full")

    request = shipped.DecisionLog([Broken()]).request(agent_id="main")
    tools = shipped.wrap(request.resolve(), _impls(), validate=False, decisions=request)
    assert tools.call("read", {"path": "x"}).text == "text"


# -- exec approvals -----------------------------------------------------------------------------
def test_approvals_asked_granted_denied(rt: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = rt.FileSink(path)
    manager = rt.ApprovalManager(timeout_s=5)
    request = rt.DecisionLog([sink], sender_key=KEY).request(agent_id="strict")
    tools = rt.wrap(request.resolve(), {"exec": lambda a, c: "ran"},
                    context=rt.CallContext(agent_id="strict"), approvals=manager,
                    decisions=request)

    def approve(decision: str) -> None:
        deadline = time.monotonic() + 5
        while not manager.pending() and time.monotonic() < deadline:
            time.sleep(0.005)
        manager.resolve(manager.pending()[0].id, decision)

    for decision in ("allow-once", "deny"):
        threading.Thread(target=approve, args=(decision,)).start()
        tools.call("exec", {"command": "ls"}, tool_call_id=f"x-{decision}")
    sink.close()
    lines = [(x["event"], x["verdict"], x.get("decision")) for x in _lines(path)]
    assert lines == [("list", "list", None),
                     ("approval", "asked", None), ("approval", "granted", "allow-once"),
                     ("call", "allow", None),
                     ("approval", "asked", None), ("approval", "denied", "deny"),
                     ("call", "refuse", None)]
    records = _lines(path)
    assert records[1]["approval_id"] == records[2]["approval_id"] != records[4]["approval_id"]
    assert records[6]["layer"] == "exec-policy"


# -- OpenTelemetry --------------------------------------------------------------------------------
def test_otel_spans_follow_the_genai_conventions(shipped: ModuleType) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    log = shipped.DecisionLog([shipped.OtelSink(provider)], sender_key=KEY)
    request = log.request(agent_id="viewer", sender_id="42")
    tools = shipped.wrap(request.resolve(), _impls(), validate=False, decisions=request)
    tools.call("read", {"path": "x"}, tool_call_id="call-1")
    tools.call("exec", {"command": "ls"}, tool_call_id="call-2")
    ok, refused = exporter.get_finished_spans()
    assert ok.name == "execute_tool read" and refused.name == "execute_tool exec"
    assert ok.attributes is not None and refused.attributes is not None
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["gen_ai.tool.name"] == "read"
    assert ok.attributes["gen_ai.tool.call.id"] == "call-1"
    assert ok.attributes["toolc.verdict"] == "allow"
    assert ok.attributes["toolc.sender"] == hmac.new(KEY, b"42", hashlib.sha256).hexdigest()
    assert ok.status.status_code != StatusCode.ERROR
    assert refused.attributes["toolc.layer"] == "agents.viewer.tools"
    assert str(refused.attributes["toolc.source"]).startswith("deployment/agents.yaml:")
    assert refused.status.status_code == StatusCode.ERROR
    assert ok.end_time is not None and ok.start_time is not None
    assert ok.end_time >= ok.start_time


def test_hostile_values_cannot_forge_a_line(shipped: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    sink = shipped.FileSink(path)
    forged = '"}\n{"verdict":"allow","tool":"exec"}\n'
    # a gateway's message whose chat and sender ids are hostile
    message = shipped.Request(channel="telegram", peer=("group", forged), sender_id=forged)
    request = shipped.DecisionLog([sink], raw_senders=True, log_arguments=True).request(message)
    tools = shipped.wrap(message, _impls(), validate=False, decisions=request)
    request.resolve()
    tools.call("read", {"path": forged})
    tools.call(forged, {})
    sink.close()
    lines = _lines(path)
    assert [x["event"] for x in lines] == ["list", "call", "call"]
    assert lines[1]["sender"] == forged and lines[1]["arguments"] == {"path": forged}
    assert lines[2]["verdict"] == "refuse" and lines[2]["tool"] == forged
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(("target", "removed"), [("2026.9", "exec"), ("2026.3", "read")])
def test_a_slash_model_ids_deciding_layer_follows_the_release(
        tmp_path: Path, target: str, removed: str) -> None:
    """2026.9 prefixes a model id that holds "/" with the provider (2026.3 reads it as the
    whole key): the decision log names the byProvider entry the request path applied."""
    catalog = [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
               for n in ("read", "exec", "message")]
    tools = {"byProvider": {"openrouter/anthropic/claude": {"deny": ["exec"]},
                            "anthropic/claude": {"deny": ["read"]}}}
    defs = write_definitions(tmp_path / "defs", {"d.yaml": {
        "openclaw": target, "catalog": catalog, "tools": tools}})
    package = f"toolc_dec_slash_{target.replace('.', '_')}"
    files, _, _ = compile_files(defs, package=package)
    publish(files, tmp_path / "out")
    rt = import_runtime(tmp_path / "out", package)
    decisions = rt._load_through("_decisions")
    ctx = {"model_provider": "openrouter", "model_id": "anthropic/claude"}
    names = set(rt.resolve(**ctx).names)
    assert removed not in names
    for tool in ("read", "exec", "message"):
        found = decisions.deciding_layer(tool, **ctx)
        assert (found is None) == (tool in names), (tool, found)
    layer, rule, _ = decisions.deciding_layer(removed, **ctx)
    key = "openrouter/anthropic/claude" if target == "2026.9" else "anthropic/claude"
    assert layer == f'tools.byProvider."{key}"', (layer, rule)

"""serve-mcp's decision log and /metrics, end to end: the server runs as a subprocess on
127.0.0.1, a scripted MCP session (the SDK's streamable HTTP client) lists and calls tools,
then the log file is read and /metrics scraped over real HTTP."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolc.api import build
from toolc.serve.mcp_identity import add_identity

from tests.helpers import ROOT, write_definitions
from tests.test_mcp import TOOLC, _wait_for_port, free_port, http_session, run, text

pytest.importorskip("prometheus_client")

IMPL = "tests.mcp_support.served:IMPLEMENTATIONS"
TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}}}
EMPTY = {"type": "object", "properties": {}}


def _definitions(*extra: str) -> dict[str, Any]:
    tools = [{"name": "echo", "description": "Echo a text.", "parameters": TEXT},
             {"name": "admin", "description": "Owner only.", "ownerOnly": True,
              "parameters": EMPTY},
             {"name": "secret", "description": "Denied to b.", "parameters": EMPTY}]
    tools += [{"name": n, "description": f"The {n} tool.", "parameters": EMPTY} for n in extra]
    return {"catalog": tools,
            "agents": {"list": [{"id": "a"}, {"id": "b", "tools": {"deny": ["secret"]}}]}}


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}
                                     if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _serve(root: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*TOOLC, "serve-mcp", "--build", str(root / "build"), "--http", f"127.0.0.1:{port}",
         "--identities", str(root / "ids.yaml"), "--impl", IMPL, "--reload-interval", "0.2",
         *extra], cwd=ROOT, stderr=(root / f"serve-{port}.log").open("w"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("observe")
    defs = write_definitions(root / "defs", {"tools.yaml": _definitions()})
    build(defs, root / "build")
    ids = root / "ids.yaml"
    tokens = {"a": add_identity(ids, "alice", {"agent_id": "a", "sender_id": "42",
                                               "sender_is_owner": True}),
              "b": add_identity(ids, "bob", {"agent_id": "b", "sender_id": "7"})}
    port = free_port()
    proc = _serve(root, port, "--decision-log", str(root / "decisions.jsonl"),
                  "--decision-log-key", str(root / "key"))
    try:
        _wait_for_port(port)
        yield {"root": root, "defs": defs, "tokens": tokens,
               "base": f"http://127.0.0.1:{port}", "proc": proc}
    finally:
        proc.terminate()
        proc.wait(10)


def _session(served: dict[str, Any]) -> dict[str, str]:
    """The scripted session: bob lists and calls four tools, alice calls one."""
    async def script() -> dict[str, str]:
        out = {}
        url = served["base"] + "/mcp"
        async with http_session(url, served["tokens"]["b"]) as s:
            out["list"] = ",".join(t.name for t in (await s.list_tools()).tools)
            out["echo"] = text(await s.call_tool("echo", {"text": "hi"}))
            out["secret"] = text(await s.call_tool("secret", {}))
            out["admin"] = text(await s.call_tool("admin", {}))
            out["bad"] = text(await s.call_tool("echo", {"text": 5}))
        async with http_session(url, served["tokens"]["a"]) as s:
            out["allowed"] = text(await s.call_tool("secret", {}))
        return out

    return run(script)  # type: ignore[no-any-return]


def _decision_lines(path: Path, calls: int) -> list[dict[str, Any]]:
    """The log's lines once ``calls`` call lines are there: the file sink's writer thread
    appends what is queued every 0.1 s (FileSink, buffered)."""
    deadline = time.monotonic() + 30
    while True:
        lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        if sum(x["event"] == "call" for x in lines) >= calls or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_a_decision_line_for_every_call_of_a_session(served: dict[str, Any]) -> None:
    out = _session(served)
    assert out["list"] == "echo" and out["echo"] == "hi" and out["allowed"] == "the secret"
    lines = _decision_lines(served["root"] / "decisions.jsonl", calls=5)
    # the SDK client lists the tools itself too (to check a result's output schema)
    assert lines[0]["event"] == "list" and lines[0]["tools"] == ["echo"]
    lines = [x for x in lines if x["event"] == "call"]
    seen = [(x["event"], x.get("tool"), x["verdict"], x.get("layer")) for x in lines]
    assert seen == [("call", "echo", "allow", None),
                    ("call", "secret", "refuse", "agents.b.tools"),
                    ("call", "admin", "refuse", "owner-only"),
                    ("call", "echo", "refuse", "arguments"),
                    ("call", "secret", "allow", None)]
    key = (served["root"] / "key").read_bytes().strip()
    assert lines[0]["sender"] == hmac.new(key, b"7", hashlib.sha256).hexdigest()
    assert lines[-1]["sender"] == hmac.new(key, b"42", hashlib.sha256).hexdigest()
    assert lines[1]["rule"] == 'denied by "secret" in agents.b.tools.deny'
    assert lines[1]["source"].startswith("tools.yaml:")
    manifest = served["root"] / "build" / "manifest.json"
    assert {x["build"] for x in lines} == {hashlib.sha256(manifest.read_bytes()).hexdigest()}
    assert all(x["agent"] in ("a", "b") for x in lines)
    raw = (served["root"] / "decisions.jsonl").read_text()
    assert '"7"' not in raw and '"hi"' not in raw


def _metric(body: str, name: str) -> float | None:
    for line in body.splitlines():
        if line.startswith(name + " ") or line == name:
            return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_need_a_token_and_count_by_layer(served: dict[str, Any]) -> None:
    base = served["base"]
    assert _get(base + "/metrics")[0] == 401
    status, body = _get(base + "/metrics", served["tokens"]["b"])
    assert status == 200
    if _metric(body, 'toolc_tool_refusals_total{layer="agents.b.tools",tool="secret"}') is None:
        _session(served)  # this test alone: make the calls it counts
        status, body = _get(base + "/metrics", served["tokens"]["b"])
    assert _metric(body, 'toolc_tool_refusals_total{layer="agents.b.tools",tool="secret"}') >= 1
    assert _metric(body, 'toolc_tool_calls_total{layer="",tool="echo",verdict="allow"}') >= 1
    assert _metric(body, 'toolc_tool_refusals_total{layer="owner-only",tool="admin"}') >= 1
    assert _metric(body, "toolc_tool_lists_total") >= 1
    assert _metric(body, "toolc_approvals_pending") == 0
    digest = hashlib.sha256((served["root"] / "build" / "manifest.json").read_bytes())
    assert f'toolc_build_info{{digest="{digest.hexdigest()}",target=""}} 1.0' in body


def test_a_reload_is_counted_and_the_info_follows(served: dict[str, Any]) -> None:
    build(write_definitions(served["defs"], {"tools.yaml": _definitions("fresh")}),
          served["root"] / "build")
    digest = hashlib.sha256((served["root"] / "build" / "manifest.json").read_bytes())
    deadline = time.monotonic() + 30
    body = ""
    while time.monotonic() < deadline:
        body = _get(served["base"] + "/metrics", served["tokens"]["a"])[1]
        if _metric(body, 'toolc_reloads_total{outcome="ok"}') == 1:
            break
        time.sleep(0.1)
    assert _metric(body, 'toolc_reloads_total{outcome="ok"}') == 1
    assert f'digest="{digest.hexdigest()}"' in body


def test_metrics_public(tmp_path: Path) -> None:
    write_definitions(tmp_path / "defs", {"tools.yaml": _definitions()})
    build(tmp_path / "defs", tmp_path / "build")
    add_identity(tmp_path / "ids.yaml", "alice", {"agent_id": "a"})
    port = free_port()
    proc = _serve(tmp_path, port, "--metrics-public")
    try:
        _wait_for_port(port)
        status, body = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and "toolc_build_info" in body
        assert _get(f"http://127.0.0.1:{port}/mcp")[0] == 401  # the rest still needs a token
    finally:
        proc.terminate()
        proc.wait(10)

"""Load test of ``toolc serve-mcp --http`` on loopback: the lean HTTP app (one worker and
several) beside the MCP SDK's HTTP app (the baseline), in the same run, under the same load.

``python -m bench.mcp_load [--clients 8] [--calls 500] [--workers 2] [--out bench/results]``

A small build (one tool, ``echo``, and one agent per client) is compiled into a temporary
directory and served by ``toolc serve-mcp --http 127.0.0.1:0`` in its own process, once per
configuration: ``--http-stack sdk`` (the SDK's transport: the baseline), the lean stack with
one worker, and the lean stack with ``--workers`` workers. The load generator is lean raw
HTTP: one process per client (separate from the server), each with one keep-alive connection
and its own bearer token, whose identity names its own agent. Each client opens its MCP
session (initialize, initialized), makes a few warm-up calls, waits for the others, then calls
``echo`` back to back; the tool answers ``<agent of the caller>|<text>``, so a call answered
with another client's agent or text is *misrouted*. Reported per configuration: calls per
second (all calls over the wall time of that phase), latency per call (p50, p90, p99, max),
the server's CPU time per call (its whole process tree; Linux /proc; user + system, that phase
only) and the failed and misrouted counts; and the lean figures as ratios against the SDK's.
Exits 1 when any call failed or was misrouted. The MCP SDK's own client is the correctness
check of the protocol (tests/test_mcp.py, tests/test_adversarial_http.py), not of the load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from toolc.api import build
from toolc.serve.mcp_identity import add_identity

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "bench" / "results"
WARMUP = 20
VERSION = "2025-06-18"


def echo(args: dict[str, Any], call: Any) -> str:
    """The served tool: who called, and what they sent."""
    return f"{call.context.agent_id}|{args['text']}"


async def aecho(args: dict[str, Any], call: Any) -> str:
    """The same tool as a coroutine: serve-mcp runs it on its event loop, no thread."""
    return echo(args, call)


IMPLEMENTATIONS = {"echo": echo}
ASYNC_IMPLEMENTATIONS = {"echo": aecho}


def prepare(work: Path, clients: int) -> tuple[Path, Path, list[str]]:
    """(build dir, identities file, one token per client)."""
    defs = work / "defs"
    defs.mkdir()
    data = {
        "version": 1,
        "catalog": [{"name": "echo", "description": "Echo a text.", "parameters": {
            "type": "object", "additionalProperties": False, "required": ["text"],
            "properties": {"text": {"type": "string"}}}}],
        "agents": {"list": [{"id": f"agent{i:03}"} for i in range(clients)]},
    }
    (defs / "defs.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    build(defs, work / "build")
    ids = work / "identities.yaml"
    tokens = [add_identity(ids, f"client{i:03}", {"agent_id": f"agent{i:03}"})
              for i in range(clients)]
    return work / "build", ids, tokens


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process and its children alive now (Linux /proc), or
    None elsewhere."""
    tick = os.sysconf("SC_CLK_TCK")
    total, found = 0.0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
            found = True
    return total if found else None


def start_server(build_dir: Path, ids: Path, log: Any, *extra: str
                 ) -> tuple[subprocess.Popen[bytes], int]:
    """serve-mcp on a free port; (the process, the port) once every worker listens."""
    impl = () if "--impl" in extra else ("--impl", "bench.mcp_load:IMPLEMENTATIONS")
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolc.cli", "serve-mcp", "--build", str(build_dir), "--http",
         "127.0.0.1:0", "--identities", str(ids), *impl, *extra], cwd=REPO, stderr=log)
    workers = int(extra[extra.index("--workers") + 1]) if "--workers" in extra else 1
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.findall(r"listening on http://[^:]+:(\d+)/mcp", Path(log.name).read_text())
        if len(found) >= workers:
            return proc, int(found[0])
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"serve-mcp did not start:\n{Path(log.name).read_text()}")


# -- the raw-HTTP client --------------------------------------------------------------------------
class Connection:
    """One keep-alive HTTP/1.1 connection, requests written and responses read by hand."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token, self.sid = port, token, ""
        self.connect()

    def connect(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(message, separators=(",", ":")).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Authorization: Bearer {self.token}\r\n"
                "Accept: application/json, text/event-stream\r\n"
                "Content-Type: application/json\r\n"
                f"MCP-Protocol-Version: {VERSION}\r\n"
                + (f"Mcp-Session-Id: {self.sid}\r\n" if self.sid else "")
                + f"Content-Length: {len(body)}\r\n\r\n")
        request = head.encode() + body
        try:
            self.sock.sendall(request)
            return self.read()
        except (ConnectionError, BrokenPipeError):
            # the server closed an idle keep-alive connection (uvicorn: after 5 s, as while
            # the clients wait for each other on a busy machine): connect again, once
            self.sock.close()
            self.connect()
            self.sock.sendall(request)
            return self.read()

    def read(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self.more()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            rest += self.recv()
        self.buffer = rest[length:]
        return status, headers, rest[:length]

    def more(self) -> None:
        self.buffer += self.recv()

    def recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data


def _client(port: int, token: str, index: int, calls: int, barrier: Any, out: Any) -> None:
    agent = f"agent{index:03}"
    result: dict[str, Any] = {"latency": [], "failed": [], "misrouted": []}
    try:
        conn = Connection(port, token)
        status, headers, body = conn.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}})
        assert status == 200, body
        conn.sid = headers["mcp-session-id"]
        assert conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
        for j in range(WARMUP):
            conn.post(_call(j, "warm"))
    except Exception as exc:
        barrier.abort()
        out.put({**result, "failed": [f"{agent}: {exc!r}"]})
        return
    barrier.wait()
    clock = time.perf_counter
    for j in range(calls):
        sent = f"c{index}-{j}"
        start = clock()
        try:
            status, _, body = conn.post(_call(j + 1, sent))
        except Exception as exc:
            result["failed"].append(f"{agent}: {exc!r}")
            break
        result["latency"].append(clock() - start)
        answer = json.loads(body) if status == 200 else {}
        got = "".join(c.get("text", "") for c in answer.get("result", {}).get("content", []))
        if status != 200 or answer["result"].get("isError"):
            result["failed"].append(f"{agent}: HTTP {status} {body[:200]!r}")
        elif got != f"{agent}|{sent}":
            result["misrouted"].append(f"{agent} sent {sent!r}, got {got!r}")
    out.put(result)


def _call(rid: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}}


def load(port: int, tokens: list[str], calls: int, pid: int) -> dict[str, Any]:
    """Run the clients (one process each) against the server on ``port``."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(tokens) + 1)
    out = context.Queue()
    procs = [context.Process(target=_client, args=(port, t, i, calls, barrier, out))
             for i, t in enumerate(tokens)]
    for proc in procs:
        proc.start()
    barrier.wait(timeout=120)
    start, cpu_start = time.perf_counter(), cpu_seconds(pid)
    results = [out.get(timeout=600) for _ in procs]
    wall = time.perf_counter() - start
    cpu_end = cpu_seconds(pid)
    for proc in procs:
        proc.join(30)
    cpu = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    lat = sorted(x for r in results for x in r["latency"])
    failed = [x for r in results for x in r["failed"]]
    misrouted = [x for r in results for x in r["misrouted"]]
    ms = [x * 1000 for x in lat]

    def pct(p: float) -> float | None:
        return round(ms[min(len(ms) - 1, int(p * len(ms)))], 3) if ms else None

    return {
        "clients": len(tokens), "calls_per_client": calls, "calls": len(lat),
        "wall_s": round(wall, 3), "calls_per_s": round(len(lat) / wall, 1),
        "latency_ms": {"p50": pct(0.50), "p90": pct(0.90), "p99": pct(0.99),
                       "max": round(ms[-1], 3) if ms else None},
        "server_cpu_ms_per_call": None if cpu is None or not lat else
        round(cpu * 1000 / len(lat), 3),
        "failed": len(failed), "misrouted": len(misrouted),
        "examples": (failed + misrouted)[:5],
    }


def configurations(workers: int) -> dict[str, tuple[str, ...]]:
    """What is measured, by name: the SDK's transport first (the baseline); ``-async``: the
    tool as a coroutine (no thread handoff per call)."""
    coroutine = ("--impl", "bench.mcp_load:ASYNC_IMPLEMENTATIONS")
    out = {"sdk": ("--http-stack", "sdk"), "lean": ("--http-stack", "lean"),
           "sdk-async": ("--http-stack", "sdk", *coroutine),
           "lean-async": ("--http-stack", "lean", *coroutine)}
    if workers > 1:
        several = ("--http-stack", "lean", "--workers", str(workers))
        out[f"lean-{workers}-workers"] = several
        out[f"lean-{workers}-workers-async"] = (*several, *coroutine)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="toolc-mcp-load-") as tmp:
        work = Path(tmp)
        build_dir, ids, tokens = prepare(work, args.clients)
        for name, extra in configurations(args.workers).items():
            with (work / f"server-{name}.log").open("w+") as log:
                proc, port = start_server(build_dir, ids, log, *extra)
                try:
                    runs[name] = load(port, tokens, args.calls, proc.pid)
                finally:
                    proc.terminate()
                    proc.wait(20)
    for name, run in runs.items():
        run["vs_sdk"] = _ratios(run, runs["sdk-async" if name.endswith("-async") else "sdk"])
    result = {"runs": runs, "machine": {"python": sys.version.split()[0],
                                        "cpus": os.cpu_count()}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mcp_load.json").write_text(json.dumps(result, sort_keys=True, indent=2) + "\n")
    print(f"serve-mcp load test: {args.clients} raw-HTTP clients (one process each, "
          f"keep-alive) x {args.calls} calls over loopback, after {WARMUP} warm-up calls each")
    for name, run in runs.items():
        lat, ratio = run["latency_ms"], run["vs_sdk"]
        print(f"  {name:22} {run['calls_per_s']:>8,} calls/s; latency p50 {lat['p50']} ms, "
              f"p99 {lat['p99']} ms; server CPU per call {run['server_cpu_ms_per_call']} ms; "
              f"failed {run['failed']}, misrouted {run['misrouted']}")
        if not name.startswith("sdk"):
            base = "sdk-async" if name.endswith("-async") else "sdk"
            print(f"  {'':22} vs {base}: {ratio['calls_per_s']}x the calls/s, "
                  f"{ratio['server_cpu']}x the server CPU per call")
        for example in run["examples"]:
            print(f"    {example}")
    bad = any(r["failed"] or r["misrouted"] for r in runs.values())
    return 1 if bad else 0


def _ratios(run: dict[str, Any], base: dict[str, Any]) -> dict[str, float | None]:
    cpu, base_cpu = run["server_cpu_ms_per_call"], base["server_cpu_ms_per_call"]
    return {"calls_per_s": round(run["calls_per_s"] / base["calls_per_s"], 2),
            "server_cpu": round(cpu / base_cpu, 3) if cpu and base_cpu else None}


if __name__ == "__main__":
    sys.exit(main())

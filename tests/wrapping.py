"""A small build for the request-path tests: a few tools (sync, async, owner-only, exec,
outside content) and agents with each kind of exec approval policy. Built once per session."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from toolc.api import compile_files
from toolc.pipeline.writer import publish

from tests.helpers import import_runtime, write_definitions

STRING = {"type": "string"}
CATALOG: list[dict[str, Any]] = [
    {"name": "echo", "description": "Echo text back. Second sentence.", "summary": "",
     "paramAliases": {"message": "text"}, "wireNames": {"anthropic": "Echo"},
     "parameters": {"type": "object", "additionalProperties": False, "required": ["text"],
                    "properties": {"text": STRING, "times": {"type": "integer", "minimum": 1}}}},
    {"name": "sleepy", "description": "Wait a while.", "parameters": {
        "type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "admin", "description": "Administer.", "ownerOnly": True,
     "parameters": {"type": "object", "properties": {}}},
    {"name": "fetch", "label": "Web Fetch", "description": "Fetch a page.",
     "externalContent": True,
     "parameters": {"type": "object", "required": ["url"], "properties": {"url": STRING}}},
    {"name": "exec", "description": "Run a command.", "parameters": {
        "type": "object", "additionalProperties": False, "required": ["command"],
        "properties": {"command": STRING, "workdir": STRING,
                       "host": {"type": "string", "enum": ["sandbox", "gateway", "node"]},
                       "security": {"type": "string", "enum": ["deny", "allowlist", "full"]},
                       "ask": {"type": "string", "enum": ["off", "on-miss", "always"]}}}},
]


def _agent(agent_id: str, **exec_policy: Any) -> dict[str, Any]:
    return {"id": agent_id, "tools": {"exec": exec_policy}}


DEFINITIONS: dict[str, Any] = {
    "catalog": CATALOG,
    "tools": {"exec": {"allowlist": ["~/bin/*"]}},
    "agents": {"list": [
        _agent("ops", host="gateway", allowlist=["/work/scripts/*", "/usr/bin/true"]),
        _agent("strict", host="gateway", ask="always"),
        _agent("closed", host="gateway", security="deny"),
        _agent("quiet", host="node", ask="off"),
        _agent("open", host="gateway", security="full", ask="off"),
        {"id": "plain"},
    ]},
}
_count = [0]


def build(tmp: Path, *, models: bool = True) -> ModuleType:
    """Compile DEFINITIONS under a fresh package name and import it."""
    _count[0] += 1
    package = f"toolc_wrap_{_count[0]}"
    defs = write_definitions(tmp / "defs", {"d.yaml": DEFINITIONS})
    files, _, _ = compile_files(defs, package=package, with_models=models)
    publish(files, tmp / "out")
    return import_runtime(tmp / "out", package)

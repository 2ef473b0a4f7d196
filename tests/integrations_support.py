"""Shared parts of the framework integration tests (tests/test_integration_*.py): the shipped
definitions built once into a tmp dir, the contexts they are driven over, implementations
that record what ran, and what each model request must list (``toolc resolve`` intersected
with the implementations, as the build defines the tools for the dialect)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from click.testing import CliRunner
from toolc.api import compile_files
from toolc.cli import main as toolc_cli
from toolc.pipeline.writer import publish

from tests.helpers import ROOT, import_runtime

DEFINITIONS = ROOT / "definitions"
# Contexts of the shipped definitions, each with what its CLI flags are. OpenClaw 2026.9 trusts a
# group only when the session key names it, so the group contexts carry their session key.
OPS_KEY = "agent:coder:telegram:group:-100123"
CONTEXTS: dict[str, dict[str, Any]] = {
    # the maintainer in the ops group: exec through the sender's alsoAllow
    "ops-maintainer": {"agent_id": "coder", "session_key": OPS_KEY, "message_provider": "telegram",
                       "group_id": "-100123", "sender_id": "42", "sender_is_owner": True},
    # anyone else in the ops group: exec and process denied
    "ops-other": {"agent_id": "coder", "session_key": OPS_KEY, "message_provider": "telegram",
                  "group_id": "-100123", "sender_id": "7"},
    "viewer": {"agent_id": "viewer"},
    # the announcements group: messaging only
    "announcements": {"agent_id": "main", "session_key": "agent:main:telegram:group:-100999",
                      "message_provider": "telegram", "group_id": "-100999"},
    "main-owner": {"agent_id": "main", "sender_is_owner": True},
}
# The maintainer's message in the ops group as a gateway has it (what a context callable may
# return instead of resolve's keywords): the shipped ops group's binding routes it to the
# coder, with OPS_KEY as its session key, so it stands for the same run as "ops-maintainer".
MESSAGE: dict[str, Any] = {"channel": "telegram", "peer": "group:-100123", "sender_id": "42",
                           "sender_is_owner": True}
FLAGS = {"agent_id": "--agent", "session_key": "--session-key", "message_provider": "--channel",
         "group_id": "--group", "sender_id": "--sender-id", "model_provider": "--provider"}
# Tools the application implements (some in no context's set, some owner-only).
IMPLEMENTED = ("read", "write", "exec", "message", "web_fetch", "gateway", "sessions_list")
OPS = CONTEXTS["ops-maintainer"]
OTHER = CONTEXTS["ops-other"]
# An implemented tool outside OTHER's set that another context sees (2026.9 keeps the owner-only
# gateway for an unknown owner, so it no longer serves): coder's alsoAllow replaces the global
# one that adds message.
OUTSIDE = "message"


def outside_tool(shipped: Shipped) -> str:
    """OUTSIDE, checked: in the announcements group's set and not in OTHER's."""
    assert OUTSIDE in shipped.rt.resolve(**CONTEXTS["announcements"]).names
    assert OUTSIDE not in shipped.rt.resolve(**OTHER).names
    return OUTSIDE


@dataclass
class Shipped:
    """The shipped definitions, built: ``out`` holds ``toolc_runtime`` (what the examples
    import), ``rt`` is a copy under a package name of its own (what the tests import)."""

    out: Path
    rt: ModuleType
    bundles: dict[str, Any]

    def integration(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.rt.__name__}.integrations.{name}")


def build_shipped(tmp: Path) -> Shipped:
    files, _, _ = compile_files(DEFINITIONS, with_models=True)
    publish(files, tmp / "build")
    copy = tmp / "copy"
    shutil.copytree(tmp / "build" / "toolc_runtime", copy / "toolc_int_rt")
    rt = import_runtime(copy, "toolc_int_rt")
    bundles = json.loads((copy / "toolc_int_rt" / "bundles.json").read_text("utf-8"))
    return Shipped(tmp / "build", rt, bundles)


def cli_resolve(context: Mapping[str, Any]) -> list[str]:
    """``toolc resolve --definitions definitions ... --json`` for a context."""
    args = ["resolve", "--definitions", str(DEFINITIONS), "--json"]
    for key, value in context.items():
        if key == "sender_is_owner":
            args += ["--owner"] if value else []
        else:
            args += [FLAGS[key], str(value)]
    result = CliRunner().invoke(toolc_cli, args)
    assert result.exit_code == 0, result.output
    tools: list[str] = json.loads(result.stdout)["tools"]
    return tools


def expected_tools(shipped: Shipped, context: Mapping[str, Any], dialect: str,
                   api: str = "chat") -> list[dict[str, Any]]:
    """The build's definitions for the dialect of ``toolc resolve`` ∩ the implementations,
    as (name, description, parameters)."""
    names = [n for n in cli_resolve(context) if n in IMPLEMENTED]
    assert names == [n for n in shipped.rt.resolve(**context).names if n in IMPLEMENTED]
    bundle = shipped.bundles["dialects"][dialect]
    source = bundle["tools"] if api == "chat" else bundle[api]
    return [_plain(source[n]) for n in names]


def _plain(definition: Mapping[str, Any]) -> dict[str, Any]:
    inner = definition.get("function", definition)
    schema = next(inner[k] for k in ("parameters", "input_schema", "parametersJsonSchema",
                                     "inputSchema") if k in inner)
    return {"name": inner["name"], "description": inner["description"], "parameters": schema}


def message_request(shipped: Shipped) -> Any:
    """MESSAGE as the runtime's Request, checked: routed to the ops maintainer's run."""
    request = shipped.rt.Request.of(MESSAGE)
    route, tools = shipped.rt.resolve_request(request)
    assert (route.agent_id, route.session_key) == ("coder", OPS_KEY)
    assert tools == shipped.rt.resolve(**OPS)
    return request


@dataclass
class Contexts:
    """Implementations that record the CallContext each call gets (name, context)."""

    seen: list[tuple[str, Any]] = field(default_factory=list)

    def implementations(self) -> dict[str, Callable[..., Any]]:
        def make(name: str) -> Callable[..., Any]:
            def impl(args: dict[str, Any], call: Any) -> Any:
                self.seen.append((name, call.context))
                return {"ok": name}

            return impl

        return {name: make(name) for name in IMPLEMENTED}


@dataclass
class Recorder:
    """Implementations that record each call they get (name, params)."""

    ran: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def implementations(self, *, asynchronous: bool = False) -> dict[str, Callable[..., Any]]:
        def make(name: str) -> Callable[..., Any]:
            def impl(args: dict[str, Any], call: Any) -> Any:
                self.ran.append((name, dict(args)))
                return {"ok": name, "args": args}

            async def aimpl(args: dict[str, Any], call: Any) -> Any:
                return impl(args, call)

            return aimpl if asynchronous else impl

        return {name: make(name) for name in IMPLEMENTED}

    def names(self) -> list[str]:
        return [name for name, _ in self.ran]


def run_example(shipped: Shipped, name: str) -> str:
    """Run examples/integrations/<name>.py against the tmp build; its stdout."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "integrations" / f"{name}.py")],
        capture_output=True, text=True, timeout=120, check=False, cwd=shipped.out.parent,
        env={**_env(), "TOOLC_BUILD": str(shipped.out)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}


EXAMPLE_LINES = (
    "viewer:\n  model sees: read\n  -> Done.\n",
    "[approval] 'rm -r build': allowlist miss: no pattern matches /usr/bin/rm",
)


def hook_log(rt: ModuleType) -> tuple[Any, list[str]]:
    """A HookRunner whose before_tool_call handler records the command of each exec call
    it sees and adds ``timeoutSeconds: 5`` to it (what the implementation must get)."""
    seen: list[str] = []
    hooks = rt.HookRunner()

    def before(event: Any, ctx: Any) -> Any:
        if event.tool_name != "exec":
            return None
        seen.append(event.params["command"])
        return rt.BeforeToolCallResult(params={**event.params, "timeoutSeconds": 5})

    hooks.before_tool_call(before)
    return hooks, seen

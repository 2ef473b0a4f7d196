"""The message-level request (``toolc_runtime.Request``) across every surface that takes a
request: ``wrap``, the decision log, serve-mcp's identities (a real MCP client over streamable
HTTP and over stdio); and a group its target would ignore refused through each of them,
never served without the group's restrictions (issue 32, items 2 and 4). The framework
integrations' side is in tests/test_integration_*.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from toolc.api import build, compile_files
from toolc.pipeline.writer import publish
from toolc.rules.context import CONTEXT_KEYS, MESSAGE_KEYS, ROUTING_KEYS
from toolc.serve.mcp_identity import Identities, IdentitiesError, add_identity

from tests.helpers import ROOT, import_runtime, write_definitions
from tests.test_mcp import IMPL, PY, TOOLC, _wait_for_port, free_port, http_session, text

EMPTY = {"type": "object", "properties": {}}
TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}}}
OPS_KEY = "agent:ops:telegram:group:-100123"


def definitions(openclaw: str = "2026.9") -> dict[str, Any]:
    """Two agents; the Telegram ops group routed to ``ops`` (its group denies aecho, but
    not to sender 42); ``ops`` denies ``secret``."""
    return {
        "openclaw": openclaw,
        "catalog": [
            {"name": "echo", "description": "Echo a text.", "parameters": TEXT},
            {"name": "aecho", "description": "Echo a text, asynchronously.", "parameters": TEXT},
            {"name": "secret", "description": "Denied to ops.", "parameters": EMPTY},
        ],
        "agents": {"list": [{"id": "main", "default": True},
                            {"id": "ops", "tools": {"deny": ["secret"]}}]},
        "channels": {"telegram": {"groups": {"-100123": {
            "tools": {"deny": ["aecho"]},
            "toolsBySender": {"id:42": {"alsoAllow": ["aecho"]}}}}}},
        "bindings": [{"agentId": "ops",
                      "match": {"channel": "telegram", "peer": {"kind": "group",
                                                                "id": "-100123"}}}],
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("surfaces")
    defs = write_definitions(root / "defs", {"d.yaml": definitions()})
    build(defs, root / "build")
    files, _, _ = compile_files(defs, package="toolc_surfaces_rt")  # with provenance.json
    publish(files, root / "rt")
    return {"root": root, "defs": defs, "build": root / "build",
            "rt": import_runtime(root / "rt", "toolc_surfaces_rt")}


def message(rt: ModuleType, sender: str = "7", **more: Any) -> Any:
    return rt.Request(channel="telegram", peer=("group", "-100123"), sender_id=sender, **more)


def impls(seen: list[Any]) -> dict[str, Any]:
    def echo(args: dict[str, Any], call: Any) -> str:
        seen.append(call.context)
        return str(args["text"])

    return {"echo": echo, "aecho": echo, "secret": lambda args, call: "the secret"}


# -- wrap ----------------------------------------------------------------------------------------
def test_wrap_takes_the_request_and_routes_it(project: dict[str, Any]) -> None:
    rt, seen = project["rt"], []
    tools = rt.wrap(message(rt, sender_is_owner=False, model_provider="anthropic"), impls(seen),
                    validate=False)
    assert (tools.route.agent_id, tools.route.session_key, tools.route.matched_by) == (
        "ops", OPS_KEY, "binding.peer")
    assert tools.context == rt.CallContext(agent_id="ops", session_key=OPS_KEY,
                                           sender_is_owner=False, model_provider="anthropic")
    assert tools.dialect == rt.dialect_for("anthropic")
    # the group's policy applied (through the session key the route built): aecho denied
    assert list(tools) == ["echo"] and tools.toolset.names == ("echo",)
    assert tools.call("echo", {"text": "hi"}).text == "hi"
    assert seen == [tools.context]
    assert tools.call("aecho", {"text": "hi"}).is_error
    # sender 42's rule in the same group; a DM goes to the default agent
    assert list(rt.wrap(message(rt, "42"), impls(seen), validate=False)) == ["echo", "aecho"]
    dm = rt.wrap(rt.Request(channel="telegram", peer=("direct", "7")), impls(seen),
                 validate=False)
    assert dm.route.agent_id == "main" and list(dm) == ["echo", "aecho", "secret"]


def test_wrap_of_a_request_takes_the_runs_ids_from_its_context(project: dict[str, Any]) -> None:
    rt = project["rt"]
    tools = rt.wrap(message(rt), {}, validate=False,
                    context=rt.CallContext(session_id="s1", run_id="r1", agent_id="ops"))
    assert (tools.context.agent_id, tools.context.session_key) == ("ops", OPS_KEY)
    assert (tools.context.session_id, tools.context.run_id) == ("s1", "r1")
    # a context that says another agent (or session) than the route is refused, not mixed
    for given in (rt.CallContext(agent_id="main"), rt.CallContext(session_key="agent:main:main"),
                  rt.CallContext(sender_is_owner=True)):
        with pytest.raises(ValueError, match="disagrees with the request's"):
            rt.wrap(message(rt), {}, validate=False, context=given)
    with pytest.raises(TypeError, match="sender_is_owner must be a bool"):
        rt.wrap(message(rt), {}, validate=False, context=rt.CallContext(sender_is_owner="no"))


def test_wrap_of_a_toolset_is_unchanged(project: dict[str, Any]) -> None:
    rt = project["rt"]
    given = rt.CallContext(agent_id="ops", run_id="r")
    tools = rt.wrap(rt.resolve(agent_id="ops"), {"echo": impls([])["echo"]}, context=given,
                    validate=False)
    assert tools.context is given and tools.route is None and list(tools) == ["echo"]
    with pytest.raises(TypeError, match="a ToolSet from resolve\\(\\) or a Request"):
        rt.wrap({"channel": "telegram"}, {}, validate=False)


def test_request_of_a_mapping(project: dict[str, Any]) -> None:
    rt = project["rt"]
    expected = rt.Request(channel="telegram", peer=("group", "-100123"), sender_id="42",
                          member_role_ids=("r1",))
    for peer in ("group:-100123", ["group", "-100123"], ("group", "-100123")):
        assert rt.Request.of({"channel": "telegram", "peer": peer, "sender_id": "42",
                              "member_role_ids": ["r1"]}) == expected
    assert rt.Request.of({"channel": "slack", "peer": "dm:D1:x"}).peer == ("direct", "D1:x")
    refusals = [
        ({"channel": "telegram", "group_id": "-100123"}, ValueError, "the chat is peer="),
        ({"channel": "telegram", "agent_id": "ops"}, ValueError, "the route decides the agent"),
        ({"peer": "group:-100123"}, ValueError, "needs its channel"),
        ({"channel": "telegram", "peer": "group"}, ValueError, "KIND:ID"),
        ({"channel": "telegram", "peer": "room:1"}, ValueError, "not direct, group or channel"),
        ({"channel": "telegram", "sender_is_owner": "yes"}, TypeError, "sender_is_owner"),
        ({"channel": "telegram", "member_role_ids": "r1"}, TypeError, "member_role_ids"),
        ({"channel": "telegram", "dm_scope": "nope"}, ValueError, "dm_scope must be one of"),
    ]
    for values, error, words in refusals:
        with pytest.raises(error, match=words):
            rt.Request.of(values)


def test_toolc_knows_the_requests_fields(project: dict[str, Any]) -> None:
    """serve-mcp checks identities (and the CLI its options) by toolc's own copy of the
    field list, as the runtime's Request.of does."""
    route = project["rt"]._load_through("_route")
    assert tuple(route.Request.__dataclass_fields__) == MESSAGE_KEYS
    assert route.ROUTING_KEYS == ROUTING_KEYS and ROUTING_KEYS.isdisjoint(CONTEXT_KEYS)


# -- the decision log ----------------------------------------------------------------------------
def test_the_decision_log_binds_a_request(project: dict[str, Any], tmp_path: Path) -> None:
    rt = project["rt"]
    path = tmp_path / "d.jsonl"
    sink = rt.FileSink(path)
    log = rt.DecisionLog([sink], raw_senders=True)
    request = log.request(message(rt))
    tools = rt.wrap(message(rt), impls([]), validate=False, decisions=request)
    assert request.resolve() == tools.toolset
    tools.call("aecho", {"text": "x"})
    sink.close()
    listed, refused = (json.loads(line) for line in path.read_text().splitlines())
    for line in (listed, refused):
        assert (line["agent"], line["channel"], line["group"], line["sender"]) == (
            "ops", "telegram", "-100123", "7")
    assert listed["tools"] == ["echo"]
    assert refused["verdict"] == "refuse" and refused["layer"].startswith("channels.telegram")
    with pytest.raises(TypeError, match="a Request or resolve's keywords, not both"):
        log.request(message(rt), agent_id="ops")


# -- a group the target would ignore: refused on every documented surface ------------------------
def test_a_group_no_session_key_names_is_refused_by_the_runtime(project: dict[str, Any]) -> None:
    rt = project["rt"]
    for keyword, value in (("group_id", "-100123"), ("group_space", "guild"),
                           ("group_channel", "#ops")):
        with pytest.raises(rt.UntrustedGroupError) as raised:
            rt.resolve(agent_id="ops", message_provider="telegram", sender_id="7",
                       **{keyword: value})
        assert isinstance(raised.value, ValueError)
        assert (raised.value.field, raised.value.value) == (keyword, value)
        assert "peer=('group', <id>)" in str(raised.value)
        # OpenClaw's own answer: the group dropped, its deny with it
        assert "aecho" in rt.resolve(agent_id="ops", message_provider="telegram", strict=False,
                                     **{keyword: value}).names
    log = rt.DecisionLog([], raw_senders=True)
    with pytest.raises(rt.UntrustedGroupError):
        log.request(agent_id="ops", message_provider="telegram", group_id="-100123").resolve()
    # the session key that names the group, or the message: the group's policy applies
    assert "aecho" not in rt.resolve(agent_id="ops", session_key=OPS_KEY, group_id="-100123",
                                     message_provider="telegram").names
    assert "aecho" not in rt.resolve_message("telegram", peer=("group", "-100123"))[1].names


# -- serve-mcp -----------------------------------------------------------------------------------
def _identities(path: Path, contexts: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: add_identity(path, name, context) for name, context in contexts.items()}


MESSAGES = {
    # the message's fields; peers as KIND:ID or [kind, id]
    "seven": {"channel": "telegram", "peer": "group:-100123", "sender_id": "7"},
    "maintainer": {"channel": "telegram", "peer": ["group", "-100123"], "sender_id": "42"},
    "dm": {"channel": "telegram", "peer": "direct:7"},
    # resolve's keywords still work, with the session key that names the group
    "keyed": {"agent_id": "ops", "session_key": OPS_KEY, "message_provider": "telegram",
              "group_id": "-100123", "sender_id": "7"},
}


def test_identities_take_message_level_contexts(tmp_path: Path) -> None:
    path = tmp_path / "ids.yaml"
    tokens = _identities(path, {**MESSAGES, "roles": {
        "channel": "discord", "guild_id": "g", "member_role_ids": ["r1", "r2"]}})
    loaded = Identities.load(path)
    maintainer = loaded.lookup(tokens["maintainer"])
    assert maintainer is not None
    assert dict(maintainer.context) == {"channel": "telegram", "peer": "group:-100123",
                                        "sender_id": "42"}
    roles = loaded.lookup(tokens["roles"])
    assert roles is not None and roles.context["member_role_ids"] == ("r1", "r2")
    stored = yaml.safe_load(path.read_text())["identities"]
    assert stored[-1]["context"]["member_role_ids"] == ["r1", "r2"]  # plain YAML
    for context, words in (
            ({"channel": "telegram", "group_id": "-100123", "peer": "group:1"}, "peer: group:"),
            ({"peer": "group:-100123"}, "needs its channel"),
            ({"channel": "telegram", "peer": "group"}, "KIND:ID"),
            ({"channel": "telegram", "peer": "room:1"}, "KIND:ID with KIND one of")):
        with pytest.raises(IdentitiesError, match=words):
            add_identity(tmp_path / "bad.yaml", "bad", context)


@pytest.fixture(scope="module")
def served(project: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """serve-mcp over HTTP with message-level identities (and one of resolve's keywords)."""
    ids = project["root"] / "identities.yaml"
    tokens = _identities(ids, MESSAGES)
    port = free_port()
    log = (project["root"] / "http.log").open("w+")
    proc = subprocess.Popen(
        [*TOOLC, "serve-mcp", "--build", str(project["build"]), "--http", f"127.0.0.1:{port}",
         "--identities", str(ids), "--impl", IMPL], cwd=ROOT, stderr=log)
    try:
        _wait_for_port(port)
        yield {**project, "url": f"http://127.0.0.1:{port}/mcp", "tokens": tokens,
               "ids": ids, "log": log, "proc": proc}
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _session(url: str, token: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with http_session(url, token) as s:
            listed = [t.name for t in (await s.list_tools()).tools]
            called = await s.call_tool("aecho", {"text": "hi"})
            return {"listed": listed, "aecho": called}

    result: dict[str, Any] = anyio.run(go)
    return result


def test_serve_mcp_routes_a_message_identity(served: dict[str, Any]) -> None:
    url, tokens = served["url"], served["tokens"]
    seven = _session(url, tokens["seven"])
    assert seven["listed"] == ["echo"]  # ops's run in the group: aecho denied, secret too
    assert seven["aecho"].is_error
    maintainer = _session(url, tokens["maintainer"])
    assert maintainer["listed"] == ["echo", "aecho"]
    # the implementation runs with the route's agent in its context
    assert json.loads(text(maintainer["aecho"])) == {"echo": "hi", "agent": "ops"}
    dm = _session(url, tokens["dm"])
    assert dm["listed"] == ["echo", "aecho", "secret"]
    assert json.loads(text(dm["aecho"]))["agent"] == "main"
    assert _session(url, tokens["keyed"])["listed"] == ["echo"]


def test_serve_mcp_refuses_a_reloaded_identity_the_build_would_ignore(
        served: dict[str, Any]) -> None:
    """An identity added while serving whose group no session key names: the file is refused
    (nobody is let in, logged), never served without the group's restrictions."""
    ids, url, log = served["ids"], served["url"], served["log"]
    before = ids.read_text()
    try:
        token = add_identity(ids, "loose", {"agent_id": "ops", "message_provider": "telegram",
                                            "group_id": "-100123", "sender_id": "7"})
        deadline = time.monotonic() + 20
        while "identity loose: group_id='-100123' would be ignored" not in _read(log):
            assert time.monotonic() < deadline, _read(log)
            with pytest.raises(Exception):  # noqa: B017 - 401 from the SDK client
                _session(url, token)
            time.sleep(0.1)
        with pytest.raises(Exception):  # noqa: B017 - the others are refused too
            _session(url, served["tokens"]["seven"])
    finally:
        ids.write_text(before)
    deadline = time.monotonic() + 20
    while True:  # the file fixed: served again
        try:
            assert _session(url, served["tokens"]["seven"])["listed"] == ["echo"]
            break
        except Exception:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def _read(log: Any) -> str:
    log.flush()
    return Path(log.name).read_text()


def _serve_fails(build_dir: Path, ids: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLC, "serve-mcp", "--build", str(build_dir), "--http", f"127.0.0.1:{free_port()}",
         "--identities", str(ids), "--impl", IMPL], cwd=ROOT, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL, check=False)


def test_serve_mcp_refuses_at_start_an_identity_the_build_would_ignore(
        project: dict[str, Any], tmp_path: Path) -> None:
    ids = tmp_path / "ids.yaml"
    _identities(ids, {"ok": MESSAGES["seven"], "loose": {
        "agent_id": "ops", "message_provider": "telegram", "group_id": "-100123"}})
    done = _serve_fails(project["build"], ids)
    assert done.returncode == 1, done.stderr
    assert "identity loose: group_id='-100123' would be ignored" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_mcp_refuses_at_start_a_message_its_build_cannot_route(tmp_path: Path) -> None:
    """A 2026.3 build routes without per-request session scopes: an identity that gives one
    is refused at start, naming it."""
    defs = write_definitions(tmp_path / "defs", {"d.yaml": definitions("2026.3")})
    build(defs, tmp_path / "build")
    ids = tmp_path / "ids.yaml"
    _identities(ids, {"scoped": {**MESSAGES["seven"], "group_scope": "main"}})
    done = _serve_fails(tmp_path / "build", ids)
    assert done.returncode == 1, done.stderr
    assert "identity scoped: group_scope: OpenClaw 2026.3 routes take no group_scope" in \
        done.stderr and "Traceback" not in done.stderr


STDIO = ("import sys; from pathlib import Path; from toolc.api import serve_mcp; "
         "serve_mcp(Path(sys.argv[1]), context={context}, impl=sys.argv[2])")


def _stdio(build_dir: Path, context: dict[str, Any], errlog: Any) -> dict[str, Any]:
    params = StdioServerParameters(
        command=PY, args=["-c", STDIO.format(context=repr(context)), str(build_dir), IMPL],
        cwd=str(ROOT), env={"PYTHONPATH": os.pathsep.join(sys.path)})

    async def go() -> dict[str, Any]:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            listed = [t.name for t in (await s.list_tools()).tools]
            return {"listed": listed, "aecho": text(await s.call_tool("aecho", {"text": "x"}))}

    result: dict[str, Any] = anyio.run(go)
    return result


def test_serve_mcp_over_stdio_takes_a_message(project: dict[str, Any], tmp_path: Path) -> None:
    with (tmp_path / "stdio.log").open("w+") as errlog:
        got = _stdio(project["build"], {**MESSAGES["maintainer"]}, errlog)
    assert got["listed"] == ["echo", "aecho"]
    assert json.loads(got["aecho"]) == {"echo": "x", "agent": "ops"}


def test_serve_mcp_over_stdio_refuses_a_group_no_session_key_names(
        project: dict[str, Any]) -> None:
    context = {"agent_id": "ops", "message_provider": "telegram", "group_id": "-100123"}
    done = subprocess.run(
        [PY, "-c", STDIO.format(context=repr(context)), str(project["build"]), IMPL],
        cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        check=False)
    assert done.returncode != 0
    assert "--agent: group_id='-100123' would be ignored" in done.stderr

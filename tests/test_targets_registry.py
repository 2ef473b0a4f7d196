"""The release registry (``toolc.targets``): one module per release, and a third release added
the way docs/how-to/develop.md says, without touching a module outside ``targets/``.

The stub is a release module and a data file written at test time (not shipped): a copy of
2026.9 under the key ``2026.99``. Registering it is all it takes for definitions to name it,
for both engines to compile and answer under it, and for a build to carry its rules.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from toolc.review.diff import side_from_definitions
from toolc.semantics.access import ClassSpace, TablesView
from toolc.targets import (
    DEFAULT_KEY,
    KEYS,
    NEWEST_KEY,
    RequestRules,
    keys,
    register,
    request_rules,
    target,
    unregister,
)
from toolc.targets.grammar import (
    COLLAPSED_SESSION_KEYS,
    LOOSE_SENDER_KEYS,
    SEGMENTED_SESSION_KEYS,
    TYPED_SENDER_KEYS,
)

from tests.helpers import engines_for

STUB_KEY = "2026.99"
STUB_MODULE = '''\
"""A stub release for tests: OpenClaw 2026.9's rules under another key."""

import dataclasses
from collections.abc import Mapping
from typing import Any

from toolc.targets import openclaw_2026_9
from toolc.targets.model import Target

KEY = "2026.99"


def build(data: Mapping[str, Any]) -> Target:
    return dataclasses.replace(openclaw_2026_9.build(data), key=KEY)
'''


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("openclaw_2026_99", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def stub(tmp_path: Path) -> Iterator[str]:
    """Registers the stub release (its module and data file in ``tmp_path``) for one test."""
    shipped = resources.files("toolc.targets").joinpath(f"data/openclaw-{NEWEST_KEY}.json")
    data = json.loads(shipped.read_text("utf-8"))
    data["release"] = "2026.99.0"
    data_file = tmp_path / "release" / f"openclaw-{STUB_KEY}.json"
    data_file.parent.mkdir()
    data_file.write_text(json.dumps(data), "utf-8")
    module_file = tmp_path / "release" / "openclaw_2026_99.py"
    module_file.write_text(STUB_MODULE, "utf-8")
    register(_module(module_file), data_file)
    try:
        yield STUB_KEY
    finally:
        unregister(STUB_KEY)


def _definitions(key: str) -> dict[str, Any]:
    tools = [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
             for n in ("read", "write", "exec", "message", "browser")]
    return {"openclaw": key, "catalog": tools,
            "profiles": {"coding": {"allow": ["read", "write", "exec"]}},
            "tools": {"profile": "coding", "toolsBySender": {"id:42": {"deny": ["exec"]}}},
            "channels": {"telegram": {"groups": {"-100": {"tools": {"deny": ["write"]}}}}}}


CONTEXTS: list[dict[str, Any]] = [
    {}, {"sender_id": "42"}, {"session_key": "agent:main:telegram:group:-100"},
    {"session_key": "agent:main:subagent:x"}, {"sandboxed": True},
]


def test_the_shipped_releases_are_registered_once() -> None:
    assert KEYS == keys() == ("2026.3", "2026.9")
    assert (DEFAULT_KEY, NEWEST_KEY) == ("2026.3", "2026.9")
    assert target(None) is target(DEFAULT_KEY)
    schema = json.loads(resources.files("toolc").joinpath("definitions.schema.json")
                        .read_text("utf-8"))
    assert schema["properties"]["openclaw"]["enum"] == list(KEYS)


def test_each_release_brings_its_grammars() -> None:
    old, new = target("2026.3"), target("2026.9")
    assert (old.sessions, old.senders) == (COLLAPSED_SESSION_KEYS, LOOSE_SENDER_KEYS)
    assert (new.sessions, new.senders) == (SEGMENTED_SESSION_KEYS, TYPED_SENDER_KEYS)
    # 2026.3.2 collapses empty segments and counts `:subagent:` in the whole key
    key = "agent:a::subagent:x"
    assert old.sessions.subagent_of(key) == (True, 1)
    assert new.sessions.subagent_of(key) == (False, 1)
    assert new.sessions.agent_of("agent:a:main") == ("agent", "a")
    assert new.senders.parse("channel:Teams:42").channel == "teams"
    assert old.senders.parse("channel:teams:42").kind == "id"


def test_request_rules_round_trip_and_default() -> None:
    for key in KEYS:
        rules = target(key).request_rules()
        assert request_rules({"target": rules.to_json()}) == rules
    assert request_rules({}) == target(DEFAULT_KEY).request_rules()
    partial = request_rules({"target": {"openclaw": NEWEST_KEY}})
    assert partial == RequestRules(openclaw=NEWEST_KEY, release=target(None).release)


def test_a_registered_stub_release_compiles_a_project(tmp_path: Path, stub: str) -> None:
    assert stub in keys() and stub not in KEYS
    tgt = target(stub)
    assert tgt.release == "2026.99.0"
    assert dataclasses.replace(tgt, key=NEWEST_KEY, release=target(NEWEST_KEY).release) \
        == target(NEWEST_KEY)
    engines = engines_for(tmp_path / "stub", {"defs.yaml": _definitions(stub)})
    newest = engines_for(tmp_path / "newest", {"defs.yaml": _definitions(NEWEST_KEY)})
    for ctx in CONTEXTS:
        assert engines.both(**ctx) == newest.both(**ctx), ctx
    tables = json.loads(next((tmp_path / "stub" / "out").glob("*/tables.json"))
                        .read_text("utf-8"))
    rules = request_rules(tables)
    assert (rules.openclaw, rules.release) == (stub, "2026.99.0")
    assert rules.sessions is SEGMENTED_SESSION_KEYS
    side = side_from_definitions(tmp_path / "stub" / "defs")
    space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
    assert space.size() > 1
    for ctx in CONTEXTS:  # each class's representative gets the class's tools
        flags = space.flags(space.classify(**ctx))
        assert engines.both(**flags) == engines.both(**ctx), ctx


def test_an_unregistered_release_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        target(STUB_KEY)

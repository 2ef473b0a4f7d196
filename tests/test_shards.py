"""Sharded tables (toolc.pipeline.shards): one file per channel account, read and checked when
a request first reaches it; a tampered shard refuses the requests that reach it, and only
those; readers of a build see the same tables as the build itself."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from toolc.api import build, compile_files
from toolc.audit.access_md import access_markdown
from toolc.builds.read import read_tables, tables_of_files
from toolc.pipeline.shards import join_tables, split_tables

from tests.helpers import Engines, import_runtime, write_definitions

TOOLS = ["read", "write", "exec", "browser", "message"]
CATALOG = [{"name": n, "description": f"{n}.", "parameters": {"type": "object"}} for n in TOOLS]

def _groups(deny: str, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"*": {"tools": {"deny": [deny]}}}
    for i in range(n):
        out[f"-100{i}"] = {"tools": {"deny": [TOOLS[i % len(TOOLS)]]},
                           "toolsBySender": {f"id:{i}": {"allow": ["read"]},
                                             "*": {"deny": ["browser"]}}}
    return out

def _definitions(work_deny: str = "exec") -> dict[str, Any]:
    return {"d.yaml": {
        "catalog": CATALOG,
        "agents": {"list": [{"id": "main"}, {"id": "viewer", "tools": {"deny": ["write"]}}]},
        "channels": {
            "telegram": {"groups": _groups("write", 6),
                         "accounts": {"work": {"groups": _groups(work_deny, 4)},
                                      "home": {"groups": _groups("message", 3)},
                                      "bare": {}}},
            "whatsapp": {"groups": _groups("browser", 2)},
            "irc": {"groups": {"#Ops": {"tools": {"deny": ["exec"]}}, "*": {}}}}}}

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("shards")
    write_definitions(tmp / "defs", _definitions())
    build(tmp / "defs", tmp / "build", package_name="toolc_shards_rt")
    return tmp

def _shards(rt: ModuleType) -> Any:
    return sys.modules[f"{rt.__name__}._shards"]

CONTEXTS: list[dict[str, Any]] = [
    {"agent_id": "main"},
    {"agent_id": "main", "message_provider": "telegram", "group_id": "-1001"},
    {"agent_id": "viewer", "message_provider": "telegram", "group_id": "-1002", "sender_id": "2"},
    {"agent_id": "main", "message_provider": "telegram", "group_id": "-1009"},
    {"agent_id": "main", "message_provider": "telegram", "account_id": "work", "group_id": "-1003"},
    {"agent_id": "main", "message_provider": "telegram", "account_id": "WORK", "group_id": "-1000",
     "sender_id": "0"},
    {"agent_id": "main", "message_provider": "telegram", "account_id": "home", "group_id": "-1001"},
    {"agent_id": "main", "message_provider": "telegram", "account_id": "bare", "group_id": "-1001"},
    {"agent_id": "main", "message_provider": "whatsapp", "group_id": "-1001"},
    {"agent_id": "main", "message_provider": "irc", "group_id": "#ops"},
    {"agent_id": "main", "session_key": "agent:main:telegram:group:-1004"},
]

def test_each_channel_account_is_one_shard(built: Path) -> None:
    package = built / "build" / "toolc_shards_rt"
    names = sorted(p.name for p in (package / "tables").iterdir())
    assert [n.rsplit(".", 2)[0] for n in names] == [
        "irc", "telegram", "telegram.home", "telegram.work", "whatsapp"]
    # tables.json holds no group: the shards do, each listed in the manifest and the runtime
    assert "-1001" not in (package / "tables.json").read_text()
    manifest = json.loads((built / "build" / "manifest.json").read_text())
    init = (package / "__init__.py").read_text()
    for name in names:
        assert f"toolc_shards_rt/tables/{name}" in manifest["files"]
        assert f'"tables/{name}"' in init

def test_the_runtime_reads_only_the_shards_a_request_reaches(built: Path) -> None:
    rt = import_runtime(built / "build", "toolc_shards_rt")
    shards = _shards(rt)
    rt.resolve(agent_id="main")
    assert shards._SHARDS == {}
    rt.resolve(agent_id="main", message_provider="telegram", account_id="work", group_id="-1001")
    assert [n.split("/")[1].rsplit(".", 2)[0] for n in shards._SHARDS] == ["telegram.work"]
    shards._load_shards()  # what serve-mcp does when it loads a build as a whole
    assert len(shards._SHARDS) == 5

def test_sharded_runtime_agrees_with_the_reference(built: Path, tmp_path: Path) -> None:
    engines = Engines(built / "defs", tmp_path / "out")
    for ctx in CONTEXTS:
        engines.both(**ctx)

def test_a_tampered_shard_refuses_only_the_requests_that_reach_it(built: Path,
                                                                  tmp_path: Path) -> None:

    out = tmp_path / "build"
    shutil.copytree(built / "build", out)
    shard = next((out / "toolc_shards_rt" / "tables").glob("telegram.work.*"))
    shard.write_text(shard.read_text().replace('"-1001"', '"-1009"'))
    rt = import_runtime(out, "toolc_shards_rt")  # importing reads no shard
    assert rt.resolve(agent_id="main", message_provider="whatsapp", group_id="-1001").names
    assert rt.resolve(agent_id="main", message_provider="telegram", group_id="-1001").names
    for _ in range(2):  # refused every time, never cached as "no group"
        with pytest.raises(rt.DataMismatchError, match=r"telegram\.work\..*does not match"):
            rt.resolve(agent_id="main", message_provider="telegram", account_id="work",
                       group_id="-1001")
    # a missing shard is refused at import, as any missing file of the build
    shard.unlink()
    with pytest.raises(RuntimeError, match=r"telegram\.work\..*missing"):
        import_runtime(out, "toolc_shards_rt")

def test_threads_first_reaching_shards_read_each_once(built: Path) -> None:
    expected = {}
    rt = import_runtime(built / "build", "toolc_shards_rt")
    for i, ctx in enumerate(CONTEXTS):
        expected[i] = rt.resolve(**ctx).names
    rt = import_runtime(built / "build", "toolc_shards_rt")
    shards = _shards(rt)
    reads: list[str] = []
    real = shards.read_verified

    def counting(name: str) -> bytes:
        reads.append(name)
        return real(name)  # type: ignore[no-any-return]

    shards.read_verified = counting
    barrier = threading.Barrier(8)
    got: dict[tuple[int, int], tuple[str, ...]] = {}

    def work(t: int) -> None:
        barrier.wait()
        for i in [*range(t % 3, len(CONTEXTS)), *range(t % 3)]:
            got[(t, i)] = rt.resolve(**CONTEXTS[i]).names

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(names == expected[i] for (_, i), names in got.items()) and len(got) == 8 * len(
        CONTEXTS)
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 5

def test_readers_see_the_tables_the_build_saw(built: Path) -> None:
    files, _, _ = compile_files(built / "defs", with_models=False)
    joined = tables_of_files(files, "toolc_runtime")
    assert joined == read_tables(built / "build")
    # the access analysis (ACCESS.md) of the joined tables is the build's own
    routes = json.loads(files["toolc_runtime/routes.json"])
    assert access_markdown(joined, routes) == (built / "build" / "ACCESS.md").read_text()
    # splitting what was joined gives the same files
    index, shards = split_tables(joined)
    assert json.loads(files["toolc_runtime/tables.json"]) == index
    assert shards == {k.split("/", 1)[1]: v for k, v in files.items() if "/tables/" in k}
    assert join_tables(index, lambda n: shards[n].encode()) == joined

def test_a_shard_depends_only_on_its_own_map(built: Path, tmp_path: Path) -> None:
    """Changing one account's groups and an agent's policy rewrites that account's shard and
    tables.json, and leaves every other shard byte-identical (what `toolc diff` and the
    incremental build rely on)."""
    data = _definitions(work_deny="read")
    data["d.yaml"]["agents"]["list"][1]["tools"] = {"deny": ["exec"]}
    write_definitions(tmp_path / "defs", data)
    build(tmp_path / "defs", tmp_path / "build", package_name="toolc_shards_rt")
    before = json.loads((built / "build" / "manifest.json").read_text())["files"]
    after = json.loads((tmp_path / "build" / "manifest.json").read_text())["files"]
    changed = sorted(k.split("/", 1)[1] for k in before if "/tables" in k and before[k] != after[k])
    assert [c.rsplit(".", 2)[0] for c in changed] == ["tables", "tables/telegram.work"]

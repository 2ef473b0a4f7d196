"""Adversarial tests of ``toolc diff``: a build whose channel tables were swapped for another
build's, its manifest left as it was, is refused (exit 1, naming the file), whichever side it
is on, whichever release the definitions follow, and whatever shape the build has.

Before, a shard both builds list with the same sha256 was taken on its manifest's word: left
unread when its channel cannot change the diff (OpenClaw 2026.3), or parsed from the other
side and shared (both releases, and a definitions directory against a build), so another
build's shard in its place answered "no tool is gained or lost". A diff now trusts a shard's
digest only once it has hashed the file's bytes (``toolc.runtime.bootstrap.read_checked``,
the runtime's own check).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from toolc import api
from toolc.builds import BuildError
from toolc.cli import main
from toolc.review.diff import DiffInputError

from tests.helpers import write_definitions

TOOLS = ["read", "write", "exec", "browser", "message"]
CATALOG = [{"name": n, "description": f"{n}.", "parameters": {"type": "object"}} for n in TOOLS]
TARGETS = ["2026.3", "2026.9"]


def _groups(deny: str, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"*": {"tools": {"deny": [deny]}}}
    for i in range(n):
        out[f"-100{i}"] = {"tools": {"deny": [TOOLS[i % len(TOOLS)]]},
                           "toolsBySender": {f"id:{i}": {"allow": ["read"]}}}
    return out


def _channels(shape: str, *, telegram_deny: str, whatsapp_deny: str) -> dict[str, Any]:
    """``sharded``: channels with group maps, each map a shard of its own; ``not-sharded``:
    channels without group maps, whose tables are all in ``tables.json``
    (``toolc.pipeline.shards._split_channel`` writes a shard only for a map)."""
    if shape == "not-sharded":
        return {"telegram": {"accounts": {"work": {}}}, "whatsapp": {}}
    return {"telegram": {"groups": _groups(telegram_deny, 3),
                         "accounts": {"work": {"groups": _groups(telegram_deny, 2)}}},
            "whatsapp": {"groups": _groups(whatsapp_deny, 2)}}


def _definitions(target: str, shape: str, *, telegram_deny: str = "exec",
                 whatsapp_deny: str = "browser", viewer_deny: str = "write") -> dict[str, Any]:
    data: dict[str, Any] = {
        "catalog": CATALOG,
        "agents": {"list": [{"id": "main", "default": True},
                            {"id": "viewer", "tools": {"deny": [viewer_deny]}}]},
        "channels": _channels(shape, telegram_deny=telegram_deny, whatsapp_deny=whatsapp_deny)}
    if target == "2026.9":
        data["openclaw"] = "2026.9"
    return {"d.yaml": data}


# The file tampered with per shape: a telegram shard (its own group map, or its account's),
# or the one file that holds the channel tables of a build without shards.
PLACES = [("sharded", "groups"), ("sharded", "account"), ("not-sharded", "tables.json")]


def _build(tmp: Path, name: str, data: dict[str, Any]) -> Path:
    build = tmp / name
    api.build(write_definitions(tmp / f"defs-{name}", data), build)
    return build


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Path]]:
    """Per (target, shape): ``base``; ``head``, which changes whatsapp only (so under 2026.3
    telegram cannot change the diff and is left unparsed); ``donor``, another build whose
    telegram (sharded) or whole tables (not sharded) differ; and ``base-defs``, the
    definitions ``base`` was built from."""
    out = {}
    for target in TARGETS:
        for shape in ("sharded", "not-sharded"):
            tmp = tmp_path_factory.mktemp(f"diff-{target}-{shape}")
            donor = (dict(telegram_deny="read") if shape == "sharded"
                     else dict(viewer_deny="exec"))
            out[target, shape] = {
                "base": _build(tmp, "base", _definitions(target, shape)),
                "head": _build(tmp, "head", _definitions(target, shape, whatsapp_deny="message")),
                "donor": _build(tmp, "donor", _definitions(target, shape, **donor)),
                "base-defs": tmp / "defs-base"}
    return out


def _file(build: Path, part: str) -> str:
    """The tampered file's path inside the build."""
    if part == "tables.json":
        return "toolc_runtime/tables.json"
    index = json.loads((build / "toolc_runtime" / "tables.json").read_text())
    telegram = index["channels"]["telegram"]
    shard = telegram["groups"] if part == "groups" else telegram["accounts"]["work"]
    return f"toolc_runtime/{shard}"


def _swapped(build: Path, donor: Path, part: str, tmp: Path) -> tuple[Path, str]:
    """A copy of ``build`` whose file ``part`` is the donor build's, manifest untouched."""
    copy = tmp / f"{build.name}-swapped"
    shutil.copytree(build, copy)
    rel = _file(copy, part)
    assert rel == _file(donor, part)  # a shard's name depends on its channel and account only
    donated = (donor / rel).read_bytes()
    assert donated != (copy / rel).read_bytes()
    (copy / rel).write_bytes(donated)
    return copy, rel


def _refused(args: list[str], tampered: Path, rel: str) -> None:
    result = CliRunner().invoke(main, ["diff", *args])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "refusing to compare this build" in result.stderr
    assert f"{tampered.as_posix()}/{rel} does not match the sha256 in" in result.stderr


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("shape", "part"), PLACES)
def test_a_swapped_head_file_is_refused(builds: dict[tuple[str, str], dict[str, Path]],
                                        tmp_path: Path, target: str, shape: str,
                                        part: str) -> None:
    b = builds[target, shape]
    ok = CliRunner().invoke(main, ["diff", str(b["base"]), str(b["head"])])
    assert ok.exit_code in (0, 2), ok.output
    head, rel = _swapped(b["head"], b["donor"], part, tmp_path)
    _refused([str(b["base"]), str(head)], head, rel)
    # a definitions directory on the other side: its shards are compiled, the build's read
    _refused([str(b["base-defs"]), str(head)], head, rel)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("shape", "part"), PLACES)
def test_a_swapped_base_file_is_refused(builds: dict[tuple[str, str], dict[str, Path]],
                                        tmp_path: Path, target: str, shape: str,
                                        part: str) -> None:
    b = builds[target, shape]
    base, rel = _swapped(b["base"], b["donor"], part, tmp_path)
    _refused([str(base), str(b["head"])], base, rel)
    _refused([str(base), str(b["base-defs"])], base, rel)


@pytest.mark.parametrize("target", TARGETS)
def test_a_swapped_shard_of_two_identical_builds_is_refused(
        builds: dict[tuple[str, str], dict[str, Path]], tmp_path: Path, target: str) -> None:
    """The same build on both sides but one shard: every channel is alike, none is parsed
    under 2026.3, and the swapped shard is still found (here through ``toolc.api``)."""
    b = builds[target, "sharded"]
    same = tmp_path / "same"
    shutil.copytree(b["base"], same)
    assert not api.diff(str(b["base"]), str(same)).access_changed
    head, rel = _swapped(same, b["donor"], "groups", tmp_path)
    for base_side, head_side in ((b["base"], head), (head, b["base"])):
        with pytest.raises((DiffInputError, BuildError), match=rf"{rel}.* does not match"):
            api.diff(str(base_side), str(head_side))

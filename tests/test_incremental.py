"""The incremental build cache (toolc.builds.cache): a build through the cache is byte for
byte a clean build of the same definitions, after seeded random edits, with a damaged cache,
and through ``toolc build`` (``--no-cache``); unchanged units come from the cache."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from toolc import api
from toolc.builds import incremental, stream
from toolc.builds.cache import BuildCache, cache_secret
from toolc.builds.compile import compile_files
from toolc.builds.incremental import cache_salt
from toolc.diagnostics import DefinitionsError
from toolc.pipeline import frontend, workers

from .helpers import ROOT

SHIPPED = ROOT / "definitions"
TOOLS = ["read", "write", "exec", "process", "browser", "message", "web_search", "web_fetch",
         "group:fs", "group:runtime", "group:web"]


def _channel(rng: random.Random, name: str, groups: int) -> dict[str, Any]:
    def block() -> dict[str, Any]:
        out: dict[str, Any] = {"deny": rng.sample(TOOLS, rng.randint(0, 2))}
        if rng.random() < 0.4:
            out["allow"] = rng.sample(TOOLS, rng.randint(1, 3))
        return out

    gmap: dict[str, Any] = {"*": {"tools": block()}}
    for _ in range(groups):
        entry: dict[str, Any] = {"tools": block()}
        if rng.random() < 0.5:
            entry["toolsBySender"] = {f"id:{rng.randint(1, 99)}": block(), "*": block()}
        gmap[f"-100{rng.randrange(10**6):06d}"] = entry
    channel: dict[str, Any] = {"groups": gmap}
    if rng.random() < 0.5:
        channel["accounts"] = {"ops": {"groups": {"*": {"tools": block()}}}}
    return channel


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"version": 1, **doc}, sort_keys=False), "utf-8")


def _project(tmp: Path, rng: random.Random, channels: int = 6) -> Path:
    """The shipped definitions plus ``channels`` channels, one file each."""
    defs = tmp / "definitions"
    shutil.copytree(SHIPPED, defs)
    for i in range(channels):
        name = f"chan{i:02d}"
        _write(defs / "channels" / f"{name}.yaml",
               {"channels": {name: _channel(rng, name, rng.randint(2, 6))}})
    return defs


def _edit(defs: Path, rng: random.Random) -> str:
    """One random edit of the kind a pull request makes."""
    files = sorted((defs / "channels").glob("*.yaml"))
    kind = rng.choice(["group", "group", "add-group", "drop-group", "new-channel",
                       "drop-channel", "agents", "shipped-channel", "catalog"])
    if kind in ("group", "add-group", "drop-group") and files:
        path = rng.choice(files)
        doc = yaml.safe_load(path.read_text("utf-8"))
        name, channel = next(iter(doc["channels"].items()))
        gmap = channel["groups"]
        ids = [g for g in gmap if g != "*"]
        if kind == "add-group" or not ids:
            gmap[f"-100{rng.randrange(10**6):06d}"] = {"tools": {"deny": [rng.choice(TOOLS)]}}
        elif kind == "drop-group":
            del gmap[rng.choice(ids)]
        else:
            gmap[rng.choice(ids)]["tools"] = {"deny": rng.sample(TOOLS, 2)}
        _write(path, doc)
        return f"{kind} {name}"
    if kind == "new-channel" or (kind == "drop-channel" and not files):
        name = f"chan{rng.randint(50, 99):02d}"
        _write(defs / "channels" / f"{name}.yaml",
               {"channels": {name: _channel(rng, name, 3)}})
        return f"new-channel {name}"
    if kind == "drop-channel":
        path = rng.choice(files)
        path.unlink()
        return f"drop-channel {path.name}"
    if kind == "agents":  # outside every channel: every channel's entry is recomputed
        path = defs / "deployment" / "agents.yaml"
        doc = yaml.safe_load(path.read_text("utf-8"))
        viewer = next(a for a in doc["agents"]["list"] if a["id"] == "viewer")
        deny = viewer["tools"]["deny"]
        deny.remove("edit") if "edit" in deny else deny.append("edit")
        path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
        return "agents viewer deny"
    if kind == "catalog":  # a line moves: positions in other files' warnings must follow
        path = defs / "catalog" / "10-core.yaml"
        path.write_text("# a comment line\n" + path.read_text("utf-8"), "utf-8")
        return "catalog comment"
    path = defs / "deployment" / "channels.yaml"
    text = path.read_text("utf-8")
    path.write_text(text.replace('deny: [exec, process, browser]',
                                 'deny: [exec, process]', 1)
                    if "deny: [exec, process, browser]" in text else
                    text.replace("deny: [exec, process]", "deny: [exec, process, browser]", 1),
                    "utf-8")
    return "shipped telegram sender rule"


def _files(defs: Path, cache: BuildCache | None, models: bool = False) -> dict[str, str]:
    """The file map (``models``: with models.py, ACCESS.md and provenance.json too)."""
    try:
        files, _, _ = compile_files(defs, with_models=models, cache=cache)
    except DefinitionsError as exc:  # an edit may break the definitions: same errors
        return {"<errors>": "\n".join(d.render() for d in exc.diagnostics)}
    return files


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize(("seed", "models"), [(1, False), (2, True)])
def test_cached_file_map_is_the_clean_one_after_random_edits(tmp_path: Path, seed: int,
                                                             models: bool) -> None:
    rng = random.Random(seed)
    defs = _project(tmp_path, rng)
    cache = BuildCache(tmp_path / "cache", cache_salt())
    assert _files(defs, cache, models) == _files(defs, None, models)
    for _ in range(3 if models else 5):
        what = _edit(defs, rng)
        cache.stats.hits.clear()
        cache.stats.misses.clear()
        assert _files(defs, cache, models) == _files(defs, None, models), what
        if what.startswith(("group", "add-group", "drop-group")):
            # one channel file changed: every other channel file came from the cache
            assert cache.stats.misses == {"file": 1, "unit": 1}, what
            assert cache.stats.hits["unit"] >= 5, what
            assert cache.stats.hits["texts" if models else "texts-tables"] == 1, what


def test_damaged_entries_are_recomputed(tmp_path: Path) -> None:
    defs = _project(tmp_path, random.Random(3))
    cache = BuildCache(tmp_path / "cache", cache_salt())
    clean = _files(defs, None)
    assert _files(defs, cache) == clean
    entries = sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert entries
    for i, entry in enumerate(entries):  # truncated, flipped, emptied, garbage
        raw = entry.read_bytes()
        entry.write_bytes([raw[: len(raw) // 2], raw[:-1] + bytes([raw[-1] ^ 1]), b"",
                           b"not a cache entry"][i % 4])
    cache.stats.hits.clear()
    assert _files(defs, cache) == clean
    assert not cache.stats.hits  # nothing damaged was used
    cache.stats.misses.clear()
    assert _files(defs, cache) == clean
    assert not cache.stats.misses  # ... and every entry was rewritten


def test_other_toolc_never_reads_an_entry(tmp_path: Path) -> None:
    defs = _project(tmp_path, random.Random(4))
    _files(defs, BuildCache(tmp_path / "cache", cache_salt()))
    other = BuildCache(tmp_path / "cache", cache_salt() + b"another compiler")
    _files(defs, other)
    assert not other.stats.hits


def test_build_with_and_without_cache_is_byte_identical(tmp_path: Path) -> None:
    rng = random.Random(5)
    defs = _project(tmp_path, rng)
    api.build(defs, tmp_path / "warm")
    assert (tmp_path / ".toolc-cache").is_dir()  # beside the definitions directory
    _edit(defs, rng)
    api.build(defs, tmp_path / "cached")
    api.build(defs, tmp_path / "clean", cache=False)
    assert _tree(tmp_path / "cached") == _tree(tmp_path / "clean")


def test_a_channel_in_two_files_is_refused(tmp_path: Path) -> None:
    defs = _project(tmp_path, random.Random(6), channels=1)
    _write(defs / "channels" / "again.yaml", {"channels": {"Chan00": {"groups": {}}}})
    with pytest.raises(DefinitionsError) as err:
        compile_files(defs, with_models=False)
    found = [d for d in err.value.diagnostics if d.code == "TC103"]
    # files load in path order: again.yaml defines it first
    assert len(found) == 1 and found[0].pos.file.endswith("channels/chan00.yaml")
    assert found[0].message.startswith('channel "chan00" is already defined at ')
    assert found[0].message.endswith("channels/again.yaml:3:3")


def _parallel(m: pytest.MonkeyPatch) -> None:
    """Every file loaded and every channel file compiled in forked workers, more workers
    than cores (any finishing order)."""
    m.setattr(frontend, "PARALLEL_MIN_BYTES", 0)
    m.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    m.setattr(stream, "OVERLAP_MIN_BYTES", 0)
    m.setattr(workers, "WORKERS", 3)


def _in_memory(m: pytest.MonkeyPatch) -> None:
    """No channel file compiled on its own: every file modelled in memory, as before."""
    m.setattr(stream, "scan_shape", lambda raw: None)


def test_worker_processes_change_no_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """Files loaded and channels compiled in forked workers (any count, any finishing
    order) give the file map of one process, with and without the cache."""
    defs = _project(tmp_path, random.Random(7), channels=7)
    serial = _files(defs, None, models=True)
    _parallel(monkeypatch)
    assert _files(defs, None, models=True) == serial
    cache = BuildCache(tmp_path / "cache", cache_salt())
    assert _files(defs, cache, models=True) == serial
    _edit(defs, random.Random(8))
    with monkeypatch.context() as m:
        m.setattr(stream, "PARALLEL_MIN_BYTES", 10**12)
        m.setattr(stream, "OVERLAP_MIN_BYTES", 10**12)
        clean = _files(defs, None, models=True)
    assert _files(defs, cache, models=True) == clean


@pytest.mark.parametrize("seed", [21, 22])
def test_channel_files_on_their_own_give_the_in_memory_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Channel files compiled as units (in forked workers, through the cache) give the file
    map, or the errors, of every file modelled in memory, after seeded random edits."""
    rng = random.Random(seed)
    defs = _project(tmp_path, rng, channels=8)
    cache = BuildCache(tmp_path / "cache", cache_salt())
    what = "as generated"
    for step in range(5):
        if step:
            what = _edit(defs, rng)
        with monkeypatch.context() as m:
            _in_memory(m)
            expected = _files(defs, None, models=True)
        assert _files(defs, None, models=True) == expected, what
        with monkeypatch.context() as m:
            _parallel(m)
            assert _files(defs, cache, models=True) == expected, what


def _broken_channel(defs: Path, rng: random.Random) -> str:
    """An edit of a channel file that makes an error or warning of its own."""
    path = rng.choice(sorted((defs / "channels").glob("*.yaml")))
    doc = yaml.safe_load(path.read_text("utf-8"))
    gmap = next(iter(doc["channels"].values()))["groups"]
    gid = rng.choice(sorted(gmap))
    kind = rng.choice(["empty-sender", "unknown-tool", "typo-key"])
    if kind == "empty-sender":
        gmap[gid]["toolsBySender"] = {"id:": {"deny": ["read"]}}  # TC132
    elif kind == "unknown-tool":
        gmap[gid]["tools"] = {"deny": ["raed"]}  # TC130
    else:
        gmap[gid]["toolz"] = {}  # TC110
    _write(path, doc)
    return f"{kind} in {path.name}"


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_diagnostics_are_the_in_memory_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            seed: int) -> None:
    """Errors and warnings in channel files compiled on their own are reported exactly as
    when every file is modelled in memory (nothing more, nothing less)."""
    rng = random.Random(seed)
    defs = _project(tmp_path, rng)
    for _ in range(3):
        what = _broken_channel(defs, rng)
        with monkeypatch.context() as m:
            _in_memory(m)
            expected = compile_or_errors(defs)
        assert compile_or_errors(defs) == expected, what


def compile_or_errors(defs: Path) -> list[str]:
    try:
        _, diagnostics, _ = compile_files(defs, with_models=True)
    except DefinitionsError as exc:
        diagnostics = exc.diagnostics
    return [d.render() for d in diagnostics]


def test_a_wrong_guess_costs_a_second_pass_not_a_byte(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A channel file's shape is guessed before it is loaded (``stream.scan_shape``); a
    wrong guess (a channel missed, another file taken for a channel file) is found by the
    unit and the build is redone with what the units found."""
    defs = _project(tmp_path, random.Random(41))
    expected = _files(defs, None, models=True)
    real = stream.scan_shape

    def missed(raw: bytes) -> stream.Shape | None:
        shape = real(raw)
        return None if shape is None else replace(shape, channels=shape.channels[1:])

    def everything(raw: bytes) -> stream.Shape | None:
        return real(raw) or stream.Shape(rest='{"version": 1}', channels=())

    for wrong in (missed, everything):
        with monkeypatch.context() as m:
            m.setattr(stream, "scan_shape", wrong)
            assert _files(defs, None, models=True) == expected, wrong.__name__


def test_channel_files_that_conflict_are_reported_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Channel files that disagree on ``openclaw`` (TC105) or both define a channel (TC103)
    are reported as when every file is modelled in memory."""
    defs = _project(tmp_path, random.Random(42), channels=3)
    _write(defs / "channels" / "chan01.yaml",
           {"openclaw": "2026.9", **yaml.safe_load(
               (defs / "channels" / "chan01.yaml").read_text("utf-8"))})
    _write(defs / "channels" / "chan02.yaml", {"openclaw": "2026.3", "channels": {
        "CHAN00": {"groups": {"*": {"tools": {"deny": ["read"]}}}}}})
    with monkeypatch.context() as m:
        _in_memory(m)
        expected = compile_or_errors(defs)
    found = compile_or_errors(defs)
    assert found == expected
    assert any("TC105" in line for line in found) and any("TC103" in line for line in found)


def test_a_broken_assertion_is_explained_as_before(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An assertion that a channel file compiled on its own breaks is reported with the
    counterexample and the rules responsible, as when every file is modelled in memory."""
    defs = _project(tmp_path, random.Random(43), channels=2)
    path = defs / "deployment" / "channels.yaml"
    path.write_text(path.read_text("utf-8").replace(
        'allow: ["group:messaging", sessions_list]',
        'allow: ["group:messaging", sessions_list, exec]'), "utf-8")
    with monkeypatch.context() as m:
        _in_memory(m)
        expected = compile_or_errors(defs)
    assert any("TC300" in line for line in expected)
    assert compile_or_errors(defs) == expected


def test_an_entry_written_without_this_users_secret_is_never_unpickled(tmp_path: Path) -> None:
    """A cache entry planted in the project (committed, or from a pull request) carries no
    valid HMAC under this user's secret: a miss, recomputed, never loaded."""
    mine = BuildCache(tmp_path / "cache", cache_salt(), secret=b"s" * 32)
    key = mine.key("file", ["x"])
    planted = BuildCache(tmp_path / "cache", cache_salt(), secret=b"attacker" * 4)
    planted.put(key, {"evil": True})
    assert mine.get(key) == (False, None)
    assert mine.unit("file", ["x"], lambda: "computed") == "computed"
    assert mine.get(key) == (True, "computed")
    # without a usable secret the cache is off: nothing is read or written
    off = BuildCache(tmp_path / "off", cache_salt(), secret=b"")
    assert off.unit("file", ["x"], lambda: 1) == 1
    assert not (tmp_path / "off").exists()


@pytest.mark.parametrize("target", ["2026.3", "2026.9"])
def test_every_entry_a_build_writes_loads_again(tmp_path: Path, target: str) -> None:
    """Entries load only the classes and functions ``toolc.builds.cache`` allows: every
    value a build caches (models, with accounts and sender rules, warnings, every unit kind,
    both targets) must be one of them, or each build would compute it again."""
    defs = _project(tmp_path, random.Random(3))
    agents = defs / "deployment" / "agents.yaml"  # where the shipped definitions name it
    text = agents.read_text("utf-8")
    assert 'openclaw: "2026.9"' in text
    agents.write_text(text.replace('openclaw: "2026.9"', f'openclaw: "{target}"'), "utf-8")
    root = tmp_path / "cache"
    api.build(defs, tmp_path / "build", cache=root)
    cache = BuildCache(root, cache_salt())
    entries = [p.name for p in root.rglob("*") if p.is_file()]
    assert len(entries) > 20
    assert [key for key in entries if not cache.get(key)[0]] == []


def test_the_secret_is_made_once_per_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first = cache_secret()
    assert len(first) == 32 and cache_secret() == first
    assert (tmp_path / "xdg" / "toolc" / "cache-secret").stat().st_mode & 0o777 == 0o600


def test_a_worker_started_ahead_changes_no_byte(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental build starts a worker on the last build's base before it has read the
    definitions (``UnitRun.ahead``): used when the base is that one, stopped when a base file
    changed, and a worker that cannot read the base hands its unit back. Every way, the file
    map is the clean one."""
    defs = _project(tmp_path, random.Random(51), channels=5)
    cache = BuildCache(tmp_path / "cache", cache_salt())
    _parallel(monkeypatch)
    _files(defs, cache, models=True)  # warms the cache, names the base

    def edited(kind: str, nth: int) -> BuildCache:
        _edit_kind(defs, kind, nth)
        fresh = BuildCache(cache.root, cache.salt)
        with monkeypatch.context() as m:
            m.setattr(stream, "OVERLAP_MIN_BYTES", 10**12)
            m.setattr(stream, "PARALLEL_MIN_BYTES", 10**12)
            clean = _files(defs, None, models=True)
        assert _files(defs, fresh, models=True) == clean, kind
        return fresh

    used = edited("group", 0)
    assert used.stats.hits.get("ahead") == 1 and used.stats.misses.get("unit") == 1
    again = BuildCache(cache.root, cache.salt)  # the worker stored its unit after sending it
    _files(defs, again, models=True)
    assert again.stats.misses.get("unit") is None and again.stats.hits.get("unit")
    stopped = edited("agents", 0)  # another base: the worker ahead read the wrong one
    assert stopped.stats.misses.get("ahead") == 1

    def unreadable(self: Any, key: str) -> Any:
        raise stream.NoBase(key)

    monkeypatch.setattr(incremental.UnitContexts, "by_key", unreadable)
    handed_back = edited("group", 1)
    assert handed_back.stats.hits.get("ahead") == 1
    assert handed_back.stats.hits.get("no-base") == 1


def _edit_kind(defs: Path, kind: str, nth: int = 0) -> None:
    """The ``nth`` seeded ``_edit`` of one kind."""
    seeds = (seed for seed in range(10_000) if random.Random(seed).choice(
        ["group", "group", "add-group", "drop-group", "new-channel", "drop-channel", "agents",
         "shipped-channel", "catalog"]) == kind)
    for _ in range(nth):
        next(seeds)
    _edit(defs, random.Random(next(seeds)))


def test_a_rebuild_scans_only_the_files_that_changed(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Which files are channel files is read off their text (``stream.scan_shape``); the
    answers are kept in the cache by file digest (``ScanMemo``), so a rebuild after one
    edit scans one file, and the build is the clean one."""
    defs = _project(tmp_path, random.Random(52), channels=4)
    cache = BuildCache(tmp_path / "cache", cache_salt())
    scanned: list[bytes] = []
    real = stream.scan_shape

    def counted(raw: bytes) -> stream.Shape | None:
        scanned.append(raw)
        return real(raw)

    monkeypatch.setattr(stream, "scan_shape", counted)
    first = _files(defs, cache, models=True)
    assert len(scanned) == len(list(defs.rglob("*.yaml")))
    scanned.clear()
    assert _files(defs, cache, models=True) == first
    assert scanned == []
    _edit_kind(defs, "group")
    clean = _files(defs, None, models=True)
    scanned.clear()
    assert _files(defs, cache, models=True) == clean
    assert len(scanned) == 1


def test_files_the_inputs_digest_read_are_not_read_again(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """``toolc build`` reads every definitions file for its no-op check (the inputs
    digest); the build that follows takes those bytes (up to ``KEEP_READ_BYTES``) instead of
    reading and hashing the files again, and writes the same build."""
    defs = _project(tmp_path, random.Random(53), channels=3)
    # the files that are not compiled on their own (a unit reads its file again)
    base = [p for p in defs.rglob("*.yaml") if stream.scan_shape(p.read_bytes()) is None]
    reads: dict[Path, int] = {}
    real = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads[self] = reads.get(self, 0) + 1
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    api.build(defs, tmp_path / "kept", cache=False)
    assert {reads.get(p) for p in base} == {1}
    reads.clear()
    monkeypatch.setattr("toolc.builds.compile.KEEP_READ_BYTES", 0)
    api.build(defs, tmp_path / "read", cache=False)
    assert {reads.get(p) for p in base} == {2}
    assert _tree(tmp_path / "kept") == _tree(tmp_path / "read")


def test_toolc_build_starts_the_worker_before_its_no_op_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``toolc build`` starts the worker ahead before it hashes the definitions when a file's
    size or mtime is not what the last build saw, and not when none changed (a build with
    nothing to do stays one). The build is the clean one; a build found to be a no-op after
    all stops its worker."""
    defs = _project(tmp_path, random.Random(54), channels=4)
    cache, out = tmp_path / "cache", tmp_path / "out"
    _parallel(monkeypatch)
    started: list[str] = []
    real = stream.UnitRun.ahead.__func__  # type: ignore[attr-defined]

    def counted(cls: type[stream.UnitRun], *args: Any) -> stream.UnitRun:
        started.append(args[1])
        run: stream.UnitRun = real(cls, *args)
        return run

    monkeypatch.setattr(stream.UnitRun, "ahead", classmethod(counted))
    assert not api.build(defs, out, cache=cache).up_to_date
    assert started == []  # no last build
    assert api.build(defs, out, cache=cache).up_to_date
    assert started == []
    _edit_kind(defs, "group", 2)
    assert not api.build(defs, out, cache=cache).up_to_date
    assert started == ["unit"]
    api.build(defs, tmp_path / "clean", cache=False)
    assert _tree(out) == _tree(tmp_path / "clean")
    path = sorted((defs / "channels").glob("*.yaml"))[0]
    path.write_bytes(path.read_bytes())  # a new mtime, the same bytes
    assert api.build(defs, out, cache=cache).up_to_date
    assert started == ["unit", "unit"]

"""Signed builds through a real OCI registry (``make test-ship``): Debian's ``docker-registry``
(the CNCF distribution registry), started on 127.0.0.1 on a free port with its own storage
directory and config file, plain HTTP, and a second one with basic auth (an htpasswd file,
bcrypt). Every step runs the installed ``toolc`` as a process, as a deployment would:
keygen -> build -> sign -> push -> pull -> verify -> serve-mcp --verify-key, then the attacks:
a tampered blob in the registry's storage, a consistently forged build re-pushed under the
old signature, unsigned and wrongly signed builds, and serve-mcp --watch keeping the last good
build when the registry offers a bad one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import bcrypt
import mcp_types as types
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from toolc import api
from toolc.ship import oci, signing

from tests.helpers import ROOT
from tests.test_signing import definitions

pytestmark = pytest.mark.ship

PY = sys.executable
TOOLC = [PY, "-m", "toolc.cli"]
IMPL = "tests.mcp_support.served:IMPLEMENTATIONS"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
USER, PASSWORD = "ci", "s3cret-for-tests"


# -- the registry ----------------------------------------------------------------------------------
def _binary() -> str:
    found = shutil.which("docker-registry") or shutil.which("registry")
    if found is None:
        reason = ("docker-registry (Debian's CNCF distribution registry) is not installed: "
                  "`make test-ship` installs it as root (.ci/setup-ship)")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def registry(root: Path, *, auth: bool = False) -> Iterator[dict[str, Any]]:
    """A registry on 127.0.0.1 (its storage and config under ``root``) until the block ends."""
    binary = _binary()
    root.mkdir(parents=True)
    port = _free_port()
    config: dict[str, Any] = {
        "version": 0.1, "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": str(root / "storage")},
                    "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}", "secret": "toolc-tests"},
    }
    if auth:
        hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
        (root / "htpasswd").write_text(f"{USER}:{hashed}\n")
        config["auth"] = {"htpasswd": {"realm": "toolc-tests", "path": str(root / "htpasswd")}}
    (root / "config.yml").write_text(yaml.safe_dump(config))
    log = (root / "registry.log").open("w")
    proc = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait_until_up(port, proc, root / "registry.log")
        yield {"host": f"127.0.0.1:{port}", "storage": root / "storage", "proc": proc}
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def _wait_until_up(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"docker-registry exited: {log.read_text()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2)
            return
        except urllib.error.HTTPError as exc:
            if exc.code == 401:  # up, and asking for credentials
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"docker-registry did not answer on {port}: {log.read_text()}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A registry, two key pairs (made by toolc keygen) and three definitions revisions."""
    root = tmp_path_factory.mktemp("ship")
    with registry(root / "registry") as reg:
        for name in ("keys", "other"):
            signing.keygen(root / name)
        defs = {v: definitions(root / f"defs{v}", *tools)
                for v, tools in ((1, ()), (2, ("fresh",)), (3, ("fresh", "third")))}
        yield {"root": root, "reg": reg["host"], "storage": reg["storage"], "defs": defs,
               "private": root / "keys" / "private.pem", "public": root / "keys" / "public.pem",
               "other": root / "other" / "private.pem"}


def toolc(*args: str, ok: bool = True, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*TOOLC, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180, check=False, env=env or ENV, stdin=subprocess.DEVNULL)
    if ok:
        assert done.returncode == 0, f"toolc {' '.join(args)}: {done.stdout}{done.stderr}"
    else:
        assert done.returncode == 1, f"toolc {' '.join(args)}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr
    return done


def signed_build(world: dict[str, Any], version: int, out: Path, *,
                 key: str = "private") -> Path:
    """Built and signed in this process (a test's set-up; the flow test runs the CLI)."""
    api.build(world["defs"][version], out)
    signing.sign(out, world[key], revision=f"rev-{version}")
    return out


# -- MCP over stdio --------------------------------------------------------------------------------
def serve(args: list[str], errlog: Path, script: Any) -> Any:
    """Run ``script(session, changed)`` against ``toolc serve-mcp ARGS`` over stdio."""
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and \
                message.method == "notifications/tools/list_changed":
            changed.append(message.method)

    async def main() -> Any:
        params = StdioServerParameters(command=PY, args=[*TOOLC[1:], "serve-mcp", *args],
                                       cwd=str(ROOT), env=ENV)
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write), \
                    ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                return await script(session, changed)

    return anyio.run(main)


async def tool_names(session: ClientSession) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


async def wait_for(predicate: Any, what: str, seconds: float = 60) -> None:
    with anyio.fail_after(seconds):
        while not await predicate():
            await anyio.sleep(0.05)


# -- the flow --------------------------------------------------------------------------------------
def test_keygen_build_sign_push_pull_verify_serve(world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    keys, build = root / "e2e" / "keys", root / "e2e" / "build"
    toolc("keygen", "--out", str(keys))
    toolc("build", str(world["defs"][1]), "-o", str(build))
    toolc("sign", str(build), "--key", str(keys / "private.pem"), "--revision", "rev-1")
    world = {**world, "public": keys / "public.pem"}
    pushed = toolc("push", str(build), f"{reg}/toolc/gateway:1")
    pinned = pushed.stdout.strip()
    assert pinned.startswith(f"{reg}/toolc/gateway@sha256:")
    deployed = root / "e2e" / "deployed"
    pulled = toolc("pull", f"{reg}/toolc/gateway:1", "-o", str(deployed), "--key",
                   str(world["public"]))
    assert pulled.stdout.strip() == pinned and "revision rev-1" in pulled.stderr
    again = toolc("pull", pinned, "-o", str(deployed), "--key", str(world["public"]))
    assert "is up to date" in again.stderr
    verified = toolc("verify", str(deployed), "--key", str(world["public"]))
    assert "ok: signed by key" in verified.stdout and "revision rev-1" in verified.stdout
    for rel in [*json.loads((build / "manifest.json").read_text())["files"], "manifest.json",
                ".signatures.json"]:
        assert (deployed / rel).read_bytes() == (build / rel).read_bytes()

    # the artifact: toolc's media type, the annotations, one layer per file
    manifest = json.loads(_get(f"http://{reg}/v2/toolc/gateway/manifests/1",
                               oci.MANIFEST_MEDIA))
    assert manifest["config"]["mediaType"] == oci.CONFIG_MEDIA
    digest = hashlib.sha256((build / "manifest.json").read_bytes()).hexdigest()
    target = json.loads((build / "manifest.json").read_text())["target"]
    assert manifest["annotations"] == {
        oci.BUILD_DIGEST: f"sha256:{digest}", oci.REVISION: "rev-1",
        oci.TARGET: json.dumps(target, sort_keys=True, separators=(",", ":"))}
    assert f"target openclaw {target['openclaw']}" in verified.stdout
    assert {layer["mediaType"] for layer in manifest["layers"]} == {oci.FILE_MEDIA}

    async def script(session: ClientSession, changed: list[str]) -> Any:
        result = await session.call_tool("echo", {"text": "signed and served"})
        return await tool_names(session), result

    listed, result = serve(["--build", str(deployed), "--agent", "a", "--impl", IMPL,
                            "--verify-key", str(world["public"])],
                           root / "e2e" / "serve.log", script)
    assert listed == ["echo"] and not result.is_error
    assert result.content[0].text == "signed and served"


def _get(url: str, accept: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as response:
        return bytes(response.read())


def test_a_tampered_blob_in_the_registry_is_refused_at_pull_and_the_old_build_stays(
        world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    v1 = signed_build(world, 1, root / "blob" / "v1")
    v2 = signed_build(world, 2, root / "blob" / "v2")
    toolc("push", str(v1), f"{reg}/toolc/blob:live")
    out = root / "blob" / "deployed"
    toolc("pull", f"{reg}/toolc/blob:live", "-o", str(out), "--key", str(world["public"]))
    before = (out / "manifest.json").read_bytes()
    toolc("push", str(v2), f"{reg}/toolc/blob:live")
    # flip one byte of v2's tables.json where the registry keeps it (same size)
    tables = (v2 / "toolc_runtime" / "tables.json").read_bytes()
    digest = hashlib.sha256(tables).hexdigest()
    blob = world["storage"] / "docker/registry/v2/blobs/sha256" / digest[:2] / digest / "data"
    blob.write_bytes(tables.replace(b'"fresh"', b'"fresH"', 1))
    refused = toolc("pull", f"{reg}/toolc/blob:live", "-o", str(out), "--key",
                    str(world["public"]), ok=False)
    assert "toolc_runtime/tables.json" in refused.stderr
    assert "tampered or corrupt; nothing was installed" in refused.stderr
    assert (out / "manifest.json").read_bytes() == before  # the old build stays
    toolc("verify", str(out), "--key", str(world["public"]))
    blob.write_bytes(tables)  # the registry is whole again for the other tests


def test_a_forged_build_under_the_old_signature_is_refused_at_pull_and_at_load(
        world: dict[str, Any]) -> None:
    """Someone with push rights re-pushes the signed build with a file changed and the
    manifest re-hashed to match (every digest is consistent): only the signature tells."""
    root, reg = world["root"], world["reg"]
    forged = signed_build(world, 1, root / "forged" / "build")
    access = b"# Access\n\nNothing to see here.\n"
    (forged / "ACCESS.md").write_bytes(access)
    manifest = json.loads((forged / "manifest.json").read_text())
    manifest["files"]["ACCESS.md"] = hashlib.sha256(access).hexdigest()
    (forged / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    toolc("push", str(forged), f"{reg}/toolc/forged:1")
    refused = toolc("pull", f"{reg}/toolc/forged:1", "-o", str(root / "forged" / "out"),
                    "--key", str(world["public"]), ok=False)
    assert "not the one that was signed" in refused.stderr
    assert not (root / "forged" / "out").exists()
    # pulled without --key (its digests are all consistent), it is refused where it loads
    unverified = root / "forged" / "unverified"
    pulled = toolc("pull", f"{reg}/toolc/forged:1", "-o", str(unverified))
    assert "not verified: no --key" in pulled.stderr
    assert "not the one that was signed" in toolc(
        "verify", str(unverified), "--key", str(world["public"]), ok=False).stderr
    served = toolc("serve-mcp", "--build", str(unverified), "--agent", "a",
                   "--verify-key", str(world["public"]), ok=False)
    assert "error:" in served.stderr and "not the one that was signed" in served.stderr


def test_unsigned_and_wrongly_signed_builds_are_refused_at_pull(world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    unsigned = root / "refuse" / "unsigned"
    api.build(world["defs"][1], unsigned)
    toolc("push", str(unsigned), f"{reg}/toolc/refuse:unsigned")
    other = signed_build(world, 1, root / "refuse" / "other", key="other")
    toolc("push", str(other), f"{reg}/toolc/refuse:other")
    out = root / "refuse" / "out"
    assert "not signed" in toolc("pull", f"{reg}/toolc/refuse:unsigned", "-o", str(out),
                                 "--key", str(world["public"]), ok=False).stderr
    assert "signed by another key" in toolc("pull", f"{reg}/toolc/refuse:other", "-o",
                                            str(out), "--key", str(world["public"]),
                                            ok=False).stderr
    assert not out.exists()
    wrong_digest = f"{reg}/toolc/refuse@sha256:{'0' * 64}"
    assert "HTTP 404" in toolc("pull", wrong_digest, "-o", str(out), ok=False).stderr


def test_serve_mcp_watch_swaps_signed_builds_and_keeps_the_last_good_one(
        world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    ref = f"{reg}/toolc/watched:live"
    toolc("push", str(signed_build(world, 1, root / "watch" / "v1")), ref)
    v2 = signed_build(world, 2, root / "watch" / "v2")
    v3 = root / "watch" / "v3-unsigned"
    api.build(world["defs"][3], v3)
    served = root / "watch" / "served"  # empty: the first pull happens at start
    errlog = root / "watch" / "serve.log"

    async def script(session: ClientSession, changed: list[str]) -> dict[str, Any]:
        got = {"v1": await tool_names(session)}
        await anyio.to_thread.run_sync(lambda: toolc("push", str(v2), ref))

        async def has_fresh() -> bool:
            return bool(changed) and "fresh" in await tool_names(session)

        await wait_for(has_fresh, "the pushed build is served")
        got["v2"] = await tool_names(session)
        await anyio.to_thread.run_sync(lambda: toolc("push", str(v3), ref))

        async def refused() -> bool:
            return "--watch: refused" in errlog.read_text()

        await wait_for(refused, "the unsigned build is refused")
        got["kept"] = await tool_names(session)
        # the refused pull left the last good build on disk
        got["disk"] = (await anyio.to_thread.run_sync(
            lambda: signing.verify(served, world["public"]))).signature.revision
        # an unsigned build put straight into the directory: refused at reload, logged
        await anyio.to_thread.run_sync(lambda: api.build(world["defs"][3], served))

        async def reload_refused() -> bool:
            return "refused the new build" in errlog.read_text()

        await wait_for(reload_refused, "the unsigned build in the directory is refused")
        got["still"] = await tool_names(session)
        got["call"] = await session.call_tool("fresh", {"text": "x"})
        got["notified"] = len(changed)
        return got

    got = serve(["--build", str(served), "--agent", "a", "--impl", IMPL, "--verify-key",
                 str(world["public"]), "--watch", f"oci://{ref}", "--watch-interval", "0.2",
                 "--reload-interval", "0.1"], errlog, script)
    assert got["v1"] == ["echo"]
    assert got["v2"] == got["kept"] == got["still"] == ["echo", "fresh"]
    assert not got["call"].is_error and got["notified"] == 1 and got["disk"] == "rev-2"
    log = errlog.read_text()
    assert "not signed" in log and "still serving build" in log


def test_workers_sharing_a_build_directory_share_one_poller(world: dict[str, Any]) -> None:
    root, reg = world["root"], world["reg"]
    ref = f"{reg}/toolc/shared:live"
    toolc("push", str(signed_build(world, 1, root / "shared" / "v1")), ref)
    out = root / "shared" / "build"
    key = signing.load_public_key(world["public"])
    first, second = oci.Poller(ref, out, key), oci.Poller(ref, out, key)
    try:
        assert first.poll() == f"pulled {ref} ({oci.remote_digest(ref)}) into {out.as_posix()}"
        assert second.poll() is None and not second.polling  # the lock is taken
        assert first.poll() is None  # nothing new
        first.close()  # the polling worker exits: the next one to poll takes over
        assert second.poll() is None and second.polling  # up to date: nothing pulled
    finally:
        first.close()
        second.close()


def test_basic_auth(world: dict[str, Any], tmp_path: Path) -> None:
    build = signed_build(world, 1, tmp_path / "build")
    with registry(tmp_path / "registry", auth=True) as reg:
        ref = f"{reg['host']}/toolc/private:1"
        anonymous = toolc("push", str(build), ref, ok=False)
        assert "HTTP 401" in anonymous.stderr and "TOOLC_REGISTRY_USERNAME" in anonymous.stderr
        wrong = {**ENV, "TOOLC_REGISTRY_USERNAME": USER, "TOOLC_REGISTRY_PASSWORD": "nope"}
        assert "HTTP 401" in toolc("push", str(build), ref, ok=False, env=wrong).stderr
        right = {**ENV, "TOOLC_REGISTRY_USERNAME": USER, "TOOLC_REGISTRY_PASSWORD": PASSWORD}
        toolc("push", str(build), ref, env=right)
        out = tmp_path / "out"
        assert "HTTP 401" in toolc("pull", ref, "-o", str(out), ok=False).stderr
        toolc("pull", ref, "-o", str(out), "--key", str(world["public"]), env=right)
        toolc("verify", str(out), "--key", str(world["public"]))


def test_a_crafted_artifact_cannot_write_outside_or_add_files(world: dict[str, Any],
                                                              tmp_path: Path) -> None:
    """A manifest written by hand (not by toolc push): a layer titled with a path that
    escapes the output, and one adding a file the build's manifest does not list."""
    build = signed_build(world, 1, tmp_path / "build")
    ref = oci.Reference.parse(f"{world['reg']}/toolc/crafted:1")
    client = oci._client(ref)
    files = {rel: (build / rel).read_bytes() for rel in ("manifest.json", "schema-notes.json")}
    out = tmp_path / "out"
    for title, why in (("../escape.py", "plain relative file name"),
                       ("toolc_runtime/evil.py", "files the build's manifest does not list")):
        layers = [{**oci._upload(client, ref, tmp_path, str(i), data, oci.FILE_MEDIA),
                   "annotations": {oci.TITLE: name}}
                  for i, (name, data) in enumerate([*files.items(), (title, b"import os\n")])]
        config = oci._upload(client, ref, tmp_path, "config", b"{}", oci.CONFIG_MEDIA)
        body = json.dumps({"schemaVersion": 2, "mediaType": oci.MANIFEST_MEDIA,
                           "config": config, "layers": layers}).encode()
        put = oci._request(client, "PUT", oci._url(client, ref, "manifests", ref.tag), "put",
                           data=body, headers={"Content-Type": oci.MANIFEST_MEDIA})
        assert put.status_code == 201
        with pytest.raises(oci.RegistryError, match=why):
            oci.pull(str(ref), out)
        assert not out.exists() and not (tmp_path / "escape.py").exists()

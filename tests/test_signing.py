"""Signed builds without a registry (``make test``): toolc keygen, sign and verify; where the
signature lives (the no-op check, ``build --check`` and ``build --force`` keep it, a changed
build drops it); forged, swapped and confused signatures refused; serve-mcp --verify-key
refusing an unsigned build at start (a process: ``make test-ship``). The registry half is
tests/test_ship_registry.py."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import jwt
import pytest
from click.testing import CliRunner
from toolc import api
from toolc.cli import main
from toolc.ship import SignatureError, signing

from tests.helpers import ROOT, write_definitions

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}


def definitions(root: Path, *tools: str) -> Path:
    """Two agents and a few tools: enough of a build to sign, serve and tamper with."""
    catalog = [{"name": n, "description": f"The {n} tool.", "parameters": TEXT}
               for n in ("echo", *tools)]
    return write_definitions(root, {"tools.yaml": {
        "catalog": catalog, "agents": {"list": [{"id": "a"}, {"id": "b"}]}}})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("signing")
    defs = definitions(root / "defs")
    api.build(defs, root / "build")
    keys = signing.keygen(root / "keys")
    other = signing.keygen(root / "other", "p256")
    return {"root": root, "defs": defs, "build": root / "build", "private": keys.private,
            "public": keys.public, "other_private": other.private,
            "other_public": other.public}


@pytest.fixture
def signed(made: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "build"
    shutil.copytree(made["build"], out)
    signing.sign(out, made["private"], revision="rev-1")
    return out


def _claims(build: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    token = json.loads((build / ".signatures.json").read_text())["signatures"][0]
    return jwt.get_unverified_header(token), jwt.decode(token,
                                                        options={"verify_signature": False})


def test_keygen_writes_pem_keys_and_never_overwrites(tmp_path: Path) -> None:
    for algorithm, curve in (("ed25519", "ED25519"), ("p256", "EC")):
        out = tmp_path / algorithm
        result = CliRunner().invoke(main, ["keygen", "--out", str(out), "--algorithm",
                                           algorithm])
        assert result.exit_code == 0, result.output
        private = out / "private.pem"
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
        assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
        assert (out / "public.pem").read_text().startswith("-----BEGIN PUBLIC KEY-----")
        assert curve.lower() in type(signing.load_public_key(out / "public.pem")).__name__.lower()
        again = CliRunner().invoke(main, ["keygen", "--out", str(out)])
        assert again.exit_code == 1 and "never overwrites" in again.output


def test_the_signature_has_opas_shape_and_signs_every_file_and_the_revision(
        made: dict[str, Path], signed: Path) -> None:
    header, claims = _claims(signed)
    assert header["alg"] == "EdDSA"
    assert header["kid"] == signing.key_id(signing.load_public_key(made["public"]))
    manifest = json.loads((signed / "manifest.json").read_text())
    names = [f["name"] for f in claims["files"]]
    assert names == sorted([*manifest["files"], "manifest.json"])
    assert all(f["algorithm"] == "SHA-256" and len(f["hash"]) == 64 for f in claims["files"])
    assert claims["revision"] == "rev-1" and claims["iss"] == "toolc"
    assert claims["target"] == manifest["target"] and manifest["target"]["openclaw"]
    assert "revision" not in (signed / "manifest.json").read_text()  # builds stay identical


def test_verify_accepts_the_signed_build_and_says_who_signed(
        made: dict[str, Path], signed: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(signed), "--key", str(made["public"])])
    assert result.exit_code == 0, result.output
    assert "ok: signed by key" in result.output and "revision rev-1" in result.output


@pytest.mark.parametrize("attack", [
    "unsigned", "other key", "edited file", "edited file and manifest", "extra file",
    "extra module", "signature payload edited", "alg none", "alg HS256 with the public key"])
def test_verify_refuses(made: dict[str, Path], signed: Path, attack: str) -> None:
    """Exit 1 with the reason for every way of passing off another build as signed."""
    tables = signed / "toolc_runtime" / "tables.json"
    sigfile = signed / ".signatures.json"
    key = made["public"]
    if attack == "unsigned":
        sigfile.unlink()
    elif attack == "other key":
        key = made["other_public"]
    elif attack == "edited file":
        tables.write_text(tables.read_text().replace('"echo"', '"ech0"'))
    elif attack == "edited file and manifest":  # a consistent forgery: only the key tells
        _rehash(signed, "ACCESS.md", b"# all clear\n")
    elif attack == "extra file":
        (signed / "NOTES.txt").write_text("not signed")
    elif attack == "extra module":
        (signed / "toolc_runtime" / "evil.py").write_text("import os\n")
    elif attack == "signature payload edited":
        token = json.loads(sigfile.read_text())["signatures"][0]
        head, body, sig = token.split(".")
        claims = json.loads(base64.urlsafe_b64decode(body + "=="))
        claims["revision"] = "rev-2"
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        sigfile.write_text(json.dumps({"signatures": [f"{head}.{body}.{sig}"]}))
    else:
        _, claims = _claims(signed)
        if attack == "alg none":
            forged = jwt.encode(claims, None, algorithm="none")
        else:  # the classic confusion: the public key's PEM as an HMAC secret
            forged = _hs256(claims, key.read_bytes())
        sigfile.write_text(json.dumps({"signatures": [forged]}))
    result = CliRunner().invoke(main, ["verify", str(signed), "--key", str(key)])
    assert result.exit_code == 1, result.output
    expected = {"unsigned": "not signed", "other key": "signed by another key",
                "edited file": "does not match the sha256",
                "edited file and manifest": "not the one that was signed",
                "extra file": "not part of the signed build",
                "extra module": "an executable file that is not part of this build",
                "signature payload edited": "does not verify",
                "alg none": "does not verify",
                "alg HS256 with the public key": "does not verify"}[attack]
    assert expected in result.output and "Traceback" not in result.output


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hs256(claims: dict[str, Any], secret: bytes) -> str:
    """A JWT signed with HMAC-SHA256 by hand (pyjwt itself refuses a PEM as the secret)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    signing_input = f"{header}.{_b64(json.dumps(claims).encode())}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


def _rehash(build: Path, rel: str, data: bytes) -> None:
    """Replace a file and fix manifest.json to match: what verification alone cannot see."""
    (build / rel).write_bytes(data)
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["files"][rel] = hashlib.sha256(data).hexdigest()
    (build / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    api.verify_build(build)  # the unsigned check is fooled: that is the point


def test_a_modified_build_is_never_signed(made: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "build"
    shutil.copytree(made["build"], out)
    (out / "schema-notes.json").write_text("{}")
    result = CliRunner().invoke(main, ["sign", str(out), "--key", str(made["private"]),
                                       "--revision", "r"])
    assert result.exit_code == 1 and "schema-notes.json" in result.output
    assert not (out / ".signatures.json").exists()


def test_build_keeps_the_signature_while_the_build_is_the_same_and_drops_it_after(
        made: dict[str, Path], tmp_path: Path) -> None:
    defs, out = tmp_path / "defs", tmp_path / "build"
    shutil.copytree(made["defs"], defs)
    api.build(defs, out)
    signing.sign(out, made["private"], revision="r")
    signature = (out / ".signatures.json").read_bytes()
    assert api.build(defs, out).up_to_date  # the no-op check passes over it
    assert api.check_build(defs, out).stale == ()  # build --check: no drift
    assert not api.build(defs, out, force=True).up_to_date  # republished, the same bytes
    assert (out / ".signatures.json").read_bytes() == signature
    signing.verify(out, made["public"])
    definitions(defs, "fresh")
    api.build(defs, out)
    assert not (out / ".signatures.json").exists()  # it would no longer hold


def test_sign_defaults_the_revision_to_the_checkout_head(made: dict[str, Path],
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    out = tmp_path / "build"
    shutil.copytree(made["build"], out)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c",
           "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["sign", str(out), "--key", str(made["private"])])
    assert result.exit_code == 0, result.output
    assert _claims(out)[1]["revision"] == head and f"revision {head}" in result.output


def test_a_bad_key_file_is_refused(made: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    with pytest.raises(SignatureError, match="not a readable PEM public key"):
        signing.verify(made["build"], bad)
    with pytest.raises(SignatureError, match="not a readable PEM private key"):
        signing.sign(made["build"], made["public"])


@pytest.mark.ship  # a serve-mcp process: seconds, so with the registry tests (make test-ship)
def test_serve_mcp_with_verify_key_refuses_an_unsigned_build_at_start(
        made: dict[str, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolc.cli", "serve-mcp", "--build", str(made["build"]),
         "--agent", "a", "--verify-key", str(made["public"])],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 1, done.stderr
    assert "error:" in done.stderr and "not signed" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_extra_the_command_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core needs neither pyjwt nor oras: a command that does says which extra (exit 2)."""
    monkeypatch.setitem(sys.modules, "jwt", None)  # as if pyjwt were not installed
    for module in ("toolc.ship.signing", "toolc.ship.oci"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    for args, extra in ((["verify", "build", "--key", "public.pem"], "toolc[sign]"),
                        (["pull", "127.0.0.1:5000/a:1", "-o", "out"], "toolc[oci]")):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and extra in result.output
        assert "module 'jwt' is missing" in result.output

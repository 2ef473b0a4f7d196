"""Signed builds: ``toolc keygen``, ``toolc sign`` and ``toolc verify`` (the extra
``toolc[sign]``: pyjwt and cryptography).

The signature is a JWS in the shape of OPA's bundle ``.signatures.json``: ``{"signatures":
[JWT]}``, the JWT's header ``{"alg", "kid", "typ"}`` and its payload ``{"files": [{"name",
"hash", "algorithm": "SHA-256"}, ...]}`` listing every file of the build, ``manifest.json``
included (so the manifest's ``target``, package and every file's sha256 are signed), plus
toolc's claims: ``revision`` (the definitions' revision: in the signature, never in the
build, so builds stay byte-identical across commits), ``target`` (the manifest's, when it
has one), ``iss`` ("toolc") and ``toolc`` (the version that signed).

The file lives in the build directory (``build/.signatures.json``, as in an OPA bundle) and
is not listed in the manifest: the no-op check and ``build --check`` pass over it, ``build``
keeps it when it republishes the identical build, and drops it with any change.

Keys: Ed25519 (JWS ``EdDSA``, the default) or ECDSA P-256 (``ES256``), PEM (PKCS #8 private
key, SubjectPublicKeyInfo public key). A public key decides the one algorithm accepted, so a
token cannot choose ``none``, an HMAC or another curve.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from .._version import __version__
from ..builds.read import BuildError, verify_build
from ..pipeline.render import dump_json
from ..pipeline.writer import SIGNATURES, output_lock, publish
from . import SignatureError

Algorithm = Literal["ed25519", "p256"]
ALGORITHMS: Final[tuple[Algorithm, ...]] = ("ed25519", "p256")
PRIVATE_KEY: Final = "private.pem"
PUBLIC_KEY: Final = "public.pem"
HASH_ALGORITHM: Final = "SHA-256"  # OPA's name for the files' hash
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey


# -- keys ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class KeyPair:
    """What ``keygen`` wrote: the two PEM files and the key id signatures will carry."""

    private: Path
    public: Path
    key_id: str
    algorithm: Algorithm


def keygen(out: Path, algorithm: Algorithm = "ed25519") -> KeyPair:
    """A new key pair in ``out``: ``private.pem`` (mode 0600, created exclusively: an existing
    key is never overwritten) and ``public.pem``. SignatureError when either exists."""
    key: PrivateKey = (ed25519.Ed25519PrivateKey.generate() if algorithm == "ed25519"
                       else ec.generate_private_key(ec.SECP256R1()))
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    out.mkdir(parents=True, exist_ok=True)
    private, public = out / PRIVATE_KEY, out / PUBLIC_KEY
    for path in (private, public):
        if path.exists():
            raise SignatureError(f"{path.as_posix()} exists: keygen never overwrites a key "
                                 "(choose another --out)")
    # O_EXCL with the mode given at creation: the private key is never readable by others,
    # not even for an instant, whatever the umask
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(private_pem)
    public.write_bytes(public_pem)
    return KeyPair(private=private, public=public, key_id=key_id(key.public_key()),
                   algorithm=algorithm)


def key_id(public: PublicKey) -> str:
    """A public key's id: the first 16 hex digits of the sha256 of its DER
    SubjectPublicKeyInfo (the JWT's ``kid``; says which key signed, proves nothing)."""
    der = public.public_bytes(serialization.Encoding.DER,
                              serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:16]


def _jws_algorithm(key: PrivateKey | PublicKey, shown: str) -> str:
    if isinstance(key, ed25519.Ed25519PrivateKey | ed25519.Ed25519PublicKey):
        return "EdDSA"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and \
            isinstance(key.curve, ec.SECP256R1):
        return "ES256"
    raise SignatureError(f"{shown}: an unsupported key type (toolc signs with Ed25519 or "
                         "ECDSA P-256 keys; make one with `toolc keygen`)")


def load_private_key(path: Path) -> PrivateKey:
    """A PEM private key made by ``toolc keygen`` (SignatureError otherwise)."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise SignatureError(f"{path.as_posix()}: not a readable PEM private key without "
                             f"a passphrase ({exc})") from exc
    _jws_algorithm(key, path.as_posix())  # type: ignore[arg-type]
    return key  # type: ignore[return-value]


def load_public_key(path: Path) -> PublicKey:
    """A PEM public key (``public.pem`` of ``toolc keygen``; SignatureError otherwise)."""
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise SignatureError(f"{path.as_posix()}: not a readable PEM public key ({exc})"
                             ) from exc
    _jws_algorithm(key, path.as_posix())  # type: ignore[arg-type]
    return key  # type: ignore[return-value]


# -- signing -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """What ``sign`` wrote, or what ``verify`` found: the signing key's id, the revision and
    target the payload names, and the sha256 of the signed ``manifest.json``."""

    build: Path
    key_id: str
    revision: str | None
    target: Any  # the manifest's target, as it holds it (None when it has none)
    digest: str


def build_files(out: Path) -> dict[str, bytes]:
    """Every file of the build at ``out`` (``manifest.json`` included, the signature not),
    each checked as its runtime checks it (``verify_build``); BuildError otherwise."""
    verified = verify_build(out)
    manifest = (out / "manifest.json").read_bytes()
    if json.loads(manifest) != verified.manifest:
        raise BuildError(f"{out.as_posix()}/manifest.json: replaced while it was read")
    return {**verified.files, "manifest.json": manifest}


def payload_of(files: dict[str, bytes], revision: str | None) -> dict[str, Any]:
    """The JWT payload that signs ``files`` (OPA's ``files`` list plus toolc's claims)."""
    manifest = json.loads(files["manifest.json"])
    payload: dict[str, Any] = {
        "files": [{"name": name, "hash": hashlib.sha256(data).hexdigest(),
                   "algorithm": HASH_ALGORITHM} for name, data in sorted(files.items())],
        "iss": "toolc",
        "toolc": __version__,
    }
    if revision is not None:
        payload["revision"] = revision
    if "target" in manifest:  # whatever the manifest holds ({"openclaw", "release"} today)
        payload["target"] = manifest["target"]
    return payload



def git_revision(cwd: Path | None = None) -> str | None:
    """``git rev-parse HEAD`` of the current directory's checkout (None outside one): what
    ``sign`` records when no ``--revision`` is given."""
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=cwd,
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def sign(out: Path, private_key: Path, *, revision: str | None = None) -> Signature:
    """Sign the build at ``out`` with the key in ``private_key``: ``out/.signatures.json``,
    written with the build's other files through the one writer (the build is republished
    with it, atomically, under the output lock). The build is checked first: a modified
    build is never signed (BuildError)."""
    key = load_private_key(private_key)
    algorithm = _jws_algorithm(key, private_key.as_posix())
    kid = key_id(key.public_key())
    with output_lock(out):
        files = build_files(out)
        payload = payload_of(files, revision)
        token = jwt.encode(payload, key, algorithm=algorithm, headers={"kid": kid, "typ": "JWT"})
        signatures = dump_json({"signatures": [token]})
        publish({**files, SIGNATURES: signatures}, out)
    return Signature(build=out, key_id=kid, revision=revision, target=payload.get("target"),
                     digest=hashlib.sha256(files["manifest.json"]).hexdigest())


# -- verification --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class SignedBuild:
    """A build whose signature verified and whose every file is one that was signed, with
    the bytes that were checked (a loader runs these, not a second read of the disk)."""

    signature: Signature
    files: dict[str, bytes]


def verify(out: Path, public_key: Path | PublicKey) -> SignedBuild:
    """Check that the build at ``out`` is exactly what the holder of ``public_key`` signed:
    the signature verifies with that key, it lists every file of the build with its sha256
    (``manifest.json`` included) and nothing else, and the build passes the check every
    reader makes (``verify_build``: manifest digests, the runtime's own table, no unlisted
    executable file). SignatureError (a BuildError) says what is wrong."""
    key = load_public_key(public_key) if isinstance(public_key, Path) else public_key
    shown = out.as_posix()
    claims = _verified_claims(out, key)
    try:
        files = build_files(out)
    except BuildError as exc:
        raise SignatureError(f"{exc} (the signature cannot hold)") from exc
    signed = {entry["name"]: entry["hash"] for entry in claims["files"]}
    on_disk = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    if signed != on_disk:
        raise SignatureError(f"{shown}: the build is not the one that was signed: "
                             f"{_difference(signed, on_disk)}")
    extra = _unsigned_files(out, set(signed))
    if extra:
        raise SignatureError(f"{shown}: {', '.join(extra[:5])}: not part of the signed build")
    manifest = json.loads(files["manifest.json"])
    if claims.get("target") != manifest.get("target"):
        raise SignatureError(f"{shown}: the signature names target {claims.get('target')!r}, "
                             f"the manifest {manifest.get('target')!r}")
    revision = claims.get("revision")
    signature = Signature(build=out, key_id=key_id(key),
                          revision=revision if isinstance(revision, str) else None,
                          target=manifest.get("target"),
                          digest=on_disk["manifest.json"])
    return SignedBuild(signature=signature, files=files)


def _verified_claims(out: Path, key: PublicKey) -> dict[str, Any]:
    """The payload of ``out``'s one signature, after the JWS verified with ``key``."""
    shown = f"{out.as_posix()}/{SIGNATURES}"
    try:
        document = json.loads((out / SIGNATURES).read_text("utf-8"))
    except FileNotFoundError:
        raise SignatureError(f"{out.as_posix()}: not signed (no {SIGNATURES}; sign it with "
                             "`toolc sign`)") from None
    except (OSError, ValueError) as exc:
        raise SignatureError(f"{shown}: unreadable ({exc})") from exc
    tokens = document.get("signatures") if isinstance(document, dict) else None
    if not (isinstance(tokens, list) and len(tokens) == 1 and isinstance(tokens[0], str)):
        raise SignatureError(f"{shown}: expected {{\"signatures\": [one JWT]}}")
    algorithm = _jws_algorithm(key, "the public key")
    try:
        claims = jwt.decode(tokens[0], key, algorithms=[algorithm],
                            options={"require": ["files", "iss"], "verify_aud": False})
    except jwt.InvalidTokenError as exc:
        if isinstance(kid := _header_kid(tokens[0]), str) and kid != key_id(key):
            raise SignatureError(f"{shown}: signed by another key (key id {kid}, not "
                                 f"{key_id(key)})") from exc
        raise SignatureError(f"{shown}: the signature does not verify with key "
                             f"{key_id(key)} ({exc})") from exc
    entries = claims.get("files")
    if not (isinstance(entries, list) and all(
            isinstance(e, dict) and isinstance(e.get("name"), str)
            and isinstance(e.get("hash"), str) and e.get("algorithm") == HASH_ALGORITHM
            for e in entries)):
        raise SignatureError(f"{shown}: the payload's files are not a list of "
                             f"{{name, hash, algorithm: {HASH_ALGORITHM}}}")
    if len({e["name"] for e in entries}) != len(entries):
        raise SignatureError(f"{shown}: the payload lists a file twice")
    return claims


def _header_kid(token: str) -> object:
    try:
        return jwt.get_unverified_header(token).get("kid")
    except jwt.InvalidTokenError:
        return None


def _difference(signed: dict[str, str], on_disk: dict[str, str]) -> str:
    parts = [f"{n}: not signed" for n in sorted(set(on_disk) - set(signed))]
    parts += [f"{n}: signed but missing" for n in sorted(set(signed) - set(on_disk))]
    parts += [f"{n}: sha256 {on_disk[n]}, signed {signed[n]}" for n in sorted(signed)
              if n in on_disk and signed[n] != on_disk[n]]
    return "; ".join(parts[:5]) + (f" (and {len(parts) - 5} more)" if len(parts) > 5 else "")


def _unsigned_files(out: Path, signed: set[str]) -> list[str]:
    """Files under ``out`` that are neither signed nor the signature (bytecode caches
    aside: ``verify_build`` already refuses one that is not a listed module's checked source
    compiled)."""
    return sorted(rel for p in out.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts
                  and (rel := p.relative_to(out).as_posix()) not in signed | {SIGNATURES})

"""Builds through an OCI registry: ``toolc push``, ``toolc pull`` and the poller of
``serve-mcp --watch oci://REF`` (the extra ``toolc[oci]``: oras, and pyjwt + cryptography for
``--key``).

The artifact: one OCI image manifest whose config has toolc's media type (the artifact type,
``application/vnd.toolc.build.v1+json``; the config blob names the build digest, target and
revision) and one layer per file of the build (``application/vnd.toolc.build.file.v1``,
titled with the file's path, ``.signatures.json`` included when the build is signed), so each
layer's digest is the very sha256 the build's manifest lists, no archive is ever unpacked,
and a new build re-uploads only the files that changed. Manifest annotations:
``dev.toolc.target``, ``dev.toolc.revision`` (from the signature), ``dev.toolc.build.digest``
(the sha256 of ``manifest.json``).

A pull checks the manifest's digest (against ``@sha256:...`` when the reference has one),
every blob against its layer digest and size, that every file is one the build's manifest
lists, then writes the build through the one writer under the output lock; the complete
temporary directory is verified (``verify_build``, and with a key the signature) before it is
swapped in, so the old build stays until the new one is complete and verified.

oras is pinned to 0.2.x (pyproject): what is used of it (``provider.Registry`` with its
``upload_blob`` and ``do_request``, ``auth.token.TokenAuth``, ``container.Container``) was read
in 0.2.43; manifests and blobs are fetched here, not by its ``pull``, so that every byte is
checked against its digest before it is kept.

A registry on loopback (127.0.0.0/8, ``localhost``, ``::1``) is spoken to over plain HTTP,
any other over HTTPS. Credentials: ``TOOLC_REGISTRY_USERNAME`` and
``TOOLC_REGISTRY_PASSWORD``, else the Docker config (``~/.docker/config.json``, as ``docker
login`` / ``oras login`` write it); basic auth and bearer-token registries both work.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jwt
import oras.auth.token
import oras.container
import oras.provider
import requests

from .._version import __version__
from ..builds.read import BuildError, plain_relative, read_manifest, verify_build
from ..locks import POLL_SUFFIX, LockTimeoutError, locked
from ..pipeline.render import dump_json
from ..pipeline.writer import SIGNATURES, check_output_dir, output_lock, publish
from . import RegistryError, SignatureError, signing

MANIFEST_MEDIA: Final = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA: Final = "application/vnd.toolc.build.v1+json"
FILE_MEDIA: Final = "application/vnd.toolc.build.file.v1"
TITLE: Final = "org.opencontainers.image.title"
TARGET: Final = "dev.toolc.target"
REVISION: Final = "dev.toolc.revision"
BUILD_DIGEST: Final = "dev.toolc.build.digest"
# What a pull accepts from a registry before it has checked anything: a bound, not a quota
MAX_MANIFEST: Final = 4 * 1024 * 1024
MAX_BLOB: Final = 256 * 1024 * 1024
_TIMEOUT: Final = 60


# -- references and the client --------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """``REGISTRY/REPO[:TAG][@sha256:DIGEST]`` (an ``oci://`` prefix is dropped)."""

    registry: str
    repository: str
    tag: str
    digest: str | None

    @classmethod
    def parse(cls, text: str) -> Reference:
        name = text.removeprefix("oci://")
        try:
            container = oras.container.Container(name, registry="")
        except ValueError as exc:
            raise RegistryError(f"{text!r}: not REGISTRY/REPOSITORY:TAG ({exc})") from None
        if not container.registry:
            raise RegistryError(f"{text!r}: name the registry (REGISTRY/REPOSITORY:TAG, e.g. "
                                "127.0.0.1:5000/policies/gateway:1)")
        digest = container.digest
        if digest is not None and not _is_sha256(digest):
            raise RegistryError(f"{text!r}: the digest must be sha256:<64 hex digits>")
        repository = (f"{container.namespace}/{container.repository}" if container.namespace
                      else container.repository)
        return cls(registry=container.registry, repository=repository, tag=container.tag,
                   digest=digest)

    def at(self, digest: str) -> Reference:
        return Reference(registry=self.registry, repository=self.repository, tag=self.tag,
                         digest=digest)

    def __str__(self) -> str:
        tail = f"@{self.digest}" if self.digest else f":{self.tag}"
        return f"{self.registry}/{self.repository}{tail}"

    @property
    def container(self) -> Any:
        """oras' parsed form of the reference."""
        return oras.container.Container(str(self), registry=self.registry)

    @property
    def plain_http(self) -> bool:
        """Loopback only: a registry anywhere else is spoken to over HTTPS."""
        host = self.registry.rsplit(":", 1)[0].strip("[]") if not \
            self.registry.startswith("[") else self.registry[1:].split("]", 1)[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False


def _is_sha256(digest: str) -> bool:
    algorithm, _, value = digest.partition(":")
    return algorithm == "sha256" and len(value) == 64 and all(
        c in "0123456789abcdef" for c in value)


_NO_CREDENTIALS: Final = ("unauthorized: set TOOLC_REGISTRY_USERNAME and "
                          "TOOLC_REGISTRY_PASSWORD, or docker login")


class _Unauthorized(ValueError):
    """The registry asks for credentials and none were given."""


class _Auth(oras.auth.token.TokenAuth):  # type: ignore[misc]
    """oras' token auth (bearer tokens from the registry's realm), which also answers a
    ``Basic`` challenge (the CNCF registry with an htpasswd file) with the credentials."""

    def authenticate_request(self, original: requests.Response, headers: dict[str, str],
                             refresh: bool = False) -> tuple[dict[str, str], bool]:
        challenge = original.headers.get("Www-Authenticate", "")
        if challenge.lower().startswith("basic"):
            basic = getattr(self, "_basic_auth", None)
            if not basic:
                raise _Unauthorized(f"HTTP {original.status_code} ({_NO_CREDENTIALS})")
            return {**(headers or {}), "Authorization": f"Basic {basic}"}, True
        result: tuple[dict[str, str], bool] = super().authenticate_request(
            original, headers, refresh)
        return result


class _Registry(oras.provider.Registry):  # type: ignore[misc]
    """oras' registry client making each request once: its ``do_request`` retries any error
    with sleeps growing to minutes, and a pull or a poll should rather fail now and say why
    (the poller tries again on its own schedule)."""

    do_request = oras.provider.Registry.do_request.__wrapped__


def _client(ref: Reference) -> Any:
    client = _Registry(hostname=ref.registry, insecure=ref.plain_http)
    auth = _Auth()
    auth.session, auth.prefix, auth._tls_verify = client.session, client.prefix, True
    client.auth = auth
    user = os.environ.get("TOOLC_REGISTRY_USERNAME")
    password = os.environ.get("TOOLC_REGISTRY_PASSWORD")
    if user and password:
        auth.set_basic_auth(user, password)
    else:
        auth.load_configs(ref.container)  # docker login / oras login credentials, if any
    return client


def _request(client: Any, method: str, url: str, what: str, **kwargs: Any) -> Any:
    try:
        return client.do_request(url, method, **kwargs)
    except (requests.RequestException, ValueError, OSError) as exc:
        raise RegistryError(f"{what}: {exc}") from None


def _failed(response: Any, what: str) -> RegistryError:
    detail = ""
    try:
        errors = response.json().get("errors", [])
        detail = "; ".join(str(e.get("message", e)) for e in errors if isinstance(e, dict))
    except (ValueError, AttributeError):
        pass
    if response.status_code in (401, 403):
        detail = f"{detail or 'unauthorized'}; {_NO_CREDENTIALS.removeprefix('unauthorized: ')}"
    return RegistryError(f"{what}: HTTP {response.status_code}"
                         f"{f' ({detail})' if detail else ''}")


def _check_access(client: Any, ref: Reference, what: str) -> None:
    """One request before the uploads, so refused credentials say so (oras' upload would
    report a missing upload session instead)."""
    response = _request(client, "HEAD", _url(client, ref, "manifests", ref.tag), what,
                        headers={"Accept": MANIFEST_MEDIA})
    if response.status_code in (401, 403):
        raise _failed(response, what)


def _url(client: Any, ref: Reference, kind: str, name: str) -> str:
    return f"{client.prefix}://{ref.registry}/v2/{ref.repository}/{kind}/{name}"


# -- push ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Pushed:
    """What ``push`` did: the reference, the manifest digest, the files and annotations."""

    reference: str
    pinned: str  # REGISTRY/REPO@sha256:DIGEST
    digest: str
    files: int
    annotations: dict[str, str]


def push(build_dir: Path, reference: str) -> Pushed:
    """Push the build at ``build_dir`` (checked first; its signature, if any, goes along
    unverified: a pull verifies it) to ``reference`` as one OCI artifact."""
    ref = Reference.parse(reference)
    if ref.digest is not None:
        raise RegistryError(f"{reference}: push to a tag, not a digest")
    with output_lock(build_dir):  # no build is swapped in while its files are read
        files = signing.build_files(build_dir)
        signature = build_dir / SIGNATURES
        if signature.is_file():
            files[SIGNATURES] = signature.read_bytes()
    annotations = _annotations(files)
    client = _client(ref)
    _check_access(client, ref, f"push {ref}")
    config = dump_json({k.removeprefix("dev.toolc."): v for k, v in annotations.items()}
                       | {"toolc": __version__}).encode("utf-8")
    layers = []
    with tempfile.TemporaryDirectory(prefix="toolc-push-") as tmp:
        config_desc = _upload(client, ref, Path(tmp), "config", config, CONFIG_MEDIA)
        for i, (name, data) in enumerate(sorted(files.items())):
            layer = _upload(client, ref, Path(tmp), str(i), data, FILE_MEDIA)
            layers.append({**layer, "annotations": {TITLE: name}})
    manifest = {"schemaVersion": 2, "mediaType": MANIFEST_MEDIA, "config": config_desc,
                "layers": layers, "annotations": annotations}
    body = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = f"sha256:{hashlib.sha256(body).hexdigest()}"
    what = f"push {ref}"
    response = _request(client, "PUT", _url(client, ref, "manifests", ref.tag), what,
                        data=body, headers={"Content-Type": MANIFEST_MEDIA})
    if response.status_code not in (200, 201):
        raise _failed(response, what)
    served = response.headers.get("Docker-Content-Digest")
    if served and served != digest:
        raise RegistryError(f"{what}: the registry stored digest {served}, not {digest}")
    return Pushed(reference=str(ref), pinned=str(ref.at(digest)), digest=digest,
                  files=len(files), annotations=annotations)


def _annotations(files: dict[str, bytes]) -> dict[str, str]:
    manifest = json.loads(files["manifest.json"])
    out = {BUILD_DIGEST: f"sha256:{hashlib.sha256(files['manifest.json']).hexdigest()}"}
    target = manifest.get("target")
    if target is not None:  # annotations are strings: a JSON object as its compact text
        out[TARGET] = target if isinstance(target, str) else json.dumps(
            target, sort_keys=True, separators=(",", ":"))
    revision = _signed_revision(files.get(SIGNATURES))
    if revision is not None:
        out[REVISION] = revision
    return out


def _signed_revision(signatures: bytes | None) -> str | None:
    """The revision the signature's payload names, read without verifying it (an
    annotation for people; a pull with ``--key`` verifies the signature itself)."""
    if signatures is None:
        return None
    try:
        token = json.loads(signatures)["signatures"][0]
        claims = jwt.decode(token, options={"verify_signature": False})
    except (ValueError, KeyError, IndexError, TypeError, jwt.InvalidTokenError):
        return None
    revision = claims.get("revision")
    return revision if isinstance(revision, str) else None


def _upload(client: Any, ref: Reference, tmp: Path, name: str, data: bytes,
            media: str) -> dict[str, Any]:
    """Upload one blob (skipped when the registry has it); its descriptor."""
    desc = {"mediaType": media, "digest": f"sha256:{hashlib.sha256(data).hexdigest()}",
            "size": len(data)}
    path = tmp / name
    path.write_bytes(data)
    what = f"push {ref}: blob {desc['digest']}"
    try:
        response = client.upload_blob(str(path), ref.container, desc)
    except (requests.RequestException, ValueError, OSError) as exc:
        raise RegistryError(f"{what}: {exc}") from None
    if response.status_code not in (200, 201, 202):
        raise _failed(response, what)
    return desc


# -- pull ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Pulled:
    """What ``pull`` did: the artifact's digest, where the build is, whether it was already
    there, and the signature that verified (None without a key)."""

    reference: str
    digest: str
    out: Path
    up_to_date: bool
    signature: signing.Signature | None
    annotations: dict[str, str]


def remote_digest(reference: str | Reference) -> str:
    """The digest of the manifest a reference names now (one HEAD request)."""
    ref = Reference.parse(reference) if isinstance(reference, str) else reference
    if ref.digest is not None:
        return ref.digest
    client = _client(ref)
    what = f"resolve {ref}"
    response = _request(client, "HEAD", _url(client, ref, "manifests", ref.tag), what,
                        headers={"Accept": MANIFEST_MEDIA})
    digest = response.headers.get("Docker-Content-Digest", "")
    if response.status_code != 200:
        raise _failed(response, what)
    if not _is_sha256(digest):
        return _manifest(client, ref)[1]
    return str(digest)


def pull(reference: str, out: Path, *, key: Path | signing.PublicKey | None = None) -> Pulled:
    """Install the build ``reference`` names at ``out``, verified (digests; with ``key``,
    the signature) before it replaces what is there. RegistryError or SignatureError (a
    BuildError) says why nothing was installed."""
    ref = Reference.parse(reference)
    public = signing.load_public_key(key) if isinstance(key, Path) else key
    client = _client(ref)
    raw, digest = _manifest(client, ref)
    manifest = _toolc_manifest(raw, ref)
    local = _installed(out) or {}  # files already there are not fetched again
    files = {name: _local(local.get(name), layer) or _blob(client, ref, layer, name)
             for name, layer in _layers(manifest, ref)}
    _check_names(files, ref)
    annotations = manifest.get("annotations") or {}
    check_output_dir(out, None)
    signed: list[signing.Signature] = []

    def check(tmp: Path) -> None:
        built = f"sha256:{hashlib.sha256(files['manifest.json']).hexdigest()}"
        if annotations.get(BUILD_DIGEST, built) != built:
            raise RegistryError(f"pull {ref}: the artifact says build {annotations[BUILD_DIGEST]}"
                                f", its manifest.json is {built}")
        try:
            verify_build(tmp)
            if public is not None:
                signed.append(signing.verify(tmp, public).signature)
        except BuildError as exc:  # named after what was pulled, not the temporary directory
            raise type(exc)(f"pull {ref.at(digest)}: " + str(exc).replace(
                f"{tmp.as_posix()}/", "").replace(tmp.as_posix(), "the build")) from exc

    with output_lock(out):
        check_output_dir(out, None)  # again: it may have changed while we waited
        current = _installed(out)
        if current == files:
            check(out)
        else:
            try:
                publish(files, out, check=check)
            except SignatureError:
                raise
            except BuildError as exc:
                raise RegistryError(f"pull {ref}: not a valid toolc build: {exc}") from exc
    signature = None if not signed else signing.Signature(
        build=out, key_id=signed[0].key_id, revision=signed[0].revision,
        target=signed[0].target, digest=signed[0].digest)
    return Pulled(reference=str(ref.at(digest)), digest=digest, out=out,
                  up_to_date=current == files, signature=signature,
                  annotations=dict(annotations))


def _manifest(client: Any, ref: Reference) -> tuple[bytes, str]:
    what = f"pull {ref}"
    response = _request(client, "GET", _url(client, ref, "manifests", ref.digest or ref.tag),
                        what, headers={"Accept": MANIFEST_MEDIA}, stream=True)
    if response.status_code != 200:
        raise _failed(response, what)
    raw = _read(response, MAX_MANIFEST, what)
    digest = f"sha256:{hashlib.sha256(raw).hexdigest()}"
    if ref.digest is not None and digest != ref.digest:
        raise RegistryError(f"{what}: the registry served a manifest with digest {digest}")
    return raw, digest


def _toolc_manifest(raw: bytes, ref: Reference) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads(raw)
    except ValueError:
        raise RegistryError(f"pull {ref}: the manifest is not JSON") from None
    config = manifest.get("config") if isinstance(manifest, dict) else None
    if not (isinstance(config, dict) and config.get("mediaType") == CONFIG_MEDIA
            and isinstance(manifest.get("layers"), list)):
        raise RegistryError(f"pull {ref}: not a toolc build (the artifact type is not "
                            f"{CONFIG_MEDIA})")
    annotations = manifest.get("annotations")
    if annotations is not None and not (isinstance(annotations, dict) and all(
            isinstance(v, str) for v in annotations.values())):
        raise RegistryError(f"pull {ref}: malformed annotations")
    return manifest


def _layers(manifest: dict[str, Any], ref: Reference) -> list[tuple[str, dict[str, Any]]]:
    out: dict[str, dict[str, Any]] = {}
    for layer in manifest["layers"]:
        title = (layer.get("annotations") or {}).get(TITLE) if isinstance(layer, dict) else None
        if not (isinstance(title, str) and plain_relative(title)):
            raise RegistryError(f"pull {ref}: a layer without a plain relative file name "
                                f"({title!r})")
        if layer.get("mediaType") != FILE_MEDIA or title in out:
            raise RegistryError(f"pull {ref}: layer {title}: not a toolc build file, or twice")
        out[title] = layer
    return sorted(out.items())


def _local(data: bytes | None, layer: dict[str, Any]) -> bytes | None:
    """The installed file's bytes when they are the layer's (same sha256), else None."""
    if data is None or f"sha256:{hashlib.sha256(data).hexdigest()}" != layer.get("digest"):
        return None
    return data


def _blob(client: Any, ref: Reference, layer: dict[str, Any], name: str) -> bytes:
    digest, size = layer.get("digest"), layer.get("size")
    what = f"pull {ref}: layer {name}"
    if not (isinstance(digest, str) and _is_sha256(digest) and isinstance(size, int)
            and 0 <= size <= MAX_BLOB):
        raise RegistryError(f"{what}: no sha256 digest and size")
    response = _request(client, "GET", _url(client, ref, "blobs", digest), what, stream=True,
                        headers=dict(client.headers))
    if response.status_code != 200:
        raise _failed(response, what)
    data = _read(response, size, what)
    actual = f"sha256:{hashlib.sha256(data).hexdigest()}"
    if actual != digest or len(data) != size:
        raise RegistryError(f"{what}: the registry served bytes with digest {actual} "
                            f"({len(data)} bytes), not the layer's {digest} ({size} bytes): "
                            "tampered or corrupt; nothing was installed")
    return data


def _read(response: Any, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of a streamed body (one more is an error: never more)."""
    chunks, total = [], 0
    try:
        for chunk in response.iter_content(chunk_size=65536):
            total += len(chunk)
            if total > limit:
                raise RegistryError(f"{what}: longer than its {limit} bytes")
            chunks.append(chunk)
    except requests.RequestException as exc:
        raise RegistryError(f"{what}: {exc}") from None
    finally:
        response.close()
    return b"".join(chunks)


def _check_names(files: dict[str, bytes], ref: Reference) -> None:
    """Only the files the build's manifest lists, the manifest and the signature."""
    if "manifest.json" not in files:
        raise RegistryError(f"pull {ref}: no manifest.json layer: not a toolc build")
    try:
        listed = json.loads(files["manifest.json"])["files"]
        allowed = {*listed, "manifest.json", SIGNATURES}
    except (ValueError, KeyError, TypeError):
        raise RegistryError(f"pull {ref}: manifest.json is not a toolc manifest") from None
    extra = sorted(set(files) - allowed)
    if extra:
        raise RegistryError(f"pull {ref}: {', '.join(extra[:5])}: files the build's "
                            "manifest does not list")


def _installed(out: Path) -> dict[str, bytes] | None:
    """The files of the build at ``out`` (for the no-op check), or None."""
    try:
        manifest = read_manifest(out)
        names = [*manifest["files"], "manifest.json"]
        if (out / SIGNATURES).is_file():
            names.append(SIGNATURES)
        return {name: (out / name).read_bytes() for name in names}
    except (BuildError, OSError):
        return None


# -- the poller of serve-mcp --watch oci:// -------------------------------------------------------
class Poller:
    """One registry poller for every ``serve-mcp`` worker sharing a build directory.

    Each worker calls ``poll`` on its schedule; the one that holds the poll lock (an
    ``flock`` on ``.<build>.toolc-poll`` beside the build, kept for as long as the worker
    lives; the kernel drops it when it exits, and the next worker to poll takes over) asks
    the registry for the digest and, when it changed, pulls it into the shared directory
    (verified, atomically, under the output lock). Every worker, the poller included, then
    loads the new build through its own watch of the directory, verifying it again with
    ``--verify-key``. A refused artifact is not tried again until the digest changes: the
    last good build keeps serving.
    """

    def __init__(self, reference: str, build_dir: Path,
                 key: signing.PublicKey | None) -> None:
        self.ref = Reference.parse(reference)
        self.build_dir = build_dir
        self.key = key
        self.seen: str | None = None  # the last digest pulled or refused
        self._held = ExitStack()
        self.polling = False

    def poll(self) -> str | None:
        """One round; what to log, or None (nothing new, or another worker polls)."""
        if not self.polling:
            try:
                self._held.enter_context(locked(self.build_dir, timeout=0,
                                                suffix=POLL_SUFFIX))
            except LockTimeoutError:
                return None
            self.polling = True
        digest = remote_digest(self.ref)
        if digest == self.seen:
            return None
        try:
            pulled = pull(str(self.ref.at(digest)), self.build_dir, key=self.key)
        except BuildError as exc:  # SignatureError too: refused for good, until it changes
            self.seen = digest
            raise RegistryError(f"refused {self.ref} ({digest}): {exc}") from exc
        # a RegistryError (unreachable, a corrupt blob) is tried again next round
        self.seen = digest
        if pulled.up_to_date:
            return None
        return f"pulled {self.ref} ({digest}) into {self.build_dir.as_posix()}"

    def close(self) -> None:
        self._held.close()
        self.polling = False

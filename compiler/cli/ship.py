"""``toolc keygen``, ``sign``, ``verify`` (the extra toolc[sign]) and ``toolc push``, ``pull``
(toolc[oci]): signed builds through an OCI registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from ._app import echo, fail, guard, main


def _signed(sig: Any) -> str:
    parts = [f"signed by key {sig.key_id}", f"revision {sig.revision or '(none)'}"]
    if sig.target is not None:
        parts.append(f"target {api.target_text(sig.target)}")
    return ", ".join([*parts, f"manifest sha256 {sig.digest}"])


@main.command()
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Directory for private.pem (mode 0600) and public.pem (created if missing).")
@click.option("--algorithm", type=click.Choice(["ed25519", "p256"]), default="ed25519",
              show_default=True, help="Ed25519 (JWS EdDSA) or ECDSA P-256 (JWS ES256).")
@guard
def keygen(out: Path, algorithm: str) -> None:
    """Write a new signing key pair (PEM) into --out; never overwrites a key.

    Keep private.pem secret (where CI keeps its secrets); give public.pem to every
    deployment that runs `toolc verify`, `toolc pull --key` or `serve-mcp --verify-key`.

    \b
    Examples:
      toolc keygen --out keys
      toolc keygen --out keys --algorithm p256
    """
    try:
        pair = api.keygen(out, algorithm)  # type: ignore[arg-type]
    except api.SignatureError as exc:
        fail(str(exc))
    echo(f"wrote {pair.private.as_posix()} (mode 0600: keep it secret) and "
         f"{pair.public.as_posix()}: {pair.algorithm} key {pair.key_id}", err=True)


@main.command()
@click.argument("build_dir", metavar="BUILD", type=click.Path(path_type=Path))
@click.option("--key", required=True, type=click.Path(path_type=Path),
              help="The private key (private.pem of toolc keygen).")
@click.option("--revision", default=None, metavar="REV",
              help="The definitions' revision to sign in.  [default: git rev-parse HEAD of "
              "the current directory, none outside a checkout]")
@guard
def sign(build_dir: Path, key: Path, revision: str | None) -> None:
    """Sign BUILD: write BUILD/.signatures.json (OPA's bundle signature format).

    The JWS signs the sha256 of every file of the build (manifest.json included, so its
    target too) and the definitions' revision. The build is checked first (a modified build
    is refused) and republished with the signature through the same writer and lock as
    `toolc build`. A rebuild that changes the build drops the signature: sign again.

    \b
    Examples:
      toolc sign build --key keys/private.pem
      toolc sign build --key keys/private.pem --revision "$GITHUB_SHA"
    """
    sig = api.sign(build_dir, key, revision=revision)
    echo(f"wrote {build_dir.as_posix()}/.signatures.json: {_signed(sig)}", err=True)


@main.command()
@click.argument("build_dir", metavar="BUILD", type=click.Path(path_type=Path))
@click.option("--key", required=True, type=click.Path(path_type=Path),
              help="The public key (public.pem of toolc keygen).")
@guard
def verify(build_dir: Path, key: Path) -> None:
    """Exit 0 only when BUILD is untampered and signed by --key; else 1, with the reason.

    Run it from the installed toolc before anything imports the build (its own loader is part
    of it, and cannot vouch for itself).

    \b
    Examples:
      toolc verify build --key keys/public.pem && python -m my_gateway
    """
    signed = api.verify(build_dir, key)
    echo(f"{build_dir.as_posix()}: ok: {_signed(signed.signature)}")


@main.command()
@click.argument("build_dir", metavar="BUILD", type=click.Path(path_type=Path))
@click.argument("reference", metavar="REGISTRY/REPO:TAG")
@guard
def push(build_dir: Path, reference: str) -> None:
    """Push BUILD (and its signature, if signed) to an OCI registry as one artifact.

    Prints REGISTRY/REPO@sha256:DIGEST. A loopback registry is spoken to over plain HTTP,
    any other over HTTPS; credentials come from TOOLC_REGISTRY_USERNAME and
    TOOLC_REGISTRY_PASSWORD, else from `docker login`.

    \b
    Examples:
      toolc push build 127.0.0.1:5000/policies/gateway:1
    """
    try:
        pushed = api.push(build_dir, reference)
    except api.RegistryError as exc:
        fail(str(exc))
    echo(f"pushed {pushed.files} files of {build_dir.as_posix()} to {pushed.reference}",
         err=True)
    echo(pushed.pinned)


@main.command()
@click.argument("reference", metavar="REF")
@click.option("-o", "--out", required=True, type=click.Path(path_type=Path),
              help="Build directory to install into (replaced atomically, as by toolc build).")
@click.option("--key", default=None, type=click.Path(path_type=Path),
              help="Refuse the build unless it is signed by this public key.")
@guard
def pull(reference: str, out: Path, key: Path | None) -> None:
    """Install the build REF names (REGISTRY/REPO:TAG or @sha256:DIGEST) into --out.

    Every blob is checked against its digest, the build as every reader checks it and,
    with --key, its signature, all before it replaces what --out holds: on any failure the
    old build stays, and the exit status is 1 with the reason.

    \b
    Examples:
      toolc pull 127.0.0.1:5000/policies/gateway:1 -o build --key keys/public.pem
    """
    try:
        pulled = api.pull(reference, out, key=key)
    except (api.RegistryError, api.OutputDirError, api.LockTimeoutError) as exc:
        fail(str(exc))
    what = "is up to date" if pulled.up_to_date else "installed"
    signed = f"; {_signed(pulled.signature)}" if pulled.signature is not None else \
        " (not verified: no --key)"
    echo(f"{out.as_posix()} {what}: {pulled.reference}{signed}", err=True)
    echo(pulled.reference)

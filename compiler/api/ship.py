"""Signed builds and OCI registries (``toolc keygen``, ``sign``, ``verify``, ``push``,
``pull``): the extras ``toolc[sign]`` and ``toolc[oci]``, imported when called (without them
a call raises MissingExtraError, which names the extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..ship import RegistryError, SignatureError, target_text
from .serve import extra_module

__all__ = ["RegistryError", "SignatureError", "keygen", "pull", "push", "sign", "target_text",
           "verify"]


def keygen(out: Path, algorithm: Literal["ed25519", "p256"] = "ed25519") -> Any:
    """A new signing key pair in ``out`` (``private.pem``, mode 0600, and ``public.pem``):
    a ``KeyPair``. SignatureError when a key file exists there already."""
    return extra_module("keygen", "ship.signing", "sign").keygen(out, algorithm)


def sign(build_dir: Path, key: Path, *, revision: str | None = None) -> Any:
    """Sign the build at ``build_dir`` (``build_dir/.signatures.json``) with the private key
    file ``key``; ``revision`` defaults to ``git rev-parse HEAD`` of the current directory
    (none outside a checkout). A ``Signature``; BuildError for a modified build."""
    signing = extra_module("sign", "ship.signing", "sign")
    return signing.sign(build_dir, key, revision=revision or signing.git_revision())


def verify(build_dir: Path, key: Path) -> Any:
    """Check that the build at ``build_dir`` is exactly what the holder of the public key
    file ``key`` signed: a ``SignedBuild`` (its ``signature`` and the checked bytes), or
    SignatureError saying why not."""
    return extra_module("verify", "ship.signing", "sign").verify(build_dir, key)


def push(build_dir: Path, reference: str) -> Any:
    """Push the build at ``build_dir`` to ``REGISTRY/REPO:TAG`` as one OCI artifact: a
    ``Pushed`` (its digest); RegistryError, BuildError."""
    return extra_module("push", "ship.oci", "oci").push(build_dir, reference)


def pull(reference: str, out: Path, *, key: Path | None = None) -> Any:
    """Install the build ``reference`` names at ``out`` (atomically, through the writer and
    output lock of ``build``) once its digests (and with ``key``, its signature) verified:
    a ``Pulled``; RegistryError, SignatureError, OutputDirError."""
    return extra_module("pull", "ship.oci", "oci").pull(reference, out, key=key)

"""Shipping builds: signatures (``signing``: ``toolc keygen``, ``sign``, ``verify``; the extra
``toolc[sign]``, pyjwt + cryptography) and an OCI registry (``oci``: ``toolc push``, ``pull``
and the poller of ``serve-mcp --watch oci://``; the extra ``toolc[oci]``, oras).

Both check a build with the one check every reader uses (``toolc.builds.read.verify_build``,
the runtime loader's own rule) and write a build only through the one writer and output lock
(``toolc.pipeline.writer.publish``). This module itself imports no extra, so callers can name
the errors without them.
"""

from __future__ import annotations

import json

from ..builds.read import BuildError


class SignatureError(BuildError):
    """A build that is unsigned, signed by another key, or whose files are not the ones that
    were signed (the message says which); also an unusable key file."""


class RegistryError(Exception):
    """A registry could not be reached, refused us, or served something that is not a toolc
    build, or whose bytes do not match their digests (the message says which)."""


def target_text(target: object) -> str | None:
    """A manifest's ``target`` in words: ``openclaw 2026.9 (openclaw@2026.9.6)`` for the
    ``{"openclaw", "release"}`` toolc writes, the JSON text of anything else."""
    if target is None:
        return None
    if isinstance(target, dict) and set(target) == {"openclaw", "release"}:
        return f"openclaw {target['openclaw']} (openclaw@{target['release']})"
    return target if isinstance(target, str) else json.dumps(target, sort_keys=True)

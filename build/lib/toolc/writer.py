"""Stage 6, write: publish a rendered file map into the output directory in one step."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def publish(files: Mapping[str, str], out: Path) -> None:
    """Write everything into a sibling temp dir, then swap it in; stale files disappear.

    A failure before the swap leaves ``out`` untouched, so there is never a half-written build.
    """
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        for rel, text in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / "build")
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def matches_disk(out: Path, inputs_digest: str) -> bool:
    """True when ``out`` was built from the same inputs and no output file was touched."""
    try:
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
        if manifest.get("inputs_sha256") != inputs_digest:
            return False
        for rel, digest in manifest["files"].items():
            if hashlib.sha256((out / rel).read_bytes()).hexdigest() != digest:
                return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    expected = set(manifest["files"]) | {"manifest.json"}
    actual = {p.relative_to(out).as_posix() for p in out.rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    return actual == expected


def diff_disk(files: Mapping[str, str], out: Path) -> list[str]:
    """Paths that differ between the rendered map and ``out`` (for ``toolc build --check``)."""
    actual = {p.relative_to(out).as_posix() for p in out.rglob("*")
              if p.is_file() and "__pycache__" not in p.parts} if out.is_dir() else set()
    changed = sorted(set(files) ^ actual)
    for rel in sorted(set(files) & actual):
        if (out / rel).read_bytes() != files[rel].encode("utf-8"):
            changed.append(rel)
    return sorted(changed)

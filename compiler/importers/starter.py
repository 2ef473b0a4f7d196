"""Starting a project: the shipped core catalog (package data), ``toolc init`` and the safe
writing of new definitions files (never over a user's file unless asked)."""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from ..targets import NEWEST_KEY
from ..targets.starter import STARTER_FILES
from ..targets.starter import starter_text as _starter_text

# The definitions every project starts from, per target: OpenClaw's core tools, its bundled
# plugins' tools, the profiles and the provider dialects (package data of toolc.targets:
# starter-<key>/, 2026.9's generated from the release's data by toolc.targets.starter).
SCHEMA_FILE = "definitions.schema.json"
# Where ``init`` and ``import-openclaw`` put a copy of the editor schema: a hidden folder, so
# the build neither reads it nor warns about it.
SCHEMA_COPY = ".schema/definitions.schema.json"

_EXAMPLE_TOOLS = """\
tools:
  # The base allow list for every agent: minimal, coding, messaging or full (profiles.yaml).
  profile: coding
  # Added on top of the profile (OpenClaw's alsoAllow).
  alsoAllow: [web_fetch]
  # Deny always wins, in every layer.
  deny: [browser]
"""
_EXAMPLE_CHANNELS = """\
# channels:
#   telegram:
#     groups:
#       "-100123":
#         tools: {deny: [exec]}
#         toolsBySender:
#           "id:42": {alsoAllow: [exec]}
"""
_EXAMPLE_HEAD = """\
version: 1

# An example policy in OpenClaw's own config shape: edit it, or replace it with
# `toolc import-openclaw openclaw.json5 -o DIR` output. `toolc build` compiles this directory.
# The OpenClaw release whose semantics these definitions follow:
openclaw: "{key}"

"""
EXAMPLE_POLICY: dict[str, str] = {
    "2026.3": _EXAMPLE_HEAD.format(key="2026.3") + _EXAMPLE_TOOLS + """
agents:
  list:
    - id: main
    # A read-only agent: its own allow list narrows the global policy further.
    - id: viewer
      tools:
        allow: [read, web_fetch, sessions_list, session_status]

""" + _EXAMPLE_CHANNELS,
    "2026.9": _EXAMPLE_HEAD.format(key="2026.9") + _EXAMPLE_TOOLS + """
agents:
  # OpenClaw 2026.9's roster, keyed by agent id. A request that names no agent uses the
  # `default: true` one (or set `ownership: explicit` so that every request must name one).
  entries:
    main:
      default: true
    # A read-only agent: its own allow list narrows the global policy further.
    viewer:
      tools:
        allow: [read, web_fetch, sessions_list, session_status]

""" + _EXAMPLE_CHANNELS.replace('"id:42": {alsoAllow: [exec]}',
                                 '"channel:telegram:42": {alsoAllow: [exec]}'),
}


class ProjectWriteError(ValueError):
    """Writing would replace or mix with files the user has (nothing was written)."""


def starter_text(rel: str, key: str = NEWEST_KEY) -> str:
    """One file of a target's starter, as shipped."""
    return _starter_text(key, rel)


def schema_text() -> str:
    return resources.files("toolc").joinpath(SCHEMA_FILE).read_text("utf-8")


def schema_path() -> Path:
    """The installed editor schema (inside the toolc package, wheel or checkout)."""
    return Path(str(resources.files("toolc").joinpath(SCHEMA_FILE))).resolve()


def with_directive(rel: str, text: str) -> str:
    """``text`` with the yaml-language-server directive pointing at the project's schema
    copy (relative to the file, so it works wherever the project lives)."""
    target = posixpath.relpath(SCHEMA_COPY, posixpath.dirname(rel) or ".")
    return f"# yaml-language-server: $schema={target}\n{text}"


def starter_files(key: str = NEWEST_KEY) -> dict[str, str]:
    """A target's starter definitions: the core catalog, profiles, providers, the schema
    copy."""
    files = {rel: with_directive(rel, starter_text(rel, key)) for rel in STARTER_FILES[key]}
    files[SCHEMA_COPY] = schema_text()
    return files


def init_files(key: str = NEWEST_KEY) -> dict[str, str]:
    """What ``toolc init`` writes: the starter plus a commented example policy naming the
    target."""
    return {**starter_files(key),
            "policy.yaml": with_directive("policy.yaml", EXAMPLE_POLICY[key])}


def write_new_files(files: Mapping[str, str], out: Path, *, force: bool,
                    refuse_non_empty: bool) -> None:
    """Write ``files`` below ``out``. Refuses (writing nothing) a path that is a file, a
    target file that exists (unless ``force``) and, with ``refuse_non_empty``, any non-empty
    directory (unless ``force``). ``force`` overwrites the files named; nothing is deleted.

    Never through a symbolic link, even with ``force``: ``out`` itself, a folder on the way
    to a file or the file itself being a link (to a file, a folder, or nowhere) is refused.
    Each file is written to a new temporary file in its own folder and renamed over the
    target, with every folder opened without following links, so a link planted between the
    checks and the writes is not followed either (the rename replaces a directory entry; it
    never writes into the file a link or a hard link points at)."""
    shown = out.as_posix()
    if out.is_symlink():
        raise ProjectWriteError(f"{shown} is a symbolic link; refusing to write through it "
                                "(pass the directory it points to)")
    if out.exists() and not out.is_dir():
        raise ProjectWriteError(f"{shown} is a file, not a directory")
    if not force:
        if refuse_non_empty and out.is_dir() and any(out.iterdir()):
            raise ProjectWriteError(f"{shown} is not empty; choose an empty or new directory "
                                    "(or pass --force to overwrite the files it writes)")
        existing = sorted(rel for rel in files if os.path.lexists(out / rel))
        if existing:
            raise ProjectWriteError(f"{shown} already has {', '.join(existing)}; refusing to "
                                    "overwrite (pass --force to overwrite these files)")
    for rel in sorted(files):
        _check_target(out, rel)
    out.mkdir(parents=True, exist_ok=True)
    root = _open_dir(None, str(out), shown)
    try:
        for rel, text in sorted(files.items()):
            _write_below(root, rel, text.encode("utf-8"), shown)
    finally:
        os.close(root)


def _check_target(out: Path, rel: str) -> None:
    """Refuse a link or a non-file anywhere on the way from ``out`` to ``rel``."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ProjectWriteError(f"{rel}: not a plain relative path")
    at = out
    for i, part in enumerate(parts):
        at = at / part
        if at.is_symlink():
            raise ProjectWriteError(f"{at.as_posix()} is a symbolic link; refusing to write "
                                    "through it (remove it, or choose another directory)")
        last = i == len(parts) - 1
        if last and at.exists() and not at.is_file():
            raise ProjectWriteError(f"{at.as_posix()} exists and is not a file")
        if not last and at.exists() and not at.is_dir():
            raise ProjectWriteError(f"{at.as_posix()} exists and is not a directory")


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _open_dir(parent: int | None, name: str, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise ProjectWriteError(f"{shown} is a symbolic link or not a directory; "
                                    "refusing to write through it") from exc
        raise ProjectWriteError(f"{shown}: cannot open ({exc.strerror or exc})") from exc


def _write_below(root: int, rel: str, data: bytes, shown: str) -> None:
    *folders, name = rel.split("/")
    fd = os.dup(root)
    try:
        at = shown
        for folder in folders:
            at = f"{at}/{folder}"
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o777, dir_fd=fd)
            inner = _open_dir(fd, folder, at)
            os.close(fd)
            fd = inner
        _replace_file(fd, name, data, f"{at}/{name}")
    finally:
        os.close(fd)


def _replace_file(folder: int, name: str, data: bytes, shown: str) -> None:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ProjectWriteError(f"{shown} is a symbolic link or not a file; refusing to "
                                "write through it")
    temp = f".{name}.toolc-{os.getpid()}-{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o666, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise

"""Who an HTTP client of ``toolc serve-mcp`` is: bearer tokens, stored as sha256 hashes.

An identities file (YAML) maps the sha256 of each bearer token to a name and a request
context: the message a gateway would receive (``toolc_runtime.Request``'s fields, routed
first as OpenClaw routes it; ``peer`` as ``KIND:ID`` or ``[kind, id]``), or the keywords of
``resolve``::

    version: 1
    identities:
      - name: alice
        token_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
        context: {channel: telegram, peer: "group:-100123", sender_id: "42",
                  sender_is_owner: false}
      - name: ops
        token_sha256: 60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752
        context: {agent_id: ops, session_key: "agent:ops:telegram:group:-100123"}

A context naming a group its target would ignore (a ``group_id`` no ``session_key`` names,
under OpenClaw 2026.9) is refused when serve-mcp loads the file, never at a call.

Tokens themselves are never stored: ``toolc identity add`` makes one, prints it once and
appends its hash. Standard library and PyYAML only.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import yaml

from ..locks import LockTimeoutError, locked
from ..rules.context import CONTEXT_KEYS, MESSAGE_KEYS, check_message, check_value, is_message

_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


class IdentitiesError(ValueError):
    """The identities file is missing, unreadable or malformed (the message says where)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """One caller: a name for the logs and the request context its token stands for."""

    name: str
    context: Mapping[str, Any]


def token_hash(token: str) -> str:
    """The sha256 (hex) an identities file stores for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh bearer token (256 random bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def check_context(raw: object, where: str) -> dict[str, Any]:
    """A context mapping, checked: a message-level one (a key only a message has, such as
    ``channel`` or ``peer``: every key one of ``Request``'s fields, peers as ``KIND:ID``), or
    every key one of resolve's keywords; every value of its type."""
    if not isinstance(raw, Mapping):
        raise IdentitiesError(f"{where}: context must be a mapping")
    try:
        if is_message(raw):
            checked = check_message({str(k): v for k, v in raw.items()})
        else:
            unknown = sorted(str(k) for k in raw if k not in CONTEXT_KEYS)
            if unknown:
                raise IdentitiesError(
                    f"{where}: unknown context key(s) {', '.join(unknown)} (known: resolve's "
                    f"{', '.join(CONTEXT_KEYS)}; or a message's {', '.join(MESSAGE_KEYS)})")
            checked = {str(k): check_value(str(k), v) for k, v in raw.items()}
    except (TypeError, ValueError) as exc:
        if isinstance(exc, IdentitiesError):
            raise
        raise IdentitiesError(f"{where}: {exc}") from exc
    return {k: v for k, v in checked.items() if v is not None}


class Identities:
    """The identities of a file, by token hash."""

    def __init__(self, by_hash: Mapping[str, Identity]) -> None:
        self._by_hash: Final = MappingProxyType(dict(by_hash))

    def __len__(self) -> int:
        return len(self._by_hash)

    def lookup(self, token: str) -> Identity | None:
        """The identity of a bearer token, or None when the token is unknown."""
        return self._by_hash.get(token_hash(token))

    def by_hash(self, digest: str) -> Identity | None:
        """The identity whose token has this sha256 (hex), or None."""
        return self._by_hash.get(digest)

    def all(self) -> tuple[Identity, ...]:
        """Every identity, in file order."""
        return tuple(self._by_hash.values())

    def hashes(self) -> frozenset[str]:
        """Every token hash in the file (what a reload compares to find revoked tokens)."""
        return frozenset(self._by_hash)

    @classmethod
    def load(cls, path: Path) -> Identities:
        """Read and check an identities file (IdentitiesError naming the problem)."""
        entries = _entries(_read(path), path)
        by_hash: dict[str, Identity] = {}
        names: set[str] = set()
        for i, entry in enumerate(entries):
            where = f"{path.as_posix()}: identities[{i}]"
            identity, digest = _identity(entry, where)
            if digest in by_hash:
                raise IdentitiesError(f"{where}: token_sha256 used twice")
            if identity.name in names:
                raise IdentitiesError(f"{where}: name {identity.name!r} used twice")
            names.add(identity.name)
            by_hash[digest] = identity
        return cls(by_hash)


def _read(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise IdentitiesError(f"{path.as_posix()}: no such identities file") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise IdentitiesError(f"{path.as_posix()}: unreadable ({exc})") from exc


def _entries(data: object, path: Path) -> list[object]:
    if data is None:
        return []
    if not isinstance(data, dict) or data.get("version") != 1:
        raise IdentitiesError(f"{path.as_posix()}: expected a mapping with version: 1")
    extra = sorted(str(k) for k in data if k not in ("version", "identities"))
    if extra:
        raise IdentitiesError(f"{path.as_posix()}: unknown key(s) {', '.join(extra)}")
    entries = data.get("identities") or []
    if not isinstance(entries, list):
        raise IdentitiesError(f"{path.as_posix()}: identities must be a list")
    return entries


def _identity(entry: object, where: str) -> tuple[Identity, str]:
    if not isinstance(entry, dict):
        raise IdentitiesError(f"{where}: expected a mapping")
    extra = sorted(str(k) for k in entry if k not in ("name", "token_sha256", "context"))
    if extra:
        raise IdentitiesError(f"{where}: unknown key(s) {', '.join(extra)}")
    name, digest = entry.get("name"), entry.get("token_sha256")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise IdentitiesError(f"{where}: name must match {_NAME.pattern}")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise IdentitiesError(f"{where}: token_sha256 must be 64 lowercase hex digits (the "
                              "sha256 of the token, never the token itself)")
    return Identity(name, MappingProxyType(check_context(entry.get("context") or {}, where))), \
        digest


# How long ``toolc identity add`` waits for another one on the same file.
ADD_LOCK_TIMEOUT: Final = 30.0


def add_identity(path: Path, name: str, context: Mapping[str, Any]) -> str:
    """Append an identity for a new token to ``path`` (created when missing); the token.

    The file is checked before and after, and rewritten whole (comments are not kept). The
    read-modify-write holds the file's lock (``locks.locked``), so concurrent adds all land;
    the new text goes to a temporary file of a unique name beside it and replaces it in one
    rename, so a server reading the file sees the old or the new version, never a mix."""
    if not _NAME.fullmatch(name):
        raise IdentitiesError(f"identity name {name!r} must match {_NAME.pattern}")
    checked = check_context(context, f"identity {name}")
    try:
        with locked(path, timeout=ADD_LOCK_TIMEOUT):
            return _add_locked(path, name, checked)
    except LockTimeoutError as exc:
        raise IdentitiesError(str(exc)) from exc


def _add_locked(path: Path, name: str, context: dict[str, Any]) -> str:
    if path.exists():
        Identities.load(path)  # refuse to extend a broken file
        data = _read(path) or {"version": 1}
    else:
        data = {"version": 1}
    assert isinstance(data, dict)
    entries = list(data.get("identities") or [])
    if any(isinstance(e, dict) and e.get("name") == name for e in entries):
        raise IdentitiesError(f"{path.as_posix()}: an identity named {name!r} exists")
    token = new_token()
    stored = {k: list(v) if isinstance(v, tuple) else v for k, v in context.items()}
    entries.append({"name": name, "token_sha256": token_hash(token), "context": stored})
    data["identities"] = entries
    _replace(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    Identities.load(path)
    return token


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically through a uniquely named sibling."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- serve time: the file as it is now ------------------------------------------------------------
def _stamp(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class IdentitySource:
    """The identities file as it is now: ``current()`` stats it (inode, size, mtime, ctime)
    and re-reads it when any of them changed, so an edit applies to the very next request.

    Fails closed: while the file is missing or malformed, ``current()`` is None (nobody is
    let in) and the problem is logged once per version of the file; the last good set is
    never served again after the file changed, so an edit that removed a token and broke
    the file cannot bring the token back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp = _stamp(path)
        self._identities: Identities | None = Identities.load(path)  # errors: the CLI's
        # what the server checks a re-read file against (the build it serves): the reason
        # an identity cannot be served, or None; a file with one is refused like a malformed one
        self.check: Callable[[Identity], str | None] | None = None

    def current(self) -> Identities | None:
        """The identities to authenticate against now (None: refuse every request)."""
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._identities = self._checked(Identities.load(self.path))
            except IdentitiesError as exc:
                self._identities = None
                logging.getLogger("toolc.mcp").error(
                    "%s; refusing every request until the file is fixed", exc)
        return self._identities

    def _checked(self, identities: Identities) -> Identities:
        check = self.check
        if check is not None:
            for identity in identities.all():
                why = check(identity)
                if why is not None:
                    raise IdentitiesError(
                        f"{self.path.as_posix()}: identity {identity.name}: {why}")
        return identities

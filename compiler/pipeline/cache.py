"""The incremental build cache: content-addressed results of the units a build can compute
independently, so that a rebuild after a small edit recomputes only the units it touched.

Units (each keyed on everything its result depends on, never on a path or a time):

* ``file``: one definitions file loaded (YAML with positions) and checked against the JSON
  Schema, with its diagnostics. Key: the file's relative path and sha256.
* ``channel``: one channel's compiled tables (its group maps, accounts and spaces, the
  ``channels`` entry of ``tables.json``) with the warnings compiling it gave. Key: the
  definitions outside every ``channels`` section (``unit_base``) and the bytes of the file
  that defines the channel.
* ``base``, its own units, and ``unit`` (a channel file compiled on its own):
  ``toolc.pipeline.stream`` and ``toolc.builds``.

Two entries per definitions directory are bookkeeping and decide no byte: ``scan``
(``stream.ScanMemo``: which files are channel files, by sha256) and ``last-base``
(``builds._Last``: the last build's base, which a worker started ahead reads).

Every key also holds a salt: toolc's version and the digest of its own code and templates
(``toolc.builds``), and the build options. A changed compiler never reads an old entry.

Entries are files ``<root>/v2/<key[:2]>/<key>``: an HMAC-SHA256 of the key and payload, a
newline, the payload (a pickle). The HMAC key is a secret of the user running toolc, kept
outside every project (``cache_secret``: ``$XDG_CACHE_HOME/toolc/cache-secret``, else
``~/.cache/toolc/cache-secret``, created once with mode 0600). A reader checks the tag and
treats a missing, truncated, corrupt or foreign entry as a miss (it computes the unit and
rewrites the entry), so a damaged cache can slow a build down but never change its output,
and an entry nobody wrote with this user's secret (one committed to a repository, say, or
planted by a pull request) is never unpickled. Without a usable secret the cache is off.
Writers write a temporary file in the entry's directory and rename it into place, so two
builds that share a cache (into different outputs) never see half an entry; two writers of
one key write the same bytes. ``toolc build`` writes
the cache only while it holds the output's lock (``writer.output_lock``), the one lock of
every writer of ``build/`` (a worker it started ahead and did not need may finish reading
an entry after the build). Entries are pickles, trusted because only a holder of the secret
can write one that verifies: never share the secret, and a cache is per user.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# The cache's default directory name, beside the definitions directory (``toolc build``).
DEFAULT_DIR = ".toolc-cache"
_LAYOUT = "v2"  # v1: a plain sha256 (any writer could forge entries)
_SECRET_BYTES = 32
_TAG_MAX = 128  # an entry's tag line is 64 hex digits: a longer first line is no entry


@dataclass(slots=True)
class CacheStats:
    """Hits and misses per unit kind, for reports and tests."""

    hits: dict[str, int] = field(default_factory=dict)
    misses: dict[str, int] = field(default_factory=dict)

    def count(self, kind: str, hit: bool) -> None:
        table = self.hits if hit else self.misses
        table[kind] = table.get(kind, 0) + 1


class BuildCache:
    """A directory of content-addressed unit results (see the module docstring)."""

    def __init__(self, root: Path, salt: bytes, secret: bytes | None = None) -> None:
        self.root = Path(root)
        self.salt = salt
        self.secret = cache_secret() if secret is None else secret
        self.stats = CacheStats()

    def _tag(self, key: str, payload: bytes | memoryview) -> bytes:
        tag = hmac.new(self.secret, key.encode() + b"\0", hashlib.sha256)
        tag.update(payload)
        return tag.hexdigest().encode()

    def key(self, kind: str, parts: Iterable[bytes | str]) -> str:
        h = hashlib.sha256(self.salt)
        h.update(kind.encode() + b"\0")
        for part in parts:
            data = part.encode("utf-8") if isinstance(part, str) else part
            # length-prefixed, so ("ab", "c") and ("a", "bc") never share a key
            h.update(len(data).to_bytes(8, "big") + data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / _LAYOUT / key[:2] / key

    def has(self, key: str) -> bool:
        """An entry is stored under ``key`` (not checked: ``get`` may still miss)."""
        return bool(self.secret) and self._path(key).is_file()

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, value) for an intact entry; (False, None) when missing or damaged."""
        if not self.secret:
            return False, None
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            return False, None
        # the payload is read in place (entries hold a channel file's shards: megabytes)
        end = raw.find(b"\n", 0, _TAG_MAX)
        payload = memoryview(raw)[end + 1:]
        if end < 0 or not hmac.compare_digest(self._tag(key, payload), raw[:end]):
            return False, None  # truncated, corrupt or foreign: computed again and rewritten
        try:
            return True, pickle.loads(payload)
        except Exception:
            return False, None

    def put(self, key: str, value: Any) -> None:
        """Write an entry atomically; a cache that cannot be written only costs speed."""
        if not self.secret:
            return
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path = self._path(key)
        tmp = path.with_name(f".{key}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "xb") as file:
                file.write(self._tag(key, payload) + b"\n" + payload)
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def unit(self, kind: str, parts: Iterable[bytes | str], compute: Callable[[], T]) -> T:
        """The cached result of one unit, or ``compute()`` stored under its key."""
        key = self.key(kind, parts)
        hit, value = self.get(key)
        self.stats.count(kind, hit)
        if hit:
            return value  # type: ignore[no-any-return]
        value = compute()
        self.put(key, value)
        return value


def cache_secret() -> bytes:
    """This user's cache HMAC key (see the module docstring); empty when it cannot be read or
    created, which turns the cache off rather than trusting unsigned entries."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "toolc" / "cache-secret"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(secrets.token_bytes(_SECRET_BYTES))
        except FileExistsError:
            pass  # another build created it first: read theirs
        except OSError:
            return b""
        try:
            data = path.read_bytes()
        except OSError:
            return b""
    except OSError:
        return b""
    return data if len(data) >= _SECRET_BYTES else b""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

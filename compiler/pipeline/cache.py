"""The incremental build cache: content-addressed results of the units a build can compute
independently, so that a rebuild after a small edit recomputes only the units it touched.

Units (each keyed on everything its result depends on, never on a path or a time):

* ``file``: one definitions file loaded (YAML with positions) and checked against the JSON
  Schema, with its diagnostics. Key: the file's relative path and sha256.
* ``channel``: one channel's compiled tables (its group maps, accounts and spaces, the
  ``channels`` entry of ``tables.json``) with the warnings compiling it gave. Key: the
  definitions outside every ``channels`` section (``unit_base``) and the bytes of the file
  that defines the channel.

Every key also holds a salt: toolc's version and the digest of its own code and templates
(``toolc.builds``), and the build options. A changed compiler never reads an old entry.

Entries are files ``<root>/v1/<key[:2]>/<key>``: a sha256 of the payload, a newline, the
payload (a pickle). A reader checks the digest and treats a missing, truncated or corrupt
entry as a miss (it computes the unit and rewrites the entry), so a damaged cache can slow a
build down but never change its output. Writers write a temporary file in the entry's
directory and rename it into place, so two builds that share a cache (into different outputs)
never see half an entry; two writers of one key write the same bytes. ``toolc build`` calls
the cache only while it holds the output's lock (``writer.output_lock``), the one lock of
every writer of ``build/``. The cache is as trusted as the definitions and the virtualenv
(entries are pickles): keep it in the project, never share it between users.
"""

from __future__ import annotations

import hashlib
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
_LAYOUT = "v1"


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

    def __init__(self, root: Path, salt: bytes) -> None:
        self.root = Path(root)
        self.salt = salt
        self.stats = CacheStats()

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

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, value) for an intact entry; (False, None) when missing or damaged."""
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            return False, None
        digest, sep, payload = raw.partition(b"\n")
        if not sep or hashlib.sha256(payload).hexdigest().encode() != digest:
            return False, None  # truncated or corrupt: computed again and rewritten
        try:
            return True, pickle.loads(payload)
        except Exception:
            return False, None

    def put(self, key: str, value: Any) -> None:
        """Write an entry atomically; a cache that cannot be written only costs speed."""
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path = self._path(key)
        tmp = path.with_name(f".{key}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "xb") as file:
                file.write(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
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


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

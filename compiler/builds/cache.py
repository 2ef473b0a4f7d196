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
  ``toolc.builds.stream`` and ``toolc.builds.compile``.

Two entries per definitions directory are bookkeeping and decide no byte: ``scan``
(``stream.ScanMemo``: which files are channel files, by sha256) and ``last-base``
(``incremental.LastBuild``: the last build's base, which a worker started ahead reads).

Every key also holds a salt: toolc's version and the digest of its own code and templates
(``toolc.builds.incremental.cache_salt``), and the build options. A changed compiler never
reads an old entry.

Entries are files ``<root>/v2/<key[:2]>/<key>``: an HMAC-SHA256 of the key and payload, a
newline, the payload (a pickle). The HMAC key is a secret of the user running toolc, kept
outside every project (``cache_secret``: ``$XDG_CACHE_HOME/toolc/cache-secret``, else
``~/.cache/toolc/cache-secret``, created once with mode 0600). A reader checks the tag and
treats a missing, truncated, corrupt or foreign entry as a miss (it computes the unit and
rewrites the entry), so a damaged cache can slow a build down but never change its output,
and an entry nobody wrote with this user's secret (one committed to a repository, say, or
planted by a pull request) is never unpickled. Writers write a temporary file in the entry's
directory and rename it into place, so two builds that share a cache (into different
outputs) never see half an entry; two writers of one key write the same bytes. ``toolc
build`` writes the cache only while it holds the output's lock (``writer.output_lock``), the
one lock of every writer of ``build/`` (a worker it started ahead and did not need may finish
reading an entry after the build).

Whoever can write the secret can sign entries, so the secret is used only when it is this
user's own: the runtime code cache's checks (``toolc.runtime.bootstrap``), one rule for both
caches. The secret's folder and the secret must belong to this user, the secret must be a
regular file (not a link) of 32 bytes that no other account can read or write; the cache's
own directory must be this user's and not a link; an entry is read only from a regular file
of this user's (a link or a FIFO is a miss). Anything else turns the cache off for the
build (``BuildCache.off`` says why; ``toolc build`` prints it as one warning): the build is
the same, only slower. And an entry that does verify still unpickles only the classes and
functions that make the build's own values (``_ALLOWED``): loading one cannot call anything
else, whoever wrote it.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import pickle
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

# The runtime code cache's checks of what is this user's own (the runtime cannot import
# toolc, toolc can import the runtime): one rule for both caches' secrets and entries.
from ..runtime.bootstrap import _NOFOLLOW, _NONBLOCK, _code_secret, _own

T = TypeVar("T")

# The cache's default directory name, beside the definitions directory (``toolc build``).
DEFAULT_DIR = ".toolc-cache"
_LAYOUT = "v2"  # v1: a plain sha256 (any writer could forge entries)
_SECRET_BYTES = 32
_TAG_MAX = 128  # an entry's tag line is 64 hex digits: a longer first line is no entry

# What an entry may name (``find_class``): the classes of the values the build caches and
# the functions their ``__reduce__`` restores them with, nothing else. Unpickling calls what
# an entry names with arguments the entry chooses; each of these only makes a value. A
# value of another class would be a miss at every build: add it here (a test loads every
# entry a build of the shipped definitions and random channels writes, under both targets).
_ALLOWED: Final = frozenset((module, name) for module, names in {
    "array": ("array", "_array_reconstructor"),
    "toolc.builds.compile": ("_Index",),
    "toolc.builds.incremental": ("LastBuild",),
    "toolc.builds.stream": ("Base", "ChannelResult", "Shape", "UnitResult"),
    "toolc.diagnostics": ("Diagnostics", "_diagnostic", "_pos"),
    "toolc.pipeline.analyze": ("Resolved",),
    "toolc.pipeline.bundles": ("Bundles",),
    "toolc.pipeline.frontend": ("LoadedFile",),
    "toolc.pipeline.model": (
        "_restore", "AccountDef", "AgentDef", "AssertionDef", "Availability", "BindingDef",
        "ChannelDef",
        "Definitions", "Entry", "EntryList", "GroupConfig", "GroupDef", "PluginEntry",
        "Policy", "ProfileDef", "ProviderDialect", "ProviderPolicy", "SenderRule", "SessionDef",
        "SpaceConfig", "ToolDef", "ToolsConfig"),
    "toolc.pipeline.tables": ("Tables",),
    "toolc.pipeline.yamlsrc": ("_unpickle_source",),
    "toolc.targets.config_specs": ("ConfigSpecs",),
    "toolc.targets.grammar": ("CollapsedSessionKeys", "LooseSenderKeys", "SegmentedSessionKeys",
                              "TypedSenderKeys"),
    "toolc.targets.model": ("Target",),
}.items() for name in names)


class _Unpickler(pickle.Unpickler):
    """``pickle`` limited to ``_ALLOWED`` (as fast: a class is looked up once per entry)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name}: not a value of the build cache")
        return super().find_class(module, name)


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
        self.secret, self.off = _user_secret() if secret is None else (secret, "")
        if self.secret and (problem := _refused_folder(self.root)):
            self.secret, self.off = b"", f"{self.root}: {problem}"
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
        raw = _read_entry(self._path(key)) if self.secret else None
        if raw is None:
            return False, None
        # the payload is read in place (entries hold a channel file's shards: megabytes)
        end = raw.find(b"\n", 0, _TAG_MAX)
        payload = memoryview(raw)[end + 1:]
        if end < 0 or not hmac.compare_digest(self._tag(key, payload), raw[:end]):
            return False, None  # truncated, corrupt or foreign: computed again and rewritten
        stream = io.BytesIO(raw)  # shares raw's bytes
        stream.seek(end + 1)
        try:
            return True, _Unpickler(stream).load()
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
    created or is not this user's own, which turns the cache off rather than trusting it."""
    return _user_secret()[0]


def _user_secret() -> tuple[bytes, str]:
    """(the secret, "") or (b"", why it is refused: a line for the user). A cache home that
    cannot be made or read (a read-only one) leaves the cache off without a word, as
    Python's own ``.pyc`` files are."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "toolc"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError:
        return b"", ""
    if not _own(st, 0):  # the runtime code cache's check of the folder the two share
        return b"", f"{folder}: another user's directory (is HOME or XDG_CACHE_HOME yours?)"
    path = folder / "cache-secret"
    secret = _code_secret(str(path))  # made once; used only when this user's private file
    if len(secret) != _SECRET_BYTES:
        why = _refused_secret(path)
        return b"", why and f"{path}: {why} (remove it: toolc makes a new one)"
    return secret, ""


def _refused_secret(path: Path) -> str:
    """Why ``_code_secret`` refused ``path`` ("" when it is not there: not made), for the
    message only: the check is the runtime's."""
    try:
        st = path.lstat()
    except OSError:
        return ""
    if stat.S_ISLNK(st.st_mode):
        return "a link, not a file of this user's"
    if not _own(st, 0):
        return "another user's file"
    if not _own(st, 0o077):
        return "other accounts can read or write it"
    if not stat.S_ISREG(st.st_mode) or st.st_size != _SECRET_BYTES:
        return f"not a file of {_SECRET_BYTES} bytes"
    return "unreadable"


def _refused_folder(root: Path) -> str:
    """Why the cache's directory is refused (a link, another user's, not a directory), or
    "" (this user's own directory, or none yet: ``put`` makes it)."""
    try:
        st = root.lstat()
    except OSError:
        return ""  # none yet, or one that cannot be read (every entry is then a miss)
    if stat.S_ISLNK(st.st_mode):
        return "a link (the cache's directory must be this user's own, not a link)"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if not _own(st, 0):
        return "another user's directory (a cache is per user: give --cache-dir one of yours)"
    return ""


def _read_entry(path: Path) -> bytes | None:
    """The bytes of a regular file of this user's at ``path``, else None (a link is not
    followed, a FIFO does not block: ``bootstrap._read_own``'s rule, without its limit)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _own(st, 0):
            return None
        try:
            return file.read()
        except OSError:
            return None

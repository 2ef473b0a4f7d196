"""Where ``serve-mcp --http`` keeps its MCP sessions and per-identity counts.

``LocalStore``: dictionaries of one process (one worker, the default).

``SharedStore``: one SQLite database (the standard library's ``sqlite3``, WAL journal, in a
directory the supervisor makes for its workers, on tmpfs when there is one) shared by every
worker process serving one port. A session opened on one worker is found by any other, so the
kernel may hand a client's connections to any worker (no sticky routing is needed); the
per-identity caps count every worker's sessions and requests in flight in one transaction
(``BEGIN IMMEDIATE``: checked and counted atomically across processes); a session ended on one
worker (DELETE, revocation) is gone for all, and the worker holding its GET stream closes it
at its next sweep. A worker's counts of requests in flight are keyed by its pid, so the
supervisor drops them when the worker dies (its sessions stay: another worker serves them).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Protocol

DB_NAME: Final = "sessions.sqlite3"
CANCEL_TTL: Final = 60.0  # seconds a cancellation waits for the worker running its call
ANSWER_TTL: Final = 900.0  # seconds an answer waits for the worker that asked (> ELICIT_TIMEOUT)


@dataclass(frozen=True, slots=True)
class SessionRow:
    """An open MCP session: the sha256 of the token that opened it, its identity's name
    (for the logs) and what the transport keeps of it (client capabilities, version)."""

    owner: str
    name: str
    info: Mapping[str, Any] = field(default_factory=dict)
    last: float = 0.0  # time.time() of its last use (the idle timeout counts from it)


class SessionStore(Protocol):
    """Sessions and per-identity counts (see the module docstring)."""

    def add(self, sid: str, owner: str, name: str, info: Mapping[str, Any]) -> None: ...
    def get(self, sid: str) -> SessionRow | None: ...
    def remove(self, sid: str) -> SessionRow | None: ...
    def live(self, sids: Iterable[str]) -> set[str]: ...
    def reserve(self, owner: str, limit: int) -> bool: ...
    def unreserve(self, owner: str) -> None: ...
    def acquire(self, owner: str, limit: int) -> bool: ...
    def release(self, owner: str) -> None: ...
    def revoke(self, kept: set[str]) -> dict[str, SessionRow]: ...
    def touch(self, sids: Iterable[str], now: float) -> None: ...
    def expire(self, before: float) -> list[str]: ...
    def post_cancel(self, sid: str, rid: str) -> None: ...
    def take_cancels(self, sids: Iterable[str]) -> list[tuple[str, str]]: ...
    def post_answer(self, sid: str, ask: str, message: str) -> None: ...
    def take_answer(self, sid: str, ask: str) -> str | None: ...


class LocalStore:
    """The sessions of one process, in dictionaries."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionRow] = {}
        self._opening: dict[str, int] = {}
        self._inflight: dict[str, int] = {}

    def add(self, sid: str, owner: str, name: str, info: Mapping[str, Any]) -> None:
        self._sessions[sid] = SessionRow(owner, name, dict(info), time.time())

    def get(self, sid: str) -> SessionRow | None:
        return self._sessions.get(sid)

    def remove(self, sid: str) -> SessionRow | None:
        return self._sessions.pop(sid, None)

    def live(self, sids: Iterable[str]) -> set[str]:
        return {s for s in sids if s in self._sessions}

    def reserve(self, owner: str, limit: int) -> bool:
        held = sum(1 for s in self._sessions.values() if s.owner == owner)
        if held + self._opening.get(owner, 0) >= limit:
            return False
        self._opening[owner] = self._opening.get(owner, 0) + 1
        return True

    def unreserve(self, owner: str) -> None:
        _decrement(self._opening, owner)

    def acquire(self, owner: str, limit: int) -> bool:
        if self._inflight.get(owner, 0) >= limit:
            return False
        self._inflight[owner] = self._inflight.get(owner, 0) + 1
        return True

    def release(self, owner: str) -> None:
        _decrement(self._inflight, owner)

    def revoke(self, kept: set[str]) -> dict[str, SessionRow]:
        gone = {sid: s for sid, s in self._sessions.items() if s.owner not in kept}
        for sid in gone:
            del self._sessions[sid]
        return gone

    def touch(self, sids: Iterable[str], now: float) -> None:
        for sid in sids:
            row = self._sessions.get(sid)
            if row is not None:
                self._sessions[sid] = replace(row, last=now)

    def expire(self, before: float) -> list[str]:
        gone = [sid for sid, row in self._sessions.items() if row.last < before]
        for sid in gone:
            del self._sessions[sid]
        return gone

    def post_cancel(self, sid: str, rid: str) -> None:
        """One process runs every call: a cancellation finds its call at once."""

    def take_cancels(self, sids: Iterable[str]) -> list[tuple[str, str]]:
        return []

    def post_answer(self, sid: str, ask: str, message: str) -> None:
        """One process asks every question: an answer finds its question at once."""

    def take_answer(self, sid: str, ask: str) -> str | None:
        return None


def _decrement(counts: dict[str, int], owner: str) -> None:
    counts[owner] -= 1
    if not counts[owner]:
        del counts[owner]


class SharedStore:
    """The sessions of every worker of one server, in one SQLite database in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.pid = os.getpid()
        # autocommit (isolation_level None): every statement is its own transaction unless
        # it runs between an explicit BEGIN IMMEDIATE and COMMIT
        self.db = sqlite3.connect(directory / DB_NAME, isolation_level=None, timeout=30,
                                  check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout = 30000")
        self.db.execute("PRAGMA synchronous = OFF")  # a crash of the host ends every session
        # anyway: nothing here needs to survive one

    @staticmethod
    def create(directory: Path) -> None:
        """Make the database (the supervisor, once, before it starts its workers)."""
        db = sqlite3.connect(directory / DB_NAME, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript("""
            CREATE TABLE sessions (sid TEXT PRIMARY KEY, owner TEXT NOT NULL,
                                   name TEXT NOT NULL, info TEXT NOT NULL,
                                   last REAL NOT NULL);
            CREATE INDEX sessions_owner ON sessions (owner);
            CREATE TABLE cancels (sid TEXT NOT NULL, rid TEXT NOT NULL, at REAL NOT NULL);
            CREATE TABLE answers (sid TEXT NOT NULL, ask TEXT NOT NULL, message TEXT NOT NULL,
                                  at REAL NOT NULL);
            CREATE TABLE counts (kind TEXT NOT NULL, owner TEXT NOT NULL, pid INTEGER NOT NULL,
                                 n INTEGER NOT NULL, PRIMARY KEY (kind, owner, pid));
        """)
        db.close()

    @staticmethod
    def forget_worker(directory: Path, pid: int) -> None:
        """Drop the counts of a worker that died (its requests in flight ended with it)."""
        db = sqlite3.connect(directory / DB_NAME, isolation_level=None, timeout=30)
        db.execute("DELETE FROM counts WHERE pid = ?", (pid,))
        db.close()

    def add(self, sid: str, owner: str, name: str, info: Mapping[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?)",
                        (sid, owner, name, json.dumps(dict(info), sort_keys=True),
                         time.time()))

    def get(self, sid: str) -> SessionRow | None:
        row = self.db.execute("SELECT owner, name, info, last FROM sessions WHERE sid = ?",
                              (sid,)).fetchone()
        return None if row is None else SessionRow(row[0], row[1], json.loads(row[2]), row[3])

    def remove(self, sid: str) -> SessionRow | None:
        row = self.db.execute("DELETE FROM sessions WHERE sid = ? RETURNING owner, name, info, "
                              "last", (sid,)).fetchone()
        return None if row is None else SessionRow(row[0], row[1], json.loads(row[2]), row[3])

    def live(self, sids: Iterable[str]) -> set[str]:
        wanted = list(sids)
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(f"SELECT sid FROM sessions WHERE sid IN ({marks})", wanted)
        return {r[0] for r in rows}

    def _bump(self, kind: str, owner: str, by: int) -> None:
        self.db.execute("INSERT INTO counts VALUES (?, ?, ?, ?) ON CONFLICT (kind, owner, pid) "
                        "DO UPDATE SET n = n + excluded.n", (kind, owner, self.pid, by))

    def _held(self, kind: str, owner: str) -> int:
        row = self.db.execute("SELECT COALESCE(SUM(n), 0) FROM counts WHERE kind = ? AND "
                              "owner = ?", (kind, owner)).fetchone()
        return int(row[0])

    def reserve(self, owner: str, limit: int) -> bool:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            held = self.db.execute("SELECT COUNT(*) FROM sessions WHERE owner = ?",
                                   (owner,)).fetchone()[0]
            ok = held + self._held("opening", owner) < limit
            if ok:
                self._bump("opening", owner, 1)
        finally:
            self.db.execute("COMMIT")
        return bool(ok)

    def unreserve(self, owner: str) -> None:
        self._bump("opening", owner, -1)

    def acquire(self, owner: str, limit: int) -> bool:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            ok = self._held("inflight", owner) < limit
            if ok:
                self._bump("inflight", owner, 1)
        finally:
            self.db.execute("COMMIT")
        return ok

    def release(self, owner: str) -> None:
        self._bump("inflight", owner, -1)

    def revoke(self, kept: set[str]) -> dict[str, SessionRow]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            rows = self.db.execute("SELECT sid, owner, name, info, last FROM sessions")
            gone = {r[0]: SessionRow(r[1], r[2], json.loads(r[3]), r[4]) for r in rows
                    if r[1] not in kept}
            self.db.executemany("DELETE FROM sessions WHERE sid = ?", [(s,) for s in gone])
        finally:
            self.db.execute("COMMIT")
        return gone

    def touch(self, sids: Iterable[str], now: float) -> None:
        self.db.executemany("UPDATE sessions SET last = ? WHERE sid = ?",
                            [(now, sid) for sid in sids])

    def expire(self, before: float) -> list[str]:
        rows = self.db.execute("DELETE FROM sessions WHERE last < ? RETURNING sid", (before,))
        return [r[0] for r in rows.fetchall()]

    def post_cancel(self, sid: str, rid: str) -> None:
        """A notifications/cancelled for a call this worker does not run: the worker that
        runs it takes it at its next sweep (``take_cancels``)."""
        self.db.execute("INSERT INTO cancels VALUES (?, ?, ?)", (sid, rid, time.time()))

    def take_cancels(self, sids: Iterable[str]) -> list[tuple[str, str]]:
        wanted = list(sids)
        self.db.execute("DELETE FROM cancels WHERE at < ?", (time.time() - CANCEL_TTL,))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(f"DELETE FROM cancels WHERE sid IN ({marks}) RETURNING sid, rid",
                               wanted)
        return [(r[0], r[1]) for r in rows.fetchall()]

    def post_answer(self, sid: str, ask: str, message: str) -> None:
        """A client's answer to a question (elicitation) another worker asked: that worker
        takes it while it waits (``take_answer``)."""
        self.db.execute("INSERT INTO answers VALUES (?, ?, ?, ?)",
                        (sid, ask, message, time.time()))

    def take_answer(self, sid: str, ask: str) -> str | None:
        self.db.execute("DELETE FROM answers WHERE at < ?", (time.time() - ANSWER_TTL,))
        row = self.db.execute("DELETE FROM answers WHERE sid = ? AND ask = ? RETURNING message",
                              (sid, ask)).fetchone()
        return None if row is None else str(row[0])

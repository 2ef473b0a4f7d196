"""Diagnostics: positioned, collected, printed as ``path:line:col: severity[CODE]: message``."""

from __future__ import annotations

import difflib
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Severity = Literal["error", "warning", "note"]


class Pos(NamedTuple):
    """A 1-based position in a definitions file (``file`` is relative, with ``/``).

    A named tuple, not a frozen dataclass: the loader makes one for every YAML value and key
    (millions at scale), and a tuple is several times cheaper to make and to unpickle. Its
    fields, ``str``, ``repr``, equality, hash and immutability are those the dataclass had;
    it also unpacks like, and compares equal to, the plain tuple of its fields.
    """

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def __reduce__(self) -> tuple[Callable[[str, int, int], Pos], tuple[str, int, int]]:
        # pickled by value through a plain function: the named tuple's own route calls its
        # generated __new__ for each of the millions the incremental cache holds
        return _pos, (self.file, self.line, self.col)


_tuple_new = tuple.__new__


def _pos(file: str, line: int, col: int) -> Pos:
    return _tuple_new(Pos, (file, line, col))


BUILTIN = Pos(file="<builtin>", line=0, col=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    pos: Pos
    code: str
    severity: Severity
    message: str
    hint: str | None = None

    def render(self) -> str:
        text = f"{self.pos}: {self.severity}[{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.pos.file, self.pos.line, self.pos.col, self.code, self.message)

    def __reduce__(self) -> tuple[Callable[..., Diagnostic], tuple[Pos, str, Severity, str,
                                                                   str | None]]:
        # pickled by value, as Pos (the incremental cache holds a build's warnings)
        return _diagnostic, (self.pos, self.code, self.severity, self.message, self.hint)


def _diagnostic(pos: Pos, code: str, severity: Severity, message: str, hint: str | None
                ) -> Diagnostic:
    return Diagnostic(pos=pos, code=code, severity=severity, message=message, hint=hint)


_SORT_KEY = operator.attrgetter("pos.file", "pos.line", "pos.col", "code", "message")  # sort_key


@dataclass(slots=True)
class Diagnostics:
    """Collects diagnostics across all stages so one run reports everything it can."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, pos: Pos, code: str, message: str, hint: str | None = None) -> None:
        self.items.append(Diagnostic(pos=pos, code=code, severity="error", message=message,
                                     hint=hint))

    def warning(self, pos: Pos, code: str, message: str, hint: str | None = None) -> None:
        self.items.append(Diagnostic(pos=pos, code=code, severity="warning", message=message,
                                     hint=hint))

    def note(self, pos: Pos, code: str, message: str, hint: str | None = None) -> None:
        """Something worth knowing that is never a failure, not even under ``--strict``."""
        self.items.append(Diagnostic(pos=pos, code=code, severity="note", message=message,
                                     hint=hint))

    def extend(self, others: Iterable[Diagnostic]) -> None:
        self.items.extend(others)

    def has_errors(self, *, strict: bool = False) -> bool:
        return any(d.severity == "error" or (strict and d.severity == "warning")
                   for d in self.items)

    def sorted(self, *, strict: bool = False) -> list[Diagnostic]:
        """Deduplicated, position-ordered; under ``strict`` warnings become errors."""
        out: list[Diagnostic] = []
        # equal diagnostics have equal sort keys: each is looked for among those (a build's
        # tens of thousands of warnings are never hashed)
        same: list[Diagnostic] = []
        last = None
        for item in sorted(self.items, key=_SORT_KEY):
            d = item
            if strict and d.severity == "warning":
                d = Diagnostic(pos=d.pos, code=d.code, severity="error", message=d.message,
                               hint=d.hint)
            key = _SORT_KEY(d)
            if key != last:
                last, same = key, []
            if d not in same:
                same.append(d)
                out.append(d)
        return out


class DefinitionsError(Exception):
    """Raised by the API when definitions have errors; carries every diagnostic."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        errors = sum(d.severity == "error" for d in diagnostics)
        super().__init__(f"{errors} error(s) in definitions\n"
                         + "\n".join(d.render() for d in diagnostics))


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, if any is close enough."""
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f'did you mean "{matches[0]}"?' if matches else None

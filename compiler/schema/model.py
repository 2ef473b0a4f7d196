"""Typed values passed between the schema-cleaning stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Pointer = tuple[str | int, ...]
Severity = Literal["warning", "error", "info"]



@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaNote:
    """One finding of the cleaner at `pointer` (a path inside the emitted parameters schema,
    property names before any Gemini rename). `lossy` means a constraint no longer reaches the
    provider as schema; it was appended to the node's description instead."""

    code: str
    severity: Severity
    pointer: Pointer
    message: str
    lossy: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanedSchema:
    """A parameters schema ready for one dialect plus what the runtime needs to decode calls.

    `property_renames` maps an object's path in `schema` to {wire name: original name}
    (Gemini dialects); `nullable_optionals` maps an object's path to the properties that were
    optional in the source and made nullable for OpenAI strict mode (a null there means
    "omitted"). `decode_call_args` applies both.
    """

    dialect: str
    schema: dict[str, Any]
    notes: tuple[SchemaNote, ...]
    strict: bool
    property_renames: Mapping[Pointer, Mapping[str, str]] = field(default_factory=dict)
    nullable_optionals: Mapping[Pointer, tuple[str, ...]] = field(default_factory=dict)

    @property
    def errors(self) -> tuple[SchemaNote, ...]:
        """Notes the caller must turn into build errors."""
        return tuple(n for n in self.notes if n.severity == "error")

    @property
    def lossy(self) -> bool:
        return any(n.lossy for n in self.notes)


class NoteList:
    """Collects notes in the order they are found (the walk order is deterministic)."""

    def __init__(self) -> None:
        self.items: list[SchemaNote] = []

    def add(
        self,
        code: str,
        at: Pointer,
        message: str,
        *,
        severity: Severity = "info",
        lossy: bool = False,
    ) -> None:
        self.items.append(
            SchemaNote(code=code, severity=severity, pointer=at, message=message, lossy=lossy)
        )

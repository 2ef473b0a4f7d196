"""Which schema dialect a provider speaks, and why: the one rule.

The runtime answers ``dialect_for`` with it over its build's ``bundles.json``; the compiler
imports it from ``toolc.runtime`` to write that table (``pipeline.bundles``), to find the
providers of each dialect (the tool-count lint) and to say why a provider gets its dialect
(``toolc schema --provider``). Standard library only, like every runtime module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

DIALECTS: Final[tuple[str, ...]] = (
    "openai",
    "openai-strict",
    "anthropic",
    "gemini",
    "gemini-json",
    "mcp",
)
DEFAULT_DIALECT: Final = "openai"
BUILTIN_PROVIDER_DIALECTS: Final[Mapping[str, str]] = {
    "openai": "openai",
    "openai-codex": "openai",
    "anthropic": "anthropic",
}
# OpenClaw: a provider whose name mentions google or gemini speaks Gemini, unless it also
# names anthropic (google-antigravity running Claude models).
_GEMINI_WORDS: Final = ("google", "gemini")


@dataclass(frozen=True, slots=True, kw_only=True)
class DialectRegistry:
    """The providers table of a build (``bundles.json``'s ``providers``): the definitions'
    ``providers:`` entries (a provider, or ``provider/model``, -> dialect), the built-in
    defaults and the declared default."""

    entries: Mapping[str, str]
    default: str = DEFAULT_DIALECT
    builtin: Mapping[str, str] = field(default_factory=lambda: dict(BUILTIN_PROVIDER_DIALECTS))

    @classmethod
    def from_json(cls, providers: Mapping[str, Any]) -> DialectRegistry:
        """The registry a build wrote (``to_json``)."""
        return cls(
            entries=providers["entries"],
            default=str(providers["default"]),
            builtin=providers["builtin"],
        )

    def to_json(self) -> dict[str, Any]:
        """The registry as ``bundles.json`` holds it."""
        return {
            "default": self.default,
            "entries": dict(self.entries),
            "builtin": dict(self.builtin),
        }

    def dialect_for(self, provider: str | None, model: str | None = None) -> tuple[str, str]:
        """The dialect ``provider`` (and ``model``) speaks, and why, in the definitions'
        words: the ``provider/model`` entry, the provider's entry, the built-in default for
        the provider, Gemini's naming rule, then the declared default (names are trimmed and
        lowercased; a model id holding ``/`` is already ``provider/model``)."""
        p = (provider or "").strip().lower()
        m = (model or "").strip().lower()
        if p and m:
            full = m if "/" in m else f"{p}/{m}"
            if full in self.entries:
                return self.entries[full], f'providers.entries."{full}"'
        if p in self.entries:
            return self.entries[p], f'providers.entries."{p}"'
        if p in self.builtin:
            return self.builtin[p], f"built-in default for provider {p}"
        if any(word in p for word in _GEMINI_WORDS) and "anthropic" not in p:
            return "gemini-json", "built-in: a provider naming google or gemini speaks gemini-json"
        return self.default, "providers.default"

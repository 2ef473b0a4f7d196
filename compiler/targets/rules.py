"""The switches a build carries for request time (``tables.json``'s ``target``), as one typed
value: written by :meth:`Target.request_rules`, read back by :meth:`RequestRules.from_tables`
for every reader of a build (the access analysis, diff, ACCESS.md, shards, serve). No reader
decodes the table by string keys itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .grammar import (
    COLLAPSED_SESSION_KEYS,
    SEGMENTED_SESSION_KEYS,
    SessionKeyGrammar,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRules:
    """What the static runtime needs to follow a target at request time. Field names are the
    JSON keys; a key a build lacks takes the field's default (the older release's rule)."""

    openclaw: str
    release: str
    owner_unknown_keeps: bool = False
    agent_selection: bool = False
    group_id_needs_session: bool = False
    global_sender_layer: bool = False
    channel_sender_keys: bool = False
    slash_model_is_prefixed: bool = False
    generic_group_resolver: bool = False
    plugin_group_resolvers: tuple[str, ...] = ()
    subagent_key_rules: bool = False
    request_channel_aliases: Mapping[str, str] = field(default_factory=dict)
    plugin_admission: bool = False
    local_model_lean: bool = False
    subagent_depth_counts_leading: bool = False
    gateway_channels: tuple[str, ...] = ()

    @property
    def sessions(self) -> SessionKeyGrammar:
        """The session-key grammar these rules read subagent keys with."""
        return SEGMENTED_SESSION_KEYS if self.subagent_key_rules else COLLAPSED_SESSION_KEYS

    def to_json(self) -> dict[str, Any]:
        """The ``target`` object of ``tables.json`` (lists and objects as JSON has them)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = (list(value) if isinstance(value, tuple) else
                           dict(value) if isinstance(value, Mapping) else value)
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], default: RequestRules) -> RequestRules:
        """The rules a build's ``target`` object says; keys it lacks keep ``default``'s
        release and the fields' own defaults."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {"openclaw": default.openclaw, "release": default.release}
        for name, value in raw.items():
            if name in known:
                values[name] = (tuple(value) if isinstance(value, list) else
                                dict(value) if isinstance(value, Mapping) else value)
        return cls(**values)

"""Routing in an OpenClaw config, for ``toolc import-openclaw``: the route ``bindings`` (which
agent an inbound message gets) and the session settings that shape its session key
(``session.dmScope``, ``groupScope``, ``identityLinks``), kept in OpenClaw's own shape (the
definitions' ``bindings:`` and ``session:``), read as the release's loader reads them.

- A route binding (``type`` absent or ``route``) is kept with its ``agentId``, ``comment``,
  ``match`` (``channel``, ``accountId``, ``peer {kind, id}``, ``guildId``, ``teamId``,
  ``roles``) and, for 2026.9, its ``session`` override. Its position in ``bindings`` is kept
  too (left-out entries are None here and dropped last), so every message names the
  config's own index.
- An ACP binding (``type: "acp"``) binds one conversation to an ACP session: it routes no
  message to an agent's tools. It is left out and listed, one line each.
- A binding OpenClaw ignores (no channel; a peer without an id) is left out and listed.
- A binding to an agent the config does not declare: 2026.9.6's loader refuses the config
  when the roster is not empty (``OpenClawSchema``'s superRefine: ``Unknown agent id``; the
  literal ``main`` excepted; an empty roster is ``main`` alone, which the loader fills in),
  so the import refuses it as it refuses the loader's other reasons. 2026.3.2 accepts it and
  routes the binding's messages to the default agent (``pickFirstExistingAgentId``, ``main``
  included): refused unless ``--allow-partial``, which imports the binding routed to that
  agent (what 2026.3.2 does). With no roster at all, 2026.3.2 runs the named agent as one
  of its own with the global policy, which definitions cannot say (TC170): refused unless
  ``--allow-partial``, which leaves it out.
- A shape the release's schema refuses (zod ``.strict()``: an unknown key, a wrong type, a
  value outside an enum, 2026.9's retired peer kind ``dm``) refuses the config under 2026.9;
  imported for 2026.3 (whose loader refusals the import does not model) that binding is
  left out as access-relevant. 2026.3.2 reads ``dm`` as ``direct``: written as ``direct``,
  noted. A 2026.9 key imported for 2026.3 (a binding's ``session``) is left out as
  access-relevant.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from ..rules.names import normalize_agent_id

Path = tuple[str | int, ...]

DM_SCOPES = ("main", "per-peer", "per-channel-peer", "per-account-channel-peer")
GROUP_SCOPES = ("main", "per-group")
PEER_KINDS = ("direct", "group", "channel")
MATCH_KEYS = ("channel", "accountId", "peer", "guildId", "teamId", "roles")
# the keys of a binding (2026.9.6's RouteBindingSchema, AcpBindingSchema; 2026.3.2's
# BindingsSchema has neither `type` nor `session`: imported for 2026.3, `type: route` means
# what its bindings are, and a `session` override is left out)
ROUTE_KEYS = ("type", "agentId", "comment", "match", "session")
ACP_KEYS = ("type", "agentId", "comment", "match", "acp")
RELEASE = {"2026.3": "OpenClaw 2026.3", "2026.9": "OpenClaw 2026.9"}


@dataclass(slots=True)
class Partial:
    """A binding the import cannot carry over as OpenClaw means it: an error unless
    ``--allow-partial``, which does ``instead``."""

    path: Path
    reason: str
    instead: str  # what --allow-partial does ("leaves it out", "imports it routed to ...")
    left_out: bool  # --allow-partial leaves it out (else: kept, changed as said)


@dataclass(slots=True)
class Routing:
    """The kept bindings (None where one is left out: indexes stay the config's), and what
    the report says about the rest."""

    bindings: list[dict[str, Any] | None] = field(default_factory=list)
    left_out: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[tuple[Path, str]] = field(default_factory=list)
    partial: list[Partial] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # the loader refuses

    def malformed(self, key: str, problems: list[tuple[Path, str]]) -> None:
        """A binding the release's schema refuses: 2026.9 refuses the config (as the
        import refuses the loader's other reasons); imported for 2026.3, whose loader
        refusals the import does not model, the binding is left out as access-relevant."""
        if key == "2026.9":
            self.refused += problems
            return
        self.partial += [Partial(path, f"OpenClaw 2026.3 refuses the config: {why}",
                                 "leaves the binding out", left_out=True)
                         for path, why in problems]


@dataclass(frozen=True, slots=True)
class _Roster:
    """The agents the release reads (2026.9: ``agents.entries``, else ``agents.list``, which
    its loader moves there, else ``main``; 2026.3: ``agents.list``), normalized, and its
    default agent."""

    ids: tuple[str, ...]
    default: str

    @classmethod
    def of(cls, config: dict[str, Any], key: str) -> _Roster:
        agents = _object(config.get("agents"))
        entries = agents.get("entries")
        raw: list[tuple[str, Any]]
        if key == "2026.9" and isinstance(entries, dict):
            raw = [(str(k), v) for k, v in entries.items()]
        else:
            raw = [(str(_object(a).get("id", "")), a) for a in _list(agents.get("list"))]
        ids = tuple(normalize_agent_id(name) for name, _ in raw if name.strip())
        if key == "2026.9" and not ids:
            ids = ("main",)  # 2026.9.6's loader fills in the `main` entry of an empty roster
        marked = [normalize_agent_id(name) for name, a in raw
                  if name.strip() and _object(a).get("default") is True]
        # resolveDefaultAgentId: the first default: true agent, else the first, else main
        return cls(ids=ids, default=(marked or [*ids, "main"])[0])

    def refuses(self, raw: str) -> bool:
        """2026.9.6's loader refuses a binding to ``raw`` (``OpenClawSchema``: a roster is
        declared, and ``raw`` is neither in it, normalized, nor the literal ``main``)."""
        return bool(self.ids) and raw != "main" and normalize_agent_id(raw) not in self.ids

    def unknown(self, raw: str) -> str:
        close = difflib.get_close_matches(normalize_agent_id(raw), self.ids, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f"unknown agent id {raw!r} (not in agents.entries){hint}"


def read_routing(config: dict[str, Any], key: str) -> Routing:
    """The config's ``bindings`` as the release ``key`` reads them (see the module's text)."""
    out = Routing()
    raw = config.get("bindings")
    if raw is None:
        return out
    if not isinstance(raw, list):
        out.malformed(key, [(("bindings",), "a list of bindings is expected")])
        return out
    roster = _Roster.of(config, key)
    for i, binding in enumerate(raw):
        out.bindings.append(_binding(binding, ("bindings", i), key, roster, out))
    return out


def session_refusals(config: dict[str, Any], key: str) -> list[tuple[Path, str]]:
    """``session.dmScope``, ``groupScope`` (2026.9) and ``identityLinks`` as the release's
    ``SessionSchema`` checks them."""
    session = config.get("session")
    if not isinstance(session, dict):
        return []
    out: list[tuple[Path, str]] = []
    scopes = [("dmScope", DM_SCOPES)] + ([("groupScope", GROUP_SCOPES)] if key == "2026.9"
                                          else [])
    for name, allowed in scopes:
        if name in session:
            out += _enum(session[name], allowed, ("session", name))
    links = session.get("identityLinks")
    if links is not None and not (isinstance(links, dict) and all(
            isinstance(ids, list) and all(isinstance(i, str) for i in ids)
            for ids in links.values())):
        out.append((("session", "identityLinks"), "expected an object of lists of ids"))
    return out


# -- one binding ---------------------------------------------------------------------------
def _binding(binding: Any, at: Path, key: str, roster: _Roster,
             out: Routing) -> dict[str, Any] | None:
    if not isinstance(binding, dict):
        out.malformed(key, [(at, "a binding is an object")])
        return None
    kind = binding.get("type", "route")
    if kind == "acp":
        _acp(binding, at, key, roster, out)
        return None
    if kind != "route":
        out.malformed(key, [((*at, "type"), f'type {kind!r} is neither "route" nor "acp"')])
        return None
    problems = _shape(binding, at, ROUTE_KEYS, key)
    if problems:
        out.malformed(key, problems)
        return None
    match = binding["match"]
    if not match["channel"].strip():
        out.left_out.append((at, "no channel: OpenClaw ignores the binding"))
        return None
    peer = match.get("peer")
    if peer is not None and not peer["id"].strip():
        out.left_out.append((at, "a peer without an id: OpenClaw ignores the binding"))
        return None
    agent = _agent(binding["agentId"], at, key, roster, out)
    if agent is None:
        return None
    kept: dict[str, Any] = {k: binding[k] for k in ("type", "comment") if k in binding}
    kept = {"agentId": agent, **kept,
            "match": {k: (dict(match[k]) if k == "peer" else match[k])
                      for k in MATCH_KEYS if k in match}}
    _peer(kept["match"], at, key, out)
    if "session" in binding:
        if key == "2026.9":
            kept["session"] = dict(binding["session"])
        else:
            out.partial.append(Partial(
                (*at, "session"), "a binding's session override is OpenClaw 2026.9's "
                "(--openclaw 2026.9 imports it)", "keeps the binding without it",
                left_out=True))
    return kept


def _acp(binding: dict[str, Any], at: Path, key: str, roster: _Roster,
         out: Routing) -> None:
    """An ACP binding: checked as the release's loader checks it, then left out."""
    if key == "2026.9":
        problems = _shape(binding, at, ACP_KEYS, key)
        match = _object(binding.get("match"))
        peer = _object(match.get("peer"))
        if not problems and not str(peer.get("id", "")).strip():
            problems.append(((*at, "match", "peer"), "ACP bindings require match.peer.id to "
                             "target a concrete conversation"))
        if roster.refuses(binding["agentId"]):
            problems.append(((*at, "agentId"), roster.unknown(binding["agentId"])))
        if problems:
            out.refused += problems
            return
    match = _object(binding.get("match"))
    peer = _object(match.get("peer"))
    where = " ".join(p for p in (match.get("channel"), peer.get("kind"), peer.get("id"),
                                 "to an ACP session of agent", binding.get("agentId"))
                     if isinstance(p, str) and p)
    why = (f"an ACP binding: {where}; the ACP harness answers that conversation with its own "
           "tools, not a routed agent's, so it is no route")
    if key == "2026.3":
        why += " (and OpenClaw 2026.3 has no ACP bindings)"
    out.left_out.append((at, why))


def _shape(binding: dict[str, Any], at: Path, keys: tuple[str, ...], key: str
           ) -> list[tuple[Path, str]]:
    """What the release's schema refuses in ``binding`` (empty: none)."""
    problems = _unknown(binding, keys, at)
    if not isinstance(binding.get("agentId"), str):
        problems.append(((*at, "agentId"), "agentId is required and is a string"))
    if "comment" in binding and not isinstance(binding["comment"], str):
        problems.append(((*at, "comment"), "expected a string"))
    match = binding.get("match")
    if not isinstance(match, dict):
        problems.append(((*at, "match"), "match is required and is an object"))
        return problems
    problems += _match(match, (*at, "match"), key)
    session = binding.get("session")
    if session is not None:
        if not isinstance(session, dict):
            problems.append(((*at, "session"), "expected an object"))
        else:
            problems += _unknown(session, ("dmScope", "groupScope"), (*at, "session"))
            problems += _enum(session.get("dmScope"), DM_SCOPES, (*at, "session", "dmScope"))
            problems += _enum(session.get("groupScope"), GROUP_SCOPES,
                              (*at, "session", "groupScope"))
    return problems


def _match(match: dict[str, Any], at: Path, key: str) -> list[tuple[Path, str]]:
    problems = _unknown(match, MATCH_KEYS, at)
    if not isinstance(match.get("channel"), str):
        problems.append(((*at, "channel"), "channel is required and is a string"))
    for name in ("accountId", "guildId", "teamId"):
        if name in match and not isinstance(match[name], str):
            problems.append(((*at, name), "expected a string"))
    roles = match.get("roles")
    if roles is not None and not (isinstance(roles, list)
                                  and all(isinstance(r, str) for r in roles)):
        problems.append(((*at, "roles"), "expected a list of strings"))
    peer = match.get("peer")
    if peer is None:
        return problems
    if not isinstance(peer, dict):
        return [*problems, ((*at, "peer"), "expected an object {kind, id}")]
    problems += _unknown(peer, ("kind", "id"), (*at, "peer"))
    if not isinstance(peer.get("id"), str):
        problems.append(((*at, "peer", "id"), "id is required and is a string"))
    kind = peer.get("kind")
    if kind == "dm" and key == "2026.9":
        problems.append(((*at, "peer", "kind"), 'the retired peer kind "dm" (use "direct"; '
                         "`openclaw doctor --fix` rewrites it)"))
    elif kind not in (*PEER_KINDS, "dm"):  # (2026.3 reads dm as direct: see _peer)
        problems.append(((*at, "peer", "kind"), f"kind {kind!r} is not one of "
                         + ", ".join(PEER_KINDS)))
    return problems


def _agent(raw: str, at: Path, key: str, roster: _Roster, out: Routing) -> str | None:
    """The agent id to write (as written), or None: refused or left out."""
    agent = normalize_agent_id(raw)
    if not roster.ids:
        if agent == "main":
            return raw
        out.partial.append(Partial(
            (*at, "agentId"), f"routes to agent {raw!r}, but the config declares no agents: "
            f"OpenClaw runs {raw!r} as an agent of its own with the global tool policy, which "
            "toolc definitions cannot say (a binding routes to a declared agent, TC170); "
            "declare the agents in agents.list",
            "leaves the binding out", left_out=True))
        return None
    if key == "2026.9":
        if not roster.refuses(raw):
            return raw
        out.refused.append(((*at, "agentId"), roster.unknown(raw)))
        return None
    if agent in roster.ids:
        return raw
    close = difflib.get_close_matches(agent, roster.ids, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    out.partial.append(Partial(
        (*at, "agentId"), f"routes to agent {raw!r}, which agents.list does not declare"
        f"{hint}: OpenClaw 2026.3 routes the messages it matches to the default agent "
        f"{roster.default!r} instead (pickFirstExistingAgentId)",
        f"imports the binding routed to {roster.default!r}, as OpenClaw 2026.3 routes it",
        left_out=False))
    return roster.default


def _peer(match: dict[str, Any], at: Path, key: str, out: Routing) -> None:
    """The kept peer (a copy) as the release reads its kind and id."""
    peer = match.get("peer")
    if peer is None:
        return
    if peer["kind"] == "dm" and key == "2026.3":
        peer["kind"] = "direct"
        out.notes.append(((*at, "match", "peer", "kind"), 'peer kind "dm" imported as '
                          '"direct" (OpenClaw 2026.3 reads it so; 2026.9 refuses it)'))
    if key == "2026.3" and peer["id"].strip() == "*":
        out.notes.append(((*at, "match", "peer", "id"), 'peer id "*": OpenClaw 2026.3 has no '
                          'peer wildcard, so it matches only a chat whose id is "*" (2026.9 '
                          f"matches every {peer['kind']} chat)"))


def _unknown(node: dict[str, Any], keys: tuple[str, ...], at: Path) -> list[tuple[Path, str]]:
    return [((*at, k), f"unknown key {k!r} (one of {', '.join(keys)})")
            for k in node if k not in keys]


def _enum(value: Any, allowed: tuple[str, ...], at: Path) -> list[tuple[Path, str]]:
    if value is None or value in allowed:
        return []
    return [(at, f"{value!r} is not one of {', '.join(allowed)}")]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

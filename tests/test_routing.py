"""OpenClaw's routing of an inbound message (``resolveAgentRoute``), one fact per test, each in
the generated runtime (``toolc_runtime.route`` / ``resolve_message``) and the reference
router (``rules/routing.py`` through ``ReferenceInterpreter.route`` / ``resolve_message``),
which must agree.

The facts are the issue's list "OpenClaw 2026.9.6's routing, verified in its dist"; each test
names the function of openclaw@2026.9.6 ``dist/`` it follows: ``resolve-route-6ukGCxYl.mjs``
(``resolveAgentRoute``, ``buildEvaluatedBindingsByChannel``, ``buildEvaluatedBindingsIndex``,
``matchesBindingScope``, ``pickFirstExistingAgentId``), ``binding-scope-DY44yLIJ.mjs``
(``routeBindingScopeMatches``), ``session-key-CBvmC8zz.mjs`` (``buildAgentPeerSessionKey``,
``normalizeSessionPeerId``, ``resolveLinkedDirectPeerId``), ``account-id-B1bfbA5J.mjs``
(``normalizeAccountId``), ``agent-scope-config-IQKOEtZ4.mjs`` (``resolveDefaultAgentId``,
``tryResolveLegacyCompatibilityAgentId``), ``legacy.roster-zIYbDm7V.mjs``
(``materializeLegacyDefaultAgentRoles``). The last block holds 2026.3.2's differences
(``dist/resolve-route-DCfod4Po.js``), one test each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toolc.runtime._errors import AgentSelectionRequiredError

from tests.helpers import Engines, engines_for

TOOLS = ["read", "exec", "message"]


def _defs(*, openclaw: str = "2026.9", bindings: list[dict[str, Any]] | None = None,
          agents: list[dict[str, Any]] | None = None, session: dict[str, Any] | None = None,
          channels: dict[str, Any] | None = None, ownership: str | None = None
          ) -> dict[str, Any]:
    data: dict[str, Any] = {
        "catalog": [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
                    for n in TOOLS],
        "channels": channels if channels is not None else {"telegram": {}},
    }
    if openclaw != "2026.3":
        data["openclaw"] = openclaw
    roster: dict[str, Any] = {}
    if agents is not None:
        roster["list"] = agents
    if ownership is not None:
        roster["ownership"] = ownership
    if roster:
        data["agents"] = roster
    if bindings is not None:
        data["bindings"] = bindings
    if session is not None:
        data["session"] = session
    return data


# several agents, `main` the legacy default
ROSTER = [{"id": "main", "default": True}, {"id": "support"}, {"id": "ops"}]


class Both:
    """The runtime and the reference over the same definitions; ``route`` answers once both
    gave the same route (agent, keys, matched_by, channel, account, deciding binding)."""

    def __init__(self, tmp: Path, data: dict[str, Any]) -> None:
        self.engines: Engines = engines_for(tmp, {"defs.yaml": data})
        self.rt = self.engines.runtime
        self.ref = self.engines.reference

    def route(self, channel: str, **kw: Any) -> Any:
        compiled, oracle = self.rt.route(channel, **kw), self.ref.route(channel, **kw)
        fields = ("agent_id", "session_key", "main_session_key", "matched_by", "channel",
                  "account_id", "binding")
        assert [getattr(compiled, f) for f in fields] == [getattr(oracle, f) for f in fields]
        return compiled

    def tools(self, channel: str, **kw: Any) -> tuple[Any, tuple[str, ...]]:
        (r1, t1), (r2, t2) = (self.rt.resolve_message(channel, **kw),
                              self.ref.resolve_message(channel, **kw))
        assert (r1.session_key, tuple(t1.names)) == (r2.session_key, t2.names)
        return r1, tuple(t1.names)

    def refused(self, channel: str, **kw: Any) -> tuple[str, str]:
        with pytest.raises(self.rt.AgentSelectionRequiredError) as compiled:
            self.rt.route(channel, **kw)
        with pytest.raises(AgentSelectionRequiredError) as oracle:
            self.ref.route(channel, **kw)
        assert compiled.value.code == oracle.value.code == "AGENT_SELECTION_REQUIRED"
        return str(compiled.value), str(oracle.value)


def both(tmp_path: Path, **kw: Any) -> Both:
    return Both(tmp_path, _defs(**kw))


# -- accounts, and the extra conditions of a tier ---------------------------------------------
def test_binding_without_account_matches_the_default_account_only(tmp_path: Path) -> None:
    """``buildEvaluatedBindingsByChannel``: an absent accountId is ``normalizeAccountId("")``,
    ``default``; ``buildEvaluatedBindingsIndex`` files it under ``byAccount``
    (``binding.account``)."""
    e = both(tmp_path, agents=ROSTER,
             bindings=[{"agentId": "support", "match": {"channel": "telegram"}}])
    assert e.route("telegram").matched_by == "binding.account"
    assert e.route("telegram", account_id="default").agent_id == "support"
    other = e.route("telegram", account_id="work")
    assert (other.agent_id, other.matched_by) != ("support", "binding.account")


def test_account_star_matches_every_account_as_binding_channel(tmp_path: Path) -> None:
    """``buildEvaluatedBindingsByChannel``: ``accountId: "*"`` goes to ``byAnyAccount``,
    merged into every account's list; ``buildEvaluatedBindingsIndex`` files it under
    ``byChannel`` (``binding.channel``)."""
    e = both(tmp_path, agents=ROSTER,
             bindings=[{"agentId": "support", "match": {"channel": "telegram", "accountId": "*"}}])
    for account in (None, "default", "work", "Home"):
        found = e.route("telegram", account_id=account)
        assert (found.agent_id, found.matched_by) == ("support", "binding.channel")


def test_roles_without_a_guild_are_an_extra_condition(tmp_path: Path) -> None:
    """``buildEvaluatedBindingsIndex``: roles without a guild do not make a guild+roles
    binding (its tier is the account's); ``routeBindingScopeMatches`` then asks for one of
    its roles."""
    e = both(tmp_path, agents=ROSTER, bindings=[
        {"agentId": "support", "match": {"channel": "telegram", "roles": ["r1"]}}])
    with_role = e.route("telegram", member_role_ids=["r1"])
    assert (with_role.agent_id, with_role.matched_by) == ("support", "binding.account")
    assert e.route("telegram", member_role_ids=["r2"]).agent_id != "support"
    assert e.route("telegram").agent_id != "support"


def test_a_guild_on_a_peer_binding_is_an_extra_condition(tmp_path: Path) -> None:
    """``buildEvaluatedBindingsIndex``: a binding with a peer is a peer binding whatever
    else it says; ``matchesBindingScope`` -> ``routeBindingScopeMatches`` checks its guild."""
    e = both(tmp_path, agents=ROSTER, channels={"discord": {}}, bindings=[
        {"agentId": "support",
         "match": {"channel": "discord", "peer": {"kind": "channel", "id": "c1"},
                   "guildId": "111"}}])
    hit = e.route("discord", peer=("channel", "c1"), guild_id="111")
    assert (hit.agent_id, hit.matched_by) == ("support", "binding.peer")
    assert e.route("discord", peer=("channel", "c1"), guild_id="222").agent_id != "support"
    assert e.route("discord", peer=("channel", "c1")).agent_id != "support"


# -- the loader --------------------------------------------------------------------------------
def test_loader_adds_a_channel_wide_binding_for_each_configured_channel(tmp_path: Path) -> None:
    """``materializeLegacyDefaultAgentRoles`` (``listUnboundAmbientChannelIds``): each
    configured channel without a channel-wide binding gets ``{agentId: <legacy default>,
    match: {channel, accountId: "*"}}``, so an unmatched message there reports
    ``binding.channel``, not ``default``; a channel that is not configured gets none."""
    e = both(tmp_path, agents=ROSTER, channels={"telegram": {}, "whatsapp": {}}, bindings=[
        {"agentId": "support", "match": {"channel": "whatsapp", "accountId": "*"}}])
    added = e.route("telegram", peer=("group", "-100"))
    assert (added.agent_id, added.matched_by) == ("main", "binding.channel")
    assert e.rt.route("telegram").binding == 1  # after the written binding
    described = e.ref.route("telegram").describe()
    assert described.endswith("binding OpenClaw's loader adds for the default agent)")
    assert e.route("whatsapp").agent_id == "support"  # it has its own
    assert e.route("signal").matched_by == "default"


def test_a_legacy_default_agent_becomes_the_default_agent(tmp_path: Path) -> None:
    """``resolveAgentRoute`` -> ``tryResolveLegacyCompatibilityAgentId`` (the legacy data
    owner: the one ``default: true`` entry) when no binding matches."""
    roster = [{"id": "support"}, {"id": "ops", "default": True}]
    e = both(tmp_path, agents=roster, channels={})
    found = e.route("telegram", peer=("direct", "42"))
    assert (found.agent_id, found.matched_by, found.binding) == ("ops", "default", None)


def test_the_main_key_is_forced_to_main(tmp_path: Path) -> None:
    """``buildAgentMainSessionKey`` with ``session.mainKey``, which the loader forces to
    ``main``: every route's main key, and a DM's key under ``dmScope: main``."""
    e = both(tmp_path, agents=ROSTER, bindings=[
        {"agentId": "ops", "match": {"channel": "telegram", "accountId": "*"}}])
    found = e.route("telegram", peer=("direct", "42"))
    assert found.main_session_key == found.session_key == "agent:ops:main"


def test_agent_ids_in_bindings_compare_case_insensitively(tmp_path: Path) -> None:
    """``pickFirstExistingAgentId``: the binding's agentId by ``normalizeAgentId``, looked up
    among the roster's normalized ids."""
    e = both(tmp_path, agents=ROSTER, bindings=[
        {"agentId": "Support", "match": {"channel": "telegram", "accountId": "*"}}])
    assert e.route("telegram").agent_id == "support"


# -- session keys ----------------------------------------------------------------------------------
def test_a_group_key_names_agent_channel_kind_and_id_without_the_account(tmp_path: Path) -> None:
    """``buildAgentPeerSessionKey``: ``agent:<agent>:<channel>:<kind>:<id>`` for a group or
    channel, whatever the account (only a per-account-channel-peer DM names it)."""
    e = both(tmp_path, agents=ROSTER)
    assert e.route("telegram", account_id="work", peer=("group", "-100")).session_key == (
        "agent:main:telegram:group:-100")
    assert e.route("Slack", account_id="work", peer=("channel", "C1")).session_key == (
        "agent:main:slack:channel:c1")


def test_peer_ids_are_lowercased_except_signal_groups_and_matrix_rooms(tmp_path: Path) -> None:
    """``normalizeSessionPeerId`` (``casePreservingPeerSpan``): Signal group ids and Matrix
    channel/group ids keep their case; every other peer id is lowercased."""
    e = both(tmp_path, agents=ROSTER)
    assert e.route("signal", peer=("group", "AbC=")).session_key == "agent:main:signal:group:AbC="
    assert e.route("matrix", peer=("channel", "!Room:X")).session_key == (
        "agent:main:matrix:channel:!Room:X")
    assert e.route("telegram", peer=("group", "AbC")).session_key == (
        "agent:main:telegram:group:abc")
    assert e.route("signal", peer=("direct", "AbC"), dm_scope="per-peer").session_key == (
        "agent:main:direct:abc")


def test_group_scope_main_gives_the_agents_main_key(tmp_path: Path) -> None:
    """``buildAgentPeerSessionKey``: ``groupScope: "main"`` keys a group to the agent's main
    session (the config's, a binding's own ``session``, or the caller's)."""
    e = both(tmp_path, agents=ROSTER, session={"groupScope": "main"}, bindings=[
        {"agentId": "ops", "match": {"channel": "telegram", "peer": {"kind": "group", "id": "g2"}},
         "session": {"groupScope": "per-group"}}])
    assert e.route("telegram", peer=("group", "g1")).session_key == "agent:main:main"
    assert e.route("telegram", peer=("group", "g2")).session_key == "agent:ops:telegram:group:g2"
    assert e.route("telegram", peer=("group", "g1"), group_scope="per-group").session_key == (
        "agent:main:telegram:group:g1")


def test_identity_links_apply_to_dms_unless_dm_scope_is_main(tmp_path: Path) -> None:
    """``resolveLinkedDirectPeerId``, called by ``buildAgentPeerSessionKey`` only for a DM and
    only when ``dmScope`` is not ``main``: an ``id`` or ``channel:id`` among a name's ids,
    compared case-insensitively, gives the name."""
    links = {"Alice": ["42", "Telegram:Bob7"]}
    e = both(tmp_path, agents=ROSTER, session={"dmScope": "per-peer", "identityLinks": links})
    assert e.route("whatsapp", peer=("direct", "42")).session_key == "agent:main:direct:alice"
    assert e.route("telegram", peer=("direct", "BOB7")).session_key == "agent:main:direct:alice"
    assert e.route("whatsapp", peer=("direct", "bob7")).session_key == "agent:main:direct:bob7"
    assert e.route("telegram", peer=("group", "42")).session_key == (
        "agent:main:telegram:group:42")
    assert e.route("whatsapp", peer=("direct", "42"), dm_scope="main").session_key == (
        "agent:main:main")


def test_a_group_binding_matches_a_channel_peer_and_the_reverse(tmp_path: Path) -> None:
    """``peerKindMatches`` (and ``peerLookupKey``, which files both kinds under
    ``group:<id>``)."""
    e = both(tmp_path, agents=ROSTER, channels={"slack": {}}, bindings=[
        {"agentId": "support",
         "match": {"channel": "slack", "peer": {"kind": "group", "id": "C1"}}},
        {"agentId": "ops", "match": {"channel": "slack", "peer": {"kind": "channel", "id": "C2"}}}])
    assert e.route("slack", peer=("channel", "C1")).agent_id == "support"
    assert e.route("slack", peer=("group", "C2")).agent_id == "ops"
    assert e.route("slack", peer=("direct", "C1")).matched_by != "binding.peer"


def test_account_ids_are_normalized(tmp_path: Path) -> None:
    """``normalizeAccountId``: trimmed and lowercased, runs of characters outside
    ``[a-z0-9_-]`` turned into ``-`` (edge dashes dropped), on the binding's and the
    message's account alike."""
    e = both(tmp_path, agents=ROSTER, bindings=[
        {"agentId": "support", "match": {"channel": "telegram", "accountId": "Work Shop"}}])
    found = e.route("telegram", account_id=" WORK  shop! ")
    assert (found.agent_id, found.account_id) == ("support", "work-shop")
    assert e.route("telegram", account_id="Work Shop", peer=("direct", "7"),
                   dm_scope="per-account-channel-peer").session_key == (
        "agent:support:telegram:work-shop:direct:7")


# -- what the loaded config holds ---------------------------------------------------------------
def test_a_binding_with_a_blank_channel_or_peer_id_never_matches(tmp_path: Path) -> None:
    """``buildEvaluatedBindingsByChannel``: a binding whose channel is blank once trimmed,
    or whose peer id is (``normalizePeerConstraint``: invalid), is skipped."""
    e = both(tmp_path, agents=ROSTER, bindings=[
        {"agentId": "support", "match": {"channel": " ", "accountId": "*"}},
        {"agentId": "ops", "match": {"channel": "telegram", "peer": {"kind": "group", "id": " "}}}])
    assert e.route("").matched_by == "default"
    assert e.route("telegram", peer=("group", "  ")).agent_id == "main"


def test_a_default_agent_id_without_a_roster_routes_as_given(tmp_path: Path) -> None:
    """``pickFirstExistingAgentId``: without a roster (``byNormalizedId`` empty) any agent id
    is taken, normalized; with one, an id it lacks is refused. 2026.9.6's loader leaves a
    config without a roster one only with ``agents.ownership: explicit`` (otherwise it writes
    ``agents.entries: {main: {}}``: ``tests/test_routing_conformance.py``)."""
    e = both(tmp_path, channels={}, ownership="explicit")
    assert e.route("telegram", default_agent_id="Helper").agent_id == "helper"
    e = both(tmp_path / "implicit", channels={})
    e.refused("telegram", default_agent_id="helper")
    e = both(tmp_path / "roster", agents=ROSTER, channels={})
    e.refused("telegram", default_agent_id="helper")


def test_a_channel_wide_binding_written_with_an_alias_binds_the_channel(tmp_path: Path) -> None:
    """``isChannelWideBinding`` compares ``normalizeRouteBindingChannelId`` (``imsg`` is
    ``imessage``), so the loader adds no binding for iMessage; ``resolveAgentRoute`` files
    the written one under ``imsg`` all the same."""
    e = both(tmp_path, agents=ROSTER, channels={"imessage": {}}, bindings=[
        {"agentId": "ops", "match": {"channel": "imsg", "accountId": "*"}}])
    assert e.route("imessage").matched_by == "default"
    assert e.route("imsg").agent_id == "ops"


# -- refusals and the routed run -------------------------------------------------------------------
def test_no_match_and_no_default_agent_is_agent_selection_required(tmp_path: Path) -> None:
    """``resolveAgentRoute`` -> ``resolveDefaultAgentId`` -> ``resolveSoleAgentId``:
    ``ownership: "explicit"`` without a system agent, several agents and no binding that
    matches: AgentSelectionRequiredError, naming the channel and account."""
    e = both(tmp_path, agents=[{"id": "support"}, {"id": "ops"}], ownership="explicit",
             bindings=[{"agentId": "ops", "match": {"channel": "whatsapp", "accountId": "*"}}])
    for text in e.refused("telegram", account_id="Work"):
        assert "telegram" in text
        assert "account work" in text
    assert e.route("whatsapp").agent_id == "ops"
    assert e.route("telegram", default_agent_id="Support").agent_id == "support"


def test_the_routed_runs_group_is_the_one_its_session_key_names(tmp_path: Path) -> None:
    """The routed run resolves with the route's session key; 2026.9.6 trusts a group only
    where that key names it (``resolveTrustedGroupId``), so the group id an inbound run also
    passes is ignored under ``groupScope: main``: no group policy."""
    channels = {"telegram": {"groups": {"-100": {"tools": {"deny": ["exec"]}}}}}
    e = both(tmp_path, agents=ROSTER, channels=channels)
    routed, names = e.tools("telegram", peer=("group", "-100"), sender_id="7")
    assert routed.session_key == "agent:main:telegram:group:-100"
    assert "exec" not in names
    routed, names = e.tools("telegram", peer=("group", "-100"), group_scope="main")
    assert routed.session_key == "agent:main:main"
    assert "exec" in names
    with pytest.raises(e.rt.UntrustedGroupError):  # the same request as a context is refused
        e.rt.resolve(message_provider="telegram", group_id="-100", sender_id="7")


# -- 2026.3.2 (dist/resolve-route-DCfod4Po.js) ---------------------------------------------------
def test_2026_3_has_no_peer_wildcard_tier(tmp_path: Path) -> None:
    """2026.3.2 ``normalizePeerConstraint`` has no wildcard state: ``id: "*"`` is an id."""
    binding = {"agentId": "support",
               "match": {"channel": "telegram", "peer": {"kind": "group", "id": "*"}}}
    old = both(tmp_path / "old", openclaw="2026.3", agents=ROSTER, bindings=[binding])
    assert old.route("telegram", peer=("group", "-100")).matched_by == "default"
    assert old.route("telegram", peer=("group", "*")).matched_by == "binding.peer"
    new = both(tmp_path / "new", agents=ROSTER, bindings=[binding])
    assert new.route("telegram", peer=("group", "-100")).matched_by == "binding.peer.wildcard"


def test_2026_3_takes_no_scope_or_default_agent_input(tmp_path: Path) -> None:
    """2026.3.2 ``resolveAgentRoute`` reads only ``cfg.session.dmScope``: no caller scopes,
    no default agent id (toolc refuses them: ValueError), no binding ``session``."""
    e = both(tmp_path, openclaw="2026.3", agents=ROSTER)
    for keyword, value in (("dm_scope", "per-peer"), ("group_scope", "main"),
                           ("default_agent_id", "ops")):
        with pytest.raises(ValueError, match=keyword):
            e.rt.route("telegram", **{keyword: value})
        with pytest.raises(ValueError, match=keyword):
            e.ref.route("telegram", **{keyword: value})


def test_2026_3_lowercases_the_whole_session_key(tmp_path: Path) -> None:
    """2026.3.2 ``choose``: ``buildAgentSessionKey(...).toLowerCase()``, Signal group ids
    and Matrix rooms included."""
    e = both(tmp_path, openclaw="2026.3", agents=ROSTER)
    assert e.route("signal", peer=("group", "AbC=")).session_key == "agent:main:signal:group:abc="


def test_2026_3_adds_no_channel_wide_bindings(tmp_path: Path) -> None:
    """2026.3.2's loader has no ``materializeLegacyDefaultAgentRoles``: an unmatched message
    on a configured channel is ``default``."""
    e = both(tmp_path, openclaw="2026.3", agents=ROSTER)
    found = e.route("telegram", peer=("group", "-100"))
    assert (found.agent_id, found.matched_by, found.binding) == ("main", "default", None)


def test_2026_3_default_agent_is_the_first_marked_else_the_first(tmp_path: Path) -> None:
    """2026.3.2 ``resolveDefaultAgentId``: the first ``default: true`` entry, else the first
    entry; never AgentSelectionRequiredError."""
    e = both(tmp_path, openclaw="2026.3", agents=[{"id": "support"}, {"id": "ops"}])
    assert e.route("telegram").agent_id == "support"


# -- the runtime's memo of messages ----------------------------------------------------------------
def test_a_malformed_flag_never_answers_from_the_message_memo(tmp_path: Path) -> None:
    """``resolve_message`` memoizes on the message's values; ``1`` equals ``True`` (and ``0``
    ``False``), so the flags key as ``resolve``'s memo keys them: a malformed flag is refused
    (TypeError) as on a first call, never answered with an owner's or an unsandboxed run's
    tools."""
    rt = both(tmp_path, agents=ROSTER).rt
    rt.resolve_message("telegram", sender_is_owner=True, sandboxed=False)
    with pytest.raises(TypeError, match="sender_is_owner"):
        rt.resolve_message("telegram", sender_is_owner=1, sandboxed=False)
    with pytest.raises(TypeError, match="sandboxed"):
        rt.resolve_message("telegram", sender_is_owner=True, sandboxed=0)
    with pytest.raises(TypeError, match="sender_is_owner"):
        rt.resolve_request(rt.Request(channel="telegram", sender_is_owner=1, sandboxed=False))


def test_a_request_with_roles_in_a_list_resolves(tmp_path: Path) -> None:
    """``resolve_request`` of a Request whose ``member_role_ids`` is a list (the type says
    tuple; ``route`` takes any sequence) routes and resolves instead of failing to hash."""
    e = both(tmp_path, agents=ROSTER, channels={"discord": {}}, bindings=[
        {"agentId": "ops", "match": {"channel": "discord", "guildId": "111", "roles": ["r1"]}}])
    routed, _ = e.rt.resolve_request(e.rt.Request(channel="discord", guild_id="111",
                                                  member_role_ids=["r1"]))
    assert (routed.agent_id, routed.matched_by) == ("ops", "binding.guild+roles")

"""Slack and Discord group resolution: the worked examples of the channel notes (each run
against OpenClaw 2026.3.2's own resolver), through both engines. Every block allows one tool
named after its label; ``ALL`` means no group layer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toolc.api import resolve_definitions
from toolc.review.diff import side_from_definitions
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import Engines, engines_for, write_definitions
from tests.test_access_md import _every_class_equals_the_reference

LABELS = ["c222", "c222_s8", "c_general", "c_hash_random", "g111", "g111_s7", "g_friends",
          "g_star", "star_c333", "id_c123", "hash_general", "bare_random", "slug_devops",
          "slug_mychan", "star", "work_c9", "other"]
ALL = tuple(LABELS)


def allow(label: str) -> dict[str, Any]:
    return {"tools": {"allow": [label]}}


DISCORD = {"guilds": {
    "111": {"slug": "My Guild", **allow("g111"),
            "toolsBySender": {"id:7": {"allow": ["g111_s7"]}},
            "channels": {"222": {**allow("c222"),
                                 "toolsBySender": {"id:8": {"allow": ["c222_s8"]}}},
                         "general": allow("c_general"), "#random": allow("c_hash_random"),
                         "*": allow("other"), "nocfg": {}}},
    "friends-club": allow("g_friends"),
    "*": {**allow("g_star"), "channels": {"333": allow("star_c333")}},
}}
SLACK = {
    "channels": {"C123": allow("id_c123"), "#general": allow("hash_general"),
                 "random": allow("bare_random"), "dev-ops": allow("slug_devops"),
                 "my.chan_1": allow("slug_mychan"), "quiet": {}, "*": allow("star")},
    "accounts": {"work": {"channels": {"C9": allow("work_c9")}}, "home": {}},
}


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Engines:
    catalog = [{"name": n, "description": n, "parameters": {"type": "object"}} for n in LABELS]
    data = {"catalog": catalog, "channels": {"discord": DISCORD, "slack": SLACK}}
    return engines_for(tmp_path_factory.mktemp("channels"), {"d.yaml": data})


@pytest.mark.parametrize(("ctx", "expected"), [
    ({"group_id": "222", "group_space": "111"}, "c222"),
    ({"group_id": "222", "group_space": "111", "sender_id": "8"}, "c222_s8"),
    ({"group_id": "222", "group_space": "111", "sender_id": "7"}, "c222"),  # guild rule loses
    ({"group_id": "999", "group_space": "111", "group_channel": "#General"}, "c_general"),
    ({"group_id": "999", "group_space": "111", "group_channel": "random"}, "c_hash_random"),
    ({"group_id": "999", "group_space": "111"}, "g111"),  # channels "*" is never read
    ({"group_id": "999", "group_space": "111", "sender_id": "7"}, "g111_s7"),
    ({"group_id": "nocfg", "group_space": "111"}, "g111"),
    ({"group_id": "999", "group_space": "my-guild"}, "g111"),  # the slug field
    ({"group_id": "999", "group_space": " MY GUILD "}, "g111"),
    ({"group_id": "999", "group_space": "Friends Club"}, "g_friends"),  # the slug of the key
    ({"group_id": "999"}, "g_star"),  # no space: only the "*" guild
    ({"group_id": "333"}, "star_c333"),
    ({"group_id": "222"}, "g_star"),
    ({"group_id": "*", "group_space": "111"}, "other"),  # the key "*" by id, not a wildcard
])
def test_discord(engines: Engines, ctx: dict[str, Any], expected: str) -> None:
    assert engines.both(message_provider="discord", **ctx) == (expected,)


def test_discord_session_key_and_thread(engines: Engines) -> None:
    assert engines.both(session_key="agent:main:discord:channel:222:thread:999",
                        group_space="111") == ("c222",)


def test_discord_needs_a_group_id(engines: Engines) -> None:
    assert engines.both(message_provider="discord", group_space="111",
                        group_channel="#general") == ALL


@pytest.mark.parametrize(("ctx", "expected"), [
    ({"group_id": "C123"}, "id_c123"),
    ({"group_id": " C123 "}, "id_c123"),
    ({"group_id": "Cx", "group_channel": "#general"}, "hash_general"),
    ({"group_id": "Cx", "group_channel": "general"}, "hash_general"),  # "#" + name first
    ({"group_id": "Cx", "group_channel": "#random"}, "bare_random"),
    ({"group_id": "Cx", "group_channel": "#Dev Ops"}, "slug_devops"),
    ({"group_id": "Cx", "group_channel": "My.Chan_1"}, "slug_mychan"),
    ({"group_id": "Cx"}, "star"),
    ({"group_id": "C9", "account_id": "WORK"}, "work_c9"),  # the account's map replaces
    ({"group_id": "C123", "account_id": "work"}, None),  # not in the account's map
    ({"group_id": "C123", "account_id": "home"}, "id_c123"),  # no own channels: inherited
])
def test_slack(engines: Engines, ctx: dict[str, Any], expected: str | None) -> None:
    got = engines.both(message_provider="slack", **ctx)
    assert got == ((expected,) if expected else ALL)


def test_slack_session_ids_are_lowercase(engines: Engines) -> None:
    """Session keys carry lowercased ids: `c123` misses the key `C123`."""
    assert engines.both(session_key="agent:main:slack:channel:c123") == ("star",)


def test_slack_matched_entry_does_not_fall_through(engines: Engines) -> None:
    assert engines.both(message_provider="slack", group_id="Cx",
                        group_channel="quiet") == ALL


def test_slack_names_are_case_sensitive(tmp_path: Path) -> None:
    catalog = [{"name": n, "description": n, "parameters": {"type": "object"}}
               for n in ("read", "exec")]
    e = engines_for(tmp_path, {"d.yaml": {"catalog": catalog, "channels": {"slack": {
        "channels": {"General": {"tools": {"allow": ["read"]}}}}}}})
    assert e.both(message_provider="slack", group_id="C1", group_channel="general") == (
        "read", "exec")
    assert e.both(message_provider="slack", group_id="C1", group_channel="General") == (
        "read",)


@pytest.mark.parametrize("key", ["group_space", "group_channel"])
def test_new_keywords_are_checked(engines: Engines, key: str) -> None:
    for engine in (engines.compiled, engines.oracle):
        with pytest.raises(TypeError, match=key):
            engine(message_provider="discord", group_id="222", **{key: 111})
    # blank is absent
    assert engines.both(message_provider="discord", group_id="222",
                        **{key: "  "}) == engines.both(message_provider="discord",
                                                      group_id="222")


def test_irc_e164_rules_apply_when_the_irc_resolver_answers_nothing(tmp_path: Path) -> None:
    """2026.3.2 resolveGroupToolPolicy asks IRC's dock (case folded, no e164) and, when it
    answers nothing, OpenClaw's generic resolver (exact id, e164 too); conformance seed 5."""
    catalog = [{"name": n, "description": n, "parameters": {"type": "object"}}
               for n in ("read", "exec", "sessions_list")]
    e = engines_for(tmp_path, {"d.yaml": {"catalog": catalog, "channels": {"irc": {"groups": {
        "*": {"toolsBySender": {"e164:+1555": {"deny": ["sess*"]}}},
        "G1": {"toolsBySender": {"username:bob": {"allow": ["read"]}}},
        "g2": {"tools": {"allow": ["exec"]}}}}}}})
    irc = {"message_provider": "irc", "sender_e164": "+1555"}
    # no entry answers without e164: the generic resolver's e164 match on "*" decides
    assert e.both(group_id="general", **irc) == ("read", "exec")
    # the exact entry has no rule for the sender: "*"'s e164 rule, as the generic resolver
    assert e.both(group_id="G1", **irc) == ("read", "exec")
    # the dock answered (a rule without e164, or tools of a case-folded entry): no fallback
    assert e.both(group_id="G1", sender_username="bob", **irc) == ("read",)
    assert e.both(group_id="G2", **irc) == ("exec",)


def test_irc_e164_fallback_in_the_access_classes(tmp_path: Path) -> None:
    """The access analysis (ACCESS.md, diff, assertions) splits the IRC classes on the
    generic resolver's e164 pass too: every class gets what the reference gives it."""
    catalog = [{"name": n, "description": n, "parameters": {"type": "object"}}
               for n in ("read", "exec", "sessions_list")]
    defs = write_definitions(tmp_path / "d", {"d.yaml": {"catalog": catalog, "channels": {
        "irc": {"groups": {
            "*": {"toolsBySender": {"e164:+1555": {"deny": ["sess*"]}}},
            "G1": {"toolsBySender": {"username:bob": {"allow": ["read"]}}},
            "g2": {"tools": {"allow": ["exec"]}}}}}}})
    side = side_from_definitions(defs)
    space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
    _every_class_equals_the_reference(space, ReferenceInterpreter(resolve_definitions(defs)))
    labels = " ".join(k.label for k in space.channels)
    assert "+1555" in labels, labels

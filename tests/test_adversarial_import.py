"""``toolc import-openclaw`` against an attacker and a careless user: symbolic links in the
output, secrets in every position (and in every line printed), ``$include`` cycles and
escapes, keys that would make the import wider than the gateway, files that are no OpenClaw
config, plugin ids and ``plugins.allow``. Keep it running: each test pins a defect class."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from toolc.api import resolve_definitions
from toolc.cli import main
from toolc.importers import openclaw, starter
from toolc.importers.openclaw import import_openclaw as _import_openclaw
from toolc.importers.openclaw_secrets import Secrets
from toolc.semantics.reference import ReferenceInterpreter

CONFIG = {"tools": {"profile": "coding", "deny": ["browser"]}}

import_openclaw = functools.partial(_import_openclaw, openclaw="2026.3")


def run(*args: str) -> Result:
    # these tests hold the 2026.3 import (tests/test_openclaw9_import.py: 2026.9's)
    if args[:1] in (("init",), ("import-openclaw",)) and "--openclaw" not in args:
        args = (*args, "--openclaw", "2026.3")
    return CliRunner().invoke(main, list(args))


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def policy_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((out / "openclaw/policy.yaml").read_text())
    return data


# -- 17: never write through a symbolic link -------------------------------------------------
@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "victim.txt"
    write(target, "precious\n")
    return target


def _import_force(tmp_path: Path, out: Path) -> Result:
    config = write(tmp_path / "openclaw.json", CONFIG)
    return run("import-openclaw", str(config), "-o", str(out), "--force")


def test_force_never_writes_through_a_file_link(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "defs"
    (out / "openclaw").mkdir(parents=True)
    (out / "openclaw/policy.yaml").symlink_to(victim)
    result = _import_force(tmp_path, out)
    assert result.exit_code == 1, result.output
    assert "symbolic link" in result.output and "Traceback" not in result.output
    assert victim.read_text() == "precious\n"
    assert (out / "openclaw/policy.yaml").is_symlink()
    assert not (out / "profiles.yaml").exists()  # refused before writing anything


def test_force_never_writes_through_a_folder_link(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "defs"
    out.mkdir()
    (out / "catalog").symlink_to(victim.parent, target_is_directory=True)
    result = _import_force(tmp_path, out)
    assert result.exit_code == 1 and "symbolic link" in result.output
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]


def test_force_never_follows_a_dangling_link(tmp_path: Path) -> None:
    out = tmp_path / "defs"
    out.mkdir()
    nowhere = tmp_path / "elsewhere" / "created.yaml"
    nowhere.parent.mkdir()
    (out / "profiles.yaml").symlink_to(nowhere)
    result = _import_force(tmp_path, out)
    assert result.exit_code == 1 and "symbolic link" in result.output
    assert not nowhere.exists()


def test_the_output_directory_itself_may_not_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "defs").symlink_to(real, target_is_directory=True)
    result = _import_force(tmp_path, tmp_path / "defs")
    assert result.exit_code == 1 and "symbolic link" in result.output
    assert list(real.iterdir()) == []


def test_force_replaces_a_hard_link_instead_of_writing_into_it(tmp_path: Path,
                                                              victim: Path) -> None:
    out = tmp_path / "defs"
    out.mkdir()
    os.link(victim, out / "profiles.yaml")
    result = _import_force(tmp_path, out)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious\n"  # a new file was renamed over the entry
    assert "profiles:" in (out / "profiles.yaml").read_text()
    assert not [p for p in out.rglob("*.tmp")]  # no temporary file left behind


def test_a_link_planted_after_the_checks_is_not_followed(tmp_path: Path, victim: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    # The race: the checks pass, then a folder becomes a link before the writes. Simulated
    # deterministically by planting the link from the check itself.
    out = tmp_path / "defs"
    out.mkdir()

    def plant(root: Path, rel: str) -> None:
        if not (root / "openclaw").is_symlink():
            (root / "openclaw").symlink_to(victim.parent, target_is_directory=True)

    monkeypatch.setattr(starter, "_check_target", plant)
    with pytest.raises(starter.ProjectWriteError, match="symbolic link"):
        starter.write_new_files({"openclaw/policy.yaml": "x\n"}, out, force=True,
                                refuse_non_empty=False)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]


def test_init_refuses_a_dangling_link_too(tmp_path: Path) -> None:
    defs = tmp_path / "definitions"
    defs.mkdir()
    nowhere = tmp_path / "created-by-init.yaml"
    (defs / "policy.yaml").symlink_to(nowhere)
    result = run("init", str(defs))
    assert result.exit_code == 1
    assert not nowhere.exists()


# -- 18: secrets ---------------------------------------------------------------------------------
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SLACK = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp"
ANTHROPIC = "sk-ant-" + "api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg"
OPENAI = "sk-proj-" + "Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
JWT = ("eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "."
       + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PASSWORD = "hunter2-Sup3rSecret"
BEARER = "Zm9vYmFyYmF6cXV4cXV1eA"
RANDOM = "Xk9Lm2Qp8Rt4Vw6Yz1Ab3Cd5Ef7Gh9Jk2Mn4Pq6"
ALL_SECRETS = [GHP, SLACK, ANTHROPIC, OPENAI, AWS, JWT, PASSWORD, BEARER, RANDOM,
               GHP[4:], SLACK[5:], ANTHROPIC[7:]]


def secret_config() -> dict[str, Any]:
    """A secret in every position the importer keeps, leaves out or reports."""
    return {
        "models": {"providers": {"proxy": {
            "baseUrl": f"https://admin:{PASSWORD}@llm.example.com/v1",
            "headers": {"X-Upstream": f"Bearer {BEARER}"}}}},
        "tools": {"profile": "coding", "alsoAllow": [OPENAI], "deny": [f"id:{AWS}"],
                  "byProvider": {f"https://u:{PASSWORD}@proxy.example.com": {
                      "deny": ["exec"]}}},
        "agents": {"list": [{"id": "main"}, {"id": ANTHROPIC, "tools": {"deny": ["exec"]}}]},
        "channels": {"telegram": {
            "botToken": SLACK,
            "groups": {SLACK: {"tools": {"deny": ["exec"]},
                               "toolsBySender": {f"id:{GHP}": {"alsoAllow": ["exec"]},
                                                 "id:42": {"deny": ["read"]}}},
                       "-1001": {"requireMention": True, RANDOM: True}},
            "accounts": {JWT: {"groups": {"-1002": {"tools": {"deny": ["read"]}}}}}}},
        "plugins": {"entries": {GHP: {"enabled": True}}},
    }


def assert_no_secret(text: str) -> None:
    for secret in ALL_SECRETS:
        assert secret not in text, secret


def test_secrets_in_kept_positions_are_refused_and_never_printed(tmp_path: Path) -> None:
    config = write(tmp_path / "openclaw.json", secret_config())
    proc = subprocess.run([sys.executable, "-c", "from toolc.cli import main; main()",
                           "import-openclaw", str(config), "-o", str(tmp_path / "out"),
                           "--openclaw", "2026.3"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert_no_secret(proc.stdout + proc.stderr)
    assert "Traceback" not in proc.stderr
    errors = proc.stderr
    assert 'channels.telegram.groups.xoxb-***.toolsBySender."id:ghp_***": holds a credential ' \
        "(GitHub token)" in errors
    assert "toolc definitions have no environment reference" in errors
    assert "--allow-partial" in errors
    for where in ["tools.alsoAllow[0]", "tools.deny[0]", "agents.list[1].id",
                  "plugins.entries.ghp_***", 'channels.telegram.accounts."eyJ***"']:
        assert where in errors, where
    assert not (tmp_path / "out").exists()


def _group(**extra: Any) -> dict[str, Any]:
    return {"channels": {"telegram": {"groups": {"-1": {"tools": {"deny": ["exec"]},
                                                        **extra}}}}}


@pytest.mark.parametrize("config", [
    _group(toolsBySender={f"id:{GHP}": {"alsoAllow": ["exec"]}}),  # sender key
    _group(toolsBySender={f"username:{SLACK}": {"deny": ["read"]}}),
    {"tools": {"byProvider": {f"https://bob:{PASSWORD}@llm.example.com": {"deny": ["exec"]}}}},
    {"tools": {"alsoAllow": [f"Bearer {BEARER}"]}},  # a bearer value in a kept string
    {"tools": {"deny": [f"x-{JWT}"]}},
    {"agents": {"list": [{"id": f"bot-{AWS}"}]}},
    _group(**{RANDOM: True}),  # a left-out key printed in the report
], ids=["sender-id", "sender-username", "url-password", "bearer", "jwt", "agent-id",
        "left-out-key"])
def test_one_embedded_secret_is_never_written_nor_printed(tmp_path: Path,
                                                          config: dict[str, Any]) -> None:
    file = write(tmp_path / "openclaw.json", config)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert_no_secret(result.output)
    assert result.exit_code == 1, result.output
    assert not (tmp_path / "out").exists()


def test_an_environment_template_in_a_kept_value_is_refused(tmp_path: Path) -> None:
    # OpenClaw substitutes ${VAR} when it loads the config: toolc cannot know the value
    file = write(tmp_path / "openclaw.json", {"tools": {"deny": ["${DENIED_TOOL}"]}})
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "tools.deny[0]: OpenClaw substitutes this ${VAR}" in result.output
    file = write(tmp_path / "openclaw.json", {"tools": {"deny": ["$${LITERAL}"]}})
    assert run("import-openclaw", str(file), "-o", str(tmp_path / "out")).exit_code == 0
    assert policy_of(tmp_path / "out")["tools"]["deny"] == ["${LITERAL}"]  # the escape


def test_with_allow_partial_secret_entries_are_left_out_and_reported_redacted(
        tmp_path: Path) -> None:
    config = write(tmp_path / "openclaw.json", secret_config())
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "out"),
                 "--allow-partial")
    assert result.exit_code == 0, result.output
    assert_no_secret(result.output)
    written = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert_no_secret(written)
    policy = policy_of(tmp_path / "out")
    assert policy["tools"]["deny"] == [] and "alsoAllow" in policy["tools"]
    assert [a["id"] for a in policy["agents"]["list"]] == ["main"]
    assert "WIDER than the gateway" in result.output


def test_report_paths_and_notes_are_redacted(tmp_path: Path) -> None:
    # secrets in left-out keys, a duplicate-key note and left-out values: never printed
    text = (f'{{"tools": {{"deny": ["exec"], "{GHP}": 1}}, "{SLACK}": 1, "{SLACK}": 2, '
            f'"gateway": {{"auth": {{"token": "{JWT}"}}}}}}')
    config = write(tmp_path / "openclaw.json5", text)
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "out"),
                 "--allow-partial")
    assert result.exit_code == 0, result.output
    assert_no_secret(result.output)
    assert "tools.ghp_*** (an unknown tools key)" in result.output
    assert "xoxb-***: duplicate key" in result.output


def test_secret_shapes_and_their_redaction() -> None:
    secrets = Secrets()
    cases = {GHP: "GitHub token", "github_pat_11ABCDEFG0123456789_abcdefghijkl": "GitHub token",
             SLACK: "Slack token", ANTHROPIC: "Anthropic key", OPENAI: "OpenAI-style key",
             AWS: "AWS access key", JWT: "JWT", RANDOM: "random-looking token",
             f"https://bob:{PASSWORD}@host/x": "password in a URL",
             f"Authorization: Bearer {BEARER}": "bearer credential",
             "https://api.example.com/x?token=abcdef123": "credential parameter",
             "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----":
                 "private key"}
    for text, kind in cases.items():
        assert secrets.kind(text) == kind, text
        assert "***" in secrets.redact(text)
    assert secrets.redact(f"id:{GHP}") == "id:ghp_***"
    assert secrets.redact(f"https://bob:{PASSWORD}@host/x") == "https://***@host/x"


def test_identifiers_are_not_secrets() -> None:
    secrets = Secrets()
    for text in ["id:123456789012345678", "-1001234567890", "-1001234567890:topic:7",
                 "uuid:6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f", "U4af4980629abcdef0123456789abcdef",
                 "ou_7d8a6e6df7621556ce0d21922b676706", "anthropic/claude-sonnet-4-5-20250929",
                 "openai/gpt-5.2-codex", "@alice:matrix.org", "C0123ABCDEF", "#general",
                 "username:@alice", "e164:+15555550123", "group:fs", "memory_search",
                 "https://llm.example.com/v1", "onepassword", "op://Automation/OpenAI/cred",
                 "${OPENAI_API_KEY}", "voice-call", "sessions_spawn"]:
        assert secrets.kind(text) is None, text


ONEPASSWORD_EXAMPLE = """\
{
  plugins: {
    entries: {
      onepassword: { enabled: true },
    },
  },
  secrets: {
    providers: {
      onepassword: {
        source: "exec",
        pluginIntegration: {
          pluginId: "onepassword",
          integrationId: "onepassword",
        },
      },
    },
  },
  models: {
    providers: {
      openai: {
        apiKey: {
          source: "exec",
          provider: "onepassword",
          id: "op://Automation/OpenAI/credential",
        },
      },
    },
  },
}
"""


def test_openclaws_own_1password_example_imports(tmp_path: Path) -> None:
    # docs/plugins/onepassword.md of OpenClaw 2026.9.6, verbatim: a SecretRef naming the
    # provider "onepassword" made the plain plugin entry look like a secret
    config = write(tmp_path / "openclaw.json5", ONEPASSWORD_EXAMPLE)
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["plugins"] == {
        "entries": {"onepassword": {"enabled": True}}}


# -- 19: $include --------------------------------------------------------------------------------
def test_includes_are_followed_as_openclaw_does(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ "$include": ["./parts/base.json5", "./parts/more.json5"],'
                                   ' tools: { deny: ["browser"] } }')
    write(root / "parts/base.json5", '{ tools: { profile: "coding", deny: ["exec"] },'
                                     ' $include: "./agents.json5" }')
    write(root / "parts/agents.json5", '{ agents: { list: [{ id: "main" }] } }')
    write(root / "parts/more.json5", '{ agents: { list: [{ id: "viewer", tools: '
                                     '{ allow: ["read"] } }] }, tools: { profile: "minimal" } }')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    policy = policy_of(tmp_path / "out")
    # arrays concatenate, objects merge, scalars: the later wins, sibling keys last
    assert policy["tools"] == {"profile": "minimal", "deny": ["exec", "browser"]}
    assert [a["id"] for a in policy["agents"]["list"]] == ["main", "viewer"]
    assert "included ($include): 3" in result.output
    assert "parts/agents.json5" in result.output
    ref = ReferenceInterpreter(resolve_definitions(tmp_path / "out"))
    assert "exec" not in ref.resolve(agent_id="main", sender_is_owner=True).names


def test_an_include_nested_in_a_section(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ channels: { telegram: { $include: "tg.json5" } } }')
    write(root / "tg.json5", '{ groups: { "-1": { tools: { deny: ["exec"] } } } }')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["channels"]["telegram"]["groups"]["-1"] == {
        "tools": {"deny": ["exec"]}}


@pytest.mark.parametrize(("files", "message"), [
    ({"openclaw.json5": '{ $include: "a.json5" }', "a.json5": '{ $include: "b.json5" }',
      "b.json5": '{ $include: "a.json5" }'}, "circular $include: openclaw.json5 -> a.json5 -> "
                                              "b.json5 -> a.json5"),
    ({"openclaw.json5": '{ $include: "./openclaw.json5" }'}, "circular $include"),
    ({"openclaw.json5": '{ tools: { $include: "missing.json5" } }'},
     "tools.$include: cannot read include 'missing.json5'"),
    ({"openclaw.json5": '{ $include: "../outside.json5" }'}, "escapes the config's directory"),
    ({"openclaw.json5": '{ $include: 42 }'}, "must be a string or an array of strings"),
    ({"openclaw.json5": '{ $include: ["a.json5", 1] }', "a.json5": "{}"},
     "array item must be a string"),
    ({"openclaw.json5": '{ $include: "a.json5", tools: {} }', "a.json5": "[1]"},
     "sibling keys require the included content to be an object"),
    ({"openclaw.json5": '{ $include: "bad.json5" }', "bad.json5": "{ tools: "},
     "bad.json5:1:"),
])
def test_bad_includes_are_refused(tmp_path: Path, files: dict[str, str], message: str) -> None:
    root = tmp_path / "cfg"
    for name, text in files.items():
        write(root / name, text)
    write(tmp_path / "outside.json5", '{ tools: { allow: ["*"] } }')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_include_depth_and_symlink_escapes_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ $include: "d0.json5" }')
    for i in range(11):
        write(root / f"d{i}.json5", f'{{ $include: "d{i + 1}.json5" }}')
    write(root / "d11.json5", "{}")
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1 and "deeper than 10 levels" in result.output
    write(tmp_path / "secret.json5", "{}")
    (root / "link.json5").symlink_to(tmp_path / "secret.json5")
    write(root / "openclaw.json5", '{ $include: "link.json5" }')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1 and "through a symbolic link" in result.output


def test_a_link_inside_the_config_directory_is_followed_as_openclaw_does(
        tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ $include: "current.json5" }')
    write(root / "v2.json5", '{ tools: { deny: ["exec"] } }')
    (root / "current.json5").symlink_to(root / "v2.json5")
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["tools"] == {"deny": ["exec"]}


def test_hard_linked_includes_are_refused_as_openclaw_does(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ $include: "linked.json5" }')
    write(tmp_path / "elsewhere.json5", '{ tools: { allow: ["*"] } }')
    os.link(tmp_path / "elsewhere.json5", root / "linked.json5")
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1 and "single link" in result.output


def test_a_diamond_of_includes_is_not_a_cycle(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", '{ $include: ["a.json5", "b.json5"] }')
    write(root / "a.json5", '{ $include: "common.json5" }')
    write(root / "b.json5", '{ $include: "common.json5" }')
    write(root / "common.json5", '{ tools: { deny: ["exec"] } }')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["tools"] == {"deny": ["exec", "exec"]}


def test_a_secret_in_an_include_path_is_not_printed(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write(root / "openclaw.json5", f'{{ $include: "{GHP}.json5" }}')
    result = run("import-openclaw", str(root / "openclaw.json5"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert GHP not in result.output and "ghp_***" in result.output


# -- issue 31, item 8: credential parameters in URL-shaped keys ------------------------------------
# A value no other rule catches (short, no known prefix): only the parameter's name says it
# is a credential.
CRED = "Zq7Plm0Wd3"
CREDENTIAL_URLS = {
    "oauth-client-secret": f"https://llm.example.com/v1?client_id=acme&client_secret={CRED}",
    "api-token": f"https://llm.example.com/v1?api_token={CRED}",
    "refresh-token": f"https://llm.example.com/v1?refresh_token={CRED}",
    "id-token": f"https://llm.example.com/v1?id_token={CRED}",
    "azure-sas": f"https://acct.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sig={CRED}",
    "aws-sigv4": ("https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                  f"&X-Amz-Signature={CRED}"),
    "aws-session": f"https://b.s3.amazonaws.com/o?X-Amz-Security-Token={CRED}",
    "aws-credential": f"https://b.s3.amazonaws.com/o?X-Amz-Credential={CRED}%2F20300101",
    "google-signed": f"https://storage.googleapis.com/b/o?X-Goog-Signature={CRED}",
    "google-key": f"https://generativelanguage.googleapis.com/v1?key={CRED}",
    "jwt-assertion": f"https://llm.example.com/v1?grant=jwt&assertion={CRED}",
    "camel-case": f"https://llm.example.com/v1?clientSecret={CRED}",
    "upper-case": f"https://llm.example.com/v1?API_KEY={CRED}",
    "one-word": f"https://llm.example.com/v1?accesstoken={CRED}",
    "percent-encoded-name": f"https://llm.example.com/v1?client%5Fsecret={CRED}",
    "fragment": f"https://llm.example.com/cb#access_token={CRED}&token_type=bearer",
    "userinfo": f"https://api_key={CRED}@llm.example.com/v1",
    "password": f"https://llm.example.com/v1;pwd={CRED}",
    "signature": f"https://llm.example.com/v1?expires=1&signature={CRED}",
}


@pytest.mark.parametrize("name", sorted(CREDENTIAL_URLS))
def test_a_credential_parameter_in_a_kept_key_is_refused_and_never_printed(
        tmp_path: Path, name: str) -> None:
    url = CREDENTIAL_URLS[name]
    file = write(tmp_path / "openclaw.json",
                 {"tools": {"byProvider": {url: {"deny": ["exec"]}}}})
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert CRED not in result.output
    assert result.exit_code == 1, result.output
    assert "holds a credential (credential parameter)" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    # --allow-partial leaves the entry out, and its report line is redacted too
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"), "--allow-partial")
    assert result.exit_code == 0, result.output
    assert CRED not in result.output
    written = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert CRED not in written


def test_a_credential_parameter_keeps_its_name_in_the_redacted_form() -> None:
    secrets = Secrets()
    assert secrets.redact(CREDENTIAL_URLS["oauth-client-secret"]) == \
        "https://llm.example.com/v1?client_id=acme&client_secret=***"
    assert secrets.redact(CREDENTIAL_URLS["fragment"]) == \
        "https://llm.example.com/cb#access_token=***&token_type=bearer"


# ordinary parameters whose names hold a credential word inside another word, or end in one
# that is no credential
ORDINARY_URLS = [
    "https://llm.example.com/v1?tokenizer=cl100k&keyboard=qwerty&monkey=george",
    "https://llm.example.com/v1?client_id=acme-prod&token_type=bearer&response_type=code",
    "https://llm.example.com/v1?keys=alpha&turkey=roast&author=alice&signal=strong",
    "https://llm.example.com/v1?pageToken=abcdef&api_version=2024-10-21",
    "https://llm.example.com/v1?code=python&secretary=bob&passage=intro",
]


@pytest.mark.parametrize("url", ORDINARY_URLS)
def test_ordinary_parameters_are_not_credentials(tmp_path: Path, url: str) -> None:
    assert Secrets().kind(url) is None
    file = write(tmp_path / "openclaw.json",
                 {"tools": {"byProvider": {url: {"deny": ["exec"]}}}})
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["tools"]["byProvider"] == {url: {"deny": ["exec"]}}


# -- 19: keys that would make the import wider ---------------------------------------------------
@pytest.mark.parametrize(("config", "path"), [
    # the sandbox mode is imported; what else a sandbox block says about tools is not
    ({"agents": {"list": [{"id": "main", "sandbox": {"mode": "all", "workspaceAccess": "ro"}}]}},
     "agents.list[0].sandbox.workspaceAccess"),
    ({"agents": {"defaults": {"sandbox": {"mode": "non-main", "scope": "agent",
                                          "browser": {"allowHostControl": True}}},
                 "list": [{"id": "main"}]}}, "agents.defaults.sandbox.browser"),
    ({"tools": {"deny": ["exec"], "futureRestriction": {"on": True}}},
     "tools.futureRestriction"),
    ({"tools": {"exec": {"safeBins": ["jq"]}}}, "tools.exec.safeBins"),
    ({"tools": {"elevated": {"enabled": True, "allowFrom": {"discord": ["1"]}}}},
     "tools.elevated"),
    ({"channels": {"discord": {"actions": {"roles": False}}}}, "channels.discord.actions"),
    ({"channels": {"telegram": {"groups": {"-1": {"newToolSwitch": True}}}}},
     'channels.telegram.groups."-1".newToolSwitch'),
    ({"commands": {"bash": True}}, "commands"),
    ({"somethingNew": {}, "tools": {}}, "somethingNew"),
])
def test_access_relevant_keys_left_out_need_allow_partial(
        tmp_path: Path, config: dict[str, Any], path: str) -> None:
    file = write(tmp_path / "openclaw.json", config)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert f"{path}: left out, but it could change tool access" in result.output
    assert not (tmp_path / "out").exists()
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"), "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "WIDER than the gateway" in result.output and path in result.output


def test_keys_without_tool_access_meaning_still_import(tmp_path: Path) -> None:
    config = {"gateway": {"port": 1, "auth": {"token": "x" * 20}}, "models": {},
              "tools": {"deny": ["exec"], "web": {"search": {"enabled": False}},
                        "exec": {"timeoutSec": 5}},
              "agents": {"defaults": {"model": "x", "sandbox": {"mode": "off"}},
                         "list": [{"id": "main", "name": "M", "workspace": "~/w",
                                   "sandbox": {"mode": "off"},
                                   "tools": {"elevated": {"enabled": False}}}]},
              "channels": {"telegram": {"botToken": "t" * 20, "dmPolicy": "pairing",
                                        "groups": {"-1": {"requireMention": True}}}}}
    file = write(tmp_path / "openclaw.json", config)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert policy_of(tmp_path / "out")["agents"]["list"][0]["sandbox"] == {"mode": "off"}


def test_sandbox_modes_import_instead_of_being_refused(tmp_path: Path) -> None:
    """Item 19: a non-main or all mode was refused (left out: the import was wider than the
    gateway); it is carried now, and the container set-up beside it is not access-relevant."""
    config = {"agents": {"defaults": {"sandbox": {"mode": "non-main", "scope": "agent",
                                                  "docker": {"network": "none"}}},
                         "list": [{"id": "main", "default": True},
                                  {"id": "ops", "sandbox": {"mode": "all"}}]},
              "session": {"scope": "global"}}
    file = write(tmp_path / "openclaw.json", config)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    policy = policy_of(tmp_path / "out")
    assert policy["agents"]["defaults"] == {"sandbox": {"mode": "non-main"}}
    assert policy["agents"]["list"][1] == {"id": "ops", "sandbox": {"mode": "all"}}
    assert policy["session"] == {"scope": "global"}
    assert "agents.defaults.sandbox.docker" in result.output  # left out, listed


# -- 19: files that are not an OpenClaw config ---------------------------------------------------
@pytest.mark.parametrize(("name", "data", "what"), [
    ("exec-approvals.json", {"version": 1, "socket": {"path": "~/.openclaw/x.sock"},
                             "defaults": {"security": "deny"},
                             "agents": {"main": {"allowlist": [{"pattern": "/usr/bin/git"}]}}},
     "an OpenClaw exec-approvals file"),
    ("openclaw.plugin.json", {"id": "voice-call", "configSchema": {"type": "object"}},
     "an OpenClaw plugin manifest"),
    ("manifest.json", {"id": "x", "uiHints": {}, "channels": ["x"]},
     "an OpenClaw plugin manifest"),
    ("package.json", {"name": "openclaw", "version": "2026.3.2",
                      "dependencies": {"json5": "^2"}}, "an npm package.json"),
    ("claude_desktop_config.json", {"mcpServers": {"fs": {"command": "npx"}}},
     "an MCP client config"),
    ("policy.json", {"version": 1, "catalog": [], "tools": {"deny": ["exec"]}},
     "toolc definitions"),
    ("data.json", {"hello": "world"}, "not an OpenClaw config"),
])
def test_files_that_are_not_openclaw_configs_are_named_and_refused(
        tmp_path: Path, name: str, data: dict[str, Any], what: str) -> None:
    file = write(tmp_path / name, data)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert f"this is {what}" in result.output
    assert not (tmp_path / "out").exists()


# -- 20: plugin ids and plugins.allow ------------------------------------------------------------
def test_stubs_use_openclaws_plugin_ids_and_honour_plugins_allow(tmp_path: Path) -> None:
    config = {"tools": {"profile": "coding", "alsoAllow": ["voice_call", "lobster", "diffs"]},
              "plugins": {"allow": ["lobster", "diffs"],
                          "entries": {"voice-call": {"enabled": True},
                                      "lobster": {"enabled": True},
                                      "diffs": {"enabled": True}}}}
    file = write(tmp_path / "openclaw.json", config)
    result = run("import-openclaw", str(file), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    stubs = yaml.safe_load((tmp_path / "out/openclaw/stubs.yaml").read_text())["catalog"]
    assert {(s["name"], s["plugin"], s.get("optional", False)) for s in stubs} == {
        ("voice_call", "voice-call", False), ("lobster", "lobster", True),
        ("diffs", "diffs", False)}
    entries = policy_of(tmp_path / "out")["plugins"]["entries"]
    assert entries["voice-call"] == {"enabled": False}  # not in plugins.allow
    ref = ReferenceInterpreter(resolve_definitions(tmp_path / "out"))
    names = ref.resolve(agent_id="main", sender_is_owner=True).names
    assert "voice_call" not in names and {"lobster", "diffs"} <= set(names)


def test_a_plugin_id_in_a_policy_stubs_that_plugins_tools(tmp_path: Path) -> None:
    config = {"tools": {"alsoAllow": ["voice-call", "memory-lancedb"]},
              "plugins": {"deny": ["memory-lancedb"],
                          "entries": {"voice-call": {"enabled": True}}}}
    result = import_openclaw(config, "c.json")
    assert sorted(result.stubs) == [
        "memory_forget (plugin memory-lancedb, tools of OpenClaw's plugin)",
        "memory_recall (plugin memory-lancedb, tools of OpenClaw's plugin)",
        "memory_store (plugin memory-lancedb, tools of OpenClaw's plugin)",
        "voice_call (plugin voice-call, tools of OpenClaw's plugin)"]
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert policy["plugins"]["entries"]["memory-lancedb"] == {"enabled": False}


def test_a_bundled_plugin_not_enabled_stays_disabled(tmp_path: Path) -> None:
    result = import_openclaw({"tools": {"alsoAllow": ["voice_call"]}}, "c.json")
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert policy["plugins"] == {"entries": {"voice-call": {"enabled": False}}}
    assert any("plugin voice-call: disabled" in n for n in result.notes)


def test_import_refused_lists_every_problem() -> None:
    with pytest.raises(openclaw.ImportRefused) as info:
        import_openclaw({"tools": {"futureA": 1, "futureB": 2}}, "c.json")
    assert len(info.value.messages) == 2


def test_a_bundled_channel_plugin_is_enabled_by_its_channel() -> None:
    # isBundledChannelEnabledByChannelConfig: channels.<id>.enabled === true enables it
    config = {"tools": {"alsoAllow": ["feishu_doc"]}, "channels": {"feishu": {"enabled": True}}}
    policy = yaml.safe_load(import_openclaw(config, "c.json").files["openclaw/policy.yaml"])
    assert "plugins" not in policy
    config["channels"] = {"feishu": {"dmPolicy": "pairing"}}
    policy = yaml.safe_load(import_openclaw(config, "c.json").files["openclaw/policy.yaml"])
    assert policy["plugins"] == {"entries": {"feishu": {"enabled": False}}}

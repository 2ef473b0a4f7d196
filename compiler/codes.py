"""Every diagnostic code toolc reports, with its severity and meaning: the one list the
documentation's diagnostic reference is generated from. A test checks that every ``TCnnn``
code in the compiler's source is listed here and that every code listed here is used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Code:
    code: str
    severity: Severity
    meaning: str  # Markdown, one line


def _e(code: str, meaning: str) -> Code:
    return Code(code=code, severity="error", meaning=meaning)


def _w(code: str, meaning: str) -> Code:
    return Code(code=code, severity="warning", meaning=meaning)


def _n(code: str, meaning: str) -> Code:
    return Code(code=code, severity="note", meaning=meaning)


# In the order the reference lists them: loading, structure, names, semantics, dialects,
# assertions and lints.
CODES: tuple[Code, ...] = (
    _e("TC001", "file is not UTF-8"),
    _e("TC002", "YAML syntax error"),
    _e("TC003", "duplicate mapping key"),
    _e("TC004", "merge keys (`<<`) or non-scalar keys"),
    _e("TC005", "YAML aliases expand past the bound (alias bomb)"),
    _e("TC006", "empty file / not a mapping"),
    _e("TC007", "definitions directory missing or without YAML files"),
    _w("TC008", "a file in the definitions directory that is not `*.yaml`/`*.yml` (ignored; "
                "hidden files excepted)"),
    _e("TC009", "a value JSON cannot carry: `.nan`/`.inf`, `!!binary` and other non-JSON "
                "types, an integer of more than 4,300 digits, nesting deeper than 64 levels"),
    _e("TC010", "an OpenClaw config (`*.json5`, or JSON with OpenClaw's top-level keys) in the "
                "definitions directory: run `toolc import-openclaw`"),
    _e("TC101", "missing or unsupported `version`"),
    _e("TC103", "top-level key defined in two files (`catalog` and `plugins` may repeat; a "
                "plugin id or `plugins.enabled` may not)"),
    _e("TC104", 'unknown profile (with "did you mean")'),
    _e("TC105", "two files name different OpenClaw releases in `openclaw`"),
    _n("TC106", "no `openclaw` key: the definitions follow OpenClaw 2026.3 semantics"),
    _e("TC107", "a key or value only another OpenClaw release reads (`agents.entries`, "
                "`tools.toolsBySender`, `channel:` sender keys, `sandbox.tools.alsoAllow`, "
                '`exec.mode`, a binding\'s `session` and `session.groupScope` need '
                '`openclaw: "2026.9"`)'),
    _e("TC108", "an agent roster OpenClaw 2026.9 refuses: several `default: true`, "
                "several agents without a default or `agents.ownership: explicit`, or "
                "`agents.list` beside `agents.entries`"),
    _e("TC109", "`tools.exec.mode` beside `security` or `ask` in one exec object (2026.9)"),
    _e("TC110", "structure: unknown key (with \"did you mean\" or the known keys; also "
                "`channels.slack.groups`, `channels.discord.groups` and "
                "`channels.discord.accounts`)"),
    _e("TC111", "structure: a value of the wrong type"),
    _e("TC112", "structure: a required key is missing"),
    _e("TC113", 'structure: a value that is not one of the allowed choices (with "did you '
                'mean" for a misspelt choice such as `ask: on_miss`)'),
    _e("TC114", "structure: a bad name (a key or value that does not match its pattern)"),
    _e("TC119", "structure: any other value the definitions schema refuses"),
    _e("TC120", "duplicate tool name"),
    _e("TC121", "plugin id equals a tool name"),
    _e("TC122", "`parameters` is not a valid JSON Schema (draft 2020-12)"),
    _e("TC123", "group cycle"),
    _e("TC124", "`group:plugins` is reserved"),
    _e("TC125", "duplicate agent id"),
    _e("TC126", "two `channels`, account, `byProvider`, `providers.entries` or "
                "`plugins.entries` keys that differ only in case, spacing or Unicode form"),
    _w("TC130", "unknown tool or group name, or a glob matching no tool"),
    _w("TC131", "untyped `toolsBySender` key (D1)"),
    _e("TC132", "`toolsBySender` key without a value (`id:`, `username:@`)"),
    _e("TC133", "`optional` on a tool that is not a plugin tool"),
    _e("TC134", "`paramAliases` target is not a parameter"),
    _e("TC135", "unknown dialect in `wireNames`"),
    _w("TC136", "plugin entry without tools"),
    _w("TC137", "shadowed `toolsBySender` key"),
    _e("TC138", "a `paramAliases` alias that is itself a parameter"),
    _e("TC139", "two tools sent to one dialect under the same name (exactly or "
                "case-insensitively)"),
    _w("TC140", "plugin-only allowlist: always ignored (D3); OpenClaw 2026.9: it removes every "
                "core tool"),
    _w("TC141", "allowlist ignored where its core tools are absent (D3; not in 2026.9)"),
    _w("TC142", "OpenClaw 2026.9: a group in an allow list names a plugin tool that the list "
                "does not name itself, so the group never loads it (createPluginToolAllowlist)"),
    _w("TC150", "an exec allowlist pattern that can never match: a bare name (`rg`) or a "
                "relative path (`./bin/*`); patterns match absolute executable paths"),
    _w("TC151", "`tools.exec.security`, `ask` or `allowlist` with no effect: exec runs on the "
                "sandbox host in every context that uses it"),
    _w("TC152", "an exec allowlist pattern that allows every command (`*`) or a whole "
                "directory tree (`/opt/**`): learned entries are literal paths, and OpenClaw "
                "gives `*` a meaning of its own"),
    _e("TC160", "an assertion names an unknown tool"),
    _e("TC170", "a route binding names an agent that is not declared (`main` excepted under "
              "2026.9, and with no roster)"),

    _e("TC201", "a tool's schema cannot be expressed for a dialect"),
    _w("TC210", "a tool breaks a dialect's per-tool rules (name, description, schema)"),
    _w("TC211", "more tools than a dialect accepts, in an example context"),
    _e("TC300", "an assertion fails (with a counterexample and the rules responsible)"),
    _w("TC310", 'a group\'s `tools` that a `"*"` sender rule always pre-empts'),
    _w("TC311", "a sender rule or topic entry that is never selected"),
    _w("TC312", "an agent allow entry naming a tool the agent never sees"),
    _w("TC313", "an agent that sees no tool in any context"),
)

BY_CODE: dict[str, Code] = {c.code: c for c in CODES}

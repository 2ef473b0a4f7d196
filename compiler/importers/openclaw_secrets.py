"""Secrets in an OpenClaw config, for ``toolc import-openclaw``: what is one, and its redacted
form for every message (reports, notes, errors).

Two sources. The config's own secret values: strings below secret-named keys (``botToken``,
``apiKey``, ``password``, ...), except OpenClaw SecretRefs (``{source, provider, id}``: a
reference, not a secret), ``${VAR}`` templates and the ``secrets`` section (how secrets are
resolved: providers, commands, defaults). And shapes, found anywhere inside a string: token prefixes
(GitHub, OpenAI, Anthropic, Slack, AWS, GitLab, Google, npm, Stripe), JWTs, private-key
blocks, ``user:password@`` in URLs, ``Bearer``/``Basic`` values, credential parameters
(``client_secret=...``, ``sig=...``: ``credential_parameters``), and long random-looking runs
(upper case, lower case and digits mixed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

# Key names whose values are secrets.
SECRET_KEY = re.compile(r"token|secret|passw|api[-_]?key|private[-_]?key|credential|cookie|"
                        r"authorization|signing[-_]?key", re.IGNORECASE)
# OpenClaw's SecretRef (docs/gateway/secrets.md): a reference resolved by the gateway.
SECRET_REF_SOURCES = frozenset({"env", "file", "exec"})
ENV_TEMPLATE = re.compile(r"^\$\{[A-Z_][A-Z0-9_]*\}$")

# A Signal group id is base64 of 32 random bytes: random-looking by nature. At a position that
# holds a Signal chat id (``chat_id`` below) such a value is that id, not a credential; the
# shapes with a prefix and the config's own secrets still count there.
SIGNAL_GROUP_ID = re.compile(r"[A-Za-z0-9+/]{43}=")
RANDOM_LOOKING = "random-looking token"

_B = r"(?<![A-Za-z0-9])"  # a token starts at a word edge
# (label, pattern, length of the prefix kept in the redacted form)
SHAPES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?"
                               r"(-----END [A-Z ]*PRIVATE KEY-----|$)"), 0),
    ("GitHub token", re.compile(_B + r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
     4),
    ("Anthropic key", re.compile(_B + r"sk-ant-[A-Za-z0-9_-]{16,}"), 7),
    ("OpenAI-style key", re.compile(_B + r"sk-(proj-|svcacct-)?[A-Za-z0-9_-]{16,}"), 3),
    ("Stripe key", re.compile(_B + r"[sr]k_(live|test)_[A-Za-z0-9]{16,}"), 3),
    ("Slack token", re.compile(_B + r"(xox[abeprs]|xapp)-[A-Za-z0-9-]{8,}"), 5),
    ("AWS access key", re.compile(_B + r"(AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}(?![0-9A-Z])"), 4),
    ("GitLab token", re.compile(_B + r"glpat-[A-Za-z0-9_-]{16,}"), 6),
    ("Google API key", re.compile(_B + r"AIza[0-9A-Za-z_-]{30,}"), 4),
    ("npm token", re.compile(_B + r"npm_[A-Za-z0-9]{30,}"), 4),
    ("JWT", re.compile(_B + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), 3),
    ("password in a URL", re.compile(r"(?<=://)[^/\s:@]*:[^/\s@]+(?=@)"), 0),
    ("bearer credential", re.compile(r"(?i)(?<=\bbearer )\s*[A-Za-z0-9._~+/=-]{6,}"), 0),
    ("basic credential", re.compile(r"(?i)(?<=\bbasic )\s*[A-Za-z0-9+/=]{8,}"), 0),
    # 32+ characters of one run, with 3+ upper case, 3+ lower case and 3+ digits in the run
    (RANDOM_LOOKING, re.compile(r"(?<![A-Za-z0-9+/=_])(?=[A-Za-z0-9+/=_]{32,})"
                                        r"(?=(?:[a-z0-9+/=_]*[A-Z]){3})"
                                        r"(?=(?:[A-Z0-9+/=_]*[a-z]){3})"
                                        r"(?=(?:[A-Za-z+/=_]*[0-9]){3})[A-Za-z0-9+/=_]{32,}"),
     0),
)

# -- credential parameters ---------------------------------------------------------------------
# ``name=value`` anywhere in a text (a URL's query, its fragment, its userinfo, a path's
# ``;params``): the name is the whole run of name characters before ``=``, percent-decoded.
# It names a credential when its last word (words split at ``_ - . + []`` and where lower
# case turns upper: ``X-Amz-Signature``, ``clientSecret``) is one of CREDENTIAL_WORDS, or when
# it is one word ending in one of CREDENTIAL_ENDINGS (``accesstoken``, ``apikey``). So
# ``client_secret``, ``api_token``, ``sig`` (Azure SAS), ``X-Amz-Signature`` and
# ``X-Amz-Security-Token`` (AWS SigV4), ``X-Goog-Signature`` and ``key`` (Google),
# ``id_token``, ``assertion`` and ``jwt`` (JWT-bearing) are credentials, while ``tokenizer``,
# ``keyboard``, ``monkey``, ``client_id`` and ``token_type`` are not. OAuth's ``code`` is
# not among them: a single-use grant, and the name of many an ordinary parameter.
CREDENTIAL_WORDS = frozenset({
    "token", "secret", "key", "apikey", "password", "passwd", "pwd", "passphrase", "auth",
    "signature", "sig", "hmac", "credential", "credentials", "assertion", "jwt"})
CREDENTIAL_ENDINGS = ("token", "secret", "password", "passwd", "signature", "apikey")
# pagination cursors, named like tokens (Google APIs' pageToken, Graph's syncToken)
NOT_CREDENTIALS = frozenset({"pagetoken", "nextpagetoken", "synctoken", "continuationtoken"})
# a value ends where a URL's parameter does, or at a quote (messages quote keys: ``"...":``)
_PARAMETER = re.compile(r"(?<![\w.~%+\[\]-])([\w.~%+\[\]-]+)=([^&\s;,#\"'`<>]{4,})")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_credential_name(name: str) -> bool:
    """``name`` (a parameter's, as written: any case, percent-encoded) names a credential."""
    for _ in range(3):  # encoded once, or twice (``client%255Fsecret``)
        decoded = unquote_plus(name)
        if decoded == name:
            break
        name = decoded
    words = [w.lower() for w in _WORD.findall(name)]
    while words and words[-1].isdigit():  # ``key2``: the second key
        words.pop()
    squashed = "".join(words)
    if not words or squashed in NOT_CREDENTIALS:
        return False
    return words[-1] in CREDENTIAL_WORDS or (len(words) == 1
                                              and squashed.endswith(CREDENTIAL_ENDINGS))


def credential_parameters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the value of every credential parameter in ``text`` (its name is
    kept in the redacted form: ``?client_secret=***``)."""
    for m in _PARAMETER.finditer(text):
        if is_credential_name(m.group(1)):
            yield m.start(2), m.end(2)


MIN_CONFIG_SECRET = 6  # shorter values below secret keys ("token" as a mode) are not secrets
LONG_CONFIG_SECRET = 12  # from this length a config's secret counts inside any text


def is_secret_ref(node: Any) -> bool:
    """OpenClaw's SecretRef object: ``{source: env|file|exec, provider?, id}``."""
    return (isinstance(node, dict) and isinstance(node.get("source"), str)
            and node["source"] in SECRET_REF_SOURCES
            and isinstance(node.get("id"), str)
            and set(node) <= {"source", "provider", "id"})


def config_secrets(config: Any) -> frozenset[str]:
    """The config's own secret values (strings below secret-named keys)."""
    out: set[str] = set()

    def walk(node: Any, under: bool, path: tuple[str, ...]) -> None:
        if path == ("secrets",) or is_secret_ref(node):
            return  # how secrets are resolved (providers, defaults) and references to them
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, under or bool(SECRET_KEY.search(str(key))), (*path, str(key)))
        elif isinstance(node, list):
            for child in node:
                walk(child, under, path)
        elif (under and isinstance(node, str) and len(node.strip()) >= MIN_CONFIG_SECRET
              and not ENV_TEMPLATE.match(node.strip())):
            out.add(node.strip())

    walk(config, False, ())
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int
    keep: int  # characters of the prefix shown


@dataclass(frozen=True, slots=True)
class Secrets:
    """What counts as a secret for one config; ``redact`` every text before printing it."""

    known: frozenset[str] = frozenset()

    def findings(self, text: str) -> list[Finding]:
        found = [Finding(kind, m.start(), m.end(), keep)
                 for kind, pattern, keep in SHAPES for m in pattern.finditer(text)
                 if m.end() > m.start()]
        found.extend(Finding("credential parameter", start, end, 0)
                     for start, end in credential_parameters(text))
        for value in self.known:
            # a short value counts only as a whole word: "Application" is no secret inside
            # "webApplicationInfo"
            edge = "" if len(value) >= LONG_CONFIG_SECRET else r"(?<![A-Za-z0-9])"
            after = "" if len(value) >= LONG_CONFIG_SECRET else r"(?![A-Za-z0-9])"
            found.extend(Finding("a secret of the config", m.start(), m.end(), 0)
                         for m in re.finditer(edge + re.escape(value) + after, text))
        return sorted(found, key=lambda f: (f.start, -f.end))

    def kind(self, text: str, *, chat_id: bool = False) -> str | None:
        """What kind of secret ``text`` holds (None: none); ``chat_id``: ``text`` is where
        the config names a Signal chat, so a Signal group id is one."""
        found = self.findings(text)
        if chat_id and SIGNAL_GROUP_ID.fullmatch(text.strip()):
            found = [f for f in found if f.kind != RANDOM_LOOKING]
        return found[0].kind if found else None

    def redact(self, text: str) -> str:
        """``text`` with every secret in it replaced (a known prefix kept: ``ghp_***``)."""
        out, at = [], 0
        for f in _merged(self.findings(text)):
            out.append(text[at:f.start] + text[f.start:f.start + f.keep] + "***")
            at = f.end
        return "".join(out) + text[at:]


def _merged(found: list[Finding]) -> Iterator[Finding]:
    last: Finding | None = None
    for f in found:
        if last is not None and f.start < last.end:
            last = Finding(last.kind, last.start, max(last.end, f.end), last.keep)
            continue
        if last is not None:
            yield last
        last = f
    if last is not None:
        yield last

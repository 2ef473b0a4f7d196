"""Shell commands as the exec allowlist sees them: one simple command split into words, its
executable's path, and the allowlist pattern that matches it (OpenClaw 2026.3.2's
``exec-approvals-analysis.ts``, ``exec-allowlist-pattern.ts``). Pure functions, standard
library only; toolc's compiler uses ``pattern_can_match`` for its warnings too.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """A command split into words, or why it cannot be analysed."""

    ok: bool
    argv: tuple[str, ...] = ()
    reason: str | None = None


# -- analysis -----------------------------------------------------------------------------------
# Outside quotes these make a command more than one simple command (chains, pipes,
# substitutions, redirections, subshells, brace expansion, escapes): it cannot be analysed.
_UNSUPPORTED: Final = frozenset(";&|<>()$`\\{}")
# Executables that run another command given as arguments: the command they run is not the
# one the allowlist would check (OpenClaw unwraps some of them; toolc asks instead).
WRAPPERS: Final = frozenset(
    "env nice nohup stdbuf timeout sudo doas su xargs exec command builtin eval source . time "
    "setsid chroot nsenter ionice taskset flock watch script parallel busybox toybox "
    "sh bash zsh dash ksh mksh fish ash csh tcsh pwsh powershell cmd".split()
)


def analyze_command(command: str) -> CommandAnalysis:
    """Split a shell command into words when it is one simple command (quotes understood);
    anything else (metacharacters, chains, pipes, substitutions, redirections, newlines,
    environment assignments, command wrappers) cannot be analysed."""
    if not isinstance(command, str) or not command.strip():
        return CommandAnalysis(False, reason="empty command")
    if any(c in command for c in "\n\r\0"):
        return CommandAnalysis(False, reason="unsupported shell token: newline")
    argv, problem = _split_words(command)
    if problem is not None:
        return CommandAnalysis(False, reason=problem)
    if "=" in argv[0]:
        return CommandAnalysis(False, reason="environment assignment")
    name = os.path.basename(argv[0]).lower()
    if name in WRAPPERS:
        return CommandAnalysis(False, reason=f"command wrapper: {name}")
    return CommandAnalysis(True, argv=tuple(argv))


def _split_words(command: str) -> tuple[list[str], str | None]:
    """POSIX-shell words of one simple command, or the token that makes it more than that."""
    words: list[str] = []
    word: list[str] = []
    in_word = False
    quote = ""
    for ch in command:
        if quote:
            if ch == quote:
                quote = ""
            elif quote == '"' and ch in "$`\\":
                return [], f"unsupported shell token in double quotes: {ch}"
            else:
                word.append(ch)
        elif ch in " \t":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
        elif ch in _UNSUPPORTED or (ch == "#" and not in_word):
            return [], f"unsupported shell token: {ch}"
        else:
            in_word = True
            if ch in "'\"":
                quote = ch
            else:
                word.append(ch)
    if quote:
        return [], "unterminated quote"
    if in_word:
        words.append("".join(word))
    return words, None


# -- allowlist matching -------------------------------------------------------------------------
def resolve_executable(
    analysis: CommandAnalysis, *, cwd: str | None = None, path: str | None = None
) -> str | None:
    """The path allowlist patterns are matched against: a path-like executable as an
    absolute path (``~`` expanded, relative to ``cwd``); a bare name looked up on ``path``
    (this process's PATH by default; None when it is not found)."""
    if not analysis.ok:
        return None
    raw = analysis.argv[0]
    if raw.startswith("~"):
        raw = os.path.expanduser(raw)
    if "/" in raw or "\\" in raw:
        return os.path.normpath(os.path.join(cwd or os.getcwd(), raw))
    return shutil.which(raw, path=path if path is not None else os.environ.get("PATH", ""))


_GLOBS: dict[str, re.Pattern[str]] = {}


def _glob(pattern: str) -> re.Pattern[str]:
    regex = _GLOBS.get(pattern)
    if regex is None:
        parts = re.split(r"(\*\*|\*|\?)", pattern)
        body = "".join({"**": ".*", "*": "[^/]*", "?": "."}.get(x, re.escape(x)) for x in parts)
        regex = re.compile(body, re.IGNORECASE | re.DOTALL)
        if len(_GLOBS) >= 512:
            _GLOBS.clear()
        _GLOBS[pattern] = regex
    return regex


def _match_target(value: str) -> str:
    return value.replace("\\\\", "/").lower()


def pattern_can_match(pattern: str) -> bool:
    """Whether a pattern can ever match: OpenClaw matches executables' absolute paths only,
    so a pattern is ``*`` or an absolute path glob (``/``, ``~``, a drive, or a leading
    wildcard); a bare name such as ``rg`` or a relative ``./bin/*`` never matches."""
    text = pattern.strip()
    if text == "*":
        return True
    if not any(c in text for c in "/\\~"):
        return False
    return text[0] in "/\\~*?" or re.match(r"[A-Za-z]:", text) is not None


def match_allowlist(
    patterns: tuple[str, ...], analysis: CommandAnalysis, executable: str | None
) -> str | None:
    """The first pattern that allows the command: ``*`` for any analysed command, else a
    path glob matching the executable's path."""
    if not analysis.ok:
        return None
    for pattern in patterns:
        if pattern.strip() == "*":
            return pattern
    if executable is None:
        return None
    target = _match_target(executable)
    for pattern in patterns:
        text = pattern.strip()
        if not pattern_can_match(text):
            continue
        expanded = os.path.expanduser(text) if text.startswith("~") else text
        if _glob(_match_target(expanded)).fullmatch(target):
            return pattern
    return None

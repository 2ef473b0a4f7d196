"""Shell commands as the exec allowlist sees them: one simple command split into words, the
file it runs, and the allowlist pattern that matches it (OpenClaw 2026.3.2's
``exec-approvals-analysis.ts``, ``exec-allowlist-pattern.ts``; matching as 2026.9.6's
``exec-command-resolution``). Pure functions, standard library only; toolc's compiler uses
``pattern_can_match`` and ``pattern_breadth`` for its warnings too.

What is evaluated must be what the shell runs: a command whose executable depends on more
than its text and the directory it runs in cannot be analysed (globs, a tilde form other than
``~`` or ``~/``, wrappers and builtins that run other code). The executable is resolved
against the directory the command runs in (never this process's), its symlinks resolved.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Final

_WINDOWS: Final = os.name == "nt"


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """A command split into words, or why it cannot be analysed. ``home``: the executable
    starts with an unquoted ``~`` that the shell replaces with the home directory."""

    ok: bool
    argv: tuple[str, ...] = ()
    reason: str | None = None
    home: bool = False


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
# Shell keywords and builtins that run code of their own: ``trap`` at exit, ``enable -f`` a
# shared object, ``mapfile -C`` a callback, and every builtin that evaluates an array
# subscript (``printf -v 'a[$(id)]'``, ``declare``, ``read``, ``test -v``...) runs the
# command substitution hidden in a quoted argument. As bare names the shell runs them
# instead of any file, so no path could be matched either.
SHELL_BUILTINS: Final = frozenset(
    "coproc trap enable fc mapfile readarray let declare typeset local export readonly printf "
    "read unset test [ [[ getopts wait alias function if then else elif fi case esac for "
    "select while until do done ! { }".split()
)


def analyze_command(command: str) -> CommandAnalysis:
    """Split a shell command into words when it is one simple command (quotes understood);
    anything else (metacharacters, chains, pipes, substitutions, redirections, newlines,
    environment assignments, command wrappers) cannot be analysed."""
    if not isinstance(command, str) or not command.strip():
        return CommandAnalysis(False, reason="empty command")
    if any(c in command for c in "\n\r\0"):
        return CommandAnalysis(False, reason="unsupported shell token: newline")
    argv, shape, problem = _split_words(command)
    if problem is None:
        problem = _executable_problem(argv[0], shape)
    if problem is not None:
        return CommandAnalysis(False, reason=problem)
    return CommandAnalysis(True, argv=tuple(argv), home=shape == "~" or shape.startswith("~/"))


def _executable_problem(word: str, shape: str) -> str | None:
    """Why the first word does not name one file the analysis can know (None: it does)."""
    name = os.path.basename(word).lower()
    checks = (
        (not word, "empty executable"),
        ("=" in word, "environment assignment"),
        (name in WRAPPERS, f"command wrapper: {name}"),
        (word in SHELL_BUILTINS, f"shell builtin: {word}"),
        # the shell picks the file from a directory listing
        (any(c in shape for c in "*?["), "glob in the executable"),
        # ~user, ~+, ~- and ~"/x" differ between shells
        (shape.startswith("~") and not (shape == "~" or shape.startswith("~/")), "tilde form"),
    )
    return next((why for failed, why in checks if failed), None)


def _split_words(command: str) -> tuple[list[str], str, str | None]:
    """POSIX-shell words of one simple command, or the token that makes it more than that;
    with the first word's shape: its characters, each quoted one replaced by a NUL."""
    words: list[str] = []
    shapes: list[str] = []
    word: list[str] = []
    shape: list[str] = []
    in_word = False
    quote = ""
    for ch in command:
        if quote:
            if ch == quote:
                quote = ""
            elif quote == '"' and ch in "$`\\":
                return [], "", f"unsupported shell token in double quotes: {ch}"
            else:
                word.append(ch)
                shape.append("\0")
        elif ch in " \t":
            if in_word:
                words.append("".join(word))
                shapes.append("".join(shape))
                word, shape, in_word = [], [], False
        elif ch in _UNSUPPORTED or (ch == "#" and not in_word):
            return [], "", f"unsupported shell token: {ch}"
        else:
            in_word = True
            if ch in "'\"":
                quote = ch
            else:
                word.append(ch)
                shape.append(ch)
    if quote:
        return [], "", "unterminated quote"
    if in_word:
        words.append("".join(word))
        shapes.append("".join(shape))
    return words, shapes[0] if shapes else "", None


# -- the executable ------------------------------------------------------------------------------
def resolve_executable(
    analysis: CommandAnalysis, *, cwd: str | None = None, path: str | None = None
) -> str | None:
    """The file the shell runs for ``analysis``, as an absolute path with its symlinks
    resolved (what allowlist patterns are matched against). A path-like executable is taken
    relative to ``cwd``, the directory the command runs in; a bare name is looked up on
    ``path`` (default: this process's PATH) as the shell does, relative entries (an empty
    one is the current directory) in ``cwd`` too. None when it cannot be known: the command
    cannot be analysed, it depends on a directory that is not known (``cwd`` None or
    relative) or the name is not found. ``~`` is this process's home directory (a request
    may not set ``HOME``)."""
    if not analysis.ok or not analysis.argv[0]:
        return None
    raw = analysis.argv[0]
    if analysis.home:
        raw = os.path.expanduser(raw)
        if raw.startswith("~"):  # no home directory to expand to
            return None
    if "/" in raw or (_WINDOWS and "\\" in raw):
        if os.path.isabs(raw):
            return os.path.realpath(raw)
        base = _directory(cwd)
        return os.path.realpath(os.path.join(base, raw)) if base is not None else None
    return _search(raw, path if path is not None else os.environ.get("PATH", os.defpath), cwd)


def _directory(cwd: str | None) -> str | None:
    return cwd if cwd and os.path.isabs(cwd) else None


def _search(name: str, path: str, cwd: str | None) -> str | None:
    """The shell's PATH search: the first executable file named ``name``."""
    entries = path.split(os.pathsep)
    if _WINDOWS:
        entries.insert(0, "")  # cmd.exe looks in the current directory first
    for entry in entries:
        directory: str | None = entry
        if not os.path.isabs(entry):  # "", "." or "bin": the command's own directory
            base = _directory(cwd)
            if base is None:
                return None  # the shell would look there first; where that is is unknown
            directory = os.path.join(base, entry)
        for suffix in _suffixes(name):
            candidate = os.path.join(str(directory), name + suffix)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return os.path.realpath(candidate)
    return None


def _suffixes(name: str) -> tuple[str, ...]:
    if not _WINDOWS:
        return ("",)
    exts = [e for e in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").lower().split(";") if e]
    return ("",) if os.path.splitext(name)[1].lower() in exts else tuple(exts)


# -- allowlist matching -------------------------------------------------------------------------
_GLOBS: dict[str, re.Pattern[str]] = {}
_DARWIN_PRIVATE: Final = ("/private/var", "/private/tmp", "/private/etc")


def _glob(pattern: str) -> re.Pattern[str]:
    """A pattern as a regex: ``**`` any characters, ``*`` any within a path segment, ``?``
    one character but ``/``, ``[c]`` the character c itself (how learned paths are
    escaped); everything else literal. Case-insensitive on Windows only (2026.9.6)."""
    regex = _GLOBS.get(pattern)
    if regex is None:
        parts: list[str] = []
        i = 0
        while i < len(pattern):
            ch = pattern[i]
            if pattern.startswith("**", i):
                parts.append(".*")
                i += 2
                continue
            if ch == "[" and i + 2 < len(pattern) and pattern[i + 2] == "]":
                parts.append(re.escape(pattern[i + 1]))
                i += 3
                continue
            parts.append({"*": "[^/]*", "?": "[^/]"}.get(ch, re.escape(ch)))
            i += 1
        flags = re.DOTALL | (re.IGNORECASE if _WINDOWS else 0)
        regex = re.compile("".join(parts), flags)
        if len(_GLOBS) >= 512:
            _GLOBS.clear()
        _GLOBS[pattern] = regex
    return regex


def _match_target(value: str) -> str:
    """A path as patterns see it. POSIX paths are compared as they are: case matters and a
    backslash is an ordinary character (2026.3.2 lowered both and read ``\\\\`` as
    ``/``, so ``/opt/SAFE/x`` or ``/tmp/a\\\\b`` matched a pattern for ``/opt/safe/*`` or
    ``/tmp/a/*``)."""
    if _WINDOWS:
        return re.sub(r"^\\\\[?.]\\", "", value).replace("\\", "/").lower()
    if sys.platform == "darwin":  # realpath gives /private/var for /var
        for prefix in _DARWIN_PRIVATE:
            if value == prefix or value.startswith(prefix + "/"):
                return value[len("/private") :]
    return value


def glob_escape(path: str) -> str:
    """A pattern that matches exactly ``path``: ``*``, ``?``, ``[`` and ``]`` become
    one-character classes (``[*]``), and so do blanks at either end, which patterns lose to
    trimming. What allow-always stores."""
    chars = [f"[{c}]" if c in "*?[]" else c for c in path]
    for order in (range(len(chars)), range(len(chars) - 1, -1, -1)):
        for i in order:
            if not chars[i].isspace():
                break
            chars[i] = f"[{chars[i]}]"
    return "".join(chars)


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


def pattern_breadth(pattern: str) -> str | None:
    """Why a pattern allows far more than one program: it matches every command (``*``)
    or a whole directory tree (``**``, outside a ``[*]`` class); None otherwise."""
    text = pattern.strip()
    if text == "*":
        return "matches every command"
    if "**" in re.sub(r"\[.\]", "", text):
        return "matches a whole directory tree"
    return None


def match_allowlist(
    patterns: tuple[str, ...], analysis: CommandAnalysis, executable: str | None
) -> str | None:
    """The first pattern that allows the command: ``*`` for any analysed command, else a
    path glob matching the executable's path (as ``resolve_executable`` gives it)."""
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

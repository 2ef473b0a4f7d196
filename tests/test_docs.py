"""The documentation: the site builds with ``mkdocs build --strict`` (offline), and the shell
blocks of the README's tour and of the tutorials run as written.

Shell blocks (```sh) of one page run in order in a temporary directory, each in the
directory where the previous one ended (as in one terminal), with this environment's
``toolc`` and ``python`` first on PATH. An HTML comment on the line before a block changes
that: ``<!-- test: exit=N -->`` expects exit code N, ``<!-- test: skip (why) -->`` does not
run it; ``<!-- test: output -->`` before a ```text block makes it the standard output the
shell block before it prints, a ``...`` line standing for any lines
(docs/how-to/develop.md documents the convention)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ROOT

VENV_BIN = Path(sys.executable).parent
README = ROOT / "README.md"
TUTORIALS = sorted(p for p in (ROOT / "docs" / "tutorials").glob("*.md") if p.name != "index.md")
BLOCK = re.compile(r"(?:^<!-- test: (?P<marker>[^>]*?) -->\n)?"
                   r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    line: int
    body: str
    exit: int | None  # None: skipped
    output: str | None = None  # what it prints on stdout (``...`` lines: any lines)


def shell_blocks(page: Path) -> list[Block]:
    text = page.read_text("utf-8")
    blocks: list[Block] = []
    for match in BLOCK.finditer(text):
        marker, line = match["marker"] or "", text.count("\n", 0, match.start("body"))
        if match["lang"] != "sh":
            if marker == "output":
                last = blocks[-1] if blocks else None
                assert last is not None and last.exit is not None and last.output is None, (
                    f"{page.name}:{line}: <!-- test: output --> follows no shell block that runs")
                blocks[-1] = Block(last.line, last.body, last.exit, match["body"])
            continue
        if marker.startswith("skip"):
            blocks.append(Block(line, match["body"], None))
            continue
        found = re.fullmatch(r"exit=(\d+)", marker)
        assert not marker or found, f"{page.name}:{line}: unknown marker <!-- test: {marker} -->"
        blocks.append(Block(line, match["body"], int(found[1]) if found else 0))
    return blocks


def printed(expected: str, stdout: str) -> bool:
    """Whether ``stdout`` is ``expected``, line for line, where a ``...`` line of
    ``expected`` stands for any number of lines (doctest's ellipsis, whole lines only)."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n"
                      for line in expected.splitlines())
    return re.fullmatch(pattern, stdout) is not None


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
           "NO_COLOR": "1", "HOME": str(tmp / "home"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"], env[f"GIT_{who}_EMAIL"] = "Docs Test", "docs@example.invalid"
    for name in ("FORCE_COLOR", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(name, None)
    return env


def run_page(page: Path, tmp: Path) -> None:
    """Run ``page``'s shell blocks in ``tmp`` as a reader would, one after another."""
    (tmp / "home").mkdir()
    env, cwd, state = _env(tmp), tmp / "work", tmp / "cwd"
    cwd.mkdir()
    for block in shell_blocks(page):
        if block.exit is None:
            continue
        script = f'trap \'pwd > "{state}"\' EXIT\n{block.body}'
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == block.exit, (
            f"{page.name}:{block.line}: exit {proc.returncode}, expected {block.exit}\n"
            f"{block.body}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
        assert block.output is None or printed(block.output, proc.stdout), (
            f"{page.name}:{block.line}: the output shown after the block is not what it "
            f"prints\n{block.body}\n--- shown\n{block.output}--- stdout\n{proc.stdout}")
        cwd = Path(state.read_text().strip())


def test_shown_output_may_elide_lines() -> None:
    assert printed("a\n...\nd\n", "a\nb\nc\nd\n") and printed("a\n...\n", "a\n")
    assert not printed("a\nd\n", "a\nb\nd\n") and not printed("a\n", "a\nb\n")
    assert not printed("a.\n", "ab\n")


@pytest.mark.parametrize("page", [README, *TUTORIALS], ids=lambda p: p.name)
def test_shell_blocks_run_as_written(page: Path, tmp_path: Path) -> None:
    assert [b for b in shell_blocks(page) if b.exit is not None], "no block to run"
    run_page(page, tmp_path)


def test_site_builds_strict_and_offline(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([str(VENV_BIN / "mkdocs"), "build", "--strict", "--quiet",
                           "--site-dir", str(tmp_path / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    cli = (site / "reference" / "cli" / "index.html").read_text("utf-8")
    assert "toolc serve-mcp" in cli and "toolc identity add" in cli  # generated
    assert "TC313" in (site / "reference" / "diagnostics" / "index.html").read_text("utf-8")
    assert not (site / "hooks.py").exists()


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= 250
    first_block = lines.index("```sh")
    assert lines[first_block + 1].startswith("make build")
    assert lines[first_block + 2].startswith("make test")


def test_readme_stands_alone() -> None:
    """No link out of the repository's files: the README is read on its own."""
    text = README.read_text("utf-8")
    for target in re.findall(r"\]\(([^)]+)\)", text):
        assert not target.startswith(("/", "..", "http")), target
        assert (ROOT / target.split("#")[0]).exists(), target


def test_no_page_installs_a_bare_index_name() -> None:
    """toolc is not on a package index: every install line names a git ref or a wheel."""
    # `pip install toolc`, `pip install -q 'toolc[mcp]'`: a requirement not followed by `@`
    bare = re.compile(r"pip3? install (?:-\S+ )*['\"]?toolc(?:\[[\w,-]+\])?(?![\w\[\], -]*@)")
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    pages += [ROOT / "action.yml", *sorted((ROOT / "examples" / "ci").glob("*.yml"))]
    for page in pages:
        assert not bare.search(page.read_text("utf-8")), page

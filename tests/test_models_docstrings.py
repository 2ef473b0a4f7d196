"""Generated parameter models keep long descriptions within the line length (the 2026.9
release's own schemas carry descriptions of several hundred characters)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolc.schema.models import LINE_LENGTH, generate_models, wrap_docstrings

LONG = ("Wake target override for `action: \"wake\"`: route the event to another session owned "
        "by the calling agent. Defaults to the resolved calling-session key when omitted.")


def test_long_docstring_lines_are_wrapped_between_words() -> None:
    source = f'class A:\n    x: int\n    """\n    {LONG}\n    """\n'
    out = wrap_docstrings(source)
    body = out.split('"""')[1]
    assert all(len(line) <= LINE_LENGTH for line in out.splitlines())
    assert " ".join(body.split()) == LONG  # the same words, only the breaks moved
    assert wrap_docstrings(out) == out


def test_code_and_short_lines_are_left_alone() -> None:
    source = f'x = "{LONG}"\n"""short"""\n'
    assert wrap_docstrings(source) == source


def test_generated_models_pass_e501_with_long_descriptions(tmp_path: Path) -> None:
    schema = {"type": "object", "description": LONG, "properties": {
        "sessionKey": {"type": "string", "description": LONG + " " + LONG}}}
    module = tmp_path / "models.py"
    module.write_text(generate_models({"wake": schema}), "utf-8")
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(ruff), "check", "--isolated", "--select", "E501",
                           "--line-length", str(LINE_LENGTH), str(module)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout

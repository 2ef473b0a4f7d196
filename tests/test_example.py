"""The example gateway runs against the committed build/ and shows each part of the path."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT


def test_example_gateway_runs() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "gateway.py")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("## Tool availability (filtered by policy)\n- read: ")
    assert "[operator] 'curl -s https://example.org': allow-once" in out
    assert "rm is not allowed here" in out  # blocked by the before_tool_call hook
    assert "Tool message is not available to this request" in out  # not in coder's set
    assert "Tool automations is not available to this request" in out  # 2026.9's cron: owner-only
    assert "<<<END_EXTERNAL_UNTRUSTED_CONTENT id=" in out
    assert out.rstrip().endswith("assistant: Done: I read the notes and checked the repo.")

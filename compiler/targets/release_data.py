"""Where each registered release's data file is, and its data read once (the registry fills
the map; :attr:`Target.data` reads through it)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

# key -> the release's data file
DATA_FILES: dict[str, Traversable | Path] = {}


@functools.cache
def release_data(key: str) -> Mapping[str, Any]:
    """A registered release's own data (its data file, read once)."""
    data: Mapping[str, Any] = json.loads(DATA_FILES[key].read_text(encoding="utf-8"))
    return data

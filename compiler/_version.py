"""toolc's version, on its own so that every layer can name it without importing the package."""

from __future__ import annotations

__version__ = "0.1.0"

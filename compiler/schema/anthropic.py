"""Anthropic Messages custom tools (`input_schema`, non-strict).

Any draft-2020-12 schema is accepted (normalization already made it one, with an object root
and no root union); only labels the API ignores are stripped.
"""

from __future__ import annotations

from typing import Final

from .walker import Dialect, actions

DIALECT: Final = Dialect(
    name="anthropic",
    actions=actions(strip=("title", "discriminator", "propertyOrdering")),
)

"""MCP `tools/list` (`inputSchema`): any JSON Schema 2020-12 object schema.

Root composition stays (MCP 2026-07-28 allows it next to `type: object`), references stay,
even ones outside the document (with a warning: clients often fail to resolve them).
"""

from __future__ import annotations

from typing import Final

from .refs import RefPolicy
from .walker import Dialect, actions

DIALECT: Final = Dialect(
    name="mcp",
    actions=actions(strip=("propertyOrdering",)),
    refs=RefPolicy(external="warning", prune_defs=False),
    flatten_root_union=False,
)

"""OpenAI function tools, non-strict (Chat Completions and Responses with `strict: false`).

Keywords pass through; the API's own schema checks demand `properties` on every object and
`items` on every array, and reject `not`/`if` at the root.
"""

from __future__ import annotations

from typing import Any, Final

from .convert import tuple_to_items
from .keywords import is_array, is_object
from .model import Pointer
from .walker import Ctx, Dialect, actions

ANNOTATIONS: Final = (
    "title",
    "examples",
    "example",
    "discriminator",
    "propertyOrdering",
    "deprecated",
    "readOnly",
    "writeOnly",
    "x-*",
)


def hook(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    # "array schema missing items" fires for prefixItems-only tuples too.
    node = tuple_to_items(node, at, ctx)
    if is_object(node) and "properties" not in node:
        node["properties"] = {}
    if is_array(node) and "items" not in node:
        node["items"] = {}
    return node


DIALECT: Final = Dialect(
    name="openai",
    actions=actions(strip=ANNOTATIONS),
    root_actions=actions(describe=("not", "if", "then", "else")),
    hook=hook,
)

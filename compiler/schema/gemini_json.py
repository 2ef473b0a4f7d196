"""Gemini `FunctionDeclaration.parametersJsonSchema` (the JSON Schema surface).

Accepts real JSON Schema (`$ref`/`$defs`, `anyOf`, type lists, `additionalProperties`,
`prefixItems`) but not `const`, `allOf`, `not`, `exclusive*` or most string/number facets;
`title` breaks function calling (MALFORMED_FUNCTION_CALL). A `$ref` may only carry
`description`/`default` next to it.
"""

from __future__ import annotations

from typing import Any, Final

from .convert import (
    const_to_enum,
    drop_empty_enum_string,
    exclusive_to_inclusive,
    filter_format,
    fold_all_of,
    one_of_to_any_of,
    rename_properties,
    split_enum_by_type,
)
from .model import Pointer
from .refs import RefPolicy
from .walker import Action, Ctx, Dialect, actions

KEEP: Final = (
    "type",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "propertyOrdering",
    "additionalProperties",
    "anyOf",
    "default",
    "minimum",
    "maximum",
    "format",
)
STRIP: Final = (
    "title",
    "examples",
    "example",
    "discriminator",
    "deprecated",
    "readOnly",
    "writeOnly",
    "x-*",
)
FORMATS: Final = frozenset({"date-time", "int32", "int64", "float", "double"})


def hook(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    node = fold_all_of(node, at, ctx)
    node = one_of_to_any_of(node, at, ctx)
    node = const_to_enum(node, at, ctx)
    node = exclusive_to_inclusive(node, at, ctx)
    node = filter_format(node, at, ctx, lambda fmt, _types: fmt in FORMATS)
    node = drop_empty_enum_string(node, at, ctx)
    node = split_enum_by_type(node, at, ctx)
    return rename_properties(node, at, ctx)


ACTIONS: Final = actions(keep=KEEP, strip=STRIP)

DIALECT: Final = Dialect(
    name="gemini-json",
    actions=ACTIONS,
    default=Action.DESCRIBE,
    hook=hook,
    refs=RefPolicy(
        inline="non_defs",
        siblings="inline",
        # Keywords that end up stripped or in the description are fine next to a $ref.
        blocking_siblings=frozenset(KEEP) - {"default"},
        root_ref_ok=False,
        recursion="warning",
    ),
)

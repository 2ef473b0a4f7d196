"""Shared normalization: one draft-2020-12 object schema, whatever the author wrote.

Runs before every dialect. Upgrades draft-3/4/7 spellings, fixes the root to `type: object`
and flattens a root union (OpenClaw semantics section 13 step 4), so the dialect walkers only
ever see 2020-12 keywords and an object root.
"""

from __future__ import annotations

from typing import Any, Final

from .keywords import (
    JSON_TYPES,
    SCHEMA_KEYS,
    SCHEMA_LIST_KEYS,
    SCHEMA_MAP_KEYS,
    canonical,
    children,
    dict_at,
    encode_pointer,
    enum_values,
    json_type,
    list_at,
    pointer_tokens,
    resolve_local,
    types_of,
)
from .merge import merge_all_of, merge_schemas
from .model import NoteList, Pointer, SchemaNote

# Root allOf/anyOf rounds before giving up on a self-referencing root (see _normalize_root).
_ROOT_ROUNDS: Final = 8
# Meta keywords carry no constraint; `$schema` would even lie after the draft upgrades below.
_META: Final = frozenset({"$schema", "$id", "$comment", "$anchor", "$vocabulary", "$dynamicAnchor"})


def normalize_schema(
    parameters: dict[str, Any], *, flatten_root_union: bool = True
) -> tuple[dict[str, Any], tuple[SchemaNote, ...]]:
    """Return a 2020-12 object schema equivalent to `parameters` (lossy only where root
    composition is flattened, which is noted and described) and notes on every change.

    `flatten_root_union=False` keeps root anyOf/oneOf/allOf (MCP allows composition at the root).
    """
    notes = NoteList()
    source: Any = parameters
    if source is None:
        notes.add(
            "parameters-null",
            (),
            "parameters is null; using an empty object schema",
            severity="warning",
        )
        source = {}
    if not isinstance(source, dict):
        notes.add(
            "parameters-not-object",
            (),
            f"parameters must be a JSON object, got {json_type(source)}",
            severity="error",
        )
        source = {}
    anchors = _collect_anchors(source, ())
    schema = _upgrade(source, (), notes, anchors)
    schema = _normalize_root(schema, notes, flatten_root_union)
    return schema, tuple(notes.items)


# ---------------------------------------------------------------- per-node draft upgrades


def _upgrade(node: Any, at: Pointer, notes: NoteList, anchors: dict[str, str]) -> Any:
    if not isinstance(node, dict):
        return node
    node = {k: v for k, v in node.items() if k not in _META and not _is_draft4_id(k, v)}
    _upgrade_definitions(node, at, notes)
    _upgrade_tuple_items(node, at, notes)
    _upgrade_exclusive_bounds(node, at, notes)
    _upgrade_dependencies(node, at, notes)
    _upgrade_property_required(node, at, notes)
    _check_shapes(node, at, notes)
    _upgrade_nullable(node, at, notes)
    _upgrade_type(node, at, notes)
    if isinstance(node.get("$ref"), str):
        node["$ref"] = _rewrite_ref(node["$ref"], anchors)
    return _map_children(node, at, notes, anchors)


def _map_children(
    node: dict[str, Any], at: Pointer, notes: NoteList, anchors: dict[str, str]
) -> dict[str, Any]:
    out = dict(node)
    for key, value in node.items():
        if key in SCHEMA_KEYS and isinstance(value, dict):
            out[key] = _upgrade(value, (*at, key), notes, anchors)
        elif key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {n: _upgrade(s, (*at, key, n), notes, anchors) for n, s in value.items()}
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [_upgrade(s, (*at, key, i), notes, anchors) for i, s in enumerate(value)]
    return out


def _is_draft4_id(key: str, value: Any) -> bool:
    # Draft-4 `id` is `$id`, which is stripped as meta; a property called "id" lives inside
    # `properties`, never at a keyword position.
    return key == "id" and isinstance(value, str)


def _upgrade_definitions(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    legacy = node.pop("definitions", None)
    if not isinstance(legacy, dict):
        return
    defs = dict_at(node, "$defs")
    clashes = sorted(name for name in legacy if name in defs)
    if clashes:
        notes.add(
            "definitions-clash",
            at,
            f"definitions and $defs both define {clashes}; $defs wins",
            severity="warning",
        )
    node["$defs"] = {**legacy, **defs}
    notes.add("draft-definitions", at, "definitions renamed to $defs (refs rewritten)")


def _upgrade_tuple_items(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    extra = node.pop("additionalItems", None)
    if not isinstance(node.get("items"), list):
        return
    node["prefixItems"] = node.pop("items")
    if extra is not None:
        node["items"] = extra
    notes.add("draft-tuple-items", at, "list-form items converted to prefixItems")


def _upgrade_exclusive_bounds(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = node.get(exclusive)
        if not isinstance(flag, bool):
            continue
        del node[exclusive]
        if flag and bound in node:
            node[exclusive] = node.pop(bound)
        notes.add("draft-exclusive-bound", at, f"boolean {exclusive} converted to a number")


def _upgrade_dependencies(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    deps = node.pop("dependencies", None)
    if not isinstance(deps, dict):
        return
    for name, value in deps.items():
        target = "dependentRequired" if isinstance(value, list) else "dependentSchemas"
        node.setdefault(target, {})[name] = value
    notes.add("draft-dependencies", at, "dependencies split into dependentRequired/Schemas")


def _upgrade_property_required(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    # Draft 3 marked required-ness on the property itself (`required: true`).
    props = node.get("properties")
    if not isinstance(props, dict):
        return
    lifted = [
        n for n, s in props.items() if isinstance(s, dict) and isinstance(s.get("required"), bool)
    ]
    for name in lifted:
        sub = dict(props[name])
        if sub.pop("required"):
            required = list_at(node, "required")
            node["required"] = [*required, name] if name not in required else required
        props = {**props, name: sub}
    if lifted:
        node["properties"] = props
        notes.add("draft-property-required", at, f"boolean required lifted for {lifted}")


def _check_shapes(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    if isinstance(node.get("required"), bool):
        # Draft 3 `required: true` outside a property (e.g. on a definition) means nothing.
        del node["required"]
        notes.add("draft-boolean-required", (*at, "required"), "boolean required dropped")
    for key, kind in (("properties", dict), ("required", list), ("enum", list)):
        if key in node and not isinstance(node[key], kind):
            notes.add(
                "malformed-keyword",
                (*at, key),
                f"{key} must be a {kind.__name__}, got {json_type(node[key])}; dropped",
                severity="error",
            )
            del node[key]
    if "required" in node:
        node["required"] = [n for n in node["required"] if isinstance(n, str)]


def _upgrade_nullable(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    # OpenAPI `nullable` becomes the JSON Schema spelling; the Gemini dialect turns it back.
    flag = node.pop("nullable", None)
    if flag is not True:
        return
    types = types_of(node)
    if types and "null" not in types:
        node["type"] = [*types, "null"]
    elif not types and isinstance(node.get("anyOf"), list):
        node["anyOf"] = [*node["anyOf"], {"type": "null"}]
    elif not types and isinstance(node.get("$ref"), str):
        node["anyOf"] = [{"$ref": node.pop("$ref")}, {"type": "null"}]
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    notes.add("openapi-nullable", at, "nullable: true converted to a null type")


def _upgrade_type(node: dict[str, Any], at: Pointer, notes: NoteList) -> None:
    # `type: "enum"` (seen in the wild, rejected by every provider) and other unknown names.
    raw = node.get("type")
    if raw is None:
        return
    # OpenAPI / Gemini authors write STRING, OBJECT...: the same types in upper case.
    given = raw if isinstance(raw, list) else [raw]
    names = [t.lower() if isinstance(t, str) and t.lower() in JSON_TYPES else t for t in given]
    names = [t for i, t in enumerate(names) if t not in names[:i]]
    if names != given or (isinstance(raw, list) and len(names) == 1):
        node["type"] = names if len(names) > 1 else names[0]
        notes.add("type-normalized", at, f"type {raw!r} written as {node['type']!r}")
    good = [t for t in names if isinstance(t, str) and t in JSON_TYPES]
    if names and len(good) == len(names):
        return
    values = enum_values(node)
    if not good and values:
        good = sorted({json_type(v) for v in values})
    if good:
        node["type"] = good[0] if len(good) == 1 else good
        notes.add(
            "invalid-type-repaired",
            at,
            f"type {raw!r} replaced by {node['type']!r}",
            severity="warning",
        )
    else:
        del node["type"]
        notes.add("invalid-type", at, f"unknown type {raw!r} dropped", severity="error")


# ---------------------------------------------------------------- refs and anchors


def _collect_anchors(node: Any, at: Pointer) -> dict[str, str]:
    found: dict[str, str] = {}
    if isinstance(node, dict):
        if isinstance(node.get("$anchor"), str):
            found[node["$anchor"]] = _rewrite_ref(encode_pointer(at), {})
        for rel, child in children(node):
            found.update(_collect_anchors(child, (*at, *rel)))
    return found


def _rewrite_ref(ref: str, anchors: dict[str, str]) -> str:
    """Follow the renames done above (definitions -> $defs, list items -> prefixItems)
    inside a local JSON pointer; anchors (`#name`) become pointers."""
    if ref.startswith("#") and not ref.startswith("#/") and ref != "#":
        return anchors.get(ref[1:], ref)
    tokens = pointer_tokens(ref)
    if tokens is None:
        return ref
    out: list[str] = []
    state = "schema"
    for i, token in enumerate(tokens):
        if state == "schema":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            token_out, state = _rewrite_token(token, nxt)
        else:
            token_out, state = token, "schema"
        out.append(token_out)
        if state == "opaque":
            out.extend(tokens[i + 1 :])
            break
    return encode_pointer(tuple(out))


def _rewrite_token(token: str, following: str) -> tuple[str, str]:
    if token == "definitions":
        return "$defs", "name"
    if token == "items" and following.isdigit():
        return "prefixItems", "index"
    if token == "additionalItems":
        return "items", "schema"
    if token in SCHEMA_MAP_KEYS:
        return token, "name"
    if token in SCHEMA_LIST_KEYS:
        return token, "index"
    return token, "schema" if token in SCHEMA_KEYS else "opaque"


# ---------------------------------------------------------------- the root


def _normalize_root(root: dict[str, Any], notes: NoteList, flatten: bool) -> dict[str, Any]:
    root = _inline_root_ref(root, notes)
    # Merging allOf can bring a union up to the root and vice versa: repeat, but a
    # self-referencing allOf could go on forever, so stop after a few rounds.
    for _ in range(_ROOT_ROUNDS if flatten else 0):
        if isinstance(root.get("allOf"), list):
            root = _merge_root_all_of(root, notes)
        for key in ("anyOf", "oneOf"):
            if isinstance(root.get(key), list):
                root = _flatten_union(root, key, notes)
    if flatten:
        root = _describe_leftover_composition(root, notes)
    return _ensure_object_type(root, notes)


def _describe_leftover_composition(root: dict[str, Any], notes: NoteList) -> dict[str, Any]:
    left = {k: root[k] for k in ("allOf", "anyOf", "oneOf") if k in root}
    if not left:
        return root
    root = {k: v for k, v in root.items() if k not in left}
    _append_description(
        root, "(" + "; ".join(f"{k}: {canonical(v)}" for k, v in left.items()) + ")"
    )
    notes.add(
        "root-composition-described",
        (),
        "root composition that does not flatten moved into the description",
        severity="warning",
        lossy=True,
    )
    return root


def _inline_root_ref(root: dict[str, Any], notes: NoteList) -> dict[str, Any]:
    # The target may itself be a $ref (a chain, or a cycle): follow a few hops.
    for _ in range(_ROOT_ROUNDS):
        ref = root.get("$ref")
        if not isinstance(ref, str):
            return root
        found, target = resolve_local(root, ref)
        siblings = {k: v for k, v in root.items() if k != "$ref"}
        merged = merge_schemas(siblings, target) if found and isinstance(target, dict) else None
        if merged is None or ref == "#":
            break
        notes.add("root-ref-inlined", (), f"root $ref {ref} inlined into the root")
        root = merged
    notes.add(
        "root-ref",
        ("$ref",),
        f"root $ref {root['$ref']} cannot be resolved into the root",
        severity="error",
    )
    return {k: v for k, v in root.items() if k != "$ref"}


def _deref(root: dict[str, Any], member: Any) -> Any:
    if isinstance(member, dict) and isinstance(member.get("$ref"), str):
        found, target = resolve_local(root, member["$ref"])
        if found and isinstance(target, dict):
            rest = {k: v for k, v in member.items() if k != "$ref"}
            return merge_schemas(rest, target) or member
    return member


def _flatten_union(root: dict[str, Any], key: str, notes: NoteList) -> dict[str, Any]:
    variants = [_deref(root, v) for v in root[key]]
    counted = [v for v in variants if isinstance(v, dict) and isinstance(v.get("properties"), dict)]
    properties = dict(dict_at(root, "properties"))
    for variant in counted:
        for name, schema in variant["properties"].items():
            properties[name] = (
                _merge_property(properties[name], schema) if name in properties else schema
            )
    flat: dict[str, Any] = {"type": "object"}
    for meta in ("title", "description"):
        if isinstance(root.get(meta), str):
            flat[meta] = root[meta]
    flat["properties"] = properties
    required = _union_required(root, counted)
    if required:
        flat["required"] = required
    if "additionalProperties" in root:
        flat["additionalProperties"] = root["additionalProperties"]
    elif counted and all(v.get("additionalProperties") is False for v in counted):
        flat["additionalProperties"] = False
    rest = {k: v for k, v in root.items() if k not in (*flat, key, "type", "required")}
    flat.update(rest)
    if len(variants) > 1:
        _describe_union(flat, key, variants)
        notes.add(
            "root-union-flattened",
            (),
            f"root {key} of {len(variants)} variants flattened "
            "into one object; the variant rule moved to the description",
            severity="warning",
            lossy=True,
        )
    return flat


def _union_required(root: dict[str, Any], counted: list[dict[str, Any]]) -> list[str]:
    top = root.get("required")
    if isinstance(top, list) and top:
        return list(top)
    if not counted:
        return []
    first = list_at(counted[0], "required")
    return [n for n in first if all(n in list_at(v, "required") for v in counted[1:])]


def _merge_property(first: Any, second: Any) -> Any:
    # Union variants often restrict one discriminator each (`kind: {const: "a"}`); the flat
    # object accepts all of their values. Otherwise the first occurrence wins.
    a = _enumish(first)
    b = _enumish(second)
    if a is None or b is None:
        return first
    values: list[Any] = []
    for v in a + b:
        if canonical(v) not in {canonical(x) for x in values}:
            values.append(v)
    merged: dict[str, Any] = {}
    for src in (first, second):
        for meta in ("title", "description", "default"):
            if meta in src and meta not in merged:
                merged[meta] = src[meta]
    kinds = {json_type(v) for v in values}
    if len(kinds) == 1:
        merged["type"] = kinds.pop()
    elif kinds == {"integer", "number"}:
        merged["type"] = "number"
    merged["enum"] = values
    return merged


def _enumish(schema: Any) -> list[Any] | None:
    if not isinstance(schema, dict):
        return None
    values = enum_values(schema)
    if values is not None:
        return values
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            parts = [_enumish(m) for m in members]
            if all(p is not None for p in parts):
                return [v for p in parts if p is not None for v in p]
    return None


def _describe_union(flat: dict[str, Any], key: str, variants: list[Any]) -> None:
    shapes = " | ".join(_variant_shape(v) for v in variants)
    rule = "exactly one of" if key == "oneOf" else "at least one of"
    _append_description(flat, f"({key}: {rule} {shapes})")


def _append_description(node: dict[str, Any], text: str) -> None:
    desc = node.get("description")
    node["description"] = f"{desc} {text}" if isinstance(desc, str) and desc else text


def _variant_shape(variant: Any) -> str:
    if not isinstance(variant, dict):
        return canonical(variant)
    required = [n for n in list_at(variant, "required") if isinstance(n, str)]
    props = dict_at(variant, "properties")
    names = [*props, *(n for n in required if n not in props)]
    return "{" + ", ".join(f"{n}*" if n in required else n for n in names) + "}"


def _merge_root_all_of(root: dict[str, Any], notes: NoteList) -> dict[str, Any]:
    merged, leftovers = merge_all_of(root, lambda m: _deref(root, m))
    if leftovers:
        _append_description(merged, f"(allOf: {canonical(leftovers)})")
        notes.add(
            "root-allof-described",
            ("allOf",),
            "root allOf members that cannot be merged moved into the description",
            severity="warning",
            lossy=True,
        )
    return merged


def _ensure_object_type(root: dict[str, Any], notes: NoteList) -> dict[str, Any]:
    types = types_of(root)
    if types == ["object"]:
        return root
    if not types:
        notes.add("root-type-added", (), "root type: object added")
        return {"type": "object", **root}
    if "object" in types:
        notes.add(
            "root-type-narrowed",
            (),
            f"root type {types} narrowed to object (tool arguments are always an object)",
        )
        return {**root, "type": "object"}
    notes.add(
        "root-not-object", ("type",), f"root type must be object, got {types}", severity="error"
    )
    return {**root, "type": "object"}

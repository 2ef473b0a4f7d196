"""Claude-Code parameter aliases (OpenClaw semantics section 15.1)."""

from __future__ import annotations

from typing import Any

import pytest
from toolc.runtime._errors import InvalidArgumentsError, ToolError
from toolc.schema.aliases import apply_param_aliases, normalize_call_args, required_groups

EDIT = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File"},
        "oldText": {"type": "string"},
        "newText": {"type": "string"},
    },
    "required": ["path", "oldText", "newText"],
}
EDIT_ALIASES = {"file_path": "path", "old_string": "oldText", "new_string": "newText"}
WRITE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}


def test_alias_gets_the_canonical_schema_and_neither_is_required() -> None:
    out = apply_param_aliases(WRITE, {"file_path": "path"})
    assert out == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "file_path": {"type": "string"},
        },
        "required": ["content"],
    }


def test_alias_without_canonical_is_ignored() -> None:
    assert apply_param_aliases(WRITE, {"filename": "name"}) == WRITE


def test_existing_alias_property_is_kept() -> None:
    schema = {**WRITE, "properties": {**WRITE["properties"], "file_path": {"type": "integer"}}}
    out = apply_param_aliases(schema, {"file_path": "path"})
    assert out["properties"]["file_path"] == {"type": "integer"}
    assert out["required"] == ["content"]


def test_required_array_appears_when_something_changed() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    assert apply_param_aliases(schema, {"file_path": "path"})["required"] == []


def test_input_is_not_mutated() -> None:
    before = repr(EDIT)
    apply_param_aliases(EDIT, EDIT_ALIASES)
    assert repr(EDIT) == before


def test_required_groups_for_aliased_canonicals_in_required_order() -> None:
    assert required_groups(EDIT, EDIT_ALIASES) == (
        ("path (path or file_path)", ("path", "file_path")),
        ("oldText (oldText or old_string)", ("oldText", "old_string")),
        ("newText (newText or new_string)", ("newText", "new_string")),
    )


def test_required_groups_skip_unaliased_properties() -> None:
    assert required_groups(WRITE, {"file_path": "path"}) == (
        ("path (path or file_path)", ("path", "file_path")),
    )


GROUPS = required_groups(EDIT, EDIT_ALIASES)


def call(args: object, **kw: Any) -> dict[str, Any]:
    return normalize_call_args(args, EDIT_ALIASES, GROUPS, "edit", **kw)


def test_alias_maps_to_the_canonical_key() -> None:
    args = {"file_path": "/a", "old_string": "x", "new_string": "y"}
    assert call(args) == {"path": "/a", "oldText": "x", "newText": "y"}


def test_canonical_wins_and_the_alias_stays() -> None:
    assert call({"path": "/a", "file_path": "/b", "oldText": "x", "newText": "y"}) == {
        "path": "/a",
        "file_path": "/b",
        "oldText": "x",
        "newText": "y",
    }


def test_null_canonical_is_replaced_by_the_alias() -> None:
    args = {"path": None, "file_path": "/b", "oldText": "x", "newText": "y"}
    assert call(args)["path"] == "/b"


def test_one_missing_group() -> None:
    with pytest.raises(ValueError) as err:
        call({"path": "/a", "oldText": "x"})
    assert str(err.value) == (
        "Missing required parameter: newText (newText or new_string). "
        "Supply correct parameters before retrying."
    )


def test_several_missing_groups() -> None:
    with pytest.raises(ValueError) as err:
        call({"oldText": "x"})
    assert str(err.value) == (
        "Missing required parameters: path (path or file_path), newText (newText or new_string). "
        "Supply correct parameters before retrying."
    )


def test_blank_string_does_not_satisfy_a_group() -> None:
    with pytest.raises(ValueError, match="path \\(path or file_path\\)"):
        call({"path": "  ", "oldText": "x", "newText": "y"})


def test_allow_empty_accepts_an_empty_replacement() -> None:
    assert (
        call({"path": "/a", "oldText": "x", "newText": ""}, allow_empty={"newText"})["newText"]
        == ""
    )


def test_missing_groups_are_invalid_arguments_errors() -> None:
    # the runtime's one exception hierarchy, still a ValueError for existing callers
    with pytest.raises(ToolError) as err:
        call({"path": "/a", "oldText": "x"})
    assert isinstance(err.value, InvalidArgumentsError) and err.value.tool == "edit"


def test_non_object_arguments() -> None:
    with pytest.raises(ValueError) as err:
        call(["not", "an", "object"])
    assert str(err.value) == "Missing parameters for edit"

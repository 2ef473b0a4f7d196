"""Provider schema cleaning: one tool parameters schema -> the form each provider accepts.

Stages: `normalize_schema` (shared draft upgrades and root fixes) -> `clean_schema` (reference
pass plus one walker with a small hook and keyword table per dialect) -> `tool_envelope` /
`responses_envelope` (wire objects) -> `lint_tool_list` (whole-request checks).
`decode_call_args` reverses what cleaning did to argument names and optional values;
`aliases` adds Claude-Code parameter aliases and the call-time check that goes with them.
"""

from ..runtime._dialects import DIALECTS
from .aliases import apply_param_aliases, normalize_call_args, required_groups
from .clean import clean_schema
from .decode import decode_call_args
from .envelope import responses_envelope, tool_envelope
from .lint import LintViolation, lint_tool_list
from .model import CleanedSchema, Pointer, SchemaNote
from .normalize import normalize_schema
from .strict_check import check_openai_strict

__all__ = [
    "DIALECTS",
    "CleanedSchema",
    "LintViolation",
    "Pointer",
    "SchemaNote",
    "apply_param_aliases",
    "check_openai_strict",
    "clean_schema",
    "decode_call_args",
    "lint_tool_list",
    "normalize_call_args",
    "normalize_schema",
    "required_groups",
    "responses_envelope",
    "tool_envelope",
]

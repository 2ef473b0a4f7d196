"""Strict argument validation with the generated pydantic models (``models.py``).

The only part of the runtime that needs a third-party package: pydantic v2 is imported on
first use, and a runtime without it says what to install. ``models.py`` is executed from the
very bytes whose sha256 was checked, never re-read through the import system.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any, Final

from . import FILE_SHA256, PACKAGE_NAME, read_verified
from ._errors import InvalidArgumentsError
from ._tables import catalog

PYDANTIC_MISSING: Final = (
    f"{PACKAGE_NAME}: validating tool arguments needs pydantic v2, which is not installed: "
    "pip install 'pydantic>=2' (or pass validate=False to check nothing)"
)
_MODELS: list[types.ModuleType] = []
_MODELS_LOCK: Final = threading.Lock()


def require_pydantic() -> None:
    """Raise ImportError (naming what to install) when pydantic v2 is not importable."""
    try:
        pydantic = importlib.import_module("pydantic")
    except ImportError as exc:
        raise ImportError(PYDANTIC_MISSING) from exc
    if not str(getattr(pydantic, "VERSION", "1")).startswith("2"):
        raise ImportError(PYDANTIC_MISSING)


def _models() -> types.ModuleType:
    """``models.py``, executed from the bytes whose sha256 was checked (once per process)."""
    if not _MODELS:
        with _MODELS_LOCK:
            if not _MODELS:
                _MODELS.append(_load_models())
    return _MODELS[0]


def require_models() -> None:
    """Raise unless arguments can be validated: RuntimeError for a build without models,
    ImportError (naming what to install) without pydantic v2."""
    if "models.py" not in FILE_SHA256:
        raise RuntimeError(
            f"{PACKAGE_NAME} was built without parameter models; rebuild with `toolc build` "
            "to validate arguments"
        )
    require_pydantic()


def _load_models() -> types.ModuleType:
    require_models()
    source = read_verified("models.py")
    package = __name__.rpartition(".")[0]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.py")
    module = types.ModuleType(f"{package}.models")
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
    return module


_CLASSES: dict[str, Any] = {}
_VALIDATION_ERROR: list[type[Exception]] = []


def _model(name: str) -> Any:
    model = _CLASSES.get(name)
    if model is None:
        model = _CLASSES[name] = getattr(_models(), catalog()[name].model)
    return model


def validate_args(name: str, arguments: Mapping[str, Any]) -> Any:
    """Validate a tool's own arguments with its pydantic model from ``models.py``, strictly
    (JSON types as sent: a string is never a boolean or a number).

    Returns the model instance; raises pydantic's ValidationError (a ValueError). pydantic is
    imported on first use only: the rest of the runtime needs nothing but the standard library.
    """
    return _model(name).__pydantic_validator__.validate_json(_json(arguments), strict=True)


def validated_args(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``validate_args``, as the plain values to hand to the tool: exactly the keys that were
    sent (defaults are the tool's business), under their JSON names."""
    model = _model(name)
    instance = model.__pydantic_validator__.validate_json(_json(arguments), strict=True)
    values: dict[str, Any] = model.__pydantic_serializer__.to_python(
        instance, mode="json", by_alias=True, exclude_unset=True
    )
    return values


def checked_args(
    name: str, arguments: Mapping[str, Any], *, label: str | None = None
) -> dict[str, Any]:
    """``validated_args``, with a refusal as InvalidArgumentsError whose message a model can
    act on (each problem's location and pydantic's message, no input values), naming the
    tool ``label`` (the name the model called it by; default ``name``)."""
    try:
        return validated_args(name, arguments)
    except _validation_error() as exc:
        raise _invalid(name, label or name, exc) from exc


def args_checker(
    name: str, *, label: str | None = None
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """``checked_args`` for one tool, its model and pydantic's entry points looked up once
    (what ``wrap`` calls per call; loads the models now)."""
    shown = label or name
    model = _model(name)
    validate = model.__pydantic_validator__.validate_json
    dump = model.__pydantic_serializer__.to_python
    error = _validation_error()

    to_json = _to_json()

    def check(arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            if type(arguments) is dict and _plain_json(arguments, 0):  # _json's first case
                text: str | bytes = to_json(arguments)
            else:
                text = _json(arguments)
            instance = validate(text, strict=True)
            values: dict[str, Any] = dump(instance, mode="json", by_alias=True, exclude_unset=True)
        except error as exc:
            raise _invalid(name, shown, exc) from exc
        return values

    return check


def _invalid(name: str, label: str, exc: Exception) -> InvalidArgumentsError:
    errors = exc.errors(include_input=False)  # type: ignore[attr-defined]
    problems = "; ".join(_problem(error) for error in errors)
    return InvalidArgumentsError(f"Invalid arguments for {label}: {problems}", tool=name)


_PLAIN: Final = (str, int, float, bool, type(None))
_TO_JSON: list[Any] = []


def _to_json() -> Any:
    if not _TO_JSON:
        _TO_JSON.append(importlib.import_module("pydantic_core").to_json)
    return _TO_JSON[0]


def _json(arguments: Mapping[str, Any]) -> str | bytes:
    """The arguments as JSON text. Values of JSON's own types (from a JSON parser or an SDK)
    take pydantic_core's encoder, a tenth of ``json.dumps``'s time; anything else goes
    through ``json.dumps``, which refuses what JSON cannot carry (a set, bytes, a datetime)."""
    if type(arguments) is dict and _plain_json(arguments, 0):
        text: bytes = _to_json()(arguments)
        return text
    return json.dumps(arguments)


def _plain_json(value: object, depth: int) -> bool:
    """Only dicts with string keys, lists and JSON scalars, of exactly those types (no
    subclasses), at most 32 levels deep."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if depth > 32:
        return False
    if kind is dict:
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str or not (type(item) in _PLAIN or _plain_json(item, depth + 1)):
                return False
        return True
    if kind is list:
        return all(_plain_json(item, depth + 1) for item in value)  # type: ignore[attr-defined]
    return False


def _validation_error() -> type[Exception]:
    if not _VALIDATION_ERROR:
        _VALIDATION_ERROR.append(importlib.import_module("pydantic").ValidationError)
    return _VALIDATION_ERROR[0]


def _problem(error: Mapping[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()))
    return f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg", "invalid"))

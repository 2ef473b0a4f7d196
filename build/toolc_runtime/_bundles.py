"""Provider bundles: ready-to-send tool lists per dialect, and decoding a provider's call.

Tool objects for every dialect were cleaned at build time; ``bundles.json`` is read (and its
hash checked) on first use, so runtimes that never send tools do not pay for it. Standard
library only, except ``decode_call(validate=True)``, which validates with pydantic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from . import read_verified
from ._dialects import DialectRegistry
from ._errors import InvalidArgumentsError, ToolError, ToolNotPermittedError, UnknownToolError
from ._params import normalize_call_args
from ._tables import ToolSet
from ._validate import validated_args

_CACHE_LIMIT: Final = 4096
_BUNDLES: list[dict[str, Any]] = []
_DEFS_CACHE: dict[str, dict[int, list[Mapping[str, Any]]]] = {}
_REGISTRY: list[DialectRegistry] = []


def _bundles() -> dict[str, Any]:
    if not _BUNDLES:
        _BUNDLES.append(json.loads(read_verified("bundles.json")))
    return _BUNDLES[0]


def _registry() -> DialectRegistry:
    if not _REGISTRY:
        _REGISTRY.append(DialectRegistry.from_json(_bundles()["providers"]))
    return _REGISTRY[0]


def dialect_for(provider: str | None = None, model: str | None = None) -> str:
    """The schema dialect a provider/model speaks (``providers:`` in the definitions, then
    built-in defaults, then the declared default: ``DialectRegistry.dialect_for``)."""
    return _registry().dialect_for(provider, model)[0]


def tool_definitions(
    toolset: ToolSet,
    provider: str | None = None,
    model: str | None = None,
    *,
    dialect: str | None = None,
    api: str = "chat",
) -> list[Mapping[str, Any]]:
    """The ready-to-send tool list for ``toolset`` (catalog order), cleaned for the provider.

    ``api="responses"`` gives OpenAI's Responses flat form (``strict`` always explicit).
    The returned objects are shared: copy them before mutating.
    """
    chosen = dialect or dialect_for(provider, model)
    key = chosen if api == "chat" else f"{chosen}:{api}"
    by_bits = _DEFS_CACHE.get(key)
    if by_bits is None:
        by_bits = _DEFS_CACHE.setdefault(key, {})
    result = by_bits.get(toolset.bits)
    if result is None:
        bundle = _bundles()["dialects"][chosen]
        source = bundle["tools"] if api == "chat" else bundle[api]
        result = [source[name] for name in toolset.names]
        if len(by_bits) >= _CACHE_LIMIT:
            by_bits.clear()
        by_bits[toolset.bits] = result
    return result


def _decode_value(value: Any, at: str, decode: Mapping[str, Any]) -> Any:
    """Undo Gemini property renames and strict-mode nullables along properties/items."""
    if isinstance(value, list):
        return [_decode_value(v, f"{at}/items" if at else "items", decode) for v in value]
    if not isinstance(value, dict):
        return value
    renames: Mapping[str, str] = decode["renames"].get(at, {})
    nullable: list[str] = decode["nullable"].get(at, [])
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None and key in nullable:
            continue
        child = f"{at}/properties/{key}" if at else f"properties/{key}"
        out[renames.get(key, key)] = _decode_value(item, child, decode)
    return out


_WIRE: dict[str, dict[str, str]] = {}


def _wire_names(dialect: str) -> dict[str, str]:
    """Wire name -> tool name for a dialect (exact: the build refuses colliding names)."""
    reverse = _WIRE.get(dialect)
    if reverse is None:
        wire: dict[str, str] = _bundles()["dialects"][dialect]["wire"]
        reverse = _WIRE[dialect] = {w: n for n, w in wire.items()}
    return reverse


def tool_name_for(wire_name: str, dialect: str) -> str:
    """The tool a wire name stands for in a dialect (UnknownToolError when none)."""
    name = _wire_names(dialect).get(wire_name)
    if name is None:
        raise _not_found(wire_name, dialect)
    return name


def refusal(wire_name: str, dialect: str) -> ToolError:
    """Why a call by ``wire_name`` that the request did not list is refused, in words about
    the name the model used (the only name it knows): no tool has that name in ``dialect``
    (UnknownToolError; it may be another dialect's name, ``read`` where Anthropic is shown
    ``Read``, and calling that tool unavailable would be false), or the tool it names is
    outside the request's set (ToolNotPermittedError, ``tool`` is toolc's name)."""
    name = _wire_names(dialect).get(wire_name)
    if name is None:
        return _not_found(wire_name, dialect)
    return ToolNotPermittedError(f"Tool {wire_name} is not available to this request", tool=name)


def _not_found(wire_name: str, dialect: str) -> UnknownToolError:
    return UnknownToolError(f"Tool {wire_name} not found (dialect {dialect})", tool=wire_name)


def parse_arguments(name: str, arguments: object) -> dict[str, Any]:
    """A call's arguments as a new dict: an object, or its JSON text (OpenAI's
    ``function.arguments``); anything else is InvalidArgumentsError."""
    if type(arguments) is dict:  # the common case, without the ABC check
        return dict(arguments)
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as exc:
            raise InvalidArgumentsError(
                f"{name}: arguments are not valid JSON ({exc})", tool=name
            ) from exc
    if not isinstance(arguments, Mapping):
        raise InvalidArgumentsError(f"{name}: arguments must be a JSON object", tool=name)
    return dict(arguments)


def decode_arguments(name: str, arguments: dict[str, Any], dialect: str) -> dict[str, Any]:
    """Undo what the build did to a tool's parameters for ``dialect`` (Gemini renames,
    strict-mode nullables), then ``apply_aliases``. ``arguments`` may be reused."""
    decode = _decoders(dialect).get(name)
    if decode is not None:
        arguments = _decode_value(arguments, "", decode)
    return apply_aliases(name, arguments)


def decoder(name: str, dialect: str) -> Callable[[dict[str, Any]], Any] | None:
    """``decode_arguments``'s first half for one tool and dialect, looked up once (None:
    nothing to undo)."""
    decode = _decoders(dialect).get(name)
    if decode is None:
        return None
    return lambda arguments: _decode_value(arguments, "", decode)


def alias_shim(name: str) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """``apply_aliases`` for one tool, looked up once (None: the tool has no aliases). It
    maps aliases in place (the caller's dict is its own copy) and hands a call that misses
    a group to ``normalize_call_args`` for its exact message."""
    shim = _shim(name)
    if shim is None:
        return None
    aliases, groups, allow_empty = shim
    renames = tuple(aliases.items())
    checks = tuple((keys, label in allow_empty or keys[0] in allow_empty) for label, keys in groups)

    def apply(arguments: dict[str, Any]) -> dict[str, Any]:
        for alias, canonical in renames:
            if alias in arguments and arguments.get(canonical) is None:
                arguments[canonical] = arguments.pop(alias)
        for keys, blank_ok in checks:
            for key in keys:
                value = arguments.get(key)
                if value is not None and (blank_ok or not isinstance(value, str) or value.strip()):
                    break
            else:
                return normalize_call_args(
                    arguments, aliases, groups, name, allow_empty=allow_empty
                )
        return arguments

    return apply


_Shim = tuple[Mapping[str, str], tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]
_SHIMS: dict[str, _Shim | None] = {}
_DECODERS: dict[str, Mapping[str, Any]] = {}


def _decoders(dialect: str) -> Mapping[str, Any]:
    decoders = _DECODERS.get(dialect)
    if decoders is None:
        decoders = _DECODERS[dialect] = _bundles()["dialects"][dialect]["decode"]
    return decoders


def _shim(name: str) -> _Shim | None:
    """A tool's alias map, required groups and empty-allowed groups (None: no aliases)."""
    try:
        return _SHIMS[name]
    except KeyError:
        raw = _bundles()["aliases"].get(name)
        shim = None
        if raw is not None:
            groups = tuple((label, tuple(keys)) for label, keys in raw["groups"])
            shim = (raw["map"], groups, tuple(raw["allowEmpty"]))
        _SHIMS[name] = shim
        return shim


def apply_aliases(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Map a tool's parameter aliases to their canonical names and check its required groups
    (InvalidArgumentsError with OpenClaw's messages). ``arguments`` may be reused."""
    shim = _shim(name)
    if shim is None:
        return arguments
    aliases, groups, allow_empty = shim
    return normalize_call_args(arguments, aliases, groups, name, allow_empty=allow_empty)


def wire_names(dialect: str) -> Mapping[str, str]:
    """Tool name -> the name it has on the wire in ``dialect``."""
    wire: dict[str, str] = _bundles()["dialects"][dialect]["wire"]
    return wire


def decode_call(  # noqa: PLR0913 - provider and model select the dialect
    wire_name: str,
    arguments: Mapping[str, Any] | str | bytes,
    provider: str | None = None,
    model: str | None = None,
    *,
    dialect: str | None = None,
    toolset: ToolSet | None = None,
    validate: bool = True,
) -> tuple[str, dict[str, Any]]:
    """A provider's tool call -> (canonical tool name, the tool's own validated arguments).

    ``arguments`` is an object or its JSON text (OpenAI's ``function.arguments``). With
    ``toolset``, a call to a tool outside it raises ToolNotPermittedError (a PermissionError):
    a model can only call what this request was given.

    Maps the wire name back exactly (UnknownToolError, a KeyError, when no tool has it),
    reverses Gemini property renames and strict-mode nullables, maps parameter aliases to
    their canonical names and checks required groups (InvalidArgumentsError, a ValueError,
    with OpenClaw's messages), then validates the arguments strictly with the tool's
    generated model and returns the validated values (``validated_args``: pydantic's
    ValidationError when they do not fit; needs pydantic). ``validate=False`` skips that
    last step and returns the decoded arguments unchecked.
    """
    chosen = dialect or dialect_for(provider, model)
    name = tool_name_for(wire_name, chosen)
    if toolset is not None and name not in toolset.names:
        raise refusal(wire_name, chosen)
    args = decode_arguments(name, parse_arguments(wire_name, arguments), chosen)
    if validate:
        return name, validated_args(name, args)
    return name, args

"""Stage 5, render: IR + tables -> a file map ``{relative path: text}``. Nothing is written here."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

import jinja2

from . import __version__
from .analyze import Resolved
from .bundles import Bundles
from .diagnostics import Diagnostic
from .schema.aliases import normalize_call_args
from .schema.models import model_class_name
from .tables import Tables

DEFAULT_PACKAGE = "toolc_runtime"
SOURCES = "sources.json"  # {relative path: text} of the definitions compiled


def dump_json(value: Any) -> str:
    """The one JSON writer: sorted keys, two-space indent, UTF-8, final newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def dump_compact(value: Any) -> str:
    """Large tables: sorted keys, no indentation (still one line per file plus newline)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False) + "\n"


def pystr(value: str) -> str:
    """A double-quoted Python string literal (what ``ruff format`` would write)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


FILTERS: Mapping[str, Callable[..., Any]] = {"pystr": pystr}


def _template_source(name: str) -> str:
    # Templates ship as the package `toolc.templates` (from the repo's templates/ directory).
    return resources.files("toolc.templates").joinpath(name).read_text("utf-8")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_template_source),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, autoescape=False)
    env.filters.update(FILTERS)
    return env


def catalog_json(resolved: Resolved) -> dict[str, Any]:
    return {"tools": [{
        "name": t.name, "label": t.label, "summary": t.summary, "description": t.description,
        "parameters": t.parameters, "ownerOnly": t.owner_only, "plugin": t.plugin,
        "optional": t.optional, "channel": t.channel, "groups": list(t.groups),
        "paramAliases": dict(t.param_aliases), "wireNames": dict(t.wire_names),
        "model": model_class_name(t.name),
    } for t in resolved.tools]}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render(resolved: Resolved, tables: Tables, bundles: Bundles, models: str | None, *,
           package: str = DEFAULT_PACKAGE,
           warnings: Sequence[Diagnostic] = ()) -> dict[str, str]:
    """Every file of ``build/`` as text, keyed by path relative to the output directory."""
    data = {"catalog.json": dump_json(catalog_json(resolved)),
            "tables.json": dump_compact(tables.data),
            "bundles.json": dump_compact(bundles.data)}
    checked = {**data, **({"models.py": models} if models is not None else {})}
    hashes = sorted((name, sha256(text)) for name, text in checked.items())
    runtime = environment().get_template("runtime.py.jinja").render(
        package_name=package, toolc_version=__version__, hashes=hashes,
        normalize_call_args_source=inspect.getsource(normalize_call_args).rstrip())
    files = {f"{package}/{name}": text for name, text in data.items()}
    files[f"{package}/__init__.py"] = runtime
    files[f"{package}/py.typed"] = ""
    if models is not None:
        files[f"{package}/models.py"] = models
    files["schema-notes.json"] = dump_json(bundles.notes)
    # The definitions themselves, so that `toolc explain --build` needs nothing but build/.
    files[SOURCES] = dump_json(dict(resolved.defs.texts))
    files["manifest.json"] = dump_json({
        "toolc": __version__, "package": package,
        "sources": list(resolved.defs.files),
        "files": {path: sha256(text) for path, text in sorted(files.items())},
        "tables": tables.counts,
        # Without positions: `toolc diff` compares them, and unrelated edits move lines.
        "warnings": [{"code": c, "message": m}
                     for c, m in sorted({(d.code, d.message) for d in warnings})],
    })
    return files

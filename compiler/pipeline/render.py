"""Stage 5, render: IR + tables -> a file map ``{relative path: text}``. Nothing is written here."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from json.encoder import encode_basestring  # ensure_ascii=False's string writer
from typing import Any

import jinja2

from .._version import __version__
from ..diagnostics import Diagnostic
from ..runtime import EAGER_THROUGH, EXPORTS, INTEGRATIONS, MODULES
from ..schema.models import model_class_name
from .analyze import Resolved
from .bundles import Bundles
from .routing import ROUTES, dump_routes, routes_json

DEFAULT_PACKAGE = "toolc_runtime"
LINE_LENGTH = 100  # the generated Python's, as ruff checks it
SOURCES = "sources.json"  # before sources/: {relative path: text} of the definitions compiled
SOURCES_DIR = "sources"  # sources/<relative path>: each definitions file compiled, as read


def dump_json(value: Any) -> str:
    """The one JSON writer: sorted keys, two-space indent, UTF-8, final newline. The text is
    ``json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)``'s
    (a test compares them); written here because the standard library's C encoder does not
    indent, and its Python one takes twice as long over a manifest of 25,000 warnings."""
    out: list[str] = []
    try:
        _indented(value, out, "\n")
    except _Unusual:
        return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False,
                          allow_nan=False) + "\n"
    out.append("\n")
    return "".join(out)


class _Unusual(Exception):
    """A key that is not a string: the standard library's writer decides what it becomes."""


def _indented(value: Any, out: list[str], newline: str) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner, sep = newline + "  ", "{"
        for key in sorted(value):
            if not isinstance(key, str):
                raise _Unusual
            out.append(f"{sep}{inner}{encode_basestring(key)}: ")
            _indented(value[key], out, inner)
            sep = ","
        out.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner, sep = newline + "  ", "["
        for item in value:
            out.append(sep + inner)
            _indented(item, out, inner)
            sep = ","
        out.append(newline + "]")
    else:  # numbers, booleans, null (and what json refuses, refused alike)
        out.append(json.dumps(value, allow_nan=False))


def dump_compact(value: Any) -> str:
    """Large tables: sorted keys, no indentation (still one line per file plus newline)."""
    return _compact(value) + "\n"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def compact_members(value: Mapping[str, Any]) -> dict[str, str]:
    """An object's members with their values as ``dump_compact`` writes them: an object
    some of whose members were written earlier (``join_members``)."""
    return {key: _compact(item) for key, item in value.items()}


def join_members(members: Mapping[str, str]) -> str:
    """The ``dump_compact`` text (without its newline) of an object whose members' values
    are written already (``compact_members``): sorted keys, as ``sort_keys`` sorts them."""
    return "{" + ",".join(f"{pystr(key)}:{members[key]}" for key in sorted(members)) + "}"


def dump_bundles(value: Any) -> str:
    """``bundles.json``: as ``dump_compact``, except that a schema's ``properties`` keep their
    order (the author's, or the one strict-mode cleaning chose so that ``anyOf`` branches do
    not share a first key): the order is part of what the provider is sent."""
    return json.dumps(_sorted_but_properties(value), separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False) + "\n"


def _sorted_but_properties(value: Any, keep_order: bool = False) -> Any:
    if isinstance(value, dict):
        keys = list(value) if keep_order else sorted(value)
        return {k: _sorted_but_properties(value[k], k == "properties" and not keep_order)
                for k in keys}
    if isinstance(value, list):
        return [_sorted_but_properties(v) for v in value]
    return value


def pystr(value: str) -> str:
    """A double-quoted Python string literal (what ``ruff format`` would write)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


# What JSON may hold inside its strings that HTML reads as markup: inside a <script> element
# "</script" ends it early and "<!--" then "<script" switch the tokenizer into the
# double-escaped state, where the element's own "</script>" no longer ends it (the page after
# it becomes script text). JSON has these characters only inside strings, where the \u
# escape means the same character, so escaping every one keeps the value.
_HTML_UNSAFE = (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"))


def script_json(value: Any) -> str:
    """JSON to embed in an HTML ``<script>`` element (the one writer for every such page):
    compact, sorted keys, and nothing the HTML tokenizer reads: ``<``, ``>`` and ``&`` as
    ``\\u003c``, ``\\u003e``, ``\\u0026``, and everything outside ASCII (U+2028 and U+2029
    among it, line ends to pre-2019 JavaScript parsers) as ``\\u`` escapes, so the text is
    the same in any encoding. ``json.loads`` gives the value back."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    for char, escaped in _HTML_UNSAFE:  # three C-speed passes: the report's JSON is ~20 MB
        text = text.replace(char, escaped)
    return text


FILTERS: Mapping[str, Callable[..., Any]] = {"pystr": pystr, "script_json": script_json}


def _template_source(name: str) -> str:
    # Templates ship as the package `toolc.templates` (from the repo's templates/ directory).
    return resources.files("toolc.templates").joinpath(name).read_text("utf-8")


@functools.cache
def environment() -> jinja2.Environment:
    """One environment per process: it caches the parsed templates."""
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
        "externalContent": t.external_content, "model": model_class_name(t.name),
        # only on imported MCP tools, so every other build's catalog.json stays as it was
        **({"upstreamSha256": t.upstream_sha256} if t.upstream_sha256 else {}),
    } for t in resolved.tools]}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def static_modules() -> dict[str, str]:
    """The runtime's static modules (``toolc.runtime``) and its framework integrations
    (``toolc.runtime.integrations``), copied into every build verbatim."""
    root = resources.files("toolc.runtime")
    extras = root.joinpath("integrations")
    return {
        **{f"{name}.py": root.joinpath(f"{name}.py").read_text("utf-8") for name in MODULES},
        **{f"integrations/{name}.py": extras.joinpath(f"{name}.py").read_text("utf-8")
           for name in INTEGRATIONS},
    }


BODY_MARKER = "# -- BODY:"


def bootstrap_body() -> str:
    """The loader that the generated ``__init__.py`` runs: ``toolc.runtime.bootstrap`` from
    its BODY marker on."""
    text = resources.files("toolc.runtime").joinpath("bootstrap.py").read_text("utf-8")
    body = text[text.index(BODY_MARKER):]
    return body[body.index("\n") + 1:].rstrip()


def _import_order(names: Iterable[str]) -> list[str]:
    """isort's order by type, as ruff checks it: CONSTANTS, then Classes, then functions."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


INIT_TEMPLATE = "__init__.py.jinja"


def render_init(package: str, hashes: list[tuple[str, str]]) -> str:
    """The generated ``__init__.py``: this build's values, the loader, the public names."""
    eager_modules = MODULES[:MODULES.index(EAGER_THROUGH) + 1]
    eager = [(m, _import_order(EXPORTS[m])) for m in sorted(EXPORTS) if m in eager_modules]
    lazy_imports = [(m, _import_order(EXPORTS[m])) for m in sorted(EXPORTS)
                    if m not in eager_modules]
    lazy = sorted((name, m) for m, names in lazy_imports for name in names)
    public = _import_order(["DataMismatchError", "PACKAGE_NAME", "TOOLC_VERSION",
                            *(n for names in EXPORTS.values() for n in names)])
    # an entry longer than a line (ruff's 100) is written as ruff format writes it
    entries = [(n, d, len(f"    {pystr(n)}: {pystr(d)},") > LINE_LENGTH) for n, d in hashes]
    return environment().get_template(INIT_TEMPLATE).render(
        package_name=package, toolc_version=__version__, hashes=entries, modules=MODULES,
        lazy=lazy, bootstrap=bootstrap_body(), eager_through=EAGER_THROUGH, eager=eager,
        lazy_imports=lazy_imports, public=public)


# The files that depend on nothing but the base (``base_texts``), relative to the package,
# except schema-notes.json (beside it).
CATALOG, BUNDLES, MODELS, NOTES = "catalog.json", "bundles.json", "models.py", "schema-notes.json"


def base_texts(resolved: Resolved, bundles: Bundles, models: str | None) -> dict[str, str]:
    """The files that read nothing in the channels but their names: the catalog, the
    provider bundles and their notes, the routes, the parameter models (``models`` None:
    none)."""
    texts = {CATALOG: dump_json(catalog_json(resolved)), BUNDLES: dump_bundles(bundles.data),
             NOTES: dump_json(bundles.notes), ROUTES: dump_routes(routes_json(resolved))}
    if models is not None:
        texts[MODELS] = models
    return texts


def base_files(texts: Mapping[str, str], package: str = DEFAULT_PACKAGE) -> dict[str, str]:
    """The files of ``build/`` that depend on the base alone, by path relative to the output
    directory: ``base_texts`` and the runtime's static modules (written while the units
    compile)."""
    files = {f"{package}/{name}": text for name, text in static_modules().items()}
    files[f"{package}/{CATALOG}"] = texts[CATALOG]
    files[f"{package}/{BUNDLES}"] = texts[BUNDLES]
    files[f"{package}/{ROUTES}"] = texts[ROUTES]
    if MODELS in texts:
        files[f"{package}/{MODELS}"] = texts[MODELS]
    files[f"{package}/py.typed"] = ""
    files[NOTES] = texts[NOTES]
    return files


def render(resolved: Resolved, tables: str, *, package: str = DEFAULT_PACKAGE,
           written: Mapping[str, str], shards: Mapping[str, str],
           sources: Mapping[str, str], counts: Mapping[str, int],
           warnings: Sequence[Diagnostic] = (), access: str | None = None,
           provenance: str | None = None, inputs: str | None = None) -> dict[str, str]:
    """The files of ``build/`` that are not already written, as text, keyed by path relative
    to the output directory. ``written`` (the ``base_files``), ``shards`` and ``sources``
    name the others with their sha256, which the manifest and the runtime's ``__init__.py``
    list: the table and provenance shards, relative to the runtime package, and the
    definitions, by relative path. ``tables``: ``tables.json``'s text (``split_tables`` and
    each channel's entry); ``provenance``: ``provenance.json``'s, the decision log's layer
    records (``toolc.pipeline.provenance``); ``inputs``: the inputs digest the manifest
    records."""
    data = {"tables.json": tables + "\n",
            **({"provenance.json": provenance + "\n"} if provenance is not None else {})}
    files = {f"{package}/{name}": text for name, text in data.items()}
    digests = {path: sha256(text) for path, text in files.items()}
    digests.update(written)
    # every file of the package the loader reads, with its sha256 (py.typed: none)
    inside = f"{package}/"
    hashes = sorted([*((path.removeprefix(inside), digest) for path, digest in digests.items()
                       if path.startswith(inside) and path != f"{inside}py.typed"),
                     *shards.items()])
    files[f"{package}/__init__.py"] = render_init(package, hashes)
    if access is not None:
        files["ACCESS.md"] = access
    digests.update((path, sha256(files[path])) for path in files if path not in digests)
    digests.update((f"{package}/{name}", digest) for name, digest in shards.items())
    # The definitions themselves, so that `toolc explain --build` needs nothing but build/.
    digests.update((f"{SOURCES_DIR}/{rel}", digest) for rel, digest in sources.items())
    manifest = {
        "toolc": __version__, "package": package,
        # the OpenClaw release whose semantics the tables follow
        "target": {"openclaw": resolved.target.key, "release": resolved.target.release},
        "sources": list(resolved.defs.files),
        "files": dict(sorted(digests.items())),
        "tables": dict(counts),
    }
    if inputs is not None:
        # about the files on disk, not the definitions' meaning (``toolc.builds.compile``)
        manifest["inputs_sha256"] = inputs
    # Without positions: `toolc diff` compares them, and unrelated edits move lines.
    found = sorted({(d.code, d.message) for d in warnings})
    files["manifest.json"] = manifest_json(manifest, found)
    return files


def manifest_json(manifest: Mapping[str, Any], warnings: Sequence[tuple[str, str]]) -> str:
    """``dump_json`` of ``manifest`` with ``"warnings"``: ``[{"code", "message"}, ...]``
    (the key every other key sorts before), the warnings written as their one shape: a
    build's manifest lists tens of thousands."""
    assert all(key < "warnings" for key in manifest)
    if not manifest:
        return dump_json({"warnings": [{"code": c, "message": m} for c, m in warnings]})
    head = dump_json(manifest)
    if not warnings:
        return head[:-3] + ',\n  "warnings": []\n}\n'
    items = ",\n".join(
        f'    {{\n      "code": {encode_basestring(code)},\n'
        f'      "message": {encode_basestring(message)}\n    }}' for code, message in warnings)
    return head[:-3] + ',\n  "warnings": [\n' + items + "\n  ]\n}\n"

"""toolc: ahead-of-time compiler for LLM-agent tool policies.

``toolc`` re-exports the public API, ``toolc.api``, lazily (PEP 562): ``import toolc`` loads
only the version, and ``toolc.build`` (or any other name of ``toolc.api.__all__``) imports the
API on first use, so the CLI's cold start pays only for what a command uses. A subpackage keeps
its own name (``toolc.schema`` is the dialects package; the function is ``toolc.api.schema``).

The package map, top layer first; a module imports only from layers below its own, and serve,
review and importers not from each other (the import-linter contract in pyproject.toml, run by
tests/test_layers.py):

  cli/           click commands, one module per command family: argv in, output and exit code
                 out; parsing and printing only, every answer comes from api.
  api/           the public Python API: everything the CLI does as functions with typed results
                 (build, resolve, explain, schema, diff, init, import, serve-mcp), over the below.
  serve/         serve-mcp: build dir + identities in, MCP tools out (options: what it is asked
                 for, checked; mcp_server, mcp_build: one loaded build and its views,
                 mcp_identity, mcp_upstream: the proxied upstream servers; also import-mcp's
                 client).
  review/        toolc diff: two revisions in (compiled via builds), access delta and words out.
  importers/     OpenClaw config / the shipped starter in, definitions/ YAML files out.
  ship/          signed builds and OCI registries: keygen, sign, verify (JWS over the
                 manifest), push, pull and serve-mcp's registry poller (extras sign, oci).
  builds/        definitions dir in, file map / build dir / resolved definitions out (compile,
                 over the stages; incremental, stream and cache: the channel files compiled
                 on their own and the build cache); reads a build back with the one check of
                 its files, manifest and runtime digests (read).
  audit/         one compiled build in: assertions and lints (checks), explain, declared-context
                 warnings, access sets in words, ACCESS.md (access_md).
  semantics/     what a policy means: the reference interpreter (Resolved + Context -> Resolution),
                 access sets and their factored evaluation over the compiled tables.
  pipeline/      load -> model -> analyze -> policy layers -> tables -> bundles -> render -> write:
                 YAML in, the {path: text} file map out, published atomically by writer; a
                 stage takes the build cache as a protocol (memo), never the cache itself.
  rules/         OpenClaw's vocabulary as data: names, per-channel rules, context classes (a new
                 release target changes these tables and switches, not the stages above).
  schema/        provider schema dialects: JSON Schema in, cleaned provider schemas + models out.
  runtime/       the stdlib-only generated runtime, copied verbatim into every build;
                 runtime/integrations/ plugs it into agent frameworks (each imports its own).
  diagnostics, locks, _version: shared at the bottom (no toolc imports).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__ as __version__


def _api() -> Any:
    return importlib.import_module(".api", __name__)


def __getattr__(name: str) -> Any:
    """A name of ``toolc.api`` (and ``__all__``: the API's and ``__version__``), imported
    on first use."""
    if name == "__all__":
        return [*_api().__all__, "__version__"]
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    api = _api()
    if name in globals():  # a subpackage the API's import brought in (``from toolc import api``)
        return globals()[name]
    if name not in api.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(api, name)
    globals()[name] = value  # found once: the next lookup does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_api().__all__})

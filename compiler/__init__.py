"""toolc: ahead-of-time compiler for LLM-agent tool policies.

The package map, top layer first; a module imports only from layers below its own, and serve,
review and importers not from each other (the import-linter contract in pyproject.toml, run by
tests/test_layers.py):

  cli/           click commands, one module per command family: argv in, output and exit code
                 out; parsing and printing only, every answer comes from api.
  api/           the public Python API: everything the CLI does as functions with typed results
                 (build, resolve, explain, schema, diff, init, import, serve-mcp), over the below.
  serve/         serve-mcp: build dir + identities in, MCP tools out (mcp_server, mcp_identity,
                 mcp_upstream: the proxied upstream servers; also import-mcp's client).
  review/        toolc diff: two revisions in (compiled via builds), access delta and words out.
  importers/     OpenClaw config / the shipped starter in, definitions/ YAML files out.
  ship/          signed builds and OCI registries: keygen, sign, verify (JWS over the
                 manifest), push, pull and serve-mcp's registry poller (extras sign, oci).
  builds         definitions dir in, file map / build dir / resolved definitions out; reads a
                 build back with the one check of its files (manifest and runtime digests).
  audit/         one compiled build in: assertions and lints (checks), explain, declared-context
                 warnings, access sets in words, ACCESS.md (access_md).
  semantics/     what a policy means: the reference interpreter (Resolved + Context -> Resolution),
                 access sets and their factored evaluation over the compiled tables.
  pipeline/      load -> model -> analyze -> policy layers -> tables -> bundles -> render -> write:
                 YAML in, the {path: text} file map out, published atomically by writer.
  rules/         OpenClaw's vocabulary as data: names, per-channel rules, context classes (a new
                 release target changes these tables and switches, not the stages above).
  schema/        provider schema dialects: JSON Schema in, cleaned provider schemas + models out.
  runtime/       the stdlib-only generated runtime, copied verbatim into every build;
                 runtime/integrations/ plugs it into agent frameworks (each imports its own).
  diagnostics, locks, _version: shared at the bottom (no toolc imports).
"""

from __future__ import annotations

from ._version import __version__
from .builds import (
    BuildResult,
    build,
    load_reference,
    reference_resolve,
    resolve_definitions,
    validate,
)
from .diagnostics import DefinitionsError, Diagnostic
from .semantics.reference import ReferenceInterpreter

__all__ = [
    "BuildResult",
    "DefinitionsError",
    "Diagnostic",
    "ReferenceInterpreter",
    "__version__",
    "build",
    "load_reference",
    "reference_resolve",
    "resolve_definitions",
    "validate",
]

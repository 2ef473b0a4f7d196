"""toolc's public Python API: everything the ``toolc`` command does, as functions with typed
results (the CLI, ``toolc.cli``, only parses arguments and prints these).

Build:    ``validate``, ``build``, ``check_build`` (``build --check``), ``compile_files`` (the
          file map), ``resolve_definitions``; ``read_manifest``, ``read_build_file`` and
          ``verify_build`` read a build back, checked as its runtime checks its files.
Query:    ``resolve`` (the tools a request sees), ``explain`` (why one is kept or removed),
          ``route`` (the agent and session key of a message, and the binding that decided),
          ``schema`` / ``load_schemas`` (a tool in a provider's dialect), ``load_runtime``,
          ``load_reference`` and ``reference_resolve`` (the reference interpreter).
Review:   ``diff`` (who gains or loses which tool between two revisions), ``render_diff``.
Project:  ``init`` (the starter), ``import_openclaw_config``, ``migrate`` (to a newer OpenClaw
          release, with the access diff it causes), ``schema_path``.
MCP:      ``serve_mcp`` (``serve_with``: its options as one ``ServeOptions``), ``add_identity``,
          ``import_mcp`` (need the extra ``toolc[mcp]``).
Ship:     ``keygen``, ``sign``, ``verify`` (the extra ``toolc[sign]``), ``push``, ``pull``
          (``toolc[oci]``): signed builds through an OCI registry.

Errors: DefinitionsError (its ``diagnostics``), BuildError (a missing or modified build;
SignatureError, an unsigned or wrongly signed one, is one), RegistryError,
ValueError subclasses for arguments that cannot be used (RequestError: a message the build
cannot take), AgentSelectionRequiredError (a ValueError: a 2026.9 request whose agent the
definitions cannot choose, or a message no binding routes), UntrustedGroupError (a ValueError:
a 2026.9 context naming a group its session key does not name, which the release would
ignore), InternalError (a bug in toolc).
A request's context is a dict of ``toolc.rules.context.CONTEXT_KEYS`` (``agent_id``,
``message_provider``, ``group_id``, ``sender_id``, ...); a message-level request is a dict of
``toolc.rules.context.MESSAGE_KEYS`` (``toolc_runtime.Request``'s fields: ``channel``,
``peer``, ``sender_id``, ...), routed first.
"""

from __future__ import annotations

from ..audit.explain import Explanation, UnknownToolError
from ..builds.compile import (
    BuildResult,
    CheckResult,
    build,
    check_build,
    check_package_name,
    compile_files,
    load_reference,
    reference_resolve,
    resolve_definitions,
    stamped_files,
    validate,
)
from ..builds.incremental import build_is_current, inputs_digest
from ..builds.read import (
    BUILD_SOURCES_ROOT,
    BuildError,
    VerifiedBuild,
    read_build_file,
    read_manifest,
    resolve_build,
    runtime_digests,
    verify_build,
)
from ..diagnostics import DefinitionsError, Diagnostic
from ..importers.migrate import MigrationError
from ..importers.openclaw import ConfigError, ImportRefused, ImportResult
from ..importers.starter import ProjectWriteError, schema_path
from ..locks import LockTimeoutError
from ..pipeline.render import DEFAULT_PACKAGE
from ..pipeline.writer import OutputDirError
from ..review.diff import DiffInputError, DiffResult, render_diff
from ..review.report import Report
from ..runtime._errors import AgentSelectionRequiredError, UntrustedGroupError
from ..semantics.reference import ReferenceInterpreter, Resolution
from ..serve.mcp_identity import IdentitiesError
from ..serve.options import HTTP_STACKS, ServeOptionError, ServeOptions
from ..targets import KEYS as OPENCLAW_RELEASES
from ..targets import NEWEST_KEY as NEWEST_OPENCLAW
from .project import InitResult, MigrateResult, import_openclaw_config, init, migrate
from .query import (
    ENGINES,
    ExplainResult,
    InternalError,
    ResolveResult,
    Schemas,
    Source,
    ToolSchema,
    dialect_reason,
    explain,
    explain_from,
    explain_source,
    load_runtime,
    load_schemas,
    read_tables,
    resolve,
    resolve_from,
    resolve_source,
    route,
    route_from,
    schema,
)
from .review import diff, report
from .routing import RequestError, RouteResult, peer_pair
from .serve import (
    EXTRAS,
    ImportedTools,
    McpError,
    MissingExtraError,
    add_identity,
    import_mcp,
    serve_mcp,
    serve_with,
)
from .ship import (
    RegistryError,
    SignatureError,
    keygen,
    pull,
    push,
    sign,
    target_text,
    verify,
)

__all__ = [
    "BUILD_SOURCES_ROOT",
    "DEFAULT_PACKAGE",
    "ENGINES",
    "EXTRAS",
    "HTTP_STACKS",
    "NEWEST_OPENCLAW",
    "OPENCLAW_RELEASES",
    "AgentSelectionRequiredError",
    "BuildError",
    "BuildResult",
    "CheckResult",
    "ConfigError",
    "DefinitionsError",
    "Diagnostic",
    "DiffInputError",
    "DiffResult",
    "ExplainResult",
    "Explanation",
    "IdentitiesError",
    "ImportRefused",
    "ImportResult",
    "ImportedTools",
    "InitResult",
    "InternalError",
    "LockTimeoutError",
    "McpError",
    "MigrateResult",
    "MigrationError",
    "MissingExtraError",
    "OutputDirError",
    "ProjectWriteError",
    "ReferenceInterpreter",
    "RegistryError",
    "Report",
    "RequestError",
    "Resolution",
    "ResolveResult",
    "RouteResult",
    "Schemas",
    "ServeOptionError",
    "ServeOptions",
    "SignatureError",
    "Source",
    "ToolSchema",
    "UnknownToolError",
    "UntrustedGroupError",
    "VerifiedBuild",
    "add_identity",
    "build",
    "build_is_current",
    "check_build",
    "check_package_name",
    "compile_files",
    "dialect_reason",
    "diff",
    "explain",
    "explain_from",
    "explain_source",
    "import_mcp",
    "import_openclaw_config",
    "init",
    "inputs_digest",
    "keygen",
    "load_reference",
    "load_runtime",
    "load_schemas",
    "migrate",
    "peer_pair",
    "pull",
    "push",
    "read_build_file",
    "read_manifest",
    "read_tables",
    "reference_resolve",
    "render_diff",
    "report",
    "resolve",
    "resolve_build",
    "resolve_definitions",
    "resolve_from",
    "resolve_source",
    "route",
    "route_from",
    "runtime_digests",
    "schema",
    "schema_path",
    "serve_mcp",
    "serve_with",
    "sign",
    "stamped_files",
    "target_text",
    "validate",
    "verify",
    "verify_build",
]

"""The generated runtime's code, as real modules that ruff, mypy and the tests see.

``toolc build`` copies every module named in ``MODULES`` verbatim into ``build/<package>/``
and renders the package's ``__init__.py``: the generated values (package name, toolc version,
the sha256 of every file the runtime reads or executes) followed by the body of
``bootstrap.py``, which executes those modules from the very bytes it verified. ``EXPORTS``
is the public API, module by module; the modules up to ``EAGER_THROUGH`` load at import (what
``resolve`` needs), each later one when one of its names is first used, so importing stays
fast and code that is never used is never compiled.

``INTEGRATIONS`` are the framework integrations (``integrations/``: pydantic-ai, the OpenAI
Agents SDK, LangChain), copied and verified the same way and imported by name
(``<package>.integrations.langchain``) through the package's finder; each imports its
framework when it is used, never at the runtime's import.

Here, ``from . import read_verified`` (and the other names a static module takes from its
package) resolves to ``bootstrap``'s placeholders; in a build, to the generated ``__init__.py``,
which holds the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .bootstrap import FILE_SHA256 as FILE_SHA256
from .bootstrap import PACKAGE_NAME as PACKAGE_NAME
from .bootstrap import DataMismatchError as DataMismatchError
from .bootstrap import read_verified as read_verified

# Load order: a module imports only modules before it (a test checks).
MODULES: Final = (
    "_errors",
    "_params",
    "_tables",
    "_shards",
    "_sessions",
    "_groups",
    "_policy",
    "_route",
    "_validate",
    "_dialects",
    "_bundles",
    "_results",
    "_abort",
    "_context",
    "_shell",
    "_hostenv",
    "_steps",
    "_hooks",
    "_approvals",
    "_decisions",
    "_wrap",
    "_prompt",
    "_adapters",
)
EAGER_THROUGH: Final = "_policy"
INTEGRATIONS: Final = ("__init__", "langchain", "openai_agents", "pydantic_ai")
EXPORTS: Final[Mapping[str, tuple[str, ...]]] = {
    "_errors": (
        "AbortError",
        "AgentSelectionRequiredError",
        "ExecDeniedError",
        "InvalidArgumentsError",
        "ToolBlockedError",
        "ToolError",
        "ToolNotPermittedError",
        "UnknownToolError",
        "UntrustedGroupError",
    ),
    "_tables": ("TOOL_NAMES", "ToolDefinition", "ToolSet"),
    "_policy": ("resolve", "resolve_uncached"),
    "_route": ("Peer", "Request", "Route", "resolve_message", "resolve_request", "route"),
    "_validate": ("validate_args", "validated_args"),
    "_bundles": ("decode_call", "dialect_for", "tool_definitions"),
    "_results": (
        "ImageContent",
        "TextContent",
        "ToolResult",
        "error_result",
        "image_result",
        "json_result",
        "text_result",
        "wrap_untrusted",
    ),
    "_abort": ("AbortSignal",),
    "_context": ("CallContext", "ModelCall", "ToolCall"),
    "_shell": ("CommandAnalysis", "analyze_command"),
    "_hooks": (
        "AfterToolCallEvent",
        "BeforeToolCallEvent",
        "BeforeToolCallResult",
        "HookContext",
        "HookRunner",
    ),
    "_approvals": (
        "ApprovalManager",
        "ApprovalRecord",
        "ApprovalWaiter",
        "Decision",
        "ExecApprovalRequest",
        "ExecPolicy",
        "ExecVerdict",
        "allow_always_pattern",
        "allow_always_scope",
        "evaluate_exec",
        "exec_policy",
        "request_digest",
        "requires_approval",
    ),
    "_decisions": (
        "DecisionLog",
        "FileSink",
        "OtelSink",
        "RequestLog",
        "StdoutSink",
        "deciding_layer",
    ),
    "_wrap": ("Approver", "WrappedTool", "WrappedTools", "wrap"),
    "_prompt": ("system_prompt_tools",),
    "_adapters": ("anthropic_messages", "gemini", "openai_chat", "openai_responses"),
}

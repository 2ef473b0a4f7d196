"""toolc: ahead-of-time compiler for LLM-agent tool policies."""

from __future__ import annotations

__version__ = "0.1.0"

from .api import (
    BuildResult,
    build,
    load_reference,
    reference_resolve,
    resolve_definitions,
    validate,
)
from .diagnostics import DefinitionsError, Diagnostic
from .reference import ReferenceInterpreter

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

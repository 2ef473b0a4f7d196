"""Builds: definitions compiled into a build directory, and builds read back checked.

  compile      validate, build, ``build --check`` and the file map: drives the pipeline's
               stages over the base and the channel files, then the steps over everything.
  incremental  the inputs digest (the no-op check), the cache salt, the last build's base and
               the context each unit compiles in.
  stream       channel files compiled on their own, in forked workers: a million groups in
               bounded memory, and rebuilds that redo only the file that changed.
  cache        the incremental build cache: content-addressed, HMAC-signed unit results.
  read         a build read back, each file checked against its manifest and the runtime's
               own digests (the one check for every reader), its tables and its sources.

The public face is ``toolc.api``; the entry points below are re-exported for toolc's own
layers above this one.
"""

from __future__ import annotations

from .compile import (
    BuildResult,
    CheckResult,
    build,
    check_build,
    compile_files,
    resolve_definitions,
    validate,
)
from .read import BuildError, OpenedBuild, VerifiedBuild, open_build, read_tables, verify_build

__all__ = [
    "BuildError",
    "BuildResult",
    "CheckResult",
    "OpenedBuild",
    "VerifiedBuild",
    "build",
    "check_build",
    "compile_files",
    "open_build",
    "read_tables",
    "resolve_definitions",
    "validate",
    "verify_build",
]

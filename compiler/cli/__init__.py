"""The ``toolc`` command line: a thin click layer over ``toolc.api`` (argv in, output and exit
code out), one module per command family: build (build, validate), query (resolve, explain,
schema), review (diff), project (init, import-openclaw, schema-path), serve (serve-mcp,
identity, import-mcp), ship (keygen, sign, verify, push, pull); _app holds the group and what
they share.

Exit codes: 0 ok; 1 errors in the definitions, a stale build under --check, a missing or
modified build directory, another build holding the output past --lock-timeout, or (explain)
a tool that is not visible; 2 usage errors, including a missing optional extra (the message
names it, e.g. ``toolc[mcp]``); 4 internal failure (a bug in toolc: please report it with
what it prints); 141 the reader closed the output pipe (``| head``), nothing printed.
``toolc diff`` has its own: 0 no access change, 2 access changed, 3 widened under
``--fail-on widen``, 1 errors (also a build that fails verification).

Colour: diagnostics and explain use colour on a terminal; ``NO_COLOR`` (any value) turns it
off, ``FORCE_COLOR`` (any value but ``0``) turns it on where the stream is not a terminal.
"""

from __future__ import annotations

# Each family module registers its commands on the group as it is imported.
from . import build, project, query, review, serve, ship
from ._app import main

__all__ = ["build", "main", "project", "query", "review", "serve", "ship"]

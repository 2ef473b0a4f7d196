"""Names from the definitions in Markdown (``toolc diff --format markdown``, ``ACCESS.md``).

A name in a definitions file is whatever YAML allows: backticks, brackets, ``<script>``,
``@team``, ``#123``, a URL, a newline followed by a fenced-code or heading line. Printed into
Markdown as is, it closes a code span, adds a link or an image, pings a GitHub team, or
breaks out of a table row. Every name (and every phrase that contains names) is therefore
printed as one code span, the only inline construct whose content GitHub renders literally:
no emphasis, links, images, HTML, autolinks, @-mentions, #-references or emoji inside it.
What a code span cannot hold is made visible first: line breaks and other control or
invisible characters (which would end the table row or the list item, or reorder text) are
written as ``\\n`` or ``\\u202e``.
"""

from __future__ import annotations

import re
import unicodedata

_BACKTICKS = re.compile(r"`+")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    """``text`` with line breaks, control and invisible format characters (bidi overrides,
    zero-width spaces, line and paragraph separators) written as escapes."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
            out.append(_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
    return "".join(out)


def code(text: str, *, table: bool = False) -> str:
    """``text`` as one inline code span that renders exactly ``visible(text)``; ``table``
    when it goes into a table cell (``|`` would end the cell even inside the span)."""
    body = visible(text)
    if not body:
        return "(empty)"
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end when both ends have one: pad so that what
    # is stripped is the padding, and so a leading or trailing backtick is not the fence.
    pad = " " if body[0] in "` " or body[-1] in "` " else ""
    if table:
        body = body.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def codes(items: list[str], *, table: bool = False, empty: str = "(none)") -> str:
    """A comma-separated list of code spans, or ``empty``."""
    return ", ".join(code(i, table=table) for i in items) if items else empty

"""The markdown report.md is written in, as HTML: report.html shows the same sections rendered.

Rendered by markdown-it-py (CommonMark with pipe tables), so fences, lists and tables render as
any markdown viewer shows them. The text inside is a report's own (programs, error messages,
expressions such as `2*s0 + 3*s1`), so the rules that would rewrite such text are off: raw HTML
(a hostile string stays text), emphasis (`*` and `_` are arithmetic and names here), setext
headings, link reference definitions, images, backslash escapes and entities. Links keep
markdown-it's own check (no javascript:/data: hrefs); a paragraph's line breaks are kept."""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt

__all__ = ["fence", "to_html"]

#: the CommonMark rules that would change what a report's text says (see the module docstring)
_OFF = ["emphasis", "lheading", "reference", "image", "escape", "entity"]


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table").disable(_OFF)
    # a wide table scrolls inside its own box instead of widening the page
    md.add_render_rule("table_open", lambda self, tokens, idx, options, env: "<div class='wide'><table>\n")
    md.add_render_rule("table_close", lambda self, tokens, idx, options, env: "</table></div>\n")
    return md


def to_html(md: str) -> str:
    return _parser().render(md)


def fence(text: str, info: str = "") -> list[str]:
    """`text` as a fenced code block, the fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + info, text, ticks]

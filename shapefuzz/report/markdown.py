"""The markdown report.md is written in, as HTML (report.html shows the same sections rendered).

Only the subset render_md writes: headings, paragraphs, `- ` lists, ``` fences, pipe tables,
`code` and [text](href) links. Everything is escaped first, so a hostile string in a report
(a program, an error message) stays text; a link's href is kept only when it is a relative path
or a file: / http(s): URL."""

from __future__ import annotations

import html
import re

__all__ = ["to_html"]

_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
_SAFE_HREF = re.compile(r"^(?:https?:|file:|[\w./#-])")


def to_html(md: str) -> str:
    out: list[str] = []
    lines = md.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("```"):
            end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            out.append("<pre>" + html.escape("\n".join(lines[k + 1:end])) + "</pre>")
            k = end + 1
            continue
        block = _block(lines, k)
        out.append(_render_block(lines[k:k + block]))
        k += block
    return "\n".join(x for x in out if x)


def _block(lines: list[str], k: int) -> int:
    """How many lines from k form one block of the same kind."""
    kind = _kind(lines[k])
    if kind in ("h", "blank"):
        return 1
    n = 1
    while k + n < len(lines) and _kind(lines[k + n]) == kind and not lines[k + n].startswith("```"):
        n += 1
    return n


def _kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if line.startswith("#"):
        return "h"
    if line.startswith("- "):
        return "ul"
    if line.startswith("|"):
        return "table"
    return "p"


def _render_block(block: list[str]) -> str:
    kind = _kind(block[0])
    if kind == "blank":
        return ""
    if kind == "h":
        level = min(6, len(block[0]) - len(block[0].lstrip("#")))
        return f"<h{level}>{inline(block[0].lstrip('#').strip())}</h{level}>"
    if kind == "ul":
        return "<ul>" + "".join(f"<li>{inline(x[2:])}</li>" for x in block) + "</ul>"
    if kind == "table":
        return _table(block)
    return "<p>" + "<br>".join(inline(x) for x in block) + "</p>"


def _table(block: list[str]) -> str:
    rows = [[c.strip() for c in x.strip().strip("|").split("|")] for x in block
            if not re.fullmatch(r"\|?[\s:|-]+\|?", x.strip())]
    if not rows:
        return ""
    head = "".join(f"<th>{inline(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<div class='wide'><table><tr>{head}</tr>{body}</table></div>"


def inline(text: str) -> str:
    """Escaped text with `code` and [text](href) links."""
    parts: list[str] = []
    pos = 0
    for m in _CODE.finditer(text):
        parts.append(_links(text[pos:m.start()]))
        parts.append(f"<code>{html.escape(m[1])}</code>")
        pos = m.end()
    parts.append(_links(text[pos:]))
    return "".join(parts)


def _links(text: str) -> str:
    out, pos = [], 0
    for m in _LINK.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        href = m[2] if _SAFE_HREF.match(m[2]) else "#"
        out.append(f"<a href='{html.escape(href, quote=True)}'>{html.escape(m[1])}</a>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)

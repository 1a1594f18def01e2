"""Code-size rules that keep the package easy to live in (STYLE 10): the median function is
under 10 lines, none is over 60, no module is 500 lines or more, and every `Note [name]` that
the code refers to is written somewhere. Read with ast / text, never imported."""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "shapefuzz").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py"))
#: templates of generated scripts: text that becomes a standalone repro, sized by its own rules
TEMPLATES = {p for p in SOURCES if "templates" in p.parts}


def _functions():
    for p in SOURCES:
        if p in TEMPLATES:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{p.relative_to(ROOT)}:{node.lineno} {node.name}", node.end_lineno - node.lineno + 1


def test_functions_are_small():
    sizes = dict(_functions())
    assert statistics.median(sizes.values()) < 10
    big = {name: n for name, n in sizes.items() if n > 60}
    assert not big, f"functions over 60 lines: {big}"


def test_modules_are_under_500_lines():
    big = {str(p.relative_to(ROOT)): n for p in SOURCES
           if (n := len(p.read_text().splitlines())) >= 500}
    assert not big, f"modules of 500 lines or more: {big}"


NOTE = re.compile(r"Note \[([^\]\n]+)\]")


def test_every_referenced_note_is_written():
    """A Note is written where a line starts with `Note [name]:` (in a docstring or a comment)."""
    texts = [p.read_text() for p in SOURCES]
    written = {m for t in texts
               for m in re.findall(r"^\s*(?:#\s*)?Note \[([^\]\n]+)\](?: \([^)\n]*\))?:", t, re.M)}
    referenced = {m for t in texts for m in NOTE.findall(t)}
    assert not referenced - written, f"Notes referenced but never written: {sorted(referenced - written)}"


def test_source_is_parsed_one_thread_at_a_time():
    """CPython 3.11's parser is not thread-safe (Note [one parser at a time] in
    systems/parser_lock.py): background confirmation threads and the campaign both write repro
    scripts, so every ast.parse of the package goes through parser_lock.parse (and a campaign
    routes everyone else's through the lock too)."""
    direct = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "shapefuzz").rglob("*.py"))
              for line in p.read_text().splitlines()
              if "ast.parse(" in line and not line.lstrip().startswith(("#", '"""'))]
    assert direct == ["shapefuzz/systems/parser_lock.py"], direct  # the one inside parse()

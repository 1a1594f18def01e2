"""MkDocs hook: the reference tables that shapefuzz's registries already hold, written at build
time so that they cannot drift from the code (STYLE 13: a table is never written twice).

A page asks for a table with a marker line `<!-- registry: NAME -->`; NAME is a key of TABLES.
An unknown name, or a registry that fails to import, fails the build: a reference page that
silently lost its table would be worse than no build. mkdocs.yml loads this file (`hooks:`)."""

from __future__ import annotations

import re
from collections.abc import Callable

_MARKER = re.compile(r"^<!-- registry: ([\w-]+) -->$", re.M)


def on_page_markdown(markdown: str, page, config, files) -> str:
    def table(m: re.Match) -> str:
        name = m[1]
        if name not in TABLES:
            raise KeyError(f"{page.file.src_path}: unknown registry table {name!r}; "
                           f"known: {', '.join(TABLES)} (docs/_hooks/registries.py)")
        return TABLES[name]()

    return _MARKER.sub(table, markdown)


def _cell(text: object) -> str:
    """Text safe inside a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows(head: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- oracles ----------------------------------------------------------------------------------
def oracles() -> str:
    """One row per finding name a registered oracle emits (Note [oracle registry])."""
    from shapefuzz.oracles import all_oracles

    rows = []
    for o in all_oracles():
        for name in o.names():
            sides = "candidate and baseline" if o.both_sides else "one torch"
            rows.append((f"`{name}`", o.severity, ", ".join(o.kinds), o.compares_of(name), sides,
                         f"`{o.check.__module__.replace('.', '/')}.py`", o.help_of(name)))
    head = ("finding oracle", "severity (worst)", "program kinds", "repro compares", "sees", "module", "rule")
    return _rows(head, rows)


# ---- systems and configs ----------------------------------------------------------------------
def configs() -> str:
    """One section per system: every named config, whether a campaign runs it by default, what
    it switches and the torch names it relies on (Note [torch names])."""
    from shapefuzz.systems import REGISTRY, targets_for
    from shapefuzz.systems.needs import needs_of

    default_run = ", ".join(f"`{s} {c}`" for s, c in targets_for())
    out = [f"A campaign without `--system` runs {default_run}.", ""]
    for system, configs in REGISTRY.items():
        rows = []
        for c in configs.values():
            when = "opt-in (by name only)" if c.opt_in else "yes" if c.default else "with `--config all` or by name"
            needs = ", ".join(f"`{_need(n)}`" for n in needs_of(system, c.name)) or "-"
            rows.append((f"`{c.name}`", when, c.switches, needs))
        out += [f"### {system}", "", _rows(("config", "runs by default", "what it switches",
                                             "torch names it relies on"), rows), ""]
    return "\n".join(out)


def _need(n) -> str:
    extra = f" holding `{n.fragment}`" if n.fragment else f"({n.param}=...)" if n.param else ""
    return n.name + (extra.replace("`", "'") if extra else "")


def slow_paths() -> str:
    """The slow paths torch-env's `slow:*` configs restore, and what each patch replaces."""
    from shapefuzz.systems.torch_toggles import SLOW_PATHS

    rows = [(f"`slow:{name}`", f"`{p.toggle}`", ", ".join(f"`{_need(n)}`" for n in p.needs))
            for name, p in SLOW_PATHS.items()]
    return _rows(("config", "TorchToggles field switched off", "torch names the patch replaces or reads"), rows)


# ---- pytest plugin ----------------------------------------------------------------------------
class _Options:
    """Stands in for pytest's parser: collects what the plugin's pytest_addoption declares."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []

    def getgroup(self, *args, **kwargs) -> _Options:
        return self

    def addoption(self, *names: str, **kw) -> None:
        meta = kw.get("metavar") or ("" if kw.get("action") == "store_true" else "VALUE")
        self.rows.append((f"`{' '.join(names)}{' ' + meta if meta else ''}`", kw.get("help", ""),
                          "" if kw.get("default") in (None, [], False) else f"`{kw['default']}`"))


def pytest_options() -> str:
    from shapefuzz.pytest_plugin import pytest_addoption

    opts = _Options()
    pytest_addoption(opts)
    return _rows(("option", "what it does", "default"), opts.rows)


TABLES: dict[str, Callable[[], str]] = {
    "oracles": oracles,
    "configs": configs,
    "slow-paths": slow_paths,
    "pytest-options": pytest_options,
}

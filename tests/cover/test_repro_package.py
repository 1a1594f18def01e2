"""The repro package: every corpus case's repro.py is an issue form (torch only, no unused
import, within its line limit) that exits 1 while the bug is there; check.py is current; the
templates are real modules that import without running anything."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.cases.corpus import load_case
from shapefuzz.repro import check_source, family, line_limit, repro_source

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CASES = sorted(CORPUS.rglob("case.json"))
IDS = [p.parent.name for p in CASES]


def imported_names(tree: ast.Module) -> list[tuple[str, str]]:
    """(what the import binds or loads, its source line) for every import in the script."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module != "__future__"):
            out += [(a.asname or a.name, ast.unparse(node)) for a in node.names]
    return out


def used_names(tree: ast.Module) -> set[str]:
    """Every name read, and every dotted attribute chain (a.b.c) spelled, in the script."""
    def dotted(n):
        parts = []
        while isinstance(n, ast.Attribute):
            parts.append(n.attr)
            n = n.value
        return ".".join([n.id, *reversed(parts)]) if isinstance(n, ast.Name) else ""

    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    chains = {dotted(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return names | {c for chain in chains for c in _prefixes(chain)}


def _prefixes(chain: str) -> list[str]:
    parts = chain.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1)]


def unused_imports(src: str) -> list[str]:
    """Imports nothing in the script uses: `import a.b` counts as used only when some attribute
    chain spells a.b (the submodule import is what it is for)."""
    tree = ast.parse(src)
    used = used_names(tree)
    return [line for name, line in imported_names(tree) if name not in used]


def test_the_unused_import_check_is_not_vacuous():
    assert unused_imports("import sys\nimport torch\nprint(torch.ones(1))\n") == ["import sys"]
    assert unused_imports("import torch.nn.attention.flex_attention\nimport torch\ntorch.ones(1)\n") == [
        "import torch.nn.attention.flex_attention"]
    assert unused_imports("from a import b, c\nb()\n") == ["from a import b, c"]
    assert not unused_imports("import torch.fx.experimental._config\n"
                              "torch.fx.experimental._config.x = 1\n")


def test_corpus_is_not_empty():
    assert CASES


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_repro_is_an_issue_form(path):
    case = load_case(path)
    src = (path.parent / "repro.py").read_text()
    assert src == repro_source(case), "regenerate: python -c 'from shapefuzz.repro import regenerate; regenerate(\"corpus\")'"
    n = len(src.splitlines())
    assert n <= line_limit(case), f"{n} lines, the limit for {family(case).name} is {line_limit(case)}"
    tree = ast.parse(src)
    mods = [name for name, _ in imported_names(tree)] + [
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    assert not [m for m in mods if m.split(".")[0] == "shapefuzz"], "repro.py must need torch only"
    assert not unused_imports(src), unused_imports(src)
    assert "def main(" not in src and "CHECK = " not in src  # no generic harness


def test_the_limits_are_checked_on_reduced_long_findings():
    """The corpus holds what made issue forms too long before they were reduced at confirmation
    (Note [issue form reduction]): a compile finding shown by a sequence of several calls and an
    export trace error of a program of 12 or more instructions; test_repro_is_an_issue_form
    checks their limits, test_issue_form_exits_1_while_the_bug_is_there that they fail."""
    cases = [load_case(p) for p in CASES]
    calls = [c for c in cases if c.finding.system == "compile" and c.finding.replay_index >= 0
             and family(c).name == "calls" and line_limit(c) == 60]
    long_export = [c for c in cases if (c.finding.system, c.finding.symptom) == ("export", "trace-error")
                   and len(c.program.instrs) >= 12]
    assert calls, "no compile case of several calls in the corpus"
    assert long_export, "no export trace error of >= 12 instructions in the corpus"
    assert any(c.issue_cut is not None for c in calls + long_export)


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_check_is_current(path):
    assert (path.parent / "check.py").read_text() == check_source(load_case(path))


@pytest.mark.parametrize("path", [p for p in CASES if load_case(p).status in ("bug", "known-upstream")], ids=[
    p.parent.name for p in CASES if load_case(p).status in ("bug", "known-upstream")])
def test_issue_form_exits_1_while_the_bug_is_there(path, tmp_path):
    script = tmp_path / "repro.py"
    script.write_text((path.parent / "repro.py").read_text())  # standalone: not next to its case
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert "BUG" in r.stdout and "expected" in r.stdout, r.stdout


def test_templates_are_modules_that_run_nothing():
    import shapefuzz.repro.templates as templates

    names = [m.name for m in pkgutil.iter_modules(templates.__path__)]
    assert {"traced_issue", "traced_check", "questions_issue", "questions_check", "calls_issue",
            "calls_check", "frontends_issue", "frontends_check"} <= set(names)
    for name in names:
        mod = importlib.import_module(f"shapefuzz.repro.templates.{name}")
        assert mod.__doc__, name


def test_every_block_of_every_issue_template_is_python():
    from shapefuzz.repro import common
    from shapefuzz.repro.templates import (
        calls_issue,
        frontends_issue,
        questions_history,
        questions_issue,
        questions_runs,
        traced_issue,
    )

    lines = {"PROGRAM": "x = 1", "VALUES": "y = 2"}  # the placeholders of the program's own lines
    for mod in (traced_issue, questions_issue, calls_issue, frontends_issue, questions_history, questions_runs):
        tree = ast.parse(Path(mod.__file__).read_text())
        for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
            body = fn.body[1:] if ast.get_docstring(fn) else fn.body
            if body[:-1] or not isinstance(body[-1], ast.Return):  # a block pastes more than a return
                ast.parse(common.block(mod, fn.name, trace="pass", fill=lines))
            ast.parse(common.function(mod, fn.name, fill=lines))


def test_a_block_trace_placeholder_needs_its_call():
    from shapefuzz.repro import common
    from shapefuzz.repro.templates import traced_issue

    with pytest.raises(ValueError, match="TRACE"):
        common.block(traced_issue, "raises")
    body = common.block(traced_issue, "raises", 'make_fx(f, tracing_mode="fake")(*inputs)')
    assert '    make_fx(f, tracing_mode="fake")(*inputs)\n' in body and "TRACE" not in body


def test_hostile_cases_render_harmless_check_scripts(tmp_path_factory):
    """check.py, like repro.py (tests/cover/test_hostile.py), carries nothing from a crafted
    case but names and numbers."""
    from hypothesis import HealthCheck, given
    from hypothesis import settings as hsettings

    sys.path.insert(0, str(Path(__file__).parent))
    from test_hostile import assert_repro_harmless, mutated_cases

    from shapefuzz.cases.corpus import CaseError

    @hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(mutated_cases())
    def run(obj):
        import json

        p = tmp_path_factory.mktemp("c") / "case.json"
        p.write_text(json.dumps(obj))
        try:
            case = load_case(p)
        except CaseError:
            return
        assert_repro_harmless(check_source(case))
        assert_repro_harmless(repro_source(case))

    run()


def _planted_oracles():
    """The planted torch behaviours of tests/cover/test_dde_history_oracles.py."""
    sys.path.insert(0, str(Path(__file__).parent))
    import test_dde_history_oracles

    return test_dde_history_oracles


def _run_in_process(src: str, tmp_path) -> tuple[int, str]:
    """(exit code, stdout) of a script run in this process, so a planted patch applies to it."""
    import contextlib
    import io
    import runpy

    path = tmp_path / "repro.py"
    path.write_text(src)
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue()


def _long_question_programs():
    """A backed size with its own questions and checks before the finding's part (an unbacked
    size, a check, the question): a DDE at question 1, a stale answer at question 2."""
    from shapefuzz.program import Ref
    from shapefuzz.program.questions import QInstr, QProgram

    head = (QInstr("backed", (3,)), QInstr("ask", ("bool", ">=", Ref(0), 2)), QInstr("check", (">=", Ref(0), 2)),
            QInstr("binop", ("+", Ref(0), 1)), QInstr("ask", ("bool", "!=", Ref(1), 7)), QInstr("unbacked", (5,)))
    u = Ref(2)
    dde = QProgram(head + (QInstr("check", (">=", u, 3)), QInstr("ask", ("bool", ">=", u, 2))))
    skt = QInstr("ask", ("statically_known_true", ">=", u, 3))
    history = QProgram(head + (skt, QInstr("check", (">=", u, 4)), skt))
    return {"spurious-dde": dde, "history": history}


@pytest.mark.parametrize("oracle", ["spurious-dde", "history"])
def test_proof_and_history_forms_are_issue_forms_within_the_limit(oracle, tmp_path):
    """A spurious-dde form (z3 on the facts) and a history form (two ShapeEnvs) of a planted
    finding, torch only, no unused import; the cut a confirmation tries (questions.issue_cuts)
    drops the part of the program not connected to the finding's question, which brings the form
    of a long program within the question family's limit, and the cut form still exits 1 under
    the plant and 0 without it."""
    from dataclasses import replace

    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import questions
    from shapefuzz.repro.reduce import apply_cut

    t = _planted_oracles()
    plant = {"spurious-dde": t.forgetful, "history": t.stale_cache}[oracle]
    program = _long_question_programs()[oracle]
    with plant():
        (f,) = t.findings(program, oracle)
    case = Case(f, program, None, torch_version="2.13")
    cut = replace(case, issue_cut=questions.issue_cuts(case)[0])
    assert [i.op for i in apply_cut(cut)[0].program.instrs if i.op == "backed"] == []  # unconnected: dropped
    full, short = repro_source(case), repro_source(cut)
    for src in (full, short):
        assert not unused_imports(src) and "shapefuzz" not in src.split('"""')[2], src
    assert len(short.splitlines()) <= line_limit(cut) == 60, short
    assert len(short.splitlines()) < len(full.splitlines()) - 8  # two instructions a line or more
    with plant():
        code, out = _run_in_process(short, tmp_path)
    assert code == 1 and "BUG" in out and "expected" in out, out
    assert _run_in_process(short, tmp_path)[0] == 0  # unmodified torch: no bug shown


def test_the_connected_part_of_a_question_follows_values_and_duck_sized_hints():
    """questions.component_cut: what shares a value with the question, or a backed size's hint
    (torch may give two sizes of one hint one symbol), stays; an unrelated size and a question
    over constants go."""
    from shapefuzz.program import Ref
    from shapefuzz.program.questions import QInstr, QProgram
    from shapefuzz.repro.questions import component_cut

    p = QProgram((QInstr("backed", (3,)), QInstr("backed", (3,)), QInstr("ask", ("bool", ">=", Ref(1), 2)),
                  QInstr("unbacked", (4,)), QInstr("ask", ("bool", ">=", 3, 2)),
                  QInstr("ask", ("guard_or_false", ">=", Ref(0), 2))))
    assert component_cut(p, 2).instrs == (0, 1, 2, 5)
    assert component_cut(p, 1).instrs == (4,)  # a question over constants: itself
    assert component_cut(p, 0).instrs == (0, 1, 2)

"""The spurious-dde oracle on tensor programs (issue 13 item 1): a make_fx / export trace that
raises a data-dependent error on an expression the facts its ShapeEnv held decide is a finding,
whose issue form exits 1 under the planted DDE and 0 without it; a deserved DDE and a clean
program stay quiet, and so does a DDE whose facts are false at the run's own values."""

from __future__ import annotations

import contextlib
import io
import runpy

import pytest
from _helpers import I, R, inp, prog
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles import check_all
from shapefuzz.repro import check_source, line_limit, repro_source
from shapefuzz.systems.eager import EagerSystem
from shapefuzz.systems.export import ExportSystem
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.patching import patched

X = inp([2, 2, 1], dims=("static",))
# u = x.sum().item() (5); torch._check(u >= 4); `if u >= 2`: the check decides the branch
DECIDED = prog([X], [I("item", R(0), "sum"), I("check", ">=", R(1), 4, n_out=0),
                     I("branch", "if", "max", R(1), 2)])
OPEN = prog([X], [I("item", R(0), "sum"), I("branch", "if", "max", R(1), 2)])  # nothing decides u >= 2
SYSTEMS = {"make_fx": MakeFxSystem, "export": ExportSystem}


@contextlib.contextmanager
def forgetful():
    """Plant: bool() on an unbacked expression raises a data-dependent error before torch
    consults what it knows (as torch's own _evaluate_expr raises it)."""
    orig = ShapeEnv.evaluate_sym_node

    def raise_dde(self, node, size_oblivious=False, fallback_value=None):
        expr = node.expr
        if fallback_value is None and any(str(s).startswith("u") for s in expr.free_symbols):
            raise self._make_data_dependent_error(expr.xreplace(self.backed_var_to_val), expr)
        return orig(self, node, size_oblivious, fallback_value)

    with patched(ShapeEnv, "evaluate_sym_node", raise_dde):
        yield


def findings(p, system):
    eager = EagerSystem().observe(p, "default", ())
    obs = [SYSTEMS[system]().observe(p, "default", ())]
    return obs[0], [f for f in check_all(p, eager, obs) if f.oracle == "spurious-dde"]


def run_repro(case, tmp_path) -> tuple[int, str]:
    """The issue form, run in this process (so a planted patch applies to it)."""
    path = tmp_path / "repro.py"
    path.write_text(repro_source(case))
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue()


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_planted_dde_on_a_decided_expression_fires_and_its_repro_exits_1(system, tmp_path):
    with forgetful():
        obs, (f,) = findings(DECIDED, system)
        case = Case(f, DECIDED, None, torch_version="2.13")
        code, out = run_repro(case, tmp_path)
    assert obs.outcome.status == "dde" and f.system == system
    assert f.symptom == "completeness" and f.severity == "medium" and "ignored[ranges]" in f.key  # root cause: the ranges torch holds decide it (the plant forgets them)
    assert "u0 >= 2" in f.summary and "4 <= u0" in f.detail  # the check torch held
    assert code == 1 and "BUG: z3 proves the expression True" in out and "facts:" in out and "expression: u0 >= 2" in out, out
    assert len(repro_source(case).splitlines()) <= line_limit(case) <= 60
    assert check_source(case) == repro_source(case)  # the proof is the whole check
    # unmodified torch decides it: no DDE, no finding, the repro says so
    assert findings(DECIDED, system)[1] == []
    assert run_repro(case, tmp_path)[0] == 0


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_deserved_dde_stays_quiet(system, tmp_path):
    obs, fs = findings(OPEN, system)
    assert obs.outcome.status == "dde" and [c.status for c in obs.smt] == ["deserved"]
    assert fs == []


def test_a_fact_false_at_the_run_values_gives_no_verdict():
    """Plant: torch records a wrong range for the item() (u0 <= 1 where u0 is 5), and the DDE
    is raised: z3 would prove u0 >= 2 false from it, but the run's own values refute the fact
    (another bug, not a spurious DDE), so there is no verdict and no finding."""
    orig = ShapeEnv.create_unbacked_symint

    def narrow_range(self, *a, **k):
        s = orig(self, *a, **k)
        self.var_to_range[s.node.expr] = type(self.var_to_range[s.node.expr])(-9, 1)
        return s

    with forgetful(), patched(ShapeEnv, "create_unbacked_symint", narrow_range):
        obs, fs = findings(OPEN, "make_fx")
    (c,) = obs.smt
    assert obs.outcome.status == "dde" and c.status == "unknown" and "u0 <= 1" in c.reason, c
    assert fs == []


def test_invalid_program_stays_quiet():
    bad = prog([X], [I("item", R(0), "sum"), I("check", ">=", R(1), 9, n_out=0),
                     I("branch", "if", "max", R(1), 2)])  # eager raises at the false check
    with forgetful():
        assert findings(bad, "make_fx")[1] == []


def test_real_spurious_dde_transitivity_of_checks(tmp_path):
    """Unmodified torch 2.13: torch._check(u0 <= u1) and torch._check(u1 <= u2), then a branch on
    u2 >= u0, raises a DDE (pytorch/pytorch#193092, open). The oracle reports it on both systems
    and its issue form exits 1 (a torch fix turns this red: then the form must exit 0)."""
    xs = [inp([v], dims=("static",), name=f"x{k}") for k, v in enumerate((1, 2, 3))]
    p = prog(xs, [I("item", R(0), "sum"), I("item", R(1), "sum"), I("item", R(2), "sum"),
                  I("check", "<=", R(3), R(4), n_out=0), I("check", "<=", R(4), R(5), n_out=0),
                  I("branch", "if", "max", R(5), R(3))])
    for system in SYSTEMS:
        _, (f,) = findings(p, system)
        case = Case(f, p, None, torch_version="2.13")
        code, out = run_repro(case, tmp_path)
        assert code == 1 and "facts: [u0 <= u1, u1 <= u2]" in out and "expression: u2 >= u0" in out, out
        assert len(repro_source(case).splitlines()) <= line_limit(case)

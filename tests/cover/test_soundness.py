"""The z3 checks a system makes of its own claims (shapefuzz.systems.claims) and the oracle that
reports what they recorded (shapefuzz.oracles.soundness): they fire on planted unsound decisions
(a static answer that does not follow, a dropped guard, a wrong range), with a confirming replay
(concrete values for question programs, eager vs the traced artifact for tensor programs), and
stay quiet on unmodified torch."""

from __future__ import annotations

import contextlib

import sympy
from _helpers import I, inp, prog
from hypothesis import given, settings
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._sympy.value_ranges import ValueRanges

from shapefuzz.oracles import check_all
from shapefuzz.oracles.soundness import smt_findings
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.strategies import qprograms
from shapefuzz.systems.claims import check_claims, dde_check, hint_sanity
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.observation import Decision, Observation, Outcome, SmtCheck
from shapefuzz.systems.torch_env import TorchEnvSystem

S0, U0 = sympy.Symbol("s0", integer=True), sympy.Symbol("u0", integer=True)
R = Ref


# ---- the checks on planted observations -------------------------------------------------------
def test_static_claim_that_does_not_follow_is_refuted_with_a_model():
    [c] = check_claims([(S0 > 2, True, "static")], [(0, "range", S0 >= 2)], [S0 >= 2])
    assert (c.oracle, c.status, dict(c.model)) == ("static-soundness", "sat", {"s0": 2})


def test_static_claim_that_follows_is_proved():
    [c] = check_claims([(S0 > 1, True, "static")], [(0, "range", S0 >= 2)], [S0 >= 2])
    assert c.status == "unsat"


def test_facts_learned_later_do_not_justify_an_earlier_static_claim():
    # u0 > 0 claimed at decision 0; the check u0 >= 1 comes at decision 1: premature, not unsound
    ax = [(1, "check", U0 >= 1)]
    [c] = check_claims([(U0 > 0, True, "static"), (U0 >= 1, True, "assert")], ax, [U0 >= 1])[:1]
    assert c.status == "premature"


def test_dropped_guard_is_refuted():
    # the trace claims s0 >= 3 by a guard, but the guard is missing from the final facts
    [c] = check_claims([(S0 >= 3, True, "guard")], [(0, "range", S0 >= 2)], [S0 >= 2])
    assert (c.oracle, c.status, dict(c.model)) == ("guard-soundness", "sat", {"s0": 2})
    [ok] = check_claims([(S0 >= 3, True, "guard")], [(0, "range", S0 >= 2), (1, "guard", S0 >= 3)],
                        [S0 >= 2, S0 >= 3])
    assert ok.status == "unsat"


def test_fallbacks_and_size_oblivious_answers_are_no_claims():
    out = check_claims([(U0 > 2, False, "fallback"), (sympy.Eq(U0, 1), False, "static")], [], [],
                       unchecked={1})
    assert out == []


def test_untranslatable_claim_is_unknown_never_a_pass():
    [c] = check_claims([(sympy.sqrt(S0) > 1, True, "static")], [], [])
    assert c.status == "unknown" and "exponent" in c.reason


def test_spurious_dde_is_recognized_and_a_deserved_one_is_not():
    assert dde_check(U0 > 2, [U0 >= 5]).status == "unsat"
    assert dde_check(U0 > 2, [U0 >= 0]).status == "deserved"


def _obs_with(check: SmtCheck) -> Observation:
    return Observation("make_fx", "default", Outcome("ok"),
                       decisions=(Decision("s0 >= 3", "True", "static"),), smt=(check,))


def test_only_confirmed_refutations_are_findings():
    sat = SmtCheck("static-soundness", 0, "s0 >= 3", "sat", model=(("s0", 2),))
    assert smt_findings(None, _obs_with(sat)) == []  # a model the replay did not confirm
    [f] = smt_findings(None, _obs_with(SmtCheck("static-soundness", 0, "s0 >= 3", "sat",
                                                model=(("s0", 2),), confirmed=True, why="differs")))
    assert f.oracle == "static-soundness" and f.replay_index == 0 and "s0" in f.detail
    for status in ("unsat", "unknown", "timeout", "premature"):
        assert smt_findings(None, _obs_with(SmtCheck("guard-soundness", 0, "x", status))) == []


# ---- plants in torch's ShapeEnv -----------------------------------------------------------------
@contextlib.contextmanager
def patched(cls, name, make):
    orig = getattr(cls, name)
    setattr(cls, name, make(orig))
    try:
        yield
    finally:
        setattr(cls, name, orig)


def drop_guards(orig):
    """A dropped guard: the guard (and the range it narrowed) is forgotten after the decision."""

    def _evaluate_expr(self, *a, **kw):
        n, ranges = len(self.guards), dict(self.var_to_range)
        r = orig(self, *a, **kw)
        if len(self.guards) > n:
            del self.guards[n:]
            self.var_to_range.clear()
            self.var_to_range.update(ranges)
        return r

    return _evaluate_expr


def over_claim(orig):
    """A wrong static fast path: `x >= c` is claimed whenever `x >= c - 1` is known."""

    def _maybe_evaluate_static(self, expr, *a, **kw):
        r = orig(self, expr, *a, **kw)
        if (r is None and isinstance(expr, sympy.GreaterThan) and expr.rhs.is_Integer
                and expr.lhs.free_symbols
                and orig(self, sympy.Ge(expr.lhs, expr.rhs - 1), *a, **kw) is sympy.true):
            return sympy.true
        return r

    _maybe_evaluate_static.cache_clear = orig.cache_clear  # torch clears its lru_cache
    return _maybe_evaluate_static


def wrong_unbacked_range(orig):
    """A bad range: a fresh unbacked symbol starts at [1, oo] instead of unbounded."""

    def create_unbacked_symint(self, *a, **kw):
        u = orig(self, *a, **kw)
        self.var_to_range[u.node.expr] = ValueRanges(1, sympy.oo)
        return u

    return create_unbacked_symint


Q_GUARD = QProgram((QInstr("backed", (5,)), QInstr("ask", ("bool", ">=", R(0), 4)),
                    QInstr("ask", ("guard_or_false", ">", R(0), 3))))
Q_STATIC = QProgram((QInstr("backed", (5,)), QInstr("ask", ("guard_or_false", ">=", R(0), 3))))
Q_RANGE = QProgram((QInstr("unbacked", (4,)), QInstr("ask", ("guard_or_false", ">=", R(0), 1))))


def _smt_findings(program, obs):
    return [f for f in check_all(program, None, [obs]) if f.oracle in ("static-soundness", "guard-soundness")]


def test_torch_env_quiet_on_the_planted_programs_when_torch_is_unmodified():
    for p in (Q_GUARD, Q_STATIC, Q_RANGE):
        obs = TorchEnvSystem().observe(p, "default")
        assert _smt_findings(p, obs) == [], obs.smt
        assert all(c.status in ("unsat", "premature") for c in obs.smt), obs.smt


def test_torch_env_dropped_guard_is_found_and_confirmed_by_values():
    with patched(ShapeEnv, "_evaluate_expr", drop_guards):
        obs = TorchEnvSystem().observe(Q_GUARD, "default")
    [f] = _smt_findings(Q_GUARD, obs)[:1]
    c = obs.smt[f.replay_index]
    assert c.confirmed and c.alt_values is not None and c.alt_values[0] < 4, c


def test_torch_env_wrong_static_answer_is_found():
    with patched(ShapeEnv, "_maybe_evaluate_static", over_claim):
        obs = TorchEnvSystem().observe(Q_STATIC, "default")
    [f] = _smt_findings(Q_STATIC, obs)
    c = obs.smt[f.replay_index]
    assert f.oracle == "static-soundness" and c.confirmed and c.alt_values == (2,), c


def test_torch_env_wrong_unbacked_range_is_found():
    with patched(ShapeEnv, "create_unbacked_symint", wrong_unbacked_range):
        obs = TorchEnvSystem().observe(Q_RANGE, "default")
    [f] = _smt_findings(Q_RANGE, obs)
    c = obs.smt[f.replay_index]
    assert c.confirmed and c.alt_values[0] < 1, c


@settings(max_examples=40)
@given(qprograms(max_ops=10))
def test_torch_env_z3_oracles_quiet_on_unmodified_torch(p):
    obs = TorchEnvSystem().observe(p, "default")
    assert _smt_findings(p, obs) == [], (p.pretty(), obs.smt)


# ---- tensor programs: the counter-model replayed through eager and the artifact ------------------
def _branch_program(mode: str):
    # fast arm (s0) is right only when s0 >= 3; the general arm sym_max(s0, 3) always
    return prog([inp([1.0, 2.0, 3.0, 4.0])], [I("size", R(0), 0), I("branch", mode, "max", R(1), 3)])


def _tensor_findings(p, obs):
    return smt_findings(p, obs)


def test_make_fx_quiet_when_torch_is_unmodified():
    for mode in ("if", "guard_or_false"):
        p = _branch_program(mode)
        obs = MakeFxSystem().observe(p, "default", [])
        assert _tensor_findings(p, obs) == [], obs.smt
        assert obs.smt and all(c.status in ("unsat", "premature") for c in obs.smt), obs.smt


def test_make_fx_dropped_guard_is_found_and_the_replay_disagrees():
    p = _branch_program("if")
    with patched(ShapeEnv, "_evaluate_expr", drop_guards):
        obs = MakeFxSystem().observe(p, "default", [])
    [f] = _tensor_findings(p, obs)
    c = obs.smt[f.replay_index]
    assert c.confirmed and c.replay.accepted and c.replay.inputs[0].shape == (2,), c
    assert c.replay.reference.values[0].data != c.replay.artifact.values[0].data


def test_make_fx_wrong_static_answer_is_found_and_the_replay_disagrees():
    p = _branch_program("guard_or_false")
    with patched(ShapeEnv, "_maybe_evaluate_static", over_claim):
        obs = MakeFxSystem().observe(p, "default", [])
    [f] = _tensor_findings(p, obs)
    c = obs.smt[f.replay_index]
    assert f.oracle == "static-soundness" and c.confirmed and c.replay.inputs[0].shape == (2,), c


def test_make_fx_counter_model_sets_item_values_through_the_data():
    # k = x.sum().item(); torch._check(k >= 1); guard_or_false(k >= 2) picks the fast arm only
    # under the planted over-claim. The counter-model k = 1 has no input dim: the data search of
    # systems/counterexample.py must find data whose sum is 1, and the replay must disagree.
    p = prog([inp([3, 1], dims=("static",))],
             [I("item", R(0), "sum"), I("check", ">=", R(1), 1, n_out=0),
              I("branch", "guard_or_false", "max", R(1), 2)])
    obs = MakeFxSystem().observe(p, "default", [])
    assert _tensor_findings(p, obs) == [], obs.smt
    with patched(ShapeEnv, "_maybe_evaluate_static", over_claim):
        obs = MakeFxSystem().observe(p, "default", [])
    [f] = _tensor_findings(p, obs)
    c = obs.smt[f.replay_index]
    assert c.confirmed and sum(c.replay.inputs[0].data) == 1, c


# ---- plants in the reference ShapeEnv -------------------------------------------------------------
def test_ref_quiet_and_planted_dropped_guard_and_wrong_range(monkeypatch):
    import math

    from shapefuzz.systems.ref import evaluate as ref_evaluate
    from shapefuzz.systems.ref.env import RefEnv
    from shapefuzz.systems.ref.ranges import Interval
    from shapefuzz.systems.ref.system import RefSystem

    for p in (Q_GUARD, Q_STATIC, Q_RANGE):
        obs = RefSystem().observe(p, "default")
        assert _smt_findings(p, obs) == [] and (obs.smt or p is Q_RANGE), obs.smt
    with monkeypatch.context() as m:  # a dropped guard: answered "guard", never recorded
        m.setattr(ref_evaluate, "record_guard", lambda env, g: None)
        obs = RefSystem().observe(Q_GUARD, "default")
    [f] = _smt_findings(Q_GUARD, obs)[:1]
    assert f.oracle == "guard-soundness" and obs.smt[f.replay_index].confirmed
    orig = RefEnv.create_unbacked

    def bad_range(self):
        node = orig(self)
        self.ranges[node.raw] = Interval(1, math.inf)
        return node

    with monkeypatch.context() as m:  # a wrong range for a fresh unbacked symbol
        m.setattr(RefEnv, "create_unbacked", bad_range)
        obs = RefSystem().observe(Q_RANGE, "default")
    [f] = _smt_findings(Q_RANGE, obs)
    assert f.oracle == "static-soundness" and obs.smt[f.replay_index].alt_values[0] < 1


@settings(max_examples=40)
@given(qprograms(max_ops=10))
def test_ref_z3_oracles_quiet(p):
    from shapefuzz.systems.ref.system import RefSystem

    obs = RefSystem().observe(p, "default")
    assert _smt_findings(p, obs) == [], (p.pretty(), obs.smt)


def test_hint_sanity_records_a_guard_false_at_the_traced_values():
    [c] = hint_sanity([S0 > 5, S0 >= 2], {S0: 3})
    assert (c.oracle, c.status, c.claim) == ("hint-sanity", "sat", "s0 > 5")
    assert hint_sanity([S0 > 2], {S0: 3}) == []
    # recorded and counted, reported by the truth / eager-agreement oracles (not confirmed here)
    assert smt_findings(None, _obs_with(c)) == []

"""`torch-env` (torch's ShapeEnv driven by question programs) and the torch toggles: the answers
torch gives to direct ShapeEnv questions, every slow path really taken and restored, semantics-preserving configs
giving identical observations, aggressive levels only turning claims into fallbacks, and every
claim equal to the concrete truth. Disagreements of torch itself are pinned as strict xfails."""

from __future__ import annotations

from collections import Counter

import pytest
import torch.fx.config as fx_config
import torch.fx.experimental._config as fxx
from hypothesis import HealthCheck, given, settings
from torch.fx.experimental import sym_node as sn
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.program import Ref
from shapefuzz.program.questions import FALLBACK, QInstr, QProgram, truth
from shapefuzz.strategies import qprograms
from shapefuzz.systems import torch_toggles as tt
from shapefuzz.systems.evidence.truth import question_replays
from shapefuzz.systems.observation import Observation
from shapefuzz.systems.torch_env import TorchEnvSystem

R = Ref
ENV = TorchEnvSystem()
SLOW = [f"slow:{n}" for n in tt.SLOW_PATHS]
PRESERVING = ["stack-traces-off", *SLOW, "all-slow"]
AGGRESSIVE = ["agfs=1", "agfs=2"]
SETTINGS = ["no-specialize-zero-one", "no-duck-shape", "backed-size-oblivious", "prefer-deferred"]
#: a zero-valued backed symbol is created positive=True (see test_zero_valued_backed_symbol)
ZERO_SIZED = {"no-specialize-zero-one", "backed-size-oblivious"}


def P(*instrs) -> QProgram:
    p = QProgram(tuple(QInstr(op, tuple(args)) for op, *args in instrs))
    p.validate()
    return p


def observe(p, config: str = "default") -> Observation:
    return ENV.observe(p, config, ())


def answers(o: Observation) -> list[tuple[str, str, str]]:
    return [(d.expr, d.answer, d.how) for d in o.decisions]


def key(o: Observation) -> tuple:
    """Everything a semantics-preserving config must leave unchanged."""
    return (o.outcome.status, o.outcome.exc_type, o.outcome.expr, tuple(answers(o)), o.guards,
            o.asserts, o.replacements, o.ranges, o.out_exprs, o.binding, o.out_eval)


def show(p: QProgram, *obs: Observation) -> str:
    return p.pretty() + "".join(f"\n{o.config}: {o.outcome.short()} {answers(o)}" for o in obs)


# --- torch's answers to direct ShapeEnv questions ------------------------------------------------

def test_bool_on_backed_guards():
    o = observe(P(("backed", 6), ("backed", 4), ("ask", "bool", ">", R(0), R(1))))
    assert o.outcome.status == "ok"
    [(expr, ans, how)] = answers(o)
    assert (ans, how) == ("True", "guard") and o.guards == (expr,)
    assert dict(o.binding) == {o.out_exprs[0]: 6, o.out_exprs[1]: 4}
    assert o.out_eval == ("6", "4")


def test_guard_or_on_unbacked_falls_back_without_facts():
    o = observe(P(("unbacked", 5), ("ask", "guard_or_false", ">", R(0), 2),
                  ("ask", "guard_or_true", ">", R(0), 2),
                  ("ask", "statically_known_true", ">", R(0), 2)))
    assert [(a, h) for _, a, h in answers(o)] == [("False", "fallback"), ("True", "fallback"),
                                                  ("False", "fallback")]
    assert o.guards == () and o.asserts == ()
    assert o.binding == (("u0", 5),) and o.out_exprs == ("u0",) and o.out_eval == ("5",)


def test_check_makes_the_question_static():
    o = observe(P(("unbacked", 5), ("check", ">=", R(0), 3),
                  ("ask", "guard_or_false", ">", R(0), 2), ("ask", "bool", ">", R(0), 2)))
    assert answers(o) == [("u0 > 2", "True", "static")] * 2
    assert o.asserts == ("3 <= u0",) and o.guards == ()
    assert ("u0", "VR[3, int_oo]") in o.ranges


def test_statically_known_true_never_guards():
    o = observe(P(("backed", 6), ("backed", 4), ("binop", "+", R(0), R(1)),
                  ("ask", "statically_known_true", ">", R(2), 0),
                  ("ask", "statically_known_true", ">", R(1), 5),
                  ("ask", "statically_known_true", "==", R(0), 6)))
    assert [(a, h) for _, a, h in answers(o)] == [("True", "static"), ("False", "fallback"),
                                                  ("False", "fallback")]
    assert o.guards == ()


def test_guard_or_false_on_backed_still_guards():
    o = observe(P(("backed", 6), ("ask", "guard_or_false", ">", R(0), 2)))
    assert [(a, h) for _, a, h in answers(o)] == [("True", "guard")] and len(o.guards) == 1


def test_bool_on_unbacked_is_a_dde_and_stops():
    o = observe(P(("unbacked", 5), ("ask", "guard_or_true", "<", R(0), 9),
                  ("ask", "bool", ">", R(0), 2), ("ask", "bool", ">", R(0), 2)))
    assert o.outcome.status == "dde" and o.outcome.expr == "u0 > 2"
    assert o.outcome.exc_type == "GuardOnDataDependentSymNode"
    assert [(a, h) for _, a, h in answers(o)] == [("True", "fallback")]


def test_mixed_backed_unbacked_bool_is_a_dde():
    o = observe(P(("backed", 5), ("unbacked", 1), ("binop", "+", R(0), R(1)),
                  ("ask", "bool", ">", R(2), 3)))
    assert o.outcome.status == "dde"


def test_zero_one_hints_are_plain_ints():
    o = observe(P(("backed", 1), ("backed", 0), ("binop", "+", R(0), R(1)),
                  ("ask", "bool", "==", R(2), 1)))
    assert o.out_exprs == ("1", "0", "1") and o.binding == ()
    assert answers(o) == [("True", "True", "static")]


def test_duck_sizing_shares_a_symbol():
    o = observe(P(("backed", 5), ("backed", 5), ("backed", 7)))
    assert o.out_exprs[0] == o.out_exprs[1] != o.out_exprs[2]
    assert len(o.binding) == 2


def test_arithmetic_expressions_and_values():
    p = P(("backed", 6), ("unbacked", -1), ("binop", "%", R(1), 3), ("binop", "max", R(0), R(1)),
          ("binop", "min", R(0), 2), ("binop", "//", R(1), 2), ("binop", "*", R(0), R(1)))
    o = observe(p)
    assert o.outcome.status == "ok"
    assert o.out_exprs[2] == "PythonMod(u0, 3)" and o.out_exprs[3].startswith("Max(")
    assert o.out_eval == tuple(str(v) for v in truth(p).values)


def test_size_oblivious_without_size_like_is_bool():
    o = observe(P(("backed", 6), ("unbacked", 3), ("ask", "size_oblivious", ">", R(0), 2),
                  ("ask", "size_oblivious", "==", R(1), 1)))
    assert answers(o)[0][1:] == ("True", "guard") and o.outcome.status == "dde"


def test_false_check_on_backed_is_an_error_and_true_one_a_guard():
    o = observe(P(("backed", 6), ("check", ">", R(0), 2), ("check", "<", R(0), 3)))
    assert o.outcome.status == "error" and o.outcome.exc_type == "RuntimeError"
    assert len(o.guards) == 1


def test_stale_fallback_after_check_is_labelled_fallback():
    # evaluate_expr's lru_cache (keyed without the ShapeEnv version) keeps the fallback given
    # before the check; static evaluation would now say True. Sound (a fallback is always
    # allowed), so it must be labelled `fallback`, not a wrong static claim.
    o = observe(P(("unbacked", 5), ("ask", "guard_or_false", ">", R(0), 2),
                  ("check", ">=", R(0), 3), ("ask", "guard_or_false", ">", R(0), 2),
                  ("ask", "guard_or_false", ">=", R(0), 3)))
    assert [(a, h) for _, a, h in answers(o)] == [("False", "fallback"), ("False", "fallback"),
                                                  ("True", "static")]


def test_replacement_rewrites_values():
    o = observe(P(("unbacked", 7), ("backed", 7), ("binop", "+", R(0), 1),
                  ("check", "==", R(0), R(1)), ("ask", "bool", "==", R(2), 8)))
    assert o.outcome.status == "ok" and answers(o)[0][1] == "True"
    assert o.replacements and o.out_eval == ("7", "7", "8")


def test_tensor_programs_are_unsupported():
    o = observe(object())
    assert o.outcome.status == "error" and o.outcome.exc_type == "Unsupported"


def test_unknown_config_names_the_known_ones():
    with pytest.raises(ValueError, match="known: default, agfs=1"):
        observe(P(("backed", 3)), "agfs=3")
    with pytest.raises(ValueError, match="slow:nope"):
        tt.toggles("all-slow+slow:nope")


def test_config_names_and_combinations():
    names = tt.config_names()
    for n in ["default", *AGGRESSIVE, *PRESERVING, *SETTINGS]:
        assert n in names
    t = tt.toggles("all-slow+agfs=2+prefer-deferred")
    assert t.slow_paths() == tuple(tt.SLOW_PATHS) and t.aggressive_guard_free_semantics == 2
    assert t.env_kwargs() == {"prefer_deferred_runtime_asserts_over_guards": True}
    assert tt.toggles("default").env_kwargs() == {} and tt.toggles("default").fx_overrides() == {}


# --- every toggle takes effect and is restored ------------------------------------------------

#: exercises every slow path: unbacked arithmetic, a sum of symbols, u >= 0, a backed guard,
#: an unbacked-vs-constant relational, a replacement
PROBE = P(("backed", 6), ("backed", 4), ("unbacked", 5), ("binop", "+", R(0), R(2)),
          ("check", ">=", R(2), 0), ("ask", "bool", ">", R(0), R(1)),
          ("ask", "guard_or_false", ">", R(2), 2), ("binop", "*", R(2), 2),
          ("binop", "+", R(1), R(3)), ("check", "==", R(2), 5), ("ask", "bool", "==", R(4), 10))


def patched_state() -> dict:
    """Every attribute a toggle may touch."""
    st = {f"SymNode.{a}": vars(sn.SymNode).get(a) for a in
          ["expr", "__init__", "_eq", "_ne", "_gt", "_ge", "_lt", "_le"]}
    st |= {f"ShapeEnv.{a}": vars(ss.ShapeEnv).get(a) for a in
           ["_maybe_guard_rel", "_should_skip_static_eval", "_maybe_fast_eval_comparison"]}
    st["sym_node._optimized_add"] = sn._optimized_add
    st["fx_config.do_not_emit_stack_traces"] = fx_config.do_not_emit_stack_traces
    st |= {f"fxx.{k}": getattr(fxx, k) for k in ["aggressive_guard_free_semantics",
                                                  "backed_size_oblivious"]}
    return st


@pytest.mark.parametrize("name", list(tt.SLOW_PATHS))
def test_slow_path_runs_and_is_restored(name):
    before = patched_state()
    with tt.applied(f"slow:{name}") as cfg:
        assert patched_state() != before
        o = ENV.observe(PROBE, "default", ())  # "default" patches nothing more
    assert cfg.counts[name] > 0, dict(cfg.counts)
    assert set(cfg.counts) == {name}
    assert patched_state() == before
    assert key(o)[:4] == key(observe(PROBE))[:4]


@pytest.mark.parametrize("config", tt.config_names())
def test_every_config_is_restored_when_the_body_raises(config):
    before = patched_state()
    with pytest.raises(KeyError), tt.applied(config):
        raise KeyError("body failed")
    assert patched_state() == before


def test_all_slow_runs_every_slow_path():
    with tt.applied("all-slow") as cfg:
        ENV.observe(PROBE, "default", ())
    assert set(cfg.counts) == set(tt.SLOW_PATHS) and min(cfg.counts.values()) > 0


def test_slow_path_alone_counts_into_a_given_counter():
    c = Counter()
    with tt.slow_path("skip-static", c):
        observe(PROBE)
    assert c["skip-static"] > 0
    with pytest.raises(ValueError, match="known: expr-cache"), tt.slow_path("nope"):
        pass


def test_nested_slow_paths_count_into_their_own_counters():
    with tt.applied("slow:smart-sort") as outer:
        with tt.applied("slow:smart-sort") as inner:
            ENV.observe(PROBE, "default", ())
        n_inner = inner.counts["smart-sort"]
        ENV.observe(PROBE, "default", ())
    assert n_inner > 0 and outer.counts["smart-sort"] > 0


def test_stack_traces_off_sets_the_fx_config():
    # the observable difference (export stack_trace metadata) is in tests/nocover
    with tt.applied("stack-traces-off"):
        assert fx_config.do_not_emit_stack_traces is True
    assert fx_config.do_not_emit_stack_traces is False


def test_aggressive_levels_match_torch_notes():
    # measured on torch 2.13: with u >= 5 and v != 3 checked, gof(u>=3), got(u<3), gof(v!=3)
    p = P(("unbacked", 6), ("unbacked", 4), ("check", ">=", R(0), 5), ("check", "!=", R(1), 3),
          ("ask", "guard_or_false", ">=", R(0), 3), ("ask", "guard_or_true", "<", R(0), 3),
          ("ask", "guard_or_false", "!=", R(1), 3))
    got = {c: [(a, h) for _, a, h in answers(observe(p, c))] for c in ["default", *AGGRESSIVE]}
    assert got["default"] == [("True", "static"), ("False", "static"), ("True", "static")]
    assert got["agfs=1"] == [("True", "static"), ("False", "static"), ("False", "fallback")]
    assert got["agfs=2"] == [("False", "fallback"), ("True", "fallback"), ("False", "fallback")]


def test_settings_configs_take_effect():
    one = P(("backed", 1), ("backed", 5), ("backed", 5))
    assert observe(one).out_exprs[0] == "1"
    o = observe(one, "no-specialize-zero-one")
    assert o.out_exprs[0].startswith("s") and ("s" + o.out_exprs[0][1:], 1) in o.binding
    assert len(set(observe(one, "no-duck-shape").out_exprs[1:])) == 2
    assert len(set(observe(one).out_exprs[1:])) == 1

    gof = P(("backed", 6), ("ask", "guard_or_false", ">", R(0), 2))
    assert answers(observe(gof, "backed-size-oblivious"))[0][1:] == ("False", "fallback")
    assert observe(gof, "backed-size-oblivious").guards == ()

    chk = P(("backed", 6), ("check", ">", R(0), 2))
    assert len(observe(chk).guards) == 1 and observe(chk).asserts == ()
    o = observe(chk, "prefer-deferred")
    assert o.guards == () and len(o.asserts) == 1


# --- properties on generated programs ---------------------------------------------------------

FAST = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(qprograms())
def test_semantics_preserving_configs_agree(p):
    base = observe(p)
    for c in PRESERVING:
        o = observe(p, c)
        assert key(o) == key(base), show(p, base, o)


@FAST
@given(qprograms())
def test_aggressive_levels_only_turn_claims_into_fallbacks(p):
    base = observe(p)
    modes = [p.instrs[k].args[0] for k in p.asks()]
    for c in AGGRESSIVE:
        o = observe(p, c)
        assert o.outcome.status == base.outcome.status, show(p, base, o)
        assert len(o.decisions) == len(base.decisions), show(p, base, o)
        for mode, a, b in zip(modes, base.decisions, o.decisions):
            if b.how == "fallback":
                assert b.answer == str(FALLBACK[mode]), show(p, base, o)
            else:  # a claim stays a claim, with the same answer
                assert a.how != "fallback" and a.answer == b.answer, show(p, base, o)


def _size_like(p: QProgram) -> bool:
    return any(i.op == "check_is_size" or (i.op == "constrain_range" and i.args[1] >= 0) for i in p.instrs)


def check_truth(p: QProgram, o: Observation) -> None:
    t = truth(p)
    asks = p.asks()
    modes = [p.instrs[k].args[0] for k in asks]
    if o.outcome.status == "error":
        assert t.failed_check is not None, show(p, o)
    if o.outcome.status == "dde":  # only a question without fallback may raise
        assert modes[len(o.decisions)] in ("bool", "size_oblivious"), show(p, o)
    for k, (d, want) in enumerate(zip(o.decisions, t.answers)):
        if t.failed_check is not None and asks[k] > t.failed_check:
            break
        if d.how == "fallback":
            assert d.answer == str(FALLBACK[modes[k]]), show(p, o)
        elif not (modes[k] == "size_oblivious" and (o.config == "backed-size-oblivious" or _size_like(p))):
            # (size-oblivious reasoning on size-like symbols assumes >= 2 by design: backed ones
            # under backed_size_oblivious, unbacked ones marked by check_is_size or by a range
            # constraint from 0 up, torch._constrain_as_size as traced)
            assert d.answer == str(want), f"question {k}: {d}\n" + show(p, o)
    if t.failed_check is None:
        for k, (got, want) in enumerate(zip(o.out_eval, t.values)):
            assert got in ("", str(want)), f"v{k} = {o.out_exprs[k]}\n" + show(p, o)


@FAST
@given(qprograms())
def test_claims_equal_the_concrete_truth(p):
    has_zero_backed = any(i.op == "backed" and i.args[0] == 0 for i in p.instrs)
    if any(i.op == "constrain_range" and i.args[1] == i.args[2] for i in p.instrs):
        return  # torch bug, pinned by test_dde_history_oracles.py::test_singleton_range_then_check
    for c in ["default", *AGGRESSIVE, *SETTINGS]:
        if c in ZERO_SIZED and has_zero_backed:
            continue  # torch bug, pinned by test_zero_valued_backed_symbol
        check_truth(p, observe(p, c))


def test_truth_checker_catches_a_wrong_claim():
    p = P(("backed", 6), ("ask", "bool", ">", R(0), 2))
    o = observe(p)
    from dataclasses import replace

    from shapefuzz.systems.observation import Decision
    bad = replace(o, decisions=(Decision(o.decisions[0].expr, "False", "static"),))
    with pytest.raises(AssertionError):
        check_truth(p, bad)


# --- torch disagreements, pinned ---------------------------------------------------------------

@pytest.mark.parametrize("config", sorted(ZERO_SIZED))
@pytest.mark.xfail(strict=True, reason="torch 2.13: a backed symbol created for a 0 (without 0/1 "
                   "specialization) is positive=True in sympy, so Eq(s, 0) is statically False; "
                   "reachable via backed_size_oblivious with a size-0 dim (see tests/nocover)")
def test_zero_valued_backed_symbol(config):
    p = P(("backed", 0), ("ask", "bool", "==", R(0), 0))
    check_truth(p, observe(p, config))


@pytest.mark.xfail(strict=True, reason="torch 2.13: with backed_size_oblivious, guarding "
                   "Eq(s0 + s1, 1) for sizes 1 and 0 raises AssertionError 'tgt_bound=VR[-1, 1] "
                   "not a subset of src_bound=VR[0, 2]' in ShapeEnv._set_replacement")
def test_backed_size_oblivious_sum_equal_one():
    p = P(("backed", 1), ("backed", 0), ("binop", "+", R(0), R(1)), ("ask", "bool", "==", R(2), 1))
    o = observe(p, "backed-size-oblivious")
    assert o.outcome.status == "ok", o.outcome.short()


def test_registry_lists_every_config():
    from shapefuzz.systems import CONFIGS, SYSTEMS, get_system

    if "torch-env" not in SYSTEMS:
        pytest.skip("torch-env is not registered in shapefuzz/systems/__init__.py yet")
    assert CONFIGS["torch-env"] == tt.config_names()
    assert get_system("torch-env").name == "torch-env"


@pytest.mark.parametrize("config", ["no-duck-shape", "backed-size-oblivious", "prefer-deferred"])
def test_a_value_undefined_at_replayed_values_is_unknown_not_a_crash(config):
    """`u0 % 2` with u0 replayed at -1 is torch's Mod(-1, 2), which asserts at construction: the
    replay's value is unknown there (it crashed the worker, and the campaign, before)."""
    p = QProgram.from_json({"schema": 1, "kind": "questions", "instrs": [
        {"op": "backed", "args": [2]}, {"op": "unbacked", "args": [0]},
        {"op": "check", "args": [">=", {"v": 1}, 0]}, {"op": "binop", "args": ["%", {"v": 1}, 2]}]})
    obs = TorchEnvSystem().observe(p, config)
    assert obs.outcome.status == "ok" and question_replays(obs), obs.outcome


def test_a_value_torch_cannot_build_at_the_program_values_is_unknown():
    """backed(0) without 0/1 specialization is assumed positive by torch 2.13 (the known upstream
    bug), so `(s0 - 1) % 2` becomes torch's Mod, which asserts at s0 = 0: the value is unknown
    (it was a shapefuzz bug report before)."""
    p = QProgram.from_json({"schema": 1, "kind": "questions", "instrs": [
        {"op": "backed", "args": [0]}, {"op": "backed", "args": [7]},
        {"op": "binop", "args": ["+", -1, {"v": 0}]}, {"op": "binop", "args": ["%", {"v": 2}, 2]}]})
    for config in ("no-specialize-zero-one", "backed-size-oblivious"):
        obs = TorchEnvSystem().observe(p, config)
        assert obs.outcome.status == "ok", obs.outcome


def _memos_cleared() -> None:
    from shapefuzz.systems import common, qreplay, torch_env

    for memo in (common._printed, qreplay._holds_under, qreplay._eval_under, torch_env._variants):
        memo.cache_clear()


def test_memoized_observations_equal_fresh_ones_over_generated_programs():
    # Note [print memo] and Note [replay memo]: a program's configs share printed text, replayed
    # truths and values through process-wide memos; each must equal what a config computes with
    # every memo empty (so a memo keyed too coarsely, e.g. without the binding, fails here)
    from dataclasses import replace

    from hypothesis import seed

    from shapefuzz.systems import CONFIGS

    def untimed(o):
        return replace(o, elapsed_s=0.0, smt=tuple(replace(c, elapsed_ms=0.0) for c in o.smt))

    seen: list[int] = []

    @seed(16)
    @settings(max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(qprograms())
    def check(program):
        shared = [ENV.observe(program, c) for c in CONFIGS["torch-env"]]
        for c, a in zip(CONFIGS["torch-env"], shared):
            _memos_cleared()
            assert untimed(a) == untimed(ENV.observe(program, c)), (c, program.dumps())
        seen.append(sum(len(question_replays(o)) for o in shared))

    check()
    assert len(seen) == 25 and sum(seen) > 0  # the replays ran: the memo was exercised


def test_the_print_memo_keeps_expressions_with_equal_hashes_apart():
    import sympy

    from shapefuzz.systems.common import sym_str

    two, two_f = sympy.Integer(2), sympy.Float(2.0)
    assert hash(two) == hash(two_f)  # a memo keyed by hash alone would print one for the other
    assert (sym_str(two), sym_str(two_f)) == ("2", "2.00000000000000")
    x = sympy.Symbol("x", integer=True)
    assert sym_str(x + 1) == "x + 1" and sym_str(True) == "True"


def test_observations_pickle_by_position_and_back_equal():
    # Note [observation pickling]: what a worker sends is what the campaign reads
    import pickle

    p = P(("unbacked", 3), ("backed", 5), ("check", ">=", R(0), 0), ("ask", "guard_or_false", ">=", R(0), R(1)))
    for config in ("default", "agfs=2"):
        obs = observe(p, config)
        assert obs.decisions and question_replays(obs) and "history" in obs.evidence
        back = pickle.loads(pickle.dumps(obs, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == obs and type(back.decisions[0]) is type(obs.decisions[0])
        assert obs.__getstate__()[0] == obs.system  # the fields in order, not dataclasses' list

"""`ref` on tensor programs: every op family's symbolic shape rule (Note [symbolic shape rules]).

Unmodified, ref's symbolic output shapes evaluate to eager's under its binding and every
semantics-preserving config agrees with all-off; ref and make_fx agree on fixed programs that
exercise each family; a bug planted in one shape rule is found (eager agreement, system
differential) and a bug planted in an optimization path is found on tensor programs too; the
ref repro.py replays a finding and exits 1 while it reproduces, 0 once it does not."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from shapefuzz.ops import all_ops, get_op
from shapefuzz.oracles import check_all
from shapefuzz.oracles.agreement import eager_agreement
from shapefuzz.oracles.differential import config_differential, config_kind, system_differential
from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.strategies import programs
from shapefuzz.systems import CONFIGS, get_system
from shapefuzz.systems.ref import RefSystem
from shapefuzz.systems.ref import env as env_mod

R = Ref
REF = RefSystem()
EAGER = get_system("eager")
OWN_FAMILIES = {"scalar", "datadep", "symint", "check", "reshape", "layout", "cat", "split",
                "factory", "reduce", "pointwise", "branch"}


def sample(n: int) -> list[Program]:
    out: list[Program] = []

    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              derandomize=True, suppress_health_check=list(HealthCheck))
    @given(programs(max_ops=6))
    def collect(p):
        out.append(p)

    collect()
    return out


@pytest.fixture(scope="module")
def progs() -> list[Program]:
    return sample(80)


def inp(name, dtype, shape, dims, data=None) -> InputSpec:
    n = 1
    for k in shape:
        n *= k
    if data is None:
        data = tuple((k % 3 == 0) if dtype == "bool" else (k % 4) for k in range(n))
    return InputSpec(name, dtype, tuple(shape), tuple(dims), tuple(data))


def prog(inputs, *instrs, outputs) -> Program:
    p = Program(tuple(inputs), tuple(Instr(op, tuple(a), n) for op, a, n in instrs), tuple(outputs))
    p.types()
    return p


X = inp("x", "int", (6, 4), ("dynamic", "dynamic"))
M = inp("m", "bool", (6,), ("dynamic",), tuple(k % 2 == 0 for k in range(6)))
# One program per family, each with data-dependent sizes where the family takes SymInts.
FAMILY_PROGRAMS = {
    "item+narrow": prog([X], ("item", (R(0), "first"), 1), ("check", (">=", R(1), 0), 0),
                        ("check", ("<=", R(1), 6), 0), ("narrow", (R(0), 0, 0, R(1)), 1), outputs=[2]),
    "nonzero+split": prog(
        [M], ("nonzero", (R(0),), 1), ("size", (R(1), 0), 1), ("binop", ("//", R(2), 2), 1),
        ("binop", ("-", R(2), R(3)), 1), ("split", (R(1), (R(3), R(4)), 0), 2), outputs=[5, 6]),
    "masked_select+cat": prog([X], ("mask", (R(0), ">", 1), 1), ("masked_select", (R(0), R(1)), 1),
                              ("cat", ((R(2), R(2)), 0), 1), ("flip", (R(3), (0,)), 1), outputs=[4]),
    "reshape+expand": prog([X], ("reshape", (R(0), (-1, 2)), 1), ("unsqueeze", (R(1), 0), 1),
                           ("expand", (R(2), (3, -1, -1)), 1), ("permute", (R(3), (2, 0, 1)), 1),
                           outputs=[4]),
    "slice+select+repeat": prog([X], ("slice", (R(0), 0, 1, -1), 1), ("select", (R(1), 1, -1), 1),
                                ("repeat", (R(2), (2, 1)), 1), ("transpose", (R(3), 0, 1), 1),
                                outputs=[4]),
    "factory+pointwise": prog([X], ("size", (R(0), 0), 1), ("zeros", ((R(1), 1),), 1),
                              ("add", (R(2), R(0)), 1), ("sum", (R(3), 0, True), 1),
                              ("cast", (R(4), "float"), 1), ("mean", (R(5), 1, False), 1),
                              outputs=[6]),
    "unbind+chunk+squeeze": prog([X], ("unbind", (R(0), 1), 4), ("chunk", (R(1), 2, 0), 2),
                                 ("unsqueeze", (R(5), 1), 1), ("squeeze", (R(7), 1), 1),
                                 outputs=[6, 8]),
    "branches": prog([X], ("item", (R(0), "sum"), 1), ("branch", ("guard_or_false", "max", R(1), 3), 1),
                     ("branch", ("guard_or_true", "slice_all", R(0), 0, R(1)), 1),
                     ("branch", ("if", "narrow_full", R(0), 1, 4), 1), outputs=[2, 3, 4]),
}


#: ops of OWN_FAMILIES that have no reference rule on purpose (ref skips their programs)
WITHOUT_RULE = {
    "branch": "its arms are other ops, each with its rule",
    "pad": "torch asks each pad's sign twice in an order only its refs keep (the Pad docstring)",
}


def test_every_op_of_these_families_has_a_symbolic_rule():
    for name, op in all_ops().items():
        if op.family in OWN_FAMILIES and name not in WITHOUT_RULE:
            assert type(op).symbolic is not type(op).__mro__[-2].symbolic, name
    assert all(all_ops()[name].family in OWN_FAMILIES for name in WITHOUT_RULE)


@pytest.mark.parametrize("name", sorted(FAMILY_PROGRAMS))
def test_ref_shapes_equal_eager_on_each_family(name):
    p = FAMILY_PROGRAMS[name]
    o = REF.observe(p, "default", ())
    assert o.outcome.status == "ok", o.outcome
    want = EAGER.observe(p, "default", ())
    assert want.outcome.status == "ok"
    assert [v.shape for v in o.reference.values] == [v.shape for v in want.reference.values]
    assert all(o.out_eval), o.out_exprs  # every output shape is evaluable under the binding
    assert not eager_agreement(want, o, frozenset())


@pytest.mark.parametrize("name", sorted(FAMILY_PROGRAMS))
def test_ref_and_make_fx_agree_on_each_family(name):
    p = FAMILY_PROGRAMS[name]
    obs = [REF.observe(p, "default", ()), get_system("make_fx").observe(p, "default", [])]
    assert not system_differential(obs, EAGER.observe(p, "default", ()), p)


def test_unmodified_ref_agrees_with_eager_and_across_configs(progs):
    # The settings configs change what may be assumed, as torch's do: under
    # backed-size-oblivious, squeeze() of a backed dim of size 1 keeps it, exactly as torch's
    # meta does while its kernel squeezes (corpus/squeeze-unbacked-meta-make_fx), so eager
    # agreement is only promised for torch's default assumptions.
    configs = [c for c in CONFIGS["ref"] if config_kind(c) != "settings"]
    ran = 0
    for p in progs:
        eager = EAGER.observe(p, "default", ())
        obs = [REF.observe(p, c, ()) for c in configs]
        findings = check_all(p, eager, obs)
        assert not findings, (p.pretty(), [f.detail for f in findings])
        ran += obs[0].outcome.status == "ok" and obs[0].outcome.exc_type != "NoShapeRule"
    assert ran > len(progs) // 2


def _narrow_off_by_one(orig):
    def bad(self, args, n_out, s):
        (out,) = orig(self, args, n_out, s)
        if s.static(args[2]) != 0:  # a wrong size only when the start is not 0
            return (s.tensor(out.shape[:args[1]] + (out.shape[args[1]] + 1,) + out.shape[args[1] + 1:],
                             out.dtype),)
        return (out,)

    return bad


def test_a_bug_planted_in_a_shape_rule_is_found(monkeypatch):
    narrow = type(get_op("narrow"))
    monkeypatch.setattr(narrow, "symbolic", _narrow_off_by_one(narrow.symbolic))
    p = prog([X], ("narrow", (R(0), 0, 1, 3), 1), outputs=[1])
    eager = EAGER.observe(p, "default", ())
    o = REF.observe(p, "default", ())
    kinds = {f.symptom for f in eager_agreement(eager, o, frozenset())}
    assert "symbolic-shape" in kinds
    sd = system_differential([o, get_system("make_fx").observe(p, "default", [])], eager, p)
    assert [f.symptom for f in sd] == ["shape"], sd


def test_a_bug_planted_in_an_optimization_is_found_on_tensor_programs(monkeypatch):
    def stale(env, node):  # the expr cache never invalidated (optimization 3's bug)
        hit = env._expr_cache.get(node.id)
        return hit[1] if hit is not None else env_mod.expr_uncached(env, node)

    monkeypatch.setattr(env_mod, "expr_cached", stale)
    y = inp("y", "int", (3,), ("dynamic",))
    # _check(nonzero count == y.shape[0]) replaces u0 by s1: a stale u0 cannot be guarded
    p = prog([M, y], ("nonzero", (R(0),), 1), ("size", (R(2), 0), 1), ("size", (R(1), 0), 1),
             ("check", ("==", R(3), R(4)), 0), ("branch", ("guard_or_false", "eq", R(3), 3), 1),
             outputs=[5])
    obs = [REF.observe(p, c, ()) for c in CONFIGS["ref"]]
    found = config_differential(obs, p)
    assert any("expr-cache" in f.key for f in found), [f.detail for f in found]


def test_repro_replays_a_ref_finding_and_exits_1_while_it_reproduces(monkeypatch, capsys):
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import repro_source
    from shapefuzz.repro.ref import replay_ref_finding

    narrow = type(get_op("narrow"))
    orig = narrow.symbolic
    monkeypatch.setattr(narrow, "symbolic", _narrow_off_by_one(orig))
    p = prog([X], ("narrow", (R(0), 0, 1, 3), 1), outputs=[1])
    eager = EAGER.observe(p, "default", ())
    (f,) = eager_agreement(eager, REF.observe(p, "default", ()), frozenset())
    case = Case(f, p, None, "bug", (), "2.13")
    src = repro_source(case)
    assert "replay_ref_finding" in src and "import json" in src
    compile(src, "repro.py", "exec")
    assert replay_ref_finding(json.loads(json.dumps(case.to_json()))) == 1
    assert "BUG" in capsys.readouterr().out
    monkeypatch.setattr(narrow, "symbolic", orig)  # fixed
    assert replay_ref_finding(case.to_json()) == 0


def test_an_op_without_a_rule_is_skipped_not_a_finding(monkeypatch):
    flip = type(get_op("flip"))
    monkeypatch.delattr(flip, "symbolic")
    p = prog([X], ("flip", (R(0), (0,)), 1), outputs=[1])
    o = REF.observe(p, "default", ())
    assert (o.outcome.status, o.outcome.exc_type) == ("ok", "NoShapeRule")
    eager = EAGER.observe(p, "default", ())
    assert not check_all(p, eager, [o])


def test_system_differential_repro_runs_the_torch_side(monkeypatch, capsys):
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro.ref import replay_ref_finding

    narrow = type(get_op("narrow"))
    monkeypatch.setattr(narrow, "symbolic", _narrow_off_by_one(narrow.symbolic))
    p = prog([X], ("narrow", (R(0), 0, 1, 3), 1), outputs=[1])
    eager = EAGER.observe(p, "default", ())
    (f,) = system_differential([REF.observe(p, "default", ()),
                                get_system("make_fx").observe(p, "default", [])], eager, p)
    assert f.system == "make_fx"
    assert replay_ref_finding(Case(f, p, None, "bug", (), "2.13").to_json()) == 1
    out = capsys.readouterr().out
    assert "make_fx [default]: ok" in out and "output 0: [3, s" in out  # the torch side, printed


def test_expand_of_a_size_that_can_only_broadcast_agrees_with_eager():
    """Note [expand that can only broadcast]: full((min(1, u0),)).expand(3, 3) with u0 = 1 is
    valid only when the size is 1; torch's expand checks min(1, u0) == 3, known False, and
    raises at trace time. ref broadcasts as eager does (no finding against ref), and eager
    agreement reports torch's error against torch."""
    b = inp("b", "bool", (4,), ("dynamic",), (False, True, False, False))
    p = prog([b], ("item", (R(0), "sum"), 1), ("binop", ("min", 1, R(1)), 1),
             ("full", ((R(2),), -1), 1), ("expand", (R(3), (3, 3)), 1), outputs=[4])
    eager = EAGER.observe(p, "default", ())
    o = REF.observe(p, "default", ())
    assert o.outcome.status == "ok", o.outcome
    assert not eager_agreement(eager, o, frozenset())
    fx = get_system("make_fx").observe(p, "default", [])
    assert fx.outcome.status == "error" and "non-broadcasting" in fx.outcome.message, fx.outcome
    found = eager_agreement(eager, fx, frozenset())
    assert [(f.system, f.symptom) for f in found] == [("make_fx", "trace-error")], found

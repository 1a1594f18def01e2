"""The program generator: mostly valid programs, every family reachable, settings validated."""

from __future__ import annotations

import collections

import hypothesis.strategies as st
import pytest
from _helpers import run
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import InvalidArgument

from shapefuzz.ops import all_ops, families, get_op
from shapefuzz.program import Program, Ref, _refs
from shapefuzz.strategies import GenSettings, programs, programs_from

N = 300


def sample(strategy, n: int) -> list[Program]:
    """n generated examples (no shrinking, no database: a plain sample of the distribution)."""
    out: list[Program] = []

    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(p):
        out.append(p)

    collect()
    return out


@pytest.fixture(scope="module")
def corpus() -> list[Program]:
    progs = sample(programs(), N)
    assert len(progs) >= N * 0.9  # hypothesis may stop a little early on duplicates
    return progs


def is_valid(p: Program) -> bool:
    try:
        run(p)
    except Exception:
        return False
    return True


def test_valid_fraction(corpus):
    valid = sum(map(is_valid, corpus))
    frac = valid / len(corpus)
    print(f"\nvalid fraction: {valid}/{len(corpus)} = {frac:.3f}")
    assert frac >= 0.70


def test_generated_programs_type_check_and_are_non_trivial(corpus):
    for p in corpus:
        assert len(p.types()) == p.n_values()
        assert p.outputs and all(0 <= o < p.n_values() for o in p.outputs)
    assert sum(len(p.instrs) >= 3 for p in corpus) >= len(corpus) // 2


def test_every_family_appears(corpus):
    counts = collections.Counter(get_op(op).family for p in corpus for op in p.op_names())
    print("\nfamily counts:", dict(sorted(counts.items())))
    opt_in = {op.family for op in all_ops().values() if op.opt_in}
    assert opt_in == {"flex"}
    assert set(families()) - set(counts) == opt_in


def halves(p: Program) -> set[int]:
    """Values defined as `u // 2` for a SymInt u (a derived extent, as in seed 001)."""
    return {d[0] for ins, d in p.definitions()
            if ins.op == "binop" and ins.args[0] == "//" and isinstance(ins.args[1], Ref)
            and ins.args[2] == 2}


def test_derived_extents_are_reachable(corpus):
    with_half = [p for p in corpus if halves(p)]
    assert with_half, "no program computes u // 2"
    # ... and such an extent flows into a shape argument of a tensor op
    used = [p for p in with_half
            if any(r.index in halves(p) for ins in p.instrs if ins.op not in ("binop", "check")
                   for r in _refs(ins.args))]
    assert used, "no u // 2 is ever used as an extent"
    print(f"\n{len(with_half)} programs compute u // 2, {len(used)} use it in a tensor op")


def reasks(p: Program) -> list[int]:
    """Positions of branches that ask an earlier branch's question again after a check
    (Note [re-asked branches])."""
    seen, out = set(), []
    for k, ins in enumerate(p.instrs):
        if ins.op != "branch":
            continue
        key = repr(ins.args[1:])  # the mode may change (Note [re-asked branches])
        if key in seen and any(i.op == "check" for i in p.instrs[:k]):
            out.append(k)
        seen.add(key)
    return out


def test_branches_are_re_asked_after_a_check(corpus):
    again = [p for p in corpus if reasks(p)]
    print(f"\n{len(again)} of {len(corpus)} programs re-ask a branch after a check")
    assert len(again) >= len(corpus) // 100
    # the check between states a condition that holds: the program stays valid in eager
    assert sum(map(is_valid, again)) >= 0.9 * len(again)
    for p in again:
        k = reasks(p)[0]
        first = next(j for j, ins in enumerate(p.instrs)
                     if ins.op == "branch" and ins.args[1:] == p.instrs[k].args[1:])
        assert any(ins.op == "check" for ins in p.instrs[first:k])


SPLIT_OPS = {"split", "chunk", "unbind"}
HELPERS = {"size", "binop", "item"}


def test_family_restriction():
    progs = sample(programs(families=("split",), max_ops=4), 60)
    used = {op for p in progs for op in p.op_names()}
    assert used <= SPLIT_OPS | HELPERS, used - SPLIT_OPS - HELPERS
    assert used & SPLIT_OPS == SPLIT_OPS  # all three are generated
    assert all(len(p.instrs) >= 1 for p in progs if set(p.op_names()) & SPLIT_OPS)


@settings(max_examples=30)
@given(programs(families=("cat", "reduce"), max_ops=3, max_rank=2, max_size=3, max_inputs=2,
                dim_kinds=("static",)))
def test_settings_bound_the_programs(p):
    assert 1 <= len(p.inputs) <= 2
    for spec in p.inputs:
        assert len(spec.shape) <= 2 and all(n <= 3 for n in spec.shape)
        assert set(spec.dims) <= {"static"}
    assert {get_op(op).family for op in p.op_names()} <= {"cat", "reduce"}  # no helpers needed


@pytest.mark.parametrize("kwargs", [
    {"families": ("nope",)},
    {"families": ("split", "Split")},
    {"families": "split"},       # a string, not a tuple of family names
    {"families": None},
    {"families": (["split"],)},
    {"max_ops": 0}, {"max_ops": 65}, {"max_ops": 2.0}, {"max_ops": True}, {"max_ops": "3"},
    {"max_rank": 0}, {"max_rank": 6},
    {"max_size": 0}, {"max_size": -1},
    {"max_inputs": 0}, {"max_inputs": 7},
    {"dim_kinds": ()}, {"dim_kinds": ("symbolic",)}, {"dim_kinds": None},
])
def test_invalid_arguments(kwargs):
    with pytest.raises(InvalidArgument):
        programs(**kwargs)


def test_invalid_settings_and_empty_family_selection():
    with pytest.raises(ValueError, match="max_numel"):
        GenSettings(max_numel=8)
    assert isinstance(programs_from(GenSettings(families=("check",))), st.SearchStrategy)
    with pytest.raises(InvalidArgument, match="unknown op families"):
        programs(families=("shapes",))


def test_valid_arguments_are_accepted():
    for fam in families():
        programs(families=(fam,))
    programs(max_ops=64, max_rank=5, max_size=64, max_inputs=6, dim_kinds=("unbacked",))


def test_cached_choice_strategies_are_shared_and_typed():
    """Note [cached strategies]: one strategy per distinct choice list, and 1, 1.0 and True
    (equal as dict keys) are other choices; an unhashable list still works, uncached."""
    from hypothesis import given

    from shapefuzz.ops.choices import sampled_from

    assert sampled_from([0, 1]) is sampled_from((0, 1))
    assert len({id(sampled_from(v)) for v in ([0, 1], [0.0, 1.0], [False, True])}) == 3
    seen = set()

    @given(sampled_from([0.0, 1.0]), sampled_from([False, True]), sampled_from([[1], [2]]))
    def draw(f, b, lst):
        seen.add((type(f), type(b), type(lst)))

    draw()
    assert seen == {(float, bool, list)}


def test_every_program_kind_has_a_strategy():
    """Note [program kinds]: a kind's strategy lives in shapefuzz.strategies (a layer above the
    programs); a kind without one could never be generated: add it to programs_of_kind."""
    from shapefuzz.program.kinds import KINDS
    from shapefuzz.program.questions import QProgram
    from shapefuzz.strategies import programs_of_kind

    drawn = {k: sample(programs_of_kind(k, GenSettings(max_ops=2)), 3) for k in KINDS}
    assert all(isinstance(p, Program) for p in drawn["tensors"]), drawn
    assert all(isinstance(p, QProgram) for p in drawn["questions"]), drawn
    assert all(p.kind == k for k, ps in drawn.items() for p in ps)

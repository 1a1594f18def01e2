"""Root-cause buckets (Note [root cause bucket] in shapefuzz/oracles/root_cause.py): the spurious
DDEs of reports/torch-2.13 row 8 land in a few buckets by what torch lost, variants of one cause
in one bucket and different causes in different ones; a wrong claim is bucketed by the assumption
torch made (row 4)."""

from __future__ import annotations

import pytest

from shapefuzz.oracles.root_cause import Knowledge, assumption_bucket, dde_bucket, read_expr

pytest.importorskip("torch")

U0 = (("u0", 0, None),)  # an unbacked size: torch's range [0, int_oo], the fact u0 >= 0
S = (("s0", 2, None),)  # a backed size under 0/1 specialization
ROW8 = {  # expression, facts, ranges -> the family it must land in
    "u0 < u0//2": (("u0 >= 0",), U0, "FloorDiv"),
    "Eq(u0 + 1, (u0 + 1)//2)": (("u0 >= 0",), U0, "FloorDiv"),
    "Ne((2//u0), 3)": ((), (), "FloorDiv"),
    "(1//u0) < 2": ((), (), "FloorDiv"),
    "Ne(PythonMod(u0, s0), s0)": (("s0 >= 2",), S, "Mod"),
    "Ne(Max(2, u0), Mod(s0, Max(2, u0)))": (("s0 >= 2",), S, "Mod"),
    "Min(2, (u0//s0)) <= (u0//s0)": (("s0 >= 2",), S, "Min"),
    "Min(s0, u0) <= u0": (("s0 >= 2",), S, "Min"),
    "Eq(Min(s0, u0), 2*s0)": (("s0 >= 2",), S, "Min"),
    "u0 < Min(u0, u0//2)": (("u0 >= 0",), U0, "Min"),
    "Eq(u1, Max(u0, u1))": (("u0 > u1",), (), "Min"),  # Max: the same gap, mirrored
    "Eq(u0 + (((Max(0, (u0//2) - Min(u0, (u0//2)) + 1)) + 1)//2), 0)":
        (("(u0//2) + 1 <= u0", "u0 >= 0"), U0, "transitive"),
    "Eq(u0, 0)": (("Ne((u0//2), 0)", "u0 >= 0"), U0, "transitive"),
    "u0 <= u2": (("u0 <= u1", "u1 <= u2"), (), "transitive"),
    "Eq(3*u0, 1)": ((), (), "integral"),
    "u0**2 >= u0": ((), (), "integral"),
    "Ne(PythonMod(2, u0)**2, 2)": ((), (), "integral"),
}


def bucket(expr: str) -> str:
    facts, ranges, _ = ROW8[expr]
    return dde_bucket(expr, Knowledge(facts, ranges))


def family(b: str) -> str:
    """The report's families: the head of a lost subterm (Mod and PythonMod are one), or the
    relation's cause."""
    inner = b.removeprefix("lost[").removesuffix("]")
    return inner.partition(":")[2] if inner.startswith("relation:") else \
        inner.partition("(")[0].replace("PythonMod", "Mod").replace("MinMax", "Min")


@pytest.mark.parametrize("expr", sorted(ROW8))
def test_row8_expressions_land_in_their_family(expr):
    assert family(bucket(expr)) == ROW8[expr][2], bucket(expr)


@pytest.mark.parametrize("variants", [
    ("u0 < u0//2", "Eq(u0 + 1, (u0 + 1)//2)"),  # a FloorDiv not related to its numerator
    ("Ne((2//u0), 3)", "(1//u0) < 2"),  # c // u not bounded by |c|
    ("Min(2, (u0//s0)) <= (u0//s0)", "Min(s0, u0) <= u0", "Eq(Min(s0, u0), 2*s0)",
     "u0 < Min(u0, u0//2)", "Eq(u1, Max(u0, u1))"),  # a Min / Max not related to its arguments
    ("Eq(u0 + (((Max(0, (u0//2) - Min(u0, (u0//2)) + 1)) + 1)//2), 0)", "Eq(u0, 0)", "u0 <= u2"),
    ("Eq(3*u0, 1)", "u0**2 >= u0"),
])
def test_variants_of_one_cause_share_one_bucket(variants):
    assert len({bucket(e) for e in variants}) == 1, {e: bucket(e) for e in variants}


def test_different_causes_land_in_different_buckets():
    """Fails if the bucketing collapsed (everything in one bucket, or the old per-expression
    classes: one per expression)."""
    buckets = {bucket(e) for e in ROW8}
    families = {family(b) for b in buckets}
    assert families == {"FloorDiv", "Mod", "Min", "transitive", "integral"}
    assert len(buckets) <= 8 < len(ROW8)
    # the numerator relation and the constant-numerator interval are two losses of FloorDiv
    assert bucket("u0 < u0//2") == "lost[FloorDiv(x+,c+)]"
    assert bucket("Ne((2//u0), 3)") == "lost[FloorDiv(c+,x)]"


def test_torch_ranges_that_decide_it_are_ignored_not_lost():
    assert dde_bucket("u0 >= 2", Knowledge(("u0 >= 3",), (("u0", 3, None),))) == "ignored[ranges]"


def test_unreadable_or_undecidable_gives_no_bucket():
    assert dde_bucket("__import__('os')", Knowledge((), ())) == ""
    assert dde_bucket("Eq(u0, sqrt(u0))", Knowledge((), ())) == ""


def test_read_expr_reads_torch_functions():
    from torch.utils._sympy.functions import FloorDiv, PythonMod

    assert read_expr("(u0 + 1)//2").func is FloorDiv
    assert read_expr("floor(2 / u0)").func is FloorDiv
    assert read_expr("PythonMod(u0, s0)").func is PythonMod
    with pytest.raises(ValueError):
        read_expr("x.y")


def test_a_wrong_claim_is_bucketed_by_the_weakest_assumption_that_proves_it():
    """Row 4: without 0/1 specialization a backed size may be 0, torch treats it as positive."""
    zero_ok = Knowledge(("s0 >= 0",), (("s0", 0, None),))
    assert assumption_bucket("Ne(s0*(s0 + 2), 0)", zero_ok) == "assumes[backed>=1]"
    assert assumption_bucket("s0 >= 1", zero_ok) == "assumes[backed>=1]"
    assert assumption_bucket("s0 >= 2", zero_ok) == "assumes[backed>=2]"
    assert assumption_bucket("u0 >= 0", Knowledge((), ())) == "assumes[unbacked>=0]"
    assert assumption_bucket("Eq(s0, 3)", zero_ok) == ""  # no listed assumption explains it
    assert assumption_bucket("True", zero_ok) == ""  # folded already: nothing to ask


def _truth_keys(program) -> set[str]:
    from shapefuzz.campaign.evaluate import evaluate
    from shapefuzz.systems.jobs import run_job

    ev = evaluate(program, (("torch-env", "default"),), lambda jobs: [run_job(j) for j in jobs])
    return {f.key for f in ev.findings if f.oracle == "truth"}


def test_a_wrong_value_is_bucketed_by_the_rule_torch_applied():
    """Row 25: `(a // b) // c` folded to `a // (b*c)` for a negative unbacked c. Two programs whose
    whole expressions differ (C // (U * U) and U // (C * U)) are one bucket: the first wrong
    value is a // whose first operand is a FloorDiv."""
    from shapefuzz.program import Ref
    from shapefuzz.program.questions import QInstr, QProgram

    u = lambda v: QInstr("unbacked", (v,))
    const_first = QProgram((u(5), u(-2), QInstr("binop", ("//", 2, Ref(0))),
                            QInstr("binop", ("//", Ref(2), Ref(1)))))
    sym_first = QProgram((u(5), u(-2), QInstr("binop", ("//", Ref(0), 2)),
                          QInstr("binop", ("//", Ref(2), Ref(1)))))
    keys = _truth_keys(const_first) | _truth_keys(sym_first)
    assert keys == {"truth:wrong-value-expr:torch-env:default:wrong[//(FloorDiv,sym)]"}, keys


@pytest.mark.parametrize("late", [False, True])
def test_a_query_whose_budget_ran_out_does_not_move_the_bucket(monkeypatch, late):
    """On a loaded machine the first, short z3 budget runs out: the query is asked again with a
    longer one (late=False: then answered, the bucket is the unloaded one), and if it stays
    undecided the ladder stops (late=True: no bucket) rather than naming a stronger assumption."""
    import shapefuzz.systems.prover as prover
    from shapefuzz.oracles import root_cause

    real = prover.prove

    def loaded(facts, claim, settings, compiled=None):
        weakest = any(str(f) == "s0 >= 1" for f in facts)  # the backed>=1 rung of the ladder
        if settings.timeout_ms <= root_cause.QUERY_MS or (late and weakest):
            return type("V", (), {"status": "timeout"})()
        return real(facts, claim, settings, compiled)

    monkeypatch.setattr(prover, "prove", loaded)
    root_cause._assumption_bucket.cache_clear()
    zero_ok = Knowledge(("s0 >= 0",), (("s0", 0, None),))
    assert assumption_bucket("s0 >= 1", zero_ok) == ("" if late else "assumes[backed>=1]")
    root_cause._assumption_bucket.cache_clear()

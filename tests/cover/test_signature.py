"""Signatures (shapefuzz/oracles/signature.py, Note [signature]): the same bug met in other programs gives
the same signature; different bugs give different ones. Real findings: torch 2.13's size-0
backed "positive=True" bug through many different questions, the corpus's cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shapefuzz.campaign.evaluate import evaluate
from shapefuzz.cases.known import known_note, load_known
from shapefuzz.oracles.signature import Signature, expr_shape, make_signature, root_where
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.systems.jobs import run_job

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _local(jobs):
    return [run_job(j) for j in jobs]


# ---- expression shapes ------------------------------------------------------------------------
@pytest.mark.parametrize("a,b", [
    ("Ne(s75**2, 0)", "Eq(s3**2, 7)"),  # symbol numbers, constants and ==/!= do not matter
    ("s57 + s75 > 5", "s1 + s2 <= 0"),  # nor which ordering
    ("True", "False"),  # folded to a constant before torch saw it
    ("[u0, 1]", "[u7, 4]"),
    ("Max(1, Min(s0, FloorDiv(u3 + 2*s1, 4)))", "Max(2, Min(s9, FloorDiv(u0, 7)))"),  # deep detail elided
])
def test_same_shape(a, b):
    assert expr_shape(a) == expr_shape(b)


@pytest.mark.parametrize("a,b", [
    ("Eq(s0, 2)", "Eq(u0, 2)"),  # backed vs unbacked
    ("Eq(s0, 2)", "s0 >= 2"),  # equality vs ordering
    ("Eq(Mod(u0, 3), 1)", "Eq(FloorDiv(u0, 3), 1)"),
    ("[u0, 1]", "[u0]"),
    ("True", "Eq(s0, 0)"),
])
def test_different_shape(a, b):
    assert expr_shape(a) != expr_shape(b)


def test_shape_examples_and_hostile_text():
    assert expr_shape("Eq(Mod(u0, 3), 1)") == "Eq(Mod(U, C), C)"
    assert expr_shape("((s75//2)) >= 2") == "((B // C)) Cmp C"
    assert expr_shape("[u0, 1]") == "[U, C]"
    # text is tokenized, never evaluated
    assert expr_shape("__import__('os').system('echo hi')") .startswith("__import__")
    assert expr_shape(")(((" + "(" * 10000)  # unbalanced or huge input: no error
    assert len(expr_shape("s0 + " * 10000)) < 10000


def test_signature_is_a_frozen_value_with_a_stable_key():
    s = make_signature("truth", "wrong-static", "torch-env", "no-specialize-zero-one", expr="Ne(s3, 0)")
    assert s == Signature("truth", "wrong-claim", ("torch-env",), "no-specialize-zero-one", "Eq(B, C)")
    assert s.key() == "truth:wrong-claim:torch-env:no-specialize-zero-one:Eq(B, C)"
    # a wrong claim met on replayed values is the same symptom as one on the traced values
    assert make_signature("truth", "unsound-guards", "torch-env", "no-specialize-zero-one",
                          expr="Eq(s0, 5)") == s
    with pytest.raises(AttributeError):
        s.oracle = "x"  # type: ignore[misc]
    # without an expression: the exception, its torch frame and the root cause (Note [root cause])
    t = make_signature("eager-agreement", "trace-error", "make_fx", "default", "AssertionError",
                       "fx/experimental/symbolic_shapes.py:_canonicalize_bool_expr_impl",
                       root_where("narrow"))
    assert t.key().endswith(":_canonicalize_bool_expr_impl:at=layout.narrow")
    assert known_note(load_known(), t.key()) is not None
    assert make_signature("system-differential", "outcome", ("ref", "torch-env"), "default",
                          "ok-vs-dde").key() == "system-differential:outcome:ref+torch-env:default:ok-vs-dde"


# ---- the same real bug through different questions --------------------------------------------
def _zero_size_program(mode: str, cmp: str, rhs: int, square: bool) -> QProgram:
    """v0 = backed(0) (a size-0 dim), maybe v1 = v0 * v0, then one question about it."""
    instrs = [QInstr("backed", (0,))] + ([QInstr("binop", ("*", Ref(0), Ref(0)))] if square else [])
    return QProgram(tuple(instrs + [QInstr("ask", (mode, cmp, Ref(len(instrs) - 1), rhs))]))


ZERO_SIZE = [("bool", "!=", 0, True), ("guard_or_false", ">=", 1, False),
             ("guard_or_true", "==", 0, False), ("statically_known_true", "==", 0, False),
             ("bool", "<", 1, True), ("guard_or_false", "!=", 0, False)]


@pytest.mark.parametrize("config", ["no-specialize-zero-one", "backed-size-oblivious"])
def test_size0_positive_bug_has_one_signature_through_every_question(config):
    sigs = set()
    for q in ZERO_SIZE:
        ev = evaluate(_zero_size_program(*q), (("torch-env", config),), _local)
        wrong = [f for f in ev.findings if f.oracle == "truth"]
        assert wrong, f"torch 2.13 answers {q} right for a size-0 backed symbol under {config}"
        sigs |= {f.key for f in wrong}
    # Note [root cause bucket]: the question torch folded is bucketed by the assumption that
    # makes torch's answer follow, a positive backed size
    assert sigs == {f"truth:wrong-claim:torch-env:{config}:assumes[backed>=1]"}, sigs
    assert all(known_note(load_known(), s) for s in sigs)  # and it is the known upstream issue


@pytest.mark.parametrize("config", ["no-specialize-zero-one", "backed-size-oblivious"])
def test_size0_bug_met_only_on_replayed_values_has_the_same_signature(config):
    """backed(2), bool(v0 != 0): right for 2, but torch claims it statically, and under value 0
    (which passes every guard) it is wrong: an unsound-guards finding, the same bug."""
    p = QProgram((QInstr("backed", (2,)), QInstr("ask", ("bool", "!=", Ref(0), 0))))
    ev = evaluate(p, (("torch-env", config),), _local)
    assert [(f.symptom, f.key) for f in ev.findings if f.oracle == "truth"] == [
        ("unsound-guards", f"truth:wrong-claim:torch-env:{config}:assumes[backed>=1]")]


def test_size0_bug_is_not_found_under_default_config():
    for q in ZERO_SIZE:
        ev = evaluate(_zero_size_program(*q), (("torch-env", "default"),), _local)
        assert not [f for f in ev.findings if f.oracle == "truth"], q


def test_corpus_bugs_have_distinct_signatures_and_the_known_ones_are_known():
    cases = [json.loads(p.read_text()) for p in sorted(CORPUS.rglob("case.json"))]
    sigs = [c["finding"]["signature"] for c in cases]
    assert len(sigs) >= 6 and len(set(sigs)) == len(sigs), sigs
    known = load_known()
    for c in cases:
        if c["status"] == "known-upstream":
            assert known_note(known, c["finding"]["signature"]), c["finding"]["signature"]


def test_same_torch_bug_in_another_program_has_the_same_signature():
    """corpus/pending-unbacked-narrow-make_fx on other input sizes: the same signature
    (tests/test_corpus.py replays the original)."""
    from shapefuzz.cases.corpus import load_case

    case = load_case(CORPUS / "pending-unbacked-narrow-make_fx")
    prog = json.loads(case.program.dumps())
    prog["inputs"][0]["shape"] = [3, 0]
    other = case.program.from_json(prog)
    sigs = {f.key for p in (case.program, other)
            for f in evaluate(p, (("make_fx", "default"),), _local, n_variants=0).findings}
    assert sigs == {case.finding.key}


# ---- symbolic-shape mismatches: the wrong part, not the whole output ---------------------------
def test_mismatch_shape_is_the_wrong_part_of_the_output():
    from shapefuzz.oracles.signature import mismatch_shape

    # torch 2.13's squeeze-on-unbacked bug, as three campaigns met it: one dim too many
    assert {mismatch_shape("[u0]", "[1]", "[]"), mismatch_shape("[u0 - 1, u0]", "[0, 1]", "[0]"),
            mismatch_shape("[u0, 1]", "[1, 1]", "[1]")} == {"rank+1"}
    assert mismatch_shape("[s0, Max(u0, 2)]", "[3, 2]", "[3, 1]") == "[Max(U, C)]"  # only the bad dim
    assert mismatch_shape("2*u0", "4", "3") == "C * U"


SQUEEZE_PROGRAMS = [  # found by the seed-1 and seed-2 campaigns (torch 2.13, make_fx)
    {"inputs": [{"data": [0.0], "dims": ["unbacked"], "dtype": "float", "name": "x0", "shape": [1]}],
     "instrs": [{"args": [{"v": 0}, 0], "n_out": 1, "op": "squeeze"}], "outputs": [1], "schema": 1},
    {"inputs": [{"data": [1], "dims": ["dynamic"], "dtype": "int", "name": "x0", "shape": [1]}],
     "instrs": [{"args": [{"v": 0}, "sum"], "n_out": 1, "op": "item"},
                {"args": ["-", {"v": 1}, 1], "n_out": 1, "op": "binop"},
                {"args": [[{"v": 2}, {"v": 1}]], "n_out": 1, "op": "ones"},
                {"args": [{"v": 3}, 1], "n_out": 1, "op": "squeeze"}], "outputs": [4], "schema": 1},
]


def test_squeeze_bug_in_three_programs_has_the_known_signature():
    from shapefuzz.cases.corpus import load_case
    from shapefuzz.program.kinds import load_program

    case = load_case(CORPUS / "squeeze-unbacked-meta-make_fx")
    progs = [case.program] + [load_program(p) for p in SQUEEZE_PROGRAMS]
    sigs = [{f.key for f in evaluate(p, (("make_fx", "default"),), _local, n_variants=0).findings}
            for p in progs]
    assert sigs == [{case.finding.key}] * 3, sigs
    assert known_note(load_known(), case.finding.key) is not None


# ---- root causes (Note [root cause]): the first instruction that goes wrong -------------------
def _program(instrs, inputs):
    """The program returning its last value."""
    from shapefuzz.program.kinds import load_program

    last = len(inputs) + len(instrs) - 1
    return load_program({"inputs": inputs, "instrs": instrs, "outputs": [last], "schema": 1})


def _keys(p, system="make_fx"):
    return {f.key for f in evaluate(p, ((system, "default"),), _local, n_variants=0).findings}


def test_squeeze_bug_is_one_bucket_whatever_happens_downstream():
    """The squeezed tensor returned, broadcast against another input, or broadcast and then
    squeezed again: the final outputs' symptoms differ, the root cause does not."""
    sq = {"args": [{"v": 0}, 0], "n_out": 1, "op": "squeeze"}
    x0 = {"data": [3], "dims": ["unbacked", "dynamic"], "dtype": "int", "name": "x0", "shape": [1, 1]}
    x1 = {"data": [1, 2, 3], "dims": ["static"], "dtype": "int", "name": "x1", "shape": [3]}
    alone = _program([sq], [x0])
    broadcast = _program([sq, {"args": [{"v": 2}, {"v": 1}], "n_out": 1, "op": "add"}], [x0, x1])
    want = {"eager-agreement:symbolic-shape:make_fx:default:rank+1:tensor:at=layout.squeeze"}
    assert _keys(alone) == want and _keys(broadcast) == want
    assert known_note(load_known(), next(iter(want)))


def test_squeeze_bug_is_one_bucket_when_the_graph_also_returns_another_shape():
    """reports/torch-2.13/cases/squeeze-unbacked-wrong-shape-make_fx: x.squeeze(1) keeps the
    unbacked dim of size 1 ([0, u0, 6]), then a view by the squeezed tensor's own sizes: the
    graph returns [0, 1, 1] where eager gives [0, 6, 1]. Its final symptom is the artifact's
    output (wrong-shape), the root cause the squeeze's: one finding, in the squeeze's bucket;
    its kind stays the symptom the repro checks."""
    x0 = {"data": [], "dims": ["static", "unbacked", "static"], "dtype": "bool", "name": "x0", "shape": [0, 1, 6]}
    instrs = [{"args": [{"v": 0}, 1], "n_out": 1, "op": "squeeze"},
              {"args": [{"v": 0}, 0], "n_out": 1, "op": "size"},
              {"args": [{"v": 2}], "n_out": 0, "op": "check_is_size"},
              {"args": [{"v": 1}, 0], "n_out": 1, "op": "size"},
              {"args": [{"v": 1}, 1], "n_out": 1, "op": "size"},
              {"args": [{"v": 1}, [{"v": 3}, {"v": 4}, 1]], "n_out": 1, "op": "view"}]
    from shapefuzz.program.kinds import load_program

    p = load_program({"inputs": [x0], "instrs": instrs, "outputs": [5], "schema": 1})
    found = evaluate(p, (("make_fx", "default"),), _local, n_variants=0).findings
    assert [f.key for f in found] == ["eager-agreement:symbolic-shape:make_fx:default:rank+1:tensor:at=layout.squeeze"]
    assert found[0].symptom == "wrong-shape" and "at the outputs (wrong-shape)" in found[0].detail


NARROW_LIKE = [{"args": [{"v": 0}, "sum"], "n_out": 1, "op": "item"},
               {"args": ["+", {"v": 1}, 1], "n_out": 1, "op": "binop"},
               {"args": ["//", {"v": 2}, 2], "n_out": 1, "op": "binop"},
               {"args": ["-", {"v": 1}, {"v": 3}], "n_out": 1, "op": "binop"}]


def test_pending_unbacked_from_narrow_and_from_slice_are_two_buckets():
    """Both raise PendingUnbackedSymbolNotFound in compute_unbacked_bindings (torch 2.13): the
    frame alone made them one bucket; the op that raised tells them apart."""
    x = [{"data": [], "dims": ["static", "static"], "dtype": "int", "name": "x0", "shape": [2, 0]}]
    cut = {"args": [{"v": 0}, 1, {"v": 3}, {"v": 4}], "n_out": 1}
    narrow = _keys(_program(NARROW_LIKE + [{**cut, "op": "narrow"}], x))
    sliced = _keys(_program(NARROW_LIKE + [{**cut, "op": "slice"}], x))
    frame = "PendingUnbackedSymbolNotFound:fx/experimental/symbolic_shapes.py:compute_unbacked_bindings"
    assert narrow == {f"eager-agreement:trace-error:make_fx:default:{frame}:at=layout.narrow@aten.slice.Tensor"}
    assert sliced == {f"eager-agreement:trace-error:make_fx:default:{frame}:at=layout.slice@aten.slice.Tensor"}
    notes = [known_note(load_known(), next(iter(k))) for k in (narrow, sliced)]
    assert all(notes) and notes[0] != notes[1]  # two known entries, one per root cause


def test_known_wildcards_match_one_field_and_nothing_else():
    known = {"eager-agreement:symbolic-shape:make_fx:*:rank+1:tensor": "squeeze", "a:b:c": "exact"}
    assert known_note(known, "eager-agreement:symbolic-shape:make_fx:slow:no-hint:rank+1:tensor")
    assert known_note(known, "a:b:c") == "exact"
    assert known_note(known, "eager-agreement:symbolic-shape:export:default:rank+1:tensor") is None
    assert known_note(known, "eager-agreement:symbolic-shape:make_fx:default:rank+2:tensor") is None
    assert known_note({}, "a:b:c") is None and known_note(None, "a:b:c") is None


# ---- the value behind the key ------------------------------------------------------------------
LEGACY_KEYS = [
    "frontend-differential:outcome:export:default-vs-export:strict:ok-vs-dde",
    "config-differential:config-mismatch:torch-env:slow:expr-cache",
    "config-differential:config-mismatch:ref:expr-cache+smart-sort",
    "eager-agreement:symbolic-shape:make_fx:default:rank+1:tensor",
    "system-differential:dde:ref+torch-env:default:Eq(U, C)",
    "not:a:well-formed::key",
]


@pytest.mark.parametrize("key", LEGACY_KEYS)
def test_a_key_read_back_renders_exactly_and_equals_the_fresh_signature(key):
    from shapefuzz.oracles.findings import Finding

    f = Finding("o", "high", "make_fx", "default", "k", "s", "d", key)
    assert f.key == key and str(f.signature) == key
    again = Finding.from_json(f.to_json())
    assert again == f and again.signature.to_json() == f.signature.to_json()
    assert Finding.from_json({**f.to_json(), "signature_fields": {"oracle": 3}}).key == key


def test_fields_are_read_not_parsed_by_consumers():
    from shapefuzz.oracles.blame import blame
    from shapefuzz.oracles.findings import Finding
    from shapefuzz.oracles.frontends import pair_of

    cfg = Finding("config-differential", "high", "torch-env", "all-slow", "config-mismatch", "s",
                  "d", "config-differential:config-mismatch:torch-env:slow:expr-cache")
    assert cfg.signature.config == "slow:expr-cache"  # a config name that holds ':'
    assert "guilty toggle: slow:expr-cache" in blame(cfg, None)
    fe = Finding("frontend-differential", "high", "export", "strict", "outcome", "s", "d",
                 LEGACY_KEYS[0])
    assert pair_of(fe) == (("export", "default"), ("export", "strict"))
    fresh = make_signature("eager-agreement", "symbolic-shape", "make_fx", "default", "tensor",
                           shape="rank+1")
    assert fresh == Finding("o", "high", "make_fx", "default", "k", "s", "d", LEGACY_KEYS[3]).signature
    assert fresh.key() == LEGACY_KEYS[3] and len({fresh, Signature.from_key(LEGACY_KEYS[3])}) == 1


def test_known_entries_carry_upstream_references():
    """known_issues.json schema 2: the cond _bound_stride bug is known (pytorch/pytorch#188151,
    fixed after 2.13.0) whatever system and root op met it; entries name a case or say none."""
    from shapefuzz.cases.known import load_entries

    key = "eager-agreement:trace-error:export:default:RuntimeError:_higher_order_ops/cond.py:_bound_stride"
    for k in (key, key + ":at=control.cond"):
        assert "pytorch/pytorch#188151" in (known_note(load_known(), k) or "")
    for e in load_entries():
        assert e.upstream == "" or "#" in e.upstream, e
        assert not e.case or (CORPUS.parent / e.case / "repro.py").is_file(), e.case


def test_dynamo_torch_runtime_error_is_classified_by_what_it_wraps():
    """torch.cond in make_fx runs its arms through Dynamo, which wraps a fake-tensor error in
    TorchRuntimeError: the wrapped error is what the signature names; a graph break
    (Unsupported) stays what it is."""
    from torch._dynamo.exc import TorchRuntimeError, Unsupported

    from shapefuzz.systems.common import classify

    def raised(outer):
        try:
            try:
                raise RuntimeError("cond's output stride")
            except RuntimeError as e:
                raise outer("RuntimeError when making fake tensor call") from e
        except Exception as x:
            return classify(x)

    wrapped = raised(TorchRuntimeError)
    assert (wrapped.status, wrapped.exc_type, wrapped.message) == ("error", "RuntimeError", "cond's output stride")
    graph_break = raised(Unsupported)
    assert graph_break.exc_type == "Unsupported", graph_break


def test_a_value_torch_cannot_evaluate_at_the_binding_is_no_value():
    """torch's Mod asserts its dividend >= 0; a binding that breaks what the trace assumed (a
    size-0 dim taken as positive) gives no value to compare, not a crash in shapefuzz."""
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._sympy.functions import Mod

    from shapefuzz.systems.common import eval_exprs

    se = ShapeEnv()
    u = se.create_unbacked_symint().node.expr
    v = se.create_symintnode(Mod(256 * u - 256, 7), hint=None)
    assert eval_exprs([v], {u: 0}) == ("",)
    assert eval_exprs([v], {u: 2}) == (str(256 % 7),)


_X1 = {"data": [], "dims": ["static", "unbacked", "static"], "dtype": "bool", "name": "x1", "shape": [0, 1, 2]}
_X0 = {"data": [False], "dims": ["unbacked"], "dtype": "bool", "name": "x0", "shape": [1]}
_SQUEEZE_THEN_RAISE = {
    # E1 (seed 211): permute by eager's rank fails on the rank the trace kept
    "permute": {"inputs": [_X1], "outputs": [2], "schema": 1, "instrs": [
        {"args": [{"v": 0}, 1], "n_out": 1, "op": "squeeze"},
        {"args": [{"v": 1}, [0, 1]], "n_out": 1, "op": "permute"}]},
    # E1 (seed 211): ones(min(u0, u0), 6).squeeze(0) keeps the dim; a reshape by eager's size fails
    "reshape": {"inputs": [_X0], "outputs": [7, 9], "schema": 1, "instrs": [
        {"args": [{"v": 0}, 0], "n_out": 1, "op": "size"}, {"args": [{"v": 0}, 0], "n_out": 1, "op": "size"},
        {"args": ["min", {"v": 1}, {"v": 2}], "n_out": 1, "op": "binop"},
        {"args": [[{"v": 3}, 6]], "n_out": 1, "op": "ones"}, {"args": [{"v": 4}, 0], "n_out": 1, "op": "squeeze"},
        {"args": [{"v": 5}, 0, 6, 0], "n_out": 1, "op": "narrow"},
        {"args": [[{"v": 6}, {"v": 5}, {"v": 6}], 0], "n_out": 1, "op": "cat"},
        {"args": [{"v": 5}, 0], "n_out": 1, "op": "size"}, {"args": [{"v": 5}, [{"v": 8}, 1]], "n_out": 1, "op": "reshape"}]},
}


@pytest.mark.parametrize("name", list(_SQUEEZE_THEN_RAISE))
def test_a_trace_error_after_the_squeeze_is_the_squeeze_bucket(name):
    """Note [root cause]: the op that raised is not the root cause when an earlier instruction's
    symbolic shape already differs from eager's: a squeeze of an unbacked dim of size 1 keeps
    it, and a later op built for eager's shape raises."""
    from shapefuzz.program.kinds import load_program

    p = load_program(_SQUEEZE_THEN_RAISE[name])
    found = evaluate(p, (("make_fx", "default"),), _local, n_variants=0).findings
    assert [f.key for f in found] == ["eager-agreement:symbolic-shape:make_fx:default:rank+1:tensor:at=layout.squeeze"]
    assert found[0].symptom == "trace-error"  # what the repro checks: the trace raises


def test_known_wildcards_read_brackets_literally():
    """A signature's `Cmp[FloorDiv]` is text, not an fnmatch character class: a wildcard entry
    holding one matches its own findings (it did not: the third round's G1 labelled one new)."""
    known = {"spurious-dde:completeness:make_fx:*:Cmp[FloorDiv]:branch": "row 8"}
    assert known_note(known, "spurious-dde:completeness:make_fx:default:Cmp[FloorDiv]:branch") == "row 8"
    assert known_note(known, "spurious-dde:completeness:make_fx:default:CmpF:branch") is None


def test_squeeze_bug_through_non_strict_export_is_the_squeeze_bucket():
    """torch.export (non-strict) runs the program under torch.compiler.is_compiling(); the
    instruction environments that name the root cause must be recorded there too (a campaign on
    seed 32 reported this squeeze as `...:export:default:rank+1:tensor`, with no root, so as new)."""
    x = {"data": [True, False], "dims": ["static"], "dtype": "bool", "name": "x0", "shape": [2]}
    p = _program([{"args": [{"v": 0}], "n_out": 1, "op": "nonzero"},
                  {"args": [{"v": 1}, 0], "n_out": 1, "op": "squeeze"}], [x])
    want = "eager-agreement:symbolic-shape:export:default:rank+1:tensor:at=layout.squeeze"
    assert _keys(p, "export") == {want} and known_note(load_known(), want)
    assert _keys(_program([{"args": [{"v": 0}], "n_out": 1, "op": "nonzero"}], [x]), "export") == set()


def _replayed(p, specs):
    from shapefuzz.oracles import check_all
    from shapefuzz.systems.jobs import Job

    eager = run_job(Job(p.dumps(), "eager", "default", "[]"))
    obs = run_job(Job(p.dumps(), "make_fx", "default", json.dumps([specs])))
    return check_all(p, eager, [obs])


def test_squeeze_bug_met_only_on_a_replayed_input_is_the_squeeze_bucket():
    """Traced where the unbacked dim is 2 (squeeze(1) keeps it, as eager does), replayed where it
    is 1: the graph's view by the traced sizes returns another shape than eager there. The replay
    finding is bucketed by the first instruction that goes wrong on that input, the squeeze, as
    eager agreement buckets it (a campaign on seed 31 reported it as `replay:wrong-shape:...:tensor`,
    new). An input on which the artifact agrees gives no finding."""
    instrs = [{"args": [{"v": 0}, 1], "n_out": 1, "op": "squeeze"},
              {"args": [{"v": 1}, 0], "n_out": 1, "op": "size"},
              {"args": [{"v": 1}, 1], "n_out": 1, "op": "size"},
              {"args": [{"v": 1}, [{"v": 2}, {"v": 3}, 1]], "n_out": 1, "op": "view"}]

    def x0(n):
        return {"data": [], "dims": ["static", "unbacked", "static"], "dtype": "bool", "name": "x0",
                "shape": [0, n, 6]}

    p = _program(instrs, [x0(2)])
    found = _replayed(p, [x0(1)])
    assert [(f.key, f.symptom) for f in found] == [
        ("replay:symbolic-shape:make_fx:default:rank+1:tensor:at=layout.squeeze", "wrong-shape")]
    assert "first wrong: squeeze" in found[0].detail and known_note(load_known(), found[0].key)
    assert _replayed(p, [x0(3)]) == []


def test_an_invalid_range_is_bucketed_by_the_frame_that_made_it():
    """ValueRanges(lower, upper) raises "Invalid ranges" for bounds its caller computed: the
    caller is the bucket (row 14 of reports/torch-2.13: try_solve turns Eq(u0, u0*u1) into
    u1 == 1 although u0 may be 0, and _refine_ranges builds [1, 0] from u1 <= 0)."""
    import torch
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._sympy.value_ranges import ValueRanges

    from shapefuzz.systems.common import torch_frame

    se = ShapeEnv()
    u0, u1 = se.create_unbacked_symint(), se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    torch._check(u0 >= 0)
    torch._check(u1 <= 0)
    with pytest.raises(Exception) as e:
        torch._check(u0 == u0 * u1)
    assert torch_frame(e.value) == "fx/experimental/symbolic_shapes.py:_refine_ranges"
    key = f"truth:error-on-valid:torch-env:default:{type(e.value).__name__}:{torch_frame(e.value)}"
    assert "Row 14" in known_note(load_known(), key)
    with pytest.raises(Exception) as direct:  # nothing in torch called it: the validator stays
        ValueRanges(1, 0)
    assert torch_frame(direct.value) == "utils/_sympy/value_ranges.py:__init__"

"""The system side of z3 soundness (DESIGN.md oracles 3, 4 and 7, and hint sanity): from what a
system learned and decided while tracing, the claims it made, each asked of the prover, and each
counter-model replayed through the system's own artifact to confirm it.

This runs inside observe(), in the worker, while the artifact is alive: confirming a model means
running it (Note [counterexample replay]), the parent process has no artifact, and the cost is
paid in parallel. What it produces is data, SmtCheck records on Observation.smt; the oracle
(shapefuzz.oracles.soundness) only reads them. Each system gathers its own facts and calls in
here: make_fx and export in shapefuzz.systems.traced, torch-env in shapefuzz.systems.torch_env,
ref in shapefuzz.systems.ref.system.

Note [axioms]: a system may assume, at each decision, only what it knew at that moment: the
ranges symbols got at creation (sizes >= 0; backed sizes >= 2 under 0/1 specialization;
unbacked symbols unconstrained), conditions the program checked (torch._check: eager raises
unless they hold), and the guards and deferred asserts recorded so far. Systems record these as
they learn them (Observation.axioms: (at, origin, expr), known to decisions with index >= at).
Facts that are physically true of every run are axioms from the start: an unbacked symbol that
is a tensor's size is >= 0, and a nonzero / masked_select count is at most its input's numel.
torch's own var_to_range is *not* an axiom (a wrong range is one of the bugs we look for),
except the final ranges of backed symbols, which produce_guards checks on every input.

The checks, per decision (a fallback, a size-oblivious or hint-based answer is no claim):
- static soundness: a `static` claim must follow from the axioms known at that decision. When
  it does not, the question is whether the *final* facts (every guard, assert, check and final
  backed range: what the artifact checks or eager enforces) still allow a counter-model; if not,
  the claim was only premature (status `premature`, no finding);
- guard soundness: a `guard` / `assert` claim must follow from the final facts;
- a counter-model of the final facts is a concrete input (Note [counterexample replay]) and is
  replayed; only a replay that confirms it (eager and the artifact disagree; for question
  programs, the concrete answer under those values differs from the claim) makes a finding;
- spurious DDE: the expression of a data-dependent error is proved true or false by the facts;
- hint sanity: every guard holds at the values the trace was made with.
Unknown and timeout are verdicts, counted in the report, never findings and never passes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sympy

from shapefuzz.program.questions import truth
from shapefuzz.systems.observation import SmtCheck
from shapefuzz.systems.prover import DEFAULT_SETTINGS, Compiled, SmtSettings, Verdict, prove
from shapefuzz.systems.qreplay import with_values

__all__ = [
    "MAX_ABS_VALUE",
    "MAX_SIZE",
    "check_claims",
    "claim_of",
    "dde_check",
    "final_backed_ranges",
    "hint_sanity",
    "question_checks",
    "replay_bounds",
]

#: bounds on counter-models, so that a model is an input a replay can build
MAX_SIZE = 24
MAX_ABS_VALUE = 64


def claim_of(expr: Any, answer: Any) -> sympy.Basic | None:
    """What a decision claims: the condition or its negation, or `expr == value` for an int."""
    try:
        e = sympy.sympify(expr)
        if isinstance(answer, str):
            answer = sympy.sympify(answer)
        if isinstance(e, sympy.logic.boolalg.Boolean) or e.is_Relational:
            truth = bool(answer)
            c = e if truth else sympy.Not(e)
        else:
            c = sympy.Eq(e, sympy.sympify(answer))
    except (TypeError, ValueError, sympy.SympifyError, AttributeError):
        return None
    if c in (sympy.true, sympy.false) or not c.free_symbols:
        return None  # nothing symbolic was decided
    return c


def _relevant(facts: list, claim: sympy.Basic) -> list:
    """The facts connected to the claim through shared symbols (the others cannot matter:
    a query over disjoint symbols splits), which keeps queries small and cacheable."""
    syms = set(claim.free_symbols)
    pending = [(f, set(f.free_symbols)) for f in facts]
    out: list = []
    grew = True
    while grew:
        grew = False
        rest = []
        for f, fs in pending:
            if fs & syms or not fs:
                out.append(f)
                syms |= fs
                grew = True
            else:
                rest.append((f, fs))
        pending = rest
    return out


#: verdicts and z3 terms shared by every query of this process: programs (and the metamorphic
#: re-runs of a program) ask the same claims under the same facts again and again
_CACHE: dict = {}
_COMPILED = Compiled()
_CACHE_MAX = 50_000


class _Prover:
    """prove() with a cache: programs ask the same claim under the same facts many times."""

    def __init__(self, settings: SmtSettings):
        global _COMPILED
        if len(_CACHE) > _CACHE_MAX:
            _CACHE.clear()
            _COMPILED = Compiled()
        self.settings = settings
        self.cache = _CACHE
        self.compiled = _COMPILED

    def __call__(self, facts: list, claim: sympy.Basic, bounds: list = ()) -> Verdict:
        rel = _relevant(list(facts), claim)
        rel += [b for b in bounds if b.free_symbols & _syms(rel, claim)]
        key = (claim, tuple(rel), self.settings)
        v = self.cache.get(key)
        if v is None:
            v = self.cache[key] = prove(rel, claim, self.settings, self.compiled)
        return v


def _syms(facts, claim) -> set:
    out = set(claim.free_symbols)
    for f in facts:
        out |= f.free_symbols
    return out


def _sympify_all(items) -> list:
    out = []
    for e in items:
        try:
            out.append(sympy.sympify(e))
        except (TypeError, ValueError, sympy.SympifyError):
            continue
    return out


def check_claims(decisions: list[tuple[Any, Any, str]], axioms: list[tuple[int, str, Any]],
                 final: list, unchecked: set[int] = frozenset(), bounds: list = (),
                 settings: SmtSettings = DEFAULT_SETTINGS, realize=None) -> list[SmtCheck]:
    """decisions: (expr, answer, how); axioms: (at, origin, expr); final: the facts the artifact
    checks or eager enforces. `realize(k, claim, model) -> (confirmed, why, replay, alt)` turns a
    counter-model into a concrete replay (Note [counterexample replay])."""
    prover = _Prover(settings)
    ax = [(at, origin, sympy.sympify(e)) for at, origin, e in axioms]
    out: list[SmtCheck] = []
    for k, (expr, answer, how) in enumerate(decisions):
        if how not in ("static", "guard", "assert") or k in unchecked:
            continue
        claim = claim_of(expr, answer)
        if claim is None:
            continue
        oracle = "static-soundness" if how == "static" else "guard-soundness"
        elapsed = 0.0
        if how == "static":
            v1 = prover([e for at, _, e in ax if at <= k], claim)
            elapsed += v1.elapsed_ms
            if v1.status != "sat":
                out.append(SmtCheck(oracle, k, str(claim), v1.status, v1.reason, elapsed_ms=elapsed))
                continue
        # the final facts, minus this decision's own torch._check (a check torch answered
        # statically, without an assert, must not prove itself)
        own = {e for at, origin, e in ax if origin == "check" and at == k + 1 and e == claim}
        facts = [f for f in final if f not in own] if how == "static" else list(final)
        v2 = prover(facts, claim, bounds)
        elapsed += v2.elapsed_ms
        if v2.status == "unsat" and how == "static":
            out.append(SmtCheck(oracle, k, str(claim), "premature", "the final facts imply it",
                                elapsed_ms=elapsed))
            continue
        if v2.status == "unsat" and bounds:
            v3 = prover(facts, claim)  # unsat only within the bounds: no input we can build
            elapsed += v3.elapsed_ms
            if v3.status == "sat":
                out.append(SmtCheck(oracle, k, str(claim), "sat", "counter-models only beyond "
                                    "the replay bounds", v3.model, elapsed_ms=elapsed))
                continue
        chk = SmtCheck(oracle, k, str(claim), v2.status, v2.reason, v2.model, elapsed_ms=elapsed)
        if v2.status == "sat" and realize is not None:
            confirmed, why, rec, alt = realize(k, claim, dict(v2.model))
            chk = replace(chk, confirmed=confirmed, why=why, replay=rec, alt_values=alt)
        out.append(chk)
    return out


def dde_check(expr: Any, facts: list, settings: SmtSettings = DEFAULT_SETTINGS) -> SmtCheck | None:
    """Oracle 7: a DDE on an expression the facts decide. sat both ways: deserved (pass)."""
    try:
        e = sympy.sympify(expr)
    except (TypeError, ValueError, sympy.SympifyError):
        return None
    if not isinstance(e, sympy.logic.boolalg.Boolean) or not e.free_symbols:
        return None
    facts, ask = _sympify_all(facts), _Prover(settings)  # the configs of a program ask alike
    yes = ask(facts, e)
    if yes.status == "unsat":
        return SmtCheck("spurious-dde", -1, str(e), "unsat", "the facts prove it true",
                        elapsed_ms=yes.elapsed_ms)
    no = ask(facts, sympy.Not(e))
    t = yes.elapsed_ms + no.elapsed_ms
    if no.status == "unsat":
        return SmtCheck("spurious-dde", -1, str(e), "unsat", "the facts prove it false", elapsed_ms=t)
    status = "sat" if yes.status == no.status == "sat" else (
        yes.status if yes.status != "sat" else no.status)
    # sat both ways: the DDE was deserved (not a finding; recorded for the verdict counts)
    return SmtCheck("spurious-dde", -1, str(e), "deserved" if status == "sat" else status,
                    yes.reason or no.reason, elapsed_ms=t)


def hint_sanity(guards: list, binding: dict) -> list[SmtCheck]:
    """Every guard holds at the values the trace was made with. A violation is recorded (and
    counted) but not reported by this oracle: its consequence, a wrong answer on the trace's own
    values, is what the truth oracle (questions) and eager agreement (tensor programs: the guards
    reject their own inputs) report and confirm standalone."""
    out = []
    by_name = {str(k): sympy.Integer(v) for k, v in binding.items()}
    for k, g in enumerate(guards):
        try:
            e = sympy.sympify(g)
            e = e.xreplace({s: by_name[str(s)] for s in e.free_symbols if str(s) in by_name})
        except (TypeError, ValueError, sympy.SympifyError, ZeroDivisionError):
            continue
        if e is sympy.false:
            out.append(SmtCheck("hint-sanity", -1, str(g), "sat", f"guard {k} is False at the "
                                "trace's own values", tuple(sorted((n, int(v)) for n, v in
                                                                   by_name.items()))))
    return out


def question_checks(program, decisions: list[tuple[Any, Any, str]], axioms: list, final: list,
                    leaf_exprs: list, binding: dict, settings: SmtSettings = DEFAULT_SETTINGS
                    ) -> list[SmtCheck]:
    """Static and guard soundness of a question program's answers. A counter-model becomes
    other values for the program's backed/unbacked instructions; it confirms when every final
    fact holds under them, every check of the program holds, and the concrete answer of the
    question differs from the claim (what qrepro's replay() checks standalone)."""
    asks = program.asks()
    modes = [program.instrs[p].args[0] for p in asks]
    unchecked = {k for k, m in enumerate(modes) if m == "size_oblivious"}
    syms = {str(s): s for e in leaf_exprs for s in getattr(e, "free_symbols", ())}
    bounds = replay_bounds(syms.values(), binding)
    names = {str(s): v for s, v in binding.items()}

    leaf_instrs = [i for i in program.instrs if i.op in ("backed", "unbacked")]

    def realize(k, claim, model):
        # a leaf the env made a symbol takes the model's value (or keeps its own, when the
        # query did not involve it); a leaf that became a constant keeps its literal
        vals = [int(model.get(str(e), names.get(str(e), ins.args[0]))) if isinstance(e, sympy.Symbol)
                else int(ins.args[0]) for e, ins in zip(leaf_exprs, leaf_instrs)]
        if any(v < 0 for v, ins in zip(vals, leaf_instrs) if ins.op == "backed"):
            return False, "a backed value would be negative", None, tuple(vals)
        subs = {s: sympy.Integer(binding[s]) for s in binding if isinstance(s, sympy.Symbol)}
        subs.update({syms[n]: sympy.Integer(v) for n, v in model.items() if n in syms})
        if not all(_holds(f, subs) for f in final):
            return False, "a final fact fails under the model's values", None, tuple(vals)
        t2 = truth(with_values(program, tuple(vals)))
        if t2.failed_check is not None:
            return False, "a check of the program fails under these values", None, tuple(vals)
        if k >= len(t2.answers):
            return False, "the question is not reached", None, tuple(vals)
        want = t2.answers[k]
        got = decisions[k][1]
        if str(got) == str(want):
            return False, f"the concrete answer is still {want}", None, tuple(vals)
        return True, f"with values {vals} the concrete answer is {want}", None, tuple(vals)

    return check_claims(decisions, axioms, final, unchecked, bounds, settings, realize)


def replay_bounds(symbols, binding: dict) -> list:
    """Bounds on each symbol's value in a counter-model (MAX_SIZE, MAX_ABS_VALUE)."""
    out = []
    for s in symbols:
        if str(s).startswith("u"):
            out += [s >= -MAX_ABS_VALUE, s <= MAX_ABS_VALUE]
        else:
            out += [s <= MAX_SIZE]
    return out


def _holds(fact, subs) -> bool:
    try:
        return bool(sympy.sympify(fact).xreplace(subs))
    except (TypeError, ValueError, ZeroDivisionError):
        return False



def final_backed_ranges(se, symbols) -> list:
    """The final ranges of backed symbols: produce_guards checks them on every input."""
    from torch.utils._sympy.symbol import SymT, symbol_is_type

    out = []
    for sym in symbols:
        if isinstance(sym, sympy.Symbol) and symbol_is_type(sym, SymT.SIZE):
            vr = se.var_to_range.get(sym)
            if vr is not None and vr.lower.is_Integer:  # int_oo claims to be finite
                out.append(sympy.Ge(sym, int(vr.lower)))
            if vr is not None and vr.upper.is_Integer:
                out.append(sympy.Le(sym, int(vr.upper)))
    return out

"""Running a tensor program on the reference env: each op's symbolic shape rule (Note [symbolic
shape rules]) in lockstep with eager.

Note [lockstep]: the reference sees sizes only, yet an unbacked symbol (item(), nonzero()) must
be bound to the value it has in this run, and a branch the reference sent to its fallback arm
must be run on that arm (Note [branch contract]). So every instruction runs twice: its shape
rule on symbolic values (what the env may see), then its eager rule on real tensors (what the
program computes), where a fallback branch is forced to its general arm and a claimed branch is
decided by eager itself. A fresh unbacked symbol that is a whole output size (or a SymInt
output) is bound to the eager value there, as torch binds it through unbacked_bindings. The
eager side is exactly `reference_run` with the reference's fallbacks forced, so it doubles as the
reference semantics the eager-agreement oracle checks the symbolic output shapes against. When
eager fails, the symbolic side goes on alone (as make_fx traces a program whose kernel will fail
at run time) and the symbols it makes after that stay unbound.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from shapefuzz.ops import get_op
from shapefuzz.ops.branch import Branch
from shapefuzz.program import InputSpec, Program, Ref, interp
from shapefuzz.systems.common import capture, first_line
from shapefuzz.systems.observation import Decision, Observation, Outcome, RunResult, Value
from shapefuzz.systems.ref.claims import tensor_claims
from shapefuzz.systems.ref.env import RefEnv, concrete
from shapefuzz.systems.ref.evaluate import CheckFailed, DataDependentError, outcome_of
from shapefuzz.systems.ref.exprs import expr_str
from shapefuzz.systems.ref.settings import RefSettings
from shapefuzz.systems.ref.shapes import RuleError, Shapes, SymInt, SymTensor

__all__ = ["NoShapeRule", "TensorTrace", "run_tensors"]

#: what stops the symbolic side: the program's failure as the reference sees it
FAILURES = (DataDependentError, CheckFailed, RuleError, ZeroDivisionError)


class NoShapeRule(Exception):
    """An op without a symbolic rule: the reference cannot run this program."""


@dataclass(frozen=True, slots=True)
class TensorTrace:
    env: RefEnv
    shapes: Shapes
    outputs: tuple  # the program's outputs as symbolic values (empty if the trace failed)
    binding: dict  # unbacked symbol -> its value in this run
    failure: Exception | None
    eager_outputs: tuple | None  # the lockstep eager outputs; None if eager failed or stopped
    eager_error: Exception | None
    fallback_branches: tuple[int, ...]
    rejected: object = None  # the first deferred assert false in this run (Note [rejected runs])
    input_shapes: tuple = ()  # each input's dims as the env first saw them (constants, symbols)


def _resolve(a, env: list):
    if isinstance(a, Ref):
        return env[a.index]
    if isinstance(a, tuple):
        return tuple(_resolve(x, env) for x in a)
    return a


def input_tensor(s: Shapes, spec: InputSpec) -> SymTensor:
    """Static dims are constants, dynamic dims backed symbols (0/1 specialization and duck
    sizing as the settings say), unbacked dims size-like unbacked symbols, as make_fx makes
    them for DimDynamic.STATIC / DUCK / UNBACKED."""
    dims = []
    for n, dim_kind in zip(spec.shape, spec.dims):
        if dim_kind == "static":
            dims.append(s.sym(n))
        elif dim_kind == "dynamic":
            dims.append(SymInt(s.env.create_backed(n), s))
        else:
            dims.append(s.unbacked(0, float("inf"), size_like=True))
    return SymTensor(tuple(dims), spec.dtype)


class _Binder:
    def __init__(self, s: Shapes):
        self.s = s
        self.binding: dict[sympy.Symbol, int] = {}

    def bind(self, sym_val, real) -> None:
        if isinstance(sym_val, SymTensor):
            for n, v in zip(sym_val.shape, getattr(real, "shape", ())):
                self._one(n, int(v))
        elif isinstance(sym_val, SymInt) and isinstance(real, int):
            self._one(sym_val, real)

    def _one(self, n: SymInt, v: int) -> None:
        e = n.node.raw
        if e.is_Symbol and self.s.env.is_unbacked(e) and e not in self.binding:
            self.binding[e] = v


def run_tensors(program: Program, settings: RefSettings, real_inputs: list) -> TensorTrace:
    env = RefEnv(settings)
    s = Shapes(env)
    binder = _Binder(s)
    values: list = [input_tensor(s, spec) for spec in program.inputs]
    for v, t in zip(values, real_inputs):
        binder.bind(v, t)
    real: list | None = list(real_inputs)
    failure = eager_error = rejected = None
    forced: list[int] = []
    watch = _AssertWatch(env)
    for pos, ins in enumerate(program.instrs):
        op = get_op(ins.op)
        try:
            outs, fell_back = _symbolic(op, ins, _resolve(ins.args, values), s)
        except FAILURES as e:  # unless a false fact of this very rule led there
            rejected = watch.violated(binder.binding)
            failure = e if rejected is None else None
            break
        if fell_back:
            forced.append(pos)
        values.extend(outs)
        if real is None:
            continue
        try:
            real_outs = _eager(op, ins, _resolve(ins.args, real), fell_back)
        except Exception as e:
            eager_error, real = e, None
            continue
        real.extend(real_outs)
        for sv, rv in zip(outs, real_outs):
            binder.bind(sv, rv)
        rejected = watch.violated(binder.binding)
        if rejected is not None:
            break
    done = failure is None and rejected is None
    outputs = tuple(values[i] for i in program.outputs) if done else ()
    eager_outputs = tuple(real[i] for i in program.outputs) if done and real is not None else None
    shapes = tuple(tuple(n.node.raw for n in v.shape) for v in values[:len(program.inputs)])
    return TensorTrace(env, s, outputs, binder.binding, failure, eager_outputs, eager_error,
                       tuple(forced), rejected, shapes)


def _symbolic(op, ins, args, s: Shapes) -> tuple[tuple, bool]:
    if isinstance(op, Branch):
        fast, fell_back = op.symbolic_decide(args, s)
        return op.symbolic_arm(args, fast, s), fell_back
    rule = getattr(op, "symbolic", None)
    try:
        outs = tuple(rule(args, ins.n_out, s))
    except NotImplementedError:
        raise NoShapeRule(f"op {ins.op!r} has no symbolic shape rule") from None
    if len(outs) != ins.n_out:
        # as `a, b = torch.split(...)` fails to unpack: the program's failure, not ours
        raise RuleError(f"{ins.op} produced {len(outs)} values, the program binds {ins.n_out}",
                        "ValueError")
    return outs, False


def _eager(op, ins, args, fell_back: bool) -> tuple:
    if isinstance(op, Branch):
        fast = False if fell_back else op.decide(args)
        outs = op.arm(args, fast)
    else:
        outs = op.eager(args, ins.n_out)
    if len(outs) != ins.n_out:
        raise ValueError(f"{ins.op} produced {len(outs)} values, program binds {ins.n_out}")
    return tuple(outs)


# ---- the observation ---------------------------------------------------------------------------
def observe_tensors(system: str, config: str, program: Program, settings: RefSettings):
    """Trace `program` on the reference and report it as an Observation. The reference has no
    artifact of its own: its executable semantics is the lockstep eager run (Note [lockstep]),
    recorded as both `reference` and `artifact`, so the eager-agreement oracle checks what the
    reference claims about shapes (its symbolic output shapes under the binding)."""
    try:
        tr = run_tensors(program, settings, interp.make_inputs(program.inputs))
    except NoShapeRule as e:
        skipped = RunResult(False, f"NoShapeRule: {e}")
        return Observation(system, config, Outcome("ok", "NoShapeRule", str(e)),
                           reference=skipped, artifact=skipped, log=(f"skipped: {e}",))
    env, show = tr.env, expr_str
    outcome = _tensor_outcome(tr.failure) if tr.failure is not None else Outcome("ok")
    decisions = tuple(Decision(show(e), str(a), how) for e, a, how in tr.shapes.decisions)
    facts = {"guards": tuple(show(g) for g in env.guards),
             "asserts": tuple(show(a) for a in env.asserts),
             "replacements": tuple(sorted((str(k), show(v)) for k, v in env.replacements.items())),
             "ranges": tuple(sorted((str(k), str(r)) for k, r in env.ranges.items())),
             **_z3(program, tr, config, settings)}
    if tr.failure is not None:
        return Observation(system, config, outcome, decisions, **facts)
    binding = {**env.backed_hints, **tr.binding}
    subs = {k: sympy.Integer(v) for k, v in binding.items()}
    exprs = [_value_exprs(env, v) for v in tr.outputs]
    rejected = tr.rejected
    if rejected is not None:  # torch's contract: a failing runtime assert rejects the input
        ref = RunResult(False, f"Runtime assertion failed for expression {show(rejected)}")
    elif tr.eager_outputs is not None:
        ref = RunResult(True, "", tuple(_shape_of(v) for v in tr.eager_outputs))
    else:
        e = tr.eager_error
        ref = RunResult(False, f"{type(e).__name__}: {first_line(e)}" if e else "eager did not run")
    return Observation(
        system, config, outcome, decisions, **facts,
        out_exprs=tuple(_show_value(show, e) for e in exprs),
        binding=tuple(sorted((str(k), int(v)) for k, v in binding.items())),
        # under a violated assert the expressions were derived from a false fact: no values
        out_eval=tuple("" if rejected is not None else _eval_value(e, subs) for e in exprs),
        fallback_branches=tr.fallback_branches, reference=ref, artifact=ref)


def _z3(program: Program, tr: TensorTrace, config: str, settings: RefSettings) -> dict:
    """Observation.axioms and .smt: Note [ref tensor claims] (shapefuzz/systems/ref/claims.py)."""
    from dataclasses import replace

    def replay(specs):
        try:
            new = run_tensors(replace(program, inputs=specs), settings, interp.make_inputs(specs))
        except NoShapeRule:
            return None, {}
        return new, {**new.env.backed_hints, **new.binding}

    axioms, smt = tensor_claims(program, tr, config, replay)
    return {"axioms": axioms, "smt": smt}


class _AssertWatch:
    """Watches the deferred asserts of one trace against this run's binding.

    Note [rejected runs]: a deferred runtime assert that is false in this run (an unbacked
    size of 1 asserted equal to the size it is broadcast against, as torch's _broadcast_shapes
    does when it cannot decide) rejects the run at the point where torch's inserted assert would
    fire. The trace stops there: everything after it would be derived from a false fact (a
    replacement u0 := 0 that sends chunk() down its empty path), which is neither a claim about
    this run nor an error of the program. Note [facts are true] holds for the runs a trace
    accepts. Each assert is evaluated once, when every symbol it mentions is bound."""

    def __init__(self, env: RefEnv):
        self.env, self.seen, self.pending = env, 0, []

    def violated(self, binding: dict):
        asserts = self.env.asserts
        if self.seen == len(asserts) and not self.pending:
            return None
        backed = self.env.backed_hints
        todo, self.pending = self.pending + list(asserts[self.seen:]), []
        self.seen = len(asserts)
        for a in todo:
            if any(x not in binding and x not in backed for x in a.free_symbols):
                self.pending.append(a)  # mentions a symbol not bound yet (or never: eager failed)
            elif _false_under(a, binding, backed):
                return a
        return None


def _false_under(a, binding: dict, backed: dict) -> bool:
    e = a.xreplace({k: sympy.Integer(binding[k] if k in binding else backed[k])
                    for k in a.free_symbols})
    try:
        return e is sympy.false or (e is not sympy.true and not bool(e.simplify()))
    except (TypeError, ZeroDivisionError):
        return False


def _shape_of(v):
    """An eager output as the reference records it: shapes and SymInt values, no element data
    (only what its shape claims are checked against; the data is eager's own business)."""
    shape = getattr(v, "shape", None)
    if shape is not None:
        return Value("tensor", tuple(int(n) for n in shape), capture(v.new_empty(0)).dtype, ())
    return capture(v)


def _tensor_outcome(failure: Exception):
    if isinstance(failure, RuleError):
        return Outcome("error", failure.exc_type, str(failure))
    return outcome_of(failure)


def _value_exprs(env: RefEnv, v):
    if isinstance(v, SymTensor):
        return [env.expr_of(n.node) for n in v.shape]
    return env.expr_of(v.node)


def _show_value(show, e) -> str:
    return "[" + ", ".join(show(x) for x in e) + "]" if isinstance(e, list) else show(e)


def _eval_value(e, subs) -> str:
    try:
        vals = [concrete(x.xreplace(subs)) for x in (e if isinstance(e, list) else [e])]
    except (ZeroDivisionError, TypeError):
        return ""
    if any(v is None for v in vals):
        return ""
    return "[" + ", ".join(map(str, vals)) + "]" if isinstance(e, list) else str(vals[0])

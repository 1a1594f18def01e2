"""Helpers every torch system shares: capturing values, classifying exceptions, the binding of
symbols to values, evaluating shape expressions, and recording shape decisions."""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import sympy
import torch
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.program import InputSpec, Program, interp
from shapefuzz.systems.observation import Decision, Outcome, RunResult, Value

__all__ = [
    "DecisionRecorder",
    "capture",
    "classify",
    "eval_exprs",
    "expr_str",
    "raising_env",
    "reference_run",
    "run_safely",
    "shape_env_facts",
    "sym_str",
    "torch_frame",
]

_TORCH_DIR = os.path.dirname(torch.__file__)
_DTYPE_NAMES = {torch.float32: "float", torch.int64: "int", torch.bool: "bool"}


def capture(v: Any) -> Value:
    if isinstance(v, torch.Tensor):
        data = tuple(v.detach().reshape(-1).tolist()) if v.numel() <= 4096 else ()
        return Value("tensor", tuple(int(n) for n in v.shape), _DTYPE_NAMES.get(v.dtype, str(v.dtype)), data)
    if isinstance(v, (int, torch.SymInt)) and not isinstance(v, bool):
        return Value("int", (), "int", (int(v),))
    return Value("other", (), type(v).__name__, (repr(v)[:80],))


#: torch frames that only check the arguments they were given: the frame that computed those
#: arguments is where the bug is (ValueRanges(lower, upper) raises "Invalid ranges" for bounds
#: its caller derived; bucketing by the constructor would merge every such caller into one)
_VALIDATORS = frozenset({"utils/_sympy/value_ranges.py:__init__"})


def torch_frame(exc: BaseException) -> str:
    """The innermost frame inside torch that is not a validator of its arguments, as
    "relative/path.py:function" (no line number, so signatures survive unrelated edits to the
    file)."""
    frames = [f"{os.path.relpath(fs.filename, _TORCH_DIR)}:{fs.name}"
              for fs in traceback.extract_tb(exc.__traceback__) if fs.filename.startswith(_TORCH_DIR)]
    while len(frames) > 1 and frames[-1] in _VALIDATORS:
        frames.pop()
    return frames[-1] if frames else ""


def first_line(exc: BaseException) -> str:
    s = str(exc).strip()
    return s.splitlines()[0][:300] if s else ""


def classify(exc: BaseException) -> Outcome:
    dde = next((x for x in exception_chain(exc) if isinstance(x, ss.GuardOnDataDependentSymNode)), None)
    if dde is not None:  # the DDE is what happened, whatever wraps it
        return Outcome("dde", type(dde).__name__, str(dde)[:2000], torch_frame(dde),
                       str(getattr(dde, "cond", "")), *root_of(exc))
    if _is_constraint_violation(exc) or any(
            isinstance(x, ss.ConstraintViolationError) for x in exception_chain(exc)):
        return Outcome("constraint", type(exc).__name__, str(exc)[:2000], torch_frame(exc), "",
                       *root_of(exc))
    what = _unwrapped(exc)
    return Outcome("error", type(what).__name__, str(what)[:2000], torch_frame(what), "", *root_of(exc))


def _unwrapped(exc: BaseException) -> BaseException:
    """What happened under Dynamo's TorchRuntimeError: Dynamo raises it (through an Unsupported,
    `from_exc`) only to wrap what running a node on fake tensors raised, so the wrapped
    exception's type and torch frame are the error's, as they are when make_fx or export meet
    the same error outside Dynamo (torch.cond in make_fx runs its arms through Dynamo). Other
    Dynamo errors are their own: a graph break is what a user sees."""
    from torch._dynamo.exc import TorchDynamoException, TorchRuntimeError

    if not isinstance(exc, TorchRuntimeError):
        return exc
    return next((x for x in exception_chain(exc) if not isinstance(x, TorchDynamoException)), exc)


def root_of(exc: BaseException) -> tuple[str, str]:
    """(program op, torch op) of Note [root cause]: the instruction that raised (interp.run marks
    the exception) and the innermost aten op torch was dispatching (a `func` OpOverload in a
    torch frame of the traceback)."""
    at = next((x.shapefuzz_at for x in exception_chain(exc) if hasattr(x, "shapefuzz_at")), None)
    aten = ""
    for x in exception_chain(exc):
        tb = x.__traceback__
        while tb is not None:
            f = tb.tb_frame
            func = f.f_locals.get("func") if f.f_code.co_filename.startswith(_TORCH_DIR) else None
            if isinstance(func, torch._ops.OpOverload):
                aten = str(func)
            tb = tb.tb_next
        if aten:
            break
    return (at[1] if at else ""), aten


def exception_chain(exc: BaseException):
    """exc and what it stands for: the exception it was raised `from` (torch.cond re-raises its
    arms' DDE that way), and, for Dynamo's own exceptions only, the one being handled when it
    was raised (strict export and torch.compile turn a DDE into a UserError that way). Other
    errors raised while handling a DDE stay errors."""
    from torch._dynamo.exc import TorchDynamoException

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or (exc.__context__ if isinstance(exc, TorchDynamoException) else None)


def raising_env(dde: BaseException) -> tuple[ss.ShapeEnv | None, Any]:
    """(the ShapeEnv whose method raised the DDE, the expression it raised on): the innermost
    ShapeEnv frame in the traceback (tracing stopped there, so its state is what torch knew)
    and its local `expr`, the unhinted expression both of torch's raise sites pass to
    _make_data_dependent_error (its `cond` has backed hints substituted)."""
    frame, tb = None, dde.__traceback__
    while tb is not None:
        frame = tb.tb_frame if isinstance(tb.tb_frame.f_locals.get("self"), ss.ShapeEnv) else frame
        tb = tb.tb_next
    return (None, None) if frame is None else (frame.f_locals["self"], frame.f_locals.get("expr"))


def _is_constraint_violation(exc: BaseException) -> bool:
    if isinstance(exc, ss.ConstraintViolationError):
        return True
    msg = str(exc)
    return (type(exc).__name__ == "UserError" and "Constraints violated" in msg) or (
        "conflicts between user-specified ranges and inferred ranges" in msg)


def run_safely(fn: Callable[[], Any]) -> RunResult:
    try:
        outs = fn()
    except Exception as e:  # the program under test failing is data, not our bug
        return RunResult(False, f"{type(e).__name__}: {first_line(e)}", (), torch_frame(e))
    return RunResult(True, "", tuple(capture(v) for v in outs))


def reference_run(program: Program, specs: tuple[InputSpec, ...], forced: frozenset[int]) -> RunResult:
    """Eager semantics with the traced fallbacks forced (Note [branch contract])."""
    return run_safely(lambda: interp.program_fn(program, forced)(*interp.make_inputs(specs)))


# Note [print memo]: printing a sympy expression costs about 15 us, and the configs of one program
# print mostly the same guards, asserts, ranges and decisions (a torch-env program's 16 configs
# printed each about 16 times). The text is a pure function of the expression, and sympy's
# equality is structural and typed (Float(2.0) != Integer(2), though their hashes are equal), so a
# bounded memo keyed by the expression is exact.
@lru_cache(maxsize=1 << 16)
def _printed(e: Any) -> str:
    return str(e)


def sym_str(e: Any) -> str:
    """str(e), memoized for sympy objects (Note [print memo])."""
    return _printed(e) if isinstance(e, sympy.Basic) else str(e)


def expr_str(e: Any) -> str:
    """A value's symbolic size as text: a SymInt, a tensor's shape, or the expression (a tuple of
    dims: a shape as recorded, Note [root cause at the time])."""
    if isinstance(e, torch.SymInt):
        return sym_str(e.node.expr)
    if isinstance(e, (torch.Tensor, tuple)):
        return "[" + ", ".join(expr_str(s) for s in (e.shape if isinstance(e, torch.Tensor) else e)) + "]"
    return sym_str(e)


def eval_exprs(vals: list[Any], binding: dict[sympy.Symbol, int]) -> tuple[str, ...]:
    """Each output's shape (or SymInt value) evaluated under the binding, as text."""

    def one(x: Any) -> str:
        if isinstance(x, (torch.SymInt, sympy.Expr)):  # a SymInt, or its expression as recorded
            r = sympy.sympify(sympy.sympify(x.node.expr if isinstance(x, torch.SymInt) else x).xreplace(binding))
            return str(int(r)) if r.is_Integer else ""
        if isinstance(x, int):
            return str(x)
        if isinstance(x, (torch.Tensor, tuple)):  # a shape, or a shape's dims as recorded
            dims = x.shape if isinstance(x, torch.Tensor) else x
            parts = [one(s) if isinstance(s, (torch.SymInt, sympy.Expr)) else str(int(s)) for s in dims]
            return "" if "" in parts else "[" + ", ".join(parts) + "]"
        return ""

    out = []
    for v in vals:
        try:
            out.append(one(v))
        # AssertionError: torch's sympy functions assert what the trace assumed (Mod's
        # dividend >= 0); a binding that breaks it (a size-0 dim torch took as positive) has
        # no value to compare, as a division by zero has none
        except (TypeError, ValueError, ArithmeticError, AssertionError):
            out.append("")
    return tuple(out)


def shape_env_facts(se: ss.ShapeEnv) -> dict[str, tuple]:
    asserts = tuple(sym_str(ra.expr) for ras in se.deferred_runtime_asserts.values() for ra in ras)
    return {
        "guards": tuple(sym_str(g.expr) for g in se.guards),
        "asserts": asserts,
        "replacements": tuple(sorted((sym_str(k), sym_str(v)) for k, v in se.replacements.items())),
        "ranges": tuple(sorted((sym_str(k), str(v)) for k, v in se.var_to_range.items())),
    }


def _symbolic(expr: Any) -> bool:
    """Whether a question has symbols: a constant one (`False`, which some torch releases pass
    to guard_or_false where others decide it before asking) is decided whatever its answer, so
    an answer equal to the fallback is no fallback there (an A/B campaign of 2.14.1 against
    2.13.0 reported such a question as lost precision)."""
    return bool(getattr(expr, "free_symbols", ()))  # a Python bool or int is a constant too


class DecisionRecorder:
    """Records every shape question ShapeEnv answers while active, and how it was answered
    (a new guard, a new deferred assert, the fallback of guard_or_*, or statically)."""

    def __init__(self) -> None:
        self._raw: list[tuple] = []  # (expr, result, how): printing sympy is slow, so later
        self._depth = 0
        # Note [axioms] (shapefuzz.systems.claims): (at, origin, sympy expr), known to
        # decisions >= at; guards, asserts and checked conditions as they are learned
        self._axioms: list[tuple] = []
        self._asserts_seen: set = set()
        self.unchecked: set[int] = set()  # static answers that are no claims (size-oblivious)
        self.envs: list[int] = []  # id() of the ShapeEnv that made each decision

    @property
    def axioms(self) -> tuple[tuple[int, str, str], ...]:
        return tuple((at, origin, str(e)) for at, origin, e, _ in self._axioms)

    def axioms_of(self, se) -> list[tuple]:
        """(at, origin, sympy expr) learned by this ShapeEnv (tracing may make others, e.g. for
        a torch.cond branch: their symbols are not ours)."""
        return [(at, origin, e) for at, origin, e, env in self._axioms if env in (id(se), None)]

    def add_axiom(self, origin: str, expr: Any, at: int | None = None, se: Any = None) -> None:
        self._axioms.append((len(self._raw) if at is None else at, origin, expr,
                             None if se is None else id(se)))

    @property
    def raw(self) -> list[tuple]:
        return self._raw

    @property
    def decisions(self) -> list[Decision]:
        text: dict = {}

        def s(x) -> str:
            if x not in text:
                text[x] = str(x)
            return text[x]

        return [Decision(s(e), s(r), how) for e, r, how in self._raw]

    @contextlib.contextmanager
    def active(self):
        orig_eval = ss.ShapeEnv.evaluate_expr
        orig_defer = ss.ShapeEnv.guard_or_defer_runtime_assert
        rec = self

        def evaluate_expr(se, orig_expr, *a, **kw):
            # size-oblivious answers assume sizes >= 2 by design: no claims. (A hint passed
            # along, as bool() does, is just the value; a static answer is still a claim.)
            loose = kw.get("size_oblivious", a[2] if len(a) > 2 else False)
            return rec._observe(se, orig_eval, (se, orig_expr) + a, kw, orig_expr,
                                kw.get("fallback_value"), loose=bool(loose))

        def defer(se, orig_expr, *a, **kw):
            return rec._observe(se, orig_defer, (se, orig_expr) + a, kw, orig_expr, None, check=True)

        ss.ShapeEnv.evaluate_expr = evaluate_expr
        ss.ShapeEnv.guard_or_defer_runtime_assert = defer
        try:
            yield self
        finally:
            ss.ShapeEnv.evaluate_expr = orig_eval
            ss.ShapeEnv.guard_or_defer_runtime_assert = orig_defer

    def _observe(self, se, fn, args, kw, expr, fallback, loose=False, check=False):
        if self._depth:
            return fn(*args, **kw)
        n_guards = len(se.guards)
        n_asserts = se.num_deferred_runtime_asserts
        self._depth += 1
        try:
            result = fn(*args, **kw)
        finally:
            self._depth -= 1
        if len(se.guards) > n_guards:
            how = "guard"
        elif se.num_deferred_runtime_asserts > n_asserts:
            how = "assert"
        elif fallback is not None and result == fallback and _symbolic(expr):
            how = "fallback"
        else:
            how = "static"
        if loose and how == "static":
            self.unchecked.add(len(self._raw))
        self._raw.append((expr, result, how))
        self.envs.append(id(se))
        self._learn(se, n_guards, n_asserts, expr if check else None)
        return result

    def _learn(self, se, n_guards: int, n_asserts: int, checked: Any) -> None:
        """Facts this decision taught, known from the next decision on (Note [axioms])."""
        for g in se.guards[n_guards:]:
            self.add_axiom("guard", g.expr, se=se)
        if se.num_deferred_runtime_asserts > n_asserts:
            for ras in se.deferred_runtime_asserts.values():
                for ra in ras:
                    if ra.expr not in self._asserts_seen:
                        self._asserts_seen.add(ra.expr)
                        self.add_axiom("assert", ra.expr, se=se)
        if checked is not None:  # torch._check(c) / expect_true: eager raises unless c holds
            self.add_axiom("check", checked, se=se)

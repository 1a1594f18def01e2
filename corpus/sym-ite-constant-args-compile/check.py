"""compile disagrees with eager on the traced inputs (error-where-eager-succeeds)
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
signature: eager-agreement:error-where-eager-succeeds:compile:default:Unsupported@_dynamo/eval_frame.py:compile_wrapper:at=symbool.cond_int
system compile, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
from __future__ import annotations
import sys
import re
from types import SimpleNamespace
from dataclasses import dataclass, field
from typing import Any
import sympy
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental._config', 'torch.utils._sympy.symbol.symbol_is_type', 'torch.fx.experimental.symbolic_shapes.ShapeEnv.__init__', 'torch._dynamo.config.patch', 'torch.utils._sympy.symbol.SymT.SIZE', 'torch._dynamo.decorators.mark_unbacked')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch._dynamo
import torch.fx.experimental._config
from torch.fx.experimental import symbolic_shapes
from torch.utils._sympy.symbol import SymT, symbol_is_type

print("torch", torch.__version__)
FX_CONFIG = {}
DYNAMO_CONFIG = {}
ENV_KWARGS = {}
BACKEND = 'eager'
SETTINGS_VALUES = {'dynamic': None, 'fullgraph': True, 'marks': '', 'automatic_dynamic': True}
CHECK = 'compare'
TARGET = 0
DIMS = [['static']]
UNDEFINED = []

def f(v0):
    v1 = v0.shape[0]
    v2 = v1 // 2
    torch._check(v2 != 0)
    v3 = torch.sym_ite((v2 != 0), 0, 0)
    return (v3,)

# eager references: every subset of guard_or_* branches sent to the general arm
def f_ref0(v0):
    v1 = v0.shape[0]
    v2 = v1 // 2
    torch._check(v2 != 0)
    v3 = torch.sym_ite((v2 != 0), 0, 0)
    return (v3,)

REFS = [f_ref0]

CALLS = [
    [
        torch.tensor([True, True], dtype=torch.bool).reshape((2,)),  # x0: static
    ],
]


@dataclass
class Graph:
    """One compiled graph: its ShapeEnv (whose tracked fakes are every input Dynamo wrapped
    while tracing the frame, pruned ones included) and the call that compiled it."""

    gid: int
    se: Any
    call: int

    def tracked(self) -> list[tuple[str, Any]]:
        return [(tf.source.name, tf.fake) for tf in getattr(self.se, "tracked_fakes", None) or ()]

    def input_tensors(self, n_inputs: int | None = None) -> list[tuple[int, str, Any]]:
        """(input index, source, fake) of the tracked fakes that are whole program inputs (not
        one of their sizes, not an intermediate of a graph break)."""
        out = []
        for src, f in self.tracked():
            m = _SOURCE.match(src)
            if m and m.group(2) is None and isinstance(f, torch.Tensor) and (
                    n_inputs is None or int(m.group(1)) < n_inputs):
                out.append((int(m.group(1)), src, f))
        return out


@dataclass
class GraphLog:
    """A backend that records every graph compiled and every graph run (Note [call sequence])."""

    backend: str
    graphs: list[Graph] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)  # graph ids, in the order they ran
    call: int = 0

    def __call__(self, gm, example_inputs):
        from torch._guards import detect_fake_mode

        mode = detect_fake_mode(example_inputs)
        g = Graph(len(self.graphs), mode.shape_env if mode is not None else None, self.call)
        self.graphs.append(g)
        inner = _inner_backend(self.backend)(gm, example_inputs)

        def run(*args):
            self.runs.append(g.gid)
            return inner(*args)

        return run


def _inner_backend(name: str):
    if name == "eager":
        return lambda gm, ex: gm.forward
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


def bind_inputs(g: Graph, real: list[torch.Tensor], strides: bool = False) -> tuple[dict, str]:
    """The binding of g's input symbols to these program inputs, or why they cannot be bound
    (a static size differs, two dims that share a symbol differ). Tracked fakes whose source is
    not a program input (graph breaks) are skipped."""
    binding: dict[sympy.Symbol, int] = {}
    for src, f in g.tracked():
        m = _SOURCE.match(src)
        if not m or int(m.group(1)) >= len(real):
            continue
        t = real[int(m.group(1))]
        v = t if m.group(2) is None else int(t.shape[int(m.group(2))])
        why = _bind(f, v, binding, src)
        if why:
            return binding, why
    if strides:
        return binding, _strides_differ(g, real, binding)
    return binding, ""


def _strides_differ(g: Graph, real: list[torch.Tensor], binding: dict) -> str:
    """Strides are guarded too (a size-0 dim changes a contiguous tensor's strides)."""
    for i, src, f in g.input_tensors(len(real)):
        t = real[i]
        if f.dim() != t.dim():
            continue
        for d, (fs, n) in enumerate(zip(f.stride(), t.stride())):
            e = fs.node.expr if isinstance(fs, torch.SymInt) else sympy.Integer(int(fs))
            v = e.xreplace({k: sympy.Integer(x) for k, x in binding.items()})
            if v.is_Integer and int(v) != n:
                return f"{src}.stride()[{d}] = {n}, the graph assumed {e} = {v}"
    return ""


def facts_reject(g: Graph, real: list[torch.Tensor], strides: bool = False) -> str:
    """Why graph g's own facts reject these program inputs ("" when they accept)."""
    if g.se is None:
        return ""
    binding, why = bind_inputs(g, real, strides)
    return why or contract_violation(g.se, binding)[1]


def contract_violation(se, binding: dict, ranges: bool = False) -> tuple[str, str]:
    """(class, why) when the facts of a trace's ShapeEnv reject this binding of its input
    symbols, ("", "") when they accept: a recorded guard false (`guard`); a 0/1 value for a
    backed symbol assumed >= 2 (`zero-one`); with `ranges`, a value outside the symbol's range
    (`range`: an exported program's range_constraints). The compile system (graphs reused by
    Dynamo's guards) and the export system (inputs outside an exported program's contract)
    both ask this, so both judge an input by the same facts."""
    for guard in se.guards:
        e = guard.expr
        if e.free_symbols and e.free_symbols <= set(binding):
            val = _eval(e, binding)
            if val is False:
                return "guard", f"guard {e} is false for {_show(binding, e.free_symbols)}"
    for sym, n in binding.items():
        vr = se.var_to_range.get(sym)
        if symbol_is_type(sym, SymT.SIZE) and vr is not None and vr.lower >= 2 and n in (0, 1):
            return "zero-one", f"{sym} = {n}, but the graph assumed {sym} >= 2 (0/1 specialization)"
    if ranges:
        for sym, n in binding.items():
            vr = se.var_to_range.get(sym)
            if vr is not None and not (vr.lower <= n <= vr.upper):
                return "range", f"{sym} = {n} is outside its range [{vr.lower}, {vr.upper}]"
    return "", ""


def bind_tensors(fakes: list[Any], real: list[torch.Tensor]) -> tuple[dict, str]:
    """The binding of a trace's input symbols to these inputs (fakes in input order), or why
    they cannot be bound (rank, a static size, dims that shared a symbol)."""
    binding: dict[sympy.Symbol, int] = {}
    for i, (f, t) in enumerate(zip(fakes, real)):
        why = _bind(f, t, binding, f"input {i}")
        if why:
            return binding, why
    return binding, ""


def constant_dims(fake: Any, dims) -> list[tuple[int, int]]:
    """(dim, value) of the `dims` of a traced input that the trace made constant: a plain int,
    or a symbol that a replacement (or a single-valued range) pinned to one value."""
    out = []
    for d in dims:
        if d >= fake.dim():
            continue
        s = fake.shape[d]
        e = s.node.expr if isinstance(s, torch.SymInt) else sympy.Integer(int(s))
        if isinstance(e, sympy.Integer):
            out.append((d, int(e)))
        elif isinstance(e, sympy.Symbol) and isinstance(s, torch.SymInt):
            vr = s.node.shape_env.var_to_range.get(e)
            if vr is not None and vr.lower == vr.upper:
                out.append((d, int(vr.lower)))
    return out


def asserts_reject(g: Graph, binding: dict) -> str:
    for ras in g.se.deferred_runtime_asserts.values():
        for ra in ras:
            e = ra.expr
            if e.free_symbols and e.free_symbols <= set(binding) and _eval(e, binding) is False:
                return f"runtime assert {e}"
    return ""


def _bind(f, v, binding: dict, src: str) -> str:
    if isinstance(f, torch.SymInt):
        return _bind_one(f, v, binding, src)
    if isinstance(f, torch.Tensor) and isinstance(v, torch.Tensor):
        if f.dim() != v.dim():
            return f"{src}: rank {v.dim()}, the graph assumed {f.dim()}"
        for d, (s, n) in enumerate(zip(f.shape, v.shape)):
            why = _bind_one(s, n, binding, f"{src}.size()[{d}]")
            if why:
                return why
    return ""


def _bind_one(s, n, binding: dict, where: str) -> str:
    n = int(n)
    if not isinstance(s, torch.SymInt):
        return "" if int(s) == n else f"{where}: size {n}, the graph was compiled for {int(s)}"
    e = s.node._expr  # the raw symbol: replacements are facts checked below via guards
    if isinstance(e, sympy.Symbol):
        if e in binding and binding[e] != n:
            return f"{where}: {e} = {n} here but {binding[e]} elsewhere (the graph assumed them equal)"
        binding[e] = n
        return ""
    if isinstance(e, sympy.Integer) and int(e) != n:
        return f"{where}: size {n}, the graph was compiled for {int(e)}"
    return ""


def _eval(e, binding: dict):
    try:
        r = e.xreplace({k: sympy.Integer(v) for k, v in binding.items()})
        r = sympy.simplify(r) if not isinstance(r, (sympy.logic.boolalg.BooleanAtom, sympy.Integer)) else r
        if r in (sympy.true, True):
            return True
        if r in (sympy.false, False):
            return False
    except Exception:  # an expression we cannot evaluate decides nothing: under-report
        return None
    return None


def _show(binding: dict, syms) -> str:
    return ", ".join(f"{s}={binding[s]}" for s in sorted(syms, key=str))


_SOURCE = re.compile(r"^L\['v(\d+)'\](?:\.size\(\)\[(\d+)\])?$")


def _reusable(graphs: list[Graph], real: list[torch.Tensor], before: int) -> tuple[int, str]:
    """An earlier graph whose facts (guards, ranges, asserts) all accept these inputs."""
    for g in graphs[:before]:
        if g.se is None or facts_reject(g, real, strides=True):
            continue
        binding, _ = bind_inputs(g, real)
        if asserts_reject(g, binding) or not _within_ranges(g, binding):
            continue
        return g.gid, f"graph {g.gid} (compiled at call {g.call}) accepts {_show(binding, binding) or 'these static shapes'}"
    return -1, ""


def _within_ranges(g: Graph, binding: dict) -> bool:
    for sym, n in binding.items():
        vr = g.se.var_to_range.get(sym)
        if vr is not None and not (vr.lower <= n <= vr.upper):
            return False
    return True


def _mark(real: list[torch.Tensor], specs: tuple[Any, ...], marks: str) -> tuple[tuple[int, int], ...]:
    """Apply the config's marks to fresh input tensors; returns the dims whose specialization
    must raise (mark_dynamic; mark_unbacked with strict=True). Dims of size 0 or 1 are not
    marked dynamic: that is a user error by design."""
    dyn = []
    for i, (t, s) in enumerate(zip(real, specs)):
        for d, kind in enumerate(s.dims):
            want = {"program": {"static": "static", "dynamic": "dynamic", "unbacked": "unbacked"}[kind],
                    "": ""}.get(marks, "" if kind == "static" else marks)
            if want == "static":
                torch._dynamo.mark_static(t, d)
            elif want == "dynamic" and t.shape[d] >= 2:
                torch._dynamo.mark_dynamic(t, d)
                dyn.append((i, d))
            elif want == "unbacked":
                torch._dynamo.decorators.mark_unbacked(t, d)
            elif want == "unbacked-strict":  # strict: specializing it must raise
                torch._dynamo.decorators.mark_unbacked(t, d, strict=True)
                dyn.append((i, d))
    return tuple(dyn)


def _silent_specialization(graphs: list[Graph], marked: tuple[tuple[int, int], ...]) -> str:
    for g in graphs:
        for i, _, f in g.input_tensors():
            for d, n in constant_dims(f, [d for j, d in marked if j == i]):
                return f"input {i} dim {d} was marked dynamic; graph {g.gid} specialized it to {n}"
    return ""


def _stayed_static(graphs: list[Graph], specs, first_shapes, s: Any) -> str:
    """Automatic dynamic: a dim whose size differs from the first compile's (both >= 2) must be
    compiled with a symbol. One that a branch pinned is a replaced symbol, not a raw constant,
    and is fine (seed 002: the guard s0 == 4 specializes it)."""
    if not (s.automatic_dynamic and s.fullgraph and s.marks in ("", "dynamic", "unbacked")):
        return ""
    for g in graphs:
        for j, _, f in g.input_tensors():
            now, then = specs[j].shape, first_shapes[j]
            for d, sz in enumerate(f.shape):
                if d >= len(now) or len(now) != len(then) or now[d] == then[d] or min(now[d], then[d]) < 2:
                    continue
                raw = sz.node._expr if isinstance(sz, torch.SymInt) else sympy.Integer(int(sz))
                if isinstance(raw, sympy.Integer):
                    return (f"input {j} dim {d}: size {then[d]} at the first compile, {now[d]} now, "
                            f"yet graph {g.gid} was compiled with it static ({raw})")
    return ""


def settings():
    """The config's settings, as graph_facts reads them (attributes)."""
    return SimpleNamespace(**SETTINGS_VALUES)


class _Spec:  # what _mark reads of an input spec
    def __init__(self, shape, dims):
        self.shape, self.dims = shape, dims


def run(fn, args):
    try:
        out = fn(*args)
    except Exception as e:
        return ("error", f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    return ("ok", tuple(out) if isinstance(out, (tuple, list)) else (out,))


def same(a, b, compare_data):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return not compare_data or torch.allclose(a.double(), b.double(), equal_nan=True)
    return (not isinstance(a, torch.Tensor)) and (not isinstance(b, torch.Tensor)) and int(a) == int(b)


def agrees(want, got):
    if want[0] != got[0]:
        return False
    return want[0] == "error" or (len(want[1]) == len(got[1]) and all(
        same(a, b, k not in UNDEFINED) for k, (a, b) in enumerate(zip(want[1], got[1]))))


def env_kwargs():
    if not ENV_KWARGS:
        return
    orig = symbolic_shapes.ShapeEnv.__init__

    def init(self, *a, **kw):
        kw.update(ENV_KWARGS)
        orig(self, *a, **kw)
    symbolic_shapes.ShapeEnv.__init__ = init


def check_call(i, inputs, got, log, new, runs, marked, first, fresh):
    """The target call, checked as the oracle did (0: no bug, 1: the bug)."""
    rejected = got[0] == "error" and "Runtime assertion failed" in got[1]
    if CHECK == "compare":
        if rejected:
            print("a runtime assert rejects the input:", got[1])
            return 0
        wants = [run(r, [t.clone() for t in inputs]) for r in REFS]
        if not any(agrees(w, got) for w in wants):
            print("eager    :", wants[0])
            print("compiled :", got)
            print("BUG: the compiled function disagrees with eager on this call")
            return 1
        print("OK: compiled and eager agree")
        return 0
    if CHECK == "unsound-reuse":
        why = "" if rejected else next(
            (f"graph {g}: {w}" for g in dict.fromkeys(runs) if (w := facts_reject(log.graphs[g], fresh))), "")
    elif CHECK == "extra-recompile":
        why = _reusable(log.graphs, fresh, len(log.graphs) - len(new))[1] if new else ""
    elif CHECK == "silent-specialization":
        why = _silent_specialization(new, marked) if got[0] == "ok" else ""
    else:
        why = _stayed_static(new, [_Spec(tuple(t.shape), d) for t, d in zip(inputs, DIMS)], first, settings())
    if why:
        print(f"BUG ({CHECK}): {why}")
        return 1
    print(f"OK: no {CHECK} at call {i}")
    return 0


def main():
    env_kwargs()
    for k, v in FX_CONFIG.items():
        setattr(torch.fx.experimental._config, k, v)
    log = GraphLog(BACKEND)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(**DYNAMO_CONFIG):
        cf = torch.compile(f, backend=log, fullgraph=settings().fullgraph, dynamic=settings().dynamic)
        first = [tuple(t.shape) for t in CALLS[0]]
        for i, inputs in enumerate(CALLS):
            args = [t.clone() for t in inputs]
            marked = _mark(args, [_Spec(tuple(t.shape), d) for t, d in zip(args, DIMS)], settings().marks)
            n_graphs, n_runs = len(log.graphs), len(log.runs)
            log.call = i
            got = run(cf, args)
            new, runs = log.graphs[n_graphs:], log.runs[n_runs:]
            print(f"call {i}: shapes {[list(t.shape) for t in inputs]}, {got[0]}, "
                  f"{len(new)} new graph(s), ran {runs}")
            if i >= TARGET:
                return check_call(i, inputs, got, log, new, runs, marked, first, [t.clone() for t in inputs])
    print("the call sequence ended before the recorded call")
    return 0


if __name__ == "__main__":
    sys.exit(main())

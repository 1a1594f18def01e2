"""make_fx's symbolic shape of mul evaluates to [1], eager gives [0]
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
signature: eager-agreement:symbolic-shape:make_fx:default:[U]:tensor:at=pointwise.mul
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental._config', 'torch._dynamo.source.LocalSource', 'torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.ShapeEnv.__init__', 'torch.fx.experimental.symbolic_shapes.DimDynamic.STATIC', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED', 'torch.fx.experimental.symbolic_shapes.resolve_unbacked_bindings')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.fx.experimental._config
from torch.fx.experimental import symbolic_shapes
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export import Dim, export
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

def f(v0):
    v1 = torch.ones(0,)
    v2 = torch.mul(v0, v1)
    v3, = torch.unbind(v0, 0)
    return (v2, v3)
f_ref = f  # the reference: eager (no branch was sent to its fallback arm)

traced_inputs = [
    torch.tensor([0], dtype=torch.float32).reshape((1,)),  # x0: unbacked
]
check_inputs = [
    torch.tensor([0], dtype=torch.float32).reshape((1,)),  # x0: unbacked
]
DIMS = [['unbacked']]
UNDEFINED = []  # outputs of torch.empty: shapes only
SYSTEM = 'make_fx'
CHECK = 'trace-error'
ON_TRACED_INPUTS = True
ENV_KWARGS = {}
FX_CONFIG = {}
STRICT = False
DIM_KIND = 'dynamic'
DECOMPOSE = False
SMALL_STATIC = False


def apply_config():
    """The finding's config: torch.fx.experimental._config options, and ShapeEnv settings forced
    into every ShapeEnv (export builds its own)."""
    for k, v in FX_CONFIG.items():
        setattr(torch.fx.experimental._config, k, v)
    if ENV_KWARGS:
        orig = symbolic_shapes.ShapeEnv.__init__

        def init(self, *a, **kw):
            kw.update(ENV_KWARGS)
            orig(self, *a, **kw)
        symbolic_shapes.ShapeEnv.__init__ = init


def small_outside_contract(fakes, args):
    """backed_size_oblivious: a new size 0 or 1 in a backed symbol is outside the trace's contract."""
    if not SMALL_STATIC:
        return False
    return any(isinstance(s, torch.SymInt) and not s.node.expr.is_number and n < 2 and n != n0
               for fk, a, t in zip(fakes, args, traced_inputs)
               for s, n, n0 in zip(getattr(fk, "shape", ()), a.shape, t.shape))


def trace_make_fx(fn, inputs):
    """make_fx with fake inputs whose dims are static / dynamic (duck) / unbacked as marked."""
    from torch._dynamo.source import LocalSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
    from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts
    kinds = {"static": DimDynamic.STATIC, "dynamic": DimDynamic.DUCK, "unbacked": DimDynamic.UNBACKED}
    apply_config()
    se = ShapeEnv(**ENV_KWARGS)
    mode = FakeTensorMode(shape_env=se)
    fakes = [mode.from_tensor(t, source=LocalSource(f"x{i}"), symbolic_context=StatelessSymbolicContext(
        dynamic_sizes=[kinds[k] for k in DIMS[i]], constraint_sizes=[None] * t.dim()))
        for i, t in enumerate(inputs)]
    se.pending_fresh_unbacked_symbols.clear()
    gm = make_fx(fn, tracing_mode="symbolic")(*fakes)
    insert_deferred_runtime_asserts(gm, se, "repro")  # make_fx graphs carry no asserts
    gm.recompile()
    guards = se.produce_guards(fakes, [LocalSource(f"t{i}") for i in range(len(fakes))],
                               ignore_static=False)
    unbacked = [f"L['t{i}'].size()[{d}]" for i, ks in enumerate(DIMS) for d, k in enumerate(ks)
                if k == "unbacked"]

    def accepts(args):
        """None when the trace accepts the inputs, else why not (a guard, or an assert)."""
        if small_outside_contract(fakes, args):
            return "Guard failed: sizes 0/1 are outside backed_size_oblivious's contract"
        bad = [g for g in guards if not se.evaluate_guards_expression(g, args)]
        if bad:  # facts about unbacked input dims are asserts in torch, guards here
            kind = "Runtime assertion failed" if any(u in g for g in bad for u in unbacked) else "Guard failed"
            return f"{kind}: {' and '.join(bad)}"
        binding = {s.node.expr: n for fk, a in zip(fakes, args) for s, n in zip(fk.shape, a.shape)
                   if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol)}
        for ras in se.deferred_runtime_asserts.values():  # asserts over unbacked input dims
            for ra in ras:
                e = se.replace(ra.expr)  # through replacements: inputs bind only their targets
                if e.free_symbols and e.free_symbols <= set(binding) and not bool(e.xreplace(binding)):
                    return f"Runtime assertion failed for expression {e} (input dims)"
        return None
    return gm, accepts, gm, se


def trace_export(fn, inputs):
    """torch.export (non-strict unless STRICT), Dim.DYNAMIC on every non-static dim of size >= 2."""
    from torch.export import Dim, export

    class M(torch.nn.Module):
        def forward(self, *xs):
            return fn(*xs)

    def dim(i, d, n):
        if DIM_KIND == "auto":
            return Dim.AUTO
        return Dim(f"x{i}_{d}", min=2, max=max(4 * n, 16)) if DIM_KIND == "named" else Dim.DYNAMIC

    apply_config()
    specs = tuple({d: dim(i, d, n) for d, (k, n) in enumerate(zip(DIMS[i], t.shape))
                   if k != "static" and n >= 2} or None for i, t in enumerate(inputs))
    ep = export(M(), tuple(inputs), dynamic_shapes=(specs,), strict=STRICT)
    if DECOMPOSE:
        ep = ep.run_decompositions()
    mod = ep.module()
    fakes = [n.meta["val"] for n in ep.graph.nodes if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs]
    se = fakes[0].fake_mode.shape_env

    def accepts(args):
        """ep.module() checks guards and asserts itself, but not the lower bound (2) that
        tracing assumed for dynamic dims: check the program's range constraints here."""
        if small_outside_contract(fakes, args):
            return "Guard failed: sizes 0/1 are outside backed_size_oblivious's contract"
        for fk, a in zip(fakes, args):
            for s, n in zip(fk.shape, a.shape):
                vr = ep.range_constraints.get(getattr(getattr(s, "node", None), "expr", None))
                if vr is not None and not vr.lower <= n <= vr.upper:
                    return f"Guard failed: size {n} outside the range constraint {vr}"
        return None
    return mod, accepts, mod, se


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


def symbolic_shapes_disagree(gm, se, args):
    """The graph's own output shapes (sympy), evaluated with every symbol bound to its value in
    this run, must equal the shapes the graph really produces."""
    binding = {}
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for ph, a in zip(phs, args):
        v = ph.meta.get("val")
        for s, n in zip(getattr(v, "shape", ()), a.shape):
            if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol):
                binding[s.node.expr] = n

    class Bind(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            bindings = symbolic_shapes.resolve_unbacked_bindings(se, n.meta.get("unbacked_bindings"))
            for sym, path in (bindings or {}).items():
                v = r
                for key in path:
                    v = key.get(v)
                binding[sym] = int(v)
            return r

    def ev(s):
        return sympy.sympify(sympy.sympify(s.node.expr if isinstance(s, torch.SymInt) else s).xreplace(binding))

    outs = Bind(gm).run(*args)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    metas = gm.graph.output_node().args[0]
    metas = metas if isinstance(metas, (tuple, list)) else (metas,)
    for k, (m, real) in enumerate(zip(metas, outs)):
        m = m.meta.get("val") if isinstance(m, torch.fx.Node) else m
        claim = [ev(s) for s in m.shape] if isinstance(m, torch.Tensor) else [ev(m)]
        got = list(real.shape) if isinstance(real, torch.Tensor) else [int(real)]
        if all(c.is_Integer for c in claim) and [int(c) for c in claim] != got:
            print(f"BUG: output {k}: traced shape {list(getattr(m, 'shape', [m]))} = {claim} under {binding}, "
                  f"but the graph returns {got}")
            return True
    return False


def main():
    print("torch", torch.__version__)
    trace = {"make_fx": trace_make_fx, "export": trace_export}[SYSTEM]
    try:
        artifact, accepts, gm, se = trace(f, traced_inputs)
    except Exception as e:
        if CHECK == "trace-error":
            print(f"BUG: tracing raised {type(e).__name__}: {e}")
            print("eager on the same inputs:", run(f, traced_inputs)[0])
            return 1
        print(f"tracing raised {type(e).__name__}: {e} (not the recorded bug)")
        return 0
    if CHECK == "trace-error":
        print("tracing succeeds: the bug is fixed")
        return 0
    if CHECK == "symbolic-shape":
        why = accepts([t.clone() for t in check_inputs])
        if why is not None and why.startswith("Runtime assertion failed"):
            print("a runtime assert rejects the input (outside the trace's contract):", why)
            return 0
        return 1 if symbolic_shapes_disagree(gm, se, [t.clone() for t in check_inputs]) else 0
    args = [t.clone() for t in check_inputs]
    why = accepts(args)
    if why is not None and CHECK == "contract":  # outside the contract: it must reject or be right
        print("the input is outside the trace's contract:", why)
    elif why is not None:
        print("the trace rejects the input:", why)
        if why.startswith("Guard failed") and ON_TRACED_INPUTS and run(f_ref, check_inputs)[0] == "ok":
            print("BUG: the guards reject the very inputs the program was traced with")
            return 1
        return 0
    want = run(f_ref, [t.clone() for t in check_inputs])
    got = run(artifact, args)
    if got[0] == "error" and got[1].split(": ", 1)[-1].startswith(("Runtime assertion failed", "Guard failed")):
        print("a runtime assert or guard rejects the input:", got[1])
        return 0
    print("eager :", want)
    print("traced:", got)
    if want[0] != got[0]:
        print("BUG: eager and traced disagree on success")
        return 1
    if want[0] == "ok" and (len(want[1]) != len(got[1]) or not all(
            same(a, b, k not in UNDEFINED) for k, (a, b) in enumerate(zip(want[1], got[1])))):
        print("BUG: eager and traced outputs differ")
        return 1
    print("OK: traced and eager agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())

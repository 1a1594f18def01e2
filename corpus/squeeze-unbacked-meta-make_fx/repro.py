"""make_fx's symbolic output 0 evaluates to [1, 1], eager gives [1]
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.resolve_unbacked_bindings', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.utils._pytree.key_get')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.utils._pytree as pytree
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext, resolve_unbacked_bindings

print("torch", torch.__version__)
def f(v0):
    v1 = v0.squeeze(0)
    return (v1,)
inputs = [torch.tensor([3], dtype=torch.int64).reshape((1, 1))]  # x0: unbacked, dynamic
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.UNBACKED, DimDynamic.DUCK]]  # how each input dim is traced
mode = FakeTensorMode(shape_env=shape_env)
fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d))
         for t, d in zip(inputs, dynamic_sizes)]
shape_env.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
gm = make_fx(f, tracing_mode="symbolic")(*fakes)
args = inputs  # checked on the inputs it was traced with
def traced_shapes(gm, shape_env, args) -> list[tuple[list, list]]:
    """Per output: its symbolic shape with every symbol bound to its value in this run (input
    sizes, then what each node binds), and the shape it really has."""
    binding = {}
    for ph, t in zip(gm.graph.find_nodes(op="placeholder"), args):
        binding |= {s.node.expr: n for s, n in zip(ph.meta["val"].shape, t.shape)
                    if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol)}

    class Bind(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            for s, path in (resolve_unbacked_bindings(shape_env, n.meta.get("unbacked_bindings")) or {}).items():
                binding[s] = int(pytree.key_get(r, path))
            return r
    out = []
    for node, r in zip(gm.graph.output_node().args[0], Bind(gm).run(*args)):
        meta = node.meta["val"] if isinstance(node, torch.fx.Node) else node
        sizes = list(meta.shape) if isinstance(meta, torch.Tensor) else [meta]
        claim = [sympy.sympify(sympy.sympify(s.node.expr if isinstance(s, torch.SymInt) else s).xreplace(binding))
                 for s in sizes]
        out.append((claim, list(r.shape) if isinstance(r, torch.Tensor) else [int(r)]))
    return out
for k, (claim, real) in enumerate(traced_shapes(gm, shape_env, args)):
    print(f"output {k}: expected (the graph returns) {real}, got (its symbolic shape) {claim}")
    if all(c.is_Integer for c in claim) and [int(c) for c in claim] != real:
        print(f"BUG: output {k}'s symbolic shape is not the shape the graph returns")
        sys.exit(1)
print("OK: every symbolic output shape is right")

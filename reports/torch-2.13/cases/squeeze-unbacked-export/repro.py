"""export's symbolic output 0 evaluates to [1], eager gives []
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
import torch.utils._pytree as pytree
from torch.export import Dim, export
from torch.fx.experimental.symbolic_shapes import resolve_unbacked_bindings

print("torch", torch.__version__)
def f(v0):
    v1 = v0.sum().item()
    v2 = v1 // 2
    v3 = torch.arange(v2)
    v4 = v3.squeeze(0)
    return (v4,)
inputs = [torch.tensor([False, True, False, False, False, True], dtype=torch.bool).reshape((1, 1, 6))]  # x0: dynamic, dynamic, unbacked
class M(torch.nn.Module):
    forward = staticmethod(f)
ep = export(M(), tuple(inputs), dynamic_shapes=({2: Dim.DYNAMIC},))
gm = ep.module()
args = inputs  # checked on the inputs it was traced with
shape_env = gm.graph.find_nodes(op="placeholder")[0].meta["val"].fake_mode.shape_env
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

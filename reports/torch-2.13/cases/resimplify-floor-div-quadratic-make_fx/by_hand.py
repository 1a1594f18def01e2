"""By hand: where the superlinear time of repro.py's family goes. ShapeEnv._maybe_evaluate_static
re-simplifies every floor-division axiom (its inner resimplify_floor_div) whenever a new fact has
set `_resimplify_floor_div_axioms`; each copy of the program adds such axioms and facts, so the
number of ShapeEnv.simplify calls per copy grows with the number of copies (quadratic in total).
Prints the calls per copy for n = 4, 8, 16, 32 and the share of them made by resimplify_floor_div;
exits 1 while the calls per copy at n = 32 are more than twice those at n = 4."""
import runpy
import sys
import traceback
from pathlib import Path

from torch.fx.experimental import symbolic_shapes as ss

g = runpy.run_path(str(Path(__file__).with_name("repro.py")), run_name="by_hand")  # its functions only
calls = {"all": 0, "axioms": 0}
simplify = ss.ShapeEnv.simplify


def counted(self, *args, **kwargs):
    calls["all"] += 1
    calls["axioms"] += any(fs.name == "resimplify_floor_div" for fs in traceback.extract_stack(limit=4))
    return simplify(self, *args, **kwargs)


ss.ShapeEnv.simplify = counted
per_copy = {}
for n in (4, 8, 16, 32):
    calls.update(all=0, axioms=0)
    cpu, _ = g["trace_copies"](g["f"], g["inputs"], g["DIMS"], n, g["ENV_KWARGS"])
    per_copy[n] = calls["all"] / n
    print(f"n = {n}: {cpu:.2f} s CPU, ShapeEnv.simplify called {calls['all']} times "
          f"({per_copy[n]:.0f} per copy), {calls['axioms']} of them by resimplify_floor_div")
sys.exit(1 if per_copy[32] > 2 * per_copy[4] else 0)

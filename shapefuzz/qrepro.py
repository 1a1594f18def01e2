"""repro.py for question programs: torch's ShapeEnv driven directly, each question checked
against its concrete answer (Note [question truth]). torch only, unless the finding needs one of
shapefuzz's scoped torch patches (a slow-path config), which it then imports."""

from __future__ import annotations

from shapefuzz.program import Ref
from shapefuzz.questions import FALLBACK, QProgram, truth

__all__ = ["question_repro_source"]

_HEAD = '''import sys
import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic, ShapeEnv, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_true)

se = ShapeEnv()
wrong = []


def backed(hint, name):
    s = se.create_symbol(hint, source=ConstantSource(name), dynamic_dim=DimDynamic.DUCK)
    return se.create_symintnode(s, hint=hint, source=ConstantSource(name))


def claim(k, cond, got, fallback, want):
    """A question's answer must be the concrete one unless it is the mode's fallback taken
    because the ShapeEnv could not decide."""
    expr = cond.node.expr if isinstance(cond, torch.SymBool) else cond
    static = se._maybe_evaluate_static(expr) if isinstance(cond, torch.SymBool) else cond
    decided = static is not None
    if got != want and (got != fallback or (decided and bool(static) != want)):
        wrong.append(f"question {k}: {expr} answered {got} (static: {static}); concretely {want}")


'''

_MODES = {"bool": "bool({c})", "guard_or_false": "guard_or_false({c})", "guard_or_true": "guard_or_true({c})",
          "statically_known_true": "statically_known_true({c})", "size_oblivious": "guard_size_oblivious({c})"}


def question_repro_source(p: QProgram, header: str, config_lines: str = "") -> str:
    p.validate()
    t = truth(p)
    lines = [header, _HEAD, config_lines, "def main():"]

    def a(x):
        return f"v{x.index}" if isinstance(x, Ref) else repr(int(x))

    q = 0
    for pos, (ins, v) in enumerate(p.definitions()):
        if t.failed_check is not None and pos > t.failed_check:
            break
        args = ins.args
        if ins.op == "backed":
            lines.append(f"    v{v} = backed({int(args[0])}, 'v{v}')")
        elif ins.op == "unbacked":
            lines.append(f"    v{v} = se.create_unbacked_symint()  # concretely {int(args[0])}")
        elif ins.op == "binop":
            op = args[0]
            expr = {"max": "torch.sym_max({}, {})", "min": "torch.sym_min({}, {})"}.get(op, "{} " + op + " {}")
            lines.append(f"    v{v} = " + expr.format(a(args[1]), a(args[2])))
        elif ins.op == "check":
            lines.append(f"    torch._check({a(args[1])} {args[0]} {a(args[2])})")
        else:
            mode, cmp = args[0], args[1]
            cond = f"{a(args[2])} {cmp} {a(args[3])}"
            want = t.answers[q]
            lines.append(f"    c = {cond}")
            lines.append(f"    claim({q}, c, {_MODES[mode].format(c='c')}, {FALLBACK[mode]!r}, {want!r})")
            q += 1
    lines += ["", "", "if __name__ == '__main__':",
              "    try:", "        main()", "    except Exception as e:",
              "        print(f'raised {type(e).__name__}: {e}')",
              "        if 'data-dependent' not in str(e).lower() and not type(e).__name__.startswith('GuardOnData'):",
              "            sys.exit(1)",
              "    for w in wrong:", "        print('BUG:', w)",
              "    print('OK: every claim matches the concrete answers' if not wrong else '')",
              "    sys.exit(1 if wrong else 0)", ""]
    return "\n".join(lines)

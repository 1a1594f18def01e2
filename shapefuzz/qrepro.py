"""repro.py for question programs: torch's ShapeEnv driven directly, each question checked
against its concrete answer (Note [question truth]). torch only (settings configs become ShapeEnv
arguments and fx config switches), unless the finding needs one of shapefuzz's scoped torch
patches (a slow-path config), which it then imports."""

from __future__ import annotations

from shapefuzz.program import Ref
from shapefuzz.questions import FALLBACK, QProgram, truth

__all__ = ["question_repro_source"]

_HEAD = '''import sys
import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic, ShapeEnv, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_true)

import torch.fx.experimental._config as fxx

se = None
wrong = []
claims = []  # (question, answer) for every answer that is not an undecided fallback
answers = []  # (answer, is_claim) per question, in order (metamorphic checks compare runs)
leaves = []  # the SymInt (or int) made for each backed/unbacked value, in order


def backed(hint, name):
    # as torch sizes tensors: under backed_size_oblivious no 0/1 specialization, size-like
    bso = fxx.backed_size_oblivious
    s = se.create_symbol(hint, source=ConstantSource(name), dynamic_dim=DimDynamic.DUCK,
                         do_not_specialize_zero_one=bso)
    if bso and not s.is_number:
        se.size_like.add(s)
    leaves.append(se.create_symintnode(s, hint=hint, source=ConstantSource(name)))
    return leaves[-1]


def unbacked():
    leaves.append(se.create_unbacked_symint())
    se.pending_fresh_unbacked_symbols.clear()
    return leaves[-1]


def claim(k, cond, got, fallback, want):
    """A question's answer must be the concrete one unless it is the mode's fallback taken
    because the ShapeEnv could not decide."""
    expr = cond.node.expr if isinstance(cond, torch.SymBool) else cond
    static = se._maybe_evaluate_static(expr) if isinstance(cond, torch.SymBool) else cond
    decided = static is not None
    answers.append((got, got != fallback or decided))
    if got != fallback or decided:
        claims.append((k, got))
    if got != want and (got != fallback or (decided and bool(static) != want)):
        wrong.append(f"question {k}: {expr} answered {got} (static: {static}); concretely {want}")


def replay(values, answers):
    """Under other values that satisfy every guard (with the ranges produce_guards checks) and
    every deferred assert, every claim must still be the concrete answer."""
    import sympy
    from torch.utils._sympy.symbol import SymT, symbol_is_type
    binding = {}
    for leaf, v in zip(leaves, values):
        e = leaf.node.expr if isinstance(leaf, torch.SymInt) else sympy.Integer(leaf)
        if (e.is_number and int(e) != v) or binding.setdefault(e, v) != v:
            return
    facts = [g.expr for g in se.guards] + [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]
    for s in binding:
        if not s.is_number and symbol_is_type(s, SymT.SIZE):
            vr = se.var_to_range[s]
            facts += [sympy.Ge(s, vr.lower)] if vr.lower.is_finite else []
            facts += [sympy.Le(s, vr.upper)] if vr.upper.is_finite else []
    binding = {k: v for k, v in binding.items() if not k.is_number}
    try:
        if not all(bool(f.xreplace(binding)) for f in facts):
            return
    except TypeError:
        return
    for k, got in claims:
        if k < len(answers) and got != answers[k]:
            wrong.append(f"question {k}: answered {got}; with values {values} every guard and assert "
                         f"holds but the concrete answer is {answers[k]}")


'''

_MODES = {"bool": "bool({c})", "guard_or_false": "guard_or_false({c})", "guard_or_true": "guard_or_true({c})",
          "statically_known_true": "statically_known_true({c})", "size_oblivious": "guard_size_oblivious({c})"}


def question_repro_source(p: QProgram, header: str, config_lines: str = "", config: str = "default",
                          alt_values: tuple[int, ...] | None = None, metamorphic: str = "") -> str:
    """metamorphic: "" (check claims against the truth), "fresh" (run twice in fresh envs and
    compare) or "redundant" (compare with a statically_known_true before every question)."""
    if metamorphic:
        return _metamorphic_source(p, header, config_lines, metamorphic)
    p.validate()
    t = truth(p)
    settings = _settings_only(config)
    if settings is not None:  # plain torch: ShapeEnv arguments and fx config switches
        kwargs, fx = settings
        config_lines += "".join(f"fxx.{k} = {v!r}  # config {config}\n" for k, v in fx.items())
        start = ["def start():", f"    return ShapeEnv({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})",
                 "", ""]
        run = ["        main()"]
    else:  # torch's ShapeEnv under a shapefuzz config: its scoped torch patches are needed
        if not all(ch.isalnum() or ch in "-=:+_" for ch in config):
            raise ValueError(f"config name {config!r} is not a plain config name")
        start = ["from shapefuzz.systems.torch_toggles import applied  # scoped torch patches", "", "",
                 "def start(cfg):", "    return ShapeEnv(**cfg.env_kwargs)", "", ""]
        run = [f"        with applied({config!r}) as cfg:", "            main(cfg)"]
    lines = [header, _HEAD, config_lines] + start + [
        "def main(cfg=None):", "    global se", "    se = start(cfg) if cfg is not None else start()"]

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
            lines.append(f"    v{v} = unbacked()  # concretely {int(args[0])}")
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
            if mode == "size_oblivious":  # assumes sizes >= 2 by design: asked, not checked
                lines.append(f"    {_MODES[mode].format(c='c')}")
            else:
                lines.append(f"    claim({q}, c, {_MODES[mode].format(c='c')}, {FALLBACK[mode]!r}, {want!r})")
            q += 1
    if alt_values is not None:
        from shapefuzz.systems.qreplay import with_values

        alt = truth(with_values(p, tuple(alt_values)))
        if alt.failed_check is None:
            lines.append(f"    replay({[int(x) for x in alt_values]!r}, {list(alt.answers)!r})")
    lines += ["", "", "if __name__ == '__main__':", "    print('torch', torch.__version__)",
              "    try:", *run, "    except Exception as e:",
              "        print(f'raised {type(e).__name__}: {e}')",
              "        if 'data-dependent' not in str(e).lower() and not type(e).__name__.startswith('GuardOnData'):",
              "            sys.exit(1)",
              "    for w in wrong:", "        print('BUG:', w)",
              "    print('OK: every claim matches the concrete answers' if not wrong else '')",
              "    sys.exit(1 if wrong else 0)", ""]
    return "\n".join(lines)


def _settings_only(config: str) -> tuple[dict, dict] | None:
    """(ShapeEnv kwargs, fx config overrides) when the config is only settings torch exposes, so
    the repro needs torch alone; None when it needs shapefuzz's patches (a slow path)."""
    if config == "default":
        return {}, {}
    from shapefuzz.systems.torch_toggles import toggles

    t = toggles(config)
    if t.slow_paths() or t.do_not_emit_stack_traces:
        return None
    return t.env_kwargs(), t.fx_overrides()


def _metamorphic_source(p: QProgram, header: str, config_lines: str, kind: str) -> str:
    from shapefuzz.metamorphic import ask_map, redundant

    second = p if kind == "fresh" else redundant(p)
    one = question_repro_source(p, header, config_lines)
    two = question_repro_source(second, "", "")
    body = lambda src: src[src.index("def main(cfg=None):"):src.index("\n\nif __name__")]  # noqa: E731
    mapping = list(range(len(p.asks()))) if kind == "fresh" else ask_map(p)
    return (one[:one.index("def main(cfg=None):")] + body(one) + "\n\n"
            + body(two).replace("def main(cfg=None):", "def main2(cfg=None):") + f"""


if __name__ == '__main__':
    for run in (main, main2):
        try:
            run()
        except Exception as e:
            answers.append(("raised", type(e).__name__))
        answers.append("|")
    cut = answers.index("|")
    first, second = answers[:cut], answers[cut + 1:-1]
    mapping = {mapping!r}
    for k, j in enumerate(mapping):
        a = first[k] if k < len(first) else None
        b = second[j] if j < len(second) else None
        if a != b and not (a and b and a[0] != "raised" and b[0] != "raised" and not (a[1] and b[1])):
            print(f"BUG: question {{k}}: {{a}} on the first run, {{b}} on the {kind} run")
            sys.exit(1)
    print("OK: the {kind} run answers alike")
    sys.exit(0)
""")

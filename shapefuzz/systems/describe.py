"""One line per named config saying what it switches, read from the settings values themselves
where they are data (compile settings) and from the tables below for the toggles and the ref
configs. The registry (systems/configs.py) asks it once per config and keeps the line as
Config.switches, which `shapefuzz systems` and the docs print; export's front ends (strict,
dim-auto, named-dims, decomposed) are written there, next to what they set."""

from __future__ import annotations

from shapefuzz.systems.compile_settings import CompileSettings, settings_of

__all__ = ["describe"]

_OPTIMIZATIONS = {
    "expr-cache": "SymNode.expr cached per replacements version",
    "smart-sort": "_smart_symbol_sort reading hints straight from backed_var_to_val",
    "relationals": "unbacked-symbol-vs-constant relationals built with evaluate=False",
    "no-hint": "the _NO_HINT sentinel (no compute_hint retry)",
    "skip-static": "_should_skip_static_eval (u >= 0 of an unbounded unbacked symbol)",
    "add-from-args": "sympy.Add._from_args in _optimized_add",
    "fast-eval-comparison": "_maybe_fast_eval_comparison",
    "no-stack-traces": "do_not_emit_stack_traces",
}

_TORCH = {
    "default": "torch as shipped",
    "agfs=1": "torch.fx.experimental._config.aggressive_guard_free_semantics=1 (range analysis only)",
    "agfs=2": "aggressive_guard_free_semantics=2 (guard_or_* falls back at once)",
    "stack-traces-off": "torch.fx.config.do_not_emit_stack_traces=True",
    "all-slow": "every slow:* path at once (patches of torch)",
    "no-specialize-zero-one": "ShapeEnv(specialize_zero_one=False) (make_fx: the ShapeEnv of the fake "
                              "inputs; export/compile take no argument for it: patched in, findings low)",
    "no-duck-shape": "torch.fx.experimental._config.use_duck_shape=False",
    "backed-size-oblivious": "torch.fx.experimental._config.backed_size_oblivious=True",
    "prefer-deferred": "prefer_deferred_runtime_asserts_over_guards=True (ShapeEnv kwarg, export "
                       "argument, Dynamo config)",
}

_REF = {
    "default": "shapefuzz's reference ShapeEnv, every optimization on",
    "all-off": "reference ShapeEnv, every optimization off (the config differential's baseline)",
}


def describe(system: str, name: str) -> str:
    """What config `name` of `system` switches, one line ("a+b": both parts)."""
    if system == "compile":
        return _compile(name)
    return "; ".join(_part(system, p) for p in name.split("+"))


def _part(system: str, part: str) -> str:
    if system == "ref" and part in _REF:
        return _REF[part]
    if part.startswith("slow:"):
        return f"without {_OPTIMIZATIONS.get(part[5:], part[5:])}: its pre-optimization code (a patch of torch)"
    if part.startswith("off:"):
        return f"reference ShapeEnv with {_OPTIMIZATIONS.get(part[4:], part[4:])} off"
    return _TORCH.get(part, part)


def _compile(name: str) -> str:
    s, base = settings_of(name), CompileSettings()
    bits = [f"backend={s.backend}"] if s.backend != base.backend else []
    if s.dynamic is not None:
        bits.append(f"dynamic={s.dynamic}")
    if not s.fullgraph:
        bits.append("fullgraph=False (graph breaks allowed)")
    if s.marks:
        bits.append(f"torch._dynamo marks: {s.marks}")
    bits += [f"torch._dynamo.config.{k}={v}" for k, v in s.dynamo]
    if s.toggles != "default":
        bits.append(_part("compile", s.toggles))
    return ("torch.compile(backend=eager, fullgraph=True), automatic dynamic" if not bits
            else "torch.compile with " + ", ".join(bits))

"""Named configs of the `compile` system, as plain data (no torch import: the campaign process
reads them to list configs and the recompile oracle reads them to know what a config promised).

A config is one CompileSettings: how torch.compile is called (dynamic, backend, fullgraph),
which dims get mark_dynamic / mark_static / mark_unbacked before each call, Dynamo config
overrides, and the name of a torch_toggles config (the ShapeEnv optimizations of seed 000 and
the ShapeEnv settings) applied around the whole call sequence."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.recompile import CallRecord

__all__ = [
    "CHEAP_INDUCTOR",
    "COMPILE_CONFIGS",
    "MARKS",
    "OPT_IN_CONFIGS",
    "TOGGLE_CONFIGS",
    "CallRecord",
    "CompileSettings",
    "compile_config_names",
    "settings_of",
]

#: which dims get marked before each call: none; the program's own kinds (static ->
#: mark_static, dynamic -> mark_dynamic, unbacked -> mark_unbacked); or every non-static dim
#: with one kind of mark
MARKS = ("", "program", "dynamic", "static", "unbacked", "unbacked-strict")

#: torch_toggles config names (kept in sync by tests/cover/test_compile_system.py)
TOGGLE_CONFIGS = ("agfs=1", "agfs=2", "stack-traces-off", "slow:expr-cache", "slow:smart-sort",
                  "slow:relationals", "slow:no-hint", "slow:skip-static", "slow:add-from-args",
                  "slow:fast-eval-comparison", "all-slow", "no-specialize-zero-one",
                  "no-duck-shape", "backed-size-oblivious", "prefer-deferred")


# Note [cheap Inductor]: what a fuzzer needs of Inductor is its handling of symbolic sizes
# (lowering, codegen binding unbacked extents, the wrapper's size checks), not fast kernels.
# In a worker, C++ compile dominated: -O0 (aot_inductor.debug_compile, which the CPU builder
# reads for every kernel) took 1.8 s a new program where -O3 took 2.7 s, and compiling in the
# worker itself (compile_threads=1) spares the start of a compile-process pool that the
# worker's memory cap and timeouts would also have to cover. Inductor's disk caches (FX graph,
# kernels) stay on: they are keyed by content, so a program met again costs no compile.
#: Inductor settings while an Inductor config runs (Note [cheap Inductor])
CHEAP_INDUCTOR = (("compile_threads", 1), ("aot_inductor.debug_compile", True))



@dataclass(frozen=True, slots=True)
class CompileSettings:
    dynamic: bool | None = None  # torch.compile(dynamic=...)
    backend: str = "eager"  # eager | aot_eager | inductor
    fullgraph: bool = True
    marks: str = ""  # one of MARKS
    dynamo: tuple[tuple[str, object], ...] = ()  # torch._dynamo.config overrides
    toggles: str = "default"  # a torch_toggles config name

    def __post_init__(self) -> None:
        if self.marks not in MARKS:
            raise ValueError(f"marks={self.marks!r}: expected one of {MARKS}")
        if self.backend not in ("eager", "aot_eager", "inductor"):
            raise ValueError(f"backend={self.backend!r}: expected eager, aot_eager or inductor")

    def torch_names(self) -> tuple[str, ...]:
        """The torch names these settings need besides their toggles' (Note [torch names] in
        needs.py): each Dynamo config override's entry, and mark_unbacked for its marks."""
        names = [f"torch._dynamo.config.{k}" for k, _ in self.dynamo]
        if self.backend == "inductor":
            names += [f"torch._inductor.config.{k}" for k, _ in CHEAP_INDUCTOR]
        if self.marks in ("program", "unbacked", "unbacked-strict"):
            names.append("torch._dynamo.decorators.mark_unbacked")
        return tuple(names)

    @property
    def automatic_dynamic(self) -> bool:
        """Dims start static and become dynamic once they are seen to vary."""
        d = dict(self.dynamo)
        return (self.dynamic is None and d.get("automatic_dynamic_shapes", True)
                and d.get("assume_static_by_default", True))


_PREFER = (("prefer_deferred_runtime_asserts_over_guards", True),)

COMPILE_CONFIGS: dict[str, CompileSettings] = {
    "default": CompileSettings(),
    "dynamic=True": CompileSettings(dynamic=True),
    "dynamic=False": CompileSettings(dynamic=False),
    "aot_eager": CompileSettings(backend="aot_eager"),
    "aot_eager+dynamic=True": CompileSettings(dynamic=True, backend="aot_eager"),
    "marks": CompileSettings(marks="program"),
    "mark-dynamic": CompileSettings(marks="dynamic"),
    "mark-static": CompileSettings(marks="static"),
    "mark-unbacked": CompileSettings(marks="unbacked"),
    # mark_unbacked(strict=True): a specialization must raise (oracles/specialization.py)
    "mark-unbacked-strict": CompileSettings(marks="unbacked-strict"),
    "graph-breaks": CompileSettings(fullgraph=False),
    "capture-scalar-outputs": CompileSettings(fullgraph=False, dynamo=(("capture_scalar_outputs", True),)),
    "capture-dynamic-output-shape-ops": CompileSettings(
        fullgraph=False, dynamo=(("capture_dynamic_output_shape_ops", True),)),
    "no-assume-static": CompileSettings(dynamo=(("assume_static_by_default", False),)),
    "no-automatic-dynamic": CompileSettings(dynamo=(("automatic_dynamic_shapes", False),)),
    # past the limit Dynamo runs the frame eagerly; fullgraph=True would turn that into an error
    "recompile-limit=2": CompileSettings(dynamic=False, fullgraph=False, dynamo=(("recompile_limit", 2),)),
    **{name: CompileSettings(toggles=name, dynamo=_PREFER if name == "prefer-deferred" else ())
       for name in TOGGLE_CONFIGS},
    # slower (C++ codegen per graph): in --config all and the nightly campaign, never in a
    # default campaign (systems.DEFAULT_CONFIGS)
    "inductor": CompileSettings(backend="inductor"),
    "inductor+dynamic=True": CompileSettings(dynamic=True, backend="inductor"),
}

#: configs a campaign runs only when asked by name (none today: inductor is in --config all)
OPT_IN_CONFIGS: dict[str, CompileSettings] = {}


def compile_config_names() -> tuple[str, ...]:
    return tuple(COMPILE_CONFIGS)


def settings_of(name: str) -> CompileSettings:
    s = COMPILE_CONFIGS.get(name) or OPT_IN_CONFIGS.get(name)
    if s is None:
        raise ValueError(f"unknown compile config {name!r}; known: "
                         f"{', '.join(list(COMPILE_CONFIGS) + list(OPT_IN_CONFIGS))}")
    return s

"""The eight ShapeEnv optimizations of seed 000 (torch 2.13), switchable one by one, plus the
ShapeEnv settings a campaign varies. Shared by every torch system (torch-env, make_fx, export):

    with applied("slow:expr-cache") as cfg:
        se = ShapeEnv(**cfg.env_kwargs)
        ...
    assert cfg.counts["expr-cache"] > 0      # the slow path really ran

Note [slow paths]: two optimizations are configs (aggressive_guard_free_semantics,
do_not_emit_stack_traces); the other six exist only as code, so each has a context manager that
monkeypatches torch back to its pre-optimization behaviour (docs/explanation/torch-internals.md), counts every
time the slow code runs (a patch that never runs proves nothing) and restores the original
attribute on exit, also when the body raises (Note [exact restore] in patching.py). Each slow
path declares the torch names it replaces or reads (SlowPath.needs; the settings fields declare
theirs as field metadata), so a torch that moved one reports the config unavailable instead of
failing in it (Note [torch names] in needs.py). A slow path must not change any answer:
configs named "slow:*", "all-slow" and "stack-traces-off" are semantics-preserving, and the
config differential oracle compares them with each other. Two slow paths are compiled rewrites
of torch's source (Note [compiled rewrites] in rewrite.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx.config as fx_config
import torch.fx.experimental._config as fxx
from torch.fx.experimental import sym_node as sn
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.systems.configs import config_of, is_config
from shapefuzz.systems.patching import patched as _patched
from shapefuzz.systems.rewrite import counting as _counting
from shapefuzz.systems.rewrite import counts_of as _counts_of
from shapefuzz.systems.rewrite import rewrite as _rewrite
from shapefuzz.systems.torch_names import Need

__all__ = [
    "CONFIGS",
    "PATCH_TARGETS",
    "SLOW_PATHS",
    "Applied",
    "SlowPath",
    "TorchToggles",
    "applied",
    "config_names",
    "fresh_fake_caches",
    "needs",
    "slow_path",
    "small_sizes_outside_contract",
    "toggles",
    "unsupported_settings",
]


_SS = "torch.fx.experimental.symbolic_shapes"
_SN = "torch.fx.experimental.sym_node"
_FXX = "torch.fx.experimental._config"


def _needs(*needs: Need | str) -> dict[str, tuple[Need, ...]]:
    """Field metadata: the torch names a non-default value of the field needs (Note [torch
    names] in needs.py); the slow-path fields declare theirs in SLOW_PATHS."""
    return {"needs": tuple(n if isinstance(n, Need) else Need(n) for n in needs)}


@dataclass(frozen=True, slots=True)
class TorchToggles:
    """One field per optimization (True/level = torch as shipped), then ShapeEnv settings."""

    aggressive_guard_free_semantics: int = field(  # a: 0/1/2, fx config
        default=0, metadata=_needs(f"{_FXX}.aggressive_guard_free_semantics"))
    do_not_emit_stack_traces: bool = field(  # b: torch.fx.config (make_fx/export tracers only)
        default=False, metadata=_needs("torch.fx.config.do_not_emit_stack_traces"))
    expr_cache: bool = True  # c: SymNode.expr cached per replacements version
    smart_sort_dict: bool = True  # d: _smart_symbol_sort reads backed_var_to_val directly
    unevaluated_relationals: bool = True  # e: unbacked-symbol-vs-constant relationals, evaluate=False
    no_hint_sentinel: bool = True  # f: _NO_HINT stops compute_hint retries
    skip_static_eval: bool = True  # g: _should_skip_static_eval
    add_from_args: bool = True  # h: Add._from_args in _optimized_add
    fast_eval_comparison: bool = True  # related: _maybe_fast_eval_comparison
    # settings that change what may be assumed (not semantics-preserving)
    backed_size_oblivious: bool = field(  # fx config
        default=False, metadata=_needs(f"{_FXX}.backed_size_oblivious"))
    specialize_zero_one: bool = field(  # ShapeEnv kwarg (ShapeEnv.__init__ passes **kwargs on)
        default=True, metadata=_needs(Need(f"{_SS}.ShapeEnv._init", param="specialize_zero_one")))
    duck_shape: bool = field(  # ShapeEnv kwarg, and the fx config flag a user sets
        default=True, metadata=_needs(Need(f"{_SS}.ShapeEnv._init", param="duck_shape"),
                                      f"{_FXX}.use_duck_shape"))
    prefer_deferred_runtime_asserts_over_guards: bool = field(  # ShapeEnv kwarg
        default=False, metadata=_needs(Need(f"{_SS}.ShapeEnv._init",
                                            param="prefer_deferred_runtime_asserts_over_guards")))

    def env_kwargs(self) -> dict[str, Any]:
        """ShapeEnv constructor kwargs (only the non-defaults, so fx config still applies)."""
        kw: dict[str, Any] = {}
        if not self.specialize_zero_one:
            kw["specialize_zero_one"] = False
        if not self.duck_shape:
            kw["duck_shape"] = False
        if self.prefer_deferred_runtime_asserts_over_guards:
            kw["prefer_deferred_runtime_asserts_over_guards"] = True
        return kw

    def fx_overrides(self) -> dict[str, Any]:
        """torch.fx.experimental._config flags: how a user sets these (Note [user settings])."""
        kw: dict[str, Any] = {}
        if self.aggressive_guard_free_semantics:
            kw["aggressive_guard_free_semantics"] = self.aggressive_guard_free_semantics
        if self.backed_size_oblivious:
            kw["backed_size_oblivious"] = True
        if not self.duck_shape:
            kw["use_duck_shape"] = False  # every ShapeEnv whose creator leaves duck_shape unset
        return kw

    def unsupported(self, frontend: str) -> dict[str, Any]:
        """Note [user settings]: the ShapeEnv kwargs `frontend` offers a user no way to set, which
        shapefuzz can only force by patching ShapeEnv.__init__ (findings under them are low)."""
        if frontend == "make_fx":  # the user builds the ShapeEnv: every kwarg is theirs
            return {}
        kw = {k: v for k, v in self.env_kwargs().items() if k == "specialize_zero_one"}
        return kw

    def slow_paths(self) -> tuple[str, ...]:
        return tuple(name for name, p in SLOW_PATHS.items() if not getattr(self, p.toggle))

    def needs(self) -> tuple[Need, ...]:
        """The torch names these toggles need beyond torch as shipped: each non-default field's
        (its metadata, or its slow path's), in field order, without repeats."""
        slow = {p.toggle: p.needs for p in SLOW_PATHS.values()}
        out: dict[Need, None] = {}
        for f in dataclasses.fields(self):
            if getattr(self, f.name) != f.default:
                out.update(dict.fromkeys(slow.get(f.name) or f.metadata.get("needs", ())))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Applied:
    """What `with applied(name)` yields."""

    name: str
    toggles: TorchToggles
    env_kwargs: dict[str, Any]
    counts: Counter = field(default_factory=Counter)  # slow path -> times its code ran


# ---------------------------------------------------------------------------------------------
# c: SymNode.expr recomputes shape_env.replace() on every access


@contextlib.contextmanager
def _slow_expr_cache(counts: Counter) -> Iterator[None]:
    def expr(self):
        e = self._expr
        if isinstance(e, int) or e.is_number:
            return e
        if self.shape_env is None:
            raise AssertionError("shape_env is required to access expr")
        counts["expr-cache"] += 1
        return self.shape_env.replace(e)

    with _patched(sn.SymNode, "expr", property(expr)):
        yield


# ---------------------------------------------------------------------------------------------
# d: _smart_symbol_sort reads hints through size_hint (Note [compiled rewrites] in rewrite.py)

_SMART_SORT_OLD = "hint = self.backed_var_to_val.get(x)"
_SMART_SORT_NEW = "hint = _shapefuzz_size_hint(self, x)"


@functools.cache
def _size_hint_fn() -> Callable:
    """size_hint is deprecated in 2.13 (a FutureWarning per call); the lru_cache'd function under
    the deprecation wrapper is what the pre-optimization code called. Read when first needed, so
    a torch without it makes slow:smart-sort unavailable, not this module unimportable."""
    return getattr(ss.ShapeEnv.size_hint, "__wrapped__", ss.ShapeEnv.size_hint)


def _size_hint(se, x):
    _counts_of(_compiled_guard_rel)["smart-sort"] += 1
    return _size_hint_fn()(se, x, allow_none=True)


@functools.cache
def _compiled_guard_rel() -> tuple[Callable, dict]:
    return _rewrite(ss.ShapeEnv._maybe_guard_rel, ss.__dict__, _SMART_SORT_OLD, _SMART_SORT_NEW,
                    {"_shapefuzz_size_hint": _size_hint})


@contextlib.contextmanager
def _slow_smart_sort(counts: Counter) -> Iterator[None]:
    fn, g = _compiled_guard_rel()
    with _counting(g, counts), _patched(ss.ShapeEnv, "_maybe_guard_rel", fn):
        yield


# ---------------------------------------------------------------------------------------------
# e: relationals of an unbacked symbol vs a constant are built evaluated

_RELATIONALS = {"eq": sympy.Eq, "ne": sympy.Ne, "ge": sympy.Ge, "gt": sympy.Gt, "le": sympy.Le,
                "lt": sympy.Lt}


def _single_unbacked(e) -> bool:
    from torch.utils._sympy.symbol import SymT, symbol_is_type  # Note [torch names]: not at import

    return bool(getattr(e, "is_symbol", False)) and symbol_is_type(e, SymT.UNBACKED_INT)


@contextlib.contextmanager
def _slow_relationals(counts: Counter) -> Iterator[None]:
    def wrap(orig, rel):
        @functools.wraps(orig)
        def slow(self, other=None):
            out = orig(self, other)
            lhs, rhs = self.expr, other.expr
            if (_single_unbacked(lhs) and rhs.is_number) or (_single_unbacked(rhs) and lhs.is_number):
                counts["relationals"] += 1
                out._expr = rel(lhs, rhs)  # the pre-optimization `func(self.expr, other.expr)`
                out._expr_cache, out._expr_ver = None, -1
            return out
        return slow

    with contextlib.ExitStack() as stack:
        for m, rel in _RELATIONALS.items():
            stack.enter_context(_patched(sn.SymNode, f"_{m}", wrap(getattr(sn.SymNode, f"_{m}"), rel)))
        yield


# ---------------------------------------------------------------------------------------------
# f: _NO_HINT is treated as None, so SymNode.__init__ retries compute_hint


@contextlib.contextmanager
def _slow_no_hint(counts: Counter) -> Iterator[None]:
    orig = sn.SymNode.__init__
    sentinel = sn._NO_HINT

    @functools.wraps(orig)
    def init(self, expr, shape_env, pytype, hint, *args, **kwargs):
        if hint is sentinel:
            counts["no-hint"] += 1
            hint = None
        orig(self, expr, shape_env, pytype, hint, *args, **kwargs)

    with _patched(sn.SymNode, "__init__", init):
        yield


# ---------------------------------------------------------------------------------------------
# g and the related fast comparison: never skip static evaluation


@contextlib.contextmanager
def _slow_skip_static(counts: Counter) -> Iterator[None]:
    def never_skip(self, expr):
        counts["skip-static"] += 1
        return False

    with _patched(ss.ShapeEnv, "_should_skip_static_eval", never_skip):
        yield


@contextlib.contextmanager
def _slow_fast_eval_comparison(counts: Counter) -> Iterator[None]:
    def no_fast_path(self, expr):
        counts["fast-eval-comparison"] += 1
        return None

    with _patched(ss.ShapeEnv, "_maybe_fast_eval_comparison", no_fast_path):
        yield


# ---------------------------------------------------------------------------------------------
# h: _optimized_add builds its sums with sympy.Add(*args, evaluate=False)

_ADD_OLD = "result = sympy.Add._from_args(ordered_args, is_commutative=True)"
_ADD_NEW = "result = _shapefuzz_add(ordered_args)"


def _slow_add(args):
    _counts_of(_compiled_optimized_add)["add-from-args"] += 1
    return sympy.Add(*args, evaluate=False)


@functools.cache
def _compiled_optimized_add() -> tuple[Callable, dict]:
    return _rewrite(sn._optimized_add, sn.__dict__, _ADD_OLD, _ADD_NEW, {"_shapefuzz_add": _slow_add})


@contextlib.contextmanager
def _slow_add_from_args(counts: Counter) -> Iterator[None]:
    fn, g = _compiled_optimized_add()
    with _counting(g, counts), _patched(sn, "_optimized_add", fn):
        yield


# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SlowPath:
    """One slow path (Note [slow paths]) and the torch names its patch replaces or reads (Note
    [torch names] in needs.py; a compiled rewrite names the source text it must find)."""

    toggle: str  # the TorchToggles field that is False when it is active
    patch: Callable[[Counter], contextlib.AbstractContextManager]
    needs: tuple[Need, ...]


_SYMBOL = "torch.utils._sympy.symbol"

#: slow path name -> SlowPath
SLOW_PATHS: dict[str, SlowPath] = {
    "expr-cache": SlowPath("expr_cache", _slow_expr_cache,
                           (Need(f"{_SN}.SymNode.expr"), Need(f"{_SS}.ShapeEnv.replace"))),
    "smart-sort": SlowPath("smart_sort_dict", _slow_smart_sort,
                           (Need(f"{_SS}.ShapeEnv._maybe_guard_rel", fragment=_SMART_SORT_OLD),
                            Need(f"{_SS}.ShapeEnv.size_hint"))),
    "relationals": SlowPath("unevaluated_relationals", _slow_relationals,
                            (*(Need(f"{_SN}.SymNode._{m}") for m in _RELATIONALS),
                             Need(f"{_SYMBOL}.SymT.UNBACKED_INT"), Need(f"{_SYMBOL}.symbol_is_type"))),
    "no-hint": SlowPath("no_hint_sentinel", _slow_no_hint, (Need(f"{_SN}._NO_HINT"),)),
    "skip-static": SlowPath("skip_static_eval", _slow_skip_static,
                            (Need(f"{_SS}.ShapeEnv._should_skip_static_eval"),)),
    "add-from-args": SlowPath("add_from_args", _slow_add_from_args,
                              (Need(f"{_SN}._optimized_add", fragment=_ADD_OLD),)),
    "fast-eval-comparison": SlowPath("fast_eval_comparison", _slow_fast_eval_comparison,
                                     (Need(f"{_SS}.ShapeEnv._maybe_fast_eval_comparison"),)),
}

#: every (owner, attribute) a slow path or `applied` replaces (Note [exact restore] in
#: patching.py: a worker checks after each job that each is back to its original)
PATCH_TARGETS: tuple[tuple[Any, str], ...] = (
    (sn.SymNode, "expr"), (sn.SymNode, "__init__"), (sn, "_optimized_add"),
    *((sn.SymNode, f"_{m}") for m in _RELATIONALS),
    (ss.ShapeEnv, "_maybe_guard_rel"), (ss.ShapeEnv, "_should_skip_static_eval"),
    (ss.ShapeEnv, "_maybe_fast_eval_comparison"), (ss.ShapeEnv, "__init__"),
)

_DEFAULT = TorchToggles()
CONFIGS: dict[str, TorchToggles] = {
    "default": _DEFAULT,
    "agfs=1": TorchToggles(aggressive_guard_free_semantics=1),
    "agfs=2": TorchToggles(aggressive_guard_free_semantics=2),
    "stack-traces-off": TorchToggles(do_not_emit_stack_traces=True),
    **{f"slow:{name}": dataclasses.replace(_DEFAULT, **{p.toggle: False})
       for name, p in SLOW_PATHS.items()},
    "all-slow": dataclasses.replace(_DEFAULT, **{p.toggle: False for p in SLOW_PATHS.values()}),
    "no-specialize-zero-one": TorchToggles(specialize_zero_one=False),
    "no-duck-shape": TorchToggles(duck_shape=False),
    "backed-size-oblivious": TorchToggles(backed_size_oblivious=True),
    "prefer-deferred": TorchToggles(prefer_deferred_runtime_asserts_over_guards=True),
}


def config_names() -> tuple[str, ...]:
    return tuple(CONFIGS)


def toggles(name: str) -> TorchToggles:
    """The toggles of a config name; "a+b" applies b's non-default fields on top of a's."""
    if not isinstance(name, str):
        raise TypeError(f"config name must be a str, got {name!r}; known: {', '.join(CONFIGS)}")
    out = _DEFAULT
    for part in name.split("+"):
        if part not in CONFIGS:
            raise ValueError(f"unknown torch config {part!r} (in {name!r}); known: "
                             f"{', '.join(CONFIGS)} (combine with '+')")
        t = CONFIGS[part]
        out = dataclasses.replace(out, **{f.name: getattr(t, f.name) for f in dataclasses.fields(t)
                                          if getattr(t, f.name) != getattr(_DEFAULT, f.name)})
    return out


@contextlib.contextmanager
def slow_path(name: str, counts: Counter | None = None) -> Iterator[Counter]:
    """One slow path alone (the names of SLOW_PATHS)."""
    if name not in SLOW_PATHS:
        raise ValueError(f"unknown slow path {name!r}; known: {', '.join(SLOW_PATHS)}")
    counts = Counter() if counts is None else counts
    with SLOW_PATHS[name].patch(counts):
        yield counts


def needs(name: str) -> tuple[Need, ...]:
    """The torch names config `name` needs (Note [torch names] in needs.py); raises ValueError
    for an unknown name, as `toggles` does."""
    return toggles(name).needs()


# Note [user settings]: a config is applied the way a user can apply it: torch config flags
# (fx_overrides: aggressive_guard_free_semantics, backed_size_oblivious, use_duck_shape), the
# front end's own arguments (export's prefer_deferred_runtime_asserts_over_guards, Dynamo's
# config for compile) and, for make_fx, the ShapeEnv the user builds for the fake inputs
# (env_kwargs). Forcing kwargs into every ShapeEnv by patching ShapeEnv.__init__ also reaches
# the ones torch builds for itself (Dynamo's OutputGraph), a combination torch never makes
# (measured: "vr must not be None" under export no-specialize-zero-one). Only what a front end
# cannot take is still forced (`unsupported`), and its findings say so, with severity low
# (`unsupported_settings`, read by shapefuzz.oracles.base.check_all).
@contextlib.contextmanager
def applied(name: str, frontend: str = "") -> Iterator[Applied]:
    """Apply a named config for the duration of the block. Yields an Applied whose env_kwargs
    the caller passes to the ShapeEnv it builds and whose counts show which slow paths ran.
    With a `frontend` (export, compile), the kwargs it offers no argument for are forced into
    every ShapeEnv built inside the block (Note [user settings])."""
    t = toggles(name)
    out = Applied(name, t, t.env_kwargs())
    forced = t.unsupported(frontend) if frontend else {}
    with contextlib.ExitStack() as stack:
        if forced:
            stack.enter_context(_forced_env_kwargs(forced, out.counts))
        if t.fx_overrides():
            stack.enter_context(fxx.patch(**t.fx_overrides()))
        if t.do_not_emit_stack_traces:
            stack.enter_context(_patched(fx_config, "do_not_emit_stack_traces", True))
        for slow in t.slow_paths():
            stack.enter_context(SLOW_PATHS[slow].patch(out.counts))
        yield out


@contextlib.contextmanager
def _forced_env_kwargs(kw: dict[str, Any], counts: Counter) -> Iterator[None]:
    orig = ss.ShapeEnv.__init__

    @functools.wraps(orig)
    def init(self, *args, **kwargs):
        counts["env-kwargs"] += 1
        kwargs.update(kw)
        orig(self, *args, **kwargs)

    with _patched(ss.ShapeEnv, "__init__", init):
        yield


def unsupported_settings(system: str, config: str) -> tuple[str, ...]:
    """The ShapeEnv settings of (system, config) that shapefuzz has to patch into torch because
    the system's front end takes no argument for them (Note [user settings]); () for a config
    that is no torch_toggles name."""
    if system not in ("export", "compile"):
        return ()
    if is_config(system, config):  # its torch_toggles config (an export front end: "default")
        name = config_of(system, config).toggles
    elif system == "export":  # an unregistered export name may still be toggles ("a+b")
        name = config
    else:
        return ()
    try:
        return tuple(f"{k}={v}" for k, v in toggles(name).unsupported(system).items())
    except ValueError:  # a name that is no torch_toggles config: torch's defaults
        return ()


def fresh_fake_caches() -> None:
    """Clear FakeTensor's dispatch cache. A cached op result skips the shape questions its meta
    function would ask, so a warm process records fewer decisions than a cold one (measured: 329
    vs 324 for one torch.cond program): every traced system starts each observation from an empty
    cache, so that configs compared by the config differential differ only by the config."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    FakeTensorMode.cache_clear()


def small_sizes_outside_contract(t: TorchToggles, fakes, real, traced) -> str:
    """backed_size_oblivious gives backed sizes the range [0, inf] and relies on size-oblivious
    semantics (decisions taken as for sizes >= 2, with no guard) instead of 0/1 guards: an input
    that puts a *new* 0 or 1 into a backed symbol is outside the trace's contract under it. (The
    traced inputs themselves are in it: a wrong answer there is a bug, see corpus
    zero-size-backed-positive-torch-env.) `traced` holds the traced input shapes."""
    if not t.backed_size_oblivious:
        return ""
    for i, (f, r, shape) in enumerate(zip(fakes, real, traced)):
        for d, (s, n, n0) in enumerate(zip(getattr(f, "shape", ()), getattr(r, "shape", ()), shape)):
            if isinstance(s, torch.SymInt) and not s.node.expr.is_number and int(n) < 2 and int(n) != n0:
                return (f"Guard failed: input {i} dim {d} = {n}: backed_size_oblivious assumes "
                        "backed sizes are not a new 0 or 1")
    return ""

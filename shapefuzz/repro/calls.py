"""Repro scripts for compile findings: torch.compile over the finding's call sequence (Note
[call sequence] in shapefuzz/systems/compile.py), up to the call that showed it.

The issue form compiles the program as the config does (backend, fullgraph, dynamic, marks,
Dynamo config), makes the earlier calls, and checks the last one: against eager (any subset of
guard_or_* branches sent to the general arm, Note [branch contract]); or, for an unsound
reuse, a graph that ran although its own facts (its ShapeEnv's static sizes, shared symbols,
guards and 0/1 assumptions, Note [graph facts]) reject the inputs. The other recompile checks
(silent specialization, a dim that stayed static, an extra recompile) compare graphs with each
other: no public call shows them, so their repro.py is the full check, as check.py is: the
graph facts of shapefuzz/systems/graph_facts.py pasted as they are, and the harness of
templates/calls_check.py."""

from __future__ import annotations

from itertools import combinations

from shapefuzz.oracles.base import Compares
from shapefuzz.program.codegen import function_source, inputs_source, tensor_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer
from shapefuzz.repro.templates import calls_check, calls_issue, traced_issue
from shapefuzz.systems import graph_facts
from shapefuzz.systems.compile import call_sequence
from shapefuzz.systems.compile_settings import settings_of

__all__ = ["WRITER", "check", "issue", "line_limit", "reduction"]

#: recompile symptoms the issue form shows; the others get the full check
_SHOWN = ("compare", "unsound-reuse")


def reduction(case) -> str:
    """How trial.py reduces the issue form (Note [issue form reduction]): calls, then outputs."""
    return "calls" if _check(case) in _SHOWN else ""


def line_limit(case) -> int:
    """A call sequence needs a loop and a check of its last call: a helper, 60 lines (the full
    check, for the recompile symptoms no public call shows, is longer)."""
    return 60 if _check(case) in _SHOWN else 400


def _check(case) -> str:
    f = case.finding
    return f.symptom if common.compares(f) == Compares.GRAPHS else "compare"


def _soft(program) -> list[int]:
    return [pos for pos, ins in enumerate(program.instrs) if ins.op == "branch" and ins.args[0] != "if"]


def _subsets(program) -> list[tuple[int, ...]]:
    soft = _soft(program)
    return [()] + ([c for k in range(1, len(soft) + 1) for c in combinations(soft, k)] if len(soft) <= 4 else [])


def _calls(case):
    target = max(case.finding.replay_index + 1, 0)
    return call_sequence(case.program)[: target + 1]


def _marks(case, marks: str) -> list[list[str]]:
    """Each input dim's mark under the config's `marks` (graph_facts._mark's rule)."""
    def one(dim_kind: str) -> str:
        if marks == "program":
            return dim_kind
        return "" if dim_kind == "static" or not marks else marks

    return [[one(k) for k in s.dims] for s in case.program.inputs]


def issue(case, torch_version: str = "", calls=None) -> str:
    """The issue form; `calls`: the call sequence it makes (a reduced one, Note [issue form
    reduction]), else every call up to the finding's."""
    if _check(case) not in _SHOWN:
        return check(case, torch_version, issue_form=True)
    f, p = case.finding, case.program
    s = settings_of(f.config)
    st = common.settings_of("compile", f.config)
    calls = calls or _calls(case)
    rows = "".join(f"    [{', '.join(tensor_source(x) for x in c)}],\n" for c in calls)
    one = len(calls) == 1  # a single call: no loop over earlier ones, the list on one line
    parts = [function_source(p, "f")]
    subsets = _subsets(p)
    for k, sub in enumerate(subsets[1:], 1):
        parts.append(function_source(p, f"f_general{k}", frozenset(sub)))
    refs = ", ".join(["f"] + [f"f_general{k}" for k in range(1, len(subsets))])
    parts += [f"calls = [{rows.strip().rstrip(',')}]  # the one call, which shows the finding\n" if one
              else f"calls = [  # the call sequence; its last call shows the finding\n{rows}]\n",
              *common.fx_lines(common.fx_switches(case, st.fx)),
              *(f"torch._dynamo.config.{k} = {v!r}\n" for k, v in s.dynamo if k.isidentifier())]
    if st.env_kwargs:
        parts += [f"env_kwargs = {st.env_kwargs!r}\n", common.block(traced_issue, "shape_env_settings")]
    if s.marks == "program":  # each dim as the program marks it
        parts += [common.bindings({"marks": _marks(case, s.marks)}), common.block(calls_issue, "mark_program")]
    elif s.marks:
        dims = [(i, d) for i, spec in enumerate(p.inputs) for d, k in enumerate(spec.dims) if k != "static"]
        parts += [f"dims = {dims!r}  # (input, dim): the non-static dims\n",
                  common.block(calls_issue, f"mark_{s.marks.replace('-', '_')}")]
    options = [f"backend={'backend' if _check(case) != 'compare' else repr(s.backend)}"]
    options += ["fullgraph=True"] if s.fullgraph else []
    options += [f"dynamic={s.dynamic!r}"] if s.dynamic is not None else []
    if _check(case) == "unsound-reuse":
        parts += ["graphs, ran, call = [], [], 0  # each graph's ShapeEnv; (call, graph) of each run\n",
                  common.function(calls_issue, "backend")]
    parts += [f"cf = torch.compile(f, {', '.join(options)})\n",
              "call, args = 0, calls[0]\n" if one else common.block(calls_issue, "call_all")]
    if _check(case) == "compare":
        undefined = p.undefined_outputs()
        parts += [f"undefined = {set(sorted(undefined))!r}  # outputs of torch.empty: only shape and dtype count\n",
                  common.function(calls_issue, "outcome", docstring=False),
                  common.function(calls_issue, "agree", docstring=False),
                  f"refs = [{refs}]  # eager\n", common.block(calls_issue, "compare")]
    else:
        parts += [common.function(calls_issue, "program_inputs"), common.function(calls_issue, "rejects"),
                  common.block(calls_issue, "unsound_reuse")]
    imports = [*common.imports_of(calls_issue), *common.imports_of(traced_issue)]
    return common.script(common.doc(case, torch_version), imports, parts)


def check(case, torch_version: str = "", issue_form: bool = False) -> str:
    """The full harness: the graph facts of systems/graph_facts.py, then templates/calls_check.py."""
    f, p = case.finding, case.program
    s = settings_of(f.config)
    st = common.settings_of("compile", f.config)
    subsets = _subsets(p)
    refs = "".join(function_source(p, f"f_ref{k}", frozenset(sub)) + "\n" for k, sub in enumerate(subsets))
    undefined = sorted(p.undefined_outputs())
    settings = common.bindings({"SETTINGS_VALUES": {"dynamic": s.dynamic, "fullgraph": s.fullgraph, "marks": s.marks,
                                                     "automatic_dynamic": bool(s.automatic_dynamic)}})
    calls = "CALLS = [\n" + "".join(
        "    " + inputs_source(c, "_").split("=", 1)[1].strip().replace("\n", "\n    ") + ",\n"
        for c in _calls(case)) + "]\n"
    facts_imports, facts = common.module_code(graph_facts)
    imports, code = common.harness(calls_check, future=True)
    data = [f"FX_CONFIG = {common.fx_switches(case, st.fx)!r}\n", f"DYNAMO_CONFIG = {dict(s.dynamo)!r}\n",
            f"ENV_KWARGS = {st.env_kwargs!r}\n", f"BACKEND = {s.backend!r}\n", settings,
            f"CHECK = {_check(case)!r}\n", f"TARGET = {max(f.replay_index + 1, 0)!r}\n",
            f"DIMS = {[list(x.dims) for x in p.inputs]!r}\n", f"UNDEFINED = {undefined!r}\n\n",
            function_source(p, "f"), "\n# eager references: every subset of guard_or_* branches sent to the general arm\n",
            refs, f"REFS = [{', '.join(f'f_ref{k}' for k in range(len(subsets)))}]\n\n", calls, "\n\n",
            facts, "\n\n", code]
    lines = ("No public torch call shows this finding: it compares the facts of two compiled graphs. "
             "This is the full check (shapefuzz's graph facts, pasted).",) if issue_form else ()
    return common.script(common.doc(case, torch_version, lines, signature=not issue_form),
                         [*imports, *facts_imports,
                          *common.imports_of(traced_issue)], data)


WRITER = register_writer(Writer("calls", issue, check, line_limit, reduction))  # Note [repro forms]

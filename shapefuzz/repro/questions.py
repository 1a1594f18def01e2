"""Repro scripts for question programs: torch's ShapeEnv driven directly, each question's
answer checked against its concrete answer (Note [question truth]).

The issue form makes the program's symbols and asks its questions with plain ShapeEnv calls,
prints every claim that is not the concrete answer, and, for an unsound claim (other values
its guards accept where the claim is false, `case.alt_values`), evaluates the guards and
asserts under those values by hand. A metamorphic finding runs the program twice (a fresh
ShapeEnv, or with a redundant statically_known_true before every question) and compares the
answers. check.py is the full harness (templates/questions_check.py), which also runs the
slow-path configs through shapefuzz's own torch patches."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.cases.corpus import IssueCut
from shapefuzz.oracles.base import Compares
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.oracles.truth import NO_GUARD_MODES
from shapefuzz.program import Ref, _refs
from shapefuzz.program.metamorphic import ask_map, redundant
from shapefuzz.program.questions import FALLBACK, QProgram, truth
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, choose, register_writer, template_of
from shapefuzz.repro.reduce import question_cut
from shapefuzz.repro.templates import (
    questions_check,
    questions_dde,
    questions_issue,
    questions_runs,
)
from shapefuzz.systems.qreplay import with_values

__all__ = ["HISTORY_WRITER", "WRITER", "check", "component_cut", "history_issue", "issue", "issue_cuts", "line_limit", "program_lines", "reduction", "z3_names"]

_MODES = {"bool": "bool({c})", "guard_or_false": "guard_or_false({c})", "guard_or_true": "guard_or_true({c})",
          "statically_known_true": "statically_known_true({c})",
          "statically_known_false": "not statically_known_false({c})",  # Note [statically_known_false]
          "size_oblivious": "guard_size_oblivious({c})"}


#: the modes that fall back, each call wrapped so that a data-dependent error from it exits 1
#: (Note [guard-free questions] in oracles/truth.py; the issue form of a dde-in-guard-free finding)
_GUARD_FREE = {**_MODES, **{m: f"guard_free(lambda: {call})" for m, call in _MODES.items()
                            if FALLBACK[m] is not None}}
#: statically_known_true / _false, each call wrapped so that a guard or an assert it adds exits 1
_NO_GUARD = {**_MODES, **{m: f"no_guard(lambda: {_MODES[m]})" for m in NO_GUARD_MODES}}
#: a finding's symptom -> the question calls of its issue form, and the helper they need
_WRAPPED = {"dde-in-guard-free": (_GUARD_FREE, "guard_free"), "guard-in-static": (_NO_GUARD, "no_guard")}


def line_limit(case) -> int:
    """Question programs have no public artifact: the ShapeEnv calls and the check are the form."""
    return 60


def _arg(x) -> str:
    return f"v{x.index}" if isinstance(x, Ref) else repr(int(x))


#: how a question line checks its answer: {q} index, {ask} the call, {fallback}, {want}
CLAIM = "claim({q}, c, {ask}, {fallback!r}, {want!r})"
RECORD = "ask({q}, c, {ask}, {fallback!r})"
ANSWER = "answer({q}, c, {ask}, {fallback!r}, {want!r})"


def program_lines(p: QProgram, backed: str = "backed", question: str = CLAIM,
                  stop_after_last_ask: bool = False, check: str = "torch._check",
                  modes: dict[str, str] = _MODES) -> list[str]:
    """The program as ShapeEnv calls, one line per instruction (two for a question), up to the
    first false torch._check (the program is invalid past it). Every literal is an int and
    every operator a validated table key (QProgram.validate). A size-oblivious question assumes
    sizes >= 2 by design: it is asked, and its answer is not checked against the truth."""
    p.validate()
    t = truth(p)
    asks = p.asks()
    end = len(p.instrs) if t.failed_check is None else t.failed_check + 1
    if stop_after_last_ask and asks:
        end = min(end, asks[-1] + 1)
    lines, q = [], 0
    for ins, v in p.definitions()[:end]:
        a = ins.args
        if ins.op == "backed":
            lines.append(f"v{v} = {backed}({int(a[0])}, 'v{v}')")
        elif ins.op == "unbacked":
            lines.append(f"v{v} = unbacked()  # concretely {int(a[0])}")
        elif ins.op == "binop":
            fmt = {"max": "torch.sym_max({}, {})", "min": "torch.sym_min({}, {})"}.get(a[0], "{} " + a[0] + " {}")
            lines.append(f"v{v} = " + fmt.format(_arg(a[1]), _arg(a[2])))
        elif ins.op == "check":
            lines.append(f"{check}({_arg(a[1])} {a[0]} {_arg(a[2])})")
        elif ins.op == "check_is_size":
            lines.append(f"{check}_is_size({_arg(a[0])})")
        elif ins.op == "constrain_range":
            lines.append(f"constrain({_arg(a[0])}, {int(a[1])}, {int(a[2])})")
        else:
            mode = a[0]
            lines.append(f"c = {_arg(a[2])} {a[1]} {_arg(a[3])}")
            call = modes[mode].format(c="c")
            checked = mode != "size_oblivious" or question not in (CLAIM, ANSWER)
            lines.append(question.format(q=q, ask=call, fallback=FALLBACK[mode], want=t.answers[q])
                         if checked else call)
            q += 1
    return lines


def _value_lines(p: QProgram) -> list[str]:
    """A wrong value expression: every computed value checked against its concrete value at the
    leaves' values, as the truth oracle checks them."""
    t = truth(p)
    leaves = ", ".join(f"(v{v}, {int(t.values[v])})" for v in _leaves(p) if v < len(t.values))
    return [f"leaves = [{leaves}]  # the sizes and their values"] + [
        f"value({v}, v{v}, {int(t.values[v])}, leaves)" for ins, v in p.definitions()
        if ins.op == "binop" and v < len(t.values)]


def _leaves(p: QProgram) -> list[int]:
    return [v for ins, v in p.definitions() if ins.op in ("backed", "unbacked")]


def _settings(case) -> tuple[common.Settings, str]:
    """The config's settings, and the docstring line a slow-path config needs."""
    s = common.settings_of("torch-env", case.finding.config)
    note = ""
    if s.slow:
        note = (f"Config {case.finding.config} is torch with shapefuzz's slow-path patches "
                f"({', '.join(s.slow)}), which no torch switch turns on: this script applies them "
                "with shapefuzz's `applied` (its one shapefuzz import), as the campaign did.")
    return s, note


def _under_config(case, s: common.Settings, lines: list[str]) -> list[str]:
    """The ShapeEnv and the program's lines, under the slow-path patches a config needs."""
    body = [f"se = ShapeEnv({common.kwargs_text(s.env_kwargs)})", *lines]
    if not s.slow:
        return body
    text = common.block(questions_issue, "slow_config", fill={"PROGRAM": "\n".join(body),
                                                              "SLOW_CONFIG": repr(case.finding.config)})
    return text.rstrip("\n").split("\n")


def reduction(case) -> str:
    """How trial.py reduces the issue form (Note [issue form reduction]): a claim checked against
    the truth by the slice of one question, a spurious-DDE or history form by its finding's
    question's part of the program (issue_cuts); the two-run forms are not cut."""
    return "questions" if common.compares(case.finding) in (Compares.EAGER, Compares.PROOF, Compares.FRESH_ENV) else ""


def issue(case, torch_version: str = "") -> str:
    f = case.finding
    special = {Compares.RUNS: _metamorphic, Compares.PROOF: _spurious_dde}.get(common.compares(f))
    if special is not None:
        return special(case, torch_version)
    src = _claims(case, torch_version, True)  # the helpers' docstrings go where they do not fit
    return src if len(src.splitlines()) <= line_limit(case) else _claims(case, torch_version, False)


def _claims(case, torch_version: str, docs: bool) -> str:
    f, p = case.finding, case.program
    s, note = _settings(case)
    backed = "backed_oblivious" if s.fx.get("backed_size_oblivious") else "backed"
    alt = _alt_answers(case)
    values = f.symptom in ("wrong-value-expr", "unsound-value-expr")
    claims_only = f.symptom.startswith("wrong-") and alt is None and not values
    modes, helper = _WRAPPED.get(f.symptom, (_MODES, None))
    body = program_lines(p, backed, CLAIM if alt is not None else ANSWER, stop_after_last_ask=claims_only,
                         modes=modes)
    body += _value_lines(p) if values and alt is None else []
    if alt is not None:
        pairs = ", ".join(f"(v{v}, {int(x)})" for v, x in zip(_leaves(p), case.alt_values))
        call = f"replay([{pairs}], {alt!r})"
        body += [f"{call}  # the other values, and the concrete answers there"] if not values else [
            f"fits = {call}  # the other values, and whether they fit every guard",
            *common.block(questions_issue, "values_if_fit", fill={"VALUES": "\n".join(_value_lines(_with_alt(case)))})
            .rstrip("\n").split("\n")]
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)),
             "wrong, claims = [], []  # what is not the concrete answer; (question, answer) of every claim\n"
             if alt is not None else "wrong = []  # the answers that are not the concrete answer\n",
             common.function(questions_issue, backed, docs),
             *([common.function(questions_issue, "unbacked", docs)] if any("unbacked()" in x for x in body) else []),
             *_constrain_helper(body, docs),
             *([common.function(questions_issue, helper, docs)] if helper else []),
             common.function(questions_issue, "claim" if alt is not None else "answer", docs),
             *([common.function(questions_issue, "value", docs)] if values else []),
             *([common.function(questions_issue, "replay", docs)] if alt is not None else []),
             common.block(questions_issue, "run", "\n".join(_under_config(case, s, body)))]
    lines = (common.safe(f.detail.split("\n")[0], 400),) + ((note,) if note else ())
    return common.script(common.doc(case, torch_version, lines), common.imports_of(questions_issue), parts)


def _constrain_helper(lines: list[str], docs: bool = True) -> list[str]:
    return [common.function(questions_issue, "constrain", docs)] if any("constrain(" in x for x in lines) else []


def _with_alt(case) -> QProgram:
    return with_values(case.program, tuple(int(x) for x in case.alt_values))


def _alt_answers(case) -> list[bool] | None:
    """The concrete answers under the finding's other values, when they make a valid program."""
    if case.alt_values is None:
        return None
    t = truth(with_values(case.program, tuple(int(x) for x in case.alt_values)))
    return list(t.answers) if t.failed_check is None else None


def _metamorphic(case, torch_version: str) -> str:
    """Two runs of the program (fresh: the same program in a new ShapeEnv; redundant: with a
    statically_known_true before every question) and their answers compared."""
    f, p = case.finding, case.program
    s, note = _settings(case)
    backed = "backed_oblivious" if s.fx.get("backed_size_oblivious") else "backed"
    label = "redundant" if f.symptom == "redundant" else "fresh"
    runs = [("program", p)] + ([("with_redundant_questions", redundant(p))] if label == "redundant" else [])
    funcs = [common.function(questions_issue, name, fill={
        "PROGRAM": "\n".join(_under_config(case, s, program_lines(q, backed, RECORD)))}) for name, q in runs]
    mapping = ask_map(p) if label == "redundant" else list(range(len(p.asks())))
    second = runs[-1][0]
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)), "answers = []  # per run: (answer, is it a claim) per question\n",
             common.function(questions_issue, backed),
             *([common.function(questions_issue, "unbacked")] if any(i.op == "unbacked" for i in p.instrs) else []),
             *_constrain_helper(program_lines(p, backed, RECORD)),
             common.function(questions_issue, "ask"), *funcs,
             f"first, second, kind, mapping = program, {second}, {label!r}, {mapping!r}\n",  # the template's names
             common.block(questions_issue, "two_runs")]
    lines = (common.safe(f.detail.split("\n")[0], 400),) + ((note,) if note else ())
    return common.script(common.doc(case, torch_version, lines), common.imports_of(questions_issue), parts)


# ---- spurious DDE and history: the program up to one question ------------------------------------
QUIET = "{ask}"  # an earlier question, asked for its effect on the env
EARLIER = "earlier({q}, lambda: {ask})"  # history: an earlier question, asked or replaced by its facts


def _upto(p: QProgram, k: int) -> QProgram:
    """The program up to and including its question k (the finding's question)."""
    return QProgram(p.instrs[: p.asks()[k] + 1])


def _finding_question(case) -> int:
    """The finding's question in the program shown: its replay_index, or in a cut program (which
    ends at that question, Note [issue form reduction]) the last question."""
    return min(case.finding.replay_index, len(case.program.asks()) - 1)


def _backed_name(s: common.Settings) -> str:
    return "backed_oblivious" if s.fx.get("backed_size_oblivious") else "backed"


def _leaf_helpers(s: common.Settings, lines: list[str], constrain=questions_issue) -> list[str]:
    """backed / unbacked / constrain (that module's), each only where the program's lines call it."""
    import re

    text = "\n".join(lines)
    used = [(questions_issue, n) for n in (_backed_name(s), "unbacked")] + [(constrain, "constrain")]
    return [common.function(m, n, docstring=m is questions_dde) for m, n in used if re.search(rf"\b{n}\(", text)]


#: sympy functions (questions_dde.OPS keys) a program's operators can make in torch's expressions
#: and facts: the relations and Add/Mul always (sympy's canonical forms), the rest per operator
_Z3_ALWAYS = ("Add", "Mul", "Equality", "Unequality", "StrictLessThan", "LessThan", "StrictGreaterThan",
              "GreaterThan", "And", "Or", "Not")
_Z3_BY_OP = {"*": ("Pow", "PowByNatural"), "//": ("FloorDiv", "CleanDiv"), "%": ("Mod", "PythonMod"),
             "max": ("Max",), "min": ("Min",), "**": ("Pow", "PowByNatural")}


def z3_names(p: QProgram) -> list[str]:
    ops = {i.args[0] for i in p.instrs if i.op == "binop"}
    return [*_Z3_ALWAYS, *(n for op in sorted(ops) for n in _Z3_BY_OP.get(op, ()))]


def _z3_table(names: list[str]) -> str:
    """`Z3 = {...}`: the entries of questions_dde.OPS named, several to a line."""
    import ast

    text = Path(questions_dde.__file__).read_text()
    node = next(n for n in common.parse(text).body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "OPS")
    entries = [f"{ast.get_source_segment(text, k)}: {ast.get_source_segment(text, v)}"
               for k, v in zip(node.value.keys, node.value.values) if ast.literal_eval(k) in names]
    lines = [""]
    for e in entries:
        if lines[-1] and len(lines[-1]) + len(e) > 96:
            lines.append("")
        lines[-1] += ("" if not lines[-1] else " ") + e + ","
    return "Z3 = {  # sympy -> z3 for the functions this program can make\n" + \
        "".join(f"    {x}\n" for x in lines) + "}\n"


def _spurious_dde(case, torch_version: str) -> str:
    """The program up to the question that raises (through its public call), then z3 on what the
    program told torch (Note [facts torch is given]): exit 1 while the DDE is raised and z3
    decides its expression."""
    f = case.finding
    s, note = _settings(case)
    shown = _upto(case.program, _finding_question(case))
    body = program_lines(shown, _backed_name(s), QUIET)
    low = 0 if s.fx.get("backed_size_oblivious") or s.env_kwargs.get("specialize_zero_one") is False else 2
    names = z3_names(shown)
    divides = any(n in names for n in ("FloorDiv", "Mod"))
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)),
             f"facts, side, low = [], [], {low}  # facts the program states; divisors != 0; sizes >= low\n",
             *_leaf_helpers(s, body, questions_dde),
             *([common.function(questions_dde, "div", docstring=False)] if divides else []),
             _z3_table(names), common.function(questions_dde, "to_z3", docstring=False),
             common.block(questions_dde, "dde_proof", "\n".join(_under_config(case, s, body)))]
    lines = (*_detail_lines(f.detail, 3), *((note,) if note else ()))
    return common.script(common.doc(case, torch_version, lines),
                         [*common.imports_of(questions_dde), *common.imports_of(questions_issue)], parts)


def _detail_lines(detail: str, n: int) -> tuple[str, ...]:
    """The finding's detail as docstring lines (its own line breaks kept, at most n lines)."""
    return tuple(common.safe(x, 300) for x in str(detail).split("\n")[:n] if x.strip())


def history_issue(case, torch_version: str = "", form: ReproForm | None = None) -> str:
    """The history oracle's form on question programs (Note [repro forms]; its value: QUESTION,
    the finding's question in the program shown): the program written once, run in two
    ShapeEnvs: live (every question asked) and fresh (an earlier question's guards and asserts in
    its place, Note [history replay]); the finding's question compared."""
    f, questions_history = case.finding, template_of(form)
    s, note = _settings(case)
    q = _upto(case.program, form.values(case)["QUESTION"])
    mode = q.instrs[-1].args[0]
    lines = program_lines(q, _backed_name(s), EARLIER)
    lines[-1] = f"answer = answer_of(lambda: {_MODES[mode].format(c='c')}, c, {FALLBACK[mode]!r})  # the finding's question"
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)),
             "added = []  # (guards, asserts) each earlier question added in the live env\n",
             *_leaf_helpers(s, lines),
             *[common.function(questions_history, n) for n in ("asserts", "asked", "facts_of", "answer_of")],
             common.function(questions_history, "program", fill={"PROGRAM": "\n".join(_under_config(case, s, lines))}),
             common.block(questions_history, "compare")]
    doc = (*_detail_lines(f.detail, 2), *((note,) if note else ()))
    return common.script(common.doc(case, torch_version, doc),
                         [*common.imports_of(questions_history), *common.imports_of(questions_issue)], parts)


def issue_cuts(case) -> list | None:
    """The cuts trial.py tries on a spurious-DDE or history form (Note [issue form reduction]):
    the part of the program up to the finding's question that shares values (or, for backed
    sizes, a hint: duck sizing) with it, earlier questions included (their guards are facts, and
    a history finding is about them); for a DDE also the plain slice of the question. None: the
    family's default (one question's slice, for each question)."""
    if common.compares(case.finding) not in (Compares.PROOF, Compares.FRESH_ENV):
        return None
    k = _finding_question(case)
    cuts = [component_cut(case.program, k)]
    return cuts + ([question_cut(case.program, k)] if common.compares(case.finding) == Compares.PROOF else [])


def component_cut(p: QProgram, k: int):
    """The instructions up to question k connected to it: through values they read or define,
    and backed sizes of the same hint (which torch may give one symbol)."""
    pos, parent = p.asks()[k], {}

    def root(v):
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    groups = []
    for ins, v in p.definitions()[: pos + 1]:
        vals = [r.index for r in _refs(ins.args)] + ([v] if v is not None else [])
        if ins.op == "backed":
            vals.append(("hint", int(ins.args[0])))
        for a in vals[1:]:
            parent[root(a)] = root(vals[0])
        groups.append(vals)
    want = root(groups[pos][0]) if groups[pos] else None
    return IssueCut(tuple(at for at, vals in enumerate(groups) if at == pos or (vals and root(vals[0]) == want)))


# ---- check.py: the full harness ------------------------------------------------------------------


def check(case, torch_version: str = "") -> str:
    """The full harness: every claim checked (and under the finding's other values), or the two
    runs of a metamorphic finding compared; slow-path configs under shapefuzz's patches."""
    f, p = case.finding, case.program
    if common.compares(f) in (Compares.PROOF, Compares.FRESH_ENV):  # the issue form is the whole check
        return choose(case).issue(case, torch_version)  # (the history oracle's form, Note [repro forms])
    s, _ = _settings(case)
    config = f.config if s.slow or s.env_kwargs or s.fx else ""
    if s.slow and not all(ch.isalnum() or ch in "-=:+_" for ch in config):
        raise ValueError(f"config name {config!r} is not a plain config name")
    imports, code = common.harness(questions_check)
    data = [*common.fx_lines(common.fx_switches(case, s.fx), "fxx"),
            f"ENV_KWARGS = {s.env_kwargs!r}\n", f"SLOW_CONFIG = {config if s.slow else ''!r}\n",
            "se = None\nwrong, claims, answers, leaves = [], [], [], []\n\n", code, "\n"]
    if common.compares(f) == Compares.RUNS:
        label = "redundant" if f.symptom == "redundant" else "fresh"
        second = redundant(p) if label == "redundant" else p
        mapping = ask_map(p) if label == "redundant" else list(range(len(p.asks())))
        data += [common.bindings({"KIND": label, "MAPPING": mapping}), "\n", _main("main", p), _main("main2", second),
                 common.block(questions_runs, "metamorphic")]
    else:
        tail = []
        alt = _alt_answers(case)
        if alt is not None:
            tail = [f"replay({[int(x) for x in case.alt_values]!r}, {alt!r})"]
        data += [_main("main", p, tail), common.block(questions_runs, "truth")]
    return common.script(common.doc(case, torch_version, signature=True),
                         [*imports, *common.imports_of(questions_runs)], data, banner=False)


def _main(name: str, p: QProgram, tail: list[str] = ()) -> str:
    """main / main2 of check.py: the program in a ShapeEnv of the given settings."""
    return common.function(questions_runs, name, fill={"PROGRAM": "\n".join(program_lines(p) + list(tail))}) + "\n\n"


WRITER = register_writer(Writer("questions", issue, check, line_limit, reduction, issue_cuts))  # Note [repro forms]
#: the history oracle's form on question programs
HISTORY_WRITER = register_writer(Writer("fresh-env-questions", history_issue, None, lambda case, form=None: 60,
                                        reduction, issue_cuts))

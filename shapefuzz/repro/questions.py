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

from shapefuzz.program import Ref
from shapefuzz.program.questions import FALLBACK, QProgram, truth
from shapefuzz.repro import common
from shapefuzz.repro.templates import questions_check, questions_issue

__all__ = ["check", "issue", "line_limit", "program_lines"]

_MODES = {"bool": "bool({c})", "guard_or_false": "guard_or_false({c})", "guard_or_true": "guard_or_true({c})",
          "statically_known_true": "statically_known_true({c})", "size_oblivious": "guard_size_oblivious({c})"}


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
                  stop_after_last_ask: bool = False) -> list[str]:
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
            lines.append(f"torch._check({_arg(a[1])} {a[0]} {_arg(a[2])})")
        else:
            mode = a[0]
            lines.append(f"c = {_arg(a[2])} {a[1]} {_arg(a[3])}")
            call = _MODES[mode].format(c="c")
            checked = mode != "size_oblivious" or question == RECORD
            lines.append(question.format(q=q, ask=call, fallback=FALLBACK[mode], want=t.answers[q])
                         if checked else call)
            q += 1
    return lines


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
    config = case.finding.config
    if not all(ch.isalnum() or ch in "-=:+_" for ch in config):
        raise ValueError(f"config name {config!r} is not a plain config name")
    return [f"with applied({config!r}):  # shapefuzz's slow-path patches of torch", *("    " + x for x in body)]


def issue(case, torch_version: str = "") -> str:
    f, p = case.finding, case.program
    if common.compares(f) == "runs":
        return _metamorphic(case, torch_version)
    s, note = _settings(case)
    backed = "backed_oblivious" if s.fx.get("backed_size_oblivious") else "backed"
    alt = _alt_answers(case)
    claims_only = f.kind.startswith("wrong-") and alt is None
    body = program_lines(p, backed, CLAIM if alt is not None else ANSWER, stop_after_last_ask=claims_only)
    if alt is not None:
        pairs = ", ".join(f"(v{v}, {int(x)})" for v, x in zip(_leaves(p), case.alt_values))
        body.append(f"replay([{pairs}], {alt!r})  # the other values, and the concrete answers there")
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)),
             "wrong, claims = [], []  # what is not the concrete answer; (question, answer) of every claim\n"
             if alt is not None else "wrong = []  # the answers that are not the concrete answer\n",
             common.function(questions_issue, backed),
             *([common.function(questions_issue, "unbacked")] if any("unbacked()" in x for x in body) else []),
             common.function(questions_issue, "claim" if alt is not None else "answer"),
             *([common.function(questions_issue, "replay")] if alt is not None else []),
             common.block(questions_issue, "run", "\n".join(_under_config(case, s, body)))]
    lines = (common.safe(f.detail.split("\n")[0], 400),) + ((note,) if note else ())
    return common.script(common.doc(case, torch_version, lines), _imports(s), parts)


def _alt_answers(case) -> list[bool] | None:
    """The concrete answers under the finding's other values, when they make a valid program."""
    if case.alt_values is None:
        return None
    from shapefuzz.systems.qreplay import with_values

    t = truth(with_values(case.program, tuple(int(x) for x in case.alt_values)))
    return list(t.answers) if t.failed_check is None else None


def _imports(s: common.Settings) -> list[str]:
    slow = ["from shapefuzz.systems.torch_toggles import applied"] if s.slow else []
    return ["import sys", *common.imports_of(questions_issue), *slow]


def _metamorphic(case, torch_version: str) -> str:
    """Two runs of the program (fresh: the same program in a new ShapeEnv; redundant: with a
    statically_known_true before every question) and their answers compared."""
    from shapefuzz.program.metamorphic import ask_map, redundant

    f, p = case.finding, case.program
    s, note = _settings(case)
    backed = "backed_oblivious" if s.fx.get("backed_size_oblivious") else "backed"
    kind = "redundant" if f.kind == "redundant" else "fresh"
    runs = [("program", p)] + ([("with_redundant_questions", redundant(p))] if kind == "redundant" else [])
    funcs = [f"def {name}():\n    global se\n"
             + "".join(f"    {x}\n" for x in _under_config(case, s, program_lines(q, backed, RECORD)))
             for name, q in runs]
    mapping = ask_map(p) if kind == "redundant" else list(range(len(p.asks())))
    second = runs[-1][0]
    parts = [*common.fx_lines(common.fx_switches(case, s.fx)), "answers = []  # per run: (answer, is it a claim) per question\n",
             common.function(questions_issue, backed),
             *([common.function(questions_issue, "unbacked")] if any(i.op == "unbacked" for i in p.instrs) else []),
             common.function(questions_issue, "ask"), *funcs,
             f"first, second, kind, mapping = program, {second}, {kind!r}, {mapping!r}\n",
             common.block(questions_issue, "two_runs")]
    lines = (common.safe(f.detail.split("\n")[0], 400),) + ((note,) if note else ())
    return common.script(common.doc(case, torch_version, lines), _imports(s), parts)


# ---- check.py: the full harness ------------------------------------------------------------------


def check(case, torch_version: str = "") -> str:
    """The full harness: every claim checked (and under the finding's other values), or the two
    runs of a metamorphic finding compared; slow-path configs under shapefuzz's patches."""
    from shapefuzz.program.metamorphic import ask_map, redundant

    f, p = case.finding, case.program
    s, _ = _settings(case)
    config = f.config if s.slow or s.env_kwargs or s.fx else ""
    if s.slow and not all(ch.isalnum() or ch in "-=:+_" for ch in config):
        raise ValueError(f"config name {config!r} is not a plain config name")
    imports, code = common.harness(questions_check)
    data = [*common.fx_lines(common.fx_switches(case, s.fx), "fxx"),
            f"ENV_KWARGS = {s.env_kwargs!r}\n", f"SLOW_CONFIG = {config if s.slow else ''!r}\n",
            "se = None\nwrong, claims, answers, leaves = [], [], [], []\n\n", code, "\n"]
    if common.compares(f) == "runs":
        kind = "redundant" if f.kind == "redundant" else "fresh"
        second = redundant(p) if kind == "redundant" else p
        mapping = ask_map(p) if kind == "redundant" else list(range(len(p.asks())))
        data += [_main("main", p), _main("main2", second),
                 f"if __name__ == \"__main__\":\n    sys.exit(metamorphic_main(main, main2, {kind!r}, {mapping!r}))\n"]
    else:
        tail = []
        alt = _alt_answers(case)
        if alt is not None:
            tail = [f"replay({[int(x) for x in case.alt_values]!r}, {alt!r})"]
        data += [_main("main", p, tail), "if __name__ == \"__main__\":\n    sys.exit(truth_main(main))\n"]
    return common.script(common.doc(case, torch_version, signature=True), ["import sys", *imports], data,
                         banner=False)


def _main(name: str, p: QProgram, tail: list[str] = ()) -> str:
    body = program_lines(p) + list(tail)
    return (f"def {name}(env_kwargs):\n    global se\n    se = ShapeEnv(**env_kwargs)\n"
            + "".join(f"    {x}\n" for x in body) + "\n\n")

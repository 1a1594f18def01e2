"""History replays of a question program (DESIGN oracle 10; the oracle is
shapefuzz.oracles.history).

Note [history replay]: the answer to a question may depend on the facts known when it is asked,
never on which questions were asked before. So after a live run, each question is asked again
in a fresh ShapeEnv (same settings, same config patches) that receives the same facts in the same
order: every instruction before the question except the earlier questions, whose only lasting
effect is replayed instead: the guards and deferred asserts each of them added (a guard is a
fact the artifact checks; `evaluate_expr` records it again, `guard_or_defer_runtime_assert` an
assert). Symbols come out with the same names (backed: hashed from the same sources; unbacked:
u0, u1 ... in the same order), so recorded expressions mean the same in both envs.

Only the questions where the live run could have been worse are replayed: a fallback, the
question that raised a data-dependent error, and size-oblivious claims (which the truth oracle
does not check); never the first question, which has no earlier question to depend on. The
replays make a torch-env observation about 1.4x as long (300 generated programs, loaded machine). A claim in a checked mode that the fresh env contradicts is wrong in one of
the two runs, and the truth oracle already judges both kinds of run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shapefuzz.program.questions import COMPARE, QProgram
from shapefuzz.systems.common import classify
from shapefuzz.systems.evidence.history import HistoryEvidence, HistoryRecord
from shapefuzz.systems.observation import by_position

__all__ = ["Live", "replay"]


@by_position
@dataclass(frozen=True, slots=True)
class Live:
    """What a live run said: (expr, answer, how) per question answered, the (guards, asserts)
    each question added, and the instruction that raised (None: none did)."""

    decisions: tuple[tuple[str, str, str], ...]
    ask_facts: tuple[tuple[list, list], ...]
    stopped: int | None


def _wanted(program: QProgram, live: Live) -> list[tuple[int, int]]:
    """(question index, instruction position) of the questions to replay."""
    out = []
    for k, pos in enumerate(program.asks()):
        if k == 0:
            continue  # no earlier question: the fresh env would be the live one, step for step
        if k < len(live.decisions):
            how, mode = live.decisions[k][2], program.instrs[pos].args[0]
            if how == "fallback" or (mode == "size_oblivious" and how != "fallback"):
                out.append((k, pos))
        elif pos == live.stopped:
            out.append((k, pos))
    return out


def replay(program: QProgram, live: Live, fresh_run: Callable[[], Any]) -> HistoryEvidence:
    """The history oracle's evidence: one HistoryRecord per replayed question (Note [history
    replay]). `fresh_run()` makes a
    torch-env run on a new ShapeEnv (its step / ask / raw, as shapefuzz.systems.torch_env's)."""
    out = []
    for k, pos in _wanted(program, live):
        run = fresh_run()
        got, why = _ask_fresh(run, program, live, pos)
        d = live.decisions[k] if k < len(live.decisions) else None
        expr = d[0] if d else (str(got[2]) if got else "")
        out.append(HistoryRecord(k, expr, (d[1], d[2]) if d else ("", "dde"),
                                 got[:2] if got else ("", "error" if why else "dde"), why))
    return HistoryEvidence(tuple(out))


def _ask_fresh(run, program: QProgram, live: Live, pos: int):
    """((answer, how, expr) or None, why): question `pos` in the fresh run."""
    q = 0
    try:
        for ins in program.instrs[:pos]:
            if ins.op != "ask":
                run.step(ins)
                continue
            guards, asserts = live.ask_facts[q] if q < len(live.ask_facts) else ([], [])
            for g in guards:
                run.se.evaluate_expr(g)
            for a in asserts:
                run.se.guard_or_defer_runtime_assert(a, "history replay")
            q += 1
    except Exception as e:  # the facts alone fail: nothing to compare
        return None, f"{type(e).__name__}: {str(e)[:200]}"
    ins = program.instrs[pos]
    try:
        run.ask(ins.args[0], COMPARE[ins.args[1]](run.arg(ins.args[2]), run.arg(ins.args[3])))
    except Exception as e:
        status = classify(e).status
        return (None, "") if status == "dde" else (None, f"{type(e).__name__}: {str(e)[:200]}")
    e, a, how = run.raw[-1]
    return (str(a), how, e), ""

"""Oracle 10, history independence [medium]: a question asked in a fresh ShapeEnv holding the
same facts (and none of the earlier questions) must not get a sharper answer than the live run
gave it. The system replays the questions (question programs: Note [history replay] in
shapefuzz.systems.question_history; make_fx / export traces, every fallback and the DDE they met: Note
[tensor history replay] in shapefuzz.systems.tensor_history); this oracle compares: a finding when the fresh env claims (an answer that is not a fallback, no
data-dependent error) where the live run raised one, or fell back to the other answer, or
claimed the other answer. The other way round (live sharper than fresh) is no finding: an answer may use any
fact, and the live run's replayed guards are facts the fresh env got too. A fresh claim that is
not the concrete answer is no sharper answer either (a wrong claim is the truth oracle's class)."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.buckets import expr_class, one_per_bucket, valid_until
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.kinds import kind_of
from shapefuzz.program.questions import truth
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.history import HistoryEvidence, HistoryRecord
from shapefuzz.systems.observation import Observation

__all__ = ["across_configs", "history_findings", "legacy_evidence", "records", "stale", "tensor_findings"]

ORACLE = "history"
_CLAIMS = ("static", "guard", "assert")


def stale(live: tuple[str, str], fresh: tuple[str, str]) -> str:
    """The symptom ('stale-fallback', 'stale-dde', 'different-claim') or ''. Only a difference
    a caller sees counts: a fresh claim that equals the live fallback's value (statically_known_true
    False both times, once proved and once not) answers the caller alike."""
    if fresh[1] not in _CLAIMS:
        return ""
    if live[1] == "dde":
        return "stale-dde"
    if live[0] == fresh[0]:
        return ""
    return "stale-fallback" if live[1] == "fallback" else "different-claim"


def across_configs(program, observations, eager: Observation | None = None) -> list[Finding]:
    """One finding per bug, not per config: a stale answer every config shares is reported
    under the default config (or the first config that shows it); a config-specific one under
    its own config (Note [signature]: the config delta stays in the signature). A tensor
    program is judged only when eager runs it (its checks hold, so the facts are true)."""
    if kind_of(program).has_eager and (eager is None or eager.outcome.status != "ok"):
        return []
    judge = tensor_findings if kind_of(program).has_eager else history_findings
    return one_per_bucket([f for obs in observations for f in judge(program, obs)])


def records(obs: Observation) -> tuple[HistoryRecord, ...]:
    """The replayed questions the system recorded on `obs` (Note [typed evidence])."""
    ev = of(obs, HistoryEvidence)
    return ev.records if ev is not None else ()


def tensor_findings(program, obs: Observation) -> list[Finding]:
    """A tensor trace's replays (Note [tensor history replay] in shapefuzz.systems.tensor_history):
    the fresh claim must also be the concrete answer at the run's values (a size-oblivious one
    assumes sizes >= 2 by design, and is not)."""
    for r in records(obs):
        symptom = stale(r.live, r.fresh)
        if not symptom or not _concretely(r):
            continue
        live = "a data-dependent error" if r.live[1] == "dde" else f"{r.live[0]} ({r.live[1]})"
        detail = (f"{r.mode}({r.expr}) in the trace: live ShapeEnv {live}; a fresh ShapeEnv with "
                  f"the same symbols, ranges, guards and asserts and no earlier question answers "
                  f"{r.fresh[0]} ({r.fresh[1]}); at the run's values it is {r.concrete or '?'}")
        return [Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, symptom,
                        f"{obs.system} ({obs.config}): {symptom} on {r.mode}", detail,
                        signature(ORACLE, symptom, obs, r.mode, shape=expr_class(r.expr)), r.question,
                        evidence=HistoryEvidence((r,)))]
    return []


def _concretely(r) -> bool:
    """The fresh claim is the answer at the run's values. Not checked for a size-oblivious one
    (it assumes sizes >= 2 by design), nor for a DDE whose values the trace never bound (export
    runs the program under torch.compiler: its unbacked values are not recorded); the claim then
    stands on the facts alone, which eager showed true (the program is valid)."""
    if r.mode == "size_oblivious" or (not r.concrete and r.live[1] == "dde"):
        return True
    return r.fresh[0] == r.concrete


def history_findings(program, obs: Observation) -> list[Finding]:
    answers = truth(program).answers
    for r in records(obs):
        symptom = stale(r.live, r.fresh)
        if not symptom or not valid_until(program, r.question):
            continue
        mode = program.instrs[program.asks()[r.question]].args[0]
        if mode != "size_oblivious" and r.fresh[0] != str(answers[r.question]):
            continue  # the fresh claim is wrong: not a sharper answer (the truth oracle's class)
        live = "a data-dependent error" if r.live[1] == "dde" else f"{r.live[0]} ({r.live[1]})"
        detail = (f"question {r.question}: {mode}({r.expr}): live run {live}; a fresh ShapeEnv with "
                  f"the same facts and no earlier question answers {r.fresh[0]} ({r.fresh[1]})")
        return [Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, symptom,
                        f"{obs.system} ({obs.config}): {symptom} on {mode}", detail,
                        signature(ORACLE, symptom, obs, mode, shape=expr_class(r.expr)), r.question,
                        evidence=HistoryEvidence((replace(r, mode=mode),)))]
    return []


def legacy_evidence(finding: Finding) -> HistoryEvidence | None:
    """Note [evidence of older case files]: a tensor history finding written before findings
    carried evidence named its question in its detail's last lines ('asked: MODE', 'expr: E',
    'live: L'); read them, once, where such a file is loaded. A question program's finding needs
    none (its form reads the program at the finding's question)."""
    lines = dict(x.split(": ", 1) for x in finding.detail.split("\n")[1:] if ": " in x)
    if "asked" not in lines:
        return None
    live = lines.get("live", "")
    return HistoryEvidence((HistoryRecord(finding.replay_index, lines.get("expr", ""),
                                          (live, "fallback" if live else "dde"), ("", ""), mode=lines["asked"]),))


def _traced_values(case) -> dict:
    """What the tensor form's script asks: the recorded question, its public call, the live answer."""
    ev = of(case.finding, HistoryEvidence)
    if ev is None or not ev.records:
        raise ValueError("a tensor history finding without its recorded question: re-run the campaign")
    r = ev.records[0]
    return {"EXPR": r.expr, "MODE": r.mode, "LIVE": r.live[0]}


def _question_values(case) -> dict:
    """The finding's question in the program shown: in a cut program (which ends at that
    question, Note [issue form reduction]) the last one."""
    return {"QUESTION": min(case.finding.replay_index, len(case.program.asks()) - 1)}


#: Note [repro forms]: a question program's history finding in two ShapeEnvs the program runs in;
#: a tensor program's traced by the finding's public call, then its recorded question asked again
#: in a fresh ShapeEnv given what the live one knew
FORMS = (ReproForm("history-questions", "shapefuzz.repro.templates.questions_history", _question_values,
                   lambda f: f.system == "torch-env", writer="fresh-env-questions", check=True),
         ReproForm("history-trace", "shapefuzz.repro.templates.traced_history", _traced_values,
                   lambda f: f.system != "torch-env", writer="fresh-env-trace", check=True))


def _no_input(finding: Finding, obs: Observation, kind: str) -> tuple:
    return None, None  # the program's own values show it


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.MEDIUM, "an answer may depend on the facts known when it is asked, never on which "
    "questions were asked before (a fresh ShapeEnv with the same facts must not answer sharper)",
    lambda c: across_configs(c.program, c.observations, c.eager), kinds=("questions", "tensors"), rank=55,
    replay_input=_no_input, compares=Compares.FRESH_ENV, evidence=HistoryEvidence,
    legacy_evidence=legacy_evidence, forms=FORMS))

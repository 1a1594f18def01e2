"""The issue form's reduction: the part of a case that repro.py shows.

Note [issue form reduction]: a campaign's program may be unshrunk (the shrink budget ran out) and
a compile finding's call sequence holds every call up to the one that showed it, so the issue
form can outgrow what fits in an issue. At confirmation (shapefuzz/repro/trial.py) it is reduced:
- the program to the backward slice of what the finding needs (`needed`): the instructions that
  define those values and, transitively, their arguments, plus the torch._check-like statements
  over kept values; inputs no kept instruction reads are dropped (`sub_program`). A trace error
  needs the instruction that raised (found as the shortest failing prefix), an output finding the
  outputs;
- a call sequence to the calls that still show the finding (each earlier call is dropped when the
  issue form without it still fails);
- a question program's spurious-DDE or history form to the instructions connected to the
  finding's question (shapefuzz/repro/questions.issue_cuts): earlier questions over connected
  values stay (their guards are facts; a history finding is about them).
A reduction is kept only when its issue form fails as the full one does (exit 1, the same BUG
line up to numbers) and then exits 1 standalone; otherwise repro.py is the full form. The result
is recorded on the case (`Case.issue_cut`), so regenerating repro.py from case.json gives the same
script. The slicing here is pure (no torch); trial.py runs the forms.
"""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.cases.corpus import IssueCut
from shapefuzz.program import Program, ProgramError, Ref, _refs
from shapefuzz.program.questions import FACT_OPS, QProgram

__all__ = ["apply_cut", "defined_by", "needed", "output_cut", "prefix_cut", "question_cut", "raise_cut",
           "sub_program", "sub_questions"]


def defined_by(program: Program) -> dict[int, int]:
    """value -> the position of the instruction that defines it (inputs are not in it)."""
    return {v: pos for pos, (_ins, defs) in enumerate(program.definitions()) for v in defs}


def needed(program: Program, targets, upto: int | None = None) -> tuple[int, ...]:
    """Positions of the instructions the values `targets` need (the backward slice over the
    program's data dependencies), and of the zero-output statements (torch._check ...) at or
    before `upto` whose arguments are all kept values: they add facts the kept code may rely on."""
    defs, want = defined_by(program), set(targets)
    keep: set[int] = set()
    for pos in range(len(program.instrs) - 1, -1, -1):
        ins = program.instrs[pos]
        if any(defs.get(v) == pos for v in want) and pos not in keep:
            keep.add(pos)
            want |= {r.index for r in _refs(ins.args)}
    kept_values = set(range(len(program.inputs))) | {v for v, pos in defs.items() if pos in keep}
    last = len(program.instrs) - 1 if upto is None else upto
    keep |= {pos for pos, ins in enumerate(program.instrs[: last + 1])
             if ins.n_out == 0 and {r.index for r in _refs(ins.args)} <= kept_values}
    return tuple(sorted(keep))


def sub_program(program: Program, keep, outputs) -> tuple[Program, tuple[int, ...]]:
    """(the program of the kept instructions returning `outputs`, the kept input positions):
    inputs no kept instruction reads are dropped and values renumbered in definition order."""
    keep = sorted(set(keep))
    read = {r.index for pos in keep for r in _refs(program.instrs[pos].args)} | set(outputs)
    inputs = tuple(k for k in range(len(program.inputs)) if k in read)
    new = {old: k for k, old in enumerate(inputs)}
    defs = program.definitions()
    for old in (v for pos in keep for v in defs[pos][1]):
        new[old] = len(new)
    instrs = tuple(replace(program.instrs[pos], args=_renumber(program.instrs[pos].args, new))
                   for pos in keep)
    outs = _renumber(tuple(Ref(v) for v in outputs), new)
    sub = Program(tuple(program.inputs[k] for k in inputs), instrs, tuple(r.index for r in outs))
    sub.types()  # a cut that leaves a value undefined is rejected (ProgramError), never written
    return sub, inputs


def _renumber(args, new: dict[int, int]):
    out = []
    for a in args:
        if isinstance(a, Ref) and a.index not in new:
            raise ProgramError(f"the cut drops v{a.index}, which a kept instruction reads")
        if isinstance(a, Ref):
            out.append(Ref(new[a.index]))
        else:
            out.append(_renumber(a, new) if isinstance(a, tuple) else a)
    return tuple(out)


# ---- the cuts a reduction tries ------------------------------------------------------------------


def prefix_cut(program: Program, last: int) -> IssueCut:
    """Instructions 0..last as they are, returning what `last` defines (a trace that raises at
    `last` raises on this prefix too)."""
    return IssueCut(tuple(range(last + 1)), program.definitions()[last][1])


def raise_cut(program: Program, pos: int) -> IssueCut:
    """The slice of instruction `pos` (the one a trace raised at): what it needs, and itself."""
    ins, defs = program.definitions()[pos]
    args = {r.index for r in _refs(ins.args)}
    keep = sorted(set(needed(program, args, upto=pos - 1)) | {pos})
    return IssueCut(tuple(keep), defs)


def output_cut(program: Program, outputs) -> IssueCut:
    """The slice of some of the program's outputs (dead code dropped)."""
    return IssueCut(needed(program, outputs), tuple(outputs))


def question_cut(program, k: int) -> IssueCut:
    """A question program's slice for its question k: what the question reads and, transitively,
    its arguments, plus the facts (checks, ranges) over kept values stated before it; the other
    questions (and their guards) are dropped."""
    pos = program.asks()[k]
    defs = {v: at for at, (_ins, v) in enumerate(program.definitions()) if v is not None}
    want, keep = {r.index for r in _refs(program.instrs[pos].args)}, {pos}
    for at in range(pos - 1, -1, -1):
        ins, v = program.definitions()[at]
        if v is not None and v in want:
            keep.add(at)
            want |= {r.index for r in _refs(ins.args)}
    kept = {v for v, at in defs.items() if at in keep}
    keep |= {at for at, ins in enumerate(program.instrs[:pos])
             if ins.op in FACT_OPS and {r.index for r in _refs(ins.args)} <= kept}
    return IssueCut(tuple(sorted(keep)))


def sub_questions(program, keep):
    """(the question program of the kept instructions, the kept values' old indices)."""
    keep = sorted(set(keep))
    defs = program.definitions()
    olds = [defs[at][1] for at in keep if defs[at][1] is not None]
    new = {old: k for k, old in enumerate(olds)}
    sub = QProgram(tuple(replace(program.instrs[at], args=_renumber(program.instrs[at].args, new))
                         for at in keep))
    sub.validate()
    return sub, tuple(olds)


def apply_cut(case):
    """(the case as its repro.py shows it, the call sequence it makes or None): the program cut
    down to `case.issue_cut` (replay inputs, forced branches and calls following it). A cut that
    does not make a well-typed program is ignored (repro.py is then the full form)."""
    cut = case.issue_cut
    if cut is None:
        return case, None
    if getattr(case.program, "kind", "") == "questions":
        return _apply_questions(case, cut), None
    calls = _calls(case, cut.calls)
    if cut.instrs is None:
        return replace(case, issue_cut=None), calls
    try:
        program, inputs = sub_program(case.program, cut.instrs, cut.outputs)
    except (ProgramError, IndexError):
        return replace(case, issue_cut=None), None
    position = {old: k for k, old in enumerate(sorted(set(cut.instrs)))}
    replay = None if case.replay_inputs is None else tuple(case.replay_inputs[k] for k in inputs)
    cut_case = replace(case, program=program, replay_inputs=replay, issue_cut=None,
                       fallback_branches=tuple(position[b] for b in case.fallback_branches if b in position))
    if calls is not None:
        calls = [tuple(c[k] for k in inputs) for c in calls]
    return cut_case, calls


def _apply_questions(case, cut):
    """The cut question program; the finding's other values follow its leaves."""
    try:
        program, olds = sub_questions(case.program, cut.instrs or ())
    except (ProgramError, IndexError):
        return replace(case, issue_cut=None)
    alt = case.alt_values
    if alt is not None:
        leaves = [v for ins, v in case.program.definitions() if ins.op in ("backed", "unbacked")]
        value = dict(zip(leaves, alt))
        alt = tuple(value[v] for v in olds if v in value)
    return replace(case, program=program, alt_values=alt, issue_cut=None)


def _calls(case, keep):
    """The kept calls of a compile finding's sequence (the full program's sequence: a cut
    program keeps its inputs' calls), or None when the sequence is not cut."""
    if keep is None or case.finding.system != "compile":
        return None
    from shapefuzz.systems.compile import call_sequence  # lazy: torch + Dynamo, compile only

    seq = call_sequence(case.program)[: max(case.finding.replay_index + 1, 0) + 1]
    return [seq[i] for i in sorted(set(keep)) if i < len(seq)] or None

"""Dead code of a tensor program: what a shrunk program still carries that nothing reads.

Note [pruning]: Hypothesis shrinks the choices a program was drawn from, so a shrunk program can
keep an input no instruction reads, or an instruction (a `branch`, a cond, an item()) whose
values reach no output: the generator drew it, later draws stopped using it, and deleting it
is not one of the choice-sequence edits Hypothesis tries. `pruned` deletes them: an instruction
stays when one of its values is read (transitively) by an output, or when it defines no value
(torch._check and its kin act on the ShapeEnv); an input stays when it is read or returned.
The campaign keeps the pruned program only when it still shows the finding (engine.py), since
a deleted item() or branch can change what torch decides about the rest."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shapefuzz.program import Instr, Program, Ref, _refs
from shapefuzz.program.kinds import kind_of

__all__ = ["candidates", "pruned"]


def pruned(p: Program) -> Program | None:
    """The program without its dead instructions and unused inputs, or None when it has none."""
    if kind_of(p).name != "tensors":
        return None
    defs = p.definitions()
    live = set(p.outputs)
    keep: list[bool] = [False] * len(defs)
    for k in range(len(defs) - 1, -1, -1):  # backwards: readers come after what they read
        ins, values = defs[k]
        if not values or live & set(values):
            keep[k] = True
            live |= {r.index for r in _refs(ins.args)}
    inputs = [k for k in range(len(p.inputs)) if k in live]
    if all(keep) and len(inputs) == len(p.inputs):
        return None
    old = inputs + [v for k, (_, values) in enumerate(defs) if keep[k] for v in values]
    new = {o: n for n, o in enumerate(old)}
    instrs = tuple(Instr(ins.op, _remap(ins.args, new), ins.n_out)
                   for k, (ins, _) in enumerate(defs) if keep[k])
    out = replace(p, inputs=tuple(p.inputs[k] for k in inputs), instrs=instrs,
                  outputs=tuple(new[o] for o in p.outputs))
    out.types()  # a pruned program is well-typed (raises ProgramError if this module is wrong)
    return out


def candidates(p: Program):
    """Smaller programs to try, best first: `p` pruned, then `p` without one of its outputs
    (pruned too), so an output the finding does not need goes with what computes it."""
    first = pruned(p)
    if first is not None:
        yield first
    if kind_of(p).name != "tensors" or len(p.outputs) < 2:
        return
    for k in range(len(p.outputs)):
        fewer = replace(p, outputs=p.outputs[:k] + p.outputs[k + 1:])
        yield pruned(fewer) or fewer


def _remap(args: Any, new: dict[int, int]) -> Any:
    if isinstance(args, Ref):
        return Ref(new[args.index])
    if isinstance(args, tuple):
        return tuple(_remap(a, new) for a in args)
    return args

"""TEST-ONLY: an op that aborts, hangs or eats memory while torch traces it (on fake tensors),
never in eager, so the campaign process (which runs ops eagerly while generating) and the
eager reference stay safe. It exists only where this module is imported: the reliability tests
pass it with `--plugin planted_ops` (PYTHONPATH=tests/reliability), so normal runs never see it.
"""

from __future__ import annotations

import os
import time

import hypothesis.strategies as st

from shapefuzz.ops.base import Op, expect_choice, expect_tensor, register
from shapefuzz.program import VType

ACTIONS = ("none", "abort", "hang", "oom", "wrong", "leak", "leak_tf")
#: what generation draws (the "none" also gives ordinary programs to run between failures); a test
#: picks the misbehaviours with PLANTED_ACTIONS (read by this test-only module, not by shapefuzz)
_CHOSEN = tuple(a for a in os.environ.get("PLANTED_ACTIONS", "abort,hang").split(",") if a in ACTIONS)
DRAWN = ("none",) + _CHOSEN


def _traced(x) -> bool:
    from torch._subclasses.fake_tensor import is_fake

    return is_fake(x)


def _misbehave(action: str) -> None:
    """"wrong" is handled by the caller: a wrong value, an ordinary finding. "leak" leaves torch
    changed after the job, as a restore that deletes a config entry did (Note [state guard])."""
    if action == "leak_tf":  # torch's own state left changed, as torch.cond's compile did
        import torch

        torch._C.DisableTorchFunction().__enter__()  # never exited
    if action == "leak":
        import torch.fx.experimental._config as fxx

        delattr(fxx, "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY")  # hides it in this process
    if action == "abort":
        os.abort()  # SIGABRT, as a failed C++ assertion in torch would
    elif action == "hang":
        while True:
            time.sleep(1)
    elif action == "oom":
        hog = []
        while True:  # touch 64 MB at a time until the worker's memory cap stops us
            hog.append(bytearray(64 << 20))


@register
class Planted(Op):
    name, family = "planted", "planted"
    weight = 4

    def out_types(self, args, n_out):
        x, action = args
        t = expect_tensor(x, "x")
        expect_choice(action, ACTIONS, "action")
        return (VType.tensor(t.dtype, t.rank),)

    def eager(self, args, n_out):
        x, action = args
        if _traced(x):
            _misbehave(action)
            if action == "wrong":
                return (x.clone() + 1,)
        return (x.clone(),)

    def source(self, args):
        return f"{args[0]}.clone()"

    def symbolic(self, args, n_out, s):
        return (s.tensor(args[0].shape, args[0].dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw)
        if x is not None:
            ctx.emit(self.name, (x, draw(st.sampled_from(DRAWN))))

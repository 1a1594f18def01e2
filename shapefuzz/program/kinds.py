"""Program kinds behind one protocol: tensor programs (shapefuzz.program) and question programs
(shapefuzz.program.questions).

Note [program kinds]: a kind says how its programs are read and written, judged (tensor
programs by an eager run, question programs by the truth they carry, Note [question truth]),
varied (fresh inputs for the replay oracles), and which extra observations a run adds. Code
outside this module asks the program's kind (`kind_of`) instead of testing its name, so a third
kind is one more `ProgramKind` here, and one more strategy in shapefuzz.strategies
(`programs_of_kind`): generation sits a layer above the programs it draws (Note [layers]).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shapefuzz.program import Program
from shapefuzz.program.metamorphic import echo_of, redundant
from shapefuzz.program.questions import QProgram, truth
from shapefuzz.program.variants import variants

__all__ = ["KINDS", "ProgramKind", "kind_of", "load_program"]


@dataclass(frozen=True, slots=True)
class ProgramKind:
    name: str
    #: eager runs the program first and is the ground truth (else the program carries its own)
    has_eager: bool
    load: Callable[[Any], Any]  # JSON object -> program (ProgramError on bad input)
    variants_json: Callable[[Any, int, int], str]  # (program, n, seed) -> a Job's variants
    valid: Callable[[Any, Any], bool]  # (program, eager observation) -> the program is valid
    #: (system, program, observation) -> the metamorphic oracle's Echo of each extra run of the
    #: program (recorded as its evidence where the job ends: systems/jobs.py)
    echoes: Callable[[Any, Any, Any], tuple] = lambda system, program, obs: ()
    has_replay_inputs: bool = True  # a case may hold an input to replay (tensor programs)
    #: the shapefuzz.repro module that writes its cases' scripts ("": the system's family)
    repro_family: str = ""


def kind_of(program: Any) -> ProgramKind:
    return KINDS[getattr(program, "kind", "tensors")]


def load_program(obj: Any):
    """A tensor program or a question program, by its "kind" (tensor programs have none)."""
    name = obj.get("kind", "tensors") if isinstance(obj, dict) else "tensors"
    return KINDS.get(name, KINDS["tensors"]).load(obj)


# ---- tensor programs ---------------------------------------------------------------------------
def _tensor_load(obj):
    return Program.from_json(obj)


def _tensor_variants(program, n: int, seed: int) -> str:
    import json

    return json.dumps([[{"name": s.name, "dtype": s.dtype, "shape": list(s.shape),
                         "dims": list(s.dims), "data": list(s.data)} for s in v]
                       for v in variants(program, n, seed)])


def _eager_ok(program, eager) -> bool:
    return eager is not None and eager.outcome.status == "ok"


# ---- question programs -------------------------------------------------------------------------
def _question_load(obj):
    return QProgram.from_json(obj)


def _no_variants(program, n: int, seed: int) -> str:
    return "[]"  # a question system draws its own other values (variants.question_variants)


def _truth_holds(program, eager) -> bool:
    return truth(program).failed_check is None


def _echoes(system, program, obs) -> tuple:
    """Metamorphic runs (shapefuzz.program.metamorphic), under the default config only: the same program
    again in a fresh env (with this process's global caches now warm), and with a redundant
    question before each one.

    Note [echo runs]: an echo is compared on its outcome, answers and values only (echo_of), so
    a system that can run a program without its evidence (`answers`: no z3 checks, no guard or
    history replays) runs the echoes that way. Through `observe` they cost 1.4-4x as much CPU
    (benchmarks/echo_runs_bench.py: torch-env 0.74-1.44 s against 0.36-0.58 s for 300 programs,
    ref 0.21-0.39 against 0.11), all of it evidence nobody read."""
    if obs.config != "default":
        return ()
    answers = getattr(system, "answers", None) or (lambda p, config: system.observe(p, config, []))
    fresh = answers(program, "default")
    again = answers(redundant(program), "default")
    return echo_of("fresh", fresh), echo_of("redundant", again)


KINDS: dict[str, ProgramKind] = {
    "tensors": ProgramKind("tensors", True, _tensor_load, _tensor_variants, _eager_ok),
    "questions": ProgramKind("questions", False, _question_load, _no_variants, _truth_holds,
                             _echoes, has_replay_inputs=False, repro_family="questions"),
}

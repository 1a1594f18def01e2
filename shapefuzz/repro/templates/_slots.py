"""The names a generated script defines before a template's code runs (Note [repro templates]):
declared for the linter and the type checker, imported by templates only under TYPE_CHECKING.
Nothing here exists at run time."""

from collections.abc import Callable
from typing import Any

import torch

# the program and its eager references
f: Callable[..., tuple]
f_ref: Callable[..., tuple]
REFS: list[Callable[..., tuple]]
# inputs: traced with, checked on, and a compile call sequence
traced_inputs: list[torch.Tensor]
check_inputs: list[torch.Tensor]
inputs: list[torch.Tensor]
CALLS: list[list[torch.Tensor]]
# what the finding recorded
DIMS: list[list[str]]
UNDEFINED: list[int]
CHECK: str
SYSTEM: str
ON_TRACED_INPUTS: bool
TARGET: int
SIDES: list[tuple[str, str]]
DECLARED: list[list[int]]  # the specialization oracle's form: the dims declared dynamic, per input
MAPPING: list[int]
# the finding's config
ENV_KWARGS: dict[str, Any]
FX_CONFIG: dict[str, Any]
DYNAMO_CONFIG: dict[str, Any]
STRICT: bool
DECOMPOSE: bool
DIM_KIND: str
SMALL_STATIC: bool
BACKEND: str
SETTINGS: Any
SETTINGS_VALUES: dict[str, Any]  # compile check.py: the config's settings, read as SETTINGS


# a tensor history finding (templates/traced_history.py): the question, its asker, the live answer
EXPR: str
ASK: Callable[[Any], Any]
LIVE: str
known_to: Callable[[Any], tuple]
fresh_answer: Callable[..., tuple[str, str]]


def TRACE() -> Any:  # a block's placeholder for the public call (Note [repro templates])
    raise NotImplementedError

# question programs: torch's ShapeEnv, and what the checks collected
se: Any
wrong: list[str]
claims: list[tuple[int, bool]]
answers: list
leaves: list
facts: list  # spurious-DDE repros: what the program told torch (sympy)
c: Any  # question repros: the condition of the last question asked
added: list  # history repros: the facts each earlier question added in the live run
answer: Any  # history repros: the finding's question's (answer, is it a claim), set by the program's lines
PROGRAM: Callable[[], None]  # a placeholder: the program's lines stand where it is called
VALUES: Callable[[], None]  # a placeholder: the value checks under the other values
fits: bool  # question repros: the other values fit every guard
truth_main: Callable[..., int]  # question check.py (templates/questions_check.py)
metamorphic_main: Callable[..., int]
side: list  # spurious-DDE repros: z3 side conditions (divisors != 0)
Z3: dict[str, Callable[..., Any]]  # spurious-DDE repros: sympy function name -> z3
SLOW_CONFIG: str
# front-end pairs
M: Any
dynamic_shapes: Any
dynamic_sizes: list
marked: list[tuple[int, int]]
sides: list
SIDES_DATA: list[tuple[str, str]]
# compile call sequences (check.py pastes shapefuzz/systems/graph_facts.py above its harness)
GraphLog: Any
facts_reject: Any
_mark: Any
_reusable: Any
_silent_specialization: Any
_stayed_static: Any
calls: list[list[torch.Tensor]]
refs: list[Callable[..., tuple]]
cf: Callable[..., tuple]
graphs: list
ran: list[tuple[int, int]]
call: int
undefined: set[int]
dims: list[tuple[int, int]]
# the forms that replay a case with shapefuzz (templates/shapefuzz_replay.py)
CASE_JSON: str
SOURCE_ROOT: str
# performance findings (shapefuzz/repro/scaling.py): the family and the rule, and the copied
# measuring functions
NS: tuple[int, ...]
SYMPY_CACHE_SIZE: str
ROUNDS: int
EXPECTED: float
MARGIN: float
TIME_FLOOR_S: float
SIZE_FLOOR: int
EXCESS_SHARE: float
KIND: str
trace_copies: Callable[..., tuple[float, int]]
hottest: Callable[..., str]
growth_order: Callable[..., float]
superlinear_kinds: Callable[..., list[str]]

"""check.py's runs of a question program (shapefuzz/repro/questions.py puts them below the
harness of templates/questions_check.py; Note [repro templates]): the program as a function of
the ShapeEnv's settings, once (its claims checked against the truth) or twice (a metamorphic
finding: the same program again, or with a redundant question before each)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from torch.fx.experimental.symbolic_shapes import ShapeEnv

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import (
        KIND,
        MAPPING,
        PROGRAM,
        metamorphic_main,
        truth_main,
    )


def main(env_kwargs):
    global se
    se = ShapeEnv(**env_kwargs)
    PROGRAM()


def main2(env_kwargs):
    global se
    se = ShapeEnv(**env_kwargs)
    PROGRAM()


def truth():
    if __name__ == "__main__":
        sys.exit(truth_main(main))


def metamorphic():
    if __name__ == "__main__":
        sys.exit(metamorphic_main(main, main2, KIND, MAPPING))

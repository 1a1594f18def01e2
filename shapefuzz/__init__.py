"""shapefuzz: a property-based differential fuzzer for symbolic shape systems.

Note [layers]: the subpackages follow the pipeline, strategies -> program -> systems ->
observations -> oracles -> findings -> cases -> reports, and each imports only the layers before
it (tests/cover/test_layers.py reads the imports from the source), with no import cycle at any
level, inside functions too (tests/cover/test_import_graph.py):

    ir.py            the types an op's type rule speaks (VType, ProgramError), below both:
    program/, ops/   what is run: program kinds (Note [program kinds]), interpreter, codegen
    strategies       shapefuzz.strategies (strategies/ beside this folder): programs drawn
                     from the ops, one strategy per program kind
    systems/         what runs it and what it said: jobs, Observation, prover, claims, patches
    oracles/         what is wrong: one registered Oracle per module (Note [oracle registry]),
                     Finding and its Signature
    cases/           findings on disk: case files, replay, promote, known upstream issues
    repro/           the scripts of a case: repro.py (issue form) and check.py
    report/          report.json / .md / .html
    campaign/        the budgeted search: engine, evaluation, workers, the fuzz command's run
    cli.py, pytest_plugin.py
"""

import os

__version__ = "0.1.0"
__all__ = ["SYMPY_CACHE_SIZE", "BadInput", "__version__"]

# Note [sympy cache]: torch's shape reasoning memoizes through sympy's global LRU caches, whose
# size sympy reads once, at its import, from SYMPY_CACHE_SIZE (default 1000 entries each). A
# program traced n times over (the performance oracle's family, Note [scaling family]) holds n
# times the expressions; past about 1000 the caches thrash and a linear shape system measures
# superlinear: unmodified torch 2.13.0 gave a confirmed performance finding (300 s default
# campaign, seed 2: growth order 1.52-1.79 over n = 2, 4, 8, with the garbage collector on or
# off), which at 5000 or 10000 entries grows with order 0.96-1.16, the program's real order.
# The oracle is there for the shape system's own growth (a pass accidentally quadratic in its
# symbols or guards), not for a fixed-size cache's miss rate, as timeit turns the garbage
# collector off. So every process that imports shapefuzz before sympy (the CLI, workers, A/B
# baselines, the tests) runs with 10000 entries unless the user set the variable; a performance
# finding's repro.py sets the same. It changes no answer, only speed (and a few MB a worker).
SYMPY_CACHE_SIZE = "10000"
os.environ.setdefault("SYMPY_CACHE_SIZE", SYMPY_CACHE_SIZE)


class BadInput(ValueError):
    """Bad usage or input (a flag, a case file, a saved state, a report folder ...): the root of
    every such error, which the CLI prints as one line and maps to exit 2. The message says what
    was wrong and what to do next."""

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

__version__ = "0.1.0"
__all__ = ["BadInput", "__version__"]


class BadInput(ValueError):
    """Bad usage or input (a flag, a case file, a saved state, a report folder ...): the root of
    every such error, which the CLI prints as one line and maps to exit 2. The message says what
    was wrong and what to do next."""

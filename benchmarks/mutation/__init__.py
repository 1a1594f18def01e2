"""Mutation score of shapefuzz's oracles (issue 30): mutants generated from the installed torch's
own shape code (mutants.py), applied as a sitecustomize on PYTHONPATH (apply.py, hook.py),
triaged (triage.py) and run through a default and an A/B campaign (bench.py). The command line
is benchmarks/mutation_bench.py.

This package lives outside shapefuzz/ on purpose: it measures the fuzzer from the outside, the
way a ShapeEnv developer would use it, through the `shapefuzz fuzz` command and the repro.py of
each finding, never through the library's internals (triage's line coverage excepted)."""

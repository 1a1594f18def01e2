"""sitecustomize.py of a shapefuzz mutant's patch folder (benchmarks/mutation/apply.py wrote it):
the folder's mutant.json names one function of torch that _shapefuzz_mutant replaces with its
mutated source when that module is imported. Remove the folder from PYTHONPATH to undo it."""

import _shapefuzz_mutant

_shapefuzz_mutant.install()
_shapefuzz_mutant.chain()

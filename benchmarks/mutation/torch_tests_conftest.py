"""Copy beside PyTorch's test/test_sympy_utils.py as conftest.py to run that file against a torch
2.13 wheel (`mutation_bench.py --torch-tests`; also `pip install expecttest`, which torch's test
utilities import). The test file names `ValueRangeAnalysis` in torch.utils._sympy.value_ranges,
where torch 2.13 no longer has it: the class moved to torch._inductor.bounds (still a subclass of
SymPyValueRangeAnalysis). The same torch class is exposed under the old name; nothing is
reimplemented, and the test file stays unchanged."""

import torch.utils._sympy.value_ranges as _value_ranges

if not hasattr(_value_ranges, "ValueRangeAnalysis"):
    from torch._inductor.bounds import ValueRangeAnalysis

    _value_ranges.ValueRangeAnalysis = ValueRangeAnalysis

"""candidate make_fx raises a data-dependent error where the baseline traces
oracle ab: under the same program, the candidate torch must agree with eager wherever the baseline does, decide what the baseline decides, and guard at least as much (A/B).
signature: ab:lost-precision:make_fx:default:C * U * U Cmp C:dde
candidate: dde: GuardOnDataDependentSymNode: Could not guard on data-dependent expression 4*u0*u1 < 2 (unhinted: s11*u0*u1 < 2).  (Size-like symbols: u1, u0)
baseline: ok
A difference between two torch builds: this script runs the program under the candidate and the baseline, prints both and compares them (Note [A/B repro] in shapefuzz/repro/ab.py).
candidate: python repro.py (this interpreter and environment); baseline: env /work/venvB213/bin/python repro.py --side baseline --out FILE
program:
v0: float[1D,4D,0U] = []  # input x2
v1 = sdpa(v0, v0, v0, 'causal')
v2 = size(v1, 0)
v3 = arange(v2)
v4 = mask(v3, '!=', 1)
v5 = nonzero(v4)
v6 = select(v5, 1, 0)
v7 = tensor_index(v1, v6)
v8 = size(v7, 0)
v9 = size(v7, 1)
v10 = size(v7, 2)
v11 = view(v7, [v8, v9, v10, 1])
v12 = item(v3, 'sum')
_ = check('==', v12, v12)
return v11
system make_fx, config default; found with torch 2.14.1+cu130. Exits 1 while the bug is there, 0 once it is fixed."""
import json
import sys

sys.path.insert(0, '/work/c214')
from shapefuzz.repro.ab import main  # noqa: E402 (shapefuzz from its source folder)

CASE = json.loads('{"alt_values": null, "fallback_branches": [], "finding": {"config": "default", "detail": "candidate: dde: GuardOnDataDependentSymNode: Could not guard on data-dependent expression 4*u0*u1 < 2 (unhinted: s11*u0*u1 < 2).  (Size-like symbols: u1, u0)\\nbaseline: ok\\nab-baseline: {\\"python\\": \\"/work/venvB213/bin/python\\", \\"env\\": [], \\"seed\\": 331}", "kind": "lost-precision", "oracle": "ab", "pre_existing": false, "replay_index": -1, "severity": "medium", "signature": "ab:lost-precision:make_fx:default:C * U * U Cmp C:dde", "signature_fields": {"config": "default", "oracle": "ab", "pair": [], "shape": "C * U * U Cmp C", "symptom": "lost-precision", "systems": ["make_fx"], "where": ["dde"]}, "summary": "candidate make_fx raises a data-dependent error where the baseline traces", "system": "make_fx"}, "issue_cut": null, "kind": "shapefuzz-case", "observation": null, "program": {"inputs": [{"data": [], "dims": ["dynamic", "dynamic", "unbacked"], "dtype": "float", "name": "x2", "shape": [1, 4, 0]}], "instrs": [{"args": [{"v": 0}, {"v": 0}, {"v": 0}, "causal"], "n_out": 1, "op": "sdpa"}, {"args": [{"v": 1}, 0], "n_out": 1, "op": "size"}, {"args": [{"v": 2}], "n_out": 1, "op": "arange"}, {"args": [{"v": 3}, "!=", 1], "n_out": 1, "op": "mask"}, {"args": [{"v": 4}], "n_out": 1, "op": "nonzero"}, {"args": [{"v": 5}, 1, 0], "n_out": 1, "op": "select"}, {"args": [{"v": 1}, {"v": 6}], "n_out": 1, "op": "tensor_index"}, {"args": [{"v": 7}, 0], "n_out": 1, "op": "size"}, {"args": [{"v": 7}, 1], "n_out": 1, "op": "size"}, {"args": [{"v": 7}, 2], "n_out": 1, "op": "size"}, {"args": [{"v": 7}, [{"v": 8}, {"v": 9}, {"v": 10}, 1]], "n_out": 1, "op": "view"}, {"args": [{"v": 3}, "sum"], "n_out": 1, "op": "item"}, {"args": ["==", {"v": 12}, {"v": 12}], "n_out": 0, "op": "check"}], "outputs": [11], "schema": 1}, "replay_inputs": null, "schema": 1, "status": "bug", "torch_config": [], "torch_version": "2.14.1+cu130", "upstream": "", "versions": {}}')

if __name__ == "__main__":
    sys.exit(main(CASE, sys.argv))

"""candidate make_fx falls back on a question the baseline decides
oracle ab: under the same program, the candidate torch must agree with eager wherever the baseline does, decide what the baseline decides, and guard at least as much (A/B).
signature: ab:lost-precision:make_fx:default:Eq(Max(C, (…) + C), ((…)) + C):fallback
question Ne(Max(1, ((u1//2)) + 1), ((u1//2)) + 1): candidate fell back to True; baseline answered False (static)
A difference between two torch builds: this script runs the program under the candidate and the baseline, prints both and compares them (Note [A/B repro] in shapefuzz/repro/ab.py).
candidate: python repro.py (this interpreter and environment); baseline: env /work/venvB213/bin/python repro.py --side baseline --out FILE
program:
v0: bool[0U] = []  # input x0
v1 = item(v0, 'sum')
_ = check('==', v1, v1)
v2 = binop('+', v1, 1)
v3 = binop('//', v2, 2)
v4 = binop('+', v2, 1)
v5 = binop('//', v4, 2)
v6 = zeros([v3, v3, v5])
v7 = size(v6, 2)
v8 = cond(v6, v7, '<', 2, 'flip')
return v8
system make_fx, config default; found with torch 2.14.1+cu130. Exits 1 while the bug is there, 0 once it is fixed."""
import json
import sys

sys.path.insert(0, '/work/c214')
from shapefuzz.repro.ab import main  # noqa: E402 (shapefuzz from its source folder)

CASE = json.loads('{"alt_values": null, "fallback_branches": [], "finding": {"config": "default", "detail": "question Ne(Max(1, ((u1//2)) + 1), ((u1//2)) + 1): candidate fell back to True; baseline answered False (static)\\nab-baseline: {\\"python\\": \\"/work/venvB213/bin/python\\", \\"env\\": [], \\"seed\\": 341}", "kind": "lost-precision", "oracle": "ab", "pre_existing": false, "replay_index": -1, "severity": "medium", "signature": "ab:lost-precision:make_fx:default:Eq(Max(C, (\\u2026) + C), ((\\u2026)) + C):fallback", "signature_fields": {"config": "default", "oracle": "ab", "pair": [], "shape": "Eq(Max(C, (\\u2026) + C), ((\\u2026)) + C)", "symptom": "lost-precision", "systems": ["make_fx"], "where": ["fallback"]}, "summary": "candidate make_fx falls back on a question the baseline decides", "system": "make_fx"}, "issue_cut": null, "kind": "shapefuzz-case", "observation": null, "program": {"inputs": [{"data": [], "dims": ["unbacked"], "dtype": "bool", "name": "x0", "shape": [0]}], "instrs": [{"args": [{"v": 0}, "sum"], "n_out": 1, "op": "item"}, {"args": ["==", {"v": 1}, {"v": 1}], "n_out": 0, "op": "check"}, {"args": ["+", {"v": 1}, 1], "n_out": 1, "op": "binop"}, {"args": ["//", {"v": 2}, 2], "n_out": 1, "op": "binop"}, {"args": ["+", {"v": 2}, 1], "n_out": 1, "op": "binop"}, {"args": ["//", {"v": 4}, 2], "n_out": 1, "op": "binop"}, {"args": [[{"v": 3}, {"v": 3}, {"v": 5}]], "n_out": 1, "op": "zeros"}, {"args": [{"v": 6}, 2], "n_out": 1, "op": "size"}, {"args": [{"v": 6}, {"v": 7}, "<", 2, "flip"], "n_out": 1, "op": "cond"}], "outputs": [8], "schema": 1}, "replay_inputs": null, "schema": 1, "status": "bug", "torch_config": [], "torch_version": "2.14.1+cu130", "upstream": "", "versions": {}}')

if __name__ == "__main__":
    sys.exit(main(CASE, sys.argv))

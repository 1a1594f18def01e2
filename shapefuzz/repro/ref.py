"""Repro scripts for findings that involve the reference ShapeEnv.

Note [confirming ref findings]: a torch finding is confirmed by a torch-only script. A finding
about `ref` (config differential between two ref configs, ref's shapes against eager, a wrong
ref claim) is a bug in shapefuzz's own reference, and a system differential (ref against
torch-env / make_fx / export) is a disagreement whose other side is that reference. No torch
call shows either, so both scripts (repro.py says so in its docstring) are the full check and
import shapefuzz: they re-run, in one process, exactly the observations the finding's oracle
compares (the reference under each config it needs; the torch system the way shapefuzz drives
it, under the case's torch config), run the oracles, print both sides, and exit 1 while the
finding's signature is still produced, 0 once it is not (fixed on either side). "Confirmed"
means that replay reproduced it in a fresh process. The case travels inside the script as JSON
data (parsed and validated like a case file, never evaluated).
"""

from __future__ import annotations

import json
import sys

from shapefuzz.cases.corpus import _case_from_json
from shapefuzz.cases.replay import observe_case
from shapefuzz.oracles import check_all
from shapefuzz.oracles.base import Compares
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer
from shapefuzz.repro.templates import shapefuzz_replay

__all__ = ["WRITER", "check", "issue", "line_limit", "replay_ref_finding"]


def line_limit(case) -> int:
    """The case is data in the script: its JSON line is long, the script is short."""
    return 60


def issue(case, torch_version: str = "") -> str:
    return _script(case, torch_version, issue_form=True)


def check(case, torch_version: str = "") -> str:
    return _script(case, torch_version, issue_form=False)


def _script(case, torch_version: str, issue_form: bool) -> str:
    lines = (common.safe(case.finding.detail, 600),
             "A finding about shapefuzz's reference ShapeEnv (or ref against torch): no torch call "
             "shows it, so this script re-runs the observations the oracle compares, with shapefuzz "
             "(Note [confirming ref findings] in shapefuzz/repro/ref.py).")
    data = json.dumps(case.to_json(), sort_keys=True)
    return common.script(
        common.doc(case, torch_version, lines, signature=True), common.imports_of(shapefuzz_replay),
        [common.bindings({"CASE_JSON": data}) + "\n", common.block(shapefuzz_replay, "ref")],
        banner=False)


def replay_ref_finding(case_json: dict) -> int:
    """Run the finding's observations again and its oracles; 1 while its signature reappears."""
    case = _case_from_json(case_json, "<repro>")
    f, p = case.finding, case.program
    print(f"finding: {f.summary}\nsignature: {common.key_of(f)}\nprogram:\n{p.pretty()}\n")
    eager, obs = observe_case(case, with_replay_input=False)
    for o in obs if common.compares(f) != Compares.CONFIGS else obs[:0]:  # configs: the diff says it
        _show(o)
    hits = [x for x in check_all(p, eager, obs) if x.signature == f.signature]
    if not hits:
        print("OK: the finding no longer reproduces")
        return 0
    print(f"BUG ({f.oracle}): {hits[0].detail}")
    return 1


def _show(o) -> None:
    print(f"{o.system} [{o.config}]: {o.outcome.short()}")
    for k, (e, v) in enumerate(zip(o.out_exprs, o.out_eval)):
        print(f"  output {k}: {e} = {v or '?'}")


WRITER = register_writer(Writer("ref", issue, check, line_limit))  # Note [repro forms]


if __name__ == "__main__":  # python -m shapefuzz.repro.ref CASE_DIR
    from pathlib import Path

    path = Path(sys.argv[1])
    sys.exit(replay_ref_finding(json.loads((path / "case.json" if path.is_dir() else path).read_text())))

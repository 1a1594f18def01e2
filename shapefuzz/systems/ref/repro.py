"""repro.py for findings that involve the reference ShapeEnv.

Note [confirming ref findings]: a torch finding is confirmed by a torch-only script. A finding
about `ref` (config differential between two ref configs, ref's shapes against eager, a wrong
ref claim) is a bug in shapefuzz's own reference, and a system differential (ref against
torch-env / make_fx / export) is a disagreement whose torch side must be shown running torch. So
their repro.py imports shapefuzz: it re-runs, in one process, exactly the observations the
finding's oracle compares (the reference under each config it needs; the torch system the way
shapefuzz drives it, under the case's torch config), runs the same oracle, prints both sides,
and exits 1 while the finding's signature is still produced, 0 once it is not (fixed on either
side). "Confirmed" means that replay reproduced it in a fresh process. The program and the case
travel inside the script as JSON data (parsed and validated like a case file, never evaluated).
"""

from __future__ import annotations

import json
import sys

__all__ = ["needs_ref_repro", "ref_repro_source", "replay_ref_finding"]


def needs_ref_repro(finding) -> bool:
    return finding.system == "ref" or finding.oracle == "system-differential"


def ref_repro_source(case, torch_version: str) -> str:
    from shapefuzz.repro import _safe

    f = case.finding
    header = (f'"""shapefuzz repro: {_safe(f.summary)}\n\noracle {f.oracle}; system {f.system}, config '
              f'{_safe(f.config)}; found with torch {_safe(torch_version)}.\nsignature: '
              f'{_safe(f.key)}\n{_safe(f.detail)}\n\nA finding about the reference ShapeEnv '
              "(or ref against torch): it re-runs the observations the oracle compares, with "
              "shapefuzz (Note [confirming ref findings]).\nExits 1 while the finding reproduces, "
              '0 once it is fixed.\n"""\n')
    data = json.dumps(case.to_json(), sort_keys=True)
    return "".join([
        header, "import json\nimport sys\n\n",
        "from shapefuzz.systems.ref.repro import replay_ref_finding  # Note [confirming ref findings]\n\n",
        f"CASE = json.loads({data!r})\n\n",
        "if __name__ == '__main__':\n    sys.exit(replay_ref_finding(CASE))\n"])


def replay_ref_finding(case_json: dict) -> int:
    """Run the finding's observations again and its oracles; 1 while its signature reappears."""
    from shapefuzz.corpus import _case_from_json
    from shapefuzz.oracles import check_all
    from shapefuzz.replay import observe_case

    case = _case_from_json(case_json, "<repro>")
    f, p = case.finding, case.program
    print(f"finding: {f.summary}\nsignature: {f.signature}\nprogram:\n{p.pretty()}\n")
    eager, obs = observe_case(case, with_replay_input=False)
    for o in obs if f.oracle != "config-differential" else obs[:0]:
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


if __name__ == "__main__":  # python -m shapefuzz.systems.ref.repro CASE_DIR
    from pathlib import Path

    path = Path(sys.argv[1])
    sys.exit(replay_ref_finding(json.loads((path / "case.json" if path.is_dir() else path).read_text())))

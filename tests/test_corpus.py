"""Replays every case in corpus/: each must behave as its case file records. A known upstream
bug is xfail(strict=True), so an upstream fix turns the run red and the case can be promoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.cases.corpus import load_case
from shapefuzz.cases.replay import replay_case

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES = sorted(CORPUS.rglob("case.json"))


def _param(p: Path):
    case = load_case(p)
    marks = [pytest.mark.xfail(strict=True, reason=case.upstream)] if case.status == "known-upstream" else []
    return pytest.param(case, id=p.parent.name, marks=marks)


def test_corpus_is_not_empty():
    assert CASES, "corpus/ holds no case.json"


@pytest.mark.parametrize("case", [_param(p) for p in CASES])
def test_case_replays_as_recorded(case):
    r = replay_case(case)
    if case.status == "known-upstream":
        assert not r.reproduced, "still reproduces (expected while the upstream bug is open)"
    else:
        assert r.as_recorded, f"{case.finding.key}: reproduced={r.reproduced}, saw {r.signatures}"


@pytest.mark.parametrize("path", CASES, ids=[p.parent.name for p in CASES])
def test_repro_is_current(path):
    """A case's repro.py is what the current template makes of it (regenerate after changing it:
    python -c 'from shapefuzz.repro import regenerate; regenerate("corpus")')."""
    from shapefuzz.repro import repro_source

    assert (path.parent / "repro.py").read_text() == repro_source(load_case(path))

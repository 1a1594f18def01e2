"""Replays every case in corpus/: each must behave as its case file records for the running torch
release. A known upstream bug is xfail(strict=True), so an upstream fix turns the run red and the
case can be promoted (or its fixed release recorded: `shapefuzz replay --record corpus/CASE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.cases.corpus import load_case
from shapefuzz.cases.replay import replay_case
from shapefuzz.cases.versions import running_release

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES = sorted(CORPUS.rglob("case.json"))


RELEASE = running_release()


def _param(p: Path):
    """A known-upstream case is a strict xfail, so an upstream fix turns the run red, unless the
    case records this release's own result (Note [versions of a case]): then that is expected."""
    case = load_case(p)
    xfail = case.status == "known-upstream" and RELEASE not in dict(case.versions)
    marks = [pytest.mark.xfail(strict=True, reason=case.upstream)] if xfail else []
    return pytest.param(case, id=p.parent.name, marks=marks)


def test_corpus_is_not_empty():
    assert CASES, "corpus/ holds no case.json"


@pytest.mark.parametrize("case", [_param(p) for p in CASES])
def test_case_replays_as_recorded(case):
    r = replay_case(case)
    if case.status == "known-upstream" and RELEASE not in dict(case.versions):
        assert not r.reproduced, "still reproduces (expected while the upstream bug is open)"
    else:
        assert r.as_recorded, f"{case.finding.key}: reproduced={r.reproduced}, saw {r.signatures}"


@pytest.mark.parametrize("path", CASES, ids=[p.parent.name for p in CASES])
def test_repro_is_current(path):
    """A case's repro.py is what the current template makes of it (regenerate after changing it:
    python -c 'from shapefuzz.repro import regenerate; regenerate("corpus")')."""
    from shapefuzz.repro import repro_source

    assert (path.parent / "repro.py").read_text() == repro_source(load_case(path))

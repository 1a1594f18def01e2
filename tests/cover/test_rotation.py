"""Note [config rotation] (campaign/rotation.py): a traced system runs each program under its
comparison config and k others chosen by the program's hash; every config gets its share; cheap
systems and `all` run everything; the choice is the program's own (a replay sees the same)."""

from __future__ import annotations

from collections import Counter

import pytest

from shapefuzz.campaign.rotation import rotated
from shapefuzz.systems import targets_for

EXPORT_ALL = targets_for(("export",), ("all",))
MIXED = EXPORT_ALL + targets_for(("torch-env",), ("all",)) + targets_for(("compile",), ())


def programs(n: int) -> list[str]:
    return [f'{{"instrs": [{i}]}}' for i in range(n)]


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_each_program_runs_the_comparison_config_and_k_others(k):
    for pj in programs(50):
        got = rotated(pj, EXPORT_ALL, k)
        assert ("export", "default") in got and len(got) == 1 + k and len(set(got)) == len(got)
        assert list(got) == [t for t in EXPORT_ALL if t in got]  # in the campaign's order


def test_every_config_gets_its_share():
    counts = Counter(t for pj in programs(2000) for t in rotated(pj, EXPORT_ALL, 2))
    others = [counts[t] for t in EXPORT_ALL if t != ("export", "default")]
    assert counts[("export", "default")] == 2000
    expected = 2000 * 2 / (len(EXPORT_ALL) - 1)
    assert min(others) > 0.6 * expected and max(others) < 1.4 * expected


def test_cheap_systems_and_small_config_lists_run_everything():
    got = rotated(programs(1)[0], MIXED, 2)
    assert [t for t in got if t[0] == "torch-env"] == [t for t in MIXED if t[0] == "torch-env"]
    compile_ = [t for t in got if t[0] == "compile"]  # 4 default compile configs: 1 + 2 of them
    assert len(compile_) == 3 and compile_[0] == ("compile", "default")
    assert rotated(programs(1)[0], MIXED, None) == MIXED
    two = (("make_fx", "default"), ("make_fx", "agfs=1"))
    assert rotated(programs(1)[0], two, 0) == (("make_fx", "default"),)
    assert rotated(programs(1)[0], two, 1) == two


def test_the_choice_is_the_programs_own():
    pj = programs(7)[-1]
    assert rotated(pj, EXPORT_ALL, 2) == rotated(str(pj), EXPORT_ALL, 2)
    assert len({rotated(p, EXPORT_ALL, 2) for p in programs(40)}) > 10  # programs differ


def test_the_cli_refuses_a_bad_count_with_exit_2(capsys):
    from shapefuzz.cli import _main

    with pytest.raises(SystemExit) as e:
        _main(["fuzz", "--configs-per-program", "three", "--budget", "5"])
    assert e.value.code == 2 and "--configs-per-program three: expected" in capsys.readouterr().err

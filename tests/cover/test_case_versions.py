"""A case records per torch release whether it reproduces (Note [versions of a case]), and the
torch versions shapefuzz compares are releases without the local build tag."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shapefuzz.cases import corpus
from shapefuzz.cases.corpus import CaseError, load_case, record_version
from shapefuzz.cases.versions import at_least, release

CASE = Path(__file__).resolve().parents[2] / "corpus" / "pending-unbacked-narrow-make_fx"


@pytest.fixture
def case_dir(tmp_path: Path) -> Path:
    d = tmp_path / "case"
    shutil.copytree(CASE, d)
    obj = json.loads((d / "case.json").read_text())
    obj.pop("versions", None)  # the corpus case records its releases; these tests start without
    (d / "case.json").write_text(json.dumps(obj, indent=1, sort_keys=True))
    return d


def _set_versions(d: Path, versions) -> None:
    obj = json.loads((d / "case.json").read_text())
    obj["versions"] = versions
    (d / "case.json").write_text(json.dumps(obj))


def test_release_drops_the_local_build_tag_and_orders_source_builds():
    assert release("2.14.1+cu130") == release("2.14.1+cpu") == "2.14.1"
    assert release("2.16.0a0+git1234abc") == "2.16.0a0"
    assert at_least("2.14.1+cu130", "2.14.1") and at_least("2.16.0a0+gitabc", "2.14.1")
    assert not at_least("2.13.0+cpu", "2.14.1")
    assert not at_least("2.14.0a0+git1", "2.14.0")  # a source build before the release


def test_without_versions_the_status_decides(case_dir: Path):
    case = load_case(case_dir)
    assert case.versions == ()
    assert case.expected_to_reproduce("2.99.0") is (case.status != "fixed")


def test_a_recorded_release_overrides_the_status(case_dir: Path):
    _set_versions(case_dir, {"2.13.0": "reproduces", "2.14.1": "fixed"})
    case = load_case(case_dir)
    assert case.expected_to_reproduce("2.13.0") and not case.expected_to_reproduce("2.14.1")
    assert case.expected_to_reproduce("2.15.0") is (case.status != "fixed")  # never replayed there


@pytest.mark.parametrize("bad", [["2.13.0"], {"2.13.0": "yes"}, {"2.13.0": True}, {"../x": "fixed"}])
def test_malformed_versions_are_refused_with_one_line(case_dir: Path, bad):
    _set_versions(case_dir, bad)
    with pytest.raises(CaseError, match="versions must map torch releases") as e:
        load_case(case_dir)
    assert "\n" not in str(e.value)


def test_record_version_writes_the_running_release_and_keeps_the_rest(case_dir: Path, monkeypatch):
    monkeypatch.setattr("shapefuzz.cases.versions.running_release", lambda: "2.14.1")
    before = json.loads((case_dir / "case.json").read_text())
    assert record_version(case_dir, False) == "2.14.1: fixed"
    after = json.loads((case_dir / "case.json").read_text())
    assert after.pop("versions") == {"2.14.1": "fixed"}
    assert after == {k: v for k, v in before.items() if k != "versions"}
    assert dict(load_case(case_dir).versions) == {"2.14.1": False}
    assert corpus.load_case(case_dir).to_json()["versions"] == {"2.14.1": "fixed"}

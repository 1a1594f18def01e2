"""One root cause met under several configs is one bucket (Note [buckets up to the config]):
its siblings are confirmed after every other finding, outside the end phase's reserve (Note
[sibling confirmations]); test_shrink_siblings.py: they take the first one's shrunk program."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shapefuzz.campaign.confirming import Confirmer, confirm_rank
from shapefuzz.oracles.findings import Finding
from shapefuzz.oracles.signature import Signature


def test_a_bucket_is_the_signature_up_to_its_config():
    sig = Signature("truth", "error-on-valid", ("torch-env",), "agfs=1", "", ("ValueError", "f.py:g"))
    other = Signature("truth", "error-on-valid", ("torch-env",), "default", "", ("ValueError", "f.py:g"))
    assert sig.bucket() == other.bucket() == "truth:error-on-valid:torch-env:*:ValueError:f.py:g"
    assert sig.bucket() != Signature("truth", "error-on-valid", ("torch-env",), "default", "",
                                     ("TypeError", "f.py:g")).bucket()
    # a config differential's config is its guilty toggle: a root cause of its own
    toggle = Signature("config-differential", "wrong-answer", ("ref",), "expr-cache")
    assert toggle.bucket() == toggle.key()
    from shapefuzz.report import root_key  # report.json rows: the same rule

    for config in ("expr-cache", "off:expr-cache"):
        assert root_key({"signature": toggle.key(), "oracle": "config-differential", "config": config}) == toggle.key()
    assert root_key({"signature": sig.key(), "oracle": "truth", "config": "agfs=1"}) == sig.bucket()
    assert root_key({"signature": sig.key(), "oracle": "truth", "config": ""}) == sig.key()
    pair = Signature("frontends", "k", (), "", pair=(("make_fx", "default"), ("export", "default")))
    assert pair.bucket() == pair.key()


def _finding(severity: str, config: str = "default", pre_existing: bool = False) -> Finding:
    return Finding("ab", severity, "make_fx", config, "k", "s", "d", f"ab:k:make_fx:{config}",
                   pre_existing=pre_existing)


def test_a_sibling_is_confirmed_last(tmp_path: Path):
    release, started = threading.Event(), []

    def confirm(d, timeout):
        started.append(d.name)
        if d.name == "busy":
            release.wait(10)
        return True

    c = Confirmer(confirm, time.monotonic() + 60, parallel=1)  # one slot: the start order is the order
    dirs = {}
    for name in ("busy", "sibling", "pre", "low"):
        dirs[name] = tmp_path / name
        dirs[name].mkdir()
        (dirs[name] / "repro.py").write_text(name)
    c.submit("busy", dirs["busy"], 0)
    while not started:
        time.sleep(0.01)
    c.submit("sibling", dirs["sibling"], confirm_rank(_finding("critical", "agfs=1"), sibling=True))
    c.submit("pre", dirs["pre"], confirm_rank(_finding("critical", pre_existing=True)))
    c.submit("low", dirs["low"], confirm_rank(_finding("low")))
    release.set()
    assert all(v == (True, False) for v in c.results(dirs).values())
    assert started == ["busy", "low", "pre", "sibling"]
    c.close()


def test_the_reserve_counts_only_the_first_finding_of_each_bucket():
    """run_fuzz's reserve counts the unshrunk findings that are first of their bucket; a sibling
    is confirmed only after generation (Note [sibling confirmations])."""
    from shapefuzz.campaign.bugs import FoundBug
    from shapefuzz.campaign.run import bucket_firsts, unshrunk_firsts
    from shapefuzz.program.questions import QInstr, QProgram

    p = QProgram((QInstr("backed", (3,)),))

    def bug(config, symptom="k", shrunk=False):
        f = Finding("truth", "high", "torch-env", config, symptom, "s", "d",
                    Signature("truth", symptom, ("torch-env",), config))
        return f.key, FoundBug(f, p, None, shrunk=shrunk)

    bugs = dict([bug("default", shrunk=True), bug("agfs=1"), bug("agfs=2"), bug("agfs=1", "other")])
    assert bucket_firsts(bugs) == {"truth:k:torch-env:default", "truth:other:torch-env:agfs=1"}
    assert unshrunk_firsts(bugs) == ["truth:other:torch-env:agfs=1"]


def test_the_summary_says_which_unconfirmed_findings_are_other_configs_of_a_confirmed_one():
    from shapefuzz.campaign.run_report import _siblings_text

    def row(kind, config):
        return {"signature": f"truth:{kind}:torch-env:{config}:statically_known_true", "oracle": "truth",
                "config": config}

    confirmed = [row("guard-in-static", "default")]
    cut = [row("guard-in-static", "agfs=1"), row("guard-in-static", "all-slow"), row("wrong-static", "agfs=1")]
    assert _siblings_text(confirmed, cut) == ", 2 of them other configs of a confirmed finding"
    assert _siblings_text(confirmed, cut[2:]) == "" and _siblings_text([], cut) == ""

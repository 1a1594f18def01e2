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
    pair = Signature("frontends", "k", (), "", pair=(("make_fx", "default"), ("export", "default")))
    assert pair.bucket() == pair.key()


def _finding(severity: str, config: str = "default", pre_existing: bool = False) -> Finding:
    return Finding("ab", severity, "make_fx", config, "k", "s", "d", f"ab:k:make_fx:{config}",
                   pre_existing=pre_existing)


def test_a_sibling_is_confirmed_last_and_not_reserved(tmp_path: Path):
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
    # busy, pre and low are waited for; the sibling is not
    assert c.reserve_s() == 3 * Confirmer.FIRST_GUESS_S
    release.set()
    assert all(v == (True, False) for v in c.results(dirs).values())
    assert started == ["busy", "low", "pre", "sibling"]
    c.close()


def test_the_summary_says_which_unconfirmed_findings_are_other_configs_of_a_confirmed_one():
    from shapefuzz.campaign.run_report import _siblings_text

    def row(kind, config):
        return {"signature": f"truth:{kind}:torch-env:{config}:statically_known_true", "oracle": "truth",
                "config": config}

    confirmed = [row("guard-in-static", "default")]
    cut = [row("guard-in-static", "agfs=1"), row("guard-in-static", "all-slow"), row("wrong-static", "agfs=1")]
    assert _siblings_text(confirmed, cut) == ", 2 of them other configs of a confirmed finding"
    assert _siblings_text(confirmed, cut[2:]) == "" and _siblings_text([], cut) == ""

"""A campaign's time: the wall budget (Note [wall budget]), the time split (Note [time split]),
background confirmation (Note [background confirmation]) and the progress ticker (Note
[progress ticker]). Clocks are faked where a test is about accounting; the two tests that run a
campaign are about when it stops, with slack for a loaded machine."""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from pathlib import Path

import pytest

from shapefuzz.campaign import timing
from shapefuzz.campaign.budget import WallBudget
from shapefuzz.campaign.confirming import Confirmer
from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.campaign.progress import CampaignProgress, Snapshot, split_text
from shapefuzz.oracles.ab import ABEvidence, mark
from shapefuzz.systems.jobs import run_job
from shapefuzz.systems.observation import Outcome

TARGETS = (("ref", "default"),)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def perf_counter(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(timing, "time", fake)
    return fake


# ---- the split -----------------------------------------------------------------------------------
def test_phases_are_exclusive_and_a_sticky_phase_keeps_its_nested_time(clock):
    c = timing.PhaseClock()
    c.restart(startup_s=2.0)
    with c.phase("generate"):
        clock.now += 1.0
        with c.phase("wait"):
            clock.now += 3.0
        clock.now += 0.5
    with c.phase("shrink"), c.phase("wait"):  # inside shrinking, waiting is shrinking's time
        clock.now += 4.0
    t = c.snapshot()
    assert (t["startup"], t["generate"], t["wait"], t["shrink"]) == (2.0, 1.5, 3.0, 4.0)
    assert sum(t.values()) == 2.0 + 8.5


def test_job_timer_counts_a_nested_wrapped_call_only_once(clock):
    jt = timing.JobTimer()

    def prove():
        clock.now += 0.25
        return "unsat"

    timed_prove = jt.wrap("z3_s", prove)

    def replay():
        clock.now += 1.0
        timed_prove()  # a counter-model check inside a replay: z3's time, not the replay's
        clock.now += 1.0

    jt.wrap("replay_s", replay)()
    assert jt.split(5.0) == {"job_s": 5.0, "replay_s": 2.0, "z3_s": 0.25, "z3_calls": 1}
    times = timing.SystemTimes()
    times.add("make_fx", jt.split(5.0), round_trip_s=5.5)
    row = times.to_json()["make_fx"]
    assert (row["trace_s"], row["ipc_s"], row["jobs"]) == (2.75, 0.5, 1)
    assert split_text({"wait": 1.0}, times.to_json()) == "wait 100% workers: trace 50% replay 36% z3 5% ipc 9%"


# ---- the wall budget -----------------------------------------------------------------------------
def test_generation_leaves_the_reserve_and_time_to_drain():
    """Note [window on demand]: two programs' time at the campaign's rate, at least a second, at
    most a tenth of the budget (and --shrink-budget)."""
    b = WallBudget(60.0, 30.0, reserve=lambda: 12.0)
    assert b.end_s() == 48.0
    assert b.generate_until_s(0.01) == 48.0 - 1.0
    assert b.generate_until_s(2.0) == 48.0 - 4.0
    assert b.generate_until_s(100.0) == 48.0 - 6.0  # a tenth of the budget, under --shrink-budget
    assert WallBudget(60.0, 2.0).generate_until_s(100.0) == 58.0
    assert b.generate_until_s(0.01, no_reserve=True) == 59.0


def _planted(job):
    obs = run_job(job)
    if hashlib.sha256(job.program_json.encode()).hexdigest()[0] in "0123":  # ~1 program in 4
        return replace(obs, outcome=Outcome("crash", "Crash", "planted"))
    return obs


def test_a_campaign_with_findings_ends_by_its_budget_less_the_reserve():
    cfg = CampaignSettings(TARGETS, budget_s=5.0, seed=3, shrink_budget_s=30.0)
    t0 = time.monotonic() - 0.5  # as if the process had started half a second ago
    camp = Campaign(cfg, lambda jobs: [_planted(j) for j in jobs], reserve=lambda: 1.0).run(t0=t0)
    assert camp.bugs and all(b.shrunk for b in camp.bugs.values())
    assert camp.stopped_s is not None and camp.stopped_s >= 5.0 - 1.0 - 0.5
    # ends at budget - reserve, plus at most one evaluation (milliseconds on ref) and slack
    assert camp.elapsed() <= 4.0 + 1.0, camp.elapsed()
    split = camp.time_split()["phases_s"]
    assert split["startup"] >= 0.5 and split["shrink"] > 0 and split["generate"] > 0


def test_generation_resumes_when_a_running_reserve_frees_early():
    """Note [wall budget]: a reserve of 4 s for confirmations that end 1.5 s in stops generation
    at once; waiting for them (the phase says so) lets the campaign generate again, and it still
    ends by its budget. A reserve of 4 s with nothing running stops it for good."""
    def run(pending: bool):
        start = time.monotonic()
        running = lambda: pending and time.monotonic() - start < 1.5
        phases = set()
        cfg = CampaignSettings(TARGETS, budget_s=4.0, seed=3, shrink_budget_s=0.2)
        camp = Campaign(cfg, lambda jobs: [run_job(j) for j in jobs], on_progress=lambda c: phases.add(c.phase),
                        reserve=lambda: 0.5 if pending and not running() else 4.0, reserve_pending=running)
        camp.run()
        return camp, phases, time.monotonic() - start

    idle, _, idle_s = run(False)
    waited, phases, waited_s = run(True)
    assert idle_s < 1.0 and idle.stats.programs <= 2, (idle_s, idle.stats.programs)
    assert "confirming" in phases and waited.stats.programs > 10 * max(1, idle.stats.programs)
    assert 1.5 < waited_s <= 4.0 + 0.5, waited_s
    assert waited.time_split()["phases_s"]["confirm"] >= 1.0


def test_a_known_finding_is_shrunk_for_the_known_budget_only():
    """Note [known shrink]: the same planted crash, slowed so that shrinking it takes seconds, is
    shrunk for --shrink-budget when new and for known_shrink_budget_s when known, or when an
    A/B campaign's baseline shows it too."""
    assert WallBudget(60.0, 30.0, known_shrink_budget_s=5.0).shrink_s(True) == 5.0
    assert WallBudget(60.0, 2.0, known_shrink_budget_s=5.0).shrink_s(True) == 2.0
    assert WallBudget(60.0, 30.0, known_shrink_budget_s=5.0).shrink_s(False) == 30.0

    def slow(jobs):
        time.sleep(0.3 * len(jobs))
        return [_planted(j) for j in jobs]

    def shared(jobs):  # an A/B campaign whose baseline crashes alike (Note [pre-existing findings])
        obs = slow(jobs)
        return obs + [mark(obs[-1], ABEvidence(""))]

    spans, stopped = {}, {}
    for name, runner, known in (("new", slow, False), ("known", slow, True), ("pre-existing", shared, False)):
        cfg = CampaignSettings(TARGETS, budget_s=12.0, seed=3, shrink_budget_s=4.0, known_shrink_budget_s=0.5)
        camp = Campaign(cfg, runner, is_known=lambda sig, k=known: k).run()
        spans[name] = (max(end - start for start, end in camp.shrink_spans), camp.stats.shrink_runs,
                       min(start for start, _ in camp.shrink_spans))
        stopped[name] = camp.stopped_s
        assert all(b.finding.pre_existing == (name == "pre-existing") for b in camp.bugs.values())
        assert any(b.shrunk for b in camp.bugs.values())
    for short in ("known", "pre-existing"):
        assert spans[short][0] <= 0.5 + 0.3 + 0.5, spans  # one evaluation past the deadline, and slack
        assert spans["new"][1] > spans[short][1] and spans["new"][0] > 1.5, spans
        # Note [deferred known shrink]: shrunk after generation stopped, not when met
        assert spans[short][2] >= stopped[short] - 0.01, (spans, stopped)
    assert spans["new"][2] < stopped["new"], (spans, stopped)  # a new one at once


# ---- background confirmation ---------------------------------------------------------------------
def _case(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "case"
    d.mkdir(exist_ok=True)
    (d / "repro.py").write_text(text)
    return d


def test_a_case_is_confirmed_once_and_again_when_its_repro_changes(tmp_path):
    calls = []

    def confirm(d, timeout):
        calls.append((d / "repro.py").read_text())
        return True

    c = Confirmer(confirm, time.monotonic() + 60, parallel=2)
    d = _case(tmp_path, "v1")
    c.submit("sig", d)
    c.submit("sig", d)
    assert c.results({"sig": d}) == {"sig": (True, False)}
    (d / "repro.py").write_text("v2")
    assert c.results({"sig": d}) == {"sig": (True, False)}
    assert calls == ["v1", "v2"]
    assert c.failed() == 0 and c.unfinished() == 0
    c.close()


def test_a_repro_the_confirmation_itself_rewrote_is_not_confirmed_again(tmp_path):
    calls = []

    def reducing_confirm(d, timeout):  # as repro/trial.py's confirm_reduced writes a reduced form
        calls.append(1)
        (d / "repro.py").write_text("reduced")
        return True

    c = Confirmer(reducing_confirm, time.monotonic() + 60)
    d = _case(tmp_path, "full")
    c.submit("sig", d)
    assert c.results({"sig": d}) == {"sig": (True, False)} and calls == [1]
    c.close()


def test_no_time_left_means_unconfirmed_and_timed_out_and_the_reserve_counts_waiting_cases(tmp_path):
    c = Confirmer(lambda d, t: pytest.fail("must not run past the deadline"), time.monotonic() - 1)
    d = _case(tmp_path, "x")
    assert c.results({"sig": d}) == {"sig": (False, True)}
    assert c.failed() == 1
    assert c.reserve_s(["a", "b", "c"]) == 2 * Confirmer.FIRST_GUESS_S  # 3 cases, 2 at once
    assert Confirmer(None, 0, enabled=False).reserve_s(["a"] * 5) == 0.0
    c.close()


@pytest.mark.parametrize("body,confirms", [
    ("import sys\nprint('BUG')\nsys.exit(1)\n", True),  # the repro's own verdict
    ("x = guard_or_true(True)\n", False),  # a name the script lacks: its exit 1 confirms nothing
    ("import no_such_module_here\n", False),
    ("def f(:\n", False),
    # the same exception raised inside a library the script calls is that library's, and counts
    ("import importlib\nimportlib.import_module('no_such_module_here')\n", True),
])
def test_a_repro_that_dies_of_its_own_script_error_is_not_a_confirmation(tmp_path, body, confirms):
    from shapefuzz.campaign.confirming import _exits_1

    (tmp_path / "repro.py").write_text(body)
    assert _exits_1(tmp_path, 60) is confirms


def test_waiting_confirmations_start_most_severe_first(tmp_path):
    """Note [confirmation order]: with the slot busy, the critical finding submitted last
    starts before the low and the pre-existing ones submitted before it."""
    import threading

    from shapefuzz.campaign.confirming import confirm_rank
    from shapefuzz.oracles.findings import Finding

    release, started = threading.Event(), []

    def confirm(d, timeout):
        started.append((d / "repro.py").read_text())
        if started[-1].startswith("busy"):
            release.wait(10)
        return True

    c = Confirmer(confirm, time.monotonic() + 60, parallel=1)  # one slot: the start order is the order
    dirs = {}
    for name in ("busy", "low", "pre", "critical"):
        (tmp_path / name).mkdir()
        dirs[name] = _case(tmp_path / name, name)
    c.submit("busy", dirs["busy"], 0)
    while not started:
        time.sleep(0.01)

    def finding(severity, pre_existing=False):
        return Finding("ab", severity, "make_fx", "default", "k", "s", "d", "ab:k:make_fx:default",
                       pre_existing=pre_existing)

    c.submit("low", dirs["low"], confirm_rank(finding("low")))
    c.submit("pre", dirs["pre"], confirm_rank(finding("critical", pre_existing=True)))
    c.submit("critical", dirs["critical"], confirm_rank(finding("critical")))
    release.set()
    assert all(v == (True, False) for v in c.results(dirs).values())
    assert started[1:] == ["critical", "low", "pre"]
    c.close()


# ---- what the display says -----------------------------------------------------------------------
def test_the_progress_line_says_phase_time_left_rates_and_findings():
    s = Snapshot(20.0, 60.0, 120, 90, 3, phase="shrinking finding 2: 9 -> 4 instructions",
                 rate_now=3.04, known=1, unconfirmed=1, since_new_s=5.2, split="wait 80%",
                 torch_lines=4123, since_cov_s=2.0)
    line = s.line()
    for part in ("shrinking finding 2: 9 -> 4 instructions", "40 s left", "programs 120", "valid 75%",
                 "6.0 programs/s (now 3.0)", "findings 3 (2 new, 1 known, 1 unconfirmed)",
                 "last new 5 s ago", "torch lines 4123 (new 2 s ago)", "[wait 80%]"):
        assert part in line, (part, line)
    empty = Snapshot(3.0, 60.0, 0, 0, 0, phase="starting").line()
    assert "valid -" in empty and "0%" not in empty and "last new" not in empty


def test_the_ticker_redraws_while_the_campaign_thread_is_busy(tmp_path):
    cfg = CampaignSettings(TARGETS, budget_s=60.0)
    camp = Campaign(cfg, lambda jobs: [run_job(j) for j in jobs])
    camp.t0 = time.monotonic()
    log = tmp_path / "progress.log"
    p = CampaignProgress(60.0, enabled=False, log_path=str(log), min_interval_s=0, tick_s=0.05)
    p.watch(camp)
    time.sleep(0.6)  # the campaign's thread does not call the display at all meanwhile
    p.close()
    lines = log.read_text().splitlines()
    shown = [float(line.split()[1]) for line in lines]
    assert len(lines) >= 3 and shown == sorted(shown) and shown[-1] > shown[0], lines
    assert all("starting" in line and "valid -" in line for line in lines)


# ---- torch coverage ------------------------------------------------------------------------------
def test_the_sampler_records_new_torch_lines_of_the_areas_only_and_budgets_its_cost():
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapefuzz.campaign.torchcov import CovSampler, TorchCoverage

    cov = CovSampler(share=0.05)
    assert not cov.wants("torch-env")  # no untraced job of that system yet: no cost baseline
    cov.done("torch-env", 1.0, traced=False)
    assert not cov.wants("torch-env")  # a first trace, guessed at 2 s, is 50% of 4 s of jobs
    for _ in range(49):
        cov.done("torch-env", 1.0, traced=False)
    assert cov.wants("torch-env")  # 2 s against 53 s
    cov.start()
    try:
        ShapeEnv().create_unbacked_symint()
    finally:
        cov.stop()
    cov.done("torch-env", 3.0, traced=True)  # it cost 2 s: another would make 4 s of 56 s
    assert not cov.wants("torch-env")
    first = cov.take()
    assert "fx/experimental/symbolic_shapes.py" in first
    assert len(first["fx/experimental/symbolic_shapes.py"]) > 20
    assert all(rel.startswith(("fx/", "utils/_sympy/", "_refs/", "_decomp/", "_subclasses/fake_impls",
                               "_meta_registrations")) for rel in first)
    cov.start()
    try:
        ShapeEnv().create_unbacked_symint()
    finally:
        cov.stop()
    assert not cov.take().get("fx/experimental/symbolic_shapes.py")  # nothing new the second time

    parent = TorchCoverage()
    parent.add(first, cost_s=2.0)
    parent.add({"fx/experimental/symbolic_shapes.py": first["fx/experimental/symbolic_shapes.py"][:3]})
    assert len(parent.timeline) == 1  # only growth is a point of the timeline
    js = parent.to_json(t0=parent.timeline[0][0] - 5.0, job_s=40.0)
    assert js["timeline"][0][0] == 5.0 and js["cost_share"] == 0.05 and js["traced_jobs"] == 2
    assert js["areas"]["symbolic_shapes"] == len(first["fx/experimental/symbolic_shapes.py"])


def test_the_terminal_display_shows_the_bracketed_time_split_as_text():
    import io

    from rich.console import Console

    buf = io.StringIO()
    p = CampaignProgress(60, console=Console(file=buf, force_terminal=True, width=250), min_interval_s=0)
    p.update(Snapshot(10.0, 60, 50, 40, 1, phase="shrinking finding 1: 9 -> 4 instructions",
                      split="startup 5% workers: trace 80%"))
    p.close()
    out = buf.getvalue()
    assert "shrinking finding 1: 9 -> 4 instructions" in out and "[startup 5% workers: trace 80%]" in out


def test_a_confirmation_without_time_for_a_reduction_gets_less_than_the_reducer_asks(tmp_path):
    seen = []
    c = Confirmer(lambda d, t: seen.append(t) or True, time.monotonic() + 34.0)
    c.hint = lambda: 12.0  # a fresh interpreter takes 12 s here: 34 s left < 3.5 x 12 s
    d = _case(tmp_path, "x")
    c.results({"sig": d})
    assert seen and seen[0] < Confirmer.REDUCE_MIN_S
    long = Confirmer(lambda d, t: seen.append(t) or True, time.monotonic() + 100.0)
    long.results({"sig": _case(tmp_path, "y")})
    assert seen[1] > 90.0  # time enough: the reducer may reduce
    c.close()
    long.close()


def test_before_it_runs_a_campaign_has_used_no_time():
    """The progress line shows the campaign while its workers start, before run() sets its
    clock: then the whole budget is left (it showed the monotonic clock: '0 s left')."""
    from shapefuzz.campaign.progress import snapshot_of

    camp = Campaign(CampaignSettings((("make_fx", "default"),), budget_s=60, seed=1), None)
    camp.phase = "starting"
    assert camp.elapsed() == 0.0
    assert snapshot_of(camp, 60).line().startswith("starting  60 s left  programs 0  valid -")


def test_campaign_cpu_counts_forked_workers_and_never_a_child_twice():
    """Note [campaign CPU]: a worker forked from the warm template is not this process's child,
    so its CPU is read from /proc; a process this one reaps itself (a spawned worker, a
    repro.py) is in os.times()' children and must not be read again."""
    import os
    import subprocess
    import sys

    from shapefuzz.campaign.executor import InProcess
    from shapefuzz.campaign.memory import process_cpu_s
    from shapefuzz.campaign.run_report import campaign_cpu
    from shapefuzz.campaign.workers import WorkerPool

    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ninput()"
    child = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.PIPE, text=True)
    try:
        while process_cpu_s(child.pid) < 0.25:
            pass  # it spins 0.3 s of CPU, then waits for a line
        assert process_cpu_s(child.pid) >= 0.25  # a process's CPU, read from /proc
        assert process_cpu_s(child.pid, unless_child_of=os.getpid()) == 0.0  # ours: rusage has it
    finally:
        child.communicate("\n", timeout=30)
    assert process_cpu_s(child.pid) == 0.0  # reaped: gone from /proc

    from shapefuzz.campaign.evaluate import evaluate
    from shapefuzz.program.kinds import load_program

    x = {"data": [1, 2, 3], "dims": ["dynamic"], "dtype": "int", "name": "x0", "shape": [3]}
    p = load_program({"inputs": [x], "instrs": [{"args": [{"v": 0}, {"v": 0}], "n_out": 1, "op": "add"}],
                      "outputs": [1], "schema": 1})
    with WorkerPool(1) as pool:  # forked from the warm template (Note [zygote])
        evaluate(p, (("make_fx", "default"), ("export", "default")), pool.run_many, n_variants=6)
        forked = pool.cpu_s()
        assert forked > 0.0  # traces and replays; the template's own torch import is not counted
    cpu = campaign_cpu(pool)  # after close: the retired workers' share stays, counted once
    assert pool.cpu_s() == pool.retired_cpu_s >= forked
    assert cpu["workers"] == round(pool.cpu_s(), 2) >= round(forked, 2)
    assert cpu["total"] == round(cpu["campaign"] + cpu["subprocesses"] + cpu["workers"], 2)
    assert campaign_cpu(InProcess(list))["workers"] == 0.0  # an executor without workers


def test_a_known_issue_is_confirmed_warm_and_a_new_one_standalone(tmp_path):
    # Note [warm confirmation]: the Confirmer routes by signature, and a warm confirmation's time
    # does not lower the estimate the reserve keeps for a standalone one
    standalone, warm = [], []

    def slow(d, t):
        standalone.append(d.name)
        time.sleep(0.3)
        return True

    c = Confirmer(slow, time.monotonic() + 60, parallel=1, warm_fn=lambda d, t: warm.append(d.name) or True,
                  is_warm=lambda sig: sig.startswith("known"))
    new, known = tmp_path / "new", tmp_path / "known"
    for d in (new, known):
        d.mkdir()
        (d / "repro.py").write_text(d.name)
    assert c.results({"new:a": new, "known:b": known}) == {"new:a": (True, False), "known:b": (True, False)}
    assert standalone == ["new"] and warm == ["known"]
    assert c.estimate_s() >= 0.3 and c.warm_estimate_s() < 0.3
    # findings still shrinking count by their kind: two new ones run one after the other, a
    # known one adds a warm confirmation's time
    assert c.reserve_s(["new:x", "new:y"]) == 2 * c.estimate_s()
    assert c.reserve_s(["new:x", "known:y"]) == c.estimate_s() + c.warm_estimate_s()
    c.close()
    # without a warm runner every finding is confirmed standalone
    plain = Confirmer(slow, time.monotonic() + 60, is_warm=lambda sig: True)
    assert plain.results({"known:c": known}) == {"known:c": (True, False)} and standalone[-1] == "known"
    plain.close()


@pytest.mark.parametrize("body, exits_1", [
    ("import sys\nsys.exit(1)\n", True),
    ("import torch\nassert __name__ == '__main__'\nprint('fixed')\n", False),
    ("import sys, helper\nsys.exit(helper.CODE)\n", True),  # its folder is on sys.path
    ("raise ValueError('an uncaught exception exits 1, as in a fresh interpreter')\n", True),
    ("import sys\nsys.exit('a message exits 1')\n", True),
    ("import time\ntime.sleep(60)\n", False),  # a hang: killed at the timeout
])
def test_a_warm_run_exits_as_the_script_would_standalone(tmp_path, body, exits_1):
    from shapefuzz.campaign.warm_run import exits_1_warm

    (tmp_path / "repro.py").write_text(body)
    (tmp_path / "helper.py").write_text("CODE = 1\n")
    t = time.monotonic()
    assert exits_1_warm(tmp_path, 8.0) is exits_1
    assert time.monotonic() - t < 30
    log = (tmp_path / "confirm.txt").read_text()
    assert "Note [warm confirmation]" in log and "\nexit " in log


@pytest.mark.parametrize("with_findings", [False, True])
def test_generation_goes_on_past_the_old_shrink_window(monkeypatch, with_findings):
    """Note [window on demand]: with nothing new to shrink, a 5 s campaign generates until
    budget - reserve - drain (0.2 s here), not a tenth of the budget earlier; a planted crash met
    late is still shrunk in what is left, and the campaign ends by its budget."""
    monkeypatch.setattr(WallBudget, "MIN_DRAIN_S", 0.2)
    cfg = CampaignSettings(TARGETS, budget_s=5.0, seed=3, shrink_budget_s=30.0)
    run = (lambda jobs: [_planted(j) for j in jobs]) if with_findings else (lambda jobs: [run_job(j) for j in jobs])
    t0 = time.monotonic()
    camp = Campaign(cfg, run, reserve=lambda: 0.0).run(t0=t0)
    assert camp.stopped_s is not None and camp.stopped_s >= 5.0 - 0.2 - 0.05, camp.stopped_s
    assert time.monotonic() - t0 <= 5.0 + 1.0
    if with_findings:
        assert camp.bugs and all(b.shrunk for b in camp.bugs.values())
    else:
        assert not camp.bugs, list(camp.bugs)  # ref on its own programs: nothing to shrink

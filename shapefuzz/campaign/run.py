"""`shapefuzz fuzz`: a campaign with workers, a live progress line, saved cases and reports."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.campaign.ab_confirm import BaselineConfirm, mark_rows
from shapefuzz.campaign.ab_pool import start as start_ab
from shapefuzz.campaign.blame import blames_of
from shapefuzz.campaign.bugs import FoundBug
from shapefuzz.campaign.confirming import Confirmer, confirm, confirm_rank
from shapefuzz.campaign.database import open_database
from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.campaign.failures import StepFailures, confirm_all
from shapefuzz.campaign.progress import CampaignProgress
from shapefuzz.campaign.rotation import ROTATE
from shapefuzz.campaign.run_report import report_of, summary, torch_coverage
from shapefuzz.campaign.run_report import (
    torch_version as _torch_version,  # tests patch run._torch_version
)
from shapefuzz.campaign.space import example_space
from shapefuzz.campaign.warm_run import exits_1_warm
from shapefuzz.campaign.workers import WorkerPool, import_plugins
from shapefuzz.cases.corpus import (
    Case,
    case_dirname,
    clear_campaign,
    finished_campaign,
    load_state,
    save_case,
    save_state,
)
from shapefuzz.cases.known import fixed_regression, known_note
from shapefuzz.oracles import get_oracle
from shapefuzz.report import write_report
from shapefuzz.repro import check_source, repro_source
from shapefuzz.strategies.settings import GenSettings
from shapefuzz.systems import available
from shapefuzz.systems.evidence import to_json as evidence_json
from shapefuzz.systems.parser_lock import install as one_parser_at_a_time

__all__ = ["FuzzOptions", "confirm", "drop_unavailable", "exit_code", "run_fuzz"]


@dataclass(frozen=True, slots=True)
class FuzzOptions:
    targets: tuple[tuple[str, str], ...]
    budget_s: float
    max_examples: int | None
    seed: int
    workers: int
    out: Path
    gen: GenSettings
    torch_config: tuple[tuple[str, object], ...]
    timeout_s: float
    shrink_budget_s: float
    confirm: bool
    quiet: bool
    known: dict = None  # signature -> known upstream issue (KnownIssue, or its note)
    strict: bool = False  # count known issues in the exit code too
    memory_mb: int = 4096  # per-worker memory cap over a warm worker (Note [isolation]); 0: none
    plugins: tuple[str, ...] = ()  # modules imported here and in every worker (extra ops/systems)
    database: str | None = None  # shared example database URL (redis://host:port, dir:PATH)
    progress_log: str | None = None  # append every progress update to this file (progress.py)
    baseline: object = None  # an A/B campaign's baseline (repro.ab.Baseline), or None
    #: the file of baseline observations kept across A/B campaigns, None for none (Note
    #: [baseline cache] in baseline_cache.py)
    baseline_cache: Path | None = None
    force: bool = False  # --out may hold a finished campaign: its reports and findings are removed
    command: str = ""  # the command line that ran the campaign (the report shows it to rerun)
    coverage_feedback: bool = False  # Note [coverage feedback] (torchcov.py)
    #: configs per program besides a traced system's comparison config (Note [config rotation]
    #: in rotation.py); None: every config on every program
    configs_per_program: int | None = ROTATE
    skipped: tuple = ()  # systems.needs.Skip of each target this torch cannot run (Note [torch names])


def _observation_of(bug: FoundBug):
    return next((o for o in bug.evaluation.observations
                 if (o.system, o.config) == (bug.finding.system, bug.finding.config)), None)


def _case_for(bug: FoundBug, opts: FuzzOptions) -> tuple[Case, str, str]:
    f = bug.finding
    obs = _observation_of(bug)
    replay, alt = None, None
    if obs is not None and f.replay_index >= 0:  # the replay input / other values that show it
        replay, alt = get_oracle(f.oracle).replay_input(f, obs, bug.program.kind)
    forced = tuple(obs.fallback_branches) if obs is not None else ()
    case = Case(f, bug.program, replay, "bug", opts.torch_config, _torch_version(),
                fallback_branches=forced, alt_values=alt)
    log = "\n".join([f"{f.summary}", "", f.detail, "", "program:", bug.program.pretty(), "",
                     f"seen {bug.count} times; first after {bug.first_s:.1f} s (program #{bug.first_program});"
                     f" shrunk: {bug.shrunk}", "",
                     "observation:", repr(obs)[:20000]])
    return case, repro_source(case), log


def _campaign_settings(opts: FuzzOptions) -> CampaignSettings:
    cfg = CampaignSettings(opts.targets, opts.budget_s, opts.max_examples, opts.seed, opts.gen,
                           shrink_budget_s=opts.shrink_budget_s, parallel=opts.workers,
                           coverage_feedback=opts.coverage_feedback, rotate=opts.configs_per_program)
    if not opts.database:
        return cfg
    from dataclasses import replace

    return replace(cfg, database=open_database(opts.database, example_space(cfg)))


def _row(sig: str, bug: FoundBug, case_dir: Path, confirmed: bool, blame_line: str,
         opts: FuzzOptions) -> dict:
    """One finding of report.json."""
    f, (note, regressed) = bug.finding, _known_verdict(opts, sig)
    # report.json keeps the symptom under "kind" (Note [file keys])
    return {"signature": sig, "oracle": f.oracle, "severity": f.severity, "system": f.system,
            "config": f.config, "kind": f.symptom, "summary": f.summary, "detail": f.detail,
            "case_dir": str(case_dir), "count": bug.count, "shrunk": bug.shrunk,
            "confirmed": confirmed, "program": bug.program.pretty(),
            "n_instrs": len(bug.program.instrs), "known": note is not None, "known_note": note or "",
            "regressed_fix": regressed or "",
            "first_s": round(bug.first_s, 2), "first_program": bug.first_program, "blame": blame_line,
            "pre_existing": f.pre_existing, "evidence": evidence_json(f.evidence)}


def _case_dirs(camp: Campaign, saved: dict[str, Path], opts: FuzzOptions) -> dict[str, Path]:
    return {sig: saved.get(sig, opts.out / "findings" / case_dirname(bug.finding))  # else saved
            for sig, bug in camp.bugs.items()}                                        # before a resume


def _rows(camp: Campaign, dirs: dict[str, Path], verdicts: dict[str, tuple[bool, bool]],
          blames: dict[str, str], opts: FuzzOptions) -> tuple[list[dict], list[dict]]:
    """(confirmed findings, unconfirmed ones): a finding counts when its repro.py exits 1
    (Note [background confirmation]: `verdicts` is (confirmed, timed out at the deadline))."""
    findings, unconfirmed = [], []
    for sig, bug in camp.bugs.items():
        ok, late = verdicts[sig]
        row = _row(sig, bug, dirs[sig], ok, blames.get(sig, ""), opts)
        if late:
            row["confirm_timed_out"] = True  # --budget ran out first: replay the case to judge it
        (findings if ok else unconfirmed).append(row)
    return findings, unconfirmed


#: seconds the end phase needs besides confirming: blame, closing workers, writing the reports
END_S = 3.0
#: how far past the budget confirmations may run before they are cut (Note [wall budget]):
#: writing the reports after them took up to 2 s more under load, within the 10 s promised
GRACE_S = 6.5


def process_start() -> float:
    """time.monotonic() at this process's start (Linux /proc), so the budget covers the
    interpreter's start-up and imports too; elsewhere, now."""

    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    # a process older than that is not a fresh `shapefuzz fuzz` (a library caller): count from now
    return time.monotonic() - age if 0.0 <= age < 30.0 else time.monotonic()


def _freeze_heap() -> None:
    """Keep the garbage collector off the objects that live as long as the process.

    Note [frozen heap]: with torch and sympy loaded, a full garbage collection walks millions
    of objects that live as long as the process: 1.6 s under load, holding the GIL, so the
    progress display froze (Hypothesis itself calls gc.collect() once when a run starts).
    gc.freeze() moves every object alive now out of the collector's sight; later collections
    look only at what the campaign allocates. torch is imported first: generation needs it."""
    import gc

    import torch  # noqa: F401

    gc.freeze()


def _known_verdict(opts: FuzzOptions, sig: str) -> tuple[str | None, str | None]:
    """(the known entry's note, None) for a known upstream issue; (None, "<entry> fixed in X")
    when the entry is fixed in the running torch: the finding is a regression of that fix, so it
    is new and fails the run (Note [known versions] in shapefuzz/cases/known.py)."""
    regressed = fixed_regression(opts.known, sig, _torch_version())
    return (None, regressed) if regressed else (known_note(opts.known, sig), None)


def _is_known(opts: FuzzOptions, sig: str) -> bool:
    """A known upstream issue that does not fail the run (under --strict, none is)."""
    return not opts.strict and _known_verdict(opts, sig)[0] is not None


def _known_count(camp: Campaign, opts: FuzzOptions) -> int:
    return sum(_is_known(opts, sig) for sig in list(camp.bugs))


def _claim_out(opts: FuzzOptions) -> None:
    """A finished campaign's --out is not reused silently (its report would be replaced and its
    finding folders mixed with the new ones); an unfinished one resumes (Note [resume])."""
    if finished_campaign(opts.out):
        if not opts.force:
            raise BadInput(f"--out {opts.out} holds a finished campaign; give another --out, or "
                           "--force to replace it (its reports and finding folders are removed)")
        clear_campaign(opts.out)
    opts.out.mkdir(parents=True, exist_ok=True)


def _confirmer(opts: FuzzOptions, t0: float, pre_existing: Callable[[str], bool]) -> Confirmer:
    """Note [background confirmation]: a finding is confirmed as soon as its case is final; Note
    [warm confirmation]: a known upstream issue's repro.py runs in a fork of a warm interpreter;
    Note [pre-existing at confirmation] (ab_confirm.py): in A/B mode, under the baseline too,
    a known one included unless the baseline's observation showed it (Note [known in A/B])."""
    one_parser_at_a_time()  # before its threads start (Note [one parser at a time])
    fn = BaselineConfirm(opts.baseline, confirm) if opts.baseline else confirm
    return Confirmer(fn, t0 + opts.budget_s + GRACE_S, max(2, opts.workers), opts.confirm,
                     warm_fn=exits_1_warm,
                     is_warm=lambda sig: _is_known(opts, sig) and (not opts.baseline or pre_existing(sig)))


def drop_unavailable(opts: FuzzOptions) -> FuzzOptions:
    """Note [torch names] (systems/needs.py): a target the running torch cannot run is skipped
    with one line on stderr and recorded in report.json, named by the user or not; when none is
    left the campaign is bad input (exit 2), before anything is written."""
    from dataclasses import replace

    targets, skips = available(opts.targets)
    for k in skips:
        print(k.line(), file=sys.stderr)
    if not targets:
        raise BadInput(f"nothing to run on torch {_torch_version()}: every config asked for is unavailable ("
                       + "; ".join(f"{k.system}:{k.config}: {k.reason}" for k in skips)
                       + "); `shapefuzz systems` lists the available ones")
    return replace(opts, targets=targets, skipped=opts.skipped + skips)


def bucket_firsts(bugs: dict[str, FoundBug]) -> set[str]:
    """The first finding met of each bucket (its signature up to the config); the others are
    its siblings (Note [sibling confirmations] in confirming.py). One pass: the reserve asks it
    while the campaign runs."""
    firsts: dict[str, str] = {}
    for sig, bug in list(bugs.items()):
        firsts.setdefault(bug.finding.signature.bucket(), sig)
    return set(firsts.values())


def _siblings_submitted(confirmer: Confirmer, bugs: dict[str, FoundBug], dirs: dict[str, Path]) -> dict[str, Path]:
    """`dirs`, once the bucket siblings among them are submitted for confirmation, after every
    other: generation is over (Note [sibling confirmations])."""
    firsts = bucket_firsts(bugs)
    for sig, bug in list(bugs.items()):
        if sig in dirs and sig not in firsts:
            confirmer.submit(sig, dirs[sig], confirm_rank(bug.finding, sibling=True))
    return dirs


def unshrunk_firsts(bugs: dict[str, FoundBug]) -> list[str]:
    """The findings still shrinking whose confirmation the reserve counts: not a sibling's."""
    firsts = bucket_firsts(bugs)
    return [sig for sig, b in list(bugs.items()) if not b.shrunk and sig in firsts]


def run_fuzz(opts: FuzzOptions, t0: float | None = None) -> int:
    """`t0`: the time.monotonic() the wall budget counts from (default: this process's start)."""
    t0 = process_start() if t0 is None else t0
    opts = drop_unavailable(opts)
    _claim_out(opts)
    import_plugins(opts.plugins)
    ab = start_ab(opts.baseline, opts.out, opts.seed, opts.baseline_cache) if opts.baseline else None
    saved: dict[str, Path] = {}
    confirmer = _confirmer(opts, t0, lambda sig: camp.bugs[sig].finding.pre_existing)
    failures = StepFailures()  # Note [step failures] (confirming.py)

    def on_bug(bug: FoundBug) -> None:  # Note [deferred known shrink]: a known one confirmed at once
        sig = bug.finding.key
        saved[sig] = failures.run("report", sig, lambda: _save(bug, opts)) or _case_dir(bug, opts)
        if sig not in failures and (bug.shrunk or _is_known(opts, sig)) and sig in bucket_firsts(camp.bugs):
            confirmer.submit(sig, saved[sig], confirm_rank(bug.finding))  # Note [sibling confirmations]

    def reserve() -> float:  # Note [wall budget]: the end phase, as measured so far
        return END_S + confirmer.reserve_s(unshrunk_firsts(camp.bugs))

    progress = CampaignProgress(opts.budget_s, enabled=False if opts.quiet else None,
                                facts=lambda c: (_known_count(c, opts), confirmer.failed()),
                                log_path=opts.progress_log)
    # Note [resume]: an unfinished campaign in --out goes on where it was killed
    camp = Campaign(_campaign_settings(opts), None, progress, on_bug,
                    checkpoint=lambda s: save_state(opts.out, s), resume=load_state(opts.out),
                    reserve=reserve, is_known=lambda sig: _is_known(opts, sig),
                    reserve_pending=lambda: confirmer.unfinished() > 0)
    confirmer.deadline -= camp.offset_s  # a resumed campaign's budget counts its earlier runs
    progress.watch(camp)
    with (ab.pool if ab else WorkerPool)(opts.workers, opts.timeout_s, opts.torch_config, memory_mb=opts.memory_mb,
                                               log_path=str(opts.out / "workers.log"),
                                               plugins=opts.plugins,
                                               cov_feedback=opts.coverage_feedback) as pool:
        confirmer.hint = lambda: pool.first_ready_s  # 1.5x: stopped 18 s early
        _freeze_heap()  # while the workers start (Note [background start])
        camp.run(pool, t0=t0)
        loop_s, camp.phase = camp.elapsed(), "reporting"
        with camp.clock.phase("report"):
            blames = blames_of(camp.bugs, pool.run_many, failures)
        shapefuzz_bugs = list(pool.bugs)
        torch_cov = torch_coverage(pool, camp)
    dirs = _siblings_submitted(confirmer, camp.bugs, _case_dirs(camp, saved, opts))
    camp.phase = f"confirming {confirmer.unfinished()} finding(s)"
    with camp.clock.phase("confirm"):
        verdicts = confirm_all(confirmer, dirs, camp.bugs, failures)  # Note [step failures]
    progress.close()
    with camp.clock.phase("report"):
        findings, unconfirmed = _final_rows(camp, dirs, verdicts, blames, opts, failures)
    shapefuzz_bugs += failures.as_bugs()
    new = [f for f in findings if not f["known"] or opts.strict]
    elapsed = camp.elapsed()
    report = report_of(opts, camp, elapsed, findings, unconfirmed, shapefuzz_bugs, loop_s)
    write_report(opts.out, {**report, "torch_coverage": torch_cov} if torch_cov else report)
    save_state(opts.out, camp.state(finished=True))  # a rerun with this --out starts afresh
    if not opts.quiet:
        print(summary(camp, elapsed, findings, unconfirmed, new, opts))
    for bug in shapefuzz_bugs:  # loud, and never a silent exit 0
        print(f"{_bug_label(bug, opts.strict)}: {bug['message']}", file=sys.stderr)
    return exit_code(new, shapefuzz_bugs, opts.strict)


def _save(bug: FoundBug, opts: FuzzOptions) -> Path:
    """The finding's case folder, written (the report step of a finding met or shrunk)."""
    case, repro, log = _case_for(bug, opts)
    return save_case(opts.out / "findings", case, repro, log, _observation_of(bug), check=check_source(case))


def _case_dir(bug: FoundBug, opts: FuzzOptions) -> Path:
    """Where _save writes the finding's case (when it could not: where it would have)."""
    return opts.out / "findings" / case_dirname(bug.finding)


def _final_rows(camp: Campaign, dirs: dict[str, Path], verdicts: dict, blames: dict[str, str],
                opts: FuzzOptions, failures: StepFailures) -> tuple[list[dict], list[dict]]:
    """_rows, with each failed step's traceback (Note [step failures], confirming.py) and, in A/B
    mode, the findings the baseline's interpreter confirmed too marked pre-existing (Note
    [pre-existing at confirmation], ab_confirm.py)."""
    findings, unconfirmed = _rows(camp, dirs, verdicts, blames, opts)
    failures.mark(unconfirmed)
    if opts.baseline:
        mark_rows(findings)
    return findings, unconfirmed


def exit_code(new: list, shapefuzz_bugs: list, strict: bool) -> int:
    """1 for a new finding or a shapefuzz bug. A drift of torch's own dispatch state (Note [state
    guard]: torch.cond's internal compile leaves torch-function dispatch disabled after a DDE,
    reports/torch-2.13 row 27, a torch 2.13 bug) is printed and kept in report.json, but fails
    the run only under --strict, as a known upstream issue's finding does. So does an A/B
    campaign's pre-existing finding (Note [pre-existing findings], oracles/ab.py): A/B mode is a
    gate on the change, and what the baseline shows too is no difference of the change; only
    the A/B oracle's own findings (regression, lost precision, weaker guards, slowdown) and
    one-torch findings the baseline does not show fail it."""
    failing = [b for b in shapefuzz_bugs if strict or not b.get("torch_owned")]
    differences = [f for f in new if strict or not f.get("pre_existing")]
    return 1 if differences or failing else 0


def _bug_label(bug: dict, strict: bool = False) -> str:
    if bug.get("torch_owned"):  # patching.torch_owned: no shapefuzz patch touches that state
        fails = "it fails the run under --strict" if strict else "known in torch 2.13 and 2.14.1 (reports/torch-2.13 row 27): not a failure unless --strict"
        return f"torch left its own global state changed (torch's bug, {fails}; the job is in report.json's shapefuzz_bugs)"
    return "shapefuzz bug (please report it with report.json)"

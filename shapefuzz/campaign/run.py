"""`shapefuzz fuzz`: a campaign with workers, a live progress line, saved cases and reports."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.campaign.engine import Campaign, CampaignSettings, FoundBug
from shapefuzz.campaign.progress import CampaignProgress
from shapefuzz.campaign.workers import WorkerPool, import_plugins
from shapefuzz.cases.corpus import Case, case_dirname, load_state, save_case, save_state
from shapefuzz.cases.known import known_note
from shapefuzz.oracles import get_oracle
from shapefuzz.report import op_family_counts, write_report
from shapefuzz.repro import check_source, repro_source
from shapefuzz.strategies.settings import GenSettings
from shapefuzz.systems.observation import to_jsonable

__all__ = ["FuzzOptions", "confirm", "run_fuzz"]


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
    known: dict = None  # signature -> note of known upstream issues
    strict: bool = False  # count known issues in the exit code too
    memory_mb: int = 4096  # per-worker memory cap over a warm worker (Note [isolation]); 0: none
    plugins: tuple[str, ...] = ()  # modules imported here and in every worker (extra ops/systems)
    database: str | None = None  # shared example database URL (redis://host:port, dir:PATH)


def _torch_version() -> str:
    import torch

    return torch.__version__


def _observation_of(bug: FoundBug):
    return next((o for o in bug.evaluation.observations
                 if (o.system, o.config) == (bug.finding.system, bug.finding.config)), None)


def _check_for(case: Case) -> str | None:
    """check.py: the family's full harness, or none for a plugin oracle with its own repro
    (its repro.py is all the harness it has)."""
    return None if get_oracle(case.finding.oracle).repro else check_source(case)


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
    own = get_oracle(f.oracle).repro  # a plugin oracle's own repro (Note [oracle registry])
    return case, (own(case) if own else repro_source(case)), log


def _by_oracle(counts) -> dict:
    """z3 verdict counts {oracle: {unsat|sat|unknown|timeout|premature|deserved: n}}."""
    out: dict = {}
    for (oracle, status), n in sorted(counts.items()):
        out.setdefault(oracle, {})[status] = n
    return out


def confirm(case_dir: Path, timeout_s: float = 180.0) -> bool:
    """A finding counts only if its issue form, repro.py, exits 1 standalone (shapefuzz/repro/)."""
    try:
        r = subprocess.run([sys.executable, str(case_dir / "repro.py")], capture_output=True,
                           text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    (case_dir / "confirm.txt").write_text(f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.returncode == 1


def _blames(camp: Campaign, run_many) -> dict[str, str]:
    """Note [blame] (shapefuzz/oracles/findings.py): ref's view of each torch finding's smallest program."""
    from shapefuzz.campaign.evaluate import jobs_for
    from shapefuzz.oracles.findings import TORCH_SYSTEMS, blame
    from shapefuzz.systems import accepts

    out = {}
    for sig, bug in camp.bugs.items():
        ref = None
        if bug.finding.system in TORCH_SYSTEMS and accepts("ref", bug.program.kind):
            jobs = [j for j in jobs_for(bug.program, (("ref", "default"),), 0, 0) if j.system == "ref"]
            ref = run_many(jobs)[0]
        out[sig] = blame(bug.finding, bug.program, ref, bug.evaluation.eager)
    return out


def _program_set(out: Path, hashes: list[str]) -> str:
    """programs.txt lists every program's hash; the digest of that set goes in the report (the
    same seed gives the same set whatever --workers is, Note [parallel rounds])."""
    import hashlib

    from shapefuzz.cases.corpus import atomic_write

    text = "".join(h + "\n" for h in sorted(hashes))
    atomic_write(out / "programs.txt", text)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _campaign_settings(opts: FuzzOptions) -> CampaignSettings:
    cfg = CampaignSettings(opts.targets, opts.budget_s, opts.max_examples, opts.seed, opts.gen,
                           shrink_budget_s=opts.shrink_budget_s, parallel=opts.workers)
    if not opts.database:
        return cfg
    from dataclasses import replace

    from shapefuzz.campaign.database import open_database

    return replace(cfg, database=open_database(opts.database, Campaign.example_space(cfg)))


def _row(sig: str, bug: FoundBug, case_dir: Path, confirmed: bool, blame_line: str,
         opts: FuzzOptions) -> dict:
    """One finding of report.json."""
    f, note = bug.finding, known_note(opts.known, sig)
    return {"signature": sig, "oracle": f.oracle, "severity": f.severity, "system": f.system,
            "config": f.config, "kind": f.kind, "summary": f.summary, "detail": f.detail,
            "case_dir": str(case_dir), "count": bug.count, "shrunk": bug.shrunk,
            "confirmed": confirmed, "program": bug.program.pretty(),
            "n_instrs": len(bug.program.instrs), "known": note is not None, "known_note": note or "",
            "first_s": round(bug.first_s, 2), "first_program": bug.first_program, "blame": blame_line}


def _rows(camp: Campaign, saved: dict[str, Path], blames: dict[str, str],
          opts: FuzzOptions) -> tuple[list[dict], list[dict]]:
    """(confirmed findings, unconfirmed ones): a finding counts when its repro.py exits 1."""
    findings, unconfirmed = [], []
    for sig, bug in camp.bugs.items():
        d = saved.get(sig, opts.out / "findings" / case_dirname(bug.finding))  # else saved before a resume
        ok = confirm(d) if opts.confirm else True
        (findings if ok else unconfirmed).append(_row(sig, bug, d, ok, blames.get(sig, ""), opts))
    return findings, unconfirmed


def _nested(counts, limit: int = 0) -> dict:
    """{(system, config, key): n} -> {system: {config: {key: n}}}; with `limit`, the most
    frequent `limit` keys per config."""
    out: dict = {}
    for (s, c, k), n in counts.most_common():
        per = out.setdefault(s, {}).setdefault(c, {})
        if not limit or len(per) < limit:
            per[k] = n
    return out


def _report(opts: FuzzOptions, camp: Campaign, elapsed: float, findings: list, unconfirmed: list,
            shapefuzz_bugs: list) -> dict:
    st = camp.stats
    return {
        "torch_version": _torch_version(), "seed": opts.seed, "elapsed_s": elapsed,
        "campaign_s": camp.elapsed(), "budget_s": opts.budget_s,
        "programs": st.programs, "valid_programs": st.valid,
        "valid_fraction": st.valid / st.programs if st.programs else 0.0,
        "throughput": st.programs / elapsed if elapsed else 0.0,
        "systems": sorted({s for s, _ in opts.targets}), "targets": [list(t) for t in opts.targets],
        "outcomes": _nested(st.outcomes), "error_messages": _nested(st.errors, limit=20),
        "findings": findings, "new_findings": sum(not f["known"] for f in findings),
        "unconfirmed": unconfirmed,
        "ops": dict(st.ops.most_common()), "decisions": dict(st.decisions.most_common()),
        "z3_verdicts": _by_oracle(st.smt),
        "timeline": st.timeline[:: 1 + len(st.timeline) // 2000] + st.timeline[-1:],
        "op_families": op_family_counts(dict(st.ops)), "shrink_runs": st.shrink_runs,
        "torch_config": [list(kv) for kv in opts.torch_config], "workers": opts.workers,
        "generator": to_jsonable(opts.gen),
        "resumed": camp.offset_s > 0, "db_replays": st.db_replays,
        "program_set": _program_set(opts.out, st.hashes),
        "shapefuzz_bugs": shapefuzz_bugs,  # Notes [shapefuzz bugs], [state guard] (workers.py)
    }


def _summary(camp: Campaign, elapsed: float, findings: list, unconfirmed: list, new: list,
             opts: FuzzOptions) -> str:
    known = len(findings) - len(new) if not opts.strict else 0
    more = f", {len(unconfirmed)} unconfirmed" if unconfirmed else ""
    return (f"{camp.stats.programs} programs in {elapsed:.1f} s, {len(findings)} confirmed "
            f"finding(s) ({known} known upstream){more}; report: {opts.out / 'report.md'}")


def run_fuzz(opts: FuzzOptions) -> int:
    opts.out.mkdir(parents=True, exist_ok=True)
    import_plugins(opts.plugins)
    saved: dict[str, Path] = {}

    def on_bug(bug: FoundBug) -> None:
        case, repro, log = _case_for(bug, opts)
        saved[bug.finding.key] = save_case(opts.out / "findings", case, repro, log,
                                           _observation_of(bug), check=_check_for(case))

    progress = CampaignProgress(opts.budget_s, enabled=False if opts.quiet else None)
    # Note [resume]: an unfinished campaign in --out goes on where it was killed
    camp = Campaign(_campaign_settings(opts), None, progress, on_bug,
                    checkpoint=lambda s: save_state(opts.out, s), resume=load_state(opts.out))
    t0 = time.monotonic()
    with WorkerPool(opts.workers, opts.timeout_s, opts.torch_config, memory_mb=opts.memory_mb,
                    log_path=str(opts.out / "workers.log"), plugins=opts.plugins) as pool:
        camp.run(pool)
        blames = _blames(camp, pool.run_many)
        shapefuzz_bugs = list(pool.bugs)
    elapsed = time.monotonic() - t0 + camp.offset_s
    progress.close()
    findings, unconfirmed = _rows(camp, saved, blames, opts)
    new = [f for f in findings if not f["known"] or opts.strict]
    write_report(opts.out, _report(opts, camp, elapsed, findings, unconfirmed, shapefuzz_bugs))
    save_state(opts.out, camp.state(finished=True))  # a rerun with this --out starts afresh
    if not opts.quiet:
        print(_summary(camp, elapsed, findings, unconfirmed, new, opts))
    for bug in shapefuzz_bugs:  # ours, not torch's: loud, and never a silent exit 0
        print(f"shapefuzz bug (please report it with report.json): {bug['message']}", file=sys.stderr)
    return 1 if new or shapefuzz_bugs else 0

"""What `shapefuzz fuzz` writes about a campaign: report.json's fields (DESIGN.md contracts) and
the final summary line; run.py gathers the campaign, its findings' rows and its executor."""

from __future__ import annotations

import os
from pathlib import Path

from shapefuzz.campaign.ab_pool import ab_report
from shapefuzz.campaign.engine import Campaign
from shapefuzz.campaign.progress import split_text
from shapefuzz.cases.corpus import atomic_write
from shapefuzz.report import op_family_counts
from shapefuzz.report.buckets import root_key
from shapefuzz.systems.observation import to_jsonable

__all__ = ["campaign_cpu", "report_of", "summary", "torch_coverage", "torch_version"]


def torch_version() -> str:
    import torch

    return torch.__version__


def _by_oracle(counts) -> dict:
    """z3 verdict counts {oracle: {unsat|sat|unknown|timeout|premature|deserved: n}}."""
    out: dict = {}
    for (oracle, status), n in sorted(counts.items()):
        out.setdefault(oracle, {})[status] = n
    return out


def _program_set(out: Path, hashes: list[str]) -> str:
    """programs.txt lists every program's hash; the digest of that set goes in the report (the
    same seed gives the same set whatever --workers is, Note [parallel rounds])."""
    import hashlib

    text = "".join(h + "\n" for h in sorted(hashes))
    atomic_write(out / "programs.txt", text)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _nested(counts, limit: int = 0) -> dict:
    """{(system, config, key): n} -> {system: {config: {key: n}}}; with `limit`, the most
    frequent `limit` keys per config."""
    out: dict = {}
    for (s, c, k), n in counts.most_common():
        per = out.setdefault(s, {}).setdefault(c, {})
        if not limit or len(per) < limit:
            per[k] = n
    return out


def report_of(opts, camp: Campaign, elapsed: float, findings: list, unconfirmed: list,
            shapefuzz_bugs: list, loop_s: float) -> dict:
    st = camp.stats
    return {
        "torch_version": torch_version(), "versions": _versions(), "command": opts.command,
        "seed": opts.seed, "elapsed_s": elapsed,
        "campaign_s": loop_s, "budget_s": opts.budget_s,
        "generation_stopped_s": camp.stopped_s, "time_split": _time_split(camp, elapsed),
        "programs": st.programs, "valid_programs": st.valid,
        "valid_fraction": st.valid / st.programs if st.programs else 0.0,
        "throughput": st.programs / elapsed if elapsed else 0.0,
        "systems": sorted({s for s, _ in opts.targets}), "targets": [list(t) for t in opts.targets],
        "configs_per_program": opts.configs_per_program,  # Note [config rotation]
        "skipped_configs": [k.to_json() for k in opts.skipped],  # Note [torch names] (systems/needs.py)
        "outcomes": _nested(st.outcomes), "error_messages": _nested(st.errors, limit=20),
        "findings": findings, "new_findings": sum(not f["known"] and not f.get("pre_existing") for f in findings),
        "unconfirmed": unconfirmed,
        "ops": dict(st.ops.most_common()), "decisions": dict(st.decisions.most_common()),
        "z3_verdicts": _by_oracle(st.smt),
        "timeline": st.timeline[:: 1 + len(st.timeline) // 2000] + st.timeline[-1:],
        "shrink_spans": [list(x) for x in camp.shrink_spans],
        "op_families": op_family_counts(dict(st.ops)), "shrink_runs": st.shrink_runs,
        "torch_config": [list(kv) for kv in opts.torch_config], "workers": opts.workers,
        "generator": to_jsonable(opts.gen),
        "resumed": camp.offset_s > 0, "db_replays": st.db_replays,
        "program_set": _program_set(opts.out, st.hashes),
        "shapefuzz_bugs": shapefuzz_bugs,  # Notes [shapefuzz bugs], [state guard] (workers.py)
        "ab": ab_report(opts.baseline, opts.out, st.hashes),  # Note [A/B samples] (ab_pool.py)
    }


def torch_coverage(pool, camp: Campaign) -> dict | None:
    """Note [torch coverage] (torchcov.py): the lines the workers' sampled jobs reached."""
    cov, times = pool.coverage, pool.times  # Note [executor]: None where jobs are not sampled
    if cov is None or times is None:
        return None
    return cov.to_json(camp.t0 - camp.offset_s, sum(r["job_s"] for r in times.per.values()))


def _time_split(camp: Campaign, elapsed: float) -> dict:
    """Note [time split] (timing.py): wall phases add up to `wall_s`; workers' time per system."""
    split = camp.time_split()
    split["wall_s"] = round(elapsed, 3)
    # part of `wait`: the first worker importing torch and warming up, before any answer
    split["first_worker_ready_s"] = round(camp.pool.first_ready_s, 3)
    split["cpu_s"] = campaign_cpu(camp.pool)
    return split


def campaign_cpu(pool) -> dict:
    """What a campaign cost in CPU seconds (report.json time_split.cpu_s).

    Note [campaign CPU]: what a campaign cost in CPU seconds, by process: this one, its
    reaped children (repro.py confirmations, the reducer), and its workers. Workers are forked
    from the warm template (Note [zygote]), whose children this process's rusage never sees
    (`time` on the command undercounts a campaign by its workers: 260 s of 1540 s in one
    25-minute default campaign), so the pool reads theirs from /proc as each one goes. The
    template's own torch import (a few seconds) is left out."""
    t = os.times()
    out = {"campaign": t.user + t.system, "subprocesses": t.children_user + t.children_system,
           "workers": pool.cpu_s()}
    out["total"] = sum(out.values())
    return {k: round(v, 2) for k, v in out.items()}


def summary(camp: Campaign, elapsed: float, findings: list, unconfirmed: list, new: list,
             opts) -> str:
    """The final line: off a terminal, the same facts as the live display (progress.py)."""
    st = camp.stats
    known = len(findings) - len(new) if not opts.strict else 0
    # Note [pre-existing findings] (oracles/ab.py): they do not fail the run; one may be known too
    pre = sum(bool(f.get("pre_existing")) for f in findings)
    pre_text = f", {pre} pre-existing: the baseline shows them too" if opts.baseline else ""
    fresh = len(new) if opts.strict else sum(not f.get("pre_existing") for f in new)
    valid = f"valid {100 * st.valid / st.programs:.0f}%, " if st.programs else ""
    stop = (f" (generation stopped at {camp.stopped_s:.0f} s to leave time for confirming)"
            if camp.stopped_s is not None else "")
    last = f"; last new finding at {camp.last_new_s:.0f} s" if camp.last_new_s is not None else ""
    split = camp.time_split()
    return (f"{st.programs} programs in {elapsed:.1f} s of a {opts.budget_s:g} s budget{stop}, "
            f"{valid}{st.programs / elapsed if elapsed else 0:.1f} programs/s; {len(findings)} "
            f"confirmed finding(s) ({fresh} new, {known} known upstream{pre_text}, "
            f"{len(unconfirmed)} unconfirmed{_siblings_text(findings, unconfirmed)}){last}; "
            f"time: {split_text(split['phases_s'], split['systems'])}; "
            f"report: {opts.out / 'report.md'}")


def _siblings_text(findings: list, unconfirmed: list) -> str:
    """How many unconfirmed findings are config siblings of a confirmed bucket (Note [sibling
    confirmations] in confirming.py: confirmed last, after generation, so the deadline cuts most)."""
    confirmed = {root_key(f) for f in findings}
    n = sum(root_key(f) in confirmed for f in unconfirmed)
    return f", {n} of them other configs of a confirmed finding" if n else ""


def _versions() -> dict[str, str]:
    """The versions a rerun needs to match."""
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("torch", "shapefuzz", "hypothesis", "sympy", "z3-solver"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out

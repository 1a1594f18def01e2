"""The speed table of an A/B campaign's report (Note [A/B samples] in ab_pool.py): candidate/baseline
time ratios per system over the programs the campaign counted, and the improvements; and the
reruns that time a suspected slowdown again.

Note [A/B retiming]: each side times a program once, in its worker; the slowdown rule (oracles/
ab.py `slower`) on one pair of times fired in every A/B campaign of unmodified against unmodified
torch (1-2 slowdowns per 90 s campaign, none confirmed): the first use of an op in a process costs
0.5-1 s of lazy set-up, a stored baseline time (Note [baseline cache]) was taken in another run,
and two cores are shared by both sides and the generator. Shrinking and confirming those took
10-40 s of a 90 s campaign. So a pair the rule calls slower is run again on both sides, now warm,
RETIMES times at most while the rule still holds, and each side keeps its fastest time: a
regression in the shape system is slower on every run, a cold start or a busy core is not. Only
suspected pairs are run again, and once ESTABLISHED pairs of a (system, config) stayed slower
through every rerun its slowdown is real and its pairs run once again: a candidate slower on
every program (a quadratic pass planted in evaluate_expr) otherwise ran each program three times
on both sides, and its A/B campaign made 45 programs in 120 s, too few for the performance
oracle's families."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from shapefuzz.oracles.ab import SLOW_MIN_S, SLOWDOWN

__all__ = ["fastest", "improvement_summary", "read_samples", "speed_summary"]


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def read_samples(path: Path, hashes: list[str]) -> list[dict]:
    """The sample lines of the programs the campaign counted: as many lines of each program
    hash as the campaign counted it (small question programs repeat), earliest first."""
    from collections import Counter

    if not path.exists():
        return []
    left, out = Counter(hashes), []
    for line in path.read_text().splitlines():
        try:
            s = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill: the program is re-run after a resume anyway
        if isinstance(s, dict) and left[s.get("hash")] > 0:
            left[s["hash"]] -= 1
            out.append(s)
    return out


def speed_summary(samples: list[dict]) -> dict:
    """Per system: candidate/baseline time ratios (median, p10, p90, a histogram), the median
    speedup, and the programs where the candidate is more than SLOWDOWN x slower (and at least
    SLOW_MIN_S: the slowdown oracle's rule)."""
    per: dict[str, list] = {}
    for s in samples:
        for system, config, c, b in s["times"]:
            if b > 0 and c > 0:
                per.setdefault(system, []).append((c / b, c, b, config, s["hash"]))
    return {system: _system_speed(rows) for system, rows in sorted(per.items())}


def _system_speed(rows: list) -> dict:
    ratios = [r[0] for r in rows]
    med = _quantile(ratios, 0.5)
    edges = [0.25, 0.5, 0.8, 0.9, 1.1, 1.25, 2.0, 4.0]
    hist = [sum(1 for r in ratios if lo <= r < hi) for lo, hi in zip([0.0, *edges], [*edges, float("inf")])]
    # the oracle's rule: SLOWDOWN x slower and SLOW_MIN_S more (below it, scheduling noise)
    slow = sorted((r for r in rows if r[0] > SLOWDOWN and r[1] - r[2] >= SLOW_MIN_S), reverse=True)[:20]
    return {"n": len(rows), "median_ratio": med, "p10_ratio": _quantile(ratios, 0.1),
            "p90_ratio": _quantile(ratios, 0.9), "median_speedup": 1 / med if med else 0.0,
            "candidate_s": sum(r[1] for r in rows), "baseline_s": sum(r[2] for r in rows),
            "histogram": {"edges": edges, "counts": hist},
            "slower_2x": [{"program": h, "config": cfg, "ratio": round(r, 3), "candidate_s": round(c, 4),
                           "baseline_s": round(b, 4)} for r, c, b, cfg, h in slow]}


def improvement_summary(samples: list[dict]) -> dict:
    """{system:config: {why: n}} over the counted programs."""
    out: dict = {}
    for s in samples:
        for system, config, why in s["improvements"]:
            per = out.setdefault(f"{system}:{config}", {})
            per[why] = per.get(why, 0) + 1
    return out


def fastest(old: list, new: list) -> list:
    """`old` with each observation's time the faster of its own and its rerun's in `new`
    (Note [A/B retiming]); a rerun whose outcome differs times nothing."""
    again = {(o.system, o.config): o for o in new}
    out = []
    for o in old:
        n = again.get((o.system, o.config))
        faster = n is not None and n.outcome.status == o.outcome.status and n.elapsed_s < o.elapsed_s
        out.append(dataclasses.replace(o, elapsed_s=n.elapsed_s) if faster else o)
    return out

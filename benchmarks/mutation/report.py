"""The markdown table of a mutation run (benchmarks/mutation_results.md): triage counts, the score
of each campaign mode by operator and by file, the oracles that detected, and the surviving
reached mutants listed for study. Everything is computed from the JSON-lines rows, so the table
can be rewritten at any point of a resumable run."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections import Counter
from collections.abc import Callable

from mutation.mutants import Mutant
from mutation.triage import Verdict

__all__ = ["render"]

MODES = ("default", "ab")


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def _detected(row: dict | None, mode: str) -> bool:
    return bool(row and row.get("modes", {}).get(mode, {}).get("detected"))


def _score_table(title: str, key: Callable[[Mutant], str], counted: list[Mutant], results: dict,
                 before: dict | None = None) -> list[str]:
    """Per group: each mode's score; with `before` (another run's rows), its score on the same
    mutants (those scored in both runs) beside it."""
    groups: dict[str, list[Mutant]] = {}
    for m in counted:
        groups.setdefault(key(m), []).append(m)
    if before is None:
        out = [f"### {title}", "", "| | scored | default | A/B | either |", "|---|---|---|---|---|"]
    else:
        out = [f"### {title} (before -> after, on the mutants scored in both runs)", "",
               "| | scored | default | A/B |", "|---|---|---|---|"]
    for name in sorted(groups):
        ms = [m for m in groups[name] if m.id in results and (before is None or m.id in before)]
        hit = {mode: sum(_detected(results.get(m.id), mode) for m in ms) for mode in MODES}
        if before is not None:
            was = {mode: sum(_detected(before.get(m.id), mode) for m in ms) for mode in MODES}
            out.append(f"| {name} | {len(ms)} | " + " | ".join(
                f"{_pct(was[mode], len(ms))} -> {_pct(hit[mode], len(ms))}" for mode in MODES) + " |")
            continue
        either = sum(any(_detected(results.get(m.id), mode) for mode in MODES) for m in ms)
        out.append(f"| {name} | {len(ms)} | {_pct(hit['default'], len(ms))} | {_pct(hit['ab'], len(ms))} | "
                   f"{_pct(either, len(ms))} |")
    return [*out, ""]


def _comparison(counted: list[Mutant], results: dict, before: dict, label: str) -> list[str]:
    both = [m for m in counted if m.id in results and m.id in before]
    out = [f"## Before ({label}) and after, on the same {len(both)} mutants", ""]
    for mode in MODES:
        was = sum(_detected(before.get(m.id), mode) for m in both)
        now = sum(_detected(results.get(m.id), mode) for m in both)
        gained = [m.id for m in both if _detected(results.get(m.id), mode) and not _detected(before.get(m.id), mode)]
        lost = [m.id for m in both if _detected(before.get(m.id), mode) and not _detected(results.get(m.id), mode)]
        runs = [(before[m.id].get("modes", {}).get(mode), results[m.id].get("modes", {}).get(mode)) for m in both]
        progs = [(b["programs"], a["programs"]) for b, a in runs  # whole budgets only (Note [early stop])
                 if b and a and not b.get("stopped_early") and not a.get("stopped_early")]
        med = [statistics.median_high(side) if side else 0 for side in zip(*progs)] or [0, 0]
        out.append(f"- {mode}: {_pct(was, len(both))} -> {_pct(now, len(both))}; gained {', '.join(gained) or 'none'}; "
                   f"lost {', '.join(lost) or 'none'}; median programs per whole-budget campaign {med[0]} -> {med[1]} (pairs: {len(progs)})")
    out.append("")
    out += _score_table("By operator", lambda m: m.operator.value, counted, results, before)
    out += _score_table("By file", lambda m: m.path, counted, results, before)
    return out


def _oracles(results: dict) -> list[str]:
    per = {mode: Counter() for mode in MODES}
    for row in results.values():
        for mode in MODES:
            per[mode].update(row.get("modes", {}).get(mode, {}).get("oracles", []))
    names = sorted(set(per["default"]) | set(per["ab"]))
    out = ["### By oracle that detected (mutants; one finding per mutant is checked to detect)", "",
           "| oracle | default | A/B |", "|---|---|---|"]
    out += [f"| {n} | {per['default'][n]} | {per['ab'][n]} |" for n in names] or ["| (none) | 0 | 0 |"]
    return [*out, ""]


def _survivors(counted: list[Mutant], results: dict) -> list[str]:
    out = ["### Surviving reached mutants (counted, detected by neither campaign)", "",
           "| id | file:line | function | operator | change |", "|---|---|---|---|---|"]
    for m in counted:
        row = results.get(m.id)
        if row is not None and not any(_detected(row, mode) for mode in MODES):
            change = m.description.replace("|", "\\|")
            out.append(f"| {m.id} | {m.path}:{m.line} | {m.qualname} | {m.operator.value} | {change} |")
    return [*out, ""]


def _late(row: dict | None, mode: str) -> bool:
    return _detected(row, mode) or bool(row and row.get("modes", {}).get(mode, {}).get("detected_late"))


def _header(meta: dict) -> list[str]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return ["# Mutation score", "",
            f"- date: {datetime.date.today().isoformat()}; torch {meta['torch_version']}; "
            f"machine: {platform.machine()} {platform.system()}, {os.cpu_count()} cores, load {load:.1f} at writing",
            f"- command: `{meta['command']}`",
            f"- mutants enumerated: {meta['enumerated']}; sampled: {meta['sampled']} (seed {meta['seed']}); "
            f"campaign budget {meta['budget']} s each, {meta['workers']} worker(s)",
            "- detected = a confirmed finding whose repro.py exits 1 under the mutant and 0 without it "
            "(benchmarks/mutation/bench.py, Note [detected])", ""]


def render(meta: dict, sampled: list[Mutant], triage: dict, results: dict, before: dict | None = None,
           before_label: str = "") -> str:
    """`triage`, `results`: rows by mutant id (store.JsonlStore.rows); `before`: the rows of an
    earlier run (--compare) to put beside this one's."""
    verdicts = Counter(triage[m.id]["verdict"] for m in sampled if m.id in triage)
    counted = [m for m in sampled if triage.get(m.id, {}).get("verdict") == Verdict.COUNTED.value]
    scored = [m for m in counted if m.id in results]
    lines = _header(meta) + ["## Triage", "", "| verdict | mutants |", "|---|---|"]
    lines += [f"| {v.value} | {verdicts.get(v.value, 0)} |" for v in Verdict]
    lines += [f"| not yet triaged | {len(sampled) - sum(verdicts.values())} |", "",
              "## Score over the counted mutants", ""]
    hit = {mode: sum(_detected(results.get(m.id), mode) for m in scored) for mode in MODES}
    either = sum(any(_detected(results.get(m.id), mode) for mode in MODES) for m in scored)
    lines += [f"- scored so far: {len(scored)} of {len(counted)} counted",
              f"- default campaign: {_pct(hit['default'], len(scored))}; A/B: {_pct(hit['ab'], len(scored))}; "
              f"either: {_pct(either, len(scored))}",
              "- counting also findings whose confirmation the budget cut off (repro checked both ways "
              "here): default " + _pct(sum(_late(results.get(m.id), "default") for m in scored), len(scored))
              + "; A/B " + _pct(sum(_late(results.get(m.id), "ab") for m in scored), len(scored)), ""]
    lines += _score_table("By operator", lambda m: m.operator.value, counted, results)
    lines += _score_table("By file", lambda m: m.path, counted, results)
    lines += _oracles({m.id: results[m.id] for m in scored})
    lines += _survivors(counted, results)
    if before:
        lines += _comparison(counted, results, before, before_label)
    return "\n".join(lines)

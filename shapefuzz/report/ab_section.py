"""The A/B section of report.md and report.html, from report.json's "ab" key (campaign/ab_pool.py,
Note [A/B samples]): both builds, the candidate/baseline time ratio per system (median, spread,
distribution), the programs where the candidate is more than 2x slower, and the improvements."""

from __future__ import annotations

import html
from itertools import pairwise
from typing import Any

__all__ = ["ab_html", "ab_md"]


def _builds(a: dict) -> list[str]:
    c, b = a.get("candidate_build", {}), a.get("baseline_build", {})
    env = " ".join(f"{k}={v}" if v else f"-u {k}" for k, v in a["baseline"].get("env", []))
    return [f"candidate: torch {c.get('torch', '?')} ({c.get('torch_file', '?')}), this interpreter and environment",
            f"baseline: torch {b.get('torch', '?')} ({b.get('torch_file', '?')}), {a['baseline']['python']}"
            + (f" with {env}" if env else "")] + _cache_line(a)


def _cache_line(a: dict) -> list[str]:
    """Note [baseline cache] (campaign/baseline_cache.py): what the stored observations saved."""
    c = a.get("baseline_cache")
    if not c:
        return []
    n = c["hits"] + c["misses"]
    return [f"baseline cache: {c['hits']} of {n} baseline jobs reused from earlier runs ({c['file']})"]


def _bins(s: dict) -> list[tuple[str, int]]:
    edges = s["histogram"]["edges"]
    names = [f"< {edges[0]:g}x"] + [f"{lo:g}-{hi:g}x" for lo, hi in pairwise(edges)] + [f">= {edges[-1]:g}x"]
    return list(zip(names, s["histogram"]["counts"]))


def _speed_rows(a: dict) -> list[list[str]]:
    rows = []
    for system, s in a.get("speed", {}).items():
        rows.append([system, str(s["n"]), f"{s['median_ratio']:.3f}", f"{s['p10_ratio']:.3f} - {s['p90_ratio']:.3f}",
                     f"{s['median_speedup']:.2f}x", f"{s['candidate_s']:.2f} / {s['baseline_s']:.2f}",
                     str(len(s["slower_2x"]))])
    return rows


_HEAD = ["system", "programs", "median time ratio (cand/base)", "p10 - p90", "median speedup",
         "total s (cand / base)", "programs > 2x slower"]


def ab_md(d: dict[str, Any]) -> list[str]:
    a = d.get("ab")
    if not a:
        return []
    out = ["## A/B: candidate against baseline", ""] + [f"- {x}" for x in _builds(a)] + [""]
    out += ["| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    out += ["| " + " | ".join(r) + " |" for r in _speed_rows(a)] + [""]
    for system, s in a.get("speed", {}).items():
        out.append(f"{system} ratio distribution: " + ", ".join(f"{k}: {n}" for k, n in _bins(s)))
        out += [f"- slower: program {x['program']} ({x['config']}): {x['ratio']}x ({x['candidate_s']} s "
                f"vs {x['baseline_s']} s)" for x in s["slower_2x"][:10]]
    imp = a.get("improvements", {})
    out += ["", "Improvements (the candidate decides where the baseline did not, agreeing with eager; "
            "not findings): " + ("; ".join(f"{k}: " + ", ".join(f"{w} ({n})" for w, n in v.items())
                                            for k, v in imp.items()) or "none"), ""]
    return out


def ab_html(d: dict[str, Any]) -> list[str]:
    a = d.get("ab")
    if not a:
        return []
    esc = html.escape
    out = ["<h2>A/B: candidate against baseline</h2><ul>"] + [f"<li>{esc(x)}</li>" for x in _builds(a)]
    out += ["</ul><table id='ab-speed'><tr>" + "".join(f"<th>{esc(h)}</th>" for h in _HEAD) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in _speed_rows(a)]
    out.append("</table>")
    for system, s in a.get("speed", {}).items():
        out.append(f"<h3>{esc(system)}: candidate/baseline time ratio per program</h3><table class='ab-hist'><tr>"
                   + "".join(f"<th>{esc(k)}</th>" for k, _ in _bins(s)) + "</tr><tr>"
                   + "".join(f"<td>{n}</td>" for _, n in _bins(s)) + "</tr></table>")
        if s["slower_2x"]:
            out.append("<p>More than 2x slower:</p><ul>" + "".join(
                f"<li><code>{esc(x['program'])}</code> ({esc(x['config'])}): {x['ratio']}x ({x['candidate_s']} s vs "
                f"{x['baseline_s']} s)</li>" for x in s["slower_2x"][:10]) + "</ul>")
    imp = a.get("improvements", {})
    out.append("<h3>Improvements (not findings)</h3>" + ("<ul>" + "".join(
        f"<li>{esc(k)}: {esc(', '.join(f'{w} ({n})' for w, n in v.items()))}</li>" for k, v in imp.items())
        + "</ul>" if imp else "<p>none</p>"))
    return out

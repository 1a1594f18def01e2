"""The plots of report.html, made with plotly from report.json data alone (Note [self-contained
html] in shapefuzz/report/__init__.py): programs and findings over time, throughput, outcome classes per
system and config, z3 verdicts, op-family / op / decision-kind coverage, and where the time
went (report.json's time_split, Note [time split] in shapefuzz/campaign/timing.py)."""

from __future__ import annotations

import html
import json
from typing import Any

__all__ = ["PLOT_NAMES", "figures", "render"]

#: every plot a report can hold, in page order (z3 only when the report has verdict counts)
PLOT_NAMES = ("timeline", "throughput", "time", "torch_coverage", "outcomes", "z3", "families", "ops", "decisions")
_MAX_POINTS = 400
_OUTCOME_COLORS = {"ok": "#4c9a2a", "dde": "#4a78c2", "constraint": "#e0a030", "error": "#c0392b",
                   "crash": "#222222", "timeout": "#999999"}


def figures(d: dict[str, Any], families: dict[str, int], z3: dict[str, int]) -> dict[str, Any]:
    """name -> plotly Figure, for each plot the data supports."""
    import plotly.graph_objects as go

    out: dict[str, Any] = {}
    tl = _thin([row for row in d.get("timeline", []) if isinstance(row, (list, tuple)) and len(row) >= 3])
    if tl:
        out["timeline"] = _timeline(go, tl, d)
        rate = _rates(tl)
        if rate:
            fig = go.Figure(go.Scatter(x=[r[0] for r in rate], y=[r[1] for r in rate], mode="lines",
                                       name="programs/s"))
            fig.update_layout(yaxis={"title": "programs/s", "rangemode": "tozero"})
            out["throughput"] = _titled(fig, f"Throughput (mean {d.get('throughput', 0):.2f} programs/s)",
                                        "elapsed s")
    split = d.get("time_split")
    if isinstance(split, dict) and (split.get("phases_s") or split.get("systems")):
        out["time"] = _time_split(go, split)
    cov = d.get("torch_coverage")
    if isinstance(cov, dict) and cov.get("timeline"):
        out["torch_coverage"] = _torch_coverage(go, cov)
    outcomes = d.get("outcomes", {})
    if outcomes:
        cols = [f"{s}:{c}" for s in sorted(outcomes) for c in sorted(outcomes[s])]
        statuses = sorted({k for s in outcomes.values() for c in s.values() for k in c})
        fig = go.Figure([go.Bar(name=k, x=cols, marker_color=_OUTCOME_COLORS.get(k),
                                y=[outcomes[col.split(":", 1)[0]][col.split(":", 1)[1]].get(k, 0)
                                   for col in cols]) for k in statuses])
        fig.update_layout(barmode="stack", yaxis={"title": "programs"})
        out["outcomes"] = _titled(fig, "Outcome classes per system and config", "system:config")
    if z3:
        out["z3"] = _bars(go, z3, "z3 verdicts", "queries")
    if families:
        out["families"] = _bars(go, families, "Coverage: op families exercised", "instructions")
    if d.get("ops"):
        out["ops"] = _bars(go, dict(d["ops"]), "Coverage: ops and question kinds", "instructions")
    if d.get("decisions"):
        out["decisions"] = _bars(go, dict(d["decisions"]), "Coverage: how shape questions were decided",
                                 "decisions")
    return out


def render(figs: dict[str, Any]) -> tuple[str, str]:
    """(body html with one div per plot, head html with plotly.js inline and the draw calls)."""
    from plotly.offline import get_plotlyjs

    divs, calls = [], []
    for name in PLOT_NAMES:
        if name not in figs:
            continue
        spec = figs[name].to_plotly_json()
        divs.append(f"<div class='shapefuzz-plot' id='plot-{html.escape(name)}'></div>")
        # JSON inside <script>: "</" must not close the tag
        payload = json.dumps({"data": spec["data"], "layout": spec["layout"]}).replace("</", "<\\/")
        calls.append(f"Plotly.newPlot('plot-{name}', ...(d => [d.data, d.layout])({payload}), "
                     "{displaylogo: false, responsive: true});")
    script = (f"<script type='text/javascript'>{get_plotlyjs()}</script>")
    body = "".join(divs) + ("<script type='text/javascript'>window.addEventListener('DOMContentLoaded', "
                            "() => {" + "\n".join(calls) + "});</script>" if calls else "")
    return body or "<p>No data to plot.</p>", script


def _titled(fig, title: str, xtitle: str):
    fig.update_layout(title={"text": title}, xaxis={"title": xtitle}, template="plotly_white",
                      margin={"l": 60, "r": 60, "t": 50, "b": 60}, height=380)
    return fig


#: the workers' share of a job, in bar order (Note [time split])
_WORKER_PARTS = ("trace_s", "replay_s", "z3_s", "ipc_s")


def _time_split(go, split: dict):
    """One stacked bar for the campaign's wall phases, one per system for its workers' time."""
    phases = {k: v for k, v in (split.get("phases_s") or {}).items() if isinstance(v, (int, float)) and v > 0}
    systems = {s: row for s, row in (split.get("systems") or {}).items() if isinstance(row, dict)}
    rows = ["campaign (wall)"] + [f"workers: {s}" for s in sorted(systems)]
    bars = [go.Bar(name=k, orientation="h", y=[rows[0]], x=[v]) for k, v in phases.items()]
    for part in _WORKER_PARTS:
        xs = [float(systems[s].get(part, 0.0)) for s in sorted(systems)]
        if any(xs):
            bars.append(go.Bar(name=f"worker {part[:-2]}", orientation="h", y=rows[1:], x=xs))
    fig = go.Figure(bars)
    fig.update_layout(barmode="stack", yaxis={"autorange": "reversed"})
    return _titled(fig, f"Where the time went ({split.get('wall_s', 0):.0f} s of wall time)", "seconds")


def _timeline(go, tl: list, d: dict):
    """Programs over time, and findings counted at the time each was first seen (not when its
    shrinking ended), one marker per finding; shrink phases shaded (no programs are generated
    then: a flat programs line there is shrinking, not a stall)."""
    t, progs = [r[0] for r in tl], [r[1] for r in tl]
    firsts = sorted((float(f["first_s"]), f["signature"]) for f in d.get("findings", []) if "first_s" in f)
    traces = [go.Scatter(x=t, y=progs, name="programs", mode="lines")]
    if firsts:
        xs = [0.0] + [x for x, _ in firsts] + [max(t[-1], firsts[-1][0])]
        ys = [0] + list(range(1, len(firsts) + 1)) + [len(firsts)]
        traces.append(go.Scatter(x=xs, y=ys, name="findings (first seen)", mode="lines", yaxis="y2",
                                 line={"shape": "hv"}, hoverinfo="skip"))
        traces.append(go.Scatter(x=[x for x, _ in firsts], y=list(range(1, len(firsts) + 1)), yaxis="y2",
                                 mode="markers", marker={"size": 9, "symbol": "diamond", "color": "#b00"},
                                 name="a finding first seen", text=[sig for _, sig in firsts],
                                 hovertemplate="%{x:.1f} s: %{text}<extra></extra>"))
    spans = [s for s in d.get("shrink_spans", []) if isinstance(s, (list, tuple)) and len(s) == 2]
    if spans:  # a legend entry for the shaded rectangles
        traces.append(go.Scatter(x=[None], y=[None], mode="markers", name="shrinking",
                                 marker={"size": 12, "symbol": "square", "color": "rgba(230,150,40,0.35)"}))
    fig = go.Figure(traces)
    fig.update_layout(yaxis={"title": "programs"}, legend={"x": 0.01, "y": 0.99},
                      shapes=[{"type": "rect", "xref": "x", "yref": "paper", "x0": a, "x1": b, "y0": 0,
                               "y1": 1, "fillcolor": "rgba(230,150,40,0.2)", "line": {"width": 0},
                               "layer": "below"} for a, b in spans],
                      yaxis2={"title": "findings", "overlaying": "y", "side": "right",
                              "rangemode": "tozero", "tickformat": "d",
                              "dtick": max(1, -(-len(firsts) // 8))})  # whole findings only
    return _titled(fig, "Programs and findings over time (shaded: shrinking)", "elapsed s")


#: counts this far apart (max / smallest non-zero) get a log axis, or the small ones vanish
LOG_RATIO = 50


def _torch_coverage(go, cov: dict):
    """torch lines reached over time, one line per area (Note [torch coverage])."""
    tl = [row for row in cov["timeline"] if isinstance(row, (list, tuple)) and len(row) == 2]
    areas = sorted({a for _, per in tl for a in per}, key=lambda a: -max(per.get(a, 0) for _, per in tl))
    fig = go.Figure([go.Scatter(x=[t for t, _ in tl], y=[per.get(a, 0) for _, per in tl], mode="lines",
                                line={"shape": "hv"}, name=(cov.get("paths") or {}).get(a, a))
                     for a in areas])
    fig.update_layout(yaxis={"title": "lines reached", "rangemode": "tozero"})
    share = cov.get("cost_share", 0.0)
    return _titled(fig, f"torch lines reached (sampled: {cov.get('traced_jobs', 0)} jobs traced, "
                        f"{100 * share:.1f}% of worker time)", "elapsed s")


def _bars(go, counts: dict[str, int], title: str, ytitle: str):
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    fig = go.Figure(go.Bar(x=[k for k, _ in items], y=[v for _, v in items], name=ytitle,
                           text=[v for _, v in items], textposition="outside"))
    positive = [v for _, v in items if v > 0]
    log = bool(positive) and max(positive) >= LOG_RATIO * min(positive)
    fig.update_layout(yaxis={"title": ytitle + (" (log scale)" if log else ""), "type": "log" if log else "linear",
                             **({"dtick": 1} if log else {})})  # log: ticks at powers of 10 only
    return _titled(fig, title, "")


def _thin(rows: list) -> list:
    if len(rows) <= _MAX_POINTS:
        return rows
    step = len(rows) / _MAX_POINTS
    return [rows[int(k * step)] for k in range(_MAX_POINTS)] + [rows[-1]]


def _rates(tl: list) -> list[tuple[float, float]]:
    """Programs/s between consecutive (thinned) timeline points, over windows of >= 1 s."""
    out, (t0, p0) = [], (tl[0][0], tl[0][1])
    for t, p, _ in tl[1:]:
        if t - t0 >= 1.0:
            out.append((t, (p - p0) / (t - t0)))
            t0, p0 = t, p
    return out

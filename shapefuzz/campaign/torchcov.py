"""Which torch lines a campaign's programs reach, sampled in the workers (report.json's
`torch_coverage`).

Note [torch coverage]: the ops we generate say little about what torch ran; the lines of
ShapeEnv, the sympy helpers, the refs, meta functions, fake impls, decompositions and the
runtime-assert pass do. A worker traces a job with sys.settrace (a global tracer that answers
only for frames of those files, then records their line events) when the tracing spent so far,
plus what this job's tracing is expected to cost, stays under COST_SHARE of its job time. The
cost of a traced job is its time beyond the mean untraced job of the same system; the expected
cost is the mean cost of that system's traced jobs (before the first: twice its untraced mean).
So the cost stays under COST_SHARE whatever tracing's slowdown is (2-4x for make_fx; deciding
after the fact overshot to 17% in a 27-program campaign), and fast systems get more jobs traced. The worker sends the lines
it had not reached before with the job's answer; the parent keeps their union and a timeline.
Coverage from a sample is a lower bound of what the campaign reached."""

from __future__ import annotations

import os
import sys
import time

__all__ = ["AREAS", "CovSampler", "TorchCoverage"]

#: area -> path under torch/ (a file, or a folder ending in "/")
AREAS = {"symbolic_shapes": "fx/experimental/symbolic_shapes.py", "_sympy": "utils/_sympy/",
         "_refs": "_refs/", "_meta_registrations": "_meta_registrations.py",
         "fake_impls": "_subclasses/fake_impls.py", "_decomp": "_decomp/",
         "runtime_assert": "fx/passes/runtime_assert.py"}
#: the share of a worker's job time that tracing may cost
COST_SHARE = 0.05


def torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__) + os.sep


def area_of(relpath: str) -> str | None:
    for area, p in AREAS.items():
        if relpath == p or (p.endswith("/") and relpath.startswith(p)):
            return area
    return None


class CovSampler:
    """In a worker: decide which jobs to trace, trace them, hand out the new lines."""

    def __init__(self, share: float = COST_SHARE):
        self.root = torch_dir()
        self.share = share
        self.seen: set[tuple[str, int]] = set()
        self._new: set[tuple[str, int]] = set()
        self._files: dict[str, str | None] = {}  # co_filename -> path under torch/ (or None)
        self.job_s = 0.0
        self.cost_s = 0.0
        self._plain: dict[str, list[float]] = {}  # system -> [untraced seconds, untraced jobs]
        self._traced: dict[str, list[float]] = {}  # system -> [tracing cost, traced jobs]

    def _rel(self, filename: str) -> str | None:
        rel = self._files.get(filename, "")
        if rel == "":
            r = filename[len(self.root):].replace(os.sep, "/") if filename.startswith(self.root) else ""
            rel = self._files[filename] = r if r and area_of(r) else None
        return rel

    def _global(self, frame, event, arg):
        rel = self._rel(frame.f_code.co_filename)
        if rel is None:
            return None
        new = self._new

        def local(frame, event, arg):
            if event == "line":
                new.add((rel, frame.f_lineno))
            return local

        new.add((rel, frame.f_lineno))
        return local

    def wants(self, system: str) -> bool:
        plain = self._plain.get(system)
        if plain is None:
            return False  # no untraced job of it yet: no baseline for the cost
        mean = plain[0] / max(1, plain[1])
        traced = self._traced.get(system)
        expected = traced[0] / traced[1] if traced else 2.0 * mean
        return self.cost_s + expected <= self.share * (self.job_s + mean + expected)

    def start(self) -> None:
        sys.settrace(self._global)

    def stop(self) -> None:
        sys.settrace(None)

    def done(self, system: str, seconds: float, traced: bool) -> None:
        self.job_s += seconds
        plain = self._plain.setdefault(system, [0.0, 0])
        if traced:
            cost = max(0.0, seconds - plain[0] / max(1, plain[1]))
            self.cost_s += cost
            t = self._traced.setdefault(system, [0.0, 0])
            t[0] += cost
            t[1] += 1
        else:
            plain[0] += seconds
            plain[1] += 1

    def take(self) -> dict[str, list[int]]:
        """The lines reached for the first time since the last take, by file."""
        out: dict[str, list[int]] = {}
        for rel, line in self._new - self.seen:
            out.setdefault(rel, []).append(line)
        self.seen |= self._new
        self._new = set()
        return out


class TorchCoverage:
    """In the parent: the union of the workers' lines and its timeline."""

    def __init__(self) -> None:
        self.lines: dict[str, set[int]] = {}
        self.timeline: list[tuple[float, dict[str, int]]] = []  # (time.monotonic(), per area)
        self.sampled = 0
        self.cost_s = 0.0
        self.last_new: float | None = None

    def add(self, delta: dict, cost_s: float = 0.0) -> None:
        self.sampled += 1
        self.cost_s += cost_s
        grew = False
        for rel, lines in delta.items():
            have = self.lines.setdefault(rel, set())
            n = len(have)
            have.update(lines)
            grew |= len(have) > n
        if grew:
            self.last_new = time.monotonic()
            self.timeline.append((self.last_new, self.per_area()))

    def per_area(self) -> dict[str, int]:
        out = dict.fromkeys(AREAS, 0)
        for rel, lines in list(self.lines.items()):
            out[area_of(rel)] += len(lines)
        return out

    def to_json(self, t0: float, job_s: float) -> dict:
        """`t0`: the monotonic time elapsed_s counts from; `job_s`: the workers' job time."""
        step = 1 + len(self.timeline) // 400
        tl = self.timeline[::step] + self.timeline[-1:] if self.timeline else []
        return {"areas": self.per_area(), "paths": {a: "torch/" + p for a, p in AREAS.items()},
                "files": {rel: len(v) for rel, v in sorted(self.lines.items())},
                "timeline": [[round(t - t0, 2), per] for t, per in tl],
                "traced_jobs": self.sampled, "cost_s": round(self.cost_s, 3),
                "cost_share": round(self.cost_s / job_s, 4) if job_s else 0.0}

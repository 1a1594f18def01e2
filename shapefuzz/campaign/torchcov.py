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
Coverage from a sample is a lower bound of what the campaign reached.

Note [coverage feedback]: with CampaignSettings.coverage_feedback (`--coverage-feedback`), the
lines steer generation through Hypothesis's `target()`. Its optimiser hill-climbs on a score
that must be a function of the example, so every program gets one: a worker also traces the
first non-eager job of every new program it sees (with one worker, the first target's job), and
sends the ShapeEnv lines (SHAPEENV_AREAS) that job reached, new or not. The parent scores the
program by how many of them the campaign had not reached when the round began (stationary within
a round, one Hypothesis run; in round 0 that is every line it reached), and the body, which then
waits for its own program's answer instead of returning with it in flight, calls `target(score)`
and `event()` (whether it added ShapeEnv lines to the campaign's union). Rounds are
FEEDBACK_ROUND programs long so the optimiser, which Hypothesis starts at half of max_examples,
runs at all (a default round has max_examples 10**9: its first pass would wait for 200 programs,
and most rounds end sooner, at a new finding). Replaying a round (shrinking, Note [rounds];
resuming, Note [resume]) re-tells each program's recorded score so Hypothesis generates the same
programs. The cost, the traced job and the lost overlap between programs, is what
benchmarks/feedback_bench.py weighs against the findings it buys; it bought none there, so the
flag is off by default (README, benchmarks/feedback_results.md). Limits: the score is noisy (the
same trace run again reaches fewer lines once torch's caches are warm); with several workers each
traces the first job of a program it gets, so scores, and the programs, depend on --workers. The
checkpoint's fingerprint names the flag when it is on, so a resume with the other setting is
refused (its rounds would differ); report.json shows the flag only in its `command`."""

from __future__ import annotations

import contextlib
import os
import sys
import time

__all__ = ["AREAS", "FEEDBACK_ROUND", "SHAPEENV_AREAS", "CovSampler", "Feedback", "TorchCoverage", "tracing"]

#: area -> path under torch/ (a file, or a folder ending in "/")
AREAS = {"symbolic_shapes": "fx/experimental/symbolic_shapes.py", "_sympy": "utils/_sympy/",
         "_refs": "_refs/", "_meta_registrations": "_meta_registrations.py",
         "fake_impls": "_subclasses/fake_impls.py", "_decomp": "_decomp/",
         "runtime_assert": "fx/passes/runtime_assert.py"}
#: the share of a worker's job time that tracing may cost
COST_SHARE = 0.05
#: the areas whose lines score a program for coverage feedback (Note [coverage feedback])
SHAPEENV_AREAS = ("symbolic_shapes", "_sympy", "runtime_assert")
#: programs per round (one Hypothesis run) with coverage feedback
FEEDBACK_ROUND = 100
FEEDBACK_LABEL = "ShapeEnv lines new to the round"


def torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__) + os.sep


def area_of(relpath: str) -> str | None:
    for area, p in AREAS.items():
        if relpath == p or (p.endswith("/") and relpath.startswith(p)):
            return area
    return None


@contextlib.contextmanager
def tracing(cov: CovSampler | None, on: bool):
    """cov.start() .. cov.stop() around a job when `on`."""
    if on:
        cov.start()
    try:
        yield
    finally:
        if on:
            cov.stop()


class CovSampler:
    """In a worker: decide which jobs to trace, trace them, hand out the new lines."""

    def __init__(self, share: float = COST_SHARE, feedback: bool = False):
        self.root = torch_dir()
        self.share = share
        self.feedback = feedback  # Note [coverage feedback]
        self._fed: str | None = None  # the program whose feedback job was traced last
        self._feeding = False  # the job being traced is a feedback job
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

    def wants(self, system: str, program: str | None = None) -> bool:
        self._feeding = self.feedback and system != "eager" and program not in (None, self._fed)
        if self._feeding:
            self._fed = program  # Note [coverage feedback]: its first non-eager job, traced
            return True
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

    def reached(self) -> list[tuple[str, int]] | None:
        """A feedback job's ShapeEnv lines, new or not (None for a sampled job); before take()."""
        if not self._feeding:
            return None
        return [(rel, line) for rel, line in self._new if area_of(rel) in SHAPEENV_AREAS]

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
        self.base: set[tuple[str, int]] = set()  # ShapeEnv lines reached when the round began
        self.scores: dict = {}  # job group tag -> (score, added ShapeEnv lines) (Note [coverage feedback])

    def add(self, delta: dict, cost_s: float = 0.0, tag=None, reached=None) -> None:
        """`reached`: a feedback job's ShapeEnv lines, scored for its group `tag`."""
        self.sampled += 1
        self.cost_s += cost_s
        grew = shapeenv = False
        for rel, lines in delta.items():
            have = self.lines.setdefault(rel, set())
            n = len(have)
            have.update(lines)
            grew |= len(have) > n
            shapeenv |= len(have) > n and area_of(rel) in SHAPEENV_AREAS
        if grew:
            self.last_new = time.monotonic()
            self.timeline.append((self.last_new, self.per_area()))
        if reached is not None:
            self._score(tag, reached, shapeenv)

    def _score(self, tag, reached, added: bool) -> None:
        score = sum((rel, line) not in self.base for rel, line in reached)
        old = self.scores.pop(tag, (0, False))
        self.scores[tag] = (max(score, old[0]), added or old[1])
        if len(self.scores) > 1000:  # groups nobody asks about (shrinking, blame): the oldest go
            del self.scores[next(iter(self.scores))]

    def mark_round(self) -> None:
        """A new round: scores count the ShapeEnv lines reached from here on as new."""
        self.base = {(rel, line) for rel, lines in self.lines.items() if area_of(rel) in SHAPEENV_AREAS
                     for line in lines}
        self.scores.clear()

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


class Feedback:
    """In the campaign: each program's score, told to Hypothesis (Note [coverage feedback])."""

    def __init__(self, on: bool) -> None:
        self.on = on  # off: every method is a no-op and rounds are Hypothesis's default
        self.scores: dict[int, tuple[int, bool]] = {}  # position in the round -> (score, added)
        self.round_size = FEEDBACK_ROUND if on else 10**9  # a round's max_examples

    def phases(self, phases: tuple) -> tuple:
        from hypothesis import Phase

        return (*phases, Phase.target) if self.on else phases

    def next_round(self, pool) -> None:
        if not self.on:
            return
        self.scores = {}
        if pool.coverage is not None:  # Note [executor]: None where no job is sampled
            pool.coverage.mark_round()

    def tell(self, i: int, pool=None, tag=None) -> None:
        """Inside the test body: program i's score, taken from `pool` for group `tag` when
        given, else the one recorded when program i first ran (a replay)."""
        if not self.on:
            return
        cov = pool.coverage if pool is not None else None  # None: a replay (Note [executor])
        got = cov.scores.pop(tag, None) if cov is not None else None
        if got is not None:
            self.scores[i] = got
        got = self.scores.get(i)
        if got is None:
            return  # no job of it ran in a worker (local systems only), or it was cancelled
        from hypothesis import event, target

        target(float(got[0]), label=FEEDBACK_LABEL)
        event("added ShapeEnv lines" if got[1] else "no new ShapeEnv lines")

    def to_json(self) -> list:
        return [[i, s, a] for i, (s, a) in sorted(self.scores.items())]

    def load(self, rows) -> None:
        self.scores = {int(i): (int(s), bool(a)) for i, s, a in rows}

"""The observation probe of mutation triage (triage.py): is a mutant broken, unreached, or does it
change anything shapefuzz can observe? One long-lived interpreter answers for every mutant:

    python -c 'import sys; sys.path.insert(0, "benchmarks"); from mutation.probe import main; main()' \
        --programs 200 --path fx/experimental/symbolic_shapes.py ... --work DIR

It imports torch and shapefuzz and generates the fixed program set once (benchmarks/bench.py's
derandomized set, the same one for every mutant), then reads one JSON request per line on stdin
(a mutant's mutant.json and the programs that reach it) and writes one JSON answer per line.

Note [probe]: every run of the program set happens in a child forked from that one interpreter
before it traced anything, so the reference runs and every mutant's run start from the same
state (no cache warmed by an earlier mutant). The mutant is applied in the child by the same
code swap as the patch folder's (hook.apply, Note [code swap]), after import: a change that only
matters while torch imports is not seen here (the campaigns of the score, which load the patch
folder, see it). The first reference run records, per program, the torch lines it executes;
a program that does not execute the mutated statement cannot behave differently under the
mutant (the code before that statement is the original), so a mutant runs only the programs
that reach it, and one that no program reaches is "unreached" without a run at all.

Note [observable]: what a mutant must change to count. Per program: for every job (eager, then
each system) the outcome status and exception type, the outputs on the traced input and on every
replayed input (accepted or not, and what the artifact returned), the symbolic outputs evaluated
under the binding, how each decision was made and its answer, the number of guards and asserts, each z3
verdict the system recorded (sat / unsat / deserved / undecided, confirmed or not), and the
signatures of every oracle's findings. Expression text is left out on purpose: a mutant that
only writes an equivalent expression differently (a simplification step dropped, a cache
skipped) changes nothing a user can see. A program whose digest differs between the two
reference runs is noisy (a z3 query near its time limit, a timeout) and never compared; a
mutant's differing programs are run once more in a fresh child, and it counts only when a
program differs both times."""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import select
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

__all__ = ["digest", "main"]

#: the systems whose observations are compared: the default campaign's two and torch's ShapeEnv
#: driven directly (compile and Inductor are too slow for a fixed set of hundreds of programs)
SYSTEMS = ("make_fx", "export", "torch-env")
JOB_TIMEOUT_S = 60  # the campaign's per-program --timeout
CHILD_TIMEOUT_S = 1800.0
N_VARIANTS = 6  # the campaign default


def _run(r) -> list | None:
    if r is None:
        return None
    return [r.ok, r.error.split(":", 1)[0], [[v.sort, list(v.shape), v.dtype, _data(v.data)] for v in r.values]]


def _data(data) -> list:
    # floats rounded: the comparison is of what a mutant changes, not of summation order
    return [round(x, 4) if isinstance(x, float) else x for x in data]


def _plain(x):
    """Ints, bools and None of a record (QReplay, Echo, HistoryRecord, CallRecord): their text
    is expression text, their floats timings (Note [observable])."""
    if hasattr(x, "__dataclass_fields__"):
        return [_plain(getattr(x, f)) for f in x.__dataclass_fields__ if "elapsed" not in f and not f.endswith("_s")]
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x if isinstance(x, (bool, int)) or x is None else "."


def _smt(status: str) -> str:
    return status if status in ("sat", "unsat", "deserved") else "undecided"


#: the names of observed()'s items, for explain()
OBSERVED = ("system", "config", "outcome", "exc_type", "artifact", "reference", "replays", "out_eval",
            "decisions", "guards", "asserts", "smt", "specialized", "fallback_branches", "qreplays",
            "echoes", "history", "calls")


def observed(o) -> list:
    """Note [observable] for one Observation."""
    # lazy: as this file's other imports
    from shapefuzz.oracles.history import records as history_records
    from shapefuzz.oracles.metamorphic import echoes_of
    from shapefuzz.oracles.recompile import calls_of
    from shapefuzz.oracles.specialization import specialized
    from shapefuzz.systems.evidence.truth import question_replays

    return [o.system, o.config, o.outcome.status, o.outcome.exc_type, _run(o.artifact), _run(o.reference),
            [[r.accepted, bool(r.outside), _run(r.reference), _run(r.artifact)] for r in o.replays],
            list(o.out_eval), [[d.how, d.answer] for d in o.decisions], len(o.guards), len(o.asserts),
            [[c.oracle, _smt(c.status), c.confirmed] for c in o.smt], len(specialized(o)),
            list(o.fallback_branches), _plain(question_replays(o)),
            _plain(echoes_of(o)), _plain(history_records(o)), _plain(calls_of(o))]


def digest(rows: list) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _sampler(paths: set[str]):
    """The campaign's line tracer (shapefuzz/campaign/torchcov.py, Note [torch coverage]) over
    the mutated files (sym_node.py is not one of the campaign's areas), every job traced."""
    from shapefuzz.campaign.torchcov import CovSampler

    class Lines(CovSampler):
        def _rel(self, filename: str) -> str | None:
            rel = self._files.get(filename, "")
            if rel == "":
                r = filename[len(self.root):].replace(os.sep, "/") if filename.startswith(self.root) else ""
                rel = self._files[filename] = r if r in paths else None
            return rel

    return Lines(share=1.0)


def _questions(n: int) -> list:
    """`n` question programs (torch-env's kind), derandomized like bench.generate's set."""
    from hypothesis import HealthCheck, given, seed, settings

    out: list = []

    @seed(0)
    @settings(database=None, max_examples=n, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_question_strategy())
    def collect(p):
        out.append(p)

    collect()
    return out


def _question_strategy():
    """The question programs' strategy, from the strategies layer (an older shapefuzz, which a
    score's "before" side may run, kept it on the program kind)."""
    try:
        from shapefuzz.strategies import programs_of_kind
    except ImportError:
        from shapefuzz.program.kinds import KINDS

        return KINDS["questions"].strategy(_gen())
    return programs_of_kind("questions", _gen())


def _gen():
    from shapefuzz.strategies import GenSettings

    return GenSettings()  # the campaign's default (CampaignSettings.gen)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


class Probe:
    """The fixed program set and its jobs, in the long-lived interpreter."""

    def __init__(self, n_programs: int, paths: set[str]) -> None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from bench import generate

        from shapefuzz.campaign.evaluate import jobs_for
        from shapefuzz.systems import targets_for

        warnings.filterwarnings("ignore")  # as shapefuzz workers do
        self.paths = paths
        targets = targets_for(SYSTEMS)
        self.programs = generate(n_programs) + _questions(n_programs)
        self.jobs = [jobs_for(p, targets, N_VARIANTS, k) for k, p in enumerate(self.programs)]

    def run_program(self, k: int) -> str:
        return ";".join(f"{label}={digest(row)}" for label, row in self.observe_program(k))

    def observe_program(self, k: int) -> list[tuple[str, list]]:
        """(job label, what Note [observable] keeps of it) for program k, and its findings."""
        from shapefuzz.oracles.base import check_all
        from shapefuzz.program.kinds import kind_of
        from shapefuzz.systems.jobs import run_job

        program, parts, obs = self.programs[k], [], []
        for job in self.jobs[k]:
            label = f"{job.system}:{job.config}"
            signal.alarm(JOB_TIMEOUT_S)
            try:
                o = run_job(job)
            except _Timeout:
                parts.append((label, ["timeout"]))
                continue
            except Exception as e:  # a shapefuzz failure under the mutant is a change too
                parts.append((label, ["raised", type(e).__name__]))
                continue
            finally:
                signal.alarm(0)
            obs.append(o)
            parts.append((label, observed(o)))
        eager = obs[0] if obs and obs[0].system == "eager" and kind_of(program).has_eager else None
        rest = [o for o in obs if o is not eager]
        try:
            parts.append(("findings", sorted(f.signature for f in check_all(program, eager, rest))))
        except Exception as e:
            parts.append(("findings", ["oracles raised", type(e).__name__]))
        return parts

    # ---- children (Note [probe])
    def fork(self, spec: dict | None, programs: list[int], coverage: bool = False,
             until: dict | None = None, explain: bool = False) -> dict:
        """Run `programs` in a child (under the mutant `spec`, when given); with `until` (the
        reference digests), stop at the first program whose digest differs from it."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(r)
            try:
                out = self._child(spec, programs, coverage, until, explain)
            except BaseException as e:
                out = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
                       "where": traceback.format_exc()[-600:]}
            try:
                with os.fdopen(w, "w") as fh:
                    fh.write(json.dumps(out, default=str))
            finally:
                os._exit(0)
        os.close(w)
        return self._collect(pid, r)

    def _collect(self, pid: int, r: int) -> dict:
        chunks, deadline = [], time.monotonic() + CHILD_TIMEOUT_S
        with os.fdopen(r, "rb") as fh:
            while True:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([fh], [], [], max(0.0, left))
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return {"error": f"hung: no answer in {CHILD_TIMEOUT_S:.0f} s"}
                chunk = os.read(fh.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        if not chunks:
            return {"error": f"the child died (wait status {status})"}
        return json.loads(b"".join(chunks))

    def _child(self, spec: dict | None, programs: list[int], coverage: bool, until: dict | None,
               explain: bool = False) -> dict:
        signal.signal(signal.SIGALRM, _alarm)
        if spec is not None:
            from mutation import hook

            try:
                hook.apply(importlib.import_module(spec["module"]), spec)
            except Exception as e:
                return {"broken": f"does not apply: {e}"}
            broken = _smoke()
            if broken:
                return {"broken": broken}
        if explain:
            return {"parts": {str(k): self.observe_program(k) for k in programs}}
        if not coverage:
            digests = {}
            for k in programs:
                digests[str(k)] = self.run_program(k)
                if until is not None and until.get(str(k)) != digests[str(k)]:
                    break  # one changed program is enough to count
            return {"digests": digests}
        cov, digests, lines = _sampler(self.paths), {}, {}
        for k in programs:
            cov.start()
            try:
                digests[str(k)] = self.run_program(k)
            finally:
                cov.stop()
            for path, ls in cov.take().items():
                for line in ls:
                    lines.setdefault(path, {}).setdefault(str(line), []).append(k)
            cov.seen = set()  # per program: every line it executes, not only the new ones
        return {"digests": digests, "lines": lines}


def _smoke() -> str:
    """The smoke script's programs (smoke.py) under the swapped function: "" when they pass."""
    from mutation import smoke

    signal.alarm(JOB_TIMEOUT_S * 2)
    try:
        smoke.run_cases()
    except _Timeout:
        return f"smoke: hung for {JOB_TIMEOUT_S * 2} s"
    except BaseException as e:
        lines = [s for s in str(e).strip().splitlines() if s.strip()]
        return f"smoke: {type(e).__name__}: {lines[-1][:200] if lines else ''}"
    finally:
        signal.alarm(0)
    return ""


def code_key() -> str:
    """torch's version, shapefuzz's source (the A/B cache's digest of it) and this file: a cached
    reference run measured under other code is not this one's (the digests would differ for
    reasons other than a mutant)."""
    import torch

    from shapefuzz.campaign.baseline_cache import source_digest

    h = hashlib.sha256(torch.__version__.encode() + Path(__file__).read_bytes() + source_digest().encode())
    return h.hexdigest()[:16]


def _reference(probe: Probe, work: Path) -> dict:
    """Two reference runs, the first with per-program coverage (cached in `work` per code_key)."""
    out = work / f"reference-{code_key()}.json"
    if out.exists():
        return json.loads(out.read_text())
    every = list(range(len(probe.programs)))
    t0 = time.monotonic()
    first = probe.fork(None, every, coverage=True)
    second = probe.fork(None, every)
    for run in (first, second):
        if "error" in run:
            raise SystemExit(f"the unmodified program set fails: {run['error']}\n{run.get('where', '')}")
    noisy = sorted(int(k) for k, d in first["digests"].items() if second["digests"].get(k) != d)
    data = {"programs": len(every), "seconds": round(time.monotonic() - t0, 1), "noisy": noisy,
            "digests": first["digests"], "lines": first["lines"]}
    work.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    tmp.replace(out)
    return data


def changed_parts(a: str, b: str) -> list[str]:
    """The jobs (system:config, or "findings") whose part of two program digests differ."""
    pa, pb = (dict(x.split("=", 1) for x in d.split(";") if "=" in x) for d in (a, b))
    return sorted(k for k in {*pa, *pb} if pa.get(k) != pb.get(k))


def _first_change(run: dict, ref: dict) -> int | None:
    return next((int(k) for k, d in run["digests"].items() if ref["digests"].get(k) != d), None)


def judge(probe: Probe, ref: dict, spec: dict, programs: list[int]) -> dict:
    """{"verdict": broken | equivalent-looking | counted, "reason": one line}. A program that
    changes is run again in a fresh child, and counts only when it changes again (Note
    [observable]); when it does not, the programs after it are run."""
    noisy = set(ref["noisy"])
    quiet = [k for k in programs if k not in noisy]
    remaining, ran = quiet, 0
    while True:
        run = probe.fork(spec, remaining, until=ref["digests"])
        if "broken" in run:
            return {"verdict": "broken", "reason": run["broken"]}
        if "error" in run:
            return {"verdict": "counted", "reason": f"the program set fails under it: {run['error']}"}
        ran += len(run["digests"])
        k = _first_change(run, ref)
        if k is None:
            break
        again = probe.fork(spec, [k])
        if "error" in again or _first_change(again, ref) == k:
            where = ", ".join(changed_parts(run["digests"][str(k)], ref["digests"][str(k)]))
            return {"verdict": "counted", "reason": f"changes program {k} in {where} (of {len(quiet)} that "
                                                    f"reach it; {ran} run)"}
        remaining = remaining[remaining.index(k) + 1:]
    skipped = f" ({len(programs) - len(quiet)} noisy ones skipped)" if len(quiet) < len(programs) else ""
    return {"verdict": "equivalent-looking",
            "reason": f"no observable change on the {len(quiet)} programs that reach it{skipped}"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="mutation triage's observation probe (Note [probe])")
    ap.add_argument("--programs", type=int, required=True)
    ap.add_argument("--path", action="append", required=True, help="torch file, relative to torch/")
    ap.add_argument("--work", type=Path, required=True)
    a = ap.parse_args(argv)
    # the answers get their own descriptor: whatever torch or a mutant prints goes to stderr
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import torch  # noqa: F401  (before any fork: every child shares the import)

    probe = Probe(a.programs, set(a.path))
    ref = _reference(probe, a.work)

    def say(row: dict) -> None:
        answers.write(json.dumps(row) + "\n")
        answers.flush()

    say({"ready": True, "programs": ref["programs"], "noisy": len(ref["noisy"]), "lines": ref["lines"]})
    for line in sys.stdin:
        req = json.loads(line)
        t0 = time.monotonic()
        answer = judge(probe, ref, req["spec"], req["programs"])
        say({**answer, "id": req["spec"]["id"], "seconds": round(time.monotonic() - t0, 1)})


def explain(argv: list[str] | None = None) -> None:
    """What a mutant changes in one program, field by field (for the study of survivors):

        python -c 'import sys; sys.path.insert(0, "benchmarks"); from mutation.probe import explain; explain()' \
            --programs 200 --spec WORK/patches/ID/mutant.json --program K
    """
    ap = argparse.ArgumentParser(description="what a mutant changes in one program")
    ap.add_argument("--programs", type=int, required=True)
    ap.add_argument("--spec", type=Path, required=True, help="a patch folder's mutant.json")
    ap.add_argument("--program", type=int, action="append", required=True)
    a = ap.parse_args(argv)
    import torch  # noqa: F401

    probe = Probe(a.programs, set())
    spec = json.loads(a.spec.read_text())
    ref, mut = (probe.fork(s, a.program, explain=True) for s in (None, spec))
    for side in (ref, mut):
        if "parts" not in side:
            raise SystemExit(f"no answer: {side}")
    for k in a.program:
        print(f"== program {k}\n{probe.programs[k].dumps()[:2000]}")
        theirs = dict(mut["parts"][str(k)])
        for label, row in ref["parts"][str(k)]:
            other = theirs.get(label)
            if other == row:
                continue
            names = OBSERVED if len(row) == len(OBSERVED) else range(len(row))
            print(f"-- {label}")
            for name, x, y in zip(names, row, other or [None] * len(row)):
                if x != y:
                    print(f"   {name}:\n     without: {json.dumps(x)[:1500]}\n     with:    {json.dumps(y)[:1500]}")

"""Which lines of the mutated torch files the generator's programs execute, for triage's
"unreached" (triage.py). Run in its own interpreter, without any mutant:

    python -c 'import sys; sys.path.insert(0, "benchmarks"); from mutation.coverage import main; main()' \
        --programs 200 --out lines.json

It reuses the campaign's own line tracer (shapefuzz/campaign/torchcov.py, Note [torch coverage]):
a CovSampler whose files are the mutation targets (sym_node.py is not one of the campaign's
coverage areas) and which traces every job instead of a 5% sample. The programs are
benchmarks/bench.py's fixed derandomized set, and each runs the jobs a default campaign gives it
(campaign.evaluate.jobs_for: eager, then make_fx and export with their default configs, with the
campaign's replay variants), so a line is reached when the default campaign's kind of program
reaches it."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import warnings
from pathlib import Path

__all__ = ["collect", "main"]

#: seconds one job may take before it is abandoned (the campaign's per-program --timeout)
JOB_TIMEOUT_S = 60
N_VARIANTS = 6  # the campaign default (benchmarks/README.md)


def _sampler(paths: set[str]):
    from shapefuzz.campaign.torchcov import CovSampler

    class Lines(CovSampler):
        """CovSampler over the given files under torch/ (every job traced)."""

        def _rel(self, filename: str) -> str | None:
            rel = self._files.get(filename, "")
            if rel == "":
                r = filename[len(self.root):].replace(os.sep, "/") if filename.startswith(self.root) else ""
                rel = self._files[filename] = r if r in paths else None
            return rel

    return Lines(share=1.0)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def collect(n_programs: int, paths: set[str], systems: tuple[str, ...] = ()) -> dict:
    """{"lines": {path: sorted lines}, ...} over `n_programs` programs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import generate

    from shapefuzz.campaign.evaluate import jobs_for
    from shapefuzz.systems import targets_for
    from shapefuzz.systems.jobs import run_job

    warnings.filterwarnings("ignore")  # as shapefuzz workers do
    targets = targets_for(systems)
    cov, t0, failed = _sampler(paths), time.monotonic(), 0
    signal.signal(signal.SIGALRM, _alarm)
    for k, program in enumerate(generate(n_programs)):
        for job in jobs_for(program, targets, N_VARIANTS, k):
            signal.alarm(JOB_TIMEOUT_S)
            cov.start()
            try:
                run_job(job)
            except BaseException as e:  # a job's failure is the campaign's business, not ours
                failed += 1
                if isinstance(e, KeyboardInterrupt):
                    raise
            finally:
                cov.stop()
                signal.alarm(0)
    lines = cov.take()
    return {"programs": n_programs, "targets": [list(t) for t in targets], "failed_jobs": failed,
            "seconds": round(time.monotonic() - t0, 1),
            "lines": {p: sorted(v) for p, v in sorted(lines.items())}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="line coverage of the mutation targets")
    ap.add_argument("--programs", type=int, required=True)
    ap.add_argument("--path", action="append", required=True, help="torch file, relative to torch/")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    import torch

    data = {"torch_version": torch.__version__, **collect(a.programs, set(a.path))}
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    tmp.replace(a.out)

"""The worker template: imported once by multiprocessing's fork server, which then forks every
worker from it (Note [zygote]).

Note [zygote]: a spawned worker imports torch and warms up make_fx itself, ~7 s on a quiet
2-core machine and 15-30 s under load; every worker restart (a timeout, a crash, a state
drift, Note [state guard]) paid it again, and two workers at start paid it twice at once. The
fork server imports this module once, so the import and the warm-up happen once per campaign
process; each worker is then a fork of a warm interpreter (about 2 s under load 14 against
30 s spawned, benchmarks/workers_bench.py). A fork is safe here: the template has run only
tiny ops (no parallel region started torch's thread pool) and holds no lock of ours; the
worker applies its own torch config, plugins and memory cap after the fork, and takes its
state-guard snapshot then, so nothing the template did goes unchecked. The fork server keeps
the environment of its start (the campaign's, which does not change; A/B baselines have their
own launcher, Note [A/B workers]). Any failure here leaves a cold template: the fork server
swallows only ImportError, so every other exception is caught and the worker warms up itself
as a spawned one would."""

from __future__ import annotations

import warnings

#: True once the warm-up ran here: a worker forked from this template skips its own
WARM = False
try:
    warnings.filterwarnings("ignore")
    from shapefuzz.campaign.worker_loop import _die_with_parent, _warm_up

    _die_with_parent()  # a campaign killed during the warm-up takes the template with it

    _warm_up()
    WARM = True
except Exception:  # a cold template still forks correct workers
    pass

"""Where workers come from: a fork server whose template imported torch and warmed up (Note
[zygote]), or, where there is none, spawned interpreters."""

from __future__ import annotations

import multiprocessing as mp

__all__ = ["context", "start_template"]


def context(start: str):
    """Workers fork from a warm template where the platform has a fork server (Note [zygote]);
    elsewhere, or with start="spawn" (benchmarks/workers_bench.py compares), each worker is
    spawned and warms up itself."""
    if start == "spawn" or "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["shapefuzz.campaign.zygote"])
    return ctx


def start_template() -> None:
    """Start the fork server (and its warm-up, Note [zygote]) without waiting for it. The first
    worker's start waits until the template is warm (2.1 s on a quiet 2-core machine); the CLI
    calls this before it imports the campaign (and torch, 1.4 s), which ran one after the other."""
    ctx = context("forkserver")
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()

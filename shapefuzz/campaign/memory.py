"""A worker's memory cap (Note [isolation] in campaign/workers.py): RLIMIT_AS at its warm
address space plus --memory-limit, and what an allocation past it looks like."""

from __future__ import annotations

import os

from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import Observation, Outcome

__all__ = ["limit_memory", "oom", "out_of_memory"]


def _vm_size_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def limit_memory(memory_mb: int) -> None:
    """Note [isolation]: RLIMIT_AS relative to the warm worker's address space."""
    if memory_mb <= 0:
        return
    import resource

    try:
        cap = _vm_size_bytes() + memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (OSError, ValueError):
        pass  # no /proc or a lower hard limit: run without our cap


def out_of_memory(obs: Observation) -> bool:
    o = obs.outcome
    return o.status == "error" and (o.exc_type == "MemoryError" or "can't allocate memory" in o.message
                                  or "std::bad_alloc" in o.message)


def oom(job: Job, memory_mb: int) -> Observation:
    return Observation(job.system, job.config, Outcome(
        "crash", "MemoryError", f"out of memory: the program needed more than {memory_mb} MB over a "
        "warm worker (raise --memory-limit if that is legitimate)"))


def process_cpu_s(pid: int | None, unless_child_of: int = 0) -> float:
    """user + system CPU seconds of a live (or not yet reaped) process from /proc, 0.0 if
    unknown or if its parent is `unless_child_of` (Note [campaign CPU], campaign/run.py)."""
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()  # fields[0] is the state, [1] the ppid
        if int(fields[1]) == unless_child_of:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0

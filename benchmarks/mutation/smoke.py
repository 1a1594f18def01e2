"""The smoke script of mutation triage (triage.py): run with a mutant's patch folder on PYTHONPATH,
it exits 0 when torch imports, the mutant is applied, and a few dynamic-shape programs trace
with make_fx and export and run; a mutant under which it fails or hangs is "broken" (torch is
unusable, so any user would see it at once: no measure of the oracles). Results are not compared
with eager on purpose: a wrong result is a regression for the campaigns to find, not a broken
torch. Standard library and torch only."""

import importlib
import json
import os
import sys

import torch
from torch.export import Dim, export
from torch.fx.experimental.proxy_tensor import make_fx


def check_applied() -> None:
    """The mutant's module imported and its function swapped (no folder: nothing to check)."""
    try:
        import _shapefuzz_mutant as hook
    except ImportError:
        return
    with open(os.path.join(hook.HERE, hook.SPEC_FILE)) as fh:
        spec = json.load(fh)
    importlib.import_module(spec["module"])
    if spec["id"] not in hook.APPLIED:
        sys.exit(f"mutant {spec['id']} was not applied to {spec['module']}.{spec['qualname']}")


def halves(x):
    n = x.shape[0]
    return torch.cat([x[n // 2:], x[: n // 2]]).reshape(-1, 2 * x.shape[1]).sum(0)


def nonzero_rows(x):
    idx = x.nonzero()
    torch._check(idx.shape[0] <= x.numel())
    return idx.float().sum(0) + idx.shape[0]


def item_size(y, x):
    u = y.item()
    torch._check(u >= 0)
    torch._check(u <= x.shape[0])
    return torch.zeros(u, x.shape[1]).sum(0) + x[:u].sum(0)


def broadcast(x, y):
    return (x.unsqueeze(0) + y.unsqueeze(1)).flatten(0, 1).max(0).values


class Halves(torch.nn.Module):
    def forward(self, x):
        return halves(x)


class Broadcast(torch.nn.Module):
    def forward(self, x, y):
        return broadcast(x, y)


def run_cases() -> None:
    """The programs: raises when one fails (probe.py runs them in a forked child)."""
    x, y = torch.randn(8, 3), torch.randn(5, 3)
    cases = [(halves, (x,)), (nonzero_rows, (torch.tensor([0, 1, 2, 0, 3]),)),
             (item_size, (torch.tensor(3), x)), (broadcast, (x, y))]
    for fn, args in cases:
        gm = make_fx(fn, tracing_mode="symbolic")(*args)
        gm(*args)
    ep = export(Halves(), (x,), dynamic_shapes=({0: Dim("n", min=2, max=64) * 2},))
    ep.module()(torch.randn(12, 3))
    ep = export(Broadcast(), (x, y), dynamic_shapes=({0: Dim("a")}, {0: Dim("b")}))
    ep.module()(torch.randn(4, 3), torch.randn(6, 3))


def main() -> None:
    check_applied()
    run_cases()
    print("smoke ok")


if __name__ == "__main__":
    main()

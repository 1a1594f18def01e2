"""TEST-ONLY: an oracle registered from outside the package (`--plugin toy_oracle`), to show
that a new oracle is one module (Note [oracle registry]). Its rule is a toy: "make_fx never
produces an output tensor of rank 2 or more". Its repro runs the program eagerly and exits 1
when an output has rank >= 2, so the campaign's confirmation step really runs it."""

from __future__ import annotations

from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding
from shapefuzz.oracles.signature import make_signature
from shapefuzz.program.codegen import function_source, inputs_source

NAME = "toy-rank"


def check(c) -> list[Finding]:
    obs = c.obs
    if obs.system != "make_fx" or obs.outcome.kind != "ok":
        return []
    ranks = [e.count(",") + 1 for e in obs.out_exprs if e.startswith("[") and e != "[]"]
    if not any(r >= 2 for r in ranks):
        return []
    return [Finding(NAME, "low", obs.system, obs.config, "rank-2-output",
                    "make_fx produced an output of rank >= 2", f"output shapes {obs.out_exprs}",
                    str(make_signature(NAME, "rank-2-output", obs.system, obs.config)))]


def repro(case) -> str:
    p = case.program
    return (f'"""toy oracle {NAME}: an output of rank >= 2."""\nimport sys\n\nimport torch\n\n\n'
            + function_source(p) + "\n\n" + inputs_source(p.inputs) + "\n"
            "ranks = [t.dim() for t in f(*inputs) if isinstance(t, torch.Tensor)]\n"
            "print('output ranks:', ranks)\n"
            "sys.exit(1 if any(r >= 2 for r in ranks) else 0)\n")


register(Oracle(NAME, "low", "toy: make_fx outputs have rank 0 or 1", check, kinds=("tensors",),
                per_observation=True, repro=repro))

"""Oracles: pure functions from observations to findings (DESIGN.md "Oracles"), one module
each, registered in shapefuzz.oracles.base (Note [oracle registry]). Importing this package
registers every built-in oracle."""

from shapefuzz.oracles import (  # noqa: F401  (each module registers its oracle)
    ab,
    agreement,
    contract,
    differential,
    frontends,
    history,
    metamorphic,
    performance,
    recompile,
    replay,
    soundness,
    specialization,
    spurious_dde,
    truth,
)
from shapefuzz.oracles.agreement import eager_agreement
from shapefuzz.oracles.base import (
    Oracle,
    all_oracles,
    check_all,
    finding_names,
    get_oracle,
    help_table,
    register,
    targets_for_finding,
)
from shapefuzz.oracles.differential import config_differential, system_differential
from shapefuzz.oracles.metamorphic import metamorphic  # noqa: F811 (the function shadows its module)
from shapefuzz.oracles.replay import replay_agreement
from shapefuzz.oracles.truth import truth_agreement
from shapefuzz.systems.observation import compare_runs  # tests and callers of the oracles use it

__all__ = ["Oracle", "all_oracles", "check_all", "compare_runs", "config_differential",
           "eager_agreement", "finding_names", "get_oracle", "help_table", "metamorphic",
           "register", "replay_agreement", "system_differential", "targets_for_finding",
           "truth_agreement"]

"""The prover: sympy shape expressions translated exactly to z3, and one query, "do these facts
imply this claim?" (Note [exact semantics] in shapefuzz.systems.prover.smt).

A layer below systems and oracles: a system asks it while its artifact is alive (the claims it
made, shapefuzz.systems.claims), an oracle reads the verdicts the observation recorded. It
imports neither (tests/cover/test_layers.py)."""

from shapefuzz.systems.prover.smt import (
    DEFAULT_SETTINGS,
    VERDICTS,
    Compiled,
    SmtSettings,
    Translator,
    Unsupported,
    Verdict,
    parse,
    prove,
    to_z3,
)

__all__ = ["DEFAULT_SETTINGS", "VERDICTS", "Compiled", "SmtSettings", "Translator", "Unsupported",
           "Verdict", "parse", "prove", "to_z3"]

"""The oracle interface: one registered object per oracle (STYLE 1b).

Note [oracle registry]: everything shapefuzz knows about an oracle lives on its `Oracle` object,
in the oracle's own module: its name, severity, one-line help, which program kinds it checks,
the check itself (observations -> findings), which (system, config) observations one of its
findings needs to reproduce (`targets`: shrinking, replay and ref repros ask this), and where the
input that shows a finding is (`replay_input`). Callers iterate the registry (`check_all`,
`targets_for_finding`, `help_table`) and never spell an oracle's name, so a new oracle is one
new module that calls `register(...)`; `--plugin MODULE` registers one from outside the package.

Per-observation oracles (`per_observation=True`) see one observation at a time; the others
compare all of a program's observations. `check_all` runs them in registration order, the
per-observation ones interleaved observation by observation, so the order of findings (which a
campaign's first-finding choice reads) does not depend on how oracles are grouped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from shapefuzz.oracles.findings import SEVERITIES, Finding, Severity
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.kinds import KINDS, kind_of
from shapefuzz.systems.evidence.truth import question_replays
from shapefuzz.systems.observation import BUG, Observation

__all__ = ["BASELINE", "COMPARES", "CheckInput", "Compares", "Oracle", "all_oracles", "check_all", "finding_names", "get_oracle",
           "help_table", "own_target", "register", "targets_for_finding", "with_legacy_evidence"]

Target = tuple[str, str]

#: the mark on the system of an A/B campaign's baseline observations ("make_fx@baseline", Note
#: [A/B workers] in campaign/ab_pool.py); only oracles with `both_sides` see them
BASELINE = "@baseline"


@dataclass(frozen=True, slots=True)
class CheckInput:
    """What an oracle's check sees: the program, eager's observation (None for question
    programs, which carry their own truth), the observation under check (per-observation
    oracles) and every observation of the program."""

    program: object
    eager: Observation | None
    observations: tuple[Observation, ...]
    obs: Observation | None = None
    undefined: frozenset[int] = frozenset()  # outputs whose eager value is undefined


def own_target(finding: Finding, universe: Sequence[Target]) -> tuple[Target, ...]:
    """The default `targets`: the one observation the finding is about."""
    return tuple(t for t in universe if t == (finding.system, finding.config))


def _replays_of(finding: Finding, obs: Observation, kind: str):
    """The default `replay_input`: (replay inputs, alternative values) of the finding's replay
    index: a replayed input of a tensor program, other values of a question program."""
    if KINDS[kind].has_replay_inputs:
        return obs.replays[finding.replay_index].inputs, None
    return None, question_replays(obs)[finding.replay_index].values


class Compares(StrEnum):
    """What a finding's repro compares. A str: the registry and older plugins name it by value."""

    EAGER = "eager"  # the system against eager (or a question program's truth)
    RUNS = "runs"  # two runs of the program on one system (metamorphic)
    #: compiled graphs against their own facts and each other (the finding's symptom says which check)
    GRAPHS = "graphs"
    CONFIGS = "configs"  # one system under several configs
    #: nothing a script can run, only z3's proof (the issue form shows the error, unconfirmed;
    #: question programs: the issue form raises it and runs the proof itself)
    PROOF = "proof"
    FRESH_ENV = "fresh-env"  # one question in the live env against a fresh env with the same facts
    SIZES = "sizes"  # the program's cost against its own family's at several sizes (performance)


COMPARES = tuple(Compares)


@dataclass(frozen=True, slots=True)
class Oracle:
    """One registered oracle (see this module's docstring): `check` maps a program's observations
    (a CheckInput) to findings; the other fields tell callers what its findings need, without
    anyone spelling the oracle's name."""

    name: str
    severity: Severity  # the most severe of its findings (a finding carries its own)
    help: str  # one line, the rule a user reads in a repro's docstring
    check: Callable[[CheckInput], list[Finding]]
    kinds: tuple[str, ...] = tuple(KINDS)  # the program kinds it checks
    per_observation: bool = False
    targets: Callable[[Finding, Sequence[Target]], tuple[Target, ...]] = own_target
    replay_input: Callable[[Finding, Observation, str], tuple] = _replays_of
    #: its own repro forms, tried in order before its system's family (Note [repro forms])
    forms: tuple[ReproForm, ...] = ()
    #: the `Finding.oracle` names its check emits (default: its own name); the z3 module's one
    #: check emits four verdicts from one pass over the recorded claims
    emits: tuple[str, ...] = ()
    #: (emitted name, its own one-line help) where one check emits several verdicts
    helps: tuple[tuple[str, str], ...] = ()
    #: what its findings' repro compares (COMPARES), and per emitted name where they differ
    compares: Compares = Compares.EAGER
    compares_by_name: tuple[tuple[str, Compares], ...] = ()
    rank: int = 100  # check_all's order (plugins after the built-in oracles), then registration
    #: the shapefuzz.repro module that writes its findings' scripts ("": the system's family)
    repro_family: str = ""
    #: sees an A/B campaign's baseline observations too (every other oracle judges one torch)
    both_sides: bool = False
    #: check_all's findings -> those left once its own stand for some (the A/B oracle's
    #: regression stands for the one-torch finding it was made from); None: keeps them all
    #: (the program's observations, both sides; every finding so far) -> the findings kept
    supersedes: Callable[[CheckInput, list[Finding]], list[Finding]] | None = field(default=None)
    #: Note [typed evidence] (shapefuzz.systems.evidence): the frozen dataclass its findings carry
    #: (and systems record for it), None when it needs none; and, for case files written before
    #: findings carried evidence, how to read it off such a finding (None when there is nothing)
    evidence: type | None = None
    legacy_evidence: Callable[[Finding], object] | None = field(default=None)

    def names(self) -> tuple[str, ...]:
        return self.emits or (self.name,)

    def help_of(self, name: str) -> str:
        return dict(self.helps).get(name, self.help)

    def compares_of(self, name: str) -> str:
        return dict(self.compares_by_name).get(name, self.compares)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"oracle {self.name!r}: severity {self.severity!r} is not one of "
                             f"{', '.join(SEVERITIES)}")
        odd = {self.compares, *dict(self.compares_by_name).values()} - set(COMPARES)
        if odd:
            raise ValueError(f"oracle {self.name!r}: compares {sorted(odd)}; known: {', '.join(COMPARES)}")
        # the values checked, the fields hold the Enums (a plugin may name them by value)
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "compares", Compares(self.compares))
        object.__setattr__(self, "compares_by_name", tuple((n, Compares(c)) for n, c in self.compares_by_name))
        bad = set(self.kinds) - set(KINDS)
        if bad:
            raise ValueError(f"oracle {self.name!r}: unknown program kinds {sorted(bad)}; "
                             f"known: {', '.join(KINDS)}")


_REGISTRY: dict[str, Oracle] = {}
_BY_FINDING: dict[str, Oracle] = {}  # Finding.oracle -> the oracle that emits it


def register(oracle: Oracle) -> Oracle:
    for name in (oracle.name, *oracle.names()):
        if name in _BY_FINDING or name in _REGISTRY:
            raise ValueError(f"oracle name {name!r} is registered twice (by "
                             f"{(_BY_FINDING.get(name) or _REGISTRY[name]).check.__module__} and "
                             f"{oracle.check.__module__}); pick another name")
    _REGISTRY[oracle.name] = oracle
    _BY_FINDING.update(dict.fromkeys(oracle.names(), oracle))
    return oracle


def all_oracles() -> tuple[Oracle, ...]:
    """In check_all's order: by rank, then registration (independent of import order)."""
    order = {name: k for k, name in enumerate(_REGISTRY)}
    return tuple(sorted(_REGISTRY.values(), key=lambda o: (o.rank, order[o.name])))


def get_oracle(name: str) -> Oracle:
    """The oracle that emits findings named `name` (a Finding.oracle)."""
    try:
        return _BY_FINDING[name]
    except KeyError:
        raise ValueError(f"unknown oracle {name!r}; known: {', '.join(_BY_FINDING)} (a plugin "
                         "oracle needs its module passed with --plugin)") from None


def finding_names() -> tuple[str, ...]:
    """Every Finding.oracle name a registered oracle emits."""
    return tuple(_BY_FINDING)


def help_table() -> dict[str, str]:
    """Finding.oracle name -> the rule it checks, one line."""
    return {name: o.help_of(name) for name, o in _BY_FINDING.items()}


def targets_for_finding(finding: Finding, universe: Sequence[Target]) -> tuple[Target, ...]:
    """The observations (out of `universe`) that `finding`'s oracle compares."""
    return get_oracle(finding.oracle).targets(finding, tuple(universe))


def check_all(program, eager: Observation | None, observations: Sequence[Observation]) -> list[Finding]:
    """Every registered oracle over one program's observations (Note [oracle registry])."""
    kind = kind_of(program).name
    mine = [o for o in all_oracles() if kind in o.kinds]
    if eager is not None and eager.outcome.status == BUG:
        return []  # Note [shapefuzz bugs] (workers.py): shapefuzz failed, not the program
    both = tuple(o for o in observations if o.outcome.status != BUG)
    observations = tuple(o for o in both if not o.system.endswith(BASELINE))
    undefined = program.undefined_outputs()
    base = CheckInput(program, eager, observations, None, undefined)
    out: list[Finding] = []
    for obs in observations:
        one = CheckInput(program, eager, observations, obs, undefined)
        for o in mine:
            if o.per_observation and not o.both_sides:
                out += o.check(one)
    for o in mine:
        if o.both_sides:
            out += o.check(CheckInput(program, eager, both, None, undefined))
        elif not o.per_observation:
            out += o.check(base)
    whole = CheckInput(program, eager, both, None, undefined)
    for o in mine:
        out = o.supersedes(whole, out) if o.supersedes else out
    return [_outside_supported(f) for f in out]


def with_legacy_evidence(finding: Finding) -> Finding:
    """`finding` as read from a file, with the evidence its oracle reads off it when the file
    holds none.

    Note [evidence of older case files]: case files written before findings carried typed
    evidence (Note [typed evidence]) hold what a repro needs only in the finding's detail, in
    lines the oracle wrote for a machine. Case files are kept for years (corpus/, users' finding
    folders), so the oracle that wrote such lines reads them back (Oracle.legacy_evidence) here,
    once, where a case file is loaded: every later reader sees typed evidence, and nothing else
    parses a detail."""
    o = _BY_FINDING.get(finding.oracle)
    if finding.evidence is not None or o is None or o.legacy_evidence is None:
        return finding
    return replace(finding, evidence=o.legacy_evidence(finding))


def _outside_supported(f: Finding) -> Finding:
    """Note [user settings] (systems/torch_toggles.py): a finding under a setting that only a
    patch of torch can make is low, and says so."""
    from shapefuzz.systems.torch_toggles import unsupported_settings  # lazy: torch-free registry

    patched = unsupported_settings(f.system, f.config)
    if not patched:
        return f
    why = (f"outside torch's supported settings: {f.system} takes no argument for "
           f"{', '.join(patched)}; shapefuzz forced it by patching ShapeEnv.__init__, which also "
           "reaches the ShapeEnvs torch builds for itself")
    return replace(f, severity=Severity.LOW, summary=f"{f.summary} (outside torch's supported settings)",
                   detail=f"{f.detail}\n{why}")


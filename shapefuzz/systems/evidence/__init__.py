"""Typed evidence: what an oracle needs beyond the observation's common fields, as its own
frozen dataclass (STYLE 13), recorded by systems and carried by findings through one interface.

Note [typed evidence]: an oracle whose check needs data only it reads (the history oracle's
fresh-env replays) declares that data as a frozen dataclass with `@declare(oracle_name)`. A
system records it with `record(obs, value)` (the only way evidence enters an observation), an
oracle reads it with `of(obs, Type)`, a finding carries the part that shows it
(`Finding.evidence`), and a repro form reads its fields: `detail` is text for people, and nothing
parses it. Evidence reaches case files and report.json as JSON data (`to_json`) and is read back
by `from_json`, which builds the type registered under the file's oracle name from the fields
that type declares: a file names data, never code, and an unknown name loads as `Unknown` (a
plugin's evidence read without its plugin), kept as it was written.

Where the types live: a system never imports an oracle (tests/cover/test_layers.py), so evidence
a system records is declared in a module of this package (one per oracle, torch-free, shared by
both sides as the observation record is), named on its oracle (`Oracle.evidence`); evidence an
oracle makes itself from the observations, or a plugin's, is declared in its own module. Today:
recorded by systems, `history.HistoryEvidence` (torch-env, make_fx, export),
`truth.QuestionReplays` (torch-env), `metamorphic.Echoes` (question programs' jobs),
`recompile.CallSequence` (compile), `performance.ScalingEvidence` (make_fx) and
`specialization.Specialization` (export); made by
their oracle, `shapefuzz.oracles.ab.ABEvidence` (the baseline, recorded on the baseline's
observations by the A/B pool) and `shapefuzz.oracles.differential.Blame` (the bisection).
"""

from shapefuzz.systems.evidence.base import (
    Evidence,
    Unknown,
    declare,
    declared,
    from_json,
    of,
    record,
    recorded,
    recorder,
    to_json,
)

__all__ = ["Evidence", "Unknown", "declare", "declared", "from_json", "of", "record", "recorded", "recorder",
           "to_json"]

"""What a campaign counts (programs, outcomes, errors by message, ops, decisions, z3 verdicts,
the findings-over-time line), and its JSON form in the checkpoint (Note [resume])."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["CampaignStats", "error_line", "program_hash"]


@dataclass
class CampaignStats:
    programs: int = 0
    valid: int = 0
    outcomes: Counter = field(default_factory=Counter)  # (system, config, outcome status) -> n
    ops: Counter = field(default_factory=Counter)
    decisions: Counter = field(default_factory=Counter)
    timeline: list = field(default_factory=list)  # (elapsed_s, programs, findings)
    shrink_runs: int = 0
    db_replays: int = 0  # examples replayed from the shared database (not counted as programs)
    trace_s: float = 0.0  # time spent waiting for systems (for the overhead figure)
    hashes: list = field(default_factory=list)  # program_hash of every counted program, in order
    smt: Counter = field(default_factory=Counter)  # (oracle, z3 status) -> n (oracles.soundness)
    #: (system, config, "ExcType: first line of the message") -> n, for error / crash / timeout
    errors: Counter = field(default_factory=Counter)

    def count(self, ev, valid: bool, elapsed: float, n_bugs: int) -> None:
        """One evaluated program (shapefuzz.campaign.evaluate.Evaluation)."""
        self.programs += 1
        self.valid += valid
        self.hashes.append(program_hash(ev.program))
        self.ops.update(ev.program.op_names())
        for o in ((ev.eager,) if ev.eager is not None else ()) + ev.observations:
            self.outcomes[(o.system, o.config, o.outcome.status)] += 1
            self.decisions.update(d.how for d in o.decisions)
            self.smt.update((c.oracle, c.status) for c in getattr(o, "smt", ()))
            if o.outcome.status in ("error", "crash", "timeout"):
                self.errors[(o.system, o.config, error_line(o.outcome))] += 1
        self.timeline.append((round(elapsed, 3), self.programs, n_bugs))

    def to_json(self) -> dict:
        return {"programs": self.programs, "valid": self.valid, "shrink_runs": self.shrink_runs,
                "db_replays": self.db_replays, "trace_s": self.trace_s,
                "outcomes": [[*k, n] for k, n in self.outcomes.items()],
                "ops": dict(self.ops), "decisions": dict(self.decisions),
                "timeline": self.timeline[-2000:], "hashes": self.hashes,
                "smt": [[*k, n] for k, n in self.smt.items()],
                "errors": [[*k, n] for k, n in self.errors.items()]}

    @classmethod
    def from_json(cls, s: dict) -> CampaignStats:
        """Raises KeyError / TypeError / ValueError on a malformed state (the caller says so)."""
        return cls(int(s["programs"]), int(s["valid"]),
                   Counter({(a, b, c): n for a, b, c, n in s["outcomes"]}), Counter(s["ops"]),
                   Counter(s["decisions"]), [tuple(x) for x in s["timeline"]], int(s["shrink_runs"]),
                   int(s.get("db_replays", 0)), float(s["trace_s"]), [str(h) for h in s["hashes"]],
                   Counter({(a, b): int(n) for a, b, n in s.get("smt", [])}),
                   Counter({(a, b, c): int(n) for a, b, c, n in s.get("errors", [])}))


def error_line(outcome) -> str:
    """What report.json counts an error outcome by: its type and the first line of its message
    (numbers kept: they tell a hidden config entry from an out-of-bounds index)."""
    first = (outcome.message or "").strip().splitlines()[:1]
    return f"{outcome.exc_type}: {first[0][:160] if first else ''}"


def program_hash(program) -> str:
    return hashlib.sha256(program.dumps().encode()).hexdigest()[:16]

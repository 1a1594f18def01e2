"""Case files: a finding (or a pinned regression) on disk, one folder per case with case.json,
repro.py and log.txt. Writes are atomic (temp file + rename) and folders are content-addressed by
signature, so concurrent campaigns never clobber each other and a half-written file is never read
as a case. Loading validates everything and never evaluates code from the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shapefuzz import BadInput
from shapefuzz.cases import versions
from shapefuzz.oracles.base import with_legacy_evidence
from shapefuzz.oracles.findings import SEVERITIES, Finding
from shapefuzz.program import InputSpec, Program, ProgramError, _input_from_json
from shapefuzz.program.kinds import kind_of, load_program
from shapefuzz.systems import CONFIGS, SYSTEMS
from shapefuzz.systems.observation import to_jsonable

__all__ = [
    "CASE_SCHEMA",
    "STATE_FILE",
    "STATUSES",
    "Case",
    "CaseError",
    "IssueCut",
    "atomic_write",
    "case_dirname",
    "clear_campaign",
    "finished_campaign",
    "load_case",
    "load_state",
    "record_version",
    "save_case",
    "save_state",
    "size_problem",
]

CASE_SCHEMA = 1
STATUSES = ("bug", "fixed", "known-upstream")


class CaseError(BadInput):
    """A case file is unreadable or malformed; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class IssueCut:
    """The part of a case its repro.py shows (Note [issue form reduction] in
    shapefuzz/repro/reduce.py): the kept instruction positions and the values returned (None:
    the whole program), and for a call sequence the kept calls (None: all, up to the finding's)."""

    instrs: tuple[int, ...] | None = None
    outputs: tuple[int, ...] = ()
    calls: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Case:
    finding: Finding
    program: Program
    replay_inputs: tuple[InputSpec, ...] | None
    status: str = "bug"
    torch_config: tuple[tuple[str, Any], ...] = ()
    torch_version: str = ""
    upstream: str = ""
    path: str = ""
    #: branches the trace sent to their fallback arm (the reference forces them there)
    fallback_branches: tuple[int, ...] = ()
    #: question programs: the other values under which an unsound claim shows (qreplay)
    alt_values: tuple[int, ...] | None = None
    #: what repro.py shows of the program, when the issue form was reduced at confirmation
    issue_cut: IssueCut | None = None
    #: Note [versions of a case]: (torch release, whether it reproduces there), as replayed
    versions: tuple[tuple[str, bool], ...] = ()

    def expected_to_reproduce(self, release: str) -> bool:
        """What a replay on torch `release` must show: the recorded result for that release,
        else what the status says (bug and known-upstream reproduce, fixed does not)."""
        return dict(self.versions).get(release, self.status != "fixed")

    def to_json(self, observation: Any = None) -> dict:
        return {
            "schema": CASE_SCHEMA, "kind": "shapefuzz-case", "status": self.status,
            "finding": to_jsonable(self.finding.to_json()), "program": self.program.to_json(),
            "replay_inputs": None if self.replay_inputs is None else
            [to_jsonable(s) for s in self.replay_inputs],
            "torch_config": [list(kv) for kv in self.torch_config],
            "torch_version": self.torch_version, "upstream": self.upstream,
            "fallback_branches": list(self.fallback_branches),
            "alt_values": None if self.alt_values is None else list(self.alt_values),
            "issue_cut": None if self.issue_cut is None else to_jsonable(self.issue_cut),
            "versions": {v: "reproduces" if r else "fixed" for v, r in self.versions},
            "observation": to_jsonable(observation) if observation is not None else None,
        }


def case_dirname(f: Finding) -> str:
    return f"{f.oracle}-{f.system}-{hashlib.sha256(f.key.encode()).hexdigest()[:10]}"


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600: readable as any file the user writes
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_case(root: Path, case: Case, repro: str, log: str, observation: Any = None,
              check: str | None = None) -> Path:
    """repro.py (the issue form), check.py (the full harness, when given), log.txt, case.json."""
    d = Path(root) / case_dirname(case.finding)
    # the scripts and log.txt first: case.json is written last, so its presence means "complete".
    atomic_write(d / "repro.py", repro)
    if check is not None:
        atomic_write(d / "check.py", check)
    atomic_write(d / "log.txt", log)
    atomic_write(d / "case.json", json.dumps(case.to_json(observation), indent=1, sort_keys=True))
    return d


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:=+-]{0,79}")
#: the finding's keys in case.json: "kind" is the symptom (Note [file keys])
_FINDING_FIELDS = {"oracle": str, "severity": str, "system": str, "config": str, "kind": str,
                   "summary": str, "detail": str, "signature": str, "replay_index": int}


def load_case(path: str | os.PathLike) -> Case:
    p = Path(path)
    if p.is_dir():
        p = p / "case.json"
    try:
        raw = p.read_bytes()
        if len(raw) > 20_000_000:
            raise CaseError(f"{p}: file is larger than 20 MB; not a shapefuzz case")
        obj = json.loads(raw)
    except FileNotFoundError:
        raise CaseError(f"{p}: no such case file (give a case folder or its case.json)") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise CaseError(f"{p}: not valid JSON ({type(e).__name__}); the file is truncated or corrupt") from None
    except OSError as e:
        raise CaseError(f"{p}: cannot read ({e.strerror})") from None
    try:
        return _case_from_json(obj, str(p.parent))
    except (ProgramError, CaseError) as e:
        raise CaseError(f"{p}: {e}") from None


def _case_from_json(obj: Any, where: str) -> Case:
    if not isinstance(obj, dict) or obj.get("kind") != "shapefuzz-case":
        raise CaseError("not a shapefuzz case (missing \"kind\": \"shapefuzz-case\")")
    if obj.get("schema") != CASE_SCHEMA:
        raise CaseError(f"case schema {obj.get('schema')!r} is not supported (expected {CASE_SCHEMA})")
    status = obj.get("status")
    if status not in STATUSES:
        raise CaseError(f"status {status!r} must be one of {STATUSES}")
    f = obj.get("finding")
    if not isinstance(f, dict):
        raise CaseError("field 'finding' must be an object")
    for k, t in _FINDING_FIELDS.items():
        if not isinstance(f.get(k), t) or isinstance(f.get(k), bool):
            raise CaseError(f"finding.{k} must be a {t.__name__}")
    if f["system"] not in SYSTEMS:
        raise CaseError(f"unknown system {f['system']!r}; known: {', '.join(SYSTEMS)}")
    if f["config"] not in CONFIGS.get(f["system"], ()):
        raise CaseError(f"unknown config {f['config']!r} of {f['system']}; known: "
                        f"{', '.join(CONFIGS.get(f['system'], ()))}")
    if f["severity"] not in SEVERITIES:
        raise CaseError(f"finding.severity {f['severity']!r} must be one of {SEVERITIES}")
    for k in ("oracle", "kind"):  # these reach repro.py's text: names only, nothing to inject
        if not _NAME.fullmatch(f[k]):
            raise CaseError(f"finding.{k} {f[k][:60]!r} is not a name (letters, digits, - _ . : =)")
    try:
        finding = Finding.from_json({k: f[k] for k in (*_FINDING_FIELDS, "signature_fields", "evidence") if k in f})
    except ValueError as e:  # the evidence does not fit its oracle's type (Note [typed evidence])
        raise CaseError(f"finding.evidence: {e}") from None
    finding = with_legacy_evidence(finding)
    program = load_program(obj.get("program"))
    ri = obj.get("replay_inputs")
    replay = None
    if ri is not None and not kind_of(program).has_replay_inputs:
        raise CaseError(f"{kind_of(program).name} programs have no replay inputs")
    if ri is not None:
        if not isinstance(ri, list) or len(ri) != len(program.inputs):
            raise CaseError("replay_inputs must list one input per program input")
        replay = tuple(_input_from_json(k, s) for k, s in enumerate(ri))
    tc = obj.get("torch_config", [])
    if not isinstance(tc, list) or not all(
            isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str) and kv[0].isidentifier()
            and isinstance(kv[1], (bool, int, float, str)) for kv in tc):
        raise CaseError("torch_config must be a list of [identifier, scalar] pairs")
    fb = obj.get("fallback_branches", [])
    if not isinstance(fb, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(program.instrs) for i in fb):
        raise CaseError("fallback_branches must list instruction indices of the program")
    alt = obj.get("alt_values")
    if alt is not None and not (isinstance(alt, list) and all(
            isinstance(x, int) and not isinstance(x, bool) and abs(x) <= 2**40 for x in alt)):
        raise CaseError("alt_values must be a list of integers")
    return Case(finding, program, replay, status, tuple(tuple(kv) for kv in tc),
                str(obj.get("torch_version", "")), str(obj.get("upstream", "")), where, tuple(fb),
                None if alt is None else tuple(alt), _cut_from_json(obj.get("issue_cut"), program),
                _versions_from_json(obj.get("versions", {})))


# Note [versions of a case]: a corpus case records, per torch release it was replayed on, whether
# it reproduces there (`shapefuzz replay --record`), so the corpus test expects each release's own
# result: a bug fixed in 2.14.1 passes on 2.14.1 and still fails on 2.13.0, and a release (or a
# nightly) the case was never replayed on expects what the status says.
_RESULTS = {"reproduces": True, "fixed": False}


def _versions_from_json(obj: Any) -> tuple[tuple[str, bool], ...]:
    if not isinstance(obj, dict) or not all(
            isinstance(k, str) and _NAME.fullmatch(k) and isinstance(v, str) and v in _RESULTS
            for k, v in obj.items()):
        raise CaseError('versions must map torch releases to "reproduces" or "fixed", '
                        'e.g. {"2.13.0": "reproduces"}')
    return tuple(sorted((k, _RESULTS[v]) for k, v in obj.items()))


def _cut_from_json(obj: Any, program) -> IssueCut | None:
    """Indices only: instruction positions and values of the program, call numbers (a crafted
    cut can make repro.py show less of the program, never anything else)."""
    if obj is None:
        return None
    if not isinstance(obj, dict) or set(obj) - {"instrs", "outputs", "calls"}:
        raise CaseError("issue_cut must be an object with instrs, outputs and calls")
    n_values = getattr(program, "n_values", lambda: 0)()  # a question program returns nothing
    n_instrs = len(program.instrs)

    def indices(key: str, bound: int) -> tuple[int, ...] | None:
        v = obj.get(key)
        if v is None and key != "outputs":
            return None
        if not isinstance(v, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < bound for i in v):
            raise CaseError(f"issue_cut.{key} must list indices below {bound}")
        return tuple(v)

    return IssueCut(indices("instrs", n_instrs), indices("outputs", n_values), indices("calls", 64))


def record_version(folder: Path, reproduces: bool) -> str:
    """Write into folder/case.json whether the case reproduces on the running torch release
    (Note [versions of a case]); the rest of the file is kept as it is. Returns what it wrote."""
    p = folder / "case.json"
    obj = json.loads(p.read_bytes())
    _case_from_json(obj, str(folder))  # a file this module would refuse is not rewritten
    rel = versions.running_release()
    obj["versions"] = {**obj.get("versions", {}), rel: "reproduces" if reproduces else "fixed"}
    atomic_write(p, json.dumps(obj, indent=1, sort_keys=True))
    return f"{rel}: {obj['versions'][rel]}"


# ---- campaign checkpoints (Note [resume] in campaign.py) ----------------------------------------
STATE_FILE = "campaign-state.json"


def save_state(out: Path, state: dict) -> None:
    atomic_write(Path(out) / STATE_FILE, json.dumps(state, separators=(",", ":")))


def load_state(out: Path) -> dict | None:
    """The checkpoint of an unfinished campaign in `out`, or None (none, or it finished)."""
    p = Path(out) / STATE_FILE
    try:
        state = json.loads(p.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        # atomic writes make a torn checkpoint impossible; anything else is not ours to guess at
        raise CaseError(f"{p}: unreadable campaign state ({type(e).__name__}); remove it to start "
                        "afresh (saved findings stay)") from None
    if not isinstance(state, dict):
        raise CaseError(f"{p}: not a campaign state; remove it to start afresh (saved findings stay)")
    return None if state.get("finished") else state


def finished_campaign(out: Path) -> bool:
    """`out` holds the reports of a campaign that ran to its end (a rerun there would replace
    its report and mix its finding folders with new ones)."""
    p = Path(out) / STATE_FILE
    if not p.exists():
        return (Path(out) / "report.json").exists()
    try:
        return load_state(out) is None
    except CaseError:
        return False


def clear_campaign(out: Path) -> None:
    """Remove a finished campaign's reports, finding folders and state (fuzz --force)."""
    import shutil

    for name in ("report.json", "report.md", "report.html", "programs.txt", "workers.log", STATE_FILE):
        (Path(out) / name).unlink(missing_ok=True)
    shutil.rmtree(Path(out) / "findings", ignore_errors=True)


# ---- replay limits ------------------------------------------------------------------------------
def size_problem(case: Case, max_elements: int) -> str | None:
    """Why replaying `case` could allocate past `max_elements` elements, or None. Generated
    programs stay far below (Note [bounded sizes]); a larger input or integer (an item() value
    or a literal that becomes a size) only comes from a hand-edited or hostile file."""
    if not hasattr(case.program, "inputs"):
        return None  # no tensors: question programs only ask a ShapeEnv about integers
    inputs = tuple(case.program.inputs) + tuple(case.replay_inputs or ())
    for s in inputs:
        n = 1
        for d in s.shape:
            n *= d
        if n > max_elements:
            return f"input {s.name} has {n} elements, more than --max-elements {max_elements}"
    big = _largest_int(case.program.to_json())
    for s in case.replay_inputs or ():
        big = max(big, _largest_int(list(s.data)))
    if big > max_elements:
        return f"an integer of magnitude {big} could size a tensor past --max-elements {max_elements}"
    return None


def _largest_int(obj: Any) -> int:
    if isinstance(obj, bool):
        return 0
    if isinstance(obj, int):
        return abs(obj)
    if isinstance(obj, float):
        return abs(int(obj)) if obj == obj and abs(obj) != float("inf") else 0
    if isinstance(obj, dict):
        return max((_largest_int(v) for v in obj.values()), default=0)
    if isinstance(obj, list | tuple):
        return max((_largest_int(v) for v in obj), default=0)
    return 0

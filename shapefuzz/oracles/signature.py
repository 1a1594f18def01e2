"""Finding signatures: the dedupe key of a finding (STYLE 5), a frozen value.

Note [signature]: a signature names a bug, not a program. It holds what stays the same when the
same bug is met again in another program, run or seed, and what tells two bugs apart:

- the oracle and the systems it compared;
- the config delta: the config name, or for a config differential the guilty toggle when the
  single-toggle configs name it (blame), so "agfs=2" and "all-on" failing for one toggle merge;
- the symptom: the finding's symptom (trace-error, wrong-shape ...), with the symptoms that are
  one bug folded into a class (SYMPTOM_CLASSES: a wrong claim on the traced values and one only
  on replayed values are the same bug met with other values);
- where: the exception type and top torch frame, the output's sort, or the question mode when the
  mode itself is the symptom (a wrong fallback);
- the shape of the expression involved, normalized: symbols renamed by sort (B backed, U unbacked),
  every constant (integers and True/False) abstracted to C, relations folded into two families
  (Eq for == / !=, Cmp for orderings), and subterms nested deeper than three levels elided. So
  `Ne(s75**2, 0)` and `Eq(s3**2, 7)` share a shape, and an answer torch's sympy had already
  simplified to a constant (say, a size-0 backed symbol assumed positive) shows as `C` whatever
  the question was.

- the root cause (Note [root cause], program/interp.py): the first instruction whose observation
  diverges from eager's (its symbolic result evaluates to another shape or value, or it raised),
  as `at=<family>.<op>`, and for an error the torch op being dispatched when it was raised
  (`@aten.slice.Tensor`); the exception's innermost torch frame stays in `where` too. So a
  squeeze that keeps an unbacked dim is one bucket whether the squeezed tensor is returned,
  broadcast or summed afterwards, and narrow() and slicing that fail in the same torch frame are
  two.

Messages, symbol numbers, constants and program text never enter a signature: they change from
run to run. The key string is `oracle:symptom:systems:config[:shape][:where...]`; findings
without an expression keep the key they had before shapes were added (known_issues.json relies
on that)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

__all__ = ["MAX_DEPTH", "SYMPTOM_CLASSES", "Signature", "expr_shape", "make_signature", "mismatch_shape",
           "root_where"]

#: subterms nested deeper than this are elided ("…"): the outer structure names the bug, inner
#: detail is mostly the program's
MAX_DEPTH = 3

_TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|\*\*|//|==|!=|<=|>=|[^\sA-Za-z_0-9]")
_RELATIONS = {"Eq": "Eq", "Ne": "Eq", "==": "Eq", "!=": "Eq", "Lt": "Cmp", "Le": "Cmp", "Gt": "Cmp",
              "Ge": "Cmp", "StrictLessThan": "Cmp", "StrictGreaterThan": "Cmp", "LessThan": "Cmp",
              "GreaterThan": "Cmp", "<": "Cmp", "<=": "Cmp", ">": "Cmp", ">=": "Cmp"}
_CONSTANTS = {"True", "False", "true", "false", "oo", "zoo", "nan", "int_oo", "inf"}


@dataclass(frozen=True, slots=True, eq=False)
class Signature:
    """Note [signature]. Two signatures are the same bug when their keys are equal: a key read
    back from an old case file (`from_key`) equals the signature computed afresh."""

    oracle: str
    symptom: str  # the finding's symptom, folded (SYMPTOM_CLASSES)
    systems: tuple[str, ...]
    config: str  # config name, or the guilty toggle of a config differential
    shape: str = ""  # normalized expression shape, "" when no expression is involved
    where: tuple[str, ...] = ()  # exception type and torch frame / output's sort / mode
    #: the (system, config) pairs a front-end differential compares (rendered a0:a1-vs-b0:b1 in
    #: place of systems and config)
    pair: tuple[tuple[str, str], ...] = ()
    raw: str = ""  # a key from outside that the fields do not render back exactly (from_key)

    def key(self) -> str:
        if self.raw:
            return self.raw
        who = ("-vs-".join(f"{s}:{c}" for s, c in self.pair),) if self.pair else (
            "+".join(self.systems), self.config)
        parts = (self.oracle, self.symptom, *who, self.shape, *self.where)
        return ":".join(p for p in parts if p)

    def bucket(self) -> str:
        """The key with the config as `*`: one root cause met under several configs (Note
        [buckets up to the config] in report/buckets.py). A config differential's config is its
        guilty toggle, a root cause of its own, and a front-end pair or a raw key stay whole."""
        if self.raw or self.pair or not self.config or self.oracle == "config-differential":
            return self.key()
        return replace(self, config="*").key()

    def __str__(self) -> str:
        return self.key()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self.key() == other.key()

    def __lt__(self, other: Signature) -> bool:
        return self.key() < other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    @classmethod
    def from_key(cls, key: str, configs: tuple[str, ...] = ()) -> Signature:
        """The signature a rendered key names (case files, known issues). oracle, symptom,
        systems, config (the longest of `configs` that fits, config names may hold ':') and a
        front-end pair are read back; the rest stays one opaque `where`. The key itself is
        kept exactly."""
        oracle, _, rest = key.partition(":")
        symptom, _, rest = rest.partition(":")
        m = _PAIR.match(rest)
        if m:
            sig = cls(oracle, symptom, (m[1], m[3]), m[4], "", _tail(m[5]),
                      pair=((m[1], m[2]), (m[3], m[4])))
        else:
            systems, _, rest = rest.partition(":")
            fits = [c for c in configs if rest == c or rest.startswith(c + ":")]
            config = max(fits, key=len) if fits else rest.partition(":")[0]
            sig = cls(oracle, symptom, tuple(systems.split("+")) if systems else (), config, "",
                      _tail(rest[len(config) + 1:]))
        return sig if sig.key() == key else cls(sig.oracle, sig.symptom, sig.systems, sig.config,
                                                sig.shape, sig.where, sig.pair, raw=key)

    def to_json(self) -> dict:
        return {"oracle": self.oracle, "symptom": self.symptom, "systems": list(self.systems),
                "config": self.config, "shape": self.shape, "where": list(self.where),
                "pair": [list(p) for p in self.pair]}

    @classmethod
    def from_json(cls, obj: dict) -> Signature:
        """Raises TypeError / KeyError / ValueError on a malformed object (the case loader
        turns them into a one-line CaseError)."""
        strs = lambda xs: tuple(str(x) for x in xs if isinstance(x, str)) if isinstance(xs, list) else ()
        pair = tuple((str(a), str(b)) for a, b in obj.get("pair", []))
        return cls(str(obj["oracle"]), str(obj["symptom"]), strs(obj["systems"]),
                   str(obj["config"]), str(obj.get("shape", "")), strs(obj.get("where", [])), pair)


_PAIR = re.compile(r"^([\w.=+-]+):([\w.=+-]+)-vs-([\w.=+-]+):([\w.=+-]+)(?::(.*))?$")


def _tail(rest: str | None) -> tuple[str, ...]:
    return (rest,) if rest else ()


#: finding symptoms that are one bug: a wrong claim (or value expression) shows on the traced
#: values or only on other values that pass every guard (qreplay) depending on the values the
#: program happened to draw, not on the bug; and how the claim was made (static, guard, assert,
#: hint) follows from the program's facts too
SYMPTOM_CLASSES = {"wrong-static": "wrong-claim", "wrong-guard": "wrong-claim", "wrong-assert": "wrong-claim",
                   "wrong-hint": "wrong-claim", "unsound-guards": "wrong-claim",
                   "unsound-value-expr": "wrong-value-expr"}


def make_signature(oracle: str, symptom: str, systems: tuple[str, ...] | str, config: str,
                   *where: str, expr: str = "", shape: str = "") -> Signature:
    """`expr`: the expression involved (normalized here); `shape`: an already normalized shape
    (e.g. from mismatch_shape)."""
    systems = (systems,) if isinstance(systems, str) else tuple(systems)
    return Signature(oracle, SYMPTOM_CLASSES.get(symptom, symptom), systems, config,
                     shape or (expr_shape(expr) if expr else ""), tuple(w for w in where if w))


def root_where(op: str, aten: str = "", family: str = "") -> str:
    """The root-cause part of a signature (Note [signature]): `at=family.op@aten`, "" when the
    op is unknown (the finding keeps its symptom's where). The family is the op registry's."""
    if not op:
        return ""
    from shapefuzz.ops import op_where  # lazy: registry import stays torch-free

    return f"at={f'{family}.{op}' if family else op_where(op)}" + (f"@{aten}" if aten else "")


def mismatch_shape(expr: str, got: str, want: str) -> str:
    """The shape of what is wrong in a symbolic output shape, not of the whole output (which is
    the program's): `rank+1` when the symbolic shape has one dim more than eager's, else the
    normalized expressions of the dims that evaluate wrong. E.g. a squeeze that keeps an
    unbacked dim gives rank+1 whether the output was [u0] or [u0 - 1, u0]."""
    dims, got_d, want_d = _dims(expr), _dims(got), _dims(want)
    if expr.lstrip().startswith("[") and len(got_d) != len(want_d):
        return f"rank{len(got_d) - len(want_d):+d}"
    bad = [expr_shape(e) for e, g, w in zip(dims, got_d, want_d) if g != w]
    return "[" + ", ".join(bad) + "]" if expr.lstrip().startswith("[") else expr_shape(expr)


def _dims(text: str) -> list[str]:
    """Top-level items of "[a, f(b, c)]" (a scalar: one item)."""
    t = text.strip()
    if not (t.startswith("[") and t.endswith("]")):
        return [t]
    out, depth, cur = [], 0, ""
    for ch in t[1:-1]:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def expr_shape(text: str, max_depth: int = MAX_DEPTH) -> str:
    """The normalized shape of a sympy expression as text (see Note [signature]). Token based:
    the text is never evaluated, so a hostile case file cannot run code through it."""
    out: list[str] = []
    depth = 0
    for tok in _TOKEN.findall(str(text)[:4000]):
        if tok.isspace():
            continue
        if tok in ")]":
            depth -= 1
        if depth >= max_depth:  # inside an elided subterm: one "…" for all of it
            if out[-1:] != ["…"]:
                out.append("…")
        else:
            out.append(_norm(tok))
        if tok in "([":
            depth += 1
    return _join(out)


def _norm(tok: str) -> str:
    sort = {"s": "B", "u": "U", "v": "V"}.get(tok[:1]) if tok[1:].isdigit() else None
    if sort:  # torch's backed s<N> / unbacked u<N>, question-program values v<N>
        return sort
    if tok[:1].isdigit() or tok in _CONSTANTS:
        return "C"
    return _RELATIONS.get(tok, tok)


def _join(toks: list[str]) -> str:
    s = " ".join(t for k, t in enumerate(toks) if not (t == "…" and k and toks[k - 1] == "…"))
    s = re.sub(r"([\w…]) \(", r"\1(", s)  # f (x) -> f(x)
    s = re.sub(r"([(\[]) ", r"\1", s)
    return re.sub(r" ([)\],])", r"\1", s)

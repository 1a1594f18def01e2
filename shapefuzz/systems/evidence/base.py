"""The evidence interface (Note [typed evidence] in this package's __init__): the registry of
evidence types by oracle name, the map an observation carries, recording, and the JSON codec."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

__all__ = ["Evidence", "Unknown", "declare", "declared", "from_json", "of", "record", "recorded", "recorder",
           "to_json"]

_TYPES: dict[str, type] = {}  # oracle name -> its evidence type
_NAMES: dict[type, str] = {}  # and back
_RECORDERS: list[Callable[[Any, Any], Any]] = []


def declare(oracle: str) -> Callable[[type], type]:
    """Class decorator: `cls` is the evidence of the oracle (its Finding.oracle name) `oracle`.
    A frozen dataclass, so evidence stays a value (STYLE 2)."""
    def register(cls: type) -> type:
        params = getattr(cls, "__dataclass_params__", None)
        if params is None or not params.frozen:
            raise TypeError(f"evidence {cls.__qualname__} of oracle {oracle!r} must be a frozen dataclass")
        known = _TYPES.get(oracle)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise ValueError(f"oracle {oracle!r} already declares evidence {known.__qualname__}; "
                             f"one evidence type per oracle (not {cls.__qualname__})")
        _TYPES[oracle], _NAMES[cls] = cls, oracle
        return cls
    return register


def declared(oracle: str) -> type | None:
    """The evidence type `oracle` declared, None when none."""
    return _TYPES.get(oracle)


@dataclass(frozen=True, slots=True)
class Unknown:
    """Evidence of an oracle whose type is not registered here (a plugin's, read without its
    plugin): the JSON data as the file held it, written back unchanged."""

    oracle: str
    data: Any

    def __hash__(self) -> int:  # its data is JSON (dicts, lists): a finding holding it stays hashable
        return hash((self.oracle, json.dumps(self.data, sort_keys=True)))


def _name_of(value: Any) -> str:
    if isinstance(value, Unknown):
        return value.oracle
    try:
        return _NAMES[type(value)]
    except KeyError:
        raise TypeError(f"{type(value).__qualname__} is no declared evidence type: decorate it with "
                        "@declare(oracle_name) (shapefuzz.systems.evidence)") from None


@dataclass(frozen=True, slots=True)
class Evidence:
    """The evidence an observation carries, by oracle name: `obs.evidence[name]`, `.get(name)`.
    A tuple of pairs inside, so it stays a value that pickles and compares."""

    items: tuple[tuple[str, Any], ...] = ()

    def __getitem__(self, oracle: str) -> Any:
        for name, value in self.items:
            if name == oracle:
                return value
        raise KeyError(oracle)

    def get(self, oracle: str, default: Any = None) -> Any:
        return next((value for name, value in self.items if name == oracle), default)

    def __contains__(self, oracle: object) -> bool:
        return any(name == oracle for name, _ in self.items)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self.items)

    def __len__(self) -> int:
        return len(self.items)

    def with_value(self, value: Any) -> Evidence:
        """This map with `value` under its oracle's name (replacing what was there)."""
        name = _name_of(value)
        return Evidence(tuple((n, v) for n, v in self.items if n != name) + ((name, value),))


NONE = Evidence()


def record(obs: Any, value: Any) -> Any:
    """`obs` (an Observation) with `value`, a declared evidence, recorded under its oracle's name:
    the one way a system records evidence."""
    return dataclasses.replace(obs, evidence=obs.evidence.with_value(value))


def of(holder: Any, cls: type) -> Any:
    """The evidence of type `cls` an observation or a finding holds, else None."""
    ev = getattr(holder, "evidence", None)
    value = ev.get(_NAMES.get(cls, "")) if isinstance(ev, Evidence) else ev
    return value if isinstance(value, cls) else None


def recorder(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Decorator: `fn(program, obs)` returns evidence to record on every observation a job makes
    (or None). For an oracle whose evidence no built-in system knows of (a plugin's): the
    systems run the recorders where every job ends (`recorded`), never the oracle."""
    _RECORDERS.append(fn)
    return fn


def recorded(program: Any, obs: Any) -> Any:
    """`obs` with what every registered recorder returns for it recorded."""
    for fn in _RECORDERS:
        value = fn(program, obs)
        obs = obs if value is None else record(obs, value)
    return obs


# ---- JSON ------------------------------------------------------------------------------------------


def to_json(value: Any) -> dict | None:
    """{"oracle": name, "data": fields as JSON} of an evidence value (None for None)."""
    if value is None:
        return None
    if isinstance(value, Unknown):
        return {"oracle": value.oracle, "data": value.data}
    return {"oracle": _name_of(value), "data": _plain(value)}


def _plain(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Enum):
        return x.value
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    return x


def from_json(obj: Any) -> Any:
    """The inverse of to_json: the type registered under obj["oracle"], built field by field as its
    annotations say (nested dataclasses, tuples, Enums, scalars); a ValueError names what does not
    fit. Nothing in the file names a type or code: the oracle name picks a registered type."""
    if obj is None:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("oracle"), str) or "data" not in obj:
        raise ValueError("evidence must be {\"oracle\": name, \"data\": fields}")
    cls = _TYPES.get(obj["oracle"])
    return Unknown(obj["oracle"], obj["data"]) if cls is None else _build(cls, obj["data"], "evidence")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(tp: Any, x: Any, where: str) -> Any:
    if dataclasses.is_dataclass(tp):
        if not isinstance(x, dict):
            raise ValueError(f"{where} must be an object of {tp.__qualname__}'s fields")
        hints, names = _hints(tp), {f.name for f in dataclasses.fields(tp) if f.init}
        odd = set(x) - names
        if odd:
            raise ValueError(f"{where}: {tp.__qualname__} has no field {sorted(odd)[0]!r}")
        return tp(**{k: _build(hints[k], v, f"{where}.{k}") for k, v in x.items()})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(args, x, where)
    if origin is tuple:
        if not isinstance(x, list):
            raise ValueError(f"{where} must be a list")
        each = args[:1] * len(x) if len(args) == 2 and args[1] is Ellipsis else args
        if len(each) != len(x):
            raise ValueError(f"{where} must hold {len(each)} values, not {len(x)}")
        return tuple(_build(t, v, f"{where}[{k}]") for k, (t, v) in enumerate(zip(each, x)))
    return _scalar(tp, x, where)


def _union(args: tuple, x: Any, where: str) -> Any:
    if x is None and type(None) in args:
        return None
    for t in (a for a in args if a is not type(None)):
        try:
            return _build(t, x, where)
        except ValueError:
            continue
    raise ValueError(f"{where}: {x!r:.60} fits none of {args}")


def _scalar(tp: Any, x: Any, where: str) -> Any:
    if tp is Any:
        return x
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(x)
    if tp is float and isinstance(x, int) and not isinstance(x, bool):
        return float(x)
    if tp in (str, int, float, bool) and (type(x) is not tp):
        raise ValueError(f"{where} must be of type {tp.__name__}, not {type(x).__name__}")
    return x

"""Hostile case files: loading must return a Program or raise ProgramError, nothing else, and no
accepted program can carry code into the generated repro."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from shapefuzz.cases.corpus import CaseError, load_case
from shapefuzz.cli import main
from shapefuzz.ops import all_ops
from shapefuzz.program import Program, ProgramError, codegen
from shapefuzz.repro import repro_source
from shapefuzz.strategies import programs

PAYLOADS = [
    "x); import os; os.system('echo pwned') #",
    "__import__('os').system('echo pwned')",
    "0) or __import__('os')",
    "\nimport os\n",
    "v0.__class__",
    "exec",
]
# Names generated source may use: the repro's imports, SSA values, float('nan')-style literals and
# int(SymBool) (cond_int's "int" mode).
ALLOWED_NAMES = {"torch", "guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false",
                 "float", "int"}


def load_text(text: str | bytes):
    """The CLI's loading path. A parse error is fine; after parsing, ProgramError or a Program."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # JSONDecodeError (a ValueError), bad encoding, int digit limit, deep nesting
    return load_obj(obj)


def load_obj(obj):
    try:
        p = Program.from_json(obj)
    except ProgramError as e:
        assert str(e)  # a message saying what is wrong
        return None
    assert isinstance(p, Program)
    assert_harmless(p)
    return p


def assert_harmless(p: Program) -> None:
    """Anything accepted renders to source that only names torch, the guard functions and vK."""
    p.pretty()
    assert_source_harmless(codegen.function_source(p))
    ast.parse(codegen.program_to_python(p))


def _fixed_lambdas() -> set[str]:
    """The lambdas ops may emit come from fixed tables in shapefuzz (cond arms, flex score
    mods), never from a case file: their exact source is allowed, nothing else."""
    from shapefuzz.ops.control import ARMS
    from shapefuzz.ops.linalg import SCORE_MODS

    srcs = {f"lambda t: {a[k]}" for a in ARMS.values() for k in (0, 2)}
    srcs |= {m[1] for m in SCORE_MODS.values()}
    return {ast.unparse(ast.parse(x, mode="eval").body) for x in srcs}


def assert_source_harmless(src: str) -> None:
    fixed = _fixed_lambdas()
    lambda_names = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Lambda):
            assert ast.unparse(node) in fixed, src
            lambda_names |= {a.arg for a in node.args.args}
        assert not isinstance(node, (ast.Import, ast.ImportFrom, ast.Global)), src
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Name):
            assert node.id in ALLOWED_NAMES | lambda_names or (
                node.id[0] == "v" and node.id[1:].isdigit()), src
        if isinstance(node, ast.Attribute):
            assert not node.attr.startswith("_") or node.attr in ("_check", "_check_is_size"), src
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert node.value in ("nan", "inf", "-inf"), src  # only float('nan') literals


# ---- strategies for hostile documents -----------------------------------------------------------
leaves = (st.none() | st.booleans() | st.integers() | st.floats()
          | st.text(max_size=12) | st.sampled_from(PAYLOADS))
json_values = st.recursive(leaves, lambda c: st.lists(c, max_size=4)
                           | st.dictionaries(st.text(max_size=6), c, max_size=4), max_leaves=20)

OP_NAMES = sorted(all_ops())
ENUMS = ["+", "-", "//", "%", "max", "<", ">=", "==", "sum", "first", "float", "int", "bool", "if",
         "guard_or_false", "guard_or_true", "statically_known_true", "eq", "slice_all", "cat_empty"]
small_args = st.recursive(
    st.integers(-3, 8) | st.sampled_from(ENUMS + PAYLOADS) | st.none() | st.booleans()
    | st.floats(allow_nan=True) | st.builds(lambda k: {"v": k}, st.integers(-1, 6))
    | st.sampled_from([{"float": "nan"}, {"float": "inf"}, {"v": True}, {}]),
    lambda c: st.lists(c, max_size=3), max_leaves=6)
structured = st.fixed_dictionaries({
    "schema": st.just(1),
    "inputs": st.lists(st.sampled_from([
        {"name": "x0", "dtype": "int", "shape": [3], "dims": ["dynamic"], "data": [1, 2, 3]},
        {"name": "m", "dtype": "bool", "shape": [2, 2], "dims": ["static", "unbacked"],
         "data": [True, False, False, True]},
        {"name": "f", "dtype": "float", "shape": [2], "dims": ["static"], "data": [0.5, -1.0]},
        {"name": "s", "dtype": "float", "shape": [], "dims": [], "data": [2.0]},
    ]), min_size=1, max_size=3),
    "instrs": st.lists(st.fixed_dictionaries(
        {"op": st.sampled_from(OP_NAMES + PAYLOADS[:1]),
         "args": st.lists(small_args, max_size=5)},
        optional={"n_out": st.integers(-1, 4)}), max_size=4),
    "outputs": st.lists(st.integers(-1, 8), max_size=3),
})


@st.composite
def mutated_programs(draw):
    obj = draw(programs(max_ops=4)).to_json()
    for _ in range(draw(st.integers(1, 3))):
        obj = mutate(draw, obj)
    return obj


def mutate(draw, obj):
    # A copy: strategies such as sampled_from([{...}]) hand out the same dict every time, and an
    # in-place edit would change what later examples draw (FlakyStrategyDefinition).
    obj = copy.deepcopy(obj)
    paths = [[]]

    def walk(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            paths.append(path + [k])
            walk(v, path + [k])

    walk(obj, [])
    path = draw(st.sampled_from(paths))
    if not path:
        return draw(json_values) if draw(st.integers(0, 9)) == 0 else obj
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    action = draw(st.sampled_from(["replace", "replace", "delete", "duplicate", "small"]))
    if action == "delete":
        del parent[key]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == "small":
        parent[key] = draw(small_args)
    else:
        parent[key] = draw(json_values)
    return obj


# ---- properties --------------------------------------------------------------------------------
@settings(max_examples=200)
@given(st.binary(max_size=64) | st.binary(max_size=8).map(lambda b: b'{"schema": 1, ' + b))
def test_random_bytes(data):
    load_text(data)


@settings(max_examples=150)
@given(json_values | st.fixed_dictionaries({"schema": st.just(1)}, optional={
    "inputs": json_values, "instrs": json_values, "outputs": json_values}))
def test_random_json(obj):
    load_text(json.dumps(obj))


@settings(max_examples=200)
@given(structured)
def test_structured_hostile_programs(obj):
    load_text(json.dumps(obj))


@settings(max_examples=100)
@given(mutated_programs())
def test_mutated_valid_programs(obj):
    load_text(json.dumps(obj))


# ---- injection attempts are rejected ------------------------------------------------------------
X = {"name": "x0", "dtype": "int", "shape": [3], "dims": ["dynamic"], "data": [1, 2, 3]}


def doc(instrs, outputs=(1,), inputs=(X,)):
    return {"schema": 1, "inputs": list(inputs), "instrs": list(instrs), "outputs": list(outputs)}


# Every string-valued slot an op has, plus extra trailing arguments and list elements.
SLOTS = [
    lambda s: {"op": s, "args": [{"v": 0}]},
    lambda s: {"op": "binop", "args": [s, 1, 2]},
    lambda s: {"op": "binop", "args": ["+", s, 2]},
    lambda s: {"op": "mask", "args": [{"v": 0}, s, 1]},
    lambda s: {"op": "mask", "args": [{"v": 0}, ">", s]},
    lambda s: {"op": "item", "args": [{"v": 0}, s]},
    lambda s: {"op": "cast", "args": [{"v": 0}, s]},
    lambda s: {"op": "cast", "args": [{"v": 0}, "int", s]},
    lambda s: {"op": "nonzero", "args": [{"v": 0}, s]},
    lambda s: {"op": "numel", "args": [{"v": 0}, s]},
    lambda s: {"op": "arange", "args": [3, s]},
    lambda s: {"op": "zeros", "args": [[3], s]},
    lambda s: {"op": "zeros", "args": [[3, s]]},
    lambda s: {"op": "size", "args": [{"v": 0}, s]},
    lambda s: {"op": "narrow", "args": [{"v": 0}, 0, s, 1]},
    lambda s: {"op": "slice", "args": [{"v": 0}, 0, s, None]},
    lambda s: {"op": "reshape", "args": [{"v": 0}, [s]]},
    lambda s: {"op": "permute", "args": [{"v": 0}, [s]]},
    lambda s: {"op": "flip", "args": [{"v": 0}, [s]]},
    lambda s: {"op": "split", "args": [{"v": 0}, s, 0]},
    lambda s: {"op": "cat", "args": [[{"v": 0}, s], 0]},
    lambda s: {"op": "check", "args": [s, 1, 2], "n_out": 0},
    lambda s: {"op": "check_is_size", "args": [s], "n_out": 0},
    lambda s: {"op": "branch", "args": [s, "max", 1, 2]},
    lambda s: {"op": "branch", "args": ["if", s, 1, 2]},
    lambda s: {"op": "branch", "args": ["if", "max", 1, s]},
    lambda s: {"op": "branch", "args": ["if", "slice_all", {"v": 0}, s, 1]},
]


@pytest.mark.parametrize("payload", PAYLOADS[:3])
@pytest.mark.parametrize("slot", range(len(SLOTS)))
def test_injection_strings_are_rejected(slot, payload):
    with pytest.raises(ProgramError):
        Program.from_json(json.loads(json.dumps(doc([SLOTS[slot](payload)]))))


@pytest.mark.parametrize("field, value", [
    ("name", "x); import os #"), ("dtype", "torch.float32); import os #"),
    ("dims", ["dynamic); import os #"]),
])
def test_injection_through_inputs_is_rejected(field, value):
    with pytest.raises(ProgramError):
        Program.from_json(doc([], outputs=(0,), inputs=({**X, field: value},)))


@pytest.mark.parametrize("src", [
    "def f(v0):\n    v1 = v0 + os.system('echo pwned')\n",
    "def f(v0):\n    import os\n",
    "def f(v0):\n    v1 = v0.__class__\n",
    "def f(v0):\n    v1 = torch.tensor('x')\n",
    "def f(v0):\n    v1 = torch.cond(True, lambda t: os.getcwd(), lambda t: t.clone(), (v0,))\n",
    "def f(v0):\n    v1 = (lambda t: t * 3)(v0)\n",
])
def test_harmless_check_is_not_vacuous(src):
    """The checker used by the properties above does flag smuggled code."""
    with pytest.raises(AssertionError):
        assert_source_harmless(src)
    assert_source_harmless("def f(v0):\n    v1 = torch._check(v0.shape[0] < float('nan'))\n")


# ---- arity: one valid instruction per op; an extra or a missing argument is rejected -----------
ARITY_INPUTS = (
    {"name": "a", "dtype": "int", "shape": [3], "dims": ["dynamic"], "data": [1, 2, 3]},        # v0
    {"name": "m", "dtype": "bool", "shape": [3], "dims": ["static"], "data": [True, False, True]},  # v1
    {"name": "f", "dtype": "float", "shape": [1, 2], "dims": ["static", "unbacked"], "data": [1.0, 2.0]},  # v2
    {"name": "b", "dtype": "float", "shape": [1, 1, 2], "dims": ["static"] * 3, "data": [1.0, 2.0]},  # v3
    {"name": "q", "dtype": "float", "shape": [1, 1, 1, 2], "dims": ["static"] * 4, "data": [1.0, 2.0]},  # v4
)
V0, V1, V2, V3, V4, S = {"v": 0}, {"v": 1}, {"v": 2}, {"v": 3}, {"v": 4}, {"v": 5}  # S = a.shape[0]
ONE_PER_OP = {
    "add": [V0, V0], "mul": [V0, V2], "cast": [V0, "float"], "sum": [V1, 0, False],
    "mean": [V2, 1, True], "nonzero": [V1], "unique": [V0, None], "mask": [V2, ">", 1.5], "masked_select": [V0, V1],
    "index_select": [V0, 0, V0], "arange": [S], "zeros": [[S, 2]], "ones": [[2]], "empty": [[S]],
    "cat": [[V0, V0], 0], "split": [V0, 1, 0], "chunk": [V0, 3, 0], "unbind": [V0, 0],
    "reshape": [V0, [-1, 1]], "view": [V2, [S]], "flip": [V0, [0]], "narrow": [V0, 0, 0, S],
    "select": [V0, 0, -1], "slice": [V0, 0, None, S], "expand": [V2, [3, 1, 2]],
    "squeeze": [V2, 0], "unsqueeze": [V0, 1], "permute": [V2, [1, 0]], "transpose": [V2, 0, 1],
    "repeat": [V0, [2, 1]], "pad": [V0, [1, -1]], "size": [V0, 0], "numel": [V2], "item": [V0, "max"],
    "binop": ["%", S, 2], "check": [">=", S, 0], "check_is_size": [S],
    "branch": ["guard_or_true", "narrow_full", V0, 0, S],
    "matmul": [V2, V2], "bmm": [V3, V3], "baddbmm": [V3, V3, V3], "sdpa": [V4, V4, V4, "causal"],
    "flex_attention": [V4, V4, V4, "relative"], "cond": [V0, S, ">", 2, "flip"],
    "cond_int": ["sym_ite", ">", S, 2, 1, 0], "cond_tensor": ["where", ">", S, 2, V0, V1],
    "bool_index": [V0, V1], "int_index": [V0, 0], "tensor_index": [V0, V0], "tolist": [V0],
    "full": [[S, 2], 1.0], "new_full": [V0, [S], 1],
}
N_OUT = {"split": 3, "chunk": 3, "unbind": 3, "check": 0, "check_is_size": 0, "tolist": 3}


def arity_doc(op, args):
    return {"schema": 1, "inputs": list(ARITY_INPUTS),
            "instrs": [{"op": "size", "args": [V0, 0]}, {"op": op, "args": args, "n_out": N_OUT.get(op, 1)}],
            "outputs": [len(ARITY_INPUTS)]}


def test_one_per_op_covers_every_op():
    assert set(ONE_PER_OP) == set(all_ops())


@pytest.mark.parametrize("op", sorted(ONE_PER_OP))
def test_arity_is_checked(op):
    args = ONE_PER_OP[op]
    p = Program.from_json(arity_doc(op, args))
    assert_harmless(p)
    with pytest.raises(ProgramError, match=r"instruction 1 \(\w+\): "):
        Program.from_json(arity_doc(op, args + [PAYLOADS[0]]))
    with pytest.raises(ProgramError, match=r"instruction 1 \(\w+\): "):
        Program.from_json(arity_doc(op, args[:-1]))


# ---- case files: loader, `shapefuzz replay`, repro.py ---------------------------------------------
GOOD_CASE = Path(__file__).resolve().parents[2] / "corpus" / "squeeze-unbacked-meta-make_fx" / "case.json"
#: a payload that leaves a trace if anything ever evaluates it
TRACE_PAYLOAD = "__import__('pathlib').Path('SHAPEFUZZ_PWNED').touch()"


def good_case() -> dict:
    return json.loads(GOOD_CASE.read_text())


def load_case_bytes(tmp_path: Path, data: bytes):
    p = tmp_path / "case.json"
    p.write_bytes(data)
    try:
        case = load_case(p)
    except CaseError as e:
        assert str(e).startswith(str(p)) and "\n" not in str(e)  # one line naming the file
        return None
    assert_repro_harmless(repro_source(case))
    return case


def assert_repro_harmless(src: str) -> None:
    """An accepted case renders to a repro whose only imports and calls are the template's."""
    tree = ast.parse(src)
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert all(n.split(".")[0] in {"torch", "sys", "sympy", "math", ""} or n.isidentifier()
                       for n in names), ast.dump(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"exec", "eval", "__import__", "compile", "open"}, ast.dump(node)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200) | st.binary(max_size=40).map(lambda b: GOOD_CASE.read_bytes()[:300] + b))
def test_case_loader_random_bytes(tmp_path_factory, data):
    load_case_bytes(tmp_path_factory.mktemp("c"), data)


@st.composite
def mutated_cases(draw):
    obj = good_case()
    for _ in range(draw(st.integers(1, 3))):
        obj = mutate(draw, obj)
    return obj


@settings(max_examples=100, deadline=None)
@given(json_values | mutated_cases())
def test_case_loader_random_json(tmp_path_factory, obj):
    load_case_bytes(tmp_path_factory.mktemp("c"), json.dumps(obj).encode())


def _set(obj, path, value):
    node = obj
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return obj


HOSTILE_CASES = {
    "truncated": lambda: GOOD_CASE.read_bytes()[: len(GOOD_CASE.read_bytes()) // 2],
    "empty": lambda: b"",
    "not-utf8": lambda: b"\xff\xfe{}",
    "schema-2": lambda: json.dumps(_set(good_case(), ["schema"], 2)).encode(),
    "program-schema-9": lambda: json.dumps(_set(good_case(), ["program", "schema"], 9)).encode(),
    "unknown-op": lambda: json.dumps(_set(good_case(), ["program", "instrs", 0, "op"], "os.system")).encode(),
    "unknown-system": lambda: json.dumps(_set(good_case(), ["finding", "system"], "inductor")).encode(),
    "unknown-config": lambda: json.dumps(_set(good_case(), ["finding", "config"], "x\"\"\"; " + TRACE_PAYLOAD)).encode(),
    "oracle-injection": lambda: json.dumps(_set(good_case(), ["finding", "oracle"], "a\"\"\"\n" + TRACE_PAYLOAD + "\n\"\"\"")).encode(),
    "op-injection": lambda: json.dumps(_set(good_case(), ["program", "instrs", 0, "op"], TRACE_PAYLOAD)).encode(),
    "arg-injection": lambda: json.dumps(_set(good_case(), ["program", "instrs", 0, "args", 1], TRACE_PAYLOAD)).encode(),
    "torch-config-injection": lambda: json.dumps(_set(good_case(), ["torch_config"], [["x = 1; " + TRACE_PAYLOAD, 1]])).encode(),
    "huge-int": lambda: json.dumps(_set(good_case(), ["program", "inputs", 0, "data", 0], 10**400)).encode(),
    "huge-float": lambda: json.dumps(_set(good_case(), ["program", "inputs", 0, "data", 0], 1e999)).encode(),
    "exp-float": lambda: json.dumps(good_case()).replace('"data": [3]', '"data": [1e999]').encode(),
    "huge-shape": lambda: json.dumps(_set(good_case(), ["program", "inputs", 0, "shape"], [10**9, 10**9])).encode(),
    "deep-nesting": lambda: b"[" * 100_000 + b"]" * 100_000,
    "status": lambda: json.dumps(_set(good_case(), ["status"], "fixed; rm -rf /")).encode(),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_CASES))
def test_replay_rejects_hostile_case_with_one_line(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "case"
    d.mkdir()
    data = HOSTILE_CASES[name]()
    (d / "case.json").write_bytes(data)
    with pytest.raises(SystemExit) as e:
        main(["replay", str(d)])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert err.startswith("shapefuzz: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "SHAPEFUZZ_PWNED").exists()  # nothing evaluated
    assert (d / "case.json").read_bytes() == data  # nothing lost or rewritten


def test_replay_refuses_inputs_past_max_elements(tmp_path, capsys):
    obj = good_case()
    obj["program"]["inputs"][0]["data"] = [3_000_000]  # an item() value that becomes a size
    (tmp_path / "case.json").write_text(json.dumps(obj))
    with pytest.raises(SystemExit) as e:
        main(["replay", "--max-elements", "1000000", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "refused" in err and "--max-elements 1000000" in err, err


def test_good_case_still_loads():
    """The hostile cases above are mutations of a case the loader accepts."""
    assert_repro_harmless(repro_source(load_case(GOOD_CASE)))

"""Hypothesis profiles for the test suite.

"dev" (default): random, no deadline (the first torch call in a process is slow).
"ci" (loaded when the CI environment variable is set): derandomized and database-free, so a
CI run is reproducible from the commit alone.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("dev"), derandomize=True,
                          database=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    # torch 2.13 deprecates torch._check_is_size, which the check_is_size op stands for.
    config.addinivalue_line("filterwarnings", "ignore:_check_is_size will be removed:FutureWarning")


def pytest_sessionstart(session):
    # An editable install made from another clone makes these tests import that clone's code
    # and pass or fail for the wrong reasons: refuse to run instead.
    import pathlib

    import shapefuzz
    import shapefuzz.strategies

    root = pathlib.Path(__file__).resolve().parent.parent
    for mod in (shapefuzz, shapefuzz.strategies):
        where = pathlib.Path(mod.__file__).resolve()
        if root not in where.parents:
            raise SystemExit(f"{mod.__name__} is imported from {where}, not from this checkout "
                             f"{root}; run `pip install -e {root}` first")
    # A/B campaigns keep baseline observations in the user's cache (Note [baseline cache]):
    # the tests' campaigns and their subprocesses get one of their own, empty at the start
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="shapefuzz-test-cache-")


import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--order", choices=("file", "reverse", "random"), default="file",
                     help="run tests in file order, reversed, or shuffled (--order-seed): tests "
                          "must pass in any order")
    parser.addoption("--order-seed", type=int, default=None,
                     help="seed of --order random (default: a fresh one, printed in the header)")


def _order_seed(config) -> int:
    if config.getoption("--order-seed") is None:
        import random

        config.option.order_seed = random.SystemRandom().randrange(10**6)
    return config.getoption("--order-seed")


def pytest_report_header(config):
    from hypothesis import settings as current

    order = config.getoption("--order")
    seed = f" (--order-seed {_order_seed(config)})" if order == "random" else ""
    profile = (f"hypothesis profile: {current._current_profile} (derandomize="
               f"{current().derandomize}, database={'none' if current().database is None else 'default'})")
    return [profile, f"test order: {order}{seed}"]


def pytest_collection_modifyitems(session, config, items):
    order = config.getoption("--order")
    if order == "reverse":
        items.reverse()
    elif order == "random":
        import random

        random.Random(_order_seed(config)).shuffle(items)


def _registries() -> dict[str, tuple[str, ...]]:
    from shapefuzz.ops import all_ops
    from shapefuzz.oracles.base import all_oracles

    return {"ops": tuple(all_ops()), "oracles": tuple(o.name for o in all_oracles())}


@pytest.fixture(autouse=True)
def _registries_left_as_found():
    """Strategies draw from the op registry and check_all runs the oracle registry: a test that
    leaves a plugin's op or oracle registered changes every later test (use `plugin`)."""
    before = _registries()
    yield
    after = _registries()
    assert after == before, f"this test left the registries changed: {before} -> {after}"


@pytest.fixture
def plugin():
    """`plugin("planted_ops")` imports a test plugin module in this process (its ops and oracles
    register); at teardown the registries are restored and the module is forgotten, so another
    test that imports it registers it again."""
    import importlib
    import sys

    from shapefuzz.ops import base as op_base
    from shapefuzz.oracles import base as oracle_base

    saved = (dict(op_base._REGISTRY), dict(oracle_base._REGISTRY), dict(oracle_base._BY_FINDING))
    loaded: list[str] = []

    def load(name: str):
        loaded.append(name)
        return importlib.import_module(name)

    yield load
    for reg, old in zip((op_base._REGISTRY, oracle_base._REGISTRY, oracle_base._BY_FINDING), saved):
        reg.clear()
        reg.update(old)
    for name in loaded:
        sys.modules.pop(name, None)


@pytest.fixture(autouse=True)
def _torch_left_as_found():
    """Note [exact restore] (shapefuzz/systems/patching.py): a test that leaves a torch config
    entry changed or hidden, or a slow path's patch in place, fails here, by name, instead of
    breaking whichever test happens to read that flag next."""
    import sys

    if "torch" not in sys.modules:
        yield
        return
    import torch

    from shapefuzz.systems.patching import state_drift, torch_state
    from shapefuzz.systems.torch_toggles import PATCH_TARGETS

    before, dispatch = torch_state(PATCH_TARGETS), torch._C._get_torch_function_state()
    yield
    drift = state_drift(before, torch_state(PATCH_TARGETS))
    # torch-function dispatch left disabled (reports/torch-2.13 row 27) is put back, so that the
    # test that left it fails alone and the tests after it trace as they would
    torch._C._set_torch_function_state(dispatch)
    assert not drift, f"this test left torch state changed: {drift}"

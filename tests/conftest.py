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


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _forget_planted_results(request):
    """A test that plants a bug (through monkeypatch) can leave expressions built by the planted
    code in sympy's global cache, where they outlive the plant and mislead later tests in this
    process (campaign workers are fresh processes and never see plants). Clear it afterwards."""
    yield
    if "monkeypatch" in request.fixturenames:
        import sympy.core.cache

        sympy.core.cache.clear_cache()

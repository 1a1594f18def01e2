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

"""Note [sympy cache]: importing shapefuzz before sympy sizes sympy's caches (10000 entries)
unless the user set SYMPY_CACHE_SIZE; it changes no answer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import shapefuzz

PROBE = "import shapefuzz, sympy.core.cache as c; print(c.SYMPY_CACHE_SIZE)"


def _size(env: dict) -> str:
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          timeout=120, check=True).stdout.strip()


def _env(**extra) -> dict:
    return {**{k: v for k, v in os.environ.items() if k != "SYMPY_CACHE_SIZE"}, **extra}


def test_shapefuzz_sizes_the_cache_before_sympy_is_imported():
    assert _size(_env()) == shapefuzz.SYMPY_CACHE_SIZE == "10000"


@pytest.mark.parametrize("size", ["500", "None"])
def test_a_user_setting_wins(size):
    assert _size(_env(SYMPY_CACHE_SIZE=size)) == ("None" if size == "None" else size)

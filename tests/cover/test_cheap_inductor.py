"""Note [cheap Inductor] (systems/compile_settings.py): an Inductor config compiles at -O0 in
the worker itself, only while its program runs, and says which torch names it needs; the other
compile configs leave Inductor's settings alone."""

from __future__ import annotations

import torch._inductor.config as ic

from shapefuzz.systems.compile import _inductor_settings
from shapefuzz.systems.compile_settings import settings_of
from shapefuzz.systems.needs import available


def test_inductor_configs_compile_cheaply_and_only_while_they_run():
    before = (ic.compile_threads, ic.aot_inductor.debug_compile)
    for name in ("inductor", "inductor+dynamic=True"):
        with _inductor_settings(settings_of(name)):
            assert (ic.compile_threads, ic.aot_inductor.debug_compile) == (1, True)
        assert (ic.compile_threads, ic.aot_inductor.debug_compile) == before
    with _inductor_settings(settings_of("aot_eager")):
        assert (ic.compile_threads, ic.aot_inductor.debug_compile) == before


def test_the_settings_are_torch_names_the_config_needs():
    names = settings_of("inductor").torch_names()
    assert "torch._inductor.config.aot_inductor.debug_compile" in names
    assert "torch._inductor.config.compile_threads" in names
    assert not any("_inductor" in n for n in settings_of("default").torch_names())
    assert available((("compile", "inductor"),))[0] == (("compile", "inductor"),)  # this torch has them

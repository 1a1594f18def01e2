"""TEST-ONLY: a system whose own code raises (a bug in shapefuzz, not in torch), registered
only where this module is imported (`plugins=("buggy_system",)`), for Note [shapefuzz bugs]."""

from shapefuzz import systems

systems.SYSTEMS["buggy"] = (__name__, "BuggySystem")
systems.CONFIGS["buggy"] = ("default",)
systems.KINDS["buggy"] = ("tensors",)


class BuggySystem:
    name = "buggy"

    def observe(self, program, config, variants):
        raise KeyError("planted: a lookup in shapefuzz's own code fails")

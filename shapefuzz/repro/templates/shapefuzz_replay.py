"""The forms that replay a case with shapefuzz itself (Note [repro templates]): a finding no torch
call shows alone (ref's, shapefuzz/repro/ref.py) or one that needs two torch builds (A/B,
shapefuzz/repro/ab.py). The script binds CASE_JSON (the case file's text) and, for A/B,
SOURCE_ROOT (shapefuzz's source folder)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import CASE_JSON, SOURCE_ROOT


def ab():
    """Both sides run this script: the baseline's interpreter may not have shapefuzz installed,
    so it comes from its source folder."""
    sys.path.insert(0, SOURCE_ROOT)
    from shapefuzz.repro.ab import main  # shapefuzz from its source folder

    if __name__ == "__main__":
        sys.exit(main(json.loads(CASE_JSON), sys.argv))


def ref():
    from shapefuzz.repro.ref import replay_ref_finding

    if __name__ == "__main__":
        sys.exit(replay_ref_finding(json.loads(CASE_JSON)))

"""A mutant applied the way a patch author patches torch without rebuilding it: a folder with a
sitecustomize.py, put first on PYTHONPATH, so every interpreter started with that environment
(the campaign, its workers, a finding's repro.py) runs the mutated function (hook.py,
Note [code swap]). The unmodified interpreter is the same environment without the folder."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from mutation.mutants import Mutant

__all__ = ["HOOK_MODULE", "clean_env", "compile_error", "mutant_env", "write_patch"]

HERE = Path(__file__).resolve().parent
HOOK_MODULE = "_shapefuzz_mutant"


def spec_of(m: Mutant) -> dict:
    """What hook.py reads (mutant.json)."""
    return {"id": m.id, "module": m.module, "qualname": m.qualname, "start_line": m.start_line,
            "future_annotations": m.future_annotations, "text": m.compile_text(),
            "text_with_class": m.compile_text(keep_class=True) if m.classes else None}


def compile_error(m: Mutant) -> str | None:
    """Why the mutated function does not compile (one line), or None when it does."""
    import __future__

    flags = __future__.annotations.compiler_flag if m.future_annotations else 0
    try:
        compile(m.compile_text(), m.path, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as e:  # IndentationError included
        return f"{type(e).__name__}: {e.msg} (line {e.lineno})"
    return None


def write_patch(m: Mutant, directory: Path) -> Path:
    """The patch folder of `m` in `directory` (created; its files replaced)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE / "hook.py", directory / f"{HOOK_MODULE}.py")
    shutil.copyfile(HERE / "patch_site.py", directory / "sitecustomize.py")
    (directory / "mutant.json").write_text(json.dumps(spec_of(m), indent=1) + "\n")
    (directory / "mutant.diff.txt").write_text(f"{m.description}\n\n--- original\n{m.original}\n"
                                               f"--- mutated\n{m.mutated}")
    return directory


def _paths(env: Mapping[str, str]) -> list[str]:
    return [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


def mutant_env(directory: Path, base: Mapping[str, str]) -> dict[str, str]:
    """`base` with the patch folder first on PYTHONPATH."""
    return {**base, "PYTHONPATH": os.pathsep.join([str(directory), *_paths(base)])}


def clean_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` without any mutant's patch folder on PYTHONPATH (the unmodified interpreter)."""
    keep = [p for p in _paths(base) if not (Path(p) / f"{HOOK_MODULE}.py").exists()]
    env = {k: v for k, v in base.items() if k != "PYTHONPATH"}
    if keep:
        env["PYTHONPATH"] = os.pathsep.join(keep)
    return env

"""The ready-to-copy GitHub Actions workflow, the pytest11 entry point and the CI smoke fuzz."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_pytest_plugin_is_registered_as_pytest11_entry_point():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"shapefuzz": "shapefuzz.pytest_plugin"}
    assert any(d.startswith("plotly") for d in meta["project"]["dependencies"])


def test_workflow_has_smoke_on_push_and_nightly_with_report_artifact():
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (the text checks below still run)")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "shapefuzz.yml").read_text())
    on = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads the key `on` as True
    assert "push" in on and on["schedule"][0]["cron"]
    smoke, nightly = wf["jobs"]["smoke"], wf["jobs"]["nightly"]
    runs = " ".join(s.get("run", "") for s in smoke["steps"])
    assert "shapefuzz fuzz --seed 0 --max-examples" in runs and "--shapefuzz-corpus corpus" in runs
    uploads = [s for s in nightly["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["if"] == "always()" and "shapefuzz-nightly" in uploads[0]["with"]["path"]


def test_ci_script_runs_the_smoke_fuzz_and_installs_the_browser():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "shapefuzz fuzz --seed 0" in ci and "apt-get install -y -qq chromium" in ci


def test_ci_script_builds_the_docs_with_warnings_as_errors_after_the_test_suite():
    """issue 33: the docs build runs on the pinned release, after the README's test command."""
    ci = (ROOT / ".ci" / "run").read_text()
    pinned = ci.split("make_venv 2.13.0", 1)[1].split("make_venv 2.14.1", 1)[0]
    assert "mkdocs build --strict" in pinned
    assert pinned.index("\npython -m pytest\n") < pinned.index("mkdocs build --strict")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert {"mkdocs", "mkdocs-material", "mkdocs-click"} <= {re.split(r"[\[<>=]", d)[0] for d in extras}

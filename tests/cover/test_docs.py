"""The documentation (issue 33): the site builds with warnings as errors, its generated reference
pages hold every registered oracle, config and CLI command (so a broken generator fails here),
and README.md stays a short page whose Quickstart is the two commands a fresh machine runs."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the README's Quickstart, byte for byte (.ci/run runs the same two on a fresh venv)
QUICKSTART = ['pip install "torch==2.13.0" numpy -e ".[dev]" && shapefuzz fuzz --budget 60 --out shapefuzz-out',
              "python -m pytest"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built by `mkdocs build --strict` (the command .ci/run runs), in a fresh folder."""
    pytest.importorskip("mkdocs", reason="the docs tools are in the dev extra: pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner, not a build warning
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    return out


def _text(site: Path, page: str) -> str:
    """The visible text of a built page's article, tags dropped and whitespace folded."""
    doc = (site / page / "index.html").read_text()
    body = re.search(r"<article.*?</article>", doc, re.S)
    assert body, f"{page}: no article in the built page"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body[0])).split())


def test_the_oracle_reference_lists_every_registered_oracle(site):
    from shapefuzz.oracles import all_oracles, help_table

    text = _text(site, "reference/oracles")
    names = [name for o in all_oracles() for name in o.names()]
    assert len(names) >= 15
    for name in names:
        assert name in text, f"oracle {name!r} is missing from the generated reference"
        assert " ".join(help_table()[name].split()) in text, f"oracle {name!r}: its help is missing"


def test_the_config_reference_lists_every_system_and_config(site):
    from shapefuzz.systems import CONFIGS, OPT_IN, SYSTEMS
    from shapefuzz.systems.torch_toggles import SLOW_PATHS

    text = _text(site, "reference/configs")
    for system in SYSTEMS:
        configs = CONFIGS[system] + tuple(OPT_IN.get(system, ()))
        section = text.split(f"{system} ¶", 1)
        assert len(section) == 2, f"system {system!r} has no section in the generated reference"
        for config in configs:
            assert f" {config} " in section[1], f"{system} config {config!r} is missing"
    for name in SLOW_PATHS:
        assert f"slow:{name}" in text


def test_the_cli_reference_documents_every_command_and_option(site):
    import click

    from shapefuzz.cli import cli

    text = _text(site, "reference/cli")

    def walk(group: click.Group, prefix: str):
        for name, cmd in group.commands.items():
            yield f"{prefix} {name}", cmd
            if isinstance(cmd, click.Group):
                yield from walk(cmd, f"{prefix} {name}")

    commands = list(walk(cli, "shapefuzz"))
    assert {"shapefuzz fuzz", "shapefuzz replay", "shapefuzz report", "shapefuzz known check"} <= dict(commands).keys()
    for path, cmd in commands:
        assert f"Usage: {path}" in text, f"command {path!r} is missing from the generated reference"
        for opt in (o for p in cmd.params if isinstance(p, click.Option) for o in p.opts):
            assert opt in text, f"{path}: option {opt} is missing"
    assert "{families}" not in text  # --family's help lists the real families


def test_the_pytest_plugin_reference_lists_its_options(site):
    text = _text(site, "reference/pytest-plugin")
    assert "--shapefuzz-corpus DIR" in text and "--shapefuzz-budget SECONDS" in text


def test_the_readme_is_short_and_its_quickstart_is_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 8 * 1024, f"README.md is {len(readme.encode())} bytes; keep it under 8 KB"
    quick = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", quick, re.S)
    assert len(blocks) == 1, "the Quickstart holds one bash block"
    assert blocks[0].splitlines() == QUICKSTART
    assert not re.search(r"Note \[|TORCH_NOTES|\d\d:\d\d UTC", readme)  # no developer-log references


def test_readme_links_point_at_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert links
    for link in links:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_nothing_in_the_repository_points_at_the_write_ups_outside_it():
    """What users need of the development write-ups lives in docs/ (docs/explanation); a file
    of the project that names them points at something its users do not have."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    here = Path(__file__).resolve().relative_to(ROOT).as_posix()
    bad = re.compile("TORCH" + r"_NOTES|\.\./shared/")
    hits = [f for f in tracked if f != here and (ROOT / f).is_file() and (ROOT / f).suffix in (".py", ".md", ".toml", ".yml", ".txt", "")
            and bad.search((ROOT / f).read_text(errors="replace"))]
    assert hits == []

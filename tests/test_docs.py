"""Every example in README.md and docs/ runs: ```python blocks as one script per page (in a namespace of its own),
```bash blocks command by command (``tsattn ...`` as ``python -m tsattn ...``). ```text blocks (installs, clusters,
hours-long runs) are shown, not run. The files the examples name as the user's own (sales.csv, stores.csv) are written
here, small."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(page: Path, language: str) -> list[str]:
    return [body for kind, body in FENCE.findall(page.read_text(encoding="utf-8")) if kind == language]


def commands(block: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines dropped."""
    joined = block.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def user_files(folder: Path) -> None:
    days = pd.date_range("2022-01-01", periods=200, freq="D")
    rng = np.random.default_rng(0)
    units = 50 + 10 * np.sin(2 * np.pi * np.arange(200) / 7) + rng.normal(0, 2, 200)
    pd.DataFrame({"day": days, "units": units.round(2)}).to_csv(folder / "sales.csv", index=False)
    weeks = pd.date_range("2021-01-04", periods=60, freq="W-MON")
    pd.concat([pd.DataFrame({"store": f"store {k}", "week": weeks,
                             "units": (100 + 20 * k + 10 * np.sin(np.arange(60) / 4) + rng.normal(0, 3, 60)).round(1)})
               for k in range(4)]).to_csv(folder / "stores.csv", index=False)


def environment() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2"}


def test_every_page_has_runnable_examples_or_says_why_not():
    for page in PAGES:
        for block in blocks(page, "bash"):
            for command in commands(block):
                assert command.startswith(("tsattn ", "python3 dev.py ")), f"{page.name}: {command!r} cannot be run by " \
                                                                          "this test; show it in a ```text block"


@pytest.mark.slow
@pytest.mark.parametrize("page", [pytest.param(page, marks=pytest.mark.xdist_group("ray")) if any(
    "--engine ray" in command for block in blocks(page, "bash") for command in commands(block)) else page
    for page in PAGES], ids=lambda page: page.name)  # an example that starts Ray: run with the Ray tests (conftest)
def test_the_examples_of_a_page_run(page, tmp_path, monkeypatch):
    """Commands run in this process through click's runner (the same command objects as the `tsattn` script, without
    a TensorFlow import per command); a page that starts Ray runs each in its own process, as the Ray tests do."""
    from click.testing import CliRunner

    from tsattn.cli.main import main

    python, bash = blocks(page, "python"), blocks(page, "bash")
    if not python and not bash:
        pytest.skip(f"{page.name} has no examples")
    user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    for command in (c for block in bash for c in commands(block)):
        if command == "python3 dev.py test":
            continue  # the test suite itself: this very run
        words = shlex.split(command)
        if words[:2] == ["python3", "dev.py"]:
            words = words[2:]
        assert words[0] == "tsattn", command
        if "--engine" in words:
            done = subprocess.run([sys.executable, "-m", "tsattn", *words[1:]], cwd=tmp_path, capture_output=True,
                                  text=True, env=environment())
            assert done.returncode == 0, f"{page.name}: {command}\n{done.stderr[-3000:]}"
            continue
        result = CliRunner().invoke(main, words[1:])
        assert result.exit_code == 0, f"{page.name}: {command}\n{result.output[-3000:]}{result.exception!r}"
    if python:  # one script in a namespace of its own (it imports what it uses), in this process: a subprocess per
        # page paid TensorFlow's import and first trace again, ~10 CPU-seconds each (5 pages)
        script = "\n\n".join(python)
        exec(compile(script, f"{page.name} (its Python examples)", "exec"), {"__name__": "__main__"})

#!/usr/bin/env python3
"""Run tsattn or its tests in a project virtual environment that this script creates or reuses.

    python3 dev.py tsattn fit --model attention-rnn --dataset sunspots --level 80 --level 95 --out runs/quickstart
    python3 dev.py test            # the whole test suite (extra arguments go to pytest, in one process)

Needs only Python 3.10+. The environment lives in .venv/ (or $TSATTN_VENV); tsattn is installed into it
in editable mode with what the command needs (`tsattn`: the core dependencies only; `test`: the test extra
too: pytest, pytest-xdist, hypothesis, statsforecast, Ray, utilsforecast, Playwright, Optuna), and reinstalled
whenever pyproject.toml changes. pip's output is shown only when an install fails.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def ensure_environment(extra: str | None = None) -> Path:
    if sys.version_info < (3, 10):
        sys.exit(f"tsattn needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    env_dir = Path(os.environ.get("TSATTN_VENV", ROOT / ".venv"))
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"[dev] creating virtual environment in {env_dir}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=env_dir.exists()).create(env_dir)
    stamp = env_dir / ".tsattn-install-stamp"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + str(ROOT).encode()).hexdigest()
    recorded = stamp.read_text().split() if stamp.exists() else []
    installed = set(recorded[1:]) if recorded[:1] == [wanted] else None  # the extras installed for this pyproject
    if installed is None or (extra is not None and extra not in installed):
        what = "tsattn" + (f" and its {extra} extra" if extra else "")
        print(f"[dev] installing {what} (first run takes a minute or two)", file=sys.stderr)
        target = f"{ROOT}[{extra}]" if extra else str(ROOT)
        pip(python, "--upgrade", "pip")
        pip(python, "-e", target)
        stamp.write_text(" ".join([wanted, *sorted((installed or set()) | ({extra} if extra else set()))]))
    return python


def pip(python: Path, *arguments: str) -> None:
    """pip install, quiet: its output (and the build backend's warnings, e.g. setuptools' editable-install notice)
    is shown only when the install fails."""
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *arguments],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit(f"[dev] pip install {' '.join(arguments)} failed (exit code {done.returncode}); see above")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("tsattn", "test"):
        print(__doc__, file=sys.stderr)
        return 2
    python = ensure_environment("test" if argv[0] == "test" else None)
    if argv[0] == "tsattn":
        return subprocess.run([str(python), "-m", "tsattn", *argv[1:]]).returncode
    pytest = [str(python), "-m", "pytest"]
    if len(argv) > 1:  # the user's own selection, in one process
        return subprocess.run([*pytest, *argv[1:]], cwd=ROOT).returncode
    # The whole suite: everything that does not start Ray in three pytest-xdist workers (below), then the tests
    # that do (marked ray in tests/conftest.py: local instances and multi-node clusters) on their own, one after
    # another: under xdist a node killed once took its worker down, and two local Ray instances started at once by two
    # workers once both waited for ever. Run beside the workers in a third process instead, the Ray tests took 13 min
    # (their node starts import TensorFlow in new processes) and stretched the workers' part by 3: 16 min 32 s in all
    # on a fresh clone at 7a79655, no gain.
    # worksteal: a worker that runs out of tests takes half of the other's queue.
    # One TensorFlow thread per pool and process (the user's own values kept): with two-thread pools the two workers on
    # two cores took 22.8 CPU-minutes and 13 min 15 s, with one 20.8 and 12 min 15 s (at 7bca7ad, one run each).
    # Three workers on the two cores CI has: a worker waiting on a subprocess (a docs example, a CLI or Ray process,
    # PostgreSQL, Chromium) leaves its core to the third. The same tests (712-715) on one day, one run after another,
    # nothing else running: two workers 18 min 6 s and 19 min 52 s, three 16 min 0 s, 17 min 42 s and 19 min 29 s (the
    # last two in fresh clones' CI, which compile their caches too): some 7% on average, within the day's drift.
    env = dict(os.environ)
    for name in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"):
        env.setdefault(name, "1")
    first = subprocess.run([*pytest, "-n", "3", "--dist", "worksteal", "-m", "not ray"], cwd=ROOT, env=env).returncode
    second = subprocess.run([*pytest, "-m", "ray"], cwd=ROOT, env=env).returncode
    return first or second


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Run tsattn or its tests in a project virtual environment that this script creates or reuses.

    python3 dev.py tsattn fit --model attention-rnn --dataset sunspots --level 80 --level 95 --out runs/quickstart
    python3 dev.py test            # the whole test suite (extra arguments go to pytest)

Needs only Python 3.10+. The environment lives in .venv/ (or $TSATTN_VENV); tsattn is installed into it
in editable mode with its test extra, and reinstalled whenever pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def ensure_environment() -> Path:
    if sys.version_info < (3, 10):
        sys.exit(f"tsattn needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    env_dir = Path(os.environ.get("TSATTN_VENV", ROOT / ".venv"))
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"[dev] creating virtual environment in {env_dir}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=env_dir.exists()).create(env_dir)
    stamp = env_dir / ".tsattn-install-stamp"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + str(ROOT).encode()).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        print("[dev] installing tsattn and its dependencies (first run takes a minute or two)", file=sys.stderr)
        quiet = ["--quiet", "--disable-pip-version-check"]
        subprocess.run([str(python), "-m", "pip", "install", *quiet, "--upgrade", "pip"], check=True)
        subprocess.run([str(python), "-m", "pip", "install", *quiet, "-e", f"{ROOT}[test]"], check=True)
        stamp.write_text(wanted)
    return python


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("tsattn", "test"):
        print(__doc__, file=sys.stderr)
        return 2
    python = ensure_environment()
    if argv[0] == "test":
        command = [str(python), "-m", "pytest", *argv[1:]]
    else:
        command = [str(python), "-m", "tsattn", *argv[1:]]
    return subprocess.run(command, cwd=ROOT if argv[0] == "test" else None).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Progress off a terminal (issue 38): run a command as a user's log or CI runs it (stdout and stderr to a pipe, not a
terminal), stamp every line it prints as it arrives, and report the longest quiet gap. The target: a line at least
every 10 s, from the start to the end, on a 1428-series M3 monthly fit.

    python benchmarks/progress.py                       # tsattn fit --model nbeats --dataset m3-monthly
    python benchmarks/progress.py --quick               # sunspots, 3 epochs: a check that the script runs
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, header, parser, table, write  # noqa: E402


def stamped_lines(command: list[str]) -> tuple[list[tuple[float, str]], float, int]:
    """(seconds since start, line) of every line ``command`` printed, its total time and exit code."""
    started = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                               env=env)
    lines = []
    for line in process.stdout:
        lines.append((time.perf_counter() - started, line.rstrip("\n")))
    code = process.wait()
    return lines, time.perf_counter() - started, code


def gaps(lines: list[tuple[float, str]], total: float) -> list[tuple[float, float, str]]:
    """(gap, at, the line that ended it) for every quiet stretch, the start and the end included."""
    times = [0.0] + [t for t, _ in lines] + [total]
    texts = [line for _, line in lines] + ["(exit)"]
    return [(times[i + 1] - times[i], times[i], texts[i]) for i in range(len(times) - 1)]


def main() -> None:
    p = parser(__doc__.splitlines()[0], "progress.md")
    p.add_argument("--model", default="nbeats")
    p.add_argument("--dataset", default="m3-monthly")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        command = [sys.executable, "-m", "tsattn", "fit", "--model", args.model, "--out", f"{scratch}/run"]
        command += ["--dataset", "sunspots", "--epochs", "3"] if args.quick else ["--dataset", args.dataset]
        lines, total, code = stamped_lines(command)
    if code != 0:
        sys.exit(f"the command failed (exit {code}):\n" + "\n".join(line for _, line in lines[-20:]))
    quiet = sorted(gaps(lines, total), reverse=True)
    at = command.index("--out")
    shown = " ".join(["tsattn", *command[3:at], *command[at + 2:]])
    out = header("Progress off a terminal", command_line(), args.quick)
    out += [f"Command run with its output to a pipe (not a terminal): `{shown}`. {len(lines)} lines in {total:.0f} s; "
            f"**longest quiet gap {quiet[0][0]:.1f} s** (target: at most 10 s).", "",
            "The five longest gaps (seconds; where they began; the line that ended them):", ""]
    out += table(["gap (s)", "from (s)", "ended by"], [[round(g, 1), round(at, 1), text[:100].replace("|", "/")]
                                                      for g, at, text in quiet[:5]])
    write(args.out, out)


if __name__ == "__main__":
    main()

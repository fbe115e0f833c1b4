"""The same comparison run sequentially, in local processes (--jobs 2) and on Ray: wall time, identical records,
and the scheduling overhead per task of each engine.

    python benchmarks/engines.py            # 3 models x 3 seeds on sunspots -> benchmarks/results/engines.md
    python benchmarks/engines.py --quick    # 1 model x 2 seeds, 2 epochs, no Ray at all (run by the test suite,
                                            # whose Ray tests start Ray on their own)

Each comparison is `tsattn compare` in a fresh process (start, imports, every run, the report), into a new
directory. Ray runs on a local instance that the command starts and stops (`--engine ray`, no --address): on a
cluster the same command adds `--address`. The overhead per task is measured with no-op units through
tsattn's engines (`Engine.map`): the start-up (local: spawning 2 processes that import TensorFlow to pin its
threads; Ray: starting a local instance and its workers) and then the time per further unit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from tsattn.compare import TIMING  # noqa: E402 - the record fields that differ between two runs of the same run


def records(out: Path) -> dict:
    return {path.name: {k: v for k, v in json.loads(path.read_text()).items() if k not in TIMING}
            for path in sorted((out / "runs").glob("*.json"))}


def _nothing(shared, key):
    return key


def overhead(engine_name: str, tasks: int) -> tuple[float, float]:
    """(seconds from asking to the first finished no-op unit: the engine coming up, seconds per further unit:
    (last - first finish) / (tasks - 1), two workers busy)."""
    from tsattn.engine import get_engine

    engine = get_engine("local", jobs=2) if engine_name == "local" else get_engine("ray")
    start = time.perf_counter()
    finished = [time.perf_counter() for _ in engine.map(_nothing, {"payload": b"x" * 1_000_000}, range(tasks))]
    return finished[0] - start, (finished[-1] - finished[0]) / (tasks - 1)


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "engines.md")
    args = parser.parse_args()
    models, seeds = ("simple-rnn", "0,1") if args.quick else ("simple-rnn,attention-rnn,transformer", "0,1,2")
    base = [sys.executable, "-m", "tsattn", "compare", "--models", models, "--seeds", seeds, "--quiet"]
    if args.quick:
        base += ["--epochs", "2"]
    ways = [("sequential", []), ("--jobs 2", ["--jobs", "2"]), ("--engine ray (local instance)", ["--engine", "ray"])]
    if args.quick:  # `tsattn compare --engine ray` runs in the suite already (docs/scale-out.md's example, and
        ways = ways[:2]  # tests/test_engine.py checks its records): 35-45 s of the serial Ray part, left out here
    rows, found = [], {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, extra in ways:
            out = Path(scratch) / label.split()[0].strip("-")
            start = time.perf_counter()
            done = subprocess.run(base + extra + ["--out", str(out)], capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(f"{label} failed:\n{done.stderr[-3000:]}")
            found[label] = records(out)
            fits = [json.loads(p.read_text())["fit_seconds"] for p in (out / "runs").glob("*.json")]
            rows.append([label, f"{seconds:.1f}", len(fits), f"{sum(fits):.1f}"])
            print(label, rows[-1], file=sys.stderr)
    reference = found["sequential"]
    identical = {label: records_ == reference for label, records_ in found.items()}
    for row, label in zip(rows, found):
        row.append(f"{float(rows[0][1]) / float(row[1]):.2f}")
        row.append("yes" if identical[label] else "NO")
    tasks = 20 if args.quick else 200
    local_up, local_task = overhead("local", tasks)
    # quick: no Ray instance started (20-40 s of the test suite's run; tests/test_engine.py times Ray's engine itself)
    ray_up, ray_task = (None, None) if args.quick else overhead("ray", tasks)

    lines = C.header("Engines: the same comparison sequential, in local processes and on Ray", C.command_line(),
                     args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    lines += [f"## `tsattn compare --models {models} --seeds {seeds}` on sunspots", ""]
    lines += C.table(["engine", "wall s", "runs", "sum of fit s", "speed-up", "records identical to sequential"],
                     rows)
    lines += ["", "## Scheduling overhead (no-op units, 1 MB shared object)", ""]
    lines += C.table(["engine", "start-up s (to the first unit)", f"per further task ms ({tasks} tasks)"],
                     [["local, 2 processes", f"{local_up:.2f}", f"{local_task * 1000:.2f}"],
                      ["ray, local instance", *(["not measured in quick mode"] * 2 if ray_up is None else
                                                 [f"{ray_up:.2f}", f"{ray_task * 1000:.2f}"])]])
    C.write(args.out, lines + [""])
    if not all(identical.values()):
        raise SystemExit("records differ between engines")


if __name__ == "__main__":
    main()

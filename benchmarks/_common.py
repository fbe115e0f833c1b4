"""Shared helpers of the benchmark scripts: machine description, timing, Markdown output."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def parser(description: str, default_name: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="a few epochs and one seed, to check the script runs")
    p.add_argument("--out", type=Path, default=RESULTS / default_name, help="the Markdown results file")
    return p


def quick_subset(frame, count: int = 24):
    """``count`` series of a long frame, evenly spaced over its series (so every length is represented), with
    its competition horizon kept: the data of the scripts' --quick modes."""
    import numpy as np

    ids = frame["unique_id"].drop_duplicates()
    keep = ids.iloc[np.linspace(0, len(ids) - 1, count).astype(int)]
    subset = frame[frame["unique_id"].isin(keep)].copy()
    subset.attrs["horizon"] = frame.attrs["horizon"]
    return subset


def without_last(frame, count: int):
    """A long frame with the last ``count`` values of every series cut off (a hold-out removed, for choosing on what
    lies before it)."""
    return frame[frame.groupby("unique_id", sort=False).cumcount(ascending=False) >= count].copy()


def before_holdout(name: str, count: int | None = None, origin: int = 1):
    """(a competition panel's long frame without its hold-out, horizon): ``count`` series evenly spaced over the panel
    (1: its longest series alone; None: every series), for choosing on the values before every test part. With
    ``origin`` K > 1 another K - 1 horizons are cut off too, so a choice scored on the frame's last horizon is scored
    on the K-th horizon before the hold-out (an earlier forecast origin)."""
    import tsattn

    frame = tsattn.load_dataset(name)
    horizon = int(frame.attrs["horizon"])
    if count == 1:
        longest = frame.groupby("unique_id")["y"].size().idxmax()
        frame = frame[frame["unique_id"] == longest]
    elif count is not None:
        frame = quick_subset(frame, count)
    return without_last(frame, horizon * origin), horizon


def dataset_for_run(name: str, quick: bool):
    """(frame or None, RunConfig settings) for a dataset: sunspots by name (one series, its own split), a panel
    with a competition horizon as a frame (its quick subset with --quick) and that horizon."""
    import tsattn

    if name == "sunspots":
        return None, {"dataset": "sunspots"}
    frame = tsattn.load_dataset(name)
    if quick:
        frame = quick_subset(frame)
    return frame, {"dataset": None, "horizon": int(frame.attrs["horizon"])}


def fit_each_once(fit_state, fitted: dict):
    """A `fit_state` for `harness.fit_auto` that fits each candidate model once and hands back that fit after, so
    several selection rules are compared on the same fitted candidates (`fitted` holds them: {model: state})."""
    def once(candidate, data, *args, **kwargs):
        if candidate.model not in fitted:
            fitted[candidate.model] = fit_state(candidate, data, *args, **kwargs)
        return fitted[candidate.model]
    return once


def memory_mb() -> dict:
    """This process's memory in MB: ``peak`` resident set (VmHWM; getrusage's ru_maxrss would carry the parent's
    peak over fork + exec on Linux, so a child of a process holding TensorFlow could not report less than it)
    and ``anon``, its anonymous (not file-backed) part now (NaN where /proc is missing)."""
    status = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                status[key] = float(value.split()[0]) / 1024
    except OSError:
        pass
    if "VmHWM" not in status:
        import resource

        status["VmHWM"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"peak": status["VmHWM"], "anon": status.get("RssAnon", float("nan"))}


# (the /proc/cpuinfo flag, the label cpu_model() writes after the name), widest first; reproduce.py reads the labels
VECTOR_SETS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"))


def cpu_model() -> str:
    """The processor's name and the widest vector instructions it has ("AMD EPYC (AVX2)"): TensorFlow's CPU kernels
    differ by instruction set, so two processors of one name without the same set round a network's figures apart."""
    name, flags = None, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and name is None:
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    name = name or platform.processor() or "unknown"
    widest = next((label for flag, label in VECTOR_SETS if flag in flags), None)
    return f"{name} ({widest})" if widest else name


THREAD_SETTINGS = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS")


def pinned_threads() -> list[str]:
    """The thread settings this process runs with ("TF_NUM_INTRAOP_THREADS=1", ...), empty for TensorFlow's default."""
    return [f"{name}={os.environ[name]}" for name in THREAD_SETTINGS if name in os.environ]


def thread_settings() -> str:
    """TensorFlow's threads as this run set them: the thread count changes how sums round, so a figure made with
    TF_NUM_INTRAOP_THREADS=1 (the test suite's) differs from one made with the default (reproduce.py)."""
    pinned = pinned_threads()
    return "threads " + ", ".join(pinned) if pinned else "TensorFlow's default threads"


def header(title: str, command: str, quick: bool) -> list[str]:
    import tsattn  # first: it imports TensorFlow without its start-up noise
    import keras
    import numpy
    import pandas
    import tensorflow as tf

    lines = [f"# {title}", "",
             f"- command: `{command}`" + (" (QUICK MODE: a smoke test, not a result)" if quick else ""),
             f"- commit: {commit()}",
             f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
             f"- machine: {os.cpu_count()} cores, {cpu_model()}, {platform.system()} {platform.machine()}, no GPU used, "
             f"{thread_settings()}",
             f"- versions: tsattn {tsattn.__version__}, Python {platform.python_version()}, tensorflow {tf.__version__}, "
             f"keras {keras.__version__}, numpy {numpy.__version__}, pandas {pandas.__version__}", ""]
    return lines


def commit() -> str:
    """The commit the results come from (``git rev-parse --short HEAD``), marked when tsattn/, cli/ or benchmarks/
    differ from it (uncommitted code: such figures cannot be reproduced from any commit); "unknown" outside git."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "tsattn", "cli", "benchmarks/*.py"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes to the code (not reproducible)" if dirty else "")


def command_line() -> str:
    # shlex.join quotes what a shell would need quoted, so an empty argument (--statistical '') survives a copy
    return "python " + shlex.join([Path(sys.argv[0]).as_posix().split("/work/main/")[-1], *sys.argv[1:]])


def median_time(function, repeats: int) -> tuple[float, list]:
    times, values = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        values.append(function())
        times.append(time.perf_counter() - start)
    return statistics.median(times), values


def table(headers: list[str], rows: list[list]) -> list[str]:
    def cell(value):
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {path}", file=sys.stderr)

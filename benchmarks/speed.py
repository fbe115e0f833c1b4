"""Speed and scaling: fit time at defaults, `tsattn compare` wall time, predict throughput, growth with length.

    python benchmarks/speed.py               # medians of 3 runs -> benchmarks/results/speed.md
    python benchmarks/speed.py --quick       # tiny sizes, 1 run (run by the test suite)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def scaling_child(model: str, length: int, epochs: int, batch_size: int, plain: bool) -> dict:
    """In a fresh process: one model, a synthetic series of ``length`` points, window 64."""
    import keras

    from tsattn.harness import RunConfig, train_model, window_config
    from tsattn.models import get_model

    rng = np.random.default_rng(0)
    t = np.arange(length)
    series = pd.Series(np.sin(2 * np.pi * t / 50) + 0.1 * rng.normal(size=length))
    config = RunConfig(model=model, dataset=None, window=64, epochs=epochs, batch_size=batch_size,
                       early_stopping=False)
    data = window_config(series, config)
    times = []

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.start)

    if plain:  # the same model on materialised NumPy windows with a plain model.fit, for comparison
        X, y = data.X("train"), data.y("train")
        keras.utils.set_random_seed(0)
        network = get_model(model, window=64)
        network.compile(optimizer="adam", loss="mse")
        network.fit(X, y, batch_size=batch_size, epochs=epochs, verbose=0, callbacks=[Timer()])
    else:
        train_model(data, config, progress=Timer())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"epoch_seconds": times[-1], "first_epoch_seconds": times[0], "peak_mb": peak_mb,
            "train_windows": data.count("train")}


def run_child(*args) -> dict:
    output = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], capture_output=True, text=True,
                            check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main():
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        model, length, epochs, batch, plain = sys.argv[i + 1:i + 6]
        print(json.dumps(scaling_child(model, int(length), int(epochs), int(batch), plain == "1")))
        return
    arguments = C.parser(__doc__.splitlines()[0], "speed.md")
    arguments.add_argument("--sections", default="fit,compare,predict,growth",
                           help="comma-separated subset of fit,compare,predict,growth")
    args = arguments.parse_args()
    sections = set(args.sections.split(","))
    repeats = 1 if args.quick else 3
    lines = C.header("Speed and scaling", C.command_line(), args.quick)
    extra = {"epochs": 2} if args.quick else {}

    if "fit" in sections:
        lines += fit_section(repeats, extra)
    if "compare" in sections:
        lines += compare_section(repeats, args.quick)
    if "predict" in sections:
        lines += predict_section(repeats, args.quick)
    if "growth" in sections:
        lines += growth_section(args.quick)
    C.write(args.out, lines)


def fit_section(repeats, extra):
    from tsattn.harness import RunConfig, fit, preset_config
    from tsattn.models import list_models

    lines = []
    rows, default_seconds = [], {}
    for model in list_models():
        seconds, results = C.median_time(lambda: fit(RunConfig(model=model, seed=0, **extra)), repeats)
        default_seconds[model] = seconds
        rows.append([model, "defaults (sunspots)", f"{seconds:.1f}", results[0].epochs_run,
                     f"{seconds / results[0].epochs_run:.3f}"])
    tutorial = {}
    for preset, model in (("tutorial-sunspots", "simple-rnn"), ("tutorial-fibonacci", "attention-rnn")):
        seconds, results = C.median_time(lambda: fit(preset_config(preset, **extra)), repeats)
        tutorial[preset] = seconds
        rows.append([model, f"preset {preset}", f"{seconds:.1f}", results[0].epochs_run,
                     f"{seconds / results[0].epochs_run:.3f}"])
    lines += ["## Fit time (median of %d runs, wall seconds including evaluation of every part)" % repeats, ""]
    lines += C.table(["model", "setup", "fit s", "epochs run", "s / epoch"], rows)
    lines += ["", f"Default simple-rnn fit / tutorial-sunspots preset fit = "
              f"{default_seconds['simple-rnn'] / tutorial['tutorial-sunspots']:.2f}; default attention-rnn / "
              f"tutorial-fibonacci preset = {default_seconds['attention-rnn'] / tutorial['tutorial-fibonacci']:.2f}.", ""]

    return lines


def compare_section(repeats, quick):
    lines = []
    command = [sys.executable, "-m", "tsattn", "compare"] + (["--epochs", "2", "--seeds", "0"] if quick else [])
    durations = []
    for _ in range(min(repeats, 2)):  # each takes minutes: median (mean) of 2
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            subprocess.run(command + ["--out", str(Path(scratch) / "cmp")], check=True, capture_output=True)
            durations.append(time.perf_counter() - start)
    compare_seconds = float(np.median(durations))
    lines += ["## `tsattn compare` with the defaults (3 models x 3 seeds, sunspots)", "",
              f"Total wall time, median of {len(durations)}: **{compare_seconds:.0f} s** "
              f"(runs: {', '.join(f'{d:.0f}' for d in durations)}; target <= 180 s: "
              f"{'met' if compare_seconds <= 180 else 'NOT met'}). Includes process start, TensorFlow import, "
              "9 fits, evaluation and the report.", ""]

    return lines


def predict_section(repeats, quick):
    from tsattn.models import get_model, list_models

    lines = []
    windows = 2_000 if quick else 100_000
    X = np.random.default_rng(0).random((windows, 24, 1), dtype=np.float32)
    rows = []
    for model in list_models():
        network = get_model(model, window=24)
        network.predict(X[:4096], batch_size=4096, verbose=0)  # trace once
        seconds, _ = C.median_time(lambda: network.predict(X, batch_size=4096, verbose=0), repeats)
        rows.append([model, windows, 4096, f"{windows / seconds:,.0f}"])
    lines += ["## Predict throughput (window 24, `model.predict`, median of %d)" % repeats, ""]
    lines += C.table(["model", "windows", "batch", "windows / s"], rows)
    lines += ["", "Target: >= 50,000 windows/s for simple-rnn.", ""]

    return lines


def growth_section(quick):
    lines = []
    lengths = [1_000, 10_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    batch = 256
    rows = []
    for model in ("simple-rnn", "transformer"):
        for length in lengths:
            result = run_child(model, length, 2, batch, 0)
            rows.append([model, f"{length:,}", f"{result['train_windows']:,}", f"{result['epoch_seconds']:.2f}",
                         f"{result['epoch_seconds'] / result['train_windows'] * 1e6:.1f}", f"{result['peak_mb']:.0f}"])
    plain = run_child("simple-rnn", lengths[-2], 2, batch, 1)
    harness = run_child("simple-rnn", lengths[-2], 2, batch, 0)
    lines += [f"## Growth with series length (window 64, batch {batch}, second epoch timed, fresh process each)", ""]
    lines += C.table(["model", "points", "training windows", "s / epoch", "µs / window", "peak RSS MB"], rows)
    lines += ["", f"Harness vs a plain `model.fit` on materialised NumPy windows (simple-rnn, {lengths[-2]:,} points): "
              f"{harness['epoch_seconds']:.2f} s vs {plain['epoch_seconds']:.2f} s per epoch, peak RSS "
              f"{harness['peak_mb']:.0f} MB vs {plain['peak_mb']:.0f} MB.", ""]
    return lines


if __name__ == "__main__":
    main()

"""Panels: one global model on M3 monthly (time and accuracy per model), pooled vs per-series linear AR, and
peak memory of one epoch on 10,000 synthetic series x 1,000 points.

    python benchmarks/panel.py                         # -> benchmarks/results/panel.md
    python benchmarks/panel.py --sections memory       # one section
    python benchmarks/panel.py --quick                 # a few dozen series, 2 epochs (run by the test suite)

Every fit runs in a fresh process (so peak memory is its own) through the same path as
`tsattn fit --model MODEL --dataset m3-monthly --horizon 18`: the competition hold-out (last 18 values of
each series) is the test part, the 18 before it validation for early stopping; defaults otherwise.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "attention-rnn", "transformer")


def m3_child(model: str, quick: bool, linear_fit: str) -> dict:
    """In a fresh process: fit + forecast one model at its defaults on M3 monthly (or 40 series in quick mode)."""
    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit
    from tsattn.panel import as_panel

    start = time.perf_counter()
    frame = tsattn.load_dataset("m3-monthly")
    if quick:
        keep = frame["unique_id"].drop_duplicates().iloc[::36]  # 40 series of every length
        frame = frame[frame["unique_id"].isin(keep)]
        frame.attrs["horizon"] = 18
    panel = as_panel(frame)
    load_seconds = time.perf_counter() - start
    config = RunConfig(model=model, dataset=None, horizon=18, linear_fit=linear_fit,
                       **({"epochs": 2} if quick else {}))
    start = time.perf_counter()
    result = fit(config, series=panel)
    total = time.perf_counter() - start
    test = result.metrics["test"]
    per_series = {}
    if model == MODELS[0]:  # the linear baseline fit per series, on the same windows and targets
        from tsattn import metrics as M
        from tsattn.baselines import LinearAR
        from tsattn.evaluation import forecast_part, origins_of

        linear = LinearAR(result.data.window, result.data.horizon, "per-series").fit(result.data)
        numbers = origins_of(result.data, "test")[2]
        values = M.per_series_metrics(result.data.y("test", scaled=False), forecast_part(linear, result.data, "test"),
                                      numbers, panel.n_series, result.mase_scale)
        per_series = {"smape": float(np.nanmean(values["smape"])), "mase": float(np.nanmean(values["mase"]))}
    return {"model": model, "linear_per_series": per_series, "series": panel.n_series, "load_seconds": load_seconds, "fit_seconds": result.fit_seconds,
            "fit_forecast_seconds": total, "epochs": result.epochs_run, "best_epoch": result.best_epoch,
            "train_windows": result.data.count("train"), "peak_mb": C.memory_mb()["peak"],
            "smape": {key: test[key]["smape"] for key in ("model", "naive", "seasonal_naive", "linear")},
            "mase": {key: test[key]["mase"] for key in ("model", "naive", "seasonal_naive", "linear")},
            "median_smape": result.metrics["median"]["test"]["model"]["smape"],
            "validation_smape": result.metrics["validation"]["model"]["smape"]}


def memory_child(n_series: int, length: int, batch_size: int) -> dict:
    """In a fresh process: a long frame of n_series x length synthetic points -> panel -> windows -> one epoch."""
    from tsattn.config import RunConfig, window_config
    from tsattn.harness import train_model
    from tsattn.panel import as_panel

    rng = np.random.default_rng(0)
    t = np.arange(length)
    start = time.perf_counter()
    levels = rng.uniform(10, 1000, size=n_series)
    values = (levels[:, None] * (1 + 0.3 * np.sin(2 * np.pi * (t[None, :] + rng.integers(0, 12, (n_series, 1))) / 12))
              + rng.normal(scale=5, size=(n_series, length)))
    frame = pd.DataFrame({"unique_id": pd.Categorical.from_codes(np.repeat(np.arange(n_series), length),
                                                            [f"s{i}" for i in range(n_series)]),
                          "ds": np.tile(pd.date_range("2000-01-01", periods=length, freq="D").to_numpy(), n_series),
                          "y": values.ravel()})
    del values
    build_seconds = time.perf_counter() - start
    start = time.perf_counter()
    panel = as_panel(frame)
    del frame
    panel_seconds = time.perf_counter() - start
    config = RunConfig(model="simple-rnn", dataset=None, preset="classic", epochs=1, batch_size=batch_size, early_stopping=False)
    start = time.perf_counter()
    data = window_config(panel, config)
    window_seconds = time.perf_counter() - start
    start = time.perf_counter()
    train_model(data, *config.parts())
    epoch_seconds = time.perf_counter() - start
    return {"series": n_series, "length": length, "points": n_series * length, "train_windows": data.count("train"),
            "batch_size": batch_size, "build_seconds": build_seconds, "panel_seconds": panel_seconds,
            "window_seconds": window_seconds, "epoch_seconds": epoch_seconds, "peak_mb": C.memory_mb()["peak"]}


def run_child(*arguments) -> dict:
    completed = subprocess.run([sys.executable, __file__, "--child", *map(str, arguments)], capture_output=True,
                               text=True)
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-3000:])
    return json.loads(completed.stdout.strip().splitlines()[-1])


def section_m3(quick: bool) -> list[str]:
    rows, lines = [], []
    models = MODELS[:1] if quick else MODELS  # quick: a smoke test of the script (the test suite)
    results = {model: run_child("m3", model, int(quick), "pooled") for model in models}
    first = results[MODELS[0]]
    per_series = first["linear_per_series"]
    lines += ["## M3 monthly: one global model per network, defaults", "",
              f"{first['series']} series, horizon 18, test = the last 18 values of each series (the competition's "
              "hold-out), validation = the 18 before them (early stopping), window 24, batch 32, seed 0. "
              "sMAPE as M3 defines it (mean over the 18 steps of 200|y - f| / (|y| + |f|), then mean over "
              "series); MASE with each series' in-sample seasonal-naive (lag 12) error as the scale. "
              "Fit + forecast: the harness's fit (training, then forecasts and metrics of every part); loading "
              f"and validating the panel took {first['load_seconds']:.1f} s more.", ""]
    for model, result in results.items():
        rows.append([model, result["epochs"], result["best_epoch"], result["train_windows"],
                     round(result["fit_seconds"], 1), round(result["fit_forecast_seconds"], 1),
                     result["smape"]["model"], result["median_smape"], result["mase"]["model"],
                     round(result["peak_mb"])])
    lines += C.table(["model", "epochs", "best epoch", "train windows", "fit s", "fit + forecast s",
                      "test sMAPE", "median sMAPE", "test MASE", "peak MB"], rows)
    lines += ["", "Baselines on the same targets (from the simple-rnn run):", ""]
    lines += C.table(["baseline", "test sMAPE", "test MASE"],
                     [[label, first["smape"][key], first["mase"][key]] for key, label in
                      (("naive", "naive"), ("seasonal_naive", "seasonal naive"),
                       ("linear", "linear AR(24), pooled over series"))]
                     + [["linear AR(24), per series (pooled where a series has too few windows)",
                         per_series["smape"], per_series["mase"]]])
    return lines


def section_memory(quick: bool) -> list[str]:
    n_series, length = (200, 200) if quick else (10_000, 1_000)
    result = run_child("memory", n_series, length, 1024)
    lines = ["## Memory: one epoch on a large panel", "",
             f"{result['series']:,} synthetic daily series x {result['length']:,} points ({result['points']:,} "
             f"values) as a long frame -> as_panel -> windows (window 24, chronological 0.7/0.1/0.2 per series) -> "
             f"one epoch of simple-rnn at batch size {result['batch_size']} ({result['train_windows']:,} training "
             "windows, gathered per batch from the flat array, never materialised).", ""]
    lines += C.table(["step", "seconds"], [["build the long frame", round(result["build_seconds"], 1)],
                                           ["as_panel (validation per series)", round(result["panel_seconds"], 1)],
                                           ["windows, split, per-series scalers", round(result["window_seconds"], 1)],
                                           ["one epoch", round(result["epoch_seconds"], 1)]])
    lines += ["", f"Peak resident memory of the process: **{result['peak_mb']:.0f} MB** (target: under 2,048 MB).", ""]
    return lines


SECTIONS = {"m3": section_m3, "memory": section_memory}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, *arguments = sys.argv[2:]
        if kind == "m3":
            print(json.dumps(m3_child(arguments[0], bool(int(arguments[1])), arguments[2])))
        else:
            print(json.dumps(memory_child(int(arguments[0]), int(arguments[1]), int(arguments[2]))))
        return
    parser = C.parser(__doc__.splitlines()[0], "panel.md")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    args = parser.parse_args()
    lines = C.header("Panels: global models on M3 monthly and memory on 10,000 series", C.command_line(), args.quick)
    for name in args.sections.split(","):
        lines += SECTIONS[name](args.quick) + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

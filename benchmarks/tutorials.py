"""Reproduce the three tutorials' figures through tsattn's presets, beside baselines, over several seeds.

    python benchmarks/tutorials.py            # 3 seeds, full epochs -> benchmarks/results/tutorials.md
    python benchmarks/tutorials.py --quick    # 1 seed, 1 epoch (run by the test suite)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from tsattn.config import preset_config  # noqa: E402
from tsattn.harness import fit  # noqa: E402

PUBLISHED = {"sunspots_train_rmse": 0.058, "sunspots_test_rmse": 0.077,
             "fibonacci_simple-rnn_test_mse": 2.62e-5, "fibonacci_attention-rnn_test_mse": 9.05e-6}


def scaled(result, part, forecast):
    return result.data.scaler.transform(forecast)


def main():
    args = C.parser(__doc__.splitlines()[0], "tutorials.md").parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    epochs = {"epochs": 1} if args.quick else {}
    lines = C.header("Tutorials reproduced through tsattn presets", C.command_line(), args.quick)

    # ---- sunspots: SimpleRNN(3), windows of 12 months, 80/20 split, whole-series min-max (as published)
    rows, naive_rows = [], []
    for seed in seeds:
        result = fit(preset_config("tutorial-sunspots", seed=seed, **epochs))
        test = result.forecasts["test"]
        naive_scaled = result.data.scaler.transform(test.baselines["naive"])
        naive_rmse_scaled = float(np.sqrt(np.mean((naive_scaled - test.actual_scaled) ** 2)))
        rows.append([seed, result.metrics["train"]["scaled"]["rmse"], result.metrics["test"]["scaled"]["rmse"],
                     naive_rmse_scaled, result.metrics["test"]["model"]["rmse"], result.metrics["test"]["naive"]["rmse"],
                     result.fit_seconds])
    array = np.array([r[1:] for r in rows], dtype=float)
    beats = int((array[:, 1] < array[:, 2]).sum())
    lines += ["## Sunspots SimpleRNN (`--preset tutorial-sunspots`)", "",
              "SimpleRNN(3, tanh) -> Dense(1, tanh); non-overlapping windows of 12 months cut inside each part; "
              "80/20 split; min-max scaler fit on the whole series (the tutorial's leak, kept to reproduce it); "
              "20 epochs, batch 1. The test part has 46 windows.", ""]
    lines += C.table(["seed", "train RMSE (scaled)", "test RMSE (scaled)", "naive test RMSE (scaled)",
                      "test RMSE (sunspots)", "naive test RMSE (sunspots)", "fit s"],
                     rows + [["mean", *array.mean(axis=0)], ["published", PUBLISHED["sunspots_train_rmse"],
                                                             PUBLISHED["sunspots_test_rmse"], "", "", "", ""]])
    lines += ["", f"The RNN's test RMSE is below the naive last-value forecast's on {beats} of {len(seeds)} seed(s) "
              f"(mean {array[:, 1].mean():.4f} vs naive {array[:, 2].mean():.4f}, scaled).", ""]

    # ---- Fibonacci: 1200 numbers, windows of 20, shuffled 70/30 split with RandomState(13)
    fib_rows = {}
    for model in ("simple-rnn", "attention-rnn"):
        for seed in seeds:
            result = fit(preset_config("tutorial-fibonacci", model=model, seed=seed, **epochs))
            test = result.forecasts["test"]
            naive_scaled = result.data.scaler.transform(test.baselines["naive"])
            fib_rows.setdefault(model, []).append([
                seed, result.metrics["test"]["scaled"]["mse"],
                float(np.mean((naive_scaled - test.actual_scaled) ** 2)),
                float(np.mean(test.actual_scaled ** 2)), result.fit_seconds])
    lines += ["## Fibonacci with and without attention (`--preset tutorial-fibonacci`)", "",
              "n = 1200, windows of 20, units 2 (tanh), shuffled 70/30 split of windows with "
              "np.random.RandomState(13), scaler fit on the whole series, 30 epochs, batch 1. "
              "After this scaling 1185 of the 1200 values are below 0.001, so a model that always "
              "predicts zero already has a tiny MSE: that column is the yardstick.", ""]
    table_rows = []
    for model, model_rows in fib_rows.items():
        values = np.array([r[1:] for r in model_rows], dtype=float)
        table_rows += [[model, *r] for r in model_rows]
        table_rows.append([model, "mean", *values.mean(axis=0)])
        table_rows.append([model, "published", PUBLISHED[f"fibonacci_{model}_test_mse"], "", "", ""])
    lines += C.table(["model", "seed", "test MSE (scaled)", "naive test MSE (scaled)", "MSE of predicting 0",
                      "fit s"], table_rows)
    simple = np.array([r[1] for r in fib_rows["simple-rnn"]])
    attention = np.array([r[1] for r in fib_rows["attention-rnn"]])
    wins = int((attention < simple).sum())
    lines += ["", f"Attention's test MSE is lower than the SimpleRNN's on {wins} of {len(seeds)} seed(s) "
              f"(means {attention.mean():.3g} vs {simple.mean():.3g}). "
              f"Predicting zero gives {np.mean([r[3] for r in fib_rows['simple-rnn']]):.3g}; the naive last value "
              f"{np.mean([r[2] for r in fib_rows['simple-rnn']]):.3g}.", ""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

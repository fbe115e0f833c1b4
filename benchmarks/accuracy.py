"""Accuracy of every model at its defaults on monthly sunspots, beside naive and linear AR(24).

Task: chronological split, test part from index 2256 (1937-01, the last 20%), one-step forecasts of all
564 test months, each from the values before it; RMSE and MAE in sunspot units; seeds 0, 1, 2.
Plus the Fibonacci known-answer check (log values, defaults): test relative error in original units.

    python benchmarks/accuracy.py             # -> benchmarks/results/accuracy.md
    python benchmarks/accuracy.py --quick     # 1 seed, 2 epochs (run by the test suite)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import tsattn  # noqa: E402
from tsattn import metrics as M  # noqa: E402
from tsattn.config import RunConfig  # noqa: E402
from tsattn.harness import fit  # noqa: E402
from tsattn.models import list_models  # noqa: E402

TEST_START = 2256
TARGET_EACH, TARGET_BEST = 18.2, 18.0


def linear_ar(values: np.ndarray, lags: int, fit_end: int) -> tuple[float, float]:
    """AR(lags) with intercept by least squares on targets before ``fit_end``; test RMSE and MAE."""
    windows = np.lib.stride_tricks.sliding_window_view(values, lags + 1)
    targets = np.arange(lags, len(values))
    X, y = windows[:, :lags], windows[:, lags]
    train, test = targets < fit_end, targets >= TEST_START
    coefficients = M.fit_linear_autoregression(X[train], y[train][:, None])
    error = M.predict_linear_autoregression(coefficients, X[test])[:, 0] - y[test]
    return float(np.sqrt(np.mean(error ** 2))), float(np.mean(np.abs(error)))


def main():
    args = C.parser(__doc__.splitlines()[0], "accuracy.md").parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    extra = {"epochs": 2} if args.quick else {}
    series = tsattn.load_dataset("sunspots")
    values = series.to_numpy()
    lines = C.header("Accuracy of the defaults on monthly sunspots", C.command_line(), args.quick)

    rows, summary, forecasts = [], {}, {}
    models = list_models()[:1] if args.quick else list_models()  # quick: a smoke test of the script (the test suite)
    for model in models:
        per_seed = []
        for seed in seeds:
            result = fit(RunConfig(model=model, seed=seed, **extra))
            first_target = int(result.data.target_positions("test")[0, 0])
            assert first_target == TEST_START and result.data.count("test") == 564, "the task's split changed"
            test = result.metrics["test"]["model"]
            per_seed.append((test["rmse"], test["mae"], result.metrics["validation"]["model"]["rmse"],
                             result.epochs_run, result.fit_seconds))
            forecasts.setdefault(model, []).append(result.forecasts["test"].predicted[:, 0])
            naive = result.metrics["test"]["naive"]
            actual = result.forecasts["test"].actual[:, 0]
        array = np.array(per_seed)
        summary[model] = array
        rows.append([model, f"{array[:, 0].mean():.3f} ± {array[:, 0].std(ddof=1) if len(seeds) > 1 else 0:.3f}",
                     f"{array[:, 1].mean():.3f}", f"{array[:, 2].mean():.3f}",
                     " / ".join(f"{v:.2f}" for v in array[:, 0]), " / ".join(str(int(v)) for v in array[:, 3]),
                     f"{array[:, 4].mean():.1f}"])
    ar_all = linear_ar(values, 24, TEST_START)
    ar_train = linear_ar(values, 24, 1974)
    rows.append(["naive (last value)", f"{naive['rmse']:.3f}", f"{naive['mae']:.3f}", "", "", "", ""])
    rows.append(["linear AR(24), fit on all data before the test part", f"{ar_all[0]:.3f}", f"{ar_all[1]:.3f}",
                 "", "", "", ""])
    rows.append(["linear AR(24), fit on the training part only", f"{ar_train[0]:.3f}", f"{ar_train[1]:.3f}",
                 "", "", "", ""])
    ensemble = {m: np.mean(f, axis=0) for m, f in forecasts.items()}
    for model, prediction in ensemble.items():
        error = prediction - actual
        rows.append([f"{model}: mean forecast of the {len(seeds)} seeds (not a default, for information)",
                     f"{np.sqrt(np.mean(error ** 2)):.3f}", f"{np.mean(np.abs(error)):.3f}", "", "", "", ""])

    means = {m: a[:, 0].mean() for m, a in summary.items()}
    each_ok = [m for m, v in means.items() if v <= TARGET_EACH]
    best_model = min(means, key=means.get)
    lines += ["## Sunspots, one-step forecasts of the 564 test months (1937-01..1983-12)", "",
              "Every model at its defaults (`tsattn.fit(RunConfig(model=..., seed=...))`: window 24, chronological "
              "0.7/0.1/0.2 split, min-max scaler fit on the training part, early stopping on the validation part). "
              "RMSE and MAE in sunspot units; ± is the standard deviation over seeds.", ""]
    lines += C.table(["model", "test RMSE", "test MAE", "validation RMSE", "test RMSE per seed", "epochs run",
                      "fit s"], rows)
    lines += ["", f"Targets: every model's mean test RMSE <= {TARGET_EACH} (met by {len(each_ok)} of {len(means)}: "
              f"{', '.join(each_ok) or 'none'}); the best <= {TARGET_BEST} (best: {best_model} "
              f"{means[best_model]:.3f}: {'met' if means[best_model] <= TARGET_BEST else 'NOT met'}).", ""]

    # Fibonacci known answer: log values, defaults, relative error in original units
    fib_rows = []
    for model in models:
        result = fit(RunConfig(model=model, dataset="fibonacci", dataset_options={"log": True}, seed=0, **extra))
        test = result.forecasts["test"]
        relative = np.abs(np.expm1(test.predicted[:, 0] - test.actual[:, 0]))  # |F_hat - F| / F
        fib_rows.append([model, float(relative.max()), float(relative.mean()), result.epochs_run,
                         "yes" if relative.max() < 1e-3 else "NO"])
    lines += ["## Fibonacci known answer (log values, defaults, seed 0)", "",
              "`load_dataset('fibonacci', log=True)`, chronological split; test targets are the last 20% "
              "(the largest numbers, outside the training range). Relative error |F_hat - F| / F in original "
              "units, F_hat = exp(forecast of log F).", ""]
    lines += C.table(["model", "max relative error", "mean relative error", "epochs run", "< 1e-3"], fib_rows)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

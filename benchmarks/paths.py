"""One pipeline on M3 monthly: the harness (what compare and the other benchmarks run), `tsattn fit` and
`tsattn.Forecaster` fitted on the same data with the same settings and seed give the same forecasts,
intervals and figures.

    python benchmarks/paths.py                      # -> benchmarks/results/paths.md (attention-rnn, seed 0)
    python benchmarks/paths.py --models simple-rnn,attention-rnn --seeds 0,1
    python benchmarks/paths.py --quick              # 24 series, 2 epochs (run by the tests)

The harness and `tsattn fit --dataset m3-monthly --horizon 18 --level 80 --level 95` hold out the last 18 values
of each series as test and validate on the 18 before them; the Forecaster is fitted on every series without its
last 18 values with `validation=18` and forecasts 18 steps with `level=(80, 95)`. Its forecasts are scored here
against the held-out values with M3's sMAPE and the share of values inside each interval; `tsattn fit`'s are
read from its metrics.json. A gap between the columns would be a defect.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

HORIZON = 18
LEVELS = (80, 95)


def forecaster_figures(frame, model: str, seed: int, quick: bool) -> dict:
    """The Forecaster fitted on each series without its last HORIZON values, scored on them."""
    import tsattn

    keep = frame.groupby("unique_id", sort=False).cumcount(ascending=False) >= HORIZON
    train, held_out = frame[keep], frame[~keep]
    began = time.perf_counter()
    forecaster = tsattn.Forecaster(model, horizon=HORIZON, **({"epochs": 2} if quick else {}))
    forecast = forecaster.fit(train, validation=HORIZON, seed=seed).predict(HORIZON, level=LEVELS)
    seconds = time.perf_counter() - began
    merged = forecast.merge(held_out, on=["unique_id", "ds"], validate="one_to_one")
    actual, predicted = merged["y"].to_numpy(), merged[model].to_numpy()
    smape = 200 * np.abs(actual - predicted) / (np.abs(actual) + np.abs(predicted))
    figures = {"smape": float(smape.reshape(-1, HORIZON).mean(axis=1).mean()), "seconds": seconds,
               "values": len(merged)}
    for level in LEVELS:
        inside = (merged[f"{model}-lo-{level}"] <= actual) & (actual <= merged[f"{model}-hi-{level}"])
        figures[f"coverage-{level}"] = float(inside.mean() * 100)
    return figures


def harness_figures(frame, model: str, seed: int, quick: bool) -> dict:
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    keras.backend.clear_session()
    result = fit(RunConfig(model=model, dataset=None, horizon=HORIZON, seed=seed, level=list(LEVELS),
                           **({"epochs": 2} if quick else {})), series=frame)
    test = result.metrics["test"]["model"]
    return {"smape": test["smape"], "seconds": result.fit_seconds,
            **{f"coverage-{level}": test[f"coverage-{level}"] for level in LEVELS}}


def cli_figures(model: str, seed: int, quick: bool) -> dict:
    """`tsattn fit` in its own process; the quick mode's subset goes through a CSV file."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "run"
        data = ["--dataset", "m3-monthly"]
        if quick:
            import tsattn

            csv = Path(scratch) / "m3.csv"
            C.quick_subset(tsattn.load_dataset("m3-monthly")).to_csv(csv, index=False)
            data = ["--csv", str(csv), "--id-column", "unique_id", "--date-column", "ds", "--column", "y",
                    "--set", "split=holdout", "--set", f"holdout={HORIZON}", "--epochs", "2"]
        command = [sys.executable, "-m", "tsattn", "fit", "--model", model, *data, "--horizon", str(HORIZON),
                   "--seed", str(seed), *[a for level in LEVELS for a in ("--level", str(level))], "--out", str(out),
                   "--quiet"]
        subprocess.run(command, check=True)
        test = json.loads((out / "metrics.json").read_text())["test"]["model"]
    return {"smape": test["smape"], **{f"coverage-{level}": test[f"coverage-{level}"] for level in LEVELS}}


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "paths.md")
    parser.add_argument("--models", default="attention-rnn")
    parser.add_argument("--seeds", default="0")
    args = parser.parse_args()
    import tsattn

    frame = tsattn.load_dataset("m3-monthly")
    if args.quick:
        frame = C.quick_subset(frame)
    lines = C.header("One pipeline: the harness, `tsattn fit` and the Forecaster on M3 monthly", C.command_line(),
                     args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    rows, worst = [], 0.0
    for model in args.models.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            paths = {"harness (compare, benchmarks)": harness_figures(frame, model, seed, args.quick),
                     "tsattn fit": cli_figures(model, seed, args.quick),
                     "tsattn.Forecaster": forecaster_figures(frame, model, seed, args.quick)}
            reference = paths["harness (compare, benchmarks)"]
            for path, figures in paths.items():
                gap = max(abs(figures[key] - reference[key]) for key in ("smape", "coverage-80", "coverage-95"))
                worst = max(worst, gap)
                rows.append([model, seed, path, f"{figures['smape']:.6f}", f"{figures['coverage-80']:.4f}",
                             f"{figures['coverage-95']:.4f}", f"{gap:.2g}"])
                print(" | ".join(map(str, rows[-1])), file=sys.stderr)
    lines += C.table(["model", "seed", "path", "test sMAPE", "80% coverage", "95% coverage",
                      "largest gap to the harness"], rows)
    lines += ["", f"Largest gap between paths: {worst:.2g} ({'the paths agree' if worst < 1e-6 else 'A DEFECT'})."]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Short annual series: every model at its defaults against the naive forecast, as `tsattn fit` fits one series.

    python benchmarks/short_series.py            # -> benchmarks/results/short_series.md (needs statsmodels,
                                                 #    installed with tsattn[bench])
    python benchmarks/short_series.py --quick    # one series, one seed, 2 epochs

Public annual series of about 100 values, shipped offline by statsmodels: the Nile's yearly flow at Aswan
(1871-1970, 100 values) and the yearly sunspot numbers 1909-2008 (the last 100 of statsmodels' 1700-2008 series);
plus the longest yearly series of M3 (47 values). Each is fitted as `tsattn fit --csv FILE --horizon 6` would fit
it: the default chronological split (70 / 10 / 20 %), every test window of 6 steps scored, beside the naive
(last value) forecast and the pooled linear AR on the same targets. Nothing here was used to choose a default.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

HORIZON = 6
MODELS = ("simple-rnn", "attention-rnn", "transformer", "nbeats")


def series_set(quick: bool) -> dict:
    try:
        import statsmodels.api as sm
    except ImportError:
        sys.exit("benchmarks/short_series.py needs statsmodels: pip install 'tsattn[bench]'")
    import tsattn

    nile = sm.datasets.nile.load_pandas().data
    found = {"Nile flow, 1871-1970 (100 values)": pd.Series(
        nile["volume"].to_numpy(float), index=pd.period_range(str(int(nile["year"].iloc[0])), periods=len(nile),
                                                              freq="Y").to_timestamp())}
    if quick:
        return found
    spots = sm.datasets.sunspots.load_pandas().data.tail(100)
    found["yearly sunspots, 1909-2008 (100 values)"] = pd.Series(
        spots["SUNACTIVITY"].to_numpy(float), index=pd.period_range(str(int(spots["YEAR"].iloc[0])),
                                                                   periods=len(spots), freq="Y").to_timestamp())
    m3 = tsattn.load_dataset("m3-yearly")
    longest = m3.groupby("unique_id")["y"].size().idxmax()
    one = m3[m3["unique_id"] == longest]
    found[f"M3 yearly {longest}, the longest ({len(one)} values)"] = pd.Series(one["y"].to_numpy(float),
                                                                              index=pd.DatetimeIndex(one["ds"]))
    return found


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "short_series.md")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--models", default=",".join(MODELS))
    args = p.parse_args()
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    models = [m.strip() for m in args.models.split(",")]
    lines = C.header("Short annual series: the defaults against the naive forecast", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    for label, series in series_set(args.quick).items():
        rows, naive = [], None
        for model in models:
            rmse, smape, seconds, preset = [], [], [], None
            for seed in seeds:
                keras.backend.clear_session()
                config = RunConfig(model=model, dataset=None, horizon=HORIZON, seed=seed)
                if args.quick:
                    config = config.updated(epochs=2)
                start = time.perf_counter()
                result = fit(config, series=series)
                seconds.append(time.perf_counter() - start)
                test = result.metrics["test"]
                rmse.append(test["model"]["rmse"])
                smape.append(test["model"]["smape"])
                naive, linear, preset = test["naive"], test["linear"], result.config.preset
            rows.append([model, preset, len(seeds), f"{np.mean(rmse):.2f} ± {np.std(rmse):.2f}",
                         " / ".join(f"{v:.2f}" for v in rmse), f"{np.mean(smape):.2f}",
                         f"{sum(v < naive['rmse'] for v in rmse)}/{len(rmse)}", f"{np.mean(seconds):.1f}"])
        rows += [["naive", "-", "-", f"{naive['rmse']:.2f}", "", f"{naive['smape']:.2f}", "", ""],
                 ["linear AR", "-", "-", f"{linear['rmse']:.2f}", "", f"{linear['smape']:.2f}", "", ""]]
        lines += [f"## {label}", "", *C.table(["model", "settings", "seeds", "test RMSE (mean ± std)", "per seed",
                                                "test sMAPE", "seeds below naive RMSE", "fit s"], rows), ""]
        C.write(args.out, lines)


if __name__ == "__main__":
    main()

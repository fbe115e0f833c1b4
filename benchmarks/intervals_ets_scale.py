"""Conformal scores measured in AutoETS's own forecast deviation: does a model-based per-series, per-step scale make
sharper intervals than tsattn's seasonal-naive one? (a lead for issue 36's interval target, not yet in tsattn)

    python benchmarks/intervals_ets_scale.py --origin 2   # -> benchmarks/results/intervals_ets_scale_o2.md
    python benchmarks/intervals_ets_scale.py --origin 1   # the competition hold-outs themselves (not for choosing)
    python benchmarks/intervals_ets_scale.py --quick      # 24 monthly series

For each M3 frequency, with ``--origin K`` the frame loses its last K - 1 horizons, so the scored horizon is the K-th
before the hold-out (K = 2: the horizon before it, what a default may be chosen on). statsforecast's AutoETS
forecasts the scored horizon from the values before it (where it cannot fit a history, too short, statsforecast's Naive
stands in, with its own intervals), and the horizon before that from the values before that
(the calibration origin); its errors there, divided by a scale, are the conformity scores: per step, the
ceil((n + 1) L) / n-th smallest over the n series is the band's radius at level L (split conformal, one calibration
origin; tsattn's own calibration pools several validation windows). The band at the scored origin is the forecast
plus/minus that radius times the same scale there. Scales: tsattn's default ``blend`` (tsattn.intervals.window_scale:
the mean of the seasonal-naive MAE of every value up to the origin and of the last recent_span values), AutoETS's
own forecast standard deviation for that series and step ((hi - lo) / (2 z) of its 80% interval), and their
geometric mean. AutoETS's own intervals are scored beside them. Every figure: tsattn.metrics on the scored horizon
(coverage, MSIS in M4's in-sample seasonal-naive scale).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

FREQUENCIES = ("monthly", "quarterly", "yearly", "other")
SEASONS = {"monthly": 12, "quarterly": 4, "yearly": 1, "other": 1}
LEVELS = (80, 95)
SCALES = ("blend", "ETS deviation", "sqrt(blend x ETS deviation)")


def ets_forecasts(frame: pd.DataFrame, horizon: int, season: int) -> dict:
    """AutoETS's point forecast and 80% / 95% bounds, each (series, horizon) in sorted series order."""
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS, Naive

    train = frame.assign(ds=frame.groupby("unique_id", sort=False).cumcount())
    # a history AutoETS cannot fit (statsforecast: "tiny datasets") gets the naive forecast and its own intervals
    out = StatsForecast(models=[AutoETS(season_length=season)], freq=1, n_jobs=2, fallback_model=Naive()).forecast(
        df=train, h=horizon, level=list(LEVELS))
    out = out.reset_index() if "unique_id" not in out.columns else out
    out["step"] = out.groupby("unique_id", sort=False).cumcount()
    return {column: out.pivot(index="unique_id", columns="step", values=column).sort_index().to_numpy()
            for column in out.columns if column.startswith("AutoETS")}


def last_values(frame: pd.DataFrame, count: int) -> np.ndarray:
    tail = frame[frame.groupby("unique_id", sort=False).cumcount(ascending=False) < count]
    tail = tail.assign(step=tail.groupby("unique_id", sort=False).cumcount())
    return tail.pivot(index="unique_id", columns="step", values="y").sort_index().to_numpy()


def blend(frame: pd.DataFrame, season: int, horizon: int, insample: np.ndarray) -> np.ndarray:
    """tsattn's default interval scale at each series' last value (tsattn.intervals.window_scale, kind blend)."""
    from tsattn.intervals import window_scale

    frame = frame.sort_values("unique_id", kind="stable")
    sizes = frame.groupby("unique_id", sort=True).size().to_numpy()
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return window_scale("blend", frame["y"].to_numpy(), first + sizes - 1, first, season, horizon, insample)


def run(frequency: str, origin: int, quick: bool) -> tuple[list, int]:
    import tsattn
    from tsattn import metrics as M
    from tsattn.intervals import series_scale

    frame = tsattn.load_dataset(f"m3-{frequency}")
    horizon, season = int(frame.attrs["horizon"]), SEASONS[frequency]
    if quick:
        frame = C.quick_subset(frame)
    frame = C.without_last(frame, horizon * (origin - 1)) if origin > 1 else frame
    frame = frame[frame.groupby("unique_id")["y"].transform("size") >= 2 * horizon + 3]  # two origins, 3 values
    before_scored, before_calibration = C.without_last(frame, horizon), C.without_last(frame, 2 * horizon)
    scored, calibration = last_values(frame, horizon), last_values(before_scored, horizon)
    at_scored = ets_forecasts(before_scored, horizon, season)
    at_calibration = ets_forecasts(before_calibration, horizon, season)

    def in_sample(part):  # M4's MSIS / MASE scale: the seasonal-naive MAE of the values before the origin
        part = part.sort_values("unique_id", kind="stable")
        sizes = part.groupby("unique_id", sort=True).size().to_numpy()
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        return series_scale(M.insample_scale(part["y"].to_numpy(), offsets, sizes, season), 1.0)

    scale_scored, scale_calibration = in_sample(before_scored), in_sample(before_calibration)
    z = 1.2815515655446004  # the normal's 90% quantile: an 80% band is +/- z deviations
    deviation = {"scored": (at_scored["AutoETS-hi-80"] - at_scored["AutoETS-lo-80"]) / (2 * z),
                 "calibration": (at_calibration["AutoETS-hi-80"] - at_calibration["AutoETS-lo-80"]) / (2 * z)}
    blends = {"scored": blend(before_scored, season, horizon, scale_scored)[:, None],
              "calibration": blend(before_calibration, season, horizon, scale_calibration)[:, None]}
    scales = {"blend": blends,
              "ETS deviation": deviation,
              "sqrt(blend x ETS deviation)": {k: np.sqrt(blends[k] * deviation[k]) for k in blends}}
    rows = []
    for level in LEVELS:
        alpha = 1 - level / 100
        bands = {"AutoETS's own intervals": (at_scored[f"AutoETS-lo-{level}"], at_scored[f"AutoETS-hi-{level}"])}
        for name in SCALES:
            below, above = (np.maximum(scales[name][k], 1e-12) for k in ("calibration", "scored"))
            scores = np.abs(calibration - at_calibration["AutoETS"]) / below  # (series, horizon)
            n = scores.shape[0]
            radius = np.quantile(scores, min(1.0, np.ceil((n + 1) * level / 100) / n), axis=0, method="higher")
            bands[f"conformal, scores in {name}"] = (at_scored["AutoETS"] - radius * above,
                                                     at_scored["AutoETS"] + radius * above)
        for name, (low, high) in bands.items():
            penalty = (high - low) + 2 / alpha * ((low - scored) * (scored < low) + (scored - high) * (scored > high))
            rows.append([frequency, level, name, f"{100 * np.mean((scored >= low) & (scored <= high)):.1f}",
                         f"{np.mean(penalty / scale_scored[:, None]):.3f}"])
    return rows, scored.shape[0]


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "intervals_ets_scale_o2.md")
    p.add_argument("--origin", type=int, default=2, help="score the K-th horizon before the hold-out (1: the hold-out)")
    p.add_argument("--frequencies", default=",".join(FREQUENCIES))
    args = p.parse_args()
    frequencies = ["monthly"] if args.quick else [f for f in args.frequencies.split(",") if f]
    lines = C.header("Intervals: conformal scores in AutoETS's own deviation", C.command_line(), args.quick)
    what = "the competition hold-out" if args.origin == 1 else \
        f"horizon {args.origin} from the end (the last {args.origin - 1} left out, the hold-out among them)"
    lines += [f"Scored on {what}; calibrated on the horizon before it; AutoETS (statsforecast) is the point "
              "forecaster; see the script's docstring.", ""]
    rows, counts, started = [], {}, time.perf_counter()
    for frequency in frequencies:
        found, counts[frequency] = run(frequency, args.origin, args.quick)
        rows += found
    lines += ["## Bands on the scored horizon", ""] + C.table(["M3", "level", "band", "coverage %", "MSIS"], rows) + [
        "", "## Summary: MSIS with scores in blend and in sqrt(blend x ETS deviation)", ""]
    by = {(r[0], r[1], r[2]): float(r[4]) for r in rows}
    summary = []
    for frequency in frequencies:
        for level in LEVELS:
            base = by[(frequency, level, "conformal, scores in blend")]
            best = by[(frequency, level, "conformal, scores in sqrt(blend x ETS deviation)")]
            summary.append(f"{frequency} ({counts[frequency]} series) {level}%: blend {base:.3f}, geometric mean "
                           f"{best:.3f} ({100 * (best / base - 1):+.1f}%)")
    lines += ["- " + line for line in summary] + ["", f"{time.perf_counter() - started:.0f} s in all."]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

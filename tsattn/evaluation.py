"""Evaluation of any forecaster (network or baseline) on a windowed panel, per series and over series.

    evaluation = score_windows(network, baselines, data, season)
    evaluation.frame        # tidy: series, part, model, metric, value
    evaluation.metrics      # metrics.json's layout: {part: {model: {metric: mean over series}}}

Every model is called through the same :class:`tsattn.baselines.WindowModel` interface on the same
targets; the MASE denominator is each series' in-sample seasonal-naive error (M4's definition).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import metrics as M
from .errors import ConfigError
from .windows import PARTS


@dataclass
class Evaluation:
    forecasts: dict            # part -> harness.PartForecast
    frame: pd.DataFrame        # tidy per-series metrics
    metrics: dict              # nested means (+ "median", "scaled", "per_step")
    predict_seconds: float
    mase_scale: np.ndarray
    baseline_seconds: dict     # baseline key -> seconds spent fitting + forecasting (all parts)
    conformal: dict = None     # model key -> intervals.Conformal calibrated on the validation part
    interval_scale: np.ndarray = None  # per series: what conformal scores are divided by
    quantile_conformal: object = None  # intervals.QuantileConformal of a quantile model (None otherwise)


def origins_of(data, part: str):
    """Forecast origins (flat position of the last input), series start and series number of a part's windows."""
    starts = data.starts[part]
    series = data.panel.series_of(starts)
    return starts + data.window - 1, data.panel.offsets[series], series


def forecast_part(model, data, part: str) -> np.ndarray:
    """(windows, horizon) forecasts of a part's windows in series units, through the shared interface."""
    origins, first, series = origins_of(data, part)
    return model.forecast(data.panel.values, origins, first, series, data.scaler)


def per_step(actual, forecasts: dict, series, n_series: int, scale) -> list[dict]:
    """For each step ahead, the mean over series of each model's metrics."""
    steps = []
    for j in range(actual.shape[1]):
        row = {}
        for key, predicted in forecasts.items():
            values = M.per_series_metrics(actual[:, j], predicted[:, j], series, n_series, scale)
            present = values["count"] > 0
            row[key] = {name: (float(np.nanmean(values[name][present]))
                               if np.isfinite(values[name][present]).any() else None) for name in M.METRIC_NAMES}
        steps.append(row["model"] if list(row) == ["model"] else row)
    return steps


def score_windows(network, baselines: list, data, season: int, parts=PARTS, levels=()) -> Evaluation:
    """Forecast every part's windows with the network and the baselines and score them on the same targets.

    With ``levels`` every model also gets intervals calibrated on its validation forecasts (the test part is
    never read): split-conformal ones around its forecast (:class:`tsattn.intervals.Conformal`), or for a network
    trained with ``loss="quantile"`` its own quantiles conformalized (:class:`tsattn.intervals.QuantileConformal`).
    Models with intervals of their own (quantile networks, statsforecast's methods) also report them
    uncalibrated under ``<key>_native``. Interval metrics are scored on the test part.
    """
    from .harness import PartForecast
    from .intervals import Conformal, QuantileConformal, check_levels, series_scale

    levels = check_levels(levels)
    panel = data.panel
    mase_scale = M.insample_scale(panel.values, panel.offsets, data.insample_end(), season)
    interval_scale = series_scale(mase_scale, data.scaler.scale)
    calibrate = data.count("validation") > 0  # always (cheap): a saved model can give intervals later
    if levels and not calibrate and getattr(network, "quantiles", None) is None:
        raise ConfigError("conformal intervals are calibrated on the validation part, and this run has none; set "
                          "validation_fraction above 0 (or train with loss=quantile)")
    forecasts, frames, scaled, steps = {}, [], {}, {}
    predict_seconds = 0.0
    baseline_seconds = {}
    conformal = {}
    quantile_conformal = None
    for part in parts:
        if data.count(part) == 0:
            continue
        origins, first, series = origins_of(data, part)
        actual = data.y(part, scaled=False)
        points, distributions = {}, {}
        for model in [network] + list(baselines):
            wanted = model.parts + (("validation",) if levels and calibrate and model is not network else ())
            if model is not network and part not in wanted:
                continue
            began = time.perf_counter()
            point, quantiles = model.forecast_distribution(panel.values, origins, first, series, data.scaler,
                                                           levels if part in ("validation", "test") else ())
            seconds = time.perf_counter() - began
            if model is network:
                predict_seconds += seconds
            else:
                baseline_seconds[model.key] = baseline_seconds.get(model.key, 0.0) + seconds
            points[model.key] = point
            if quantiles is not None:
                distributions[model.key] = quantiles
            if calibrate and part == "validation":
                conformal[model.key] = Conformal.calibrate(actual, point, interval_scale[series])
                if model is network and quantiles is not None:
                    quantile_conformal = QuantileConformal.calibrate(actual, quantiles, interval_scale[series])
        predicted = points.pop("model")
        intervals = {}
        if levels and part in ("validation", "test"):
            for key, point in {"model": predicted, **points}.items():
                if key == "model" and "model" in distributions:  # a quantile model: its quantiles, calibrated
                    own = distributions["model"]
                    intervals[key] = own if quantile_conformal is None else \
                        quantile_conformal.quantiles(own, interval_scale[series], levels)
                elif key in conformal:
                    intervals[key] = conformal[key].quantiles(point, interval_scale[series], levels)
                if key in distributions:
                    intervals[f"{key}_native"] = distributions[key]
        predicted_scaled = data.scaler.transform(predicted, series)
        forecasts[part] = PartForecast(data.target_index(part), actual, predicted, data.y(part), predicted_scaled,
                                       points, series, intervals)
        every = {"model": predicted, **points}
        frames.append(M.tidy_metrics(actual, every, series, panel.ids, part, mase_scale))
        if part == "test":
            for key, quantiles in intervals.items():
                frames.append(M.tidy_interval_metrics(actual, quantiles, levels, series, panel.ids, part, key,
                                                      mase_scale))
        scaled[part] = M.scaled_metrics(data.y(part), predicted_scaled)
        if data.horizon > 1:
            steps[part] = per_step(actual, {"model": predicted}, series, panel.n_series, mase_scale)
    frame = pd.concat(frames, ignore_index=True)
    table = M.aggregate(frame)
    metrics = M.nested_metrics(table, "mean")
    for part in metrics:
        metrics[part]["scaled"] = scaled[part]
        if part in steps:
            metrics[part]["per_step"] = steps[part]
    metrics["median"] = M.nested_metrics(table, "median")
    metrics["series"] = int(panel.n_series)
    return Evaluation(forecasts, frame, metrics, predict_seconds, mase_scale, baseline_seconds, conformal,
                      interval_scale, quantile_conformal)

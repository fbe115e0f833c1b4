"""Evaluation of any forecaster (network or baseline) on a windowed panel, per series and over series.

    evaluation = score_windows(network, baselines, data, season)
    evaluation.frame        # tidy: series, part, model, metric, value
    evaluation.metrics      # metrics.json's layout: {part: {model: {metric: mean over series}}}

Every model is called through the same :class:`tsattn.baselines.WindowModel` interface on the same
targets; the MASE denominator is each series' in-sample seasonal-naive error (M4's definition).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import metrics as M
from .baselines import LinearAR, Naive, SeasonalNaive, StatisticalModel, interval_scale_at
from .errors import ConfigError, DataError
from .intervals import Calibration, check_levels, floored, series_scale
from .windows import PARTS


@dataclass
class PartForecast:
    """Forecasts of one part: first-target timestamps, actual and predicted (samples, horizon), series units.

    ``series`` holds the series number of each window; ``baselines`` the baselines' forecasts by key.
    """

    index: pd.Index
    actual: np.ndarray
    predicted: np.ndarray
    actual_scaled: np.ndarray
    predicted_scaled: np.ndarray
    baselines: dict[str, np.ndarray]
    series: np.ndarray
    intervals: dict = field(default_factory=dict)  # model key -> {quantile: (samples, horizon)} (with levels)


@dataclass
class Evaluation:
    forecasts: dict            # part -> PartForecast
    frame: pd.DataFrame        # tidy per-series metrics
    metrics: dict              # nested means (+ "median", "scaled", "per_step")
    predict_seconds: float
    mase_scale: np.ndarray
    baseline_seconds: dict     # baseline key -> seconds spent fitting + forecasting (all parts)
    calibration: dict = None   # model key -> intervals.Calibration on the validation part
    interval_scale: np.ndarray = None  # per series: its in-sample scale (what conformal scores are divided by
    # with interval_scale=insample; the others measure each window's at its origin, falling back to it: scales_at)


def origins_of(data, part: str):
    """Forecast origins (flat position of the last input), series start and series number of a part's windows."""
    starts = data.starts[part]
    series = data.series_numbers(part)  # read at the first target: a padded window starts before its series
    return starts + data.window - 1, data.panel.offsets[series], series


def scales_at(data, origins, first, series, insample: np.ndarray, season: int, kind: str | None = None):
    """(windows,) what each forecast's conformal score is divided by in the interval scale ``kind`` (default:
    ``data.interval_scale``; :func:`tsattn.baselines.interval_scale_at`; "ets": (windows, horizon), one figure per
    step); ``insample`` holds each series' in-sample scale (every value before the test part)."""
    return interval_scale_at(kind or data.interval_scale, data.panel.values, origins, first, season, data.horizon,
                        np.asarray(insample, dtype=np.float64)[series])


def calibrate(model, data, insample: np.ndarray, season: int):
    """The :class:`tsattn.intervals.Calibration` of ``model`` on the validation part of ``data`` (every interval
    method that applies to it), or None without a validation part, its scores measured in ``data.interval_scale``
    (:func:`scales_at`; ``insample``: each series' in-sample scale, over every value before the test part). The one
    calibration every path uses."""
    if data.count("validation") == 0:
        return None
    origins, first, series = origins_of(data, "validation")
    point, quantiles = (floored(forecasts, data.floor) for forecasts in
                        model.forecast_distribution(data.source, origins, first, series, data.scaler))
    return calibrate_forecasts(data, data.y("validation", scaled=False), point, quantiles, series, insample,
                               lambda kind: scales_at(data, origins, first, series, insample, season, kind))


def calibrate_forecasts(data, actual, point, quantiles, series, insample: np.ndarray, scale_of) -> Calibration:
    """The :class:`tsattn.intervals.Calibration` of validation forecasts ``point`` (and a quantile model's own
    ``quantiles``) of ``actual`` (windows, horizon), in ``data.interval_scale``; ``scale_of(kind)`` gives every
    window's scale of that kind (:func:`scales_at`), ``series`` each window's series, ``insample`` each series' scale.
    With "auto" the scale is chosen among :data:`tsattn.intervals.SCALE_CANDIDATES` on these forecasts
    (:func:`tsattn.intervals.choose_scale`; the calibration's ``scale_choice`` keeps the scores), blend where the
    halves hold too few windows or statsforecast (which "ets" fits) is not installed."""
    from .baselines import INSTALL_HINT, statsforecast_installed
    from .intervals import CHOICE_MIN_WINDOWS, SCALE_CANDIDATES, choice_folds, choose_scale, fold_counts

    settings = dict(data.calibration_settings)
    if settings["kind"] != "auto":
        return Calibration.calibrate(actual, point, quantiles, scale_of(settings["kind"]), **settings)
    folds = choice_folds(series)
    candidates = SCALE_CANDIDATES if statsforecast_installed() else SCALE_CANDIDATES[:1]
    choice, scales = {}, {}
    chosen = candidates[0]
    if folds is not None and len(candidates) > 1:
        scales = {kind: scale_of(kind) for kind in candidates}
        normaliser = np.asarray(insample, dtype=np.float64)[np.asarray(series)]
        chosen, choice = choose_scale(actual, point, quantiles, scales, folds, normaliser, settings["floor"],
                                      settings["scores"])
    settings["kind"] = chosen
    calibration = Calibration.calibrate(actual, point, quantiles,
                                        scales[chosen] if chosen in scales else scale_of(chosen), **settings)
    calibration.scale_choice = choice
    if not choice:
        calibration.unchosen = (f"statsforecast, which the ets scale fits, is not installed: {INSTALL_HINT}"
                                if len(candidates) < 2 else
                                f"it compares scales on two halves of the series, each holding at least "
                                f"{CHOICE_MIN_WINDOWS} validation windows; these hold "
                                f"{' and '.join(str(count) for count in fold_counts(series))}")
    return calibration


def forecast_part(model, data, part: str) -> np.ndarray:
    """(windows, horizon) forecasts of a part's windows in series units, through the shared interface (raised to the
    data's floor: :func:`tsattn.intervals.floored`)."""
    origins, first, series = origins_of(data, part)
    return floored(model.forecast(data.source, origins, first, series, data.scaler), data.floor)


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


def score_windows(network, baselines: list, data, season: int, parts=PARTS, levels=(), calibration=None,
                  mase_scale: np.ndarray | None = None, selection: tuple | None = None) -> Evaluation:
    """Forecast every part's windows with the network and the baselines and score them on the same targets.

    With ``levels`` every model also gets intervals calibrated on its validation forecasts (the test part is
    never read): split-conformal ones around its forecast (:class:`tsattn.intervals.Conformal`), or for a network
    trained with ``loss="quantile"`` its own quantiles conformalized (:class:`tsattn.intervals.QuantileConformal`).
    Models with intervals of their own (quantile networks, statsforecast's methods) also report them
    uncalibrated under ``<key>_native``. Interval metrics are scored on the test part. ``calibration`` is the
    network's :class:`tsattn.intervals.Calibration` from its fitted state (:func:`calibrate` on the same data gives
    the same; passing it only saves doing it twice); ``mase_scale`` the state's per-series scale (computed once, at
    fit: :func:`tsattn.harness.fit_state`; by default the same figure is computed here). ``selection`` (a final
    fit's (network, baselines) fitted on the training part only, :attr:`tsattn.state.FittedState.selection`) is
    scored on the validation part in place of the final models, which trained on it.
    """
    final_network, final_baselines = network, baselines
    levels = check_levels(levels)
    panel = data.panel
    if mase_scale is None:
        mase_scale = M.insample_scale(panel.values, panel.offsets, data.insample_end(), season)
    insample = series_scale(mase_scale, data.scaler.scale)
    calibrated = data.count("validation") > 0  # always (cheap): a saved model can give intervals later
    if levels and not calibrated and getattr(network, "quantiles", None) is None:
        raise ConfigError("conformal intervals are calibrated on the validation part, and this run has none; set "
                          "validation_fraction above 0 (or train with loss=quantile)")
    forecasts, frames, scaled, steps = {}, [], {}, {}
    predict_seconds = 0.0
    baseline_seconds = {}
    calibrations = {}
    if calibrated:
        calibrations["model"] = calibration if calibration is not None else \
            calibrate(network if selection is None else selection[0], data, insample, season)
    for part in parts:
        if data.count(part) == 0:
            continue
        origins, first, series = origins_of(data, part)
        scales = {}  # interval scale -> this part's figures, made when a calibration or an interval reads them (the
        # training part never: "ets" fits AutoETS at every origin)

        def scale_of(kind, origins=origins, first=first, series=series):
            if kind not in scales:
                scales[kind] = scales_at(data, origins, first, series, insample, season, kind)
            return scales[kind]
        actual = data.y(part, scaled=False)
        points, distributions = {}, {}
        network, baselines = selection if selection is not None and part == "validation" else \
            (final_network, final_baselines)
        if part == "train" and "train" not in network.capabilities.scored_on:
            continue  # a model refitted at every origin (a statistical method, a combination holding one): the
            # training part would cost one fit per training window; it is scored on validation and test
        for model in [network] + list(baselines):
            wanted = model.capabilities.scored_on + (("validation",) if levels and calibrated and model is not network else ())
            if model is not network and part not in wanted:
                continue
            began = time.perf_counter()
            point, quantiles = (floored(forecasts, data.floor) for forecasts in model.forecast_distribution(
                data.source, origins, first, series, data.scaler, levels if part in ("validation", "test") else ()))
            seconds = getattr(model, "compute_seconds", None) or time.perf_counter() - began  # a remembered fit: its cost
            if model is network:
                predict_seconds += seconds
            else:
                baseline_seconds[model.key] = baseline_seconds.get(model.key, 0.0) + seconds
            key = "model" if model is network else model.key  # a baseline fitted as the model is "model" too
            points[key] = point
            if quantiles is not None:
                distributions[key] = quantiles
            if calibrated and part == "validation" and model is not network:
                # a baseline's own intervals are reported raw (<key>_native); it is calibrated on its point forecasts
                calibrations[model.key] = calibrate_forecasts(data, actual, point, None, series, insample, scale_of)
        predicted = points.pop("model")
        intervals = {}
        if levels and part in ("validation", "test"):
            for key, point in {"model": predicted, **points}.items():
                own = distributions.get("model") if key == "model" else None  # a quantile model: its quantiles
                if key in calibrations:
                    intervals[key] = calibrations[key].quantiles(point, own, scale_of(calibrations[key].scale), levels)
                elif own is not None:
                    intervals[key] = own
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
    # the scored ones: a series without windows, or without one in the scored part, has none
    metrics["series"] = int(panel.n_series) - len(data.not_scored)
    return Evaluation(forecasts, frame, metrics, predict_seconds, mase_scale, baseline_seconds, calibrations,
                      insample)


# ----------------------------------------------------------------------------------------------------
# Forecasts from a fitted state at any origins (Forecaster.evaluate and backtest)
# ----------------------------------------------------------------------------------------------------
def origins_in(panel, lookback: int, horizon: int, first_target=None, stride: int = 1) -> np.ndarray:
    """Flat origins (last input position) of every window of ``lookback`` values followed by ``horizon``
    targets inside each series; with ``first_target`` (per series, a local position) the first origin of
    series i is just before it, then every ``stride`` steps."""
    lookback = max(lookback, 1)
    pieces = []
    for i in range(panel.n_series):
        low, high = panel.offsets[i], panel.offsets[i + 1]
        begin = low + (lookback - 1 if first_target is None else first_target[i] - 1)
        pieces.append(np.arange(begin, high - horizon, stride))
    origins = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if len(origins) == 0:
        raise DataError(f"the series has {int(panel.lengths.max())} values, too few for one window of "
                        f"{lookback} and {horizon} step(s) to forecast; pass a longer series")
    return origins.astype(np.int64)


@dataclass
class OriginScores:
    """Forecasts of a fitted state and of the naive baselines at some origins, with per-series metrics."""

    actual: np.ndarray        # (origins, horizon)
    predicted: np.ndarray     # (origins, horizon)
    baselines: dict           # key -> (origins, horizon)
    frame: pd.DataFrame       # tidy per-series metrics (part "evaluation")
    series: np.ndarray        # series number of each origin
    scale: np.ndarray         # per series, the MASE denominator


def origin_baselines(state, horizon: int, panel=None) -> list:
    """The baselines scored beside ``state`` at its origins: the state's own (naive, seasonal naive, the linear
    autoregression fitted with it, the statistical methods asked for) for forecasts of its horizon; for another
    number of steps those that forecast any number (naive, seasonal naive, the statistical methods without
    regressors): the linear autoregression forecasts exactly the horizon it was fitted for. With ``panel`` (the series
    to forecast) a per-series linear fit reads each series' own coefficients by id."""
    fitted = state.baselines or [Naive(state.horizon), SeasonalNaive(state.horizon, state.season)]  # older artefacts
    if horizon == state.horizon:
        if panel is None:
            return list(fitted)
        numbers = [0] if state.single and panel.n_series == 1 else \
            [state.tails.number(sid) if sid in state.tails.ids else None for sid in panel.ids]
        return [model.for_series(numbers) if isinstance(model, LinearAR) else model for model in fitted]
    others = []
    for model in fitted:
        if isinstance(model, Naive):
            others.append(Naive(horizon))
        elif isinstance(model, SeasonalNaive):
            others.append(SeasonalNaive(horizon, state.season))
        elif isinstance(model, StatisticalModel) and model.layout is None:  # regressors reach only the horizon
            others.append(StatisticalModel(model.key, horizon, state.season, model.fits))
    return others


def origin_baseline_forecasts(state, source, origins, first, series, scaler, horizon: int, panel=None) -> dict:
    """{baseline key: (len(origins), horizon) forecasts} of :func:`origin_baselines` at ``origins`` of ``source``,
    raised to the state's floor as the state's own forecasts are (:meth:`tsattn.state.FittedState.forecast`)."""
    return {model.key: floored(model.forecast(source, origins, first, series, scaler), state.floor)
            for model in origin_baselines(state, horizon, panel)}


def history_until(panel, origins: np.ndarray, series: np.ndarray) -> np.ndarray:
    """Per series of ``panel``, how many of its values come up to its first origin among ``origins`` (global
    positions; ``series``: each one's number), all of them for a series with none: what a series not seen in fit may
    be scaled on when it is scored at those origins (:meth:`tsattn.state.FittedState.scaler_for`)."""
    until = np.asarray(panel.lengths, dtype=np.int64).copy()
    np.minimum.at(until, series, origins - panel.offsets[series] + 1)
    return until


def score_origins(state, panel, origins: np.ndarray, horizon: int, predicted: np.ndarray | None = None,
                  baselines: dict | None = None) -> OriginScores:
    """Forecasts of ``state`` and of its baselines (:func:`origin_baselines`) at ``origins`` of ``panel``, all scored
    on the same targets; ``predicted`` and ``baselines`` (key -> forecasts) when they were made elsewhere (refits,
    each with its own baselines)."""
    series = panel.series_of(origins)
    first = panel.offsets[series]
    scaler = state.scaler_for(panel, history_until(panel, origins, series))
    source = state.source_of(panel)
    if not state.padded and (origins - state.lookback + 1 < first).any():
        raise DataError(f"every origin needs {state.lookback} values before it in its own series")
    if predicted is None:
        predicted = state.forecast(state.windows(source, origins, first), horizon, scaler, series)
    actual = panel.values[origins[:, None] + np.arange(1, horizon + 1)]
    if baselines is None:
        baselines = origin_baseline_forecasts(state, source, origins, first, series, scaler, horizon, panel)
    scale = mase_scale_at(state, panel, origins, series)
    frame = M.tidy_metrics(actual, {"model": predicted, **baselines}, series, panel.ids, "evaluation", scale)
    return OriginScores(actual, predicted, baselines, frame, series, scale)


def mase_scale_at(state, panel, origins: np.ndarray, series: np.ndarray) -> np.ndarray:
    """Per series of ``panel``, MASE's denominator for forecasts from ``origins`` (global positions; ``series``: each
    one's series number): a fitted series' in-sample scale, kept at fit; a series not seen in fit (a backtest or
    evaluation of a model on other series) M4's scale on its own values up to its first scored origin, so nothing
    after an origin enters it (it was NaN, and the panel's MASE "n/a"). NaN for a series with no origin."""
    scale = np.asarray(state.mase_scale_for(panel), dtype=np.float64).copy()
    unseen = np.flatnonzero(~np.isfinite(scale))
    if len(unseen) and len(origins):
        unseen = unseen[np.isin(unseen, series)]  # (a series with no origin keeps NaN)
        ends = history_until(panel, origins, series)[unseen]  # values up to and including the first origin
        scale[unseen] = M.insample_scale(panel.values, panel.offsets[unseen], ends, state.season)
    return scale


def summarise(panel, scores: OriginScores, horizon: int) -> dict:
    """Means over series of every model's metrics at the scored origins (``by_series``: the tidy frame)."""
    nested = M.nested_metrics(M.aggregate(scores.frame))["evaluation"]
    result = {**nested, "count": int(len(scores.series))}
    if horizon > 1:
        result["per_step"] = per_step(scores.actual, {"model": scores.predicted}, scores.series, panel.n_series,
                                      scores.scale)
    if panel.n_series > 1:
        scored = np.zeros(panel.n_series, dtype=bool)
        scored[np.asarray(scores.series, dtype=np.int64)] = True
        result["series"] = int(scored.sum())  # the series with an origin (a shorter one gets none)
        result["series_not_scored"] = [panel.ids[i] for i in np.flatnonzero(~scored)]
        result["by_series"] = scores.frame.drop(columns="part")
    return result


def has_covariates(state) -> bool:
    """Whether a fitted state reads covariates a user gave (hist, futr or stat; calendar features are generated)."""
    covariates = state.covariates
    return covariates is not None and bool(covariates.hist or covariates.futr or covariates.stat)


IMPORTANCE_METRICS = ("mae", "rmse", "smape", "mase")


def permutation_importance(state, panel, origins: np.ndarray, metric: str, repeats: int = 5,
                           seed: int = 0) -> pd.DataFrame:
    """Which covariate the forecasts of ``state`` at ``origins`` of ``panel`` depend on: each covariate shuffled in
    turn (a dynamic one over the steps each series' scored forecasts read, a static one across series), ``repeats``
    times, and the rise of ``metric`` (mean over series) as a share of its value with every covariate intact.
    Columns ``variable``, ``kind``, ``importance`` (mean rise), ``std`` (over repeats), most important first;
    ``attrs``: ``metric``, ``baseline``. A static covariate of a single series cannot be shuffled: NaN. Forecasts go
    through the path :func:`score_origins` scores (:meth:`tsattn.state.FittedState.forecast`)."""
    import dataclasses

    if metric not in IMPORTANCE_METRICS:
        raise ConfigError(f"metric must be {', '.join(IMPORTANCE_METRICS)}; got {metric!r}")
    covariates = state.covariates
    horizon = state.horizon
    series = panel.series_of(origins)
    first = panel.offsets[series]
    scaler = state.scaler_for(panel, history_until(panel, origins, series))
    actual = panel.values[origins[:, None] + np.arange(1, horizon + 1)]
    scale = mase_scale_at(state, panel, origins, series)

    def score(shuffled) -> float:
        predicted = state.forecast(state.windows(state.source_of(shuffled), origins, first), horizon, scaler, series)
        frame = M.tidy_metrics(actual, {"model": predicted}, series, panel.ids, "evaluation", scale)
        return float(M.nested_metrics(M.aggregate(frame))["evaluation"]["model"][metric])

    # each series' covariate is shuffled over the steps its scored forecasts read (first window to last target), so
    # scoring a part of a long series (tsattn fit's test part) and scoring that part given alone (the hold-out with
    # the window before it) shuffle the same values and agree
    spans = []
    for i in range(panel.n_series):
        mine = origins[series == i]
        low, high = int(panel.offsets[i]), int(panel.offsets[i + 1])
        if len(mine):
            low = low if state.local else max(low, int(mine.min()) - state.lookback + 1)
            high = min(high, int(mine.max()) + horizon + 1)
        spans.append((low, high))
    baseline = score(panel)
    if not np.isfinite(baseline) or baseline <= 0:
        raise DataError(f"the forecasts' {metric} on this data is {baseline:.4g}: no error to compare shuffled "
                        "covariates with; pass more data or another metric")
    rng = np.random.default_rng(seed)
    rows = []
    for kind, names in (("hist_exog", covariates.hist), ("futr_exog", covariates.futr), ("stat_exog", covariates.stat)):
        for name in names:
            if kind == "stat_exog" and panel.n_series < 2:
                rows.append({"variable": name, "kind": kind, "importance": np.nan, "std": np.nan})
                continue
            rises = []
            for _ in range(repeats):
                if kind == "stat_exog":
                    static = panel.static.copy()
                    static[name] = static[name].to_numpy()[rng.permutation(len(static))]
                    shuffled = dataclasses.replace(panel, static=static)
                else:
                    column = list(panel.exog_names).index(name)
                    exog = panel.exog.copy()
                    for low, high in spans:
                        exog[low:high, column] = exog[low:high, column][rng.permutation(high - low)]
                    shuffled = dataclasses.replace(panel, exog=exog)
                rises.append(score(shuffled) / baseline - 1.0)
            rows.append({"variable": name, "kind": kind, "importance": float(np.mean(rises)),
                         "std": float(np.std(rises))})
    frame = pd.DataFrame(rows, columns=["variable", "kind", "importance", "std"])
    frame = frame.sort_values("importance", ascending=False, na_position="last", kind="stable").reset_index(drop=True)
    frame.attrs.update(metric=metric, baseline=baseline)
    return frame

"""Forecast accuracy metrics and the baselines every result is shown beside.

All functions take arrays of shape (samples, horizon) (or (samples,)) in the series' own units.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

METRIC_NAMES = ("mse", "rmse", "mae", "mape", "smape", "mase")


MASE_REASON = "not sMAPE: some values before the test part are 0 or below"  # why a panel is judged on MASE
# why on MAE, in the data's units: MASE divides by each series' in-sample naive error, 0 on a constant series
MAE_REASON = f"{MASE_REASON}, and every series is constant there, where MASE is undefined"


def headline_metric(n_series: int, values=None, offsets=None) -> str:
    """The metric models are chosen, ranked and summed up on: RMSE for one series (in its own units); for a panel
    (where RMSE would add up series of different sizes) sMAPE, scale-free, when every value the models learn from
    (``values``, e.g. those before the test part: :attr:`tsattn.windows.WindowedPanel.headline`; None: not known) is
    above 0, else MASE, scale-free too: sMAPE is 200 for any forecast of a 0 but exactly 0 (a series of zeros
    forecast 0.003 scores worse than one forecast 50% off) and swings where values cross 0. Where MASE is undefined
    on every series (each constant in ``values``, whose series start at ``offsets``: MASE divides by the in-sample
    naive error), MAE, in the data's units. The one rule auto, compare, reports, tune and the run's verdict
    follow."""
    if n_series <= 1:
        return "rmse"
    if values is None:
        return "smape"
    values = np.asarray(values, dtype=np.float64)
    if (values[np.isfinite(values)] > 0).all():
        return "smape"
    if offsets is not None and not has_mase(insample_scale(values, offsets, np.diff(offsets), 1)).any():
        return "mae"
    return "mase"


def has_mase(scale: np.ndarray) -> np.ndarray:
    """Where MASE is defined: an in-sample scale (:func:`insample_scale`) that is finite and above 0 (a series
    constant before its test part has 0)."""
    return np.isfinite(scale) & (scale > 0)


def _pair(actual, predicted):
    actual = np.asarray(actual, dtype=np.float64)
    predicted = np.asarray(predicted, dtype=np.float64)
    if actual.shape != predicted.shape:
        raise ValueError(f"actual {actual.shape} and predicted {predicted.shape} differ in shape")
    return actual, predicted


def _finite_or_none(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def naive_scale(insample, season: int = 1) -> float:
    """Mean absolute error of the in-sample (seasonal) naive forecast: the MASE denominator."""
    insample = np.asarray(insample, dtype=np.float64).ravel()
    if len(insample) <= season:
        return float("nan")
    return float(np.mean(np.abs(insample[season:] - insample[:-season])))


def forecast_metrics(actual, predicted, scale: float | None = None) -> dict:
    """MSE, RMSE, MAE, MAPE, sMAPE and MASE of a forecast.

    Args:
        actual, predicted: arrays of the same shape, series units.
        scale: the MASE denominator (see :func:`naive_scale`); None leaves MASE out.

    Returns:
        A dict of floats (None where a metric is undefined). MAPE (percent) skips actual values equal to
        zero, which would divide by zero; ``mape_count`` says how many values it used. sMAPE (percent) is
        200 |f - a| / (|a| + |f|), taken as 0 where both are 0.
    """
    actual, predicted = _pair(actual, predicted)
    actual, predicted = actual.reshape(len(actual), -1), predicted.reshape(len(predicted), -1)
    values = per_series_metrics(actual, predicted, np.zeros(len(actual), dtype=np.int64), 1,
                                None if scale is None else [scale])  # one series: the panel computation
    result = {name: _finite_or_none(values[name][0]) for name in METRIC_NAMES}
    result["count"], result["mape_count"] = int(values["count"][0]), int(values["mape_count"][0])
    return result


def scaled_metrics(actual_scaled, predicted_scaled) -> dict:
    """MSE and RMSE on scaled values (what the tutorials report)."""
    actual, predicted = _pair(actual_scaled, predicted_scaled)
    mse = float(np.mean(np.square(predicted - actual)))
    return {"mse": _finite_or_none(mse), "rmse": _finite_or_none(math.sqrt(mse)) if math.isfinite(mse) else None}


# ----------------------------------------------------------------------------------------------------
# Baselines
# ----------------------------------------------------------------------------------------------------
def season_from_frequency(freq: str | None) -> int:
    """The natural season of a pandas frequency, from its offset: periods per year for yearly to monthly data
    (1, 4, 12), per week for daily data (7; 5 for business days), per year for weekly data (52), per day for
    hourly and sub-hourly data (24, 48 for 30min, 96 for 15min), per hour for minutes (60) and per minute
    for seconds (60). Returns 1 (no season) for a missing, unknown or multi-day frequency.

    Example:
        >>> season_from_frequency("MS"), season_from_frequency("BQE-DEC"), season_from_frequency("15min")
        (12, 4, 96)
    """
    if not freq:
        return 1
    legacy = {"M": "ME", "BM": "BME", "Q": "QE", "BQ": "BQE", "A": "YE", "Y": "YE", "H": "h", "T": "min", "S": "s"}
    base, dash, anchor = freq.partition("-")
    digits = base.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    unit = base[len(digits):]
    candidates = [freq] + ([digits + legacy[unit] + dash + anchor] if unit in legacy else [])
    offset = None
    for candidate in candidates:  # pandas 3 dropped M, H, T...; older pandas still writes them
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # pandas 2.2's notice that M means ME now
                offset = pd.tseries.frequencies.to_offset(candidate)
            break
        except ValueError:
            continue
    if offset is None:
        return 1
    offsets = pd.offsets
    n = max(1, int(getattr(offset, "n", 1) or 1))
    if isinstance(offset, (offsets.YearBegin, offsets.YearEnd, offsets.BYearBegin, offsets.BYearEnd)):
        return 1
    if isinstance(offset, (offsets.QuarterBegin, offsets.QuarterEnd, offsets.BQuarterBegin, offsets.BQuarterEnd)):
        return max(1, 4 // n)
    if isinstance(offset, (offsets.MonthBegin, offsets.MonthEnd, offsets.BusinessMonthBegin,
                           offsets.BusinessMonthEnd, offsets.SemiMonthBegin, offsets.SemiMonthEnd)):
        return max(1, 12 // n) if not isinstance(offset, (offsets.SemiMonthBegin, offsets.SemiMonthEnd)) else 24
    if isinstance(offset, offsets.Week):
        return max(1, 52 // n)
    if isinstance(offset, (offsets.BusinessDay, offsets.CustomBusinessDay)):
        return 5 if n == 1 else 1
    if isinstance(offset, offsets.Day):
        return 7 if n == 1 else 1
    if isinstance(offset, offsets.Hour):
        return max(1, 24 // n)
    if isinstance(offset, offsets.Minute):
        return 60 if n == 1 else max(1, 1440 // n)
    if isinstance(offset, offsets.Second):
        return 60 if n == 1 else max(1, 3600 // n)
    return 1


def naive_forecast(values: np.ndarray, origins: np.ndarray, horizon: int) -> np.ndarray:
    """Repeat the last observed value: forecast for origin o (last input position) at steps 1..horizon."""
    return np.repeat(values[origins][:, None], horizon, axis=1)


def seasonal_naive_forecast(values: np.ndarray, origins: np.ndarray, horizon: int, season: int,
                            first=0) -> np.ndarray:
    """The value one season before each target (NaN where the series does not reach back that far).

    For a target h steps after origin o the forecast is values[o + h - season * ceil(h / season)].
    ``first`` is the position where each origin's series starts (a panel's flat array): nothing before it
    is read.
    """
    steps = np.arange(1, horizon + 1)
    lags = season * np.ceil(steps / season).astype(np.int64)
    positions = origins[:, None] + steps[None, :] - lags[None, :]
    forecast = np.full(positions.shape, np.nan)
    ok = positions >= (np.reshape(first, (-1, 1)) if np.ndim(first) else first)
    forecast[ok] = values[positions[ok]]
    return forecast


def fit_linear_autoregression(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares AR coefficients (with intercept) mapping flattened windows to targets."""
    design = np.hstack([X.reshape(len(X), -1), np.ones((len(X), 1))])
    coefficients, *_ = np.linalg.lstsq(design.astype(np.float64), y.astype(np.float64), rcond=None)
    return coefficients


def predict_linear_autoregression(coefficients: np.ndarray, X: np.ndarray) -> np.ndarray:
    design = np.hstack([X.reshape(len(X), -1), np.ones((len(X), 1))])
    return design.astype(np.float64) @ coefficients


# ----------------------------------------------------------------------------------------------------
# Panels: metrics per series in a tidy frame, aggregated over series
# ----------------------------------------------------------------------------------------------------
TIDY_COLUMNS = ("series", "part", "model", "metric", "value")
COUNT_NAMES = ("count", "mape_count")  # summed over series, not averaged


def per_series_metrics(actual, predicted, series, n_series: int, scale=None) -> dict[str, np.ndarray]:
    """Every metric of :func:`forecast_metrics` for each series at once.

    Args:
        actual, predicted: (rows, horizon) arrays in series units (NaN entries are skipped).
        series: (rows,) series number of each row. n_series: how many series there are.
        scale: (n_series,) MASE denominators, or None.

    Returns:
        {metric: (n_series,) array}, NaN where a series has no value (or the metric is undefined), with
        ``count`` and ``mape_count``. sMAPE is the M3 one: mean over steps of 200 |y - f| / (|y| + |f|).
    """
    actual, predicted = _pair(actual, predicted)
    if actual.ndim == 1:
        actual, predicted = actual[:, None], predicted[:, None]
    series = np.asarray(series, dtype=np.int64)

    def total(per_entry):
        return np.bincount(series, weights=per_entry.sum(axis=1), minlength=n_series)

    valid = np.isfinite(actual) & np.isfinite(predicted)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        error = np.where(valid, predicted - actual, 0.0)
        absolute = np.abs(error)
        count = total(valid.astype(np.float64))
        peak = np.zeros(n_series)
        np.maximum.at(peak, series, absolute.max(axis=1) if absolute.size else np.zeros(len(series)))
        # squares scaled by each series' largest error, so huge series (Fibonacci without log) keep an RMSE
        safe_peak = np.where(peak > 0, peak, 1.0)
        relative = np.square(error / safe_peak[series][:, None])
        rmse = safe_peak * np.sqrt(total(relative) / count)
        mse = total(np.square(error)) / count
        mae = total(absolute) / count
        nonzero = valid & (actual != 0)
        mape_count = total(nonzero.astype(np.float64))
        mape = total(np.where(nonzero, absolute / np.where(nonzero, np.abs(actual), 1.0), 0.0)) / mape_count * 100
        denominator = np.abs(actual) + np.abs(predicted)
        terms = np.where(valid & (denominator > 0), 2 * absolute / np.where(denominator > 0, denominator, 1.0), 0.0)
        smape = total(terms) / count * 100
        if scale is None:
            mase = np.full(n_series, np.nan)
        else:
            scale = np.asarray(scale, dtype=np.float64)
            mase = np.where(has_mase(scale), mae / np.where(scale > 0, scale, 1.0), np.nan)
    result = {"mse": mse, "rmse": rmse, "mae": mae, "mape": mape, "smape": smape, "mase": mase}
    empty = count == 0
    for values in result.values():
        values[empty | ~np.isfinite(values)] = np.nan
    result["count"], result["mape_count"] = count, mape_count
    return result


def tidy_metrics(actual, forecasts: dict[str, np.ndarray], series, ids: list[str], part: str,
                 scale=None) -> pd.DataFrame:
    """A tidy frame (series, part, model, metric, value) of every forecast in ``forecasts`` on ``actual``.

    Only series with at least one row in this part appear.
    """
    series = np.asarray(series, dtype=np.int64)
    present = np.unique(series)
    frames = []
    for model, predicted in forecasts.items():
        values = per_series_metrics(actual, predicted, series, len(ids), scale)
        for metric in METRIC_NAMES + COUNT_NAMES:
            frames.append(pd.DataFrame({"series": np.asarray(ids, dtype=object)[present], "part": part,
                                        "model": model, "metric": metric, "value": values[metric][present]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=TIDY_COLUMNS)


def aggregate(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and median over series of each (part, model, metric); counts are summed.

    Returns:
        (part, model, metric, mean, median, series) with ``series`` the number of series with a value.
    """
    grouped = frame.groupby(["part", "model", "metric"], sort=False)["value"]
    table = grouped.agg(mean="mean", median="median", series="count", total="sum").reset_index()
    counts = table["metric"].isin(COUNT_NAMES)
    table.loc[counts, "mean"] = table.loc[counts, "total"]
    table.loc[counts, "median"] = table.loc[counts, "total"]
    return table.drop(columns="total")


def nested_metrics(table: pd.DataFrame, statistic: str = "mean") -> dict:
    """{part: {model: {metric: value}}} from :func:`aggregate` (None where undefined): metrics.json's layout."""
    result: dict = {}
    for row in table.itertuples(index=False):
        value = getattr(row, statistic)
        value = None if value is None or not math.isfinite(value) else float(value)
        if row.metric in COUNT_NAMES:
            value = int(value or 0)
        result.setdefault(row.part, {}).setdefault(row.model, {})[row.metric] = value
    return result


def insample_scale(values: np.ndarray, offsets: np.ndarray, ends: np.ndarray, season: int) -> np.ndarray:
    """Per series, the MAE of the in-sample seasonal-naive forecast on values before ``ends`` (local
    positions): the MASE denominator of M4. A series too short for one season falls back to lag 1."""
    scales = np.full(len(ends), np.nan)
    for i, end in enumerate(ends):
        insample = values[offsets[i]:offsets[i] + end]
        # a scale at rounding level (an exactly periodic series' seasonal differences, ~1e-16 of its values) is
        # zero: MASE would divide by rounding noise (4e14 was seen), so it falls back as an exact zero does
        floor = 1e-10 * float(np.mean(np.abs(insample))) if len(insample) else 0.0
        scale = naive_scale(insample, season) if len(insample) > season else float("nan")
        if not (math.isfinite(scale) and scale > floor):
            scale = naive_scale(insample, 1)
            if math.isfinite(scale) and scale <= floor:
                scale = 0.0  # constant up to rounding: MASE undefined (NaN), never a division by noise
        scales[i] = scale
    return scales


def paired_comparison(a: pd.Series, b: pd.Series) -> tuple[int, int, float | None]:
    """Two per-series errors side by side (series where both exist): series where ``a`` is lower, series
    compared, and the Wilcoxon signed-rank p-value (None with fewer than 10 non-zero differences)."""
    both = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
    wins = int((both["a"] < both["b"]).sum())
    p_value = None
    if ((both["a"] - both["b"]) != 0).sum() >= 10:
        from scipy.stats import wilcoxon

        p_value = float(wilcoxon(both["a"], both["b"]).pvalue)
    return wins, len(both), p_value


# ----------------------------------------------------------------------------------------------------
# Intervals and quantiles
# ----------------------------------------------------------------------------------------------------
def pinball_loss(actual, forecast, quantile: float) -> np.ndarray:
    """Elementwise pinball (quantile) loss: q (y - f) when y >= f, (1 - q) (f - y) otherwise."""
    error = np.asarray(actual, dtype=np.float64) - np.asarray(forecast, dtype=np.float64)
    return np.maximum(quantile * error, (quantile - 1) * error)


INTERVAL_KINDS = ("coverage", "width", "scaled_width", "msis")  # per level: coverage-80, width-80, ...


def interval_metric_names(levels) -> list[str]:
    """The summary interval metrics that tables and reports show for ``levels``: coverage, width and MSIS of each
    level, then the scaled CRPS (none without levels; the per-quantile pinball losses are left to metrics.json)."""
    from .intervals import check_levels, level_name

    levels = check_levels(levels)
    names = [f"{kind}-{level_name(level)}" for level in levels for kind in INTERVAL_KINDS]
    return names + (["scaled_crps"] if levels else [])


def is_interval_metric(name: str) -> bool:
    """True for the names :func:`interval_metric_names` gives."""
    return name == "scaled_crps" or name.split("-", 1)[0] in INTERVAL_KINDS and "-" in name


def per_series_interval_metrics(actual, quantiles: dict, levels, series, n_series: int, scale=None
                                ) -> dict[str, np.ndarray]:
    """Interval and quantile metrics of each series.

    Args:
        actual: (rows, horizon) targets in series units. quantiles: {q: (rows, horizon)} forecasts of the
            quantiles (the point forecast as 0.5 for conformal intervals). levels: interval levels (percent)
            whose bounds are in ``quantiles``. series: (rows,) series numbers. scale: (n_series,) MASE scales.

    Returns:
        {name: (n_series,)}: ``coverage-L`` (% of targets inside the L% interval), ``width-L`` (mean width,
        series units), ``scaled_width-L`` (the width over the MASE scale: comparable across series), ``msis-L`` (M4's mean scaled interval score: (U - L) + 2/a (L - y)[y < L] +
        2/a (y - U)[y > U], a = 1 - L/100, over the MASE scale), ``pinball-q`` (mean pinball loss, series
        units) and ``scaled_crps`` (the CRPS approximated by 2 x the mean pinball loss over the quantiles
        given, over the MASE scale; coarse with a few quantiles).
    """
    from .intervals import bands, check_levels, level_name

    actual = np.asarray(actual, dtype=np.float64)
    series = np.asarray(series, dtype=np.int64)
    valid = np.isfinite(actual) & np.all([np.isfinite(q) for q in quantiles.values()], axis=0)
    count = np.bincount(series, weights=valid.sum(axis=1), minlength=n_series)
    scale = np.full(n_series, np.nan) if scale is None else np.asarray(scale, dtype=np.float64)
    good_scale = np.isfinite(scale) & (scale > 0)

    def mean(per_entry):
        total = np.bincount(series, weights=np.where(valid, per_entry, 0.0).sum(axis=1), minlength=n_series)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / count, np.nan)

    def scaled(values):
        return np.where(good_scale, values / np.where(good_scale, scale, 1.0), np.nan)

    result = {}
    with np.errstate(invalid="ignore"):
        for level, (low, high) in bands(quantiles, check_levels(levels)).items():
            name = level_name(level)
            alpha = 1 - level / 100
            inside = (actual >= low) & (actual <= high)
            result[f"coverage-{name}"] = mean(inside.astype(np.float64)) * 100
            result[f"width-{name}"] = mean(high - low)
            result[f"scaled_width-{name}"] = scaled(result[f"width-{name}"])  # comparable across series (as MSIS)
            score = (high - low) + 2 / alpha * np.maximum(low - actual, 0) + 2 / alpha * np.maximum(actual - high, 0)
            result[f"msis-{name}"] = scaled(mean(score))
        losses = {q: mean(pinball_loss(actual, forecast, q)) for q, forecast in sorted(quantiles.items())}
        for q, loss in losses.items():
            result[f"pinball-{q:g}"] = loss
        result["scaled_crps"] = scaled(2 * np.mean(list(losses.values()), axis=0))
    return result


def tidy_interval_metrics(actual, quantiles: dict, levels, series, ids, part: str, model: str, scale=None
                          ) -> pd.DataFrame:
    """:func:`per_series_interval_metrics` as rows of the tidy frame (series, part, model, metric, value)."""
    series = np.asarray(series, dtype=np.int64)
    present = np.unique(series)
    values = per_series_interval_metrics(actual, quantiles, levels, series, len(ids), scale)
    return pd.concat([pd.DataFrame({"series": np.asarray(ids, dtype=object)[present], "part": part, "model": model,
                                    "metric": name, "value": column[present]}) for name, column in values.items()],
                     ignore_index=True)

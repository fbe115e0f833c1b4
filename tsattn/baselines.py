"""Forecasting models behind one interface: the baselines here and the Keras networks (:class:`NetworkModel`).

Every model forecasts ``horizon`` values after forecast origins in a panel's flat array of values:

    model.fit(data)                                        # data: a WindowedPanel
    model.forecast(values, origins, first, series, scaler) # -> (len(origins), horizon), series units

``origins`` are flat positions of the last observed value, ``first`` the flat position where each origin's
series starts (a model never reads before it, so nothing crosses from one series into the next), ``series``
the series number of each origin (for its scaler). The harness, evaluation, backtests and the Forecaster
call only these two methods, so a baseline and a network go through exactly the same path.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np

from . import metrics as M
from .checks import choice
from .covariates import Layout, target_column
from .errors import ConfigError, DataError, user_stacklevel
from .intervals import floored
from .windows import gather_batch, window_positions

LINEAR_FITS = ("pooled", "per-series")
LINEAR_FIT_MAX_WINDOWS = 100_000  # bounds the float64 design matrix (about 50 MB at window 64)
CHUNK = 65_536


def gather_windows(values: np.ndarray, origins: np.ndarray, window: int, first=None, missing: str = "first") -> np.ndarray:
    """(len(origins), window) values ending at each origin; with ``first`` (each origin's series start) a window
    reaching before its series is padded with the series' first value (``pad=True``), or with NaN for
    ``missing="nan"`` (what a local method reads: it fits on the values after the NaNs)."""
    starts = np.asarray(origins, dtype=np.int64) - window + 1
    out = values[window_positions(starts, window, first)]  # (origins, window[, columns])
    if first is not None and missing == "nan":
        before = starts[:, None] + np.arange(window) < np.asarray(first, dtype=np.int64)[:, None]
        out = np.where(before if out.ndim == 2 else before[:, :, None], np.nan, out)
    return out


@dataclass(frozen=True)
class Capabilities:
    """What a forecaster can do: callers ask these (as scikit-learn reads an estimator's tags), never its name.

    Attributes:
        scope: "global" (one model for every series, fitted once) or "local" (fitted on each history it forecasts).
        intervals: "conformal" (split-conformal around its point forecast) or "quantiles" (its own quantiles,
            conformalized; conformal ones around its point forecast are available too).
        covariates: the covariate kinds it uses ("hist", "futr", "stat"); a model without them refuses them when
            they are asked of it (the baselines scored beside a model ignore them: they are the reference).
        trained: trained by gradient descent (a Keras model and a training history).
        learns: fitted on training windows (a network, the linear autoregression); the others forecast from the
            values before an origin alone, so they need no training window (a series of a few values).
        attention: exposes attention weights over its input window.
        scored_on: the parts the harness scores it on (a local method refitted per origin: the test part only).
    """

    scope: str = "global"
    intervals: str = "conformal"
    covariates: tuple = ()
    trained: bool = False
    learns: bool = False
    attention: bool = False
    scored_on: tuple = ("train", "validation", "test")

    def refused_covariates(self, covariates) -> list:
        """The covariate kinds of ``covariates`` (a :class:`tsattn.covariates.Covariates`, or None) this forecaster
        does not use (calendar features count as future-known)."""
        if covariates is None:
            return []
        given = {"hist": covariates.hist, "futr": covariates.futr + covariates.calendar, "stat": covariates.stat}
        return [kind for kind, names in given.items() if names and kind not in self.covariates]


class WindowModel:
    """The interface shared by baselines and networks (see the module docstring)."""

    key = "model"          # the name in metrics tables and files
    label = "model"        # the name users read
    lookback = 1           # values needed before an origin
    horizon = 1
    capabilities = Capabilities()

    def fit(self, data) -> "WindowModel":
        return self

    def forecast(self, values, origins, first, series, scaler) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def forecast_distribution(self, values, origins, first, series, scaler, levels=()):
        """(point forecasts, {quantile: (len(origins), horizon)} of the model's own intervals or None).

        Models without a predictive distribution of their own return None; they get conformal intervals
        (:mod:`tsattn.intervals`)."""
        return self.forecast(values, origins, first, series, scaler), None

    def state(self) -> dict:
        """JSON-ready learned state (see :func:`from_state`)."""
        return {"key": self.key, "horizon": self.horizon}


class Naive(WindowModel):
    """Repeat the last observed value."""

    key = label = "naive"

    def __init__(self, horizon: int = 1):
        self.horizon = horizon

    def forecast(self, values, origins, first, series, scaler):
        return M.naive_forecast(target_column(values), origins, self.horizon)


class SeasonalNaive(WindowModel):
    """The value one season before each target: for step h after origin o, values[o + h - season * ceil(h / season)].

    NaN where the series does not reach one season back before the origin.
    """

    key, label = "seasonal_naive", "seasonal-naive"

    def __init__(self, horizon: int = 1, season: int = 1):
        self.horizon, self.season = horizon, season
        self.lookback = season

    def forecast(self, values, origins, first, series, scaler):
        return M.seasonal_naive_forecast(target_column(values), origins, self.horizon, self.season, np.asarray(first))

    def state(self) -> dict:
        return {**super().state(), "season": self.season}


def window_scales(X: np.ndarray) -> np.ndarray:
    """(windows, 1): each window's largest absolute value (1 for an all-zero window)."""
    scale = np.abs(X.reshape(len(X), -1)).max(axis=1, keepdims=True)
    return np.where(scale > 0, scale, 1.0)


def _fit_starts(starts: np.ndarray) -> np.ndarray:
    """The windows a least-squares fit reads: ``starts``, or an evenly spaced ``LINEAR_FIT_MAX_WINDOWS`` of them."""
    if len(starts) > LINEAR_FIT_MAX_WINDOWS:
        starts = starts[np.linspace(0, len(starts) - 1, LINEAR_FIT_MAX_WINDOWS).astype(np.int64)]
    return starts


def linear_coefficients(data, starts: np.ndarray, relative: bool = False, window_scaled: bool = False,
                        covariates: bool = False, covariate_lags: int = 0, normalise: str = "none") -> np.ndarray:
    """Least-squares AR coefficients (window + 1, horizon) on the scaled windows starting at ``starts``
    (an evenly spaced subset above 100,000 windows); ``relative`` fits targets minus the window's last value
    on the window minus its last value; ``window_scaled`` divides each window and its targets by the window's
    largest absolute value first (series of every size then share one fit, as with normalise=window).
    ``covariates`` regresses on the whole network input (the target and every covariate column, step by step:
    (window * features + 1, horizon), the layout of a network's skip path); the scaling and the relative form
    apply to the target column only; ``covariate_lags``: see :func:`_structured_coefficients`; ``normalise``: the
    covariates as a model with that window normalisation reads them (:func:`covariates_as_read`)."""
    batch = data.batch("train", starts=_fit_starts(starts))
    X = covariates_as_read(batch.network_input().astype(np.float64), normalise) if covariates else \
        batch.insample_y  # (windows, window, features)
    y = batch.target  # (windows, horizon)
    if window_scaled:
        scale = window_scales(X[:, :, 0])
        X, y = np.concatenate([X[:, :, :1] / scale[:, :, None], X[:, :, 1:]], axis=-1), y / scale
    if relative:
        X, y = _relative_to_last(X, y)
    layout = getattr(data, "layout", None)
    if covariates and layout is not None:
        return _structured_coefficients(X, y, layout, covariate_lags)
    try:
        return M.fit_linear_autoregression(X, y)
    except np.linalg.LinAlgError:
        from .errors import TrainingError

        raise TrainingError("the least-squares autoregression did not converge on these windows (extreme or "
                            "degenerate values); rescale the data or pass skip_init=zeros") from None


def _relative_to_last(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The target column of windows ``X`` (windows, window, features) and targets ``y`` minus each window's last
    value (the relative form of the least-squares fits; covariate columns unchanged)."""
    last = X[:, -1:, 0]
    return np.concatenate([X[:, :, :1] - last[:, :, None], X[:, :, 1:]], axis=-1), y - last


COVARIATE_LAG_CHOICES = (0, 3, 6)  # covariate_lags="auto" tries these (each fixed one: covariates_lags.md)
COVARIATE_LAG_GAIN = 0.1  # and takes more lags only when they cut the held-out squared error by this fraction at least


def _held_out_starts(data) -> tuple[np.ndarray, np.ndarray] | None:
    """The training part split for a choice made on it alone: (the windows to fit on, the windows to score), the
    last ``horizon`` windows of each series held out and the ``horizon - 1`` before them dropped (their targets
    overlap the held-out ones); None when no series has ``3 * horizon`` training windows."""
    starts, series = data.starts["train"], data.series_numbers("train")
    horizon = data.horizon
    fit, held = [], []
    for number in np.unique(series):
        mine = np.sort(starts[series == number])
        if len(mine) < 3 * horizon:
            continue
        last = mine[-1]
        held.append(mine[mine > last - horizon])
        fit.append(mine[mine <= last - 2 * horizon + 1])
    if not held:
        return None
    return np.concatenate(fit), np.concatenate(held)


def choose_covariate_lags(data, relative: bool = False, choices: tuple = COVARIATE_LAG_CHOICES) -> int:
    """covariate_lags="auto": the number of earlier steps of the future-known covariates the least-squares start
    regresses each forecast step on, chosen on the training part alone (the validation part stays for early stopping
    and scoring): each choice is fitted on every series' training windows but its last ``2 * horizon - 1`` and scored
    (mean squared error, scaled) on its last ``horizon`` windows, whose targets the fit never saw. More lags are taken
    only when they cut that error by ``COVARIATE_LAG_GAIN`` (10%) at least: on a few held-out windows extra
    coefficients win by chance (a driver acting at once got 3 lags for 0.977 of the error; BJsales' lead, acting
    later, 0.009 with 6). A series with too few windows for both stays out of the choice; without any, 0."""
    split = _held_out_starts(data)
    if split is None:
        return 0
    fit, held = split
    batch = data.batch("train", starts=held)
    X = batch.network_input().astype(np.float64)
    y = batch.target
    if relative:
        X, y = _relative_to_last(X, y)
    from .errors import TrainingError

    scores = []
    for lags in choices:
        try:
            coefficients = linear_coefficients(data, fit, relative=relative, covariates=True, covariate_lags=lags)
        except TrainingError:  # a choice whose fit does not converge is not chosen
            scores.append(np.inf)
            continue
        forecast = X.reshape(len(X), -1) @ coefficients[:-1] + coefficients[-1]
        scores.append(float(np.mean((forecast - y) ** 2)))
    chosen, best = choices[0], scores[0]
    for lags, score in zip(choices[1:], scores[1:]):
        if score < (1 - COVARIATE_LAG_GAIN) * best:
            chosen, best = lags, score
    return chosen


CROSS_SERIES_PENALTIES = (0.0, 0.01, 0.1, 1.0, 10.0, np.inf)  # ridge penalties over the mean diagonal of X'X


def cross_series_coefficients(data, relative: bool = False) -> tuple[np.ndarray, float]:
    """skip_init="cross-series": the least-squares autoregression of :func:`linear_coefficients`, shrunk toward zero
    (with the relative skip, toward the naive forecast) by the ridge penalty that forecasts each series best when
    fitted on the other series' training windows (leave one series out; the penalty is a multiple of the mean diagonal
    of the windows' Gram matrix, infinity the zero start). A pooled fit that one or two long series dominate and that
    does not carry over to the others is shrunk; one that does is kept. Fewer than 3 series with training windows:
    the plain least-squares fit (penalty 0). Returns (coefficients (window + 1, horizon), the penalty chosen)."""
    starts = _fit_starts(data.starts["train"])
    series = data.panel.series_of(starts + data.window)
    batch = data.batch("train", starts=starts)
    X, y = batch.insample_y.astype(np.float64), batch.target.astype(np.float64)
    if relative:
        X, y = _relative_to_last(X, y)
    numbers = np.unique(series)
    if len(numbers) < 3:
        return M.fit_linear_autoregression(X, y), 0.0
    design = np.hstack([X.reshape(len(X), -1), np.ones((len(X), 1))])
    parts = [(design[series == n], y[series == n]) for n in numbers]  # each series' windows and targets
    grams = np.stack([inputs.T @ inputs for inputs, _ in parts])
    moments = np.stack([inputs.T @ targets for inputs, targets in parts])
    gram, moment = grams.sum(axis=0), moments.sum(axis=0)
    size = gram.shape[0]
    unit = max(float(np.trace(gram)) / size, 1e-12)
    errors = []
    for penalty in CROSS_SERIES_PENALTIES:
        error = 0.0
        for k, (inputs, targets) in enumerate(parts):
            if np.isinf(penalty):
                forecast = np.zeros_like(targets)
            else:
                others = gram - grams[k] + penalty * unit * np.eye(size)
                forecast = inputs @ np.linalg.lstsq(others, moment - moments[k], rcond=None)[0]
            error += float(np.sum((forecast - targets) ** 2))
        errors.append(error)
    penalty = CROSS_SERIES_PENALTIES[int(np.argmin(errors))]
    if np.isinf(penalty):
        return np.zeros((size, y.shape[1])), penalty
    if penalty == 0:
        return M.fit_linear_autoregression(X, y), penalty
    return np.linalg.solve(gram + penalty * unit * np.eye(size), moment), penalty


NORMALISE_GAIN = COVARIATE_LAG_GAIN  # normalise="auto" leaves instance normalisation only for this gain at least


def covariates_as_read(X: np.ndarray, normalise: str = "none") -> np.ndarray:
    """Windows (windows, window, features) with their covariate columns multiplied by the scale a model with this
    window normalisation multiplies their effect by: inside an instance-normalised window the covariates are read
    unchanged and the forecast is de-standardised by the target's deviation in the window (as
    :class:`~tsattn.layers.InstanceStats`), so a covariate's slope there moves the forecast by slope x deviation.
    A least-squares fit on these columns is a linear forecast such a model can make. ``normalise="none"`` (or no
    covariates): unchanged."""
    if normalise == "none" or X.shape[-1] == 1:
        return X
    if normalise != "instance":
        raise ValueError(f"covariates_as_read takes none or instance; got {normalise!r}")
    epsilon = 1e-5  # InstanceStats' default
    deviation = np.sqrt(X[:, :, 0].var(axis=1, keepdims=True) + epsilon)
    scale = np.where(deviation > 2 * np.sqrt(epsilon), deviation, 1.0)
    return np.concatenate([X[:, :, :1], X[:, :, 1:] * scale[:, :, None]], axis=-1)


def choose_normalisation(data) -> str:
    """normalise="auto": instance normalisation, or none when the covariates act additively. Instance normalisation
    de-standardises the forecast by each window's deviation, so a covariate's effect inside it scales with how much
    the target moved in that window: right for a promotion that lifts sales in proportion, wrong for a driver that
    adds the same amount whatever the window (BJsales' leading indicator). Decided on the training part alone, as
    :func:`choose_covariate_lags` (its held-out windows, its lags): the least-squares forecast of the change from
    each window's last value, fitted on the covariates as each normalisation reads them (:func:`covariates_as_read`),
    is scored on the training part's last windows; ``none`` only when it cuts that error by ``NORMALISE_GAIN``
    (10%) at least. Without covariates, or without windows enough for the check: instance."""
    if data.layout is None or sum(data.layout) == 0:
        return "instance"
    split = _held_out_starts(data)
    if split is None:
        return "instance"
    fit, held = split
    lags = choose_covariate_lags(data, relative=True) if data.layout[1] > 0 else 0
    batch = data.batch("train", starts=held)
    from .errors import TrainingError

    scores = {}
    for normalise in ("instance", "none"):
        X, y = _relative_to_last(covariates_as_read(batch.network_input().astype(np.float64), normalise), batch.target)
        try:
            coefficients = linear_coefficients(data, fit, relative=True, covariates=True, covariate_lags=lags,
                                               normalise=normalise)
        except TrainingError:
            scores[normalise] = np.inf
            continue
        intercept = coefficients[-1] if normalise == "none" else 0.0  # the normalised models' start drops it
        scores[normalise] = float(np.mean((X.reshape(len(X), -1) @ coefficients[:-1] + intercept - y) ** 2))
    return "none" if scores["none"] < (1 - NORMALISE_GAIN) * scores["instance"] else "instance"


def _structured_coefficients(X: np.ndarray, y: np.ndarray, layout, covariate_lags: int = 0) -> np.ndarray:
    """Least squares with covariates, few coefficients: step k of the forecast regresses on the target's window, the
    future-known values of step k (the window row that holds them) and of the ``covariate_lags`` steps before it (a
    distributed lag: a driver that acts a few steps later, such as BJsales' leading indicator), and the past-observed
    and static values of the last step; every other covariate coefficient is 0. Laid out as a skip Dense over the
    flattened window (window * features + 1, horizon). Regressing on every covariate of every step (window x features
    coefficients per step) interpolates a short series' few promotions (PromoData: validation forecasts from 592 to
    6326 against actuals of 1420-2789)."""
    windows, window, features = X.shape
    horizon = y.shape[1]
    hist, futr, stat = layout
    out = np.zeros((window * features + 1, horizon))
    lags = [r * features for r in range(window)]
    last = [(window - 1) * features + 1 + i for i in range(hist)] + \
        [(window - 1) * features + 1 + hist + futr + i for i in range(stat)]
    flat = X.reshape(windows, -1)
    for k in range(horizon):
        row = window - horizon + k  # holds the future-known values of forecast step k + 1
        aligned = [(row - lag) * features + 1 + hist + j for lag in range(covariate_lags + 1) if row - lag >= 0
                   for j in range(futr)]
        columns = lags + aligned + last
        try:
            coefficients = M.fit_linear_autoregression(flat[:, columns], y[:, k:k + 1])
        except np.linalg.LinAlgError:
            from .errors import TrainingError

            raise TrainingError("the least-squares start did not converge on these windows; pass skip_init=zeros") \
                from None
        out[columns, k] = coefficients[:-1, 0]
        out[-1, k] = coefficients[-1, 0]
    return out


def network_inputs(values, origins, window: int, series, scaler, first, layout, features: int | None = None
                   ) -> np.ndarray:
    """(windows, window, 1 + columns) what a network (and the linear model with covariates) reads for forecasts at
    ``origins``: the scaled target and the covariates step by step (a window reaching before its series' ``first``
    position padded with the series' first value). One line when it cannot be read: ``features`` columns expected and
    others given, a non-finite target, or future-known values missing (NaN)."""
    inputs = gather_batch(values, origins - window + 1, window, series=series, scaler=scaler, with_target=False,
                          first=first, layout=layout).network_input()
    if features is not None and inputs.shape[-1] != features:
        raise DataError(f"the model reads {features} column(s) per step (the target and its covariates) "
                        f"but was given {inputs.shape[-1]}; give the covariates it was fitted with")
    if not np.isfinite(inputs).all():
        target = inputs[..., 0]
        if not np.isfinite(target).all() or layout is None or not tuple(layout)[1]:
            # the target itself: a recursive forecast that overflowed, or values too large for float32
            raise DataError("a forecast went non-finite (values beyond float32's range of about 3e38, "
                            "e.g. a recursive forecast that diverged, or inputs that large); forecast fewer "
                            "steps, or scale the data first (e.g. a log transform)")
        raise DataError("a forecast needs future-known covariate values that were not given (NaN); pass "
                        "futr_df with every series' values for each forecast step (make_future_dataframe "
                        "builds its skeleton)")
    return inputs


class LinearAR(WindowModel):
    """Least-squares autoregression on the scaled window (with intercept); with covariates an ARX model.

    ``fit="pooled"`` (default) fits one set of coefficients on the training windows of every series (the
    start of the networks' linear skip path); ``"per-series"`` fits each series on its own windows and falls
    back to the pooled coefficients for a series with fewer training windows than coefficients. With covariates
    (the data's ``hist_exog``/``futr_exog``/``stat_exog``) it regresses each forecast step on the target's window,
    that step's future-known values and those of ``covariate_lags`` steps before it (chosen on the training part
    alone, :func:`choose_covariate_lags`), and the last past-observed and static values: the least-squares start of
    the networks' skip path (:func:`_structured_coefficients`), so a network is compared with the linear model it
    starts from, on the same inputs.
    """

    key = label = "linear"
    capabilities = Capabilities(learns=True, covariates=("hist", "futr", "stat"))

    def __init__(self, window: int, horizon: int = 1, fit: str = "pooled"):
        self.window, self.horizon, self.mode = window, horizon, choice("linear_fit", fit, LINEAR_FITS)
        self.lookback = window
        self.coefficients = None         # (window + 1, horizon) pooled; with covariates (window * features + 1, h)
        self.per_series = None           # (n_series, window + 1, horizon) when mode is per-series
        self.window_scaled = False       # with scaling=none: each window over its largest absolute value
        self.layout = None               # with covariates: (past, future-known, static) columns after the target
        self.covariate_lags = 0          # earlier steps of the future-known covariates each step regresses on

    def fit(self, data) -> "LinearAR":
        starts = data.starts["train"]
        if len(starts) == 0:  # nothing to fit it on (a series shorter than one training window): no forecast (NaN)
            self.coefficients = self.per_series = None
            return self
        # unscaled series of different sizes would share one intercept in series units (M1 under the N-BEATS
        # recipe: sMAPE 72.8 instead of 17.3): fitted on each window over its largest value instead
        self.window_scaled = data.scaler.kind == "none"
        layout = getattr(data, "layout", None)
        self.layout = Layout.of(layout) if layout is not None and sum(layout) > 0 else None
        self.covariate_lags = choose_covariate_lags(data) if self.layout is not None and self.layout.futr else 0
        fitted = dict(window_scaled=self.window_scaled, covariates=self.layout is not None,
                      covariate_lags=self.covariate_lags)
        self.coefficients = linear_coefficients(data, starts, **fitted)
        if self.mode == "per-series":
            numbers = data.panel.series_of(starts)
            self.per_series = np.repeat(self.coefficients[None], data.panel.n_series, axis=0)
            order = np.argsort(numbers, kind="stable")
            bounds = np.searchsorted(numbers[order], np.arange(data.panel.n_series + 1))
            used = int(np.count_nonzero(np.any(self.coefficients != 0, axis=1)))  # a structured fit's columns
            for i in range(data.panel.n_series):
                mine = starts[order[bounds[i]:bounds[i + 1]]]
                if len(mine) > max(self.window + 1, used):
                    self.per_series[i] = linear_coefficients(data, mine, **fitted)
        return self

    def for_series(self, numbers) -> "LinearAR":
        """This fit for another panel's series: ``numbers[i]`` is series i's number in the fitted panel (None for a
        series not seen in fit, which gets the pooled coefficients)."""
        if self.per_series is None:
            return self
        other = copy.copy(self)
        other.per_series = np.stack([self.coefficients if n is None else self.per_series[n] for n in numbers])
        return other

    def forecast(self, values, origins, first, series, scaler):
        if self.coefficients is None:  # fitted on no window
            return np.full((len(origins), self.horizon), np.nan)
        if self.layout is None:
            values = target_column(values)  # without covariates: an autoregression of the target alone
        outputs = []
        for low in range(0, len(origins), CHUNK):
            chunk, numbers = origins[low:low + CHUNK], np.asarray(series)[low:low + CHUNK]
            starts = np.asarray(first)[low:low + CHUNK]
            if self.layout is None:
                X = scaler.transform(gather_windows(values, chunk, self.window, starts), numbers)
                size = window_scales(X) if self.window_scaled else np.ones((len(X), 1))
                X = X / size
            else:  # the network's input: the scaled target and the covariates, step by step, flattened
                X = network_inputs(values, chunk, self.window, numbers, scaler, starts, self.layout).astype(np.float64)
                size = window_scales(X[:, :, 0]) if self.window_scaled else np.ones((len(X), 1))
                X = np.concatenate([X[:, :, :1] / size[:, :, None], X[:, :, 1:]], axis=-1).reshape(len(X), -1)
            design = np.hstack([X, np.ones((len(X), 1))])
            if self.per_series is not None:
                scaled = np.einsum("nw,nwh->nh", design, self.per_series[numbers])
            else:
                scaled = design @ self.coefficients
            outputs.append(scaler.inverse_transform(scaled * size, numbers))
        return np.concatenate(outputs) if outputs else np.zeros((0, self.horizon))

    def state(self) -> dict:
        return {**super().state(), "window": self.window, "fit": self.mode, "window_scaled": self.window_scaled,
                "layout": None if self.layout is None else list(self.layout), "covariate_lags": self.covariate_lags,
                "coefficients": None if self.coefficients is None else self.coefficients.tolist(),
                "per_series": None if self.per_series is None else self.per_series.tolist()}


# (method, horizon, season, fits, columns, (levels, optional levels), digest of the histories: _memo_key) -> [point,
# bounds, seconds, histories it could not fit and has not yet said so in a warning]
_STATISTICAL_MEMO: dict = {}
STATISTICAL_MEMO_SIZE = 8


class StatisticalModel(WindowModel):
    """A statsforecast method (Theta, DynamicOptimizedTheta, AutoETS) behind the shared interface.

    A local method, as in the M competitions: fitted on each series' history up to an origin (series units, nothing
    scaled), it forecasts ``horizon`` values. A series with at most :data:`MAX_STATISTICAL_FITS` origins (every M3
    and M1 series: one) is refitted at every origin; a longer run of origins (a one-step test part of a long
    series: 564 on sunspots) is refitted at every k-th origin only, k = ceil(origins / MAX_STATISTICAL_FITS), and
    the fitted model filtered forward through the new values in between (statsforecast's ``forward``, its
    ``cross_validation(refit=k)``): the same parameters, the newest values. On sunspots' test part this moved
    Theta's one-step RMSE from 20.968 to 20.984 and AutoETS's from 21.074 to 21.090 while cutting their cost
    about 8x (every fourth origin scored, refits every 12). ``fits`` sets that cap: 1 fits each series once, at its
    first origin, and filters it forward through every later one (statsforecast's ``cross_validation(refit=False)``),
    what the AutoARIMA a run adds by itself for future-known covariates does (:data:`ADDED_FITS`). A history it
    cannot fit (too short, degenerate) gets the naive forecast until a later refit succeeds, and a warning says how
    often.
    """

    capabilities = Capabilities(scope="local", intervals="quantiles", scored_on=("test",))

    def __init__(self, key: str, horizon: int = 1, season: int = 1, fits: int | None = None):
        if key not in STATISTICAL:
            raise ConfigError(f"unknown baseline {key!r}; available: {', '.join(STATISTICAL_LABELS)}")
        self.key, self.horizon, self.season = key, horizon, season
        self.fits = MAX_STATISTICAL_FITS if fits is None else max(1, int(fits))  # refits per series over its origins
        self.label = STATISTICAL[key][0]
        self.layout = None  # with covariates: (past, future-known, static) columns of the source after the target
        if key in EXOGENOUS:
            self.capabilities = Capabilities(scope="local", intervals="quantiles", scored_on=("test",),
                                             covariates=("futr",))

    def fit(self, data) -> "StatisticalModel":
        """Remembers where the future-known covariates sit in the data's source (a method that takes regressors
        uses them as X; the others forecast the target alone)."""
        self.layout = getattr(data, "layout", None) if self.key in EXOGENOUS else None
        return self

    def _regressors(self, values):
        """(N, k) future-known columns of a source, each row ``horizon`` steps ahead, or None."""
        if self.layout is None or np.ndim(values) != 2 or not self.layout.futr:
            return None
        hist, futr, _ = self.layout
        return np.asarray(values, dtype=np.float64)[:, 1 + hist:1 + hist + futr]

    def _method(self):
        models = statsforecast_models()
        return getattr(models, STATISTICAL[self.key][1])(season_length=max(1, int(self.season)))

    def forecast(self, values, origins, first, series, scaler):
        return self.forecast_distribution(values, origins, first, series, scaler)[0]

    def forecast_distribution(self, values, origins, first, series, scaler, levels=()):
        """Point forecasts and, with ``levels``, statsforecast's own intervals (one fit per origin gives both).

        Remembered for the process (a few recent calls): every run of a comparison scores the same baselines on the
        same targets, and refitting AutoETS at hundreds of origins of a long series for each model and seed
        cost minutes per run."""
        from .intervals import check_levels, level_bounds

        levels = check_levels(levels)
        point, bounds = self._remembered(values, origins, first, levels)
        if not levels:
            return point.copy(), None
        wanted = {0.5} | {q for level in levels for q in level_bounds(level)}
        return point.copy(), {q: v.copy() for q, v in bounds.items() if q in wanted}

    def optional_levels(self, levels) -> tuple:
        """The levels a fit asks statsforecast for beside ``levels`` without depending on them: AutoETS's
        :data:`tsattn.intervals.ETS_DEVIATION_LEVEL` interval, whose width :func:`ets_deviation` reads, so the ets
        interval scale at the origins auto's AutoETS candidate was fitted at costs no second fit (M3 monthly: about
        90 s on one core each time)."""
        from .intervals import ETS_DEVIATION_LEVEL

        return (ETS_DEVIATION_LEVEL,) if self.key == "ets" and ETS_DEVIATION_LEVEL not in levels else ()

    def _remembered(self, values, origins, first, levels, warn: bool = True) -> tuple:
        """(point, bounds of ``levels`` and of :meth:`optional_levels`, or None) of one fit per origin, remembered.
        ``warn``: say (once per remembered fit) on how many histories the method could not be fitted."""
        import warnings

        regressors = self._regressors(values)
        values = target_column(values)
        origins, first = np.asarray(origins, dtype=np.int64), np.asarray(first, dtype=np.int64)
        optional = self.optional_levels(levels)
        key = self._memo_key(values if regressors is None else np.column_stack([values, regressors]), origins, first,
                             (levels, optional))
        if key not in _STATISTICAL_MEMO:
            if len(_STATISTICAL_MEMO) >= STATISTICAL_MEMO_SIZE:
                _STATISTICAL_MEMO.pop(next(iter(_STATISTICAL_MEMO)))
            began = time.perf_counter()
            point, bounds, failed = self._fit_each(values, origins, first, levels, regressors, optional)
            _STATISTICAL_MEMO[key] = [point, bounds, time.perf_counter() - began, failed]
        point, bounds, self.compute_seconds, failed = _STATISTICAL_MEMO[key]  # what fitting cost, even remembered
        if warn and failed:
            _STATISTICAL_MEMO[key][3] = 0  # said once
            warnings.warn(f"{self.label} could not be fitted on {failed} of {len(origins)} histories (too short or "
                          "degenerate); the naive forecast stands in there (a zero-width interval)", UserWarning,
                          stacklevel=user_stacklevel())
        return point, bounds

    def _memo_key(self, values, origins, first, levels) -> tuple:
        """The memo's key: what the fits read, not how the arrays lay it out. Per series (each distinct ``first``,
        in order), its values from the first finite one to its last origin; per origin, its series and its place
        in them. The same histories as a panel's values (the fitted tails) or as NaN-padded forecast contexts (what
        a predict passes a local member) are one key: auto's AutoETS member and the ets interval scale at the
        series' ends share one fit."""
        import hashlib

        values = np.ascontiguousarray(values, dtype=np.float64)
        target = values if values.ndim == 1 else values[:, 0]
        starts, series = np.unique(first, return_inverse=True)
        ends = np.full(len(starts), -1, dtype=np.int64)
        np.maximum.at(ends, series, origins)
        digest = hashlib.sha1()
        begins = np.empty(len(starts), dtype=np.int64)
        for number, (start, end) in enumerate(zip(starts, ends)):
            finite = np.isfinite(target[start:end + 1])
            begins[number] = start + (int(np.argmax(finite)) if finite.any() else 0)
            kept = values[begins[number]:end + 1]
            digest.update(np.int64(len(kept)).tobytes())
            digest.update(kept.tobytes())
        for array in (series.astype(np.int64), origins - begins[series]):
            digest.update(b"|")
            digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        return self.key, self.horizon, self.season, self.fits, values.shape[1:], levels, digest.hexdigest()

    def _fit_each(self, values, origins, first, levels, regressors=None, optional=()):
        """One fit per origin: the point forecasts and the bounds of ``levels`` (a history where either fails gets the
        naive forecast, a zero-width band), and of the ``optional`` levels, NaN where only they fail: the points are
        those of a fit without them."""
        import warnings

        from .intervals import level_bounds

        statsforecast_models()  # missing, it is one line (a model saved with statsforecast, loaded without), not the
        # naive stand-in on every history below under "could not be fitted"
        out = np.empty((len(origins), self.horizon))
        required = [q for level in levels for q in level_bounds(level)]
        spare = [q for level in optional for q in level_bounds(level)]  # the optional levels' bounds
        bounds = {q: np.empty((len(origins), self.horizon)) for q in required + spare}
        failed = 0
        # ints stay ints: statsforecast names lo-80, not lo-80.0
        arguments = {"level": sorted({*levels, *optional})} if levels or optional else {}
        alone = {"level": list(levels)} if levels else {}  # the levels without the optional ones
        # per series (its first position), origins in time order; refits at every k-th (see the class docstring)
        order = np.lexsort((origins, first))
        _, starts, counts = np.unique(first[order], return_index=True, return_counts=True)
        rank = np.arange(len(order)) - np.repeat(starts, counts)  # each origin's place in its series' run
        every = np.repeat(np.maximum(1, -(-counts // self.fits)), counts)
        refit_at = np.zeros(len(origins), dtype=bool)
        refit_at[order[rank % every == 0]] = True
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # statsforecast's numerical warnings on flat or short histories
            fitted = None
            for i in order:
                start, origin = first[i], origins[i]
                if refit_at[i] or fitted is None or fitted[0] != start:
                    fitted = None  # refit here (or until one succeeds)
                history = np.asarray(values[start:origin + 1], dtype=np.float64)
                begin = int(np.argmax(np.isfinite(history)))  # a context NaN-padded before its series
                history = history[begin:]
                last = history[-1]
                extra = {}
                if regressors is not None:  # row p holds the regressors of p + horizon (tsattn.covariates)
                    h = self.horizon
                    rows = regressors[start + begin:origin + 1]
                    extra = {"X": rows[:-h], "X_future": rows[-h:]}
                    history = history[h:]  # the first h values have no regressors in the source
                try:
                    if fitted is None:
                        fitted = (start, self._method().fit(y=history, **({"X": extra["X"]} if extra else {})))
                    try:
                        result = fitted[1].forward(y=history, h=self.horizon, **arguments, **extra)
                    except Exception:  # noqa: BLE001 - the optional levels may fail alone: without them
                        if not optional:
                            raise
                        result = fitted[1].forward(y=history, h=self.horizon, **alone, **extra)
                    found = {"mean": np.asarray(result["mean"], dtype=np.float64)}
                    for level in (*levels, *optional):
                        low, high = level_bounds(level)
                        found[low] = np.asarray(result.get(f"lo-{level}", np.full(self.horizon, np.nan)),
                                                dtype=np.float64)
                        found[high] = np.asarray(result.get(f"hi-{level}", np.full(self.horizon, np.nan)),
                                                 dtype=np.float64)
                    unusable = [q for q in found if found[q].shape != (self.horizon,) or not np.isfinite(found[q]).all()]
                    if set(unusable) - set(spare):  # the points or a level asked for: the naive stand-in (below)
                        raise ValueError("non-finite forecast")
                    found.update({q: np.full(self.horizon, np.nan) for q in unusable})  # an optional level's: NaN
                except Exception:  # noqa: BLE001 - any failure of the method on this history: naive instead
                    found = {key: np.full(self.horizon, last) for key in ["mean", *required]}
                    found.update({q: np.full(self.horizon, np.nan) for q in spare})
                    failed += 1
                out[i] = found["mean"]
                for q in bounds:
                    bounds[q][i] = found[q]
        if not levels and not optional:
            return out, None, failed
        return out, dict(sorted({0.5: out, **bounds}.items())), failed

    def state(self) -> dict:
        return {**super().state(), "season": self.season, "layout": None if self.layout is None else list(self.layout),
                "fits": self.fits}


MAX_STATISTICAL_FITS = 50  # refits per series of a statistical method over a run of origins (see StatisticalModel)
ADDED_FITS = 1  # refits per series of a statistical baseline a run adds by itself (AutoARIMA for future covariates)

# key -> (label, statsforecast class): the statistical baselines `--baselines` can add
STATISTICAL = {
    "theta": ("theta", "Theta"),
    "dynamic_theta": ("dynamic-theta", "DynamicOptimizedTheta"),
    "ets": ("ets", "AutoETS"),
    "arima": ("arima", "AutoARIMA"),
}
EXOGENOUS = {"arima"}  # the statistical methods that take future-known regressors (statsforecast's X / X_future)
STATISTICAL_LABELS = {label: key for key, (label, _) in STATISTICAL.items()}  # what users type -> key
INSTALL_HINT = "pip install 'tsattn[bench]' (or pip install statsforecast)"


def require_ets_scale() -> None:
    """One clear line when the "ets" interval scale is asked for without statsforecast (it fits AutoETS)."""
    import importlib.util

    if importlib.util.find_spec("statsforecast") is None:
        raise ConfigError(f"interval_scale ets fits statsforecast's AutoETS, which is not installed: {INSTALL_HINT}; "
                          "or use interval_scale blend (the default)")


ETS_DEVIATIONS: dict = {}  # (digest of the inputs) -> ets_deviation's result: auto's candidates calibrate on the same
# validation origins and keep the same series' ends, one AutoETS fit per origin instead of one per candidate
ETS_DEVIATIONS_KEPT = 8


def ets_deviation(values, origins, first, season: int, horizon: int) -> np.ndarray:
    """(windows, horizon) statsforecast AutoETS's forecast standard deviation at each origin (fitted on the values of
    its series up to it; ``first``: each one's series start), read off its own interval at
    :data:`tsattn.intervals.ETS_DEVIATION_LEVEL`; NaN where it could not fit the history (:class:`StatisticalModel`
    forecasts the naive value there, with no width). The same inputs give the remembered result (a copy)."""
    import hashlib

    require_ets_scale()
    values = np.ascontiguousarray(values, dtype=np.float64)
    origins, first = np.ascontiguousarray(origins, dtype=np.int64), np.ascontiguousarray(first, dtype=np.int64)
    digest = hashlib.sha256()
    for array in (values, origins, first, np.array([season, horizon], dtype=np.int64)):
        digest.update(array.tobytes())
        digest.update(b"|")
    key = digest.hexdigest()
    if key not in ETS_DEVIATIONS:
        if len(ETS_DEVIATIONS) >= ETS_DEVIATIONS_KEPT:
            ETS_DEVIATIONS.pop(next(iter(ETS_DEVIATIONS)))
        ETS_DEVIATIONS[key] = _ets_deviation(values, origins, first, season, horizon)
    return ETS_DEVIATIONS[key].copy()


def end_deviation(panel, season: int, horizon: int, calibration, kept: int | None = None) -> np.ndarray | None:
    """(series, horizon) AutoETS's forecast deviation after each series' end (:func:`ets_deviation`), what a fitted
    state keeps when ``calibration`` measures its scores in the ets scale (set, or chosen by "auto"); else None. Also
    None when the state's tails keep every value (``kept``, :func:`tsattn.state.kept_values`: a local model's, or
    auto's combination with one): a forecast's bands fit AutoETS on the tails when they first need it, the same
    histories an AutoETS member forecasts from, so one fit serves both (StatisticalModel's memo), and a fit that never
    forecasts after the data's end (``tsattn fit`` scores the test part) pays for none."""
    if calibration is None or calibration.scale != "ets":
        return None
    if kept is not None and kept >= int(panel.lengths.max()):
        return None
    return ets_deviation(panel.values, panel.offsets[1:] - 1, panel.offsets[:-1], season, horizon)


def _ets_deviation(values, origins, first, season: int, horizon: int) -> np.ndarray:
    import warnings

    from scipy.stats import norm

    from .intervals import ETS_DEVIATION_LEVEL, level_bounds

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not be fitted on N histories": those get the blend figure instead
        # the points-only fit of AutoETS (auto's candidate, the ets baseline) carries this level's bounds beside its
        # points (StatisticalModel.optional_levels): the same fit, remembered, serves both
        _, bounds = StatisticalModel("ets", int(horizon), max(int(season), 1))._remembered(
            np.asarray(values, dtype=np.float64), np.asarray(origins), np.asarray(first), (), warn=False)
    low, high = level_bounds(ETS_DEVIATION_LEVEL)
    deviation = (bounds[high] - bounds[low]) / (2 * norm.ppf(high))
    return np.where(np.isfinite(deviation) & (deviation > 0), deviation, np.nan)


def interval_scale_at(kind: str, values, origins, first, season: int, horizon: int, insample) -> np.ndarray:
    """:func:`tsattn.intervals.window_scale` of ``kind``, with AutoETS's deviation at each origin for "ets"."""
    from .intervals import window_scale

    deviation = ets_deviation(values, origins, first, season, horizon) if kind == "ets" else None
    return window_scale(kind, values, origins, first, season, horizon, insample, deviation)


def statsforecast_models():
    """statsforecast.models, or one clear line saying how to install it."""
    try:
        from statsforecast import models
    except ImportError:
        raise ConfigError(f"the statistical methods (theta, dynamic-theta, ets, arima; also as auto's members) need "
                          f"statsforecast, which is not installed: {INSTALL_HINT}") from None
    return models


def statistical_keys(names) -> list[str]:
    """Keys of the statistical baselines named by users (labels or keys), checked; statsforecast must be
    importable when any is asked for."""
    if names is None:
        return []
    if isinstance(names, str):
        names = [part.strip() for part in names.split(",") if part.strip()]
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"baselines must be a list of names ({', '.join(STATISTICAL_LABELS)}); got {names!r}")
    keys = []
    for name in names:
        key = STATISTICAL_LABELS.get(name, name if name in STATISTICAL else None)
        if key is None:
            hint = " (naive and seasonal-naive are always on)" if name in ("naive", "seasonal-naive", "snaive",
                                                                           "linear") else ""
            raise ConfigError(f"unknown baseline {name!r}{hint}; --baselines takes {', '.join(STATISTICAL_LABELS)}")
        if key not in keys:
            keys.append(key)
    if keys:
        statsforecast_models()
    return keys


class NetworkModel(WindowModel):
    """A registered Keras network behind the shared interface: scaled windows in, scaled forecasts out.

    A quantile model (output (batch, horizon, n_quantiles)) gives its median as the point forecast and its
    quantiles as its own intervals; ``quantiles`` is None for a point model."""

    key = "model"

    def __init__(self, keras_model, name: str, window: int, horizon: int, quantiles=None, layout=None):
        self.model, self.label, self.window, self.horizon = keras_model, name, window, horizon
        self.features = int(keras_model.input_shape[-1])  # the target and any covariates, per step
        self.layout = Layout.of(layout)
        from .specs import MODELS

        spec = MODELS.get(name)
        self.capabilities = Capabilities(intervals="conformal" if quantiles is None else "quantiles", trained=True,
                                         learns=True, attention=bool(spec and spec.attention),
                                         covariates=("hist", "futr", "stat"))
        self.lookback = window
        self.quantiles = None if quantiles is None else tuple(round(float(q), 6) for q in quantiles)

    def _compiled(self):
        """The model's forward pass as one traced graph (any batch size): 6-7x the windows per second of eager
        calls for the RNNs (benchmarks/results/speed.md); a trained model and its reloaded copy take the same
        path, so their forecasts stay identical."""
        if getattr(self, "_forward", None) is None:
            from ._backend import tf

            model = self.model
            self._forward = tf.function(lambda x: model(x, training=False),
                                        input_signature=[tf.TensorSpec((None, self.window, self.features), tf.float32)])
        return self._forward

    def __getstate__(self) -> dict:
        """Pickled (pickle, joblib, copy.deepcopy of a fitted Forecaster) without its traced forward pass, which is
        traced again when next needed; the Keras model pickles itself (Keras 3 saves it to bytes)."""
        return {k: v for k, v in self.__dict__.items() if k != "_forward"}

    def _outputs(self, values, origins, first, series, scaler, chunk_size: int = 4096) -> np.ndarray:
        """Network outputs in series units at ``origins``, ``chunk_size`` windows per call of the traced graph
        (a window reaching before its series' ``first`` position is padded with the series' first value)."""
        outputs = []
        forward = self._compiled()
        first = np.asarray(first, dtype=np.int64)
        for low in range(0, len(origins), chunk_size):
            chunk, numbers = origins[low:low + chunk_size], np.asarray(series)[low:low + chunk_size]
            inputs = network_inputs(values, chunk, self.window, numbers, scaler, first[low:low + chunk_size],
                                    self.layout, self.features)
            scaled = np.asarray(forward(inputs), dtype=np.float64)
            outputs.append(scaler.inverse_transform(scaled, numbers))  # (chunk, horizon[, quantiles])
        if outputs:
            return np.concatenate(outputs)
        return np.zeros((0, self.horizon) + ((len(self.quantiles),) if self.quantiles else ()))

    def forecast(self, values, origins, first, series, scaler):
        return self.forecast_distribution(values, origins, first, series, scaler)[0]

    def forecast_distribution(self, values, origins, first, series, scaler, levels=()):
        from .intervals import point_quantile

        outputs = self._outputs(values, origins, first, series, scaler)
        if self.quantiles is None:
            return outputs, None
        point = outputs[:, :, point_quantile(self.quantiles)]
        return point, {q: outputs[:, :, i] for i, q in enumerate(self.quantiles)}


BASELINES = {"naive": Naive, "seasonal-naive": SeasonalNaive, "linear": LinearAR,
             **{label: StatisticalModel for label in STATISTICAL_LABELS}}  # what a Forecaster can be besides the
# networks; each is fitted on the same windows and scored on the same targets as a network of that window (the
# statistical methods need statsforecast: tsattn[bench])


def baseline_learns(name: str) -> bool:
    """Whether the baseline users call ``name`` (:data:`BASELINES`) is fitted on training windows (the linear
    autoregression), rather than forecasting from the values before an origin alone (``Capabilities.learns``)."""
    return BASELINES[name].capabilities.learns


def forecaster_baseline(name: str, window: int, horizon: int, season: int, linear_fit: str = "pooled") -> WindowModel:
    """An unfitted baseline of :data:`BASELINES` by the name users type."""
    if name == "naive":
        return Naive(horizon)
    if name == "seasonal-naive":
        return SeasonalNaive(horizon, season)
    if name == "linear":
        return LinearAR(window, horizon, linear_fit)
    if name in STATISTICAL_LABELS:
        statsforecast_models()  # one line saying how to install it, before any work
        return StatisticalModel(STATISTICAL_LABELS[name], horizon, season)
    raise ConfigError(f"unknown baseline {name!r}; available: {', '.join(BASELINES)}")


def baseline_models(window: int, horizon: int, season: int, linear_fit: str = "pooled",
                    statistical=(), added=()) -> list[WindowModel]:
    """The baselines scored beside every model: naive, seasonal naive and the linear autoregression, then the
    statistical methods named in ``statistical`` (keys or labels of :data:`STATISTICAL`); those among them also in
    ``added`` (not asked for: the run added them) are fitted :data:`ADDED_FITS` times per series."""
    added = set(statistical_keys(list(added)))
    return [Naive(horizon), SeasonalNaive(horizon, season), LinearAR(window, horizon, linear_fit)] + \
        [StatisticalModel(key, horizon, season, ADDED_FITS if key in added else None)
         for key in statistical_keys(list(statistical))]


def baseline_labels() -> dict[str, str]:
    """Every baseline's key -> the label users read (always-on ones first)."""
    return {**{model.key: model.label for model in (Naive, SeasonalNaive, LinearAR)},
            **{key: label for key, (label, _) in STATISTICAL.items()}}


def statsforecast_installed() -> bool:
    """Whether statsforecast (tsattn[bench]) can be imported: the statistical methods that run only when it is."""
    try:
        import statsforecast  # noqa: F401
    except ImportError:
        return False
    return True


AUTO_COMBINATIONS = ("median", "weighted", "auto")  # how model auto combines its best candidates
# (RunConfig.auto_combination): their median; their mean weighted by the inverse of each one's validation score
# (tsattn.selection.combination_weights), the default since it was measured before the M3 hold-outs at two origins
# (benchmarks/results/auto_combination_o*.md); or both offered and the lower validation score taken
# (tsattn.selection.combination_kinds; measured and not the default: auto_combination_auto_o*.md)


class Combination(WindowModel):
    """The median of several fitted forecasters' point forecasts (the M4 winners' answer to "no single method wins"),
    or with ``weights`` their weighted mean, behind the same interface: ``model="auto"`` keeps one when it beats the
    best single candidate on the validation part. At most one member is a network (an artefact holds one Keras model);
    conformal intervals come from the combination's own validation forecasts."""

    key = "model"
    label = "combination"

    def __init__(self, members: list, names: list, weights=None, floor: float | None = None):
        self.members, self.names = list(members), [str(n) for n in names]
        self.floor = floor  # each member's forecast is raised to it before combining, as it was scored alone (the
        # data's floor: tsattn.intervals.floored), so the combination forecasts what model auto validated
        self.weights = None if weights is None else [float(w) for w in weights]  # None: the median
        if self.weights is not None and (len(self.weights) != len(self.members) or not all(
                math.isfinite(w) and w >= 0 for w in self.weights) or not sum(self.weights) > 0):
            raise ValueError("a combination's weights must be one non-negative number per member, not all 0")
        self.horizon = int(members[0].horizon)
        self.lookback = max(int(m.lookback) for m in members)
        local = any(m.capabilities.scope == "local" for m in members)
        scored = [p for p in ("train", "validation", "test") if all(p in m.capabilities.scored_on for m in members)]
        self.capabilities = Capabilities(scope="local" if local else "global", trained=any(
            m.capabilities.trained for m in members), learns=any(m.capabilities.learns for m in members),
            covariates=tuple(set.intersection(
                *(set(m.capabilities.covariates) for m in members))), scored_on=tuple(scored or ("test",)))
        network = [m for m in members if isinstance(m, NetworkModel)]
        if len(network) > 1:
            raise ValueError("a combination holds at most one network")
        if network:
            self.model, self.window, self.features = network[0].model, network[0].window, network[0].features
            self.layout = network[0].layout

    def forecast(self, values, origins, first, series, scaler) -> np.ndarray:
        return combine([floored(m.forecast(values, origins, first, series, scaler), self.floor)
                        for m in self.members], self.weights)

    def state(self) -> dict:
        return {"key": "combination", "horizon": self.horizon, "names": self.names,
                "members": [None if isinstance(m, NetworkModel) else m.state() for m in self.members],
                **({"weights": self.weights} if self.weights is not None else {}), "floor": self.floor}


def combine(forecasts: list, weights=None) -> np.ndarray:
    """Members' forecasts (each (windows, horizon)) combined: their median, or with ``weights`` (one per member) their
    mean weighted by them."""
    stacked = np.stack(forecasts)
    if weights is None:
        return np.median(stacked, axis=0)
    weights = np.asarray(weights, dtype=np.float64)
    return np.tensordot(weights / weights.sum(), stacked, axes=1)


def from_state(state: dict, network=None) -> WindowModel:
    """A baseline (or a combination, whose network member is ``network``) from :meth:`WindowModel.state` (what
    artefacts store)."""
    key = state["key"]
    if key == "combination":
        members = [network if member is None else from_state(member) for member in state["members"]]
        if any(member is None for member in members):
            raise ValueError("the combination's network member is missing (model.keras)")
        return Combination(members, state["names"], state.get("weights"),  # absent (saved before): the median
                           state.get("floor"))  # absent (saved before forecasts were floored): none
    if key == Naive.key:
        return Naive(int(state["horizon"]))
    if key == SeasonalNaive.key:
        return SeasonalNaive(int(state["horizon"]), int(state["season"]))
    if key in STATISTICAL:
        model = StatisticalModel(key, int(state["horizon"]), int(state["season"]),
                                 state.get("fits"))  # absent (saved before): every origin up to the cap
        model.layout = Layout.of(state.get("layout"))
        return model
    if key == LinearAR.key:
        model = LinearAR(int(state["window"]), int(state["horizon"]), state["fit"])
        model.window_scaled = bool(state.get("window_scaled", False))
        model.layout = None if state.get("layout") is None else Layout.of(state["layout"])  # saved before: none
        model.covariate_lags = int(state.get("covariate_lags", 0))
        if state["coefficients"] is not None:  # None: fitted on no window
            model.coefficients = np.asarray(state["coefficients"], dtype=np.float64)
        if state.get("per_series") is not None:
            model.per_series = np.asarray(state["per_series"], dtype=np.float64)
        return model
    raise ValueError(f"unknown baseline {key!r}")

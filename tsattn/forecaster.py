"""`tsattn.Forecaster`: a scikit-learn style estimator on pandas data, one series or a panel, built on the harness.

    f = Forecaster("attention-rnn", window=24).fit(series, seed=0)
    f.predict(12)                     # the next 12 timestamps after the series (a Series)
    f.evaluate(holdout)               # one-step metrics with naive / seasonal-naive beside them
    f.backtest(series, start=0.8)     # rolling-origin historical forecasts
    f.save("model.tsattn"); Forecaster.load("model.tsattn").predict(12)

    g = Forecaster("attention-rnn", window=24, horizon=18).fit(long_frame, validation=18)   # unique_id, ds, y
    g.predict()                       # long frame: unique_id, ds, attention-rnn

Networks and baselines go through one interface (:mod:`tsattn.baselines`); a single series is a panel of one,
and results come back in the shape the data came in (a Series for one series, a long frame for a panel).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import metrics as M
from .baselines import BASELINES, NetworkModel, Naive, SeasonalNaive, gather_windows
from .checks import MAX_STEPS, positive_int
from .errors import ConfigError, DataError, NotFittedError, TrainingError
from .io import describe_index, future_index
from .panel import ID_COLUMN, TIME_COLUMN, VALUE_COLUMN, Panel, as_panel
from .windows import Scaler


def _model_names() -> list[str]:
    from .specs import list_models

    return list_models() + list(BASELINES)


class Forecaster:
    """Fit a registered model (or a baseline) on one series or a panel and forecast after each series.

    Args:
        model: "simple-rnn", "attention-rnn", "transformer", "naive" or "seasonal-naive".
        window: input length of each forecast (values before the first forecast step).
        horizon: steps the model forecasts directly (direct multi-output for horizon > 1).
        **params: model parameters (e.g. ``units=64``) and run settings of :class:`tsattn.harness.RunConfig`
            (e.g. ``epochs=100``, ``batch_size=64``, ``scaling="standard"``, ``season=12``,
            ``fill="interpolate"``). Stored verbatim; checked in :meth:`fit`.

    Attributes set by fit (learned state ends in ``_``):
        estimator_ (the fitted model behind the shared interface), model_ (its keras.Model, None for
        baselines), scaler_ (one scaler per series), history_ (DataFrame), season_, config_, tails_ (a Panel
        of the last values of each series, enough to forecast), mase_scale_ (per series), trained_until_.

    Forecasts longer than ``horizon`` continue recursively: each block of ``horizon`` forecasts is
    appended to the inputs of the next block (errors then compound; the first ``horizon`` steps are the
    model's direct outputs).
    """

    def __init__(self, model: str = "attention-rnn", window: int = 24, horizon: int = 1, **params):
        self.model = model
        self.window = window
        self.horizon = horizon
        self.params = params

    # -- scikit-learn protocol -----------------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict:
        return {"model": self.model, "window": self.window, "horizon": self.horizon, **self.params}

    def set_params(self, **params) -> "Forecaster":
        for key, value in params.items():
            if key in ("model", "window", "horizon"):
                setattr(self, key, value)
            else:
                self.params[key] = value
        return self

    def __repr__(self) -> str:
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"Forecaster({arguments})"

    def _check_fitted(self):
        if not hasattr(self, "tails_"):
            raise NotFittedError("this Forecaster is not fitted yet; call fit(series) first (or Forecaster.load)")

    # -- fit -----------------------------------------------------------------------------------------
    def _config(self, validation, epochs: int | None, seed: int):
        from .harness import RunConfig

        if self.model not in _model_names():
            raise ConfigError(f"unknown model {self.model!r}; available: {', '.join(_model_names())}")
        settings = dict(self.params)
        if epochs is not None:
            settings["epochs"] = epochs
        number = isinstance(validation, (int, float, np.integer, np.floating)) and not isinstance(validation, bool)
        if number and float(validation).is_integer() and validation >= 1:
            split = {"split": "holdout", "holdout": int(validation), "validation_fraction": 1.0,
                     "train_fraction": 1.0}
        elif number and 0 <= validation < 1:
            split = {"split": "chronological", "train_fraction": 1.0 - validation,
                     "validation_fraction": validation}
        else:
            raise ConfigError(f"validation must be a fraction in [0, 1) or a number of values >= 1 at the end of "
                              f"each series; got {validation!r}")
        base_model = "simple-rnn" if self.model in BASELINES else self.model
        config = RunConfig(model=base_model, dataset=None, window=self.window, horizon=self.horizon, seed=seed,
                           **split)
        return config.updated(**settings)

    def fit(self, data, validation: float | int = 0.1, epochs: int | None = None, seed: int = 0, verbose: int = 0,
            id_column: str = ID_COLUMN, time_column: str = TIME_COLUMN, value_column: str = VALUE_COLUMN,
            engine=None) -> "Forecaster":
        """Train one global model on every series (the end of each series for early stopping).

        Args:
            data: one series (pandas Series with DatetimeIndex / PeriodIndex / RangeIndex, a one-column
                DataFrame or a 1-D array) or a panel (a long frame with ``id_column``, ``time_column``,
                ``value_column``; a dict of Series).
            validation: the end of each series used for early stopping: a fraction (0.1) or a number of
                values (e.g. the horizon, for panels of short series); 0 trains on everything.
            epochs: maximum epochs (default: the harness default, 200, with early stopping).
            seed: fixes weights, batch order and dropout.
            verbose: 1 prints an epoch counter with loss and ETA.
            id_column, time_column, value_column: the long frame's columns.
            engine: where the members of an ensemble (``ensemble=k``) train: None here, or "ray" / an engine
                of :func:`tsattn.engine.get_engine` (e.g. ``get_engine("local", jobs=2)``); same weights.

        Returns:
            self
        """
        from .harness import EpochProgress, window_config

        config = self._config(validation, epochs, seed)
        panel = as_panel(data, id_column, time_column, value_column, fill=config.fill)
        windowed = window_config(panel, config, require_test=False)  # validates window / horizon / length
        panel = windowed.panel  # without the series too short to window (a warning named them)
        self.columns_ = (id_column, time_column, value_column)
        self.season_ = config.season or M.season_from_frequency(panel.freq)
        self.mase_scale_ = M.insample_scale(panel.values, panel.offsets, windowed.train_end(), self.season_)
        self.config_ = config
        if self.model in BASELINES:
            self.estimator_ = Naive(self.horizon) if self.model == "naive" else SeasonalNaive(self.horizon, self.season_)
            self.model_ = None
            self.scaler_ = Scaler("none", np.zeros(panel.n_series), np.ones(panel.n_series))
            self.history_ = pd.DataFrame(columns=["loss"])
        else:
            from .harness import train_model

            progress = EpochProgress(config.epochs) if verbose else None
            self.model_, self.history_, self.epochs_run_, self.best_epoch_ = train_model(windowed, config, progress,
                                                                                         engine)
            from .harness import model_quantiles

            self.estimator_ = NetworkModel(self.model_, self.model, windowed.window, windowed.horizon,
                                           model_quantiles(config))
            self.scaler_ = windowed.scaler
        self.conformal_, self.quantile_conformal_ = self._calibrate(windowed)
        self._remember_tails(panel, trained_until=None)
        return self

    def _calibrate(self, windowed):
        """Conformal calibration on the validation part: (Conformal of the point forecasts, QuantileConformal of a
        quantile model's bands or None); (None, None) without a validation part."""
        from .evaluation import origins_of
        from .intervals import Conformal, QuantileConformal

        if windowed.count("validation") == 0:
            return None, None
        origins, first, series = origins_of(windowed, "validation")
        point, quantiles = self.estimator_.forecast_distribution(windowed.panel.values, origins, first, series,
                                                                 windowed.scaler)
        actual = windowed.y("validation", scaled=False)
        scale = self._interval_scale_for(windowed.panel, known=True)[series]
        return (Conformal.calibrate(actual, point, scale),
                None if quantiles is None else QuantileConformal.calibrate(actual, quantiles, scale))

    def _remember_tails(self, panel: Panel, trained_until):
        """Keep the last values of each series (enough to forecast after it) and when training data ended."""
        keep = max(self.window, self.season_, 1)
        starts = np.maximum(panel.offsets[1:] - keep, panel.offsets[:-1])
        positions = np.concatenate([np.arange(a, b) for a, b in zip(starts, panel.offsets[1:])])
        lengths = panel.offsets[1:] - starts
        self.tails_ = Panel(list(panel.ids), panel.values[positions], np.concatenate([[0], np.cumsum(lengths)]),
                            panel.index[positions], panel.freq, panel.name, panel.horizon, panel.single_input)
        last = panel.index[panel.offsets[1:] - 1]
        self.trained_until_ = last[0] if trained_until is None and panel.n_series == 1 else (
            trained_until if trained_until is not None else last.max())

    @property
    def single_(self) -> bool:
        return bool(self.tails_.single_input)

    # -- the data to forecast after ------------------------------------------------------------------
    def _panel_of(self, data, ids=None) -> Panel:
        """The fitted tails, or ``data`` (one series or a panel of the fitted frequency) to forecast after."""
        if data is None:
            if ids is None:
                return self.tails_
            return self.tails_.subset(np.array([self._fitted_number(sid) for sid in ids]))
        columns = getattr(self, "columns_", (ID_COLUMN, TIME_COLUMN, VALUE_COLUMN))
        panel = as_panel(data, *columns, fill=self.params.get("fill"))
        if panel.index_kind != self.tails_.index_kind:
            raise DataError(f"the series has a {panel.index_kind} index but the model was fitted on a "
                            f"{self.tails_.index_kind} index; pass a series indexed like the training series")
        if panel.freq != self.tails_.freq:
            raise DataError(f"the series has frequency {panel.freq} but the model was fitted on "
                            f"{self.tails_.freq}; resample it to {self.tails_.freq} first")
        return panel

    def _fitted_number(self, series_id) -> int:
        try:
            return self.tails_.number(series_id)
        except DataError:
            raise DataError(f"series id {series_id!r} was not in the data the model was fitted on; pass its "
                            "history, e.g. predict(h, series=frame_with_that_series)") from None

    def _scaler_for(self, panel: Panel) -> Scaler:
        """One scaler row per series of ``panel``: the fitted one for a known id (or for the one series of a
        single-series model), else fit on that series' history (a global model meeting a new series)."""
        if self.single_ and panel.n_series == 1:
            return self.scaler_
        rows = []
        fresh = None
        for i, sid in enumerate(panel.ids):
            if sid in self.tails_.ids:
                rows.append((self.scaler_.offset[self.tails_.number(sid)], self.scaler_.scale[self.tails_.number(sid)]))
            else:
                if fresh is None:
                    fresh = Scaler(self.scaler_.kind).fit(panel.values, np.repeat(np.arange(panel.n_series),
                                                                                  panel.lengths), panel.n_series)
                rows.append((fresh.offset[i], fresh.scale[i]))
        offset, scale = zip(*rows) if rows else ((), ())
        return Scaler(self.scaler_.kind, np.array(offset), np.array(scale))

    def _interval_scale_for(self, panel: Panel, known: bool = False) -> np.ndarray:
        """Per series of ``panel``, the scale conformal scores are measured in: the fitted series' in-sample
        seasonal-naive MAE, or for a series not seen in fit the same figure on its own history."""
        from .intervals import series_scale

        scale = np.asarray(self.mase_scale_ if known else self._mase_scale_for(panel), dtype=np.float64)
        unknown = ~np.isfinite(scale)
        if unknown.any():
            own = M.insample_scale(panel.values, panel.offsets, panel.lengths, self.season_)
            scale = np.where(unknown, own, scale)
        scaler = self.scaler_ if known else self._scaler_for(panel)
        return series_scale(scale, scaler.scale if len(scaler.scale) == panel.n_series else 1.0)

    def _mase_scale_for(self, panel: Panel) -> np.ndarray:
        if self.single_ and panel.n_series == 1:
            return np.asarray(self.mase_scale_[:1])
        scales = np.full(panel.n_series, np.nan)
        for i, sid in enumerate(panel.ids):
            if sid in self.tails_.ids:
                scales[i] = self.mase_scale_[self.tails_.number(sid)]
        return scales

    @property
    def lookback_(self) -> int:
        """Values needed before a forecast: the window (a baseline reads fewer but is scored on the same
        targets as a network of that window) or the season, whichever is longer."""
        return max(self.window, self.estimator_.lookback)

    # -- forecasting core ----------------------------------------------------------------------------
    def _forecast(self, contexts: np.ndarray, steps: int, scaler: Scaler, series: np.ndarray) -> np.ndarray:
        """(k, steps) forecasts after each row of ``contexts`` (k, length); recursive beyond ``horizon``."""
        needed = self.lookback_
        if contexts.shape[1] < needed:
            raise DataError(f"need at least {needed} values before the first forecast; got {contexts.shape[1]}")
        forecasts = np.zeros((len(contexts), 0))
        history = contexts
        while forecasts.shape[1] < steps:
            k, length = history.shape
            origins = np.arange(k) * length + length - 1
            block = self.estimator_.forecast(history.ravel(), origins, np.arange(k) * length, series, scaler)
            forecasts = np.hstack([forecasts, block])
            history = np.hstack([history, block])
        return forecasts[:, :steps]

    def _contexts(self, panel: Panel) -> np.ndarray:
        """(n_series, lookback) the last values of each series; a series too short is named."""
        needed = max(self.lookback_, 1)
        short = np.flatnonzero(panel.lengths < needed)
        if len(short):
            what = "the series" if panel.n_series == 1 else f"series {panel.ids[short[0]]!r}"
            raise DataError(f"{what} has {int(panel.lengths[short[0]])} values but forecasting needs the last "
                            f"{needed} (window {self.window}); pass a longer series")
        return gather_windows(panel.values, panel.offsets[1:] - 1, needed)

    def predict(self, steps: int | None = None, series=None, ids=None, level=None):
        """Forecast the ``steps`` values after each fitted series (or after ``series``, same frequency).

        Args:
            steps: how many steps (default: the model's horizon).
            series: data to forecast after instead of the fitted series: one series or a panel; series
                ids never seen in fit are forecast from their own history (scaled on it).
            ids: forecast only these fitted series.
            level: interval levels in percent, e.g. ``(80, 95)``: adds ``lo-80, hi-80, lo-95, hi-95`` columns.
                A model trained with ``loss="quantile"`` gives its own quantiles (they must include each
                level's bounds), conformalized on its validation part; any other model split-conformal
                intervals around its forecast, calibrated on its validation part (see :mod:`tsattn.intervals`).
                Intervals reach the model's horizon.

        Returns:
            For a model fitted on one series (and no panel passed): a Series indexed by the next timestamps
            (with ``level``: a DataFrame, the forecast then the interval columns). Otherwise a long frame
            ``unique_id, ds, <model>`` (+ the interval columns) with each series' next timestamps.
        """
        from .intervals import check_levels, interval_columns

        self._check_fitted()
        steps = positive_int("steps", self.horizon if steps is None else steps, 1, MAX_STEPS)
        levels = check_levels(level)
        panel = self._panel_of(series, ids)
        contexts = self._contexts(panel)
        scaler = self._scaler_for(panel)
        values = self._forecast(contexts, steps, scaler, np.arange(panel.n_series))
        bounds = self._bounds(panel, contexts, values, scaler, levels) if levels else {}
        if panel.single_input or (panel.n_series == 1 and self.single_ and series is None):
            labels = future_index(describe_index(panel.series_index(0)), steps)
            name = panel.name if panel.name is not None else "forecast"
            if not levels:
                return pd.Series(values[0], index=labels, name=name)
            return pd.DataFrame({name: values[0], **{column: bounds[column][0] for column in interval_columns(levels)}},
                                index=labels)
        id_column, time_column, _ = getattr(self, "columns_", (ID_COLUMN, TIME_COLUMN, VALUE_COLUMN))
        labels = [future_index(describe_index(panel.series_index(i)), steps) for i in range(panel.n_series)]
        stamps = labels[0].append(labels[1:]) if len(labels) > 1 else labels[0]
        return pd.DataFrame({id_column: np.repeat(np.asarray(panel.ids, dtype=object), steps),
                             time_column: np.asarray(stamps) if panel.index_kind == "range" else stamps,
                             self.model: values.ravel(),
                             **{column: bounds[column].ravel() for column in interval_columns(levels)}})

    @property
    def quantiles_(self):
        """The quantiles a ``loss="quantile"`` model outputs, or None."""
        return getattr(self.estimator_, "quantiles", None)

    def _bounds(self, panel: Panel, contexts: np.ndarray, point: np.ndarray, scaler, levels) -> dict:
        """{"lo-80": (n_series, steps), ...}: the model's own quantiles or its conformal intervals."""
        from .intervals import bands, level_name, missing_levels

        steps = point.shape[1]
        if steps > self.horizon:
            raise ConfigError(f"intervals reach the model's horizon ({self.horizon} step(s)); got steps={steps}: "
                              f"forecast at most {self.horizon} steps with level, or fit with horizon={steps}")
        if self.quantiles_ is not None:
            missing = missing_levels(levels, self.quantiles_)
            if missing:
                have = ", ".join(f"{q:g}" for q in self.quantiles_)
                raise ConfigError(f"this quantile model outputs quantiles {have}, which do not bound a "
                                  f"{level_name(missing[0])}% interval; ask for a level they bound or fit with that "
                                  "level (level=...)")
            k, length = contexts.shape
            _, quantiles = self.estimator_.forecast_distribution(contexts.ravel(), np.arange(k) * length + length - 1,
                                                                 np.arange(k) * length, np.arange(k), scaler)
            quantiles = {q: values[:, :steps] for q, values in quantiles.items()}
            if getattr(self, "quantile_conformal_", None) is not None:
                quantiles = self.quantile_conformal_.quantiles(quantiles, self._interval_scale_for(panel), levels)
        else:
            if getattr(self, "conformal_", None) is None:
                raise ConfigError("no conformal calibration is stored with this model (it was fitted without a "
                                  "validation part, or saved by a tsattn without intervals); refit with validation > 0 "
                                  "(e.g. validation=0.1) to get intervals")
            quantiles = self.conformal_.quantiles(point, self._interval_scale_for(panel), levels)
        out = {}
        for level, (low, high) in bands(quantiles, levels).items():
            out[f"lo-{level_name(level)}"], out[f"hi-{level_name(level)}"] = low, high
        return out

    # -- evaluation ----------------------------------------------------------------------------------
    def _origins(self, panel: Panel, horizon: int, first_target=None, stride: int = 1):
        """Flat origins (last input position) of every window + horizon inside each series."""
        lookback = max(self.lookback_, 1)
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

    def _score(self, panel: Panel, origins: np.ndarray, horizon: int, predicted: np.ndarray | None = None):
        """Forecasts of the model (unless given, e.g. by refits) and the baselines at ``origins``, with
        per-series metrics."""
        series = panel.series_of(origins)
        first = panel.offsets[series]
        scaler = self._scaler_for(panel)
        if (origins - self.lookback_ + 1 < first).any():
            raise DataError(f"every origin needs {self.lookback_} values before it in its own series")
        if predicted is None:
            predicted = self._forecast(gather_windows(panel.values, origins, self.lookback_), horizon, scaler, series)
        actual = panel.values[origins[:, None] + np.arange(1, horizon + 1)]
        baselines = {model.key: model.forecast(panel.values, origins, first, series, scaler)
                     for model in (Naive(horizon), SeasonalNaive(horizon, self.season_))}
        scale = self._mase_scale_for(panel)
        frame = M.tidy_metrics(actual, {"model": predicted, **baselines}, series, panel.ids, "evaluation", scale)
        return actual, predicted, baselines, frame, series, scale

    def _summary(self, panel, frame, actual, predicted, series, scale, horizon, count) -> dict:
        from .evaluation import per_step

        nested = M.nested_metrics(M.aggregate(frame))["evaluation"]
        result = {**nested, "count": int(count)}
        if horizon > 1:
            result["per_step"] = per_step(actual, {"model": predicted}, series, panel.n_series, scale)
        if panel.n_series > 1:
            result["series"] = int(panel.n_series)
            result["by_series"] = frame.drop(columns="part")
        return result

    def evaluate(self, series, steps: int | None = None) -> dict:
        """Metrics of ``steps``-step forecasts (default: the model's) of every target in ``series``.

        The first ``window`` values of each series serve as inputs only; every later value is forecast
        from the values before it. The naive and seasonal-naive baselines are scored on the same targets
        (seasonal naive only where the series reaches one season back). For a panel the figures are means
        over series and ``by_series`` holds the tidy per-series frame.

        Returns:
            {"model": {...}, "naive": {...}, "seasonal_naive": {...}, "count": n, "per_step": [...]}
            in series units (rmse, mae, mase, ...).
        """
        self._check_fitted()
        horizon = positive_int("steps", self.horizon if steps is None else steps, 1, MAX_STEPS)
        panel = self._panel_of(series)
        origins = self._origins(panel, horizon)
        actual, predicted, _, frame, numbers, scale = self._score(panel, origins, horizon)
        return self._summary(panel, frame, actual, predicted, numbers, scale, horizon, len(origins))

    def backtest(self, series, start=0.8, steps: int | None = None, stride: int = 1,
                 retrain: bool | int = False, epochs: int | None = None, engine: str = "local", jobs: int = 1,
                 address: str | None = None, cpus_per_run: int = 1) -> pd.DataFrame:
        """Rolling-origin historical forecasts (per series for a panel).

        Args:
            series: one series or a panel to walk through.
            start: the first forecast origin's target in each series: a fraction (0.8), a position (int) or
                a timestamp label. Forecasts are made from origins ``start - 1, start - 1 + stride, ...``.
            steps: how many steps ahead to forecast from each origin, as in :meth:`predict` (default: the
                model's horizon; longer continues recursively).
            stride: steps between origins.
            retrain: False uses the fitted model everywhere (honest only when it was fitted on data before
                ``start``: a warning says when it was not); True refits a fresh copy at every origin; an int
                k refits every k origins. A refit sees only values up to its origin (scaler included).
                Refits need one series (a panel's series end at different times).
            epochs: maximum epochs of each refit.
            engine, jobs, address, cpus_per_run: where the refits run (they are independent): "local"
                (``jobs`` processes) or "ray" (each refit a Ray task of ``cpus_per_run`` CPUs; ``address``
                joins a cluster), as in :func:`tsattn.compare`. Every engine gives the same forecasts.

        Returns:
            A DataFrame (origin, timestamp, step, actual, predicted, naive, trained_until; a panel adds
            unique_id first); ``attrs["metrics"]`` holds the summary (model, naive, seasonal_naive, per step).
        """
        self._check_fitted()
        horizon = positive_int("steps", self.horizon if steps is None else steps, 1, MAX_STEPS)
        stride = positive_int("stride", stride, 1, 100_000)
        panel = self._panel_of(series)
        every = int(retrain) if not isinstance(retrain, bool) else (1 if retrain else 0)
        if isinstance(retrain, int) and not isinstance(retrain, bool) and retrain < 1:
            raise ConfigError(f"retrain must be True, False or an integer >= 1; got {retrain!r}")
        if every and panel.n_series > 1:
            raise ConfigError("retrain needs one series (the series of a panel end at different times); backtest "
                              "a panel with retrain=False on a model fitted before start, or one series at a time")
        first_targets = np.array([self._start_position(panel.series(i), start) for i in range(panel.n_series)])
        lookback = self.lookback_
        if (first_targets < lookback).any():
            raise ConfigError(f"backtest start {start!r} leaves {int(first_targets.min())} value(s) before the first "
                              f"origin, fewer than one window ({lookback}); start later")
        try:
            origins = self._origins(panel, horizon, first_targets, stride)
        except DataError:
            raise ConfigError(f"backtest start {start!r} leaves no origin with {horizon} step(s) after it; "
                              "start earlier") from None
        trained_until = np.empty(len(origins), dtype=object)
        if every == 0:
            actual, predicted, baselines, frame, numbers, scale = self._score(panel, origins, horizon)
            fitted_end = self.trained_until_
            first_origin = panel.index[origins[0]]
            if self.single_ and panel.n_series == 1 and fitted_end >= first_origin:
                warnings.warn(f"the model was fitted on data up to {fitted_end}, after the first origin "
                              f"{first_origin}: these forecasts are optimistic; use retrain=True",
                              UserWarning, stacklevel=2)
            elif panel.n_series > 1 and fitted_end >= panel.index[origins].min():
                warnings.warn(f"the model was fitted on data up to {fitted_end}, after some origins: these "
                              "forecasts are optimistic; fit on data before start", UserWarning, stacklevel=2)
            trained_until[:] = fitted_end
        else:
            from sklearn.base import clone

            from .engine import get_engine

            runner = get_engine(engine, jobs=jobs, address=address, cpus=cpus_per_run)
            shared = {"template": clone(self), "series": panel.series(0), "values": panel.values,
                      "origins": origins, "every": every, "horizon": horizon, "epochs": epochs,
                      "validation": (self.config_.validation_fraction if self.config_.split != "holdout"
                                     else self.config_.holdout), "seed": self.config_.seed}
            predicted = np.zeros((len(origins), horizon))
            for block_start, outcome in runner.map(_refit_block, shared, range(0, len(origins), every)):
                if not outcome.ok:
                    raise TrainingError(f"the refit at origin {panel.index[origins[block_start]]} failed: "
                                        f"{outcome.error}")
                block_predicted, until = outcome.value
                predicted[block_start:block_start + len(block_predicted)] = block_predicted
                trained_until[block_start:block_start + len(block_predicted)] = until
            actual, predicted, baselines, frame, numbers, scale = self._score(panel, origins, horizon, predicted)
        rows = pd.DataFrame({
            "origin": np.repeat(panel.index[origins], horizon),
            "timestamp": panel.index[(origins[:, None] + np.arange(1, horizon + 1)).ravel()],
            "step": np.tile(np.arange(1, horizon + 1), len(origins)),
            "actual": actual.ravel(),
            "predicted": predicted.ravel(),
            "naive": baselines["naive"].ravel(),
            "trained_until": np.repeat(trained_until, horizon),
        })
        if panel.n_series > 1:
            rows.insert(0, ID_COLUMN, np.repeat(np.asarray(panel.ids, dtype=object)[numbers], horizon))
        summary = self._summary(panel, frame, actual, predicted, numbers, scale, horizon, len(origins))
        summary.update({"origins": int(len(origins)), "retrain": every})
        if "per_step" not in summary:
            summary["per_step"] = [summary["model"]]
        rows.attrs["metrics"] = {k: v for k, v in summary.items() if k != "by_series"}
        if "by_series" in summary:
            rows.attrs["metrics_by_series"] = summary["by_series"]
        return rows

    @staticmethod
    def _start_position(series: pd.Series, start) -> int:
        n = len(series)
        if isinstance(start, float) and not isinstance(start, bool):
            if not 0 < start < 1:
                raise ConfigError(f"backtest start as a fraction must be in (0, 1); got {start!r}")
            return int(round(n * start))
        if isinstance(start, (int, np.integer)) and not isinstance(start, bool):
            if not 0 < start < n:
                raise ConfigError(f"backtest start position must be in 1..{n - 1}; got {start!r}")
            return int(start)
        try:
            return int(series.index.get_indexer([pd.Timestamp(start) if isinstance(series.index, pd.DatetimeIndex)
                                                 else start])[0])
        except (ValueError, TypeError):
            pass
        raise ConfigError(f"backtest start {start!r} is not a fraction, a position or a timestamp of the series")

    # -- attention -----------------------------------------------------------------------------------
    def attention_weights(self, series=None) -> pd.DataFrame:
        """Attention over the window for every forecast in ``series`` (default: the last window of each series).

        Rows: timestamp of the forecast target (a panel adds a ``unique_id`` column); columns
        ``lag_W .. lag_1`` (lag 1 = the most recent value). attention-rnn: the attention layer's weights.
        transformer: the last encoder block's attention of the last step, averaged over heads (what the
        last-step pooling reads).
        """
        from .models import MODELS, attention_model

        self._check_fitted()
        if self.model_ is None or MODELS[self.model].attention is None:
            raise ConfigError(f"model {self.model!r} has no attention weights; use attention-rnn or transformer")
        panel = self._panel_of(series)
        if series is None:  # the window after each fitted series
            origins = panel.offsets[1:] - 1
        else:
            origins = np.concatenate([np.arange(panel.offsets[i] + self.window - 1, panel.offsets[i + 1])
                                      for i in range(panel.n_series)])
        numbers = panel.series_of(origins)
        scaler = self._scaler_for(panel)
        scaled = scaler.transform(gather_windows(panel.values, origins, self.window), numbers).astype(np.float32)[:, :, None]
        weights = attention_model(self.model_).predict(scaled, verbose=0, batch_size=1024)
        weights = np.asarray(weights[-1] if isinstance(weights, list) else weights)
        if weights.ndim == 4:  # (windows, heads, query, key): last query, mean over heads
            weights = weights[:, :, -1, :].mean(axis=1)
        labels = []
        for i in range(panel.n_series):
            mine = origins[numbers == i]
            following = list(panel.index[mine[:-1] + 1]) if len(mine) > 1 else []
            labels += following + list(future_index(describe_index(panel.series_index(i)), 1))
        columns = [f"lag_{lag}" for lag in range(self.window, 0, -1)]
        frame = pd.DataFrame(weights, index=pd.Index(labels, name="target"), columns=columns)
        if panel.n_series > 1:
            frame.insert(0, ID_COLUMN, np.asarray(panel.ids, dtype=object)[numbers])
        return frame

    def plot(self, path, kind: str = "forecast", steps: int | None = None, series=None, level=None) -> Path:
        """Save a PNG: "forecast" (recent history and the forecast, with ``level`` intervals as a fan; a grid of
        series for a panel), "attention" (heatmap over ``series``) or "loss" (training history)."""
        from .intervals import check_levels

        from . import plots

        self._check_fitted()
        path = Path(path)
        if kind == "forecast":
            panel = self._panel_of(series)
            steps = positive_int("steps", self.horizon if steps is None else steps, 1, MAX_STEPS)
            contexts, scaler = self._contexts(panel), self._scaler_for(panel)
            forecast = self._forecast(contexts, steps, scaler, np.arange(panel.n_series))
            levels = check_levels(level)
            bounds = self._bounds(panel, contexts, forecast, scaler, levels) if levels else {}
            shown = range(min(panel.n_series, 6))
            histories = [panel.series(i) for i in shown]
            futures = [pd.Series(forecast[i], index=future_index(describe_index(panel.series_index(i)), steps))
                       for i in shown]
            fans = [{lv: (bounds[f"lo-{lv:g}"][i], bounds[f"hi-{lv:g}"][i]) for lv in levels} for i in shown] \
                if levels else None
            return plots.plot_series_forecasts(histories, futures, path,
                                               f"{self.model} forecast of the next {steps} steps", fans)
        if kind == "attention":
            weights = self.attention_weights(series)
            values = weights.drop(columns=[ID_COLUMN], errors="ignore").to_numpy()
            return plots.plot_attention_rnn(values, list(weights.index), path,
                                            f"{self.model}: attention over the window")
        if kind == "loss":
            if self.history_.empty:
                raise ConfigError(f"model {self.model!r} has no training history to plot")
            return plots.plot_loss(self.history_, path)
        raise ConfigError(f"plot kind must be forecast, attention or loss; got {kind!r}")

    # -- persistence ---------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write one file (a zip of model.keras and tsattn.json) atomically; see :meth:`load`."""
        from . import artefacts

        self._check_fitted()
        return artefacts.save(self, Path(path))

    @classmethod
    def load(cls, path) -> "Forecaster":
        """Restore a Forecaster saved by :meth:`save` or a run directory written by `tsattn fit`."""
        from . import artefacts

        return artefacts.load(cls, Path(path))


def _refit_block(shared: dict, block_start: int):
    """One backtest refit (a unit of work of any engine): fit a fresh copy on the values up to the block's first
    origin, forecast every origin of the block; -> (forecasts (block, steps), the refit's last training time)."""
    from sklearn.base import clone

    origins, every = shared["origins"], shared["every"]
    origin = origins[block_start]
    refit = clone(shared["template"]).fit(shared["series"].iloc[:origin + 1], validation=shared["validation"],
                                   epochs=shared["epochs"], seed=shared["seed"])
    block = origins[block_start:block_start + every]
    contexts = gather_windows(shared["values"], block, refit.lookback_)
    forecasts = refit._forecast(contexts, shared["horizon"], refit.scaler_, np.zeros(len(block), dtype=np.int64))
    return forecasts, refit.trained_until_

"""`tsattn.Forecaster`: a scikit-learn style estimator on pandas Series, built on the shared harness.

    f = Forecaster("attention-rnn", window=24).fit(series, seed=0)
    f.predict(12)                     # the next 12 timestamps after the series
    f.evaluate(holdout)               # one-step metrics with naive / seasonal-naive beside them
    f.backtest(series, start=0.8)     # rolling-origin historical forecasts
    f.save("model.tsattn"); Forecaster.load("model.tsattn").predict(12)
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import metrics as M
from .data import as_series, frequency_of
from .errors import ConfigError, DataError, NotFittedError
from .io import describe_index, future_index, index_from_labels, read_artefact, save_artefact
from .windows import Scaler, check_positive_int

BASELINE_MODELS = ("naive", "seasonal-naive")


def _model_names() -> list[str]:
    from .models import list_models

    return list_models() + list(BASELINE_MODELS)


class Forecaster:
    """Fit a registered model (or a baseline) on a series and forecast after it.

    Args:
        model: "simple-rnn", "attention-rnn", "transformer", "naive" or "seasonal-naive".
        window: input length of each forecast (values before the first forecast step).
        horizon: steps the model forecasts directly (direct multi-output for horizon > 1).
        **params: model parameters (e.g. ``units=64``) and run settings of :class:`tsattn.harness.RunConfig`
            (e.g. ``epochs=100``, ``batch_size=64``, ``learning_rate=3e-4``, ``scaling="standard"``,
            ``season=12``, ``fill="interpolate"``). Stored verbatim; checked in :meth:`fit`.

    Attributes set by fit (learned state ends in ``_``):
        model_ (keras.Model or None for baselines), scaler_, history_ (DataFrame), season_, config_,
        tail_ (the last values needed to forecast), index_ (how to continue the index), mase_scale_.

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
        if not hasattr(self, "tail_"):
            raise NotFittedError("this Forecaster is not fitted yet; call fit(series) first (or Forecaster.load)")

    @property
    def is_baseline(self) -> bool:
        return self.model in BASELINE_MODELS

    # -- fit -----------------------------------------------------------------------------------------
    def _config(self, validation: float, epochs: int | None, seed: int):
        from .harness import RunConfig

        if self.model not in _model_names():
            raise ConfigError(f"unknown model {self.model!r}; available: {', '.join(_model_names())}")
        if isinstance(validation, bool) or not isinstance(validation, (int, float)) or not 0 <= validation < 1:
            raise ConfigError(f"validation must be a fraction in [0, 1); got {validation!r}")
        base_model = "simple-rnn" if self.is_baseline else self.model
        settings = dict(self.params)
        if epochs is not None:
            settings["epochs"] = epochs
        config = RunConfig(model=base_model, dataset=None, window=self.window, horizon=self.horizon,
                           train_fraction=1.0 - validation, validation_fraction=validation, seed=seed)
        return config.updated(**settings)

    def fit(self, series, validation: float = 0.1, epochs: int | None = None, seed: int = 0,
            verbose: int = 0) -> "Forecaster":
        """Train on a whole series (the last ``validation`` fraction for early stopping).

        Args:
            series: pandas Series (DatetimeIndex, PeriodIndex or RangeIndex), one-column DataFrame or 1-D array.
            validation: fraction at the end used for early stopping (0 trains on everything, no early stop).
            epochs: maximum epochs (default: the harness default, 200, with early stopping).
            seed: fixes weights, batch order and dropout.
            verbose: 1 prints an epoch counter with loss and ETA.

        Returns:
            self
        """
        from .harness import EpochProgress, window_config

        config = self._config(validation, epochs, seed)
        series = as_series(series, fill=config.fill)
        data = window_config(series, config, require_test=False)  # validates window / horizon / length
        self.season_ = config.season or M.season_from_frequency(frequency_of(series))
        train_end = data.boundaries[0] if data.boundaries else len(series)
        self.mase_scale_ = M.naive_scale(series.to_numpy()[:train_end])
        self.config_ = config
        if self.is_baseline:
            self.model_, self.scaler_ = None, Scaler("none")
            self.history_ = pd.DataFrame(columns=["loss"])
        else:
            from .harness import train_model

            progress = EpochProgress(config.epochs) if verbose else None
            self.model_, self.history_, self.epochs_run_, self.best_epoch_ = train_model(data, config, progress)
            self.scaler_ = data.scaler
        self._remember_tail(series)
        return self

    def _remember_tail(self, series: pd.Series):
        self.index_ = describe_index(series.index)
        self.tail_ = series.iloc[-max(self.window, self.season_, 1):].copy()
        self.trained_until_ = series.index[-1]

    # -- forecasting core ----------------------------------------------------------------------------
    def _forecast_block(self, contexts: np.ndarray) -> np.ndarray:
        """One block of ``horizon`` forecasts for each row of contexts (k, length), series units."""
        if self.model == "naive":
            return np.repeat(contexts[:, -1:], self.horizon, axis=1)
        if self.model == "seasonal-naive":
            steps = np.arange(1, self.horizon + 1)
            lags = self.season_ * np.ceil(steps / self.season_).astype(int)
            return contexts[:, contexts.shape[1] - lags + steps - 1]
        scaled = self.scaler_.transform(contexts[:, -self.window:]).astype(np.float32)[:, :, None]
        outputs = []
        for start in range(0, len(scaled), 4096):
            # eager calls: identical results for a trained model and its reloaded copy
            outputs.append(np.asarray(self.model_(scaled[start:start + 4096], training=False), dtype=np.float64))
        return self.scaler_.inverse_transform(np.concatenate(outputs))

    def _forecast(self, contexts: np.ndarray, steps: int) -> np.ndarray:
        """(k, steps) forecasts after each context; recursive beyond ``horizon``."""
        needed = self.window if not self.is_baseline else (1 if self.model == "naive" else self.season_)
        if contexts.shape[1] < needed:
            raise DataError(f"need at least {needed} values before the first forecast; got {contexts.shape[1]}")
        forecasts = np.zeros((len(contexts), 0))
        history = contexts
        while forecasts.shape[1] < steps:
            block = self._forecast_block(history)
            forecasts = np.hstack([forecasts, block])
            history = np.hstack([history, block])
        return forecasts[:, :steps]

    def _context(self, series) -> tuple[pd.Series, dict]:
        """The values to forecast after: the fitted series' tail, or another series of the same frequency."""
        if series is None:
            return self.tail_, self.index_
        series = as_series(series, fill=self.params.get("fill"))
        description = describe_index(series.index)
        if description["kind"] != self.index_["kind"]:
            raise DataError(f"the series has a {description['kind']} index but the model was fitted on a "
                            f"{self.index_['kind']} index; pass a series indexed like the training series")
        if description["freq"] != self.index_["freq"]:
            raise DataError(f"the series has frequency {description['freq']} but the model was fitted on "
                            f"{self.index_['freq']}; resample it to {self.index_['freq']} first")
        needed = self.window if not self.is_baseline else len(self.tail_)
        if len(series) < needed:
            raise DataError(f"the series has {len(series)} values but forecasting needs the last {needed} "
                            f"(window {self.window}); pass a longer series")
        return series, description

    def predict(self, steps: int | None = None, series=None) -> pd.Series:
        """Forecast the ``steps`` values after the fitted series (or after ``series``, same frequency).

        Returns:
            A Series indexed by the next timestamps (the index's frequency) or the next integers.
        """
        self._check_fitted()
        steps = check_positive_int("steps", self.horizon if steps is None else steps)
        context, description = self._context(series)
        values = self._forecast(context.to_numpy(dtype=np.float64)[None, :], steps)[0]
        name = context.name if context.name is not None else "forecast"
        return pd.Series(values, index=future_index(description, steps), name=name)

    # -- evaluation ----------------------------------------------------------------------------------
    def _windows(self, values: np.ndarray, horizon: int):
        """Origins (last input position) of every full window + horizon inside ``values``."""
        lookback = max(self.window, 1) if not self.is_baseline else len(self.tail_)
        origins = np.arange(lookback - 1, len(values) - horizon)
        if len(origins) == 0:
            raise DataError(f"the series has {len(values)} values, too few for one window of {lookback} and "
                            f"{horizon} step(s) to forecast; pass a longer series")
        return origins, lookback

    @staticmethod
    def _contexts(values: np.ndarray, origins: np.ndarray, lookback: int) -> np.ndarray:
        """(len(origins), lookback) windows of ``values`` ending at each origin."""
        return np.lib.stride_tricks.sliding_window_view(values, lookback)[origins - lookback + 1]

    def _baseline_metrics(self, values, origins, horizon, actual) -> dict:
        naive = M.naive_forecast(values, origins, horizon)
        seasonal = M.seasonal_naive_forecast(values, origins, horizon, self.season_)
        return {"naive": M.forecast_metrics(actual, naive, self.mase_scale_),
                "seasonal_naive": M.forecast_metrics(actual, seasonal, self.mase_scale_)}

    def evaluate(self, series, horizon: int | None = None) -> dict:
        """Metrics of ``horizon``-step forecasts (default: the model's) of every target in ``series``.

        The first ``window`` values serve as inputs only; every later value is forecast from the values
        before it. The naive and seasonal-naive baselines are scored on the same targets (seasonal naive
        only where the series reaches one season back).

        Returns:
            {"model": {...}, "naive": {...}, "seasonal_naive": {...}, "count": n, "per_step": [...]}
            in series units (rmse, mae, mase, ...).
        """
        self._check_fitted()
        horizon = self.horizon if horizon is None else horizon
        series, _ = self._context(series)
        values = series.to_numpy(dtype=np.float64)
        origins, lookback = self._windows(values, horizon)
        contexts = self._contexts(values, origins, lookback)
        predicted = self._forecast(contexts, horizon)
        actual = values[origins[:, None] + np.arange(1, horizon + 1)]
        result = {"model": M.forecast_metrics(actual, predicted, self.mase_scale_),
                  **self._baseline_metrics(values, origins, horizon, actual), "count": int(len(origins))}
        if horizon > 1:
            result["per_step"] = M.per_step_metrics(actual, predicted, self.mase_scale_)
        return result

    def backtest(self, series, start=0.8, horizon: int | None = None, stride: int = 1,
                 retrain: bool | int = False, epochs: int | None = None) -> pd.DataFrame:
        """Rolling-origin historical forecasts.

        Args:
            series: the series to walk through.
            start: the first forecast origin's target: a fraction of the series (0.8), a position (int) or a
                timestamp label. Forecasts are made from origins ``start - 1, start - 1 + stride, ...``.
            horizon: steps ahead from each origin (default: the model's; longer continues recursively).
            stride: steps between origins.
            retrain: False uses the fitted model everywhere (honest only when it was fitted on data before
                ``start``: a warning says when it was not); True refits a fresh copy at every origin; an int
                k refits every k origins. A refit sees only values up to its origin (scaler included).
            epochs: maximum epochs of each refit.

        Returns:
            A DataFrame (origin, timestamp, step, actual, predicted, naive, trained_until); its
            ``attrs["metrics"]`` holds the summary (model, naive, seasonal_naive, per step).
        """
        self._check_fitted()
        horizon = check_positive_int("horizon", self.horizon if horizon is None else horizon)
        stride = check_positive_int("stride", stride)
        series, _ = self._context(series)
        values = series.to_numpy(dtype=np.float64)
        n = len(values)
        first_target = self._start_position(series, start)
        lookback = self.window if not self.is_baseline else len(self.tail_)
        if first_target < lookback:
            raise ConfigError(f"backtest start {start!r} leaves {first_target} value(s) before the first origin, "
                              f"fewer than one window ({lookback}); start later")
        origins = np.arange(first_target - 1, n - horizon, stride)
        if len(origins) == 0:
            raise ConfigError(f"backtest start {start!r} leaves no origin with {horizon} step(s) after it; start earlier")
        every = int(retrain) if not isinstance(retrain, bool) else (1 if retrain else 0)
        if isinstance(retrain, int) and not isinstance(retrain, bool) and retrain < 1:
            raise ConfigError(f"retrain must be True, False or an integer >= 1; got {retrain!r}")

        predicted = np.zeros((len(origins), horizon))
        trained_until = np.empty(len(origins), dtype=object)
        if every == 0:
            fitted_end = self.trained_until_
            if fitted_end >= series.index[origins[0]]:
                warnings.warn(f"the model was fitted on data up to {fitted_end}, after the first origin "
                              f"{series.index[origins[0]]}: these forecasts are optimistic; use retrain=True",
                              UserWarning, stacklevel=2)
            contexts = self._contexts(values, origins, lookback)
            predicted[:] = self._forecast(contexts, horizon)
            trained_until[:] = fitted_end
        else:
            from sklearn.base import clone

            validation = self.config_.validation_fraction
            for block_start in range(0, len(origins), every):
                origin = origins[block_start]
                refit = clone(self).fit(series.iloc[:origin + 1], validation=validation, epochs=epochs,
                                        seed=self.config_.seed)
                block = origins[block_start:block_start + every]
                contexts = self._contexts(values, block, lookback)
                predicted[block_start:block_start + len(block)] = refit._forecast(contexts, horizon)
                trained_until[block_start:block_start + len(block)] = refit.trained_until_
        actual = values[origins[:, None] + np.arange(1, horizon + 1)]
        naive = M.naive_forecast(values, origins, horizon)
        rows = pd.DataFrame({
            "origin": np.repeat(series.index[origins], horizon),
            "timestamp": series.index[(origins[:, None] + np.arange(1, horizon + 1)).ravel()],
            "step": np.tile(np.arange(1, horizon + 1), len(origins)),
            "actual": actual.ravel(),
            "predicted": predicted.ravel(),
            "naive": naive.ravel(),
            "trained_until": np.repeat(trained_until, horizon),
        })
        rows.attrs["metrics"] = {"model": M.forecast_metrics(actual, predicted, self.mase_scale_),
                                 **self._baseline_metrics(values, origins, horizon, actual),
                                 "origins": int(len(origins)), "retrain": every,
                                 "per_step": M.per_step_metrics(actual, predicted, self.mase_scale_)}
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
        """Attention over the window for every forecast in ``series`` (default: the last window).

        Rows: timestamp of the forecast target; columns ``lag_W .. lag_1`` (lag 1 = the most recent value).
        attention-rnn: the attention layer's weights. transformer: the last encoder block's attention of the
        last step, averaged over heads (what the last-step pooling reads).
        """
        from .models import MODELS, attention_model

        self._check_fitted()
        if self.is_baseline or MODELS[self.model].attention is None:
            raise ConfigError(f"model {self.model!r} has no attention weights; use attention-rnn or transformer")
        series, description = self._context(series)
        values = series.to_numpy(dtype=np.float64)
        origins = np.arange(self.window - 1, len(values))
        contexts = self._contexts(values, origins, self.window)
        scaled = self.scaler_.transform(contexts).astype(np.float32)[:, :, None]
        weights = attention_model(self.model_).predict(scaled, verbose=0, batch_size=1024)
        weights = np.asarray(weights[-1] if isinstance(weights, list) else weights)
        if weights.ndim == 4:  # (windows, heads, query, key): last query, mean over heads
            weights = weights[:, :, -1, :].mean(axis=1)
        labels = list(series.index[origins[:-1] + 1]) + list(future_index(description, 1))
        columns = [f"lag_{lag}" for lag in range(self.window, 0, -1)]
        return pd.DataFrame(weights, index=pd.Index(labels, name="target"), columns=columns)

    def plot(self, path, kind: str = "forecast", steps: int | None = None, series=None) -> Path:
        """Save a PNG: "forecast" (recent history and the forecast), "attention" (heatmap over ``series``)
        or "loss" (training history)."""
        from . import plots

        self._check_fitted()
        path = Path(path)
        if kind == "forecast":
            context, _ = self._context(series)
            forecast = self.predict(steps, series=series)
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(10, 4))
            x_hist, xlabel = plots._x_axis(context.index)
            x_future, _ = plots._x_axis(forecast.index)
            ax.plot(x_hist, context.to_numpy(), color="black", label="history")
            ax.plot(x_future, forecast.to_numpy(), color="tab:red", marker="o", markersize=3, label="forecast")
            ax.set_title(f"{self.model} forecast of the next {len(forecast)} steps")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"{context.name or 'value'} (series units)")
            ax.legend()
            ax.grid(alpha=0.3)
            return plots._save(fig, path)
        if kind == "attention":
            weights = self.attention_weights(series)
            return plots.plot_attention_rnn(weights.to_numpy(), list(weights.index), path,
                                            f"{self.model}: attention over the window")
        if kind == "loss":
            if self.history_.empty:
                raise ConfigError(f"model {self.model!r} has no training history to plot")
            return plots.plot_loss(self.history_, path)
        raise ConfigError(f"plot kind must be forecast, attention or loss; got {kind!r}")

    # -- persistence ---------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write one file (a zip of model.keras and tsattn.json) atomically; see :meth:`load`."""
        from .runs import forecaster_metadata

        self._check_fitted()
        params = {}
        if not self.is_baseline:
            from .models import get_spec

            params = get_spec(self.model).resolve(self.config_.model_params)
        estimator = dict(self.get_params())
        metadata = forecaster_metadata(self.model, params, self.window, self.horizon, self.scaler_, self.season_,
                                       self.tail_, self.config_.to_dict(), estimator, self.mase_scale_,
                                       self.trained_until_)
        metadata["index"] = self.index_
        return save_artefact(Path(path), self.model_, metadata)

    @classmethod
    def load(cls, path) -> "Forecaster":
        """Restore a Forecaster saved by :meth:`save` or a run directory written by `tsattn fit`."""
        from .harness import RunConfig

        model, metadata = read_artefact(Path(path))
        try:
            forecaster = cls(**metadata["estimator_params"])
            forecaster.model_ = model
            forecaster.scaler_ = Scaler.from_dict(metadata["scaler"])
            forecaster.season_ = int(metadata["season"])
            forecaster.mase_scale_ = metadata.get("mase_scale")
            forecaster.index_ = metadata["index"]
            labels = index_from_labels(metadata["tail"]["labels"], metadata["index"])
            forecaster.tail_ = pd.Series(metadata["tail"]["values"], index=labels, name=metadata.get("series_name"),
                                         dtype=np.float64)
            forecaster.trained_until_ = index_from_labels([metadata["trained_until"]], metadata["index"])[0]
            config = {k: v for k, v in metadata["config"].items() if k in RunConfig.fields()}
            forecaster.config_ = RunConfig(**config)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{path} is a damaged tsattn artefact ({type(exc).__name__}: {exc}); refit and save "
                            "again") from None
        forecaster.history_ = pd.DataFrame(columns=["loss"])
        if forecaster.mase_scale_ is not None and not math.isfinite(forecaster.mase_scale_):
            forecaster.mase_scale_ = None
        return forecaster

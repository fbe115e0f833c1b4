"""`tsattn.Forecaster`: a scikit-learn style estimator on pandas data, one series or a panel, built on the harness.

    f = Forecaster("attention-rnn", window=24).fit(series, seed=0)
    f.predict(12)                     # the next 12 timestamps after the series (a Series)
    f.evaluate(holdout)               # metrics beside naive, seasonal naive and the linear autoregression
    f.backtest(series, start=0.8)     # rolling-origin historical forecasts
    f.save("model.tsattn"); Forecaster.load("model.tsattn").predict(12)

    g = Forecaster("attention-rnn", horizon=18).fit(m3_monthly_frame)   # unique_id, ds, y: as `tsattn fit` does
    g.predict()                       # long frame: unique_id, ds, attention-rnn

A facade: ``fit`` resolves the settings as the CLI does (:mod:`tsattn.config`), fits through the one fit path
(:func:`tsattn.harness.fit_state`) and keeps the :class:`tsattn.state.FittedState` in ``state_``; forecasting,
intervals and evaluation are the state's and :mod:`tsattn.evaluation`'s. Networks and baselines go through one
interface (:mod:`tsattn.baselines`); a single series is a panel of one, and results come back in the shape the
data came in (a Series for one series, a long frame for a panel).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn.base import BaseEstimator

from .checks import MAX_STEPS, counted, few_names, positive_int
from .errors import ConfigError, DataError, NotFittedError, user_stacklevel
from .io import describe_index, future_index
from .panel import ID_COLUMN, TIME_COLUMN, VALUE_COLUMN, as_panel, future_keys
from .windows import gather_batch


class Forecaster(BaseEstimator):
    """Fit a registered model (or a baseline) on one series or a panel and forecast after each series.

    Args:
        model: a network ("simple-rnn", "attention-rnn", "transformer", "nbeats"), a baseline ("naive",
            "seasonal-naive", "linear") or a statistical method of statsforecast ("theta", "dynamic-theta", "ets";
            needs ``pip install 'tsattn[bench]'``), all through this one interface. A statistical method is local,
            as in statsforecast: it is fitted on each series' whole history before every forecast (the same
            point forecasts as ``StatsForecast(models=[Theta(season_length=...)]).forecast``); its intervals are
            conformal, calibrated on the validation part like every other model's.
        window: input length of each forecast (values before the first forecast step); None (default) chooses
            as ``tsattn fit`` does: 24, shortened so the shortest series can still be forecast and half a panel's
            series hold a training window.
        horizon: steps the model forecasts directly (direct multi-output for horizon > 1); None (default): the
            data's hold-out horizon when it has one (M3, M1 and the covariate sets, and their subsets: 18 for M3
            monthly, as `tsattn fit --dataset` and `tsattn datasets`), else 1. Once fitted, ``horizon_`` is it.
        **params: model parameters (e.g. ``units=64``) and run settings of :class:`tsattn.config.RunConfig`
            (e.g. ``epochs=100``, ``batch_size=64``, ``scaling="standard"``, ``season=12``,
            ``fill="interpolate"``, ``freq="MS"``: the frequency the data follows when you know it, as
            NeuralForecast's ``freq``; every series must lie on its grid, and it is inferred when not given).
            Stored verbatim; checked in :meth:`fit`; :meth:`set_params` refuses a key that is neither.

    Attributes set by fit (learned state ends in ``_``): state_ (the :class:`tsattn.state.FittedState`), and
    read from it: estimator_ (the fitted model behind the shared interface), model_ (its keras.Model, None
    for baselines), scaler_ (one scaler per series), history_ (DataFrame), season_, config_, tails_ (a Panel
    of the last values of each series, enough to forecast), mase_scale_ (per series), trained_until_,
    window_ (the resolved window), horizon_ (the fitted horizon), calibration_ (its interval methods, also as
    conformal_ and quantile_conformal_), epochs_run_, best_epoch_.

    Forecasts longer than ``horizon`` continue recursively: each block of ``horizon`` forecasts is
    appended to the inputs of the next block (errors then compound; the first ``horizon`` steps are the
    model's direct outputs).
    """

    def __init__(self, model: str = "attention-rnn", window: int | None = None, horizon: int | None = None,
                 **params):
        from .config import canonical

        # the peers' names (h, input_size, random_seed, season_length) under ours, as get_params shows them
        params = canonical({"window": window, "horizon": horizon, **params}, defaults={"window": None, "horizon": None})
        self.model = model
        self.window = params.pop("window")
        self.horizon = params.pop("horizon")
        self.params = params

    def __sklearn_is_fitted__(self) -> bool:  # scikit-learn's check_is_fitted
        return "state_" in self.__dict__

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.non_deterministic = False  # a seed fixes every fit
        return tags

    # -- scikit-learn protocol -----------------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict:
        return {"model": self.model, "window": self.window, "horizon": self.horizon, **self.params}

    def set_params(self, **params) -> "Forecaster":
        """Change parameters; a key that is neither a run setting nor a parameter of the model is refused (as
        scikit-learn refuses an invalid parameter)."""
        from .config import RunConfig, canonical, did_you_mean
        from .specs import MODELS

        params = canonical(params)
        model = params.get("model", self.model)
        accepted = set(RunConfig.fields()) | set(MODELS[model].params if model in MODELS else ()) | \
            {"model", "window", "horizon"}
        unknown = sorted(set(params) - accepted)
        if unknown:
            hint = did_you_mean(unknown[0], accepted)
            if hint:
                raise ConfigError(f"invalid parameter {unknown[0]!r} for Forecaster({model!r}){hint}")
            raise ConfigError(f"invalid parameter(s) {', '.join(unknown)} for Forecaster({model!r}); it takes the run "
                              f"settings and {model}'s parameters: {', '.join(sorted(accepted))}")
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
        if "state_" not in self.__dict__:
            raise NotFittedError("this Forecaster is not fitted yet; call fit(series) first (or Forecaster.load)")

    def _state(self):
        self._check_fitted()
        return self.__dict__["state_"]

    # what the fitted state holds, under scikit-learn's trailing-underscore names
    estimator_ = property(lambda self: self._state().estimator)
    model_ = property(lambda self: self._state().keras_model)
    scaler_ = property(lambda self: self._state().scaler)
    history_ = property(lambda self: self._state().history)
    season_ = property(lambda self: self._state().season)
    config_ = property(lambda self: self._state().config)
    tails_ = property(lambda self: self._state().tails)
    mase_scale_ = property(lambda self: self._state().mase_scale)
    trained_until_ = property(lambda self: self._state().trained_until)
    window_ = property(lambda self: self._state().window)
    calibration_ = property(lambda self: self._state().calibration)
    conformal_ = property(lambda self: self._state().conformal)
    quantile_conformal_ = property(lambda self: self._state().quantile_conformal)
    epochs_run_ = property(lambda self: self._state().epochs_run)
    best_epoch_ = property(lambda self: self._state().best_epoch)
    columns_ = property(lambda self: self._state().columns)
    quantiles_ = property(lambda self: self._state().quantiles)
    lookback_ = property(lambda self: self._state().lookback)
    horizon_ = property(lambda self: self._state().horizon)  # the horizon fitted for (horizon=None: the data's)
    single_ = property(lambda self: self._state().single)
    note_ = property(lambda self: self._state().note)  # what the fit did other than asked (a short series), or None
    choice_ = property(lambda self: self._state().choice)  # model "auto": the candidates' validation scores

    # -- fit -----------------------------------------------------------------------------------------
    def run_config(self, validation="auto", epochs: int | None = None, seed: int = 0):
        """The run settings of a fit (unchecked: :func:`tsattn.config.resolve` checks them once): the CLI's defaults,
        the estimator's parameters, and the validation choice as a split (its test part is dropped: a Forecaster is
        fitted on all it is given)."""
        from .config import RunConfig

        settings = dict(self.params)
        misplaced = sorted(set(settings) & _fit_arguments())
        if misplaced:
            raise ConfigError(f"{misplaced[0]} is an argument of fit(), not a setting of the Forecaster: "
                              f"Forecaster({self.model!r}, ...).fit(df, {misplaced[0]}=...)")
        if epochs is not None:
            settings["epochs"] = epochs
        if self.horizon is not None:  # None: the data's hold-out horizon (M3, M1, ...: attrs["horizon"]), else 1
            settings["horizon"] = self.horizon
        if self.window is not None:  # named only when set: a window named is kept over an automatic preset's lookback
            settings["window"] = self.window
        return RunConfig(model=self.model, dataset=None, seed=seed, **validation_split(validation)).updated(**settings)

    def fit(self, data=None, validation: float | int | str = "auto", epochs: int | None = None, seed: int = 0,
            verbose: int | None = None, id_column: str = ID_COLUMN, time_column: str = TIME_COLUMN,
            value_column: str = VALUE_COLUMN, engine=None, static_df=None, **peer) -> "Forecaster":
        """Train one global model on every series (the end of each series for early stopping and calibration).

        Args:
            data: one series (pandas Series with DatetimeIndex / PeriodIndex / RangeIndex, a one-column
                DataFrame or a 1-D array) or a panel (a long frame with ``id_column``, ``time_column``,
                ``value_column``; a dict of Series).
            validation: the end of each series used for early stopping and conformal calibration: "auto"
                (default, as `tsattn fit`: the data's competition hold-out, e.g. 18 values of each M3 monthly
                series, else the last 10%), a fraction (0.1) or a number of values (e.g. the horizon); 0 trains
                on everything (no intervals then).
            epochs: maximum epochs (default: the harness default, 200, with early stopping).
            seed: fixes weights, batch order and dropout.
            verbose: None (default) prints one line (stderr) saying what was chosen: preset, window, horizon,
                epochs; 1 adds an epoch counter with loss and ETA; 0 prints nothing.
            id_column, time_column, value_column: the long frame's columns.
            engine: where the members of an ensemble (``ensemble=k``) train: None here, or "ray" / an engine
                of :func:`tsattn.engine.get_engine` (e.g. ``get_engine("local", jobs=2)``); same weights.
            static_df: static features (``stat_exog``), one row per series: ``unique_id`` and the feature columns.
            **peer: NeuralForecast's names for the same arguments: ``df`` (data), ``val_size`` (validation, a number
                of values), ``id_col``, ``time_col``, ``target_col``, ``random_seed`` (seed).

        Covariates (NeuralForecast's names, given as parameters: ``Forecaster("attention-rnn", horizon=13,
        futr_exog=["promo"], hist_exog=["price"], stat_exog=["category"], calendar=["month"])``) are columns of the
        long frame beside the target; see :mod:`tsattn.covariates` for how every network reads them.

        Returns:
            self
        """
        from .config import params_of
        from .harness import EpochProgress, fit_all

        given = _peer_arguments("fit", peer, {"data": data, "validation": validation, "seed": seed,
                                              "id_column": id_column, "time_column": time_column,
                                              "value_column": value_column},
                                {"data": None, "validation": "auto", "seed": 0, "id_column": ID_COLUMN,
                                 "time_column": TIME_COLUMN, "value_column": VALUE_COLUMN})
        data, validation, seed = given["data"], given["validation"], given["seed"]
        id_column, time_column, value_column = given["id_column"], given["time_column"], given["value_column"]
        if data is None:
            raise ConfigError("fit needs the data: fit(frame) or fit(df=frame)")
        params_of(self.model)  # an unknown name: one line naming every model (before reading any data)
        config = self.run_config(validation, epochs, seed)
        self.__dict__["state_"] = fit_all(config, data, static=static_df, columns=(id_column, time_column, value_column),
                                          progress=EpochProgress(config.epochs) if verbose else None, engine=engine,
                                          params=self.get_params(),
                                          announce=None if verbose == 0 else _announce)
        self.__dict__["fitted_data_"] = (data, static_df)  # for predict_insample (not saved: artefacts keep tails)
        return self

    @classmethod
    def from_state(cls, state) -> "Forecaster":
        """The Forecaster of a fitted state (``tsattn fit``'s run, an artefact, a refit)."""
        forecaster = cls(**state.params)
        forecaster.__dict__["state_"] = state
        return forecaster

    def predict(self, steps: int | None = None, series=None, ids=None, level=None, futr_df=None, static_df=None,
                **peer):
        """Forecast the ``steps`` values after each fitted series (or after ``series``, same frequency).

        Args:
            steps: how many steps (default: the model's horizon).
            series: data to forecast after instead of the fitted series: one series or a panel; series
                ids never seen in fit are forecast from their own history (scaled on it).
            ids: forecast only these fitted series.
            level: interval levels in percent, e.g. ``(80, 95)``: adds ``<model>-lo-80, <model>-hi-80, ...`` columns
                (NeuralForecast's names; ``<name>-lo-80`` after the series' name for one series).
                A model trained with ``loss="quantile"`` gives its own quantiles (they must include each
                level's bounds), conformalized on its validation part; any other model split-conformal
                intervals around its forecast, calibrated on its validation part (see :mod:`tsattn.intervals`).
                Intervals reach the model's horizon.
            futr_df: the future-known covariates (``futr_exog``) of every series for each of the model's ``horizon``
                steps after its end: the id and time columns and one column per covariate
                (:meth:`make_future_dataframe` gives the skeleton); rows for other times are ignored.
            static_df: static features of series not seen in fit (fitted series keep theirs).
            **peer: NeuralForecast's and statsforecast's names: ``h`` (steps), ``df`` (series).

        Returns:
            For a model fitted on one series (and no panel passed): a Series indexed by the next timestamps
            (with ``level``: a DataFrame, the forecast then the interval columns). Otherwise a long frame
            ``unique_id, ds, <model>`` (+ the interval columns) with each series' next timestamps.
        """
        from .intervals import check_levels, interval_columns

        given = _peer_arguments("predict", peer, {"steps": steps, "series": series}, {"steps": None, "series": None})
        steps, series = given["steps"], given["series"]
        state = self._state()
        steps = positive_int("steps", state.horizon if steps is None else steps, 1, MAX_STEPS)
        state.check_steps(steps)  # before asking for future values it could not use
        levels = check_levels(level)
        panel = state.panel_of(series, ids, static=static_df)
        labels = [future_index(describe_index(panel.series_index(i)), steps) for i in range(panel.n_series)]
        future = self._future_values(panel, futr_df)
        contexts = state.contexts(panel, future)  # the labels first: timestamps pandas cannot hold are refused first
        scaler = state.scaler_for(panel)
        values = state.forecast(contexts, steps, scaler, np.arange(panel.n_series))
        bounds = state.bounds(panel, contexts, values, scaler, levels, fitted=series is None) if levels else {}
        if state.one_series(panel, series):
            name = panel.name if panel.name is not None else "forecast"
            if not levels:
                return pd.Series(values[0], index=labels[0], name=name)
            return pd.DataFrame({name: values[0], **{named: bounds[column][0] for column, named in
                                                     zip(interval_columns(levels), interval_columns(levels, name))}},
                                index=labels[0])
        id_column, time_column, _ = state.columns
        stamps = labels[0].append(labels[1:]) if len(labels) > 1 else labels[0]
        return pd.DataFrame({id_column: np.repeat(np.asarray(panel.ids, dtype=object), steps),
                             time_column: np.asarray(stamps) if panel.index_kind == "range" else stamps,
                             self.model: values.ravel(),
                             **{named: bounds[column].ravel() for column, named in
                                zip(interval_columns(levels), interval_columns(levels, self.model))}})

    def long_backtest(self, table: pd.DataFrame, series=None) -> pd.DataFrame:
        """A table of :meth:`backtest` as a panel's: one series' rows (``origin``, ``step``, ...) get the id column
        first, the series' id (``series`` as given to backtest), as :meth:`long_forecast` names a forecast; a panel's
        table is returned as it is. What `tsattn backtest` writes to backtest.csv."""
        from .backtesting import BACKTEST_COLUMNS

        if table.columns[0] != "origin":
            return table  # a panel's already: its id column first
        rows = table.copy()
        rows.insert(0, self._state().key_columns(BACKTEST_COLUMNS)[0], self._state().panel_of(series).ids[0])
        return rows

    def long_forecast(self, forecast, series=None) -> pd.DataFrame:
        """A forecast of :meth:`predict` as a panel's long frame: the id and time columns, then the model's column
        and its interval columns (``<model>-lo-80`` ...). One series' forecast (a Series, or with ``level`` a frame
        indexed by time) becomes a panel of one, its id the series' (``series`` as given to predict: the fitted one by
        default), as a run's predictions.csv names it: what `tsattn predict` writes to forecast.csv and :meth:`plot`
        draws."""
        if isinstance(forecast, pd.DataFrame) and list(forecast.columns[2:3]) == [self.model]:
            return forecast  # a panel's already: id, time, model (+ intervals)
        table = forecast.to_frame() if isinstance(forecast, pd.Series) else forecast
        name = str(table.columns[0])
        table = table.rename(columns=lambda c: self.model + str(c)[len(name):])  # the series' name -> the model's
        id_column, time_column = self._state().key_columns(table.columns)
        table = table.rename_axis(time_column).reset_index()
        table.insert(0, id_column, self._state().panel_of(series).ids[0])
        return table

    def predict_insample(self, step_size: int = 1, df=None, static_df=None) -> pd.DataFrame:
        """In-sample forecasts over the data the model was fitted on (NeuralForecast's ``predict_insample``; what
        statsforecast calls fitted values): every window of each fitted series, ``step_size`` values apart and
        ending at its last value, forecast ``horizon`` steps ahead by the fitted model (no refits), beside the
        values that followed.

        These forecasts are of values the model trained on (or was validated on): they show how it fits, not how
        it forecasts; use :meth:`cross_validation` for that.

        Args:
            step_size: values between successive windows' ends (NeuralForecast's default, 1: every window).
            df, static_df: the data the model was fitted on; by default the data given to :meth:`fit` (a loaded
                model keeps only the end of each series, so it needs ``df``).

        Returns:
            A long frame ``unique_id, ds, cutoff, y, <model>``: ``cutoff`` is each window's last time, ``ds`` the
            time forecast, ``y`` the value there.
        """
        from .evaluation import origins_in

        state = self._state()
        step = positive_int("step_size", step_size, 1, 1_000_000)
        if df is None:
            if "fitted_data_" not in self.__dict__:
                raise ConfigError("this model was loaded (it keeps only the end of each series): pass the data it was "
                                  "fitted on, predict_insample(df=frame)")
            df, static_df = self.__dict__["fitted_data_"]
        panel = state.panel_of(df, static=static_df)
        horizon = state.horizon
        origins = origins_in(panel, state.lookback, horizon)
        series = panel.series_of(origins)
        last = panel.offsets[series + 1] - 1 - horizon  # each series' last origin: the windows end there
        origins = origins[(last - origins) % step == 0]
        series = panel.series_of(origins)
        first = panel.offsets[series]
        if state.covariates is not None and state.covariates.layout.futr:  # a window's future-known values are
            ahead = origins + horizon < panel.offsets[series + 1]  # in the data for every in-sample origin
            origins, series, first = origins[ahead], series[ahead], first[ahead]
        scaler = state.scaler_for(panel)
        source = state.source_of(panel)
        predicted = state.forecast(state.windows(source, origins, first), horizon, scaler, series)
        targets = origins[:, None] + np.arange(1, horizon + 1)
        id_column, time_column, value_column = state.columns
        index = panel.index
        stamps = index[targets.ravel()]
        return pd.DataFrame({id_column: np.repeat(np.asarray(panel.ids, dtype=object)[series], horizon),
                             time_column: np.asarray(stamps) if panel.index_kind == "range" else stamps,
                             "cutoff": np.repeat(np.asarray(index[origins]), horizon),
                             value_column: panel.values[targets.ravel()], self.model: predicted.ravel()})

    # -- covariates ----------------------------------------------------------------------------------
    def make_future_dataframe(self, h: int | None = None, series=None, **peer) -> pd.DataFrame:
        """The skeleton of the future frame ``predict`` takes: the id and time columns for the next ``h`` steps
        (default: the model's horizon) of every fitted series (or of ``series``, NeuralForecast's ``df``), as
        NeuralForecast's ``make_future_dataframe``; add the future-known covariate columns to it."""
        series = _peer_arguments("make_future_dataframe", peer, {"series": series}, {"series": None})["series"]
        state = self._state()
        h = positive_int("h", state.horizon if h is None else h, 1, MAX_STEPS)
        panel = state.panel_of(series, with_static=False)  # ids and times: no static features needed
        id_column, time_column, _ = state.columns
        labels = [future_index(describe_index(panel.series_index(i)), h) for i in range(panel.n_series)]
        stamps = labels[0].append(labels[1:]) if len(labels) > 1 else labels[0]
        return pd.DataFrame({id_column: np.repeat(np.asarray(panel.ids, dtype=object), h),
                             time_column: np.asarray(stamps) if panel.index_kind == "range" else stamps})

    def get_missing_future(self, futr_df, series=None, **peer) -> pd.DataFrame:
        """The (id, time) rows of :meth:`make_future_dataframe` that ``futr_df`` lacks (empty when it covers them);
        ``series`` (NeuralForecast's ``df``): as in :meth:`predict`."""
        series = _peer_arguments("get_missing_future", peer, {"series": series}, {"series": None})["series"]
        state = self._state()
        id_column, time_column, _ = state.columns
        expected = self.make_future_dataframe(series=series)
        given = future_keys(futr_df, id_column, time_column, pd.Index(expected[time_column]))
        keys = pd.MultiIndex.from_arrays([expected[id_column].astype(str), expected[time_column]])
        return expected[~keys.isin(given)].reset_index(drop=True)

    def _future_values(self, panel, futr_df):
        """(n_series, horizon, futr columns) future-known values after each series of ``panel``, read from
        ``futr_df``; None when the model takes none (a futr_df is then refused, never ignored, unless the fit was asked
        for them and its note says the baseline a short series fell back to does not read them)."""
        state = self._state()
        covariates = state.covariates
        names = covariates.futr if covariates is not None else ()
        if not names:
            asked = state.params.get("futr_exog") or state.params.get("calendar")
            if futr_df is not None and not (state.note and asked):
                # (asked for at fit but not read by the baseline a short series fell back to: the fit's note said so)
                raise ConfigError("this model takes no future-known covariates (futr_exog), so futr_df is not used; drop "
                                  "it, or fit with futr_exog=[...] naming its columns")
            return None
        if futr_df is None:
            raise ConfigError(f"this model reads future-known covariates ({', '.join(names)}): pass futr_df with their "
                              f"values for the next {state.horizon} steps of every series (make_future_dataframe() "
                              "builds the id and time columns)")
        if not isinstance(futr_df, pd.DataFrame):
            raise ConfigError(f"futr_df must be a DataFrame with the id, time and {', '.join(names)} columns; got "
                              f"{type(futr_df).__name__}")
        from .panel import check_unique_columns, future_values

        check_unique_columns(futr_df, "futr_df")
        id_column, time_column, _ = state.columns
        return future_values(futr_df, panel, names, state.horizon, id_column, time_column)

    # -- evaluation ----------------------------------------------------------------------------------
    def evaluate(self, series, steps: int | None = None, static_df=None) -> dict:
        """Metrics of ``steps``-step forecasts (default: the model's) of every target in ``series``.

        The first ``window`` values of each series serve as inputs only; every later value is forecast
        from the values before it. The model's baselines are scored on the same targets: naive, seasonal naive
        (only where the series reaches one season back), the linear autoregression fitted with the model (at its
        horizon) and the statistical methods asked for (``baselines=[...]``), as `tsattn fit` scores them. For a
        panel the figures are means
        over series and ``by_series`` holds the tidy per-series frame. ``static_df``: static features of series not
        seen in fit (fitted series keep theirs), as in :meth:`predict`.

        Returns:
            {"model": {...}, "naive": {...}, "seasonal_naive": {...}, "linear": {...}, "count": n, "per_step": [...]}
            in series units (rmse, mae, mase, ...).
        """
        from .evaluation import origins_in, score_origins, summarise

        state = self._state()
        horizon = positive_int("steps", state.horizon if steps is None else steps, 1, MAX_STEPS)
        panel = state.panel_of(series, static=static_df)
        origins = origins_in(panel, state.lookback, horizon)
        summary = summarise(panel, score_origins(state, panel, origins, horizon), horizon)
        left = summary.get("series_not_scored")
        if left:
            warnings.warn(f"{len(left)} of {panel.n_series} series have fewer than the {state.lookback + horizon} "
                          f"values one window of {state.lookback} and {horizon} step(s) needs, so they are not "
                          f"scored ({few_names(left)}); the figures are means over the others", UserWarning,
                          stacklevel=user_stacklevel())
        return summary

    def cross_validation(self, df, h: int | None = None, n_windows: int = 1, step_size: int | None = None,
                         refit: bool = True, level=None, validation: float | int | str = "auto",
                         epochs: int | None = None, seed: int = 0, id_column: str | None = None,
                         time_column: str | None = None, value_column: str | None = None,
                         static_df=None, verbose: int | None = None, **peer) -> pd.DataFrame:
        """NeuralForecast's and statsforecast's cross-validation of this Forecaster (it is not changed): see
        :func:`tsattn.backtesting.cross_validation`, which takes the same arguments (and the peers' ``id_col``,
        ``time_col``, ``target_col``, ``val_size``, ``random_seed``)."""
        from .backtesting import cross_validation

        given = _peer_arguments("cross_validation", peer,
                                {"validation": validation, "seed": seed, "id_column": id_column,
                                 "time_column": time_column, "value_column": value_column},
                                {"validation": "auto", "seed": 0, "id_column": None, "time_column": None,
                                 "value_column": None})
        validation, seed = given["validation"], given["seed"]
        id_column, time_column, value_column = given["id_column"], given["time_column"], given["value_column"]

        return cross_validation(self, df, h, n_windows, step_size, refit, level, validation, epochs, seed, id_column,
                                time_column, value_column, static_df, verbose)

    def backtest(self, series, start=0.8, steps: int | None = None, stride: int = 1,
                 retrain: bool | int = False, epochs: int | None = None, engine: str = "local", jobs: int = 1,
                 address: str | None = None, cpus_per_run: int = 1, echo=None, static_df=None) -> pd.DataFrame:
        """Rolling-origin historical forecasts of this fitted Forecaster (per series for a panel): see
        :func:`tsattn.backtesting.backtest`, which takes the same arguments."""
        from .backtesting import backtest

        return backtest(self, series, start, steps, stride, retrain, epochs, engine, jobs, address, cpus_per_run,
                        echo, static_df)

    # -- attention -----------------------------------------------------------------------------------
    def _windows(self, series, what: str, static=None) -> tuple:
        """The input windows read by :meth:`attention_weights` and :meth:`variable_importance`: (panel, numbers
        (each window's series), network input, labels (each window's forecast target)); the window after each
        fitted series by default, every window of ``series`` otherwise."""
        state = self._state()
        window = state.window
        panel = state.panel_of(series, static=static)
        # with future-known covariates a window needs the values of its forecast steps: the last window whose
        # future is in the data (the window after each series needs predict's futr_df)
        ahead = state.horizon if state.covariates is not None and state.covariates.layout.futr else 0
        if series is None:  # the window after each fitted series
            origins = panel.offsets[1:] - 1 - ahead
        else:
            origins = np.concatenate([np.arange(panel.offsets[i] + window - 1, panel.offsets[i + 1] - ahead)
                                      for i in range(panel.n_series)])
        short = np.flatnonzero(panel.lengths < window + ahead)
        if len(short):
            which = "the series" if panel.n_series == 1 else f"series {panel.ids[short[0]]!r}"
            raise DataError(f"{which} has {int(panel.lengths[short[0]])} values, fewer than the window ({window}) the "
                            f"{what} is over" + (f" and the {ahead} future steps it reads" if ahead else "") +
                            "; pass a longer series")
        numbers = panel.series_of(origins)
        scaler = state.scaler_for(panel)
        batch = gather_batch(state.source_of(panel), origins - window + 1, window, series=numbers, scaler=scaler,
                             with_target=False, layout=getattr(state.estimator, "layout", None))
        labels = []
        for i in range(panel.n_series):
            mine = origins[numbers == i]
            inside = mine[mine + 1 < panel.offsets[i + 1]]  # the target of each window: in the data, or the next step
            labels += list(panel.index[inside + 1])
            if len(inside) < len(mine):
                labels += list(future_index(describe_index(panel.series_index(i)), 1))
        return panel, numbers, batch.network_input(), labels

    def attention_weights(self, series=None, by: str = "lag", static_df=None) -> pd.DataFrame:
        """Attention over the window for every forecast in ``series`` (default: the last window of each series).

        Rows: timestamp of the forecast target (a panel, or a long frame of one series, adds its id column); columns
        ``lag_W .. lag_1`` (lag 1 = the most recent value). attention-rnn: the attention layer's weights.
        transformer: the last encoder block's attention of the last step, averaged over heads (what the
        last-step pooling reads). patch-transformer: the attention each patch receives in the last block (mean
        over heads and attending patches), shared evenly by the steps of the patch; with ``by="patch"`` the
        patches' own weights, columns ``patch_1 ..`` (oldest first; ``attrs["lags"]`` names each one's lags).
        tft: the forecast steps' attention over the window (mean over heads, which share their values, and over
        the forecast steps), as a share of the weight on the window; with ``by="step"`` every forecast step's
        weights over the window and the forecast steps before it: a ``step`` column (1 .. horizon), then
        ``lag_W .. lag_1`` and ``ahead_1 .. ahead_H`` (weight on forecast step j; 0 after the row's own step),
        each row summing to 1. ``static_df``: static features of series not seen in fit, as in :meth:`predict`.
        """
        from .models import (attention_per_lag, attention_per_patch, attention_per_step, fusion_layer, patches_layer,
                             read_attention)

        state = self._state()
        window = state.window
        if not state.estimator.capabilities.attention:
            raise ConfigError(f"model {self.model!r} has no attention weights; use attention-rnn, transformer, "
                              "patch-transformer or tft")
        patches = patches_layer(state.keras_model)
        fusion = fusion_layer(state.keras_model) is not None
        accepted = ("lag", "patch") if patches is not None else ("lag", "step") if fusion else ("lag",)
        if by not in accepted:
            raise ConfigError(f"by must be {' or '.join(repr(a) for a in accepted)} for {self.model}; got {by!r}" +
                              ("" if len(accepted) > 1 else " (per-patch weights: patch-transformer; per-step "
                                                            "weights: tft)"))
        panel, numbers, inputs, labels = self._windows(series, "attention", static_df)
        read = read_attention(state.keras_model, inputs)
        if by == "step":
            steps = attention_per_step(read)  # (windows, horizon, window + horizon)
            horizon = steps.shape[1]
            columns = [f"lag_{lag}" for lag in range(window, 0, -1)] + [f"ahead_{j}" for j in range(1, horizon + 1)]
            frame = pd.DataFrame(steps.reshape(-1, steps.shape[2]), columns=columns,
                                 index=pd.Index(np.repeat(np.asarray(labels, dtype=object), horizon), name="target"))
            frame.insert(0, "step", np.tile(np.arange(1, horizon + 1), len(labels)))
            if not state.one_series(panel, series):
                frame.insert(0, state.key_columns(frame.columns)[0],
                             np.repeat(np.asarray(panel.ids, dtype=object)[numbers], horizon))
            return frame
        weights = attention_per_patch(read) if by == "patch" else attention_per_lag(read, state.keras_model)
        columns = [f"lag_{lag}" for lag in range(window, 0, -1)] if by == "lag" else \
            [f"patch_{k}" for k in range(1, weights.shape[1] + 1)]
        frame = pd.DataFrame(weights, index=pd.Index(labels, name="target"), columns=columns)
        if by == "patch":  # patch k covers these lags (lag 1 = the most recent value)
            frame.attrs["lags"] = {f"patch_{k + 1}": [int(window - step) for step in steps]
                                   for k, steps in enumerate(patches.indices)}
        if not state.one_series(panel, series):  # named as the data's id column, as predict names it
            frame.insert(0, state.key_columns(frame.columns)[0], np.asarray(panel.ids, dtype=object)[numbers])
        return frame

    def variable_importance(self, series=None, static_df=None) -> pd.DataFrame:
        """tft's variable importance: which input mattered, as a tidy frame with columns ``part``, ``variable`` and
        ``importance`` over the windows of ``series`` (default the last window of each fitted series), most important
        first within each part, each part summing to 1 (:func:`tsattn.models.variable_importance`).

        Part "model": each input's share of the whole forecast (its exact term through the linear skip path plus the
        network's remainder split by its selection weight): what the forecast took from it. Parts "past" (the
        target, past-observed and future-known values at the window's steps and the time index), "future" (the
        future-known values at the forecast steps) and "static": the mean selection weight of each variable, what the
        network beside the linear path weighed. For any model, :meth:`covariate_importance` measures the same question
        by shuffling each covariate. ``static_df``: static features of series not seen in fit, as in :meth:`predict`."""
        from .models import fusion_layer, selection_names, variable_importance

        state = self._state()
        if fusion_layer(state.keras_model) is None:
            raise ConfigError(f"model {self.model!r} has no variable selection; variable importance is tft's "
                              "(Forecaster(\"tft\", ...)); covariate_importance() reads any model")
        _, _, inputs, _ = self._windows(series, "variable selection", static_df)
        layout = getattr(state.estimator, "layout", None) or (0, 0, 0)
        return variable_importance(state.keras_model, inputs, selection_names(layout, state.covariates))

    def covariate_importance(self, df=None, static_df=None, repeats: int = 5, seed: int = 0,
                             metric: str | None = None) -> pd.DataFrame:
        """Which covariate the forecasts depend on, for any model fitted with covariates: permutation importance.

        Every forecast of ``df`` (each window followed by a full horizon of targets, as :meth:`evaluate` scores
        them) is made again with one covariate shuffled (a dynamic one over the steps they read, a static one
        across series), ``repeats`` times; the importance is how much ``metric`` rises, as a share of its value
        with the covariates intact (0.25: 25% worse without that covariate's information; about 0: the forecasts do
        not use it). A reading of the model, not of the world: on data the model was not trained on (pass a
        hold-out with the window before it) it says what generalises; on the training data, what it learnt.

        Args:
            df: data with the covariate columns (and, for a future-known one, its values at every target); by
                default the data given to :meth:`fit`.
            static_df: the static features of series not seen in fit.
            repeats: shuffles per covariate (``std`` is over them).
            seed: the shuffles' seed.
            metric: "mae", "rmse", "smape" or "mase"; default the headline metric (RMSE for one series, sMAPE
                for a panel, MASE for a panel with values of 0 or below).

        Returns:
            A frame with columns ``variable``, ``kind`` ("hist_exog", "futr_exog" or "stat_exog"), ``importance``
            and ``std``, most important first; ``attrs``: ``metric`` and ``baseline`` (its value unshuffled). A
            static covariate of a single series cannot be shuffled: NaN.
        """
        from .evaluation import has_covariates, origins_in, permutation_importance
        from .metrics import headline_metric

        state = self._state()
        if not has_covariates(state):
            raise ConfigError(f"model {self.model!r} was fitted without covariates; covariate importance needs "
                              "hist_exog, futr_exog or stat_exog (calendar features are generated, not shuffled)")
        repeats = positive_int("repeats", repeats, 1, 1000)
        if df is None:
            if "fitted_data_" not in self.__dict__:
                raise ConfigError("covariate_importance needs df: a loaded model keeps only the tails of its data")
            df, fitted_static = self.__dict__["fitted_data_"]
            static_df = fitted_static if static_df is None else static_df
        panel = state.panel_of(df, static=static_df)
        metric = headline_metric(panel.n_series, panel.values, panel.offsets) if metric is None else metric
        origins = origins_in(panel, state.lookback, state.horizon)
        return permutation_importance(state, panel, origins, metric, repeats, seed)

    def plot(self, path=None, kind: str = "forecast", steps: int | None = None, series=None, level=None,
             ids=None, actuals=None, max_insample_length: int | None = None, max_ids: int = 4, futr_df=None):
        """A matplotlib Figure (written as a PNG too when ``path`` is given).

        Args:
            path: also save the figure there (PNG).
            kind: "forecast" (history, the forecast and, with ``level``, its intervals as a fan, one panel per
                series: :func:`tsattn.plot_series`), "attention" (heatmap over ``series``), "importance" (tft: its
                variable selection weights, :meth:`variable_importance`; any other model fitted with covariates:
                :meth:`covariate_importance` of ``series``, default the data given to fit) or "loss" (training
                history).
            steps, series, level, futr_df: as in :meth:`predict`.
            ids: the series to draw (default: the first ``max_ids``).
            actuals: the actual values (a long frame, or one series), drawn behind the forecast: what came after
                the history, and the history itself (the fitted state keeps only each series' last values).
            max_insample_length: at most this many values of history (default: four horizons, at least 48).
        """
        from . import plots

        state = self._state()
        if kind == "forecast":
            forecast = self.predict(steps, series=series, ids=ids, level=level, futr_df=futr_df)
            history = state.panel_of(series, ids).to_frame(*state.columns)
            id_column, time_column, value_column = state.columns
            if actuals is not None:
                after = as_panel(actuals, *state.columns, fill=state.config.fill).to_frame(*state.columns)
                if state.single and history[id_column].nunique() == 1:  # one series: the actuals are its own
                    after[id_column] = history[id_column].iloc[0]
                history = pd.concat([history.astype({id_column: object}), after.astype({id_column: object})],
                                    ignore_index=True)  # the actuals' history too (the state keeps only tails)
                history = history.drop_duplicates([id_column, time_column], keep="first")
            forecast = self.long_forecast(forecast, series)  # one series' forecast too: a panel of one
            if max_insample_length is None:
                max_insample_length = max(48, 4 * forecast.groupby(id_column, observed=True).size().max())
            steps_shown = len(forecast) // max(forecast[id_column].nunique(), 1)
            figure = plots.plot_series(history, forecast, ids=ids, max_ids=max_ids, max_insample_length=max_insample_length,
                                       id_col=id_column, time_col=time_column, target_col=value_column,
                                       title=f"{self.model}: forecast of the next {counted(steps_shown, 'step')}")
        elif kind == "attention":
            weights = self.attention_weights(series)
            id_name = weights.columns[0] if not str(weights.columns[0]).startswith("lag_") else None  # a panel's
            values = weights.drop(columns=[id_name] if id_name else []).to_numpy()
            labels = list(weights.index) if id_name is None else \
                [f"{sid} {plots.time_label(label)}" for sid, label in zip(weights[id_name], weights.index)]
            figure = plots.attention_figure(values, labels, f"{self.model}: attention over the window")
        elif kind == "importance":
            from .models import fusion_layer

            if fusion_layer(state.keras_model) is not None:  # tft: what its variable selection networks weighed
                figure = plots.importance_figure(self.variable_importance(series), f"{self.model}: variable importance")
            else:  # any other model with covariates: each shuffled in turn (the figure `tsattn fit` writes)
                figure = plots.permutation_figure(self.covariate_importance(series), self.model)
        elif kind == "loss":
            if not state.estimator.capabilities.trained:
                raise ConfigError(f"model {self.model!r} has no training history to plot")
            figure = plots.loss_figure(self.history_, loss=state.config.loss)
        else:
            raise ConfigError(f"plot kind must be forecast, attention, importance or loss; got {kind!r}")
        if path is not None:
            plots.save_figure(figure, Path(path))
        return figure

    # -- persistence ---------------------------------------------------------------------------------
    def save(self, path, overwrite: bool = False) -> Path:
        """Write one file (a zip of model.keras and tsattn.json) atomically; see :meth:`load`. An existing file is
        refused unless ``overwrite=True``, and even then only a tsattn artefact is replaced (the CLI's --out rule)."""
        from . import artefacts

        return artefacts.save(self._state(), Path(path), force=overwrite)

    @classmethod
    def load(cls, path) -> "Forecaster":
        """Restore a Forecaster saved by :meth:`save` or a run directory written by `tsattn fit`."""
        from . import artefacts

        return cls.from_state(artefacts.load(Path(path)))


def _fit_arguments() -> set[str]:
    """fit()'s own arguments that are not run settings (verbose, validation, static_df, ...), which a user may put
    beside the settings by mistake (the fit line says fit(verbose=0) silences it)."""
    import inspect

    from .config import RunConfig

    return set(inspect.signature(Forecaster.fit).parameters) - {"self", "data", "peer"} - set(RunConfig.fields())


def _announce(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


PEER_ARGUMENTS = {"fit": {"df": "data", "val_size": "validation", "id_col": "id_column", "time_col": "time_column",
                          "target_col": "value_column", "random_seed": "seed"},
                  "predict": {"h": "steps", "df": "series"},
                  "make_future_dataframe": {"df": "series"}, "get_missing_future": {"df": "series"},
                  "cross_validation": {"val_size": "validation", "id_col": "id_column", "time_col": "time_column",
                                       "target_col": "value_column", "random_seed": "seed"}}


def _peer_arguments(method: str, peer: dict, given: dict, defaults: dict) -> dict:
    """``given`` (a method's arguments by our names) with the peers' names in ``peer`` moved under ours
    (:data:`PEER_ARGUMENTS`); a name given twice, or one that is neither, is refused in one line."""
    from .config import did_you_mean

    names = PEER_ARGUMENTS[method]
    out = dict(given)
    for key, value in peer.items():
        if key not in names:
            hint = did_you_mean(key, [*given, *names])
            raise ConfigError(f"{method}() got an unexpected argument {key!r}{hint or ''}"
                              + ("" if hint else f"; it takes {', '.join([*given, *names])} and the ones listed in "
                                                 f"help(Forecaster.{method})"))
        ours = names[key]
        default = defaults[ours]
        unchanged = out[ours] is None if default is None else \
            (type(out[ours]) is type(default) and out[ours] == default)
        if not unchanged and out[ours] is not value:
            raise ConfigError(f"{key}= and {ours}= name the same argument of {method}(); give one")
        out[ours] = value
    return out


def validation_split(validation) -> dict:
    """The split settings of :meth:`Forecaster.fit`'s ``validation`` argument: "auto" (the data's hold-out, else the
    last 10%), a number of values >= 1 at the end of each series, or a fraction in [0, 1)."""
    number = isinstance(validation, (int, float, np.integer, np.floating)) and not isinstance(validation, bool)
    if isinstance(validation, str) and validation == "auto":
        return {}  # as `tsattn fit`: the data's hold-out (M3, M1: its horizon) or the last 10% of each series
    if number and float(validation).is_integer() and validation >= 1:
        return {"split": "holdout", "holdout": int(validation)}
    if number and 0 <= validation < 1:
        return {"split": "chronological", "validation_fraction": float(validation)}
    raise ConfigError(f"validation must be \"auto\", a fraction in [0, 1) or a number of values >= 1 at the end of "
                      f"each series; got {validation!r}")

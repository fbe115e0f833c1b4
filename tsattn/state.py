"""The fitted state: what one fit produces, whichever path asked for it, and how it forecasts.

:func:`tsattn.harness.fit_state` returns a :class:`FittedState` for ``tsattn fit``, ``tsattn.Forecaster``,
compare, backtest refits and the benchmarks alike; :mod:`tsattn.artefacts` writes and reads it; the
Forecaster is a facade over it. A state knows its model (network or baseline, behind
:class:`tsattn.baselines.WindowModel`), the per-series scalers and scales, the conformal calibration and the
last values of every series, so it can forecast after the fitted series or after new ones:

    contexts = state.contexts(panel)                       # (n_series, lookback) last values
    point = state.forecast(contexts, 12, state.scaler_for(panel), np.arange(panel.n_series))
    bounds = state.bounds(panel, contexts, point, state.scaler_for(panel), levels=(80,))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import metrics as M
from .baselines import WindowModel, gather_windows
from .errors import ConfigError, DataError, MissingColumnError, user_stacklevel
from .intervals import floored
from .panel import ID_COLUMN, TIME_COLUMN, VALUE_COLUMN, Panel, as_panel
from .windows import Scaler

UNCALIBRATED = "none left to calibrate intervals"  # the end of a short series' fallback note that kept no validation


@dataclass
class FittedState:
    """Everything a fitted model needs to forecast again, and nothing about how it was asked for.

    Attributes:
        config: the resolved run settings (:class:`tsattn.config.RunConfig`).
        estimator: the fitted model behind the shared interface (a network's :class:`NetworkModel` or a baseline).
        window, horizon: the resolved input window and the steps forecast directly.
        scaler: one scaler per fitted series (identity for baselines that read raw values).
        season: the season length used by seasonal naive and MASE.
        mase_scale: per fitted series, the in-sample seasonal-naive MAE over the values fit saw.
        tails: the last values of each series (a Panel), enough to forecast after it.
        trained_until: the last label whose value training or model selection used.
        history: the training history (an empty frame for baselines).
        calibration: the :class:`tsattn.intervals.Calibration` on the validation part (None without one); its
            methods read as ``conformal`` and ``quantile_conformal``.
        columns: the long frame's id, time and value column names.
        params: the facade's parameters (what ``Forecaster.get_params`` gave; recreates the estimator).
        covariates: the fitted :class:`tsattn.covariates.Covariates` (None without covariates).
        note: one line on what the fit did other than asked (a single series too short for the model forecast by
            a baseline, :func:`tsattn.selection.short_series_fallback`); None otherwise.
        choice: with ``model="auto"``, the candidates' validation scores and which was chosen
            (:mod:`tsattn.selection`); None otherwise.
        selection: after the final fit (``final_fit``), the model and baselines fitted on the training part only
            (they chose the epochs and calibrated the intervals); the validation part is scored with them.
        baselines: the fitted baselines scored beside the model wherever it is scored (naive, seasonal naive, the
            linear autoregression fitted on the same training windows, and the statistical methods asked for);
            empty in artefacts saved before the state kept them, which are scored beside naive and seasonal naive.
    """

    config: Any
    estimator: WindowModel
    window: int
    horizon: int
    scaler: Scaler
    season: int
    mase_scale: np.ndarray
    tails: Panel
    trained_until: Any
    history: pd.DataFrame
    calibration: Any = None
    columns: tuple = (ID_COLUMN, TIME_COLUMN, VALUE_COLUMN)
    params: dict = field(default_factory=dict)
    epochs_run: int | None = None
    best_epoch: int | None = None
    fit_seconds: float = 0.0
    covariates: Any = None
    baselines: list = field(default_factory=list)
    choice: Any = None  # model "auto": every candidate's validation score, the chosen one marked (a DataFrame)
    note: str | None = None  # what the fit did other than asked (one short series forecast by a baseline), said
    end_scale: np.ndarray | None = None  # per fitted series: the seasonal-naive MAE over every value fit saw (the
                                         # "expanding" interval scale at the end, which the tails alone cannot give)
    end_deviation: np.ndarray | None = None  # (fitted series, horizon), with interval_scale "ets": AutoETS's forecast
                                             # deviation after every value fit saw (the tails alone cannot give it)
    floor: float | None = None  # forecasts and intervals are raised to it: 0 where every value fit saw was >= 0 (with
                                # clip_intervals), else None (tsattn.intervals.floored)
    selection: tuple | None = None  # after a final fit: (estimator, baselines) fitted on the training part only, which
                                    # chose the epochs and calibrated the intervals; scored on the validation part in
                                    # the final model's place (it never trained there). Not saved in artefacts.

    # -- what it is --------------------------------------------------------------------------------------
    @property
    def conformal(self):
        """The split-conformal calibration of the point forecasts (:class:`tsattn.intervals.Conformal`), or None."""
        return None if self.calibration is None else self.calibration.get("conformal")

    @property
    def quantile_conformal(self):
        """A quantile model's conformalized-quantile calibration (:class:`tsattn.intervals.QuantileConformal`), or
        None."""
        return None if self.calibration is None else self.calibration.get("quantile_conformal")

    @property
    def keras_model(self):
        """The trained keras.Model of a network, None for a baseline."""
        return getattr(self.estimator, "model", None)

    @property
    def name(self) -> str:
        return self.params.get("model", self.config.model)

    @property
    def quantiles(self):
        """The quantiles a ``loss="quantile"`` model outputs, or None."""
        return getattr(self.estimator, "quantiles", None)

    @property
    def single(self) -> bool:
        return bool(self.tails.single_input)

    @property
    def lookback(self) -> int:
        """Values needed before a forecast: the window (a baseline reads fewer but is scored on the same
        targets as a network of that window) or the model's own lookback (the season), whichever is longer."""
        return max(self.window, self.estimator.lookback)

    def frame_columns(self, data) -> tuple:
        """The id, time and value columns ``data`` is read by: the ones this model was fitted on, or Nixtla's
        ``unique_id, ds, y`` for a frame that has those and not these (a Nixtla frame given to a model fitted on
        other names)."""
        columns = tuple(self.columns)
        if isinstance(data, pd.DataFrame) and data.shape[1] > 1 and not set(columns) <= set(map(str, data.columns)) \
                and {ID_COLUMN, TIME_COLUMN, VALUE_COLUMN} <= set(map(str, data.columns)):
            return (ID_COLUMN, TIME_COLUMN, VALUE_COLUMN)
        return columns

    def one_series(self, panel: Panel, series) -> bool:
        """Whether results about ``panel`` come back as one series' (a Series, or a frame without the id column):
        the user passed one series (a Series, an array), or passed no data (``series``) to a model fitted on one. A
        long frame (of one series too) gets its ids back, as a panel's."""
        return bool(panel.single_input or (panel.n_series == 1 and self.single and series is None))

    # -- the data to forecast after ----------------------------------------------------------------------
    def _with_fitted_static(self, panel: Panel) -> Panel:
        """``panel`` with the static features of its fitted series (a series not seen in fit needs static_df)."""
        import dataclasses

        unknown = [sid for sid in panel.ids if sid not in self.tails.ids]
        if unknown:
            raise DataError(f"series {unknown[0]!r} was not in fit, so its static features are unknown; pass static_df "
                            f"with one row for it ({', '.join(self.covariates.stat)})")
        return dataclasses.replace(panel, static=self.tails.static.loc[list(panel.ids)])

    def source_of(self, panel: Panel, future=None) -> np.ndarray:
        """What the estimator reads of ``panel``: its values, or with covariates the flat source (target, then the
        standardised covariates; ``future``: the future-known values after each series' end)."""
        if self.covariates is None:
            return panel.values
        return self.covariates.source(panel, self.horizon, future)

    def check_steps(self, steps: int) -> None:
        """One line when a model with covariates is asked for more steps than its horizon (their values after it are
        unknown, so it cannot continue recursively); ``predict`` asks before it asks for the future values."""
        if self.covariates is not None and steps > self.horizon:
            raise ConfigError(f"a model with covariates forecasts at most its horizon ({self.horizon} steps): their "
                              f"values after it are unknown; ask for steps <= {self.horizon} or fit with "
                              f"horizon={steps}")

    def key_columns(self, taken=()) -> tuple[str, str]:
        """The id and time column names of the frames and files made from this model (predictions.csv, backtests,
        attention weights): the data's own, as :meth:`predict` and ``cross_validation`` write them; Nixtla's
        ``unique_id`` / ``ds`` where one of them would clash with a column of that output (``taken``)."""
        names = tuple(map(str, self.columns[:2]))
        return names if not set(names) & set(taken) and names[0] != names[1] else (ID_COLUMN, TIME_COLUMN)

    def panel_of(self, data=None, ids=None, static=None, with_static: bool = True) -> Panel:
        """The fitted tails, or ``data`` (one series or a panel of the fitted frequency) to forecast after; with
        ``with_static=False`` a series not seen in fit needs no static features (what only reads ids and times)."""
        if ids is not None and (isinstance(ids, (str, bytes)) or len(list(ids)) == 0):
            raise ConfigError(f"ids must be a non-empty list of series ids (or None for every series); got {ids!r}")
        if isinstance(data, (str, bytes)) or np.isscalar(data):  # an id where the data goes: say which argument
            raise ConfigError(f"series takes the data to forecast after (a Series or a long frame), not an id; got "
                              f"{data!r}: to choose fitted series by id, pass ids=[{data!r}]")
        if data is None:
            if ids is None:
                return self.tails
            return self.tails.subset(np.array([self.number(sid) for sid in ids]))
        columns = self.frame_columns(data)
        covariates = self.covariates
        try:
            panel = as_panel(data, *columns, fill=self.config.fill, freq=getattr(self.config, "freq", None),
                             exog=covariates.dynamic if covariates else (), static=static)
        except MissingColumnError as error:  # the fit chose the columns: a frame to forecast after needs the same
            raise DataError(f"{error.problem}; this model was fitted on the columns {', '.join(columns)}: rename the "
                            "frame's columns to these") from None
        if panel.freq is None and self.tails.freq is not None and panel.index_kind == self.tails.index_kind:
            # too few timestamps to infer one (a series of 1-2 values): the fitted frequency, checked
            panel = as_panel(data, *columns, fill=self.config.fill, freq=self.tails.freq,
                             exog=covariates.dynamic if covariates else (), static=static)
        if covariates is not None and covariates.stat and panel.static is None and with_static:
            panel = self._with_fitted_static(panel)
        if ids is not None:
            panel = panel.subset(np.array([panel.number(sid) for sid in ids]))
        if panel.index_kind != self.tails.index_kind:
            raise DataError(f"the series has a {panel.index_kind} index but the model was fitted on a "
                            f"{self.tails.index_kind} index; pass a series indexed like the training series")
        if panel.freq != self.tails.freq:
            raise DataError(f"the series has frequency {panel.freq} but the model was fitted on "
                            f"{self.tails.freq}; resample it to {self.tails.freq} first")
        return panel

    def number(self, series_id) -> int:
        """The fitted series number of an id, or a clear error naming the fix."""
        try:
            return self.tails.number(series_id)
        except DataError:
            raise DataError(f"series id {series_id!r} was not in the data the model was fitted on; pass its "
                            "history, e.g. predict(h, series=frame_with_that_series)") from None

    def scaler_for(self, panel: Panel, until: np.ndarray | None = None) -> Scaler:
        """One scaler row per series of ``panel``: the fitted one for a known id (or for the one series of a
        single-series model), else fit on that series' history (a global model meeting a new series): its first
        ``until[i]`` values when given (scoring at origins: the values up to its first origin, so nothing after an
        origin enters its forecasts), else all of them (a forecast after its end)."""
        if self.single and panel.n_series == 1:
            return self.scaler
        rows = []
        fresh = None
        for i, sid in enumerate(panel.ids):
            if sid in self.tails.ids:
                number = self.tails.number(sid)
                rows.append((self.scaler.offset[number], self.scaler.scale[number]))
            else:
                if fresh is None:
                    numbers = np.repeat(np.arange(panel.n_series), panel.lengths)
                    keep = slice(None) if until is None else \
                        np.arange(len(numbers)) - panel.offsets[numbers] < np.asarray(until)[numbers]
                    fresh = Scaler(self.scaler.kind).fit(panel.values[keep], numbers[keep], panel.n_series)
                rows.append((fresh.offset[i], fresh.scale[i]))
        offset, scale = zip(*rows) if rows else ((), ())
        return Scaler(self.scaler.kind, np.array(offset), np.array(scale))

    def mase_scale_for(self, panel: Panel, scales: np.ndarray | None = None) -> np.ndarray:
        """Per series of ``panel``: the fitted series' in-sample scale (or its figure in ``scales``, one per fitted
        series), NaN for a series not seen in fit."""
        fitted = self.mase_scale if scales is None else scales
        if self.single and panel.n_series == 1:
            return np.asarray(fitted[:1])
        out = np.full(panel.n_series, np.nan)
        for i, sid in enumerate(panel.ids):
            if sid in self.tails.ids:
                out[i] = fitted[self.tails.number(sid)]
        return out

    def interval_scale_for(self, panel: Panel, fitted: bool = False) -> np.ndarray:
        """Per series of ``panel``, the scale conformal scores are measured in at its end (the forecast origin), in
        the calibration's interval scale (:func:`tsattn.intervals.window_scale`): the seasonal-naive MAE over the
        panel's values up to its end ("expanding"; for the fitted series themselves, ``fitted``, every value fit
        saw, kept at fit: the tails hold only the last ones) or its last ones ("recent"), or the mean of the two
        ("blend"), or the fitted series' in-sample figure ("insample"); where a figure is undefined, the in-sample one
        (for a series not seen in fit, the same on its own history). "ets": (series, horizon), per step the geometric
        mean of the blend figure and AutoETS's forecast deviation after the series' end (for the fitted series the
        one kept at fit, ``end_deviation``; else AutoETS fitted on the values given)."""
        from .baselines import ets_deviation, interval_scale_at
        from .intervals import blend_scale, ets_scale, series_scale, window_scale

        scale = np.asarray(self.mase_scale_for(panel), dtype=np.float64)
        unknown = ~np.isfinite(scale)
        if unknown.any():
            own = M.insample_scale(panel.values, panel.offsets, panel.lengths, self.season)
            scale = np.where(unknown, own, scale)
        scaler = self.scaler_for(panel)
        insample = series_scale(scale, scaler.scale if len(scaler.scale) == panel.n_series else 1.0)
        kind = self.calibration.scale if self.calibration is not None else "insample"
        ends = panel.offsets[1:] - 1, panel.offsets[:-1]
        if kind in ("expanding", "blend", "ets") and fitted and self.end_scale is not None:
            end = np.asarray(self.mase_scale_for(panel, self.end_scale), dtype=np.float64)
            expanding = np.where(np.isfinite(end) & (end > 0), end, insample)
            if kind == "expanding":
                return expanding
            blended = blend_scale(expanding, window_scale("recent", panel.values, *ends, self.season, self.horizon,
                                                          insample))
            if kind == "blend":
                return blended
            deviation = self.end_deviation  # the fitted series' own (the tails hold too few values to fit AutoETS)
            if deviation is None or len(deviation) != panel.n_series:
                deviation = ets_deviation(panel.values, *ends, self.season, self.horizon)
            return ets_scale(blended, deviation)
        return interval_scale_at(kind, panel.values, *ends, self.season, self.horizon, insample)

    # -- forecasting -------------------------------------------------------------------------------------
    @property
    def padded(self) -> bool:
        """Whether the model was fitted on padded windows (``pad=True``): a series shorter than its window is then
        forecast from its values padded with its first one."""
        return bool(getattr(self.config, "pad", False))

    @property
    def local(self) -> bool:
        """Whether the model is fitted on each history it forecasts (a statistical method): it reads every value
        of the series before an origin, not a window."""
        return self.estimator.capabilities.scope == "local"

    def windows(self, values: np.ndarray, origins: np.ndarray, first: np.ndarray,
                pad: bool | None = None) -> np.ndarray:
        """The inputs of forecasts at ``origins`` (flat positions; ``first``: each one's series start): the last
        ``lookback`` values (padded with the series' first value for a padded model, or when ``pad``), or for a
        local model every value since the series' start, NaN-padded in front to the longest history."""
        origins, first = np.asarray(origins, dtype=np.int64), np.asarray(first, dtype=np.int64)
        if self.local:
            longest = int((origins - first).max()) + 1 if len(origins) else 1
            return gather_windows(values, origins, max(longest, self.lookback), first, missing="nan")
        pad = self.padded if pad is None else pad
        return gather_windows(values, origins, max(self.lookback, 1), first if pad else None)

    def contexts(self, panel: Panel, future=None) -> np.ndarray:
        """(n_series, lookback) the last values of each series (see :meth:`windows`; with covariates
        (n_series, lookback, 1 + columns) of the source, ``future`` giving the future-known values after each
        series). A series shorter than the window is padded with its first value (every series gets a forecast,
        as from a global padded model); for a model not trained on padded windows a warning names it."""
        import warnings

        needed = max(self.lookback, 1)
        short = np.flatnonzero(panel.lengths < needed)
        if len(short) and not self.padded and not self.local:
            named = ", ".join(repr(panel.ids[i]) for i in short[:3]) + (", ..." if len(short) > 3 else "")
            what = "the series has" if panel.n_series == 1 else f"{len(short)} series ({named}) have"
            warnings.warn(f"{what} fewer than the {needed} values the window reads, so its inputs are padded with its "
                          "first value, which this model never trained on (fit with pad=True to train on padded "
                          "windows, or pass a longer series)", UserWarning, stacklevel=user_stacklevel())
        return self.windows(self.source_of(panel, future), panel.offsets[1:] - 1, panel.offsets[:-1], pad=True)

    def forecast(self, contexts: np.ndarray, steps: int, scaler: Scaler, series: np.ndarray) -> np.ndarray:
        """(k, steps) forecasts after each row of ``contexts`` (k, length); recursive beyond ``horizon``: each
        block of ``horizon`` forecasts is appended to the inputs of the next block. Contexts with covariates
        (k, length, 1 + columns) are forecast up to the horizon (covariates after it are unknown)."""
        needed = self.lookback
        if contexts.shape[1] < needed:
            raise DataError(f"need at least {needed} values before the first forecast; got {contexts.shape[1]}")
        if contexts.ndim == 3:
            self.check_steps(steps)
            k, length, width = contexts.shape
            block = self.estimator.forecast(contexts.reshape(k * length, width), np.arange(k) * length + length - 1,
                                            np.arange(k) * length, series, scaler)
            return floored(block, self.floor)[:, :steps]
        # A model that reads a window (everything but a local statistical method, which fits on the whole history
        # it forecasts from) reads only the last ``lookback`` values of each row, so the history is cut to them
        # after every block: a long recursive forecast takes time linear in its steps, not quadratic.
        keep = None if self.local else max(needed, 1)
        blocks, done, history = [], 0, contexts
        while done < steps:
            k, length = history.shape
            origins = np.arange(k) * length + length - 1
            block = floored(self.estimator.forecast(history.ravel(), origins, np.arange(k) * length, series, scaler),
                            self.floor)  # raised before it is read again beyond the horizon
            blocks.append(block)
            done += block.shape[1]
            history = np.hstack([history if keep is None else history[:, -keep:], block])
        return np.hstack(blocks)[:, :steps] if blocks else np.zeros((len(contexts), 0))

    def bounds(self, panel: Panel, contexts: np.ndarray, point: np.ndarray, scaler, levels,
               fitted: bool = False) -> dict:
        """{"lo-80": (n_series, steps), ...}: the model's own quantiles (conformalized) or its conformal
        intervals around ``point``; ``fitted``: ``panel`` is the fitted tails (:meth:`interval_scale_for`)."""
        from .intervals import bands, level_name, missing_levels

        steps = point.shape[1]
        if steps > self.horizon:
            most = f"{self.horizon} step" + ("s" if self.horizon > 1 else "")
            raise ConfigError(f"intervals reach the model's horizon ({most}); got steps={steps}: forecast at most "
                              f"{most} with level (CLI --level), or fit with horizon={steps} (CLI --horizon {steps})")
        if self.quantiles is not None:
            missing = missing_levels(levels, self.quantiles)
            if missing:
                have = ", ".join(f"{q:g}" for q in self.quantiles)
                raise ConfigError(f"this quantile model outputs quantiles {have}, which do not bound a "
                                  f"{level_name(missing[0])}% interval; ask for a level they bound or fit with that "
                                  "level (level=...)")
            k, length = contexts.shape[:2]
            flat = contexts.reshape(k * length, -1) if contexts.ndim == 3 else contexts.ravel()
            _, quantiles = self.estimator.forecast_distribution(flat, np.arange(k) * length + length - 1,
                                                                np.arange(k) * length, np.arange(k), scaler)
            quantiles = {q: values[:, :steps] for q, values in quantiles.items()}
            if self.calibration is not None:  # else the raw quantiles: the model's own
                quantiles = self.calibration.quantiles(point, quantiles, self.interval_scale_for(panel, fitted=fitted),
                                                       levels)
        else:
            if self.calibration is None and self.note and UNCALIBRATED in self.note:
                raise ConfigError(f"no intervals for this model: {self.note}; give the series more values, or "
                                  "predict without level")  # a short series' fallback kept no validation part
            if self.calibration is None:
                raise ConfigError("no conformal calibration is stored with this model (it was fitted without a "
                                  "validation part, or saved by a tsattn without intervals); refit with validation > 0 "
                                  "(e.g. validation=0.1) to get intervals")
            quantiles = self.calibration.quantiles(point, None, self.interval_scale_for(panel, fitted=fitted),
                                                   levels)
        out = {}
        for level, (low, high) in bands(floored(quantiles, self.floor), levels).items():  # a quantile model's own
            out[f"lo-{level_name(level)}"], out[f"hi-{level_name(level)}"] = low, high
        return out


def tails_of(panel: Panel, keep: int) -> Panel:
    """The last ``keep`` values of each series (all of a shorter one), covariates with them, as a Panel."""
    keep = max(int(keep), 1)
    starts = np.maximum(panel.offsets[1:] - keep, panel.offsets[:-1])
    return panel.take(np.arange(panel.n_series), starts, panel.offsets[1:] - starts)


def kept_values(panel, window: int, estimator, season: int) -> int:
    """How many last values of each series a fitted state keeps: enough for its window, its model's lookback, the
    season and the recent interval scale (:func:`tsattn.intervals.recent_span` seasonal differences); every value for
    a model fitted on each history it forecasts (a local statistical method)."""
    from .intervals import recent_span

    if estimator.capabilities.scope == "local":
        return int(panel.lengths.max())
    return max(window, estimator.lookback, season + recent_span(season, estimator.horizon), 1)


def seen_until(data):
    """The last label whose value training or model selection (early stopping) used."""
    panel = data.panel
    if data.part_bounds is None:
        return panel.index[panel.offsets[1:] - 1].max() if panel.n_series > 1 else panel.index[-1]
    ends = panel.offsets[:-1] + np.maximum(data.part_bounds[:, 1], data.part_bounds[:, 0]) - 1
    ends = np.maximum(ends, panel.offsets[:-1])
    labels = panel.index[ends]
    return labels.max() if panel.n_series > 1 else labels[0]

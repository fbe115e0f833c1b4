"""Windowed samples, leakage-free splits and per-series scaling of a panel.

Each series of a :class:`tsattn.panel.Panel` becomes windows: inputs are the `window` values before the
first of `horizon` targets, and no window ever crosses from one series into the next (a window is a start
position in the panel's flat array). Windows are assigned to train / validation / test by the time of their
targets, per series; scalers are fit per series on its training part only (unless the caller explicitly asks
for the tutorials' leaky whole-series fit).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .checks import counted, few_names, positive_int
from .covariates import Covariates
from .errors import ConfigError, DataError, TooShortError, user_stacklevel

SPLITS = ("chronological", "shuffled", "holdout")
SCALINGS = ("minmax", "standard", "robust", "none")
SCALER_FITS = ("train", "all")
PARTS = ("train", "validation", "test")


check_positive_int = positive_int  # the name the rest of tsattn used before checks.py


def make_windows(values, window: int, horizon: int = 1, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Cut a series into (inputs, targets) windows without copying the data.

    Args:
        values: array of shape (n,) or (n, features); the targets are column 0.
        window: input length (>= 1).
        horizon: how many values after the window to forecast (>= 1).
        stride: step between window starts; 1 gives sliding windows, ``stride=window`` gives the sunspots
            tutorial's non-overlapping windows.

    Returns:
        X of shape (samples, window, features) and y of shape (samples, horizon), both read-only views of
        ``values``. Sample i covers inputs [i*stride, i*stride + window) and targets right after them.

    Example:
        >>> X, y = make_windows(np.arange(6.0), window=3)
        >>> X[:, :, 0].tolist(), y.tolist()
        ([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]], [[3.0], [4.0], [5.0]])
    """
    window = check_positive_int("window", window)
    horizon = check_positive_int("horizon", horizon)
    stride = check_positive_int("stride", stride)
    array = np.asarray(values)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise DataError(f"values must have shape (n,) or (n, features); got {array.shape}")
    span = window + horizon
    if len(array) < span:
        raise DataError(f"window {window} + horizon {horizon} needs at least {span} values but the series has "
                        f"{len(array)}; {_shorter(len(array), horizon)}")
    # views: (n - span + 1, features, span) -> strided, then (samples, span, features)
    views = np.lib.stride_tricks.sliding_window_view(array, span, axis=0)[::stride]
    views = np.moveaxis(views, -1, 1)
    return views[:, :window, :], views[:, window:, 0]


# ----------------------------------------------------------------------------------------------------
# Scaling, per series
# ----------------------------------------------------------------------------------------------------
@dataclass
class Scaler:
    """Per-series min-max to [0, 1], standardisation, robust scaling or identity; invertible.

    ``minmax``: (x - min) / (max - min), as scikit-learn's MinMaxScaler in the tutorials.
    ``standard``: (x - mean) / std.  ``robust``: (x - median) / IQR (interquartile range).
    ``offset`` and ``scale`` hold one number per series (arrays of shape (n_series,)); a constant series
    gets scale 1. Stored as plain numbers (JSON), never pickled.
    """

    kind: str = "minmax"
    offset: np.ndarray = field(default_factory=lambda: np.zeros(1))
    scale: np.ndarray = field(default_factory=lambda: np.ones(1))

    def __post_init__(self):
        if self.kind not in SCALINGS:
            raise ConfigError(f"scaling must be one of {', '.join(SCALINGS)}; got {self.kind!r}")
        self.offset = np.atleast_1d(np.asarray(self.offset, dtype=np.float64))
        self.scale = np.atleast_1d(np.asarray(self.scale, dtype=np.float64))

    def fit(self, values, series=None, n_series: int | None = None) -> "Scaler":
        """Fit on ``values``; with ``series`` (the series number of each value) one scaler per series."""
        values = np.asarray(values, dtype=np.float64).ravel()
        series = np.zeros(len(values), dtype=np.int64) if series is None else np.asarray(series).ravel()
        n_series = int(series.max()) + 1 if n_series is None else n_series
        grouped = pd.Series(values).groupby(series)
        if self.kind == "minmax":
            low, high = grouped.min(), grouped.max()
            offset, scale = low, high - low
        elif self.kind == "standard":
            offset, scale = grouped.mean(), grouped.std(ddof=0)
        elif self.kind == "robust":
            offset, scale = grouped.median(), grouped.quantile(0.75) - grouped.quantile(0.25)
        else:
            offset, scale = grouped.size() * 0.0, grouped.size() * 0.0 + 1.0
        self.offset = offset.reindex(range(n_series), fill_value=0.0).to_numpy(dtype=np.float64)
        scale = scale.reindex(range(n_series), fill_value=1.0).to_numpy(dtype=np.float64)
        self.scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
        return self

    def _parameters(self, series):
        if series is None:
            return self.offset if len(self.offset) > 1 else self.offset[0], \
                self.scale if len(self.scale) > 1 else self.scale[0]
        return self.offset[series], self.scale[series]

    def transform(self, values, series=None):
        """Scale ``values``; ``series`` gives the series number of each value (or of each row of a 2-D array)."""
        offset, scale = self._parameters(series)
        values = np.asarray(values, dtype=np.float64)
        if series is not None and values.ndim == 2 and np.ndim(offset) == 1:
            offset, scale = offset[:, None], scale[:, None]
        return (values - offset) / scale

    def inverse_transform(self, values, series=None):
        offset, scale = self._parameters(series)
        values = np.asarray(values, dtype=np.float64)
        if series is not None and values.ndim >= 2 and np.ndim(offset) == 1:
            shape = (-1,) + (1,) * (values.ndim - 1)
            offset, scale = offset.reshape(shape), scale.reshape(shape)
        return values * scale + offset

    def subset(self, series: np.ndarray) -> "Scaler":
        return Scaler(self.kind, self.offset[series], self.scale[series])

    def to_dict(self) -> dict:
        return {"kind": self.kind, "offset": self.offset.tolist(), "scale": self.scale.tolist()}

    @classmethod
    def from_dict(cls, state: dict) -> "Scaler":
        offset = np.atleast_1d(np.asarray(state["offset"], dtype=np.float64))
        scale = np.atleast_1d(np.asarray(state["scale"], dtype=np.float64))
        if offset.shape != scale.shape or not (np.isfinite(offset).all() and np.isfinite(scale).all()) \
                or (scale <= 0).any():
            raise ValueError("scaler offsets and scales must be finite, of one length, with scales > 0")
        return cls(kind=state["kind"], offset=offset, scale=scale)


# ----------------------------------------------------------------------------------------------------
# Batches: one gather of windows for training, evaluation and prediction
# ----------------------------------------------------------------------------------------------------
@dataclass
class Batch:
    """Windows gathered from a panel's flat array, in the slots every model, loss and metric reads
    (NeuralForecast's insample_y / hist_exog / futr_exog / stat_exog). Covariate slots are empty (zero
    columns) until covariates are given; their widths come from the data, never from a constant.

    Attributes:
        insample_y: (batch, window, 1) the target's history (scaled when the batch is).
        hist_exog: (batch, window, n_hist) past-observed covariates at the input steps.
        futr_exog: (batch, window, n_futr) future-known covariates ``horizon`` steps after each input step (its last
            ``horizon`` rows are the forecast steps' values; see :mod:`tsattn.covariates`).
        stat_exog: (batch, n_stat) static features of each window's series.
        target: (batch, horizon) the values to forecast, or None when forecasting.
        series: (batch,) the series number of each window.
        scale: (batch,) the per-series scale of each window's series (what a scale-aware loss divides by).
    """

    insample_y: np.ndarray
    hist_exog: np.ndarray
    futr_exog: np.ndarray
    stat_exog: np.ndarray
    target: np.ndarray | None
    series: np.ndarray
    scale: np.ndarray

    @property
    def window(self) -> int:
        return self.insample_y.shape[1]

    @property
    def features(self) -> int:
        """Per-step inputs of a network: the target, the past, future-known and static covariates."""
        return self.insample_y.shape[-1] + self.hist_exog.shape[-1] + self.futr_exog.shape[-1] + self.stat_exog.shape[-1]

    def network_input(self) -> np.ndarray:
        """(batch, window, features) float32: what a network's input layer takes (static features on every step)."""
        static = np.repeat(self.stat_exog[:, None, :], self.window, axis=1)
        parts = [self.insample_y, self.hist_exog, self.futr_exog, static]
        return np.concatenate([p for p in parts if p.shape[-1]] or [self.insample_y], axis=-1).astype(np.float32)


def window_positions(starts: np.ndarray, span: int, first=None, limits=None) -> np.ndarray:
    """(len(starts), span) flat positions of windows starting at ``starts``; with ``first`` (each window's series
    start) a position before it reads the series' first value instead (a padded window, ``pad=True``); with
    ``limits`` (each window's end of known targets) a position at or after it reads the last known value (a target
    masked out of the loss, ``masked_targets``). The one place windows are laid out: training batches, forecasts
    and the baselines all read through it."""
    positions = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(span)
    if first is not None:
        positions = np.maximum(positions, np.asarray(first, dtype=np.int64)[:, None])
    if limits is not None:
        positions = np.minimum(positions, np.asarray(limits, dtype=np.int64)[:, None] - 1)
    return positions


def target_mask(starts: np.ndarray, window: int, horizon: int, limits: np.ndarray) -> np.ndarray:
    """(len(starts), horizon) float32: 1 where a window's target is known (before its limit), 0 where it runs past
    the end of its part and is masked out of the loss."""
    targets = np.asarray(starts, dtype=np.int64)[:, None] + window + np.arange(horizon)
    return (targets < np.asarray(limits, dtype=np.int64)[:, None]).astype(np.float32)


def gather_batch(source: np.ndarray, starts: np.ndarray, window: int, horizon: int = 0, series=None,
                 scaler: "Scaler | None" = None, with_target: bool = True, first=None, layout=None,
                 limits=None) -> Batch:
    """The windows starting at ``starts`` (flat positions of each window's first input) of a panel's flat
    array ``source``: already scaled (a WindowedPanel's ``scaled``), or series units scaled here with
    ``scaler`` and ``series`` (the series number of each window). ``horizon`` values after each window are
    its target (``with_target=False``, or horizon 0: none, for forecasting). With ``first`` (each window's series
    start) inputs before it are the series' first value: a padded window (``pad=True``); with ``limits`` targets
    at or after each window's limit repeat the last known value (masked in training: :func:`target_mask`).

    A 2-D ``source`` (N, 1 + columns) carries covariates after the target (:meth:`tsattn.covariates.Covariates.source`:
    standardised, future-known ones shifted); ``layout`` (past, future-known, static columns) sorts them into the
    batch's slots (default: all past-observed). Only the target is scaled by ``scaler``."""
    starts = np.asarray(starts, dtype=np.int64)
    count = len(starts)
    series = np.zeros(count, dtype=np.int64) if series is None else np.asarray(series)
    span = window + (horizon if with_target else 0)
    values = np.asarray(source)[window_positions(starts, span, first, limits)]  # (batch, span[, columns])
    covariates = values[:, :window, 1:] if values.ndim == 3 else np.zeros((count, window, 0))
    if values.ndim == 3:
        values = values[:, :, 0]
    if scaler is not None:
        values = scaler.transform(values, series)
        scale = scaler.scale[series] if len(scaler.scale) > 1 else np.full(count, scaler.scale[0])
    else:
        scale = np.ones(count)
    hist, futr, stat = layout if layout is not None else (covariates.shape[-1], 0, 0)
    if hist + futr + stat != covariates.shape[-1]:
        raise ValueError(f"layout {layout} does not match the source's {covariates.shape[-1]} covariate columns")
    return Batch(insample_y=values[:, :window, None], hist_exog=covariates[:, :, :hist],
                 futr_exog=covariates[:, :, hist:hist + futr], stat_exog=covariates[:, 0, hist + futr:],
                 target=values[:, window:] if with_target and horizon else None, series=series, scale=scale)


# ----------------------------------------------------------------------------------------------------
# Splits
# ----------------------------------------------------------------------------------------------------
@dataclass
class SplitSpec:
    """How windows are divided into train / validation / test parts, per series.

    Attributes:
        method: "chronological" (by the time of each window's targets, fractions of each series),
            "holdout" (the competitions' protocol: the last ``holdout`` values of each series are test, the
            ``holdout`` before them validation) or "shuffled" (the Fibonacci tutorial's
            np.random.RandomState(shuffle_seed) permutation of windows).
        train: fraction of each series (chronological) or of the windows (shuffled) for training.
        validation: fraction for validation; the test part gets the rest. With "holdout", 0 drops the
            validation part and any other value keeps it.
        within_parts: cut each part into windows on its own, so inputs never reach into an earlier part
            (the sunspots tutorial's get_XY on train and test separately). Default: inputs may reach back.
        shuffle_seed: seed of the shuffled split (13 in the tutorial).
        holdout: values per series in the test part (and in the validation part) of the "holdout" split.
        holdout_test: False makes the last ``holdout`` values of each series validation and leaves no test
            part (how a Forecaster keeps the end of each series for early stopping).
        validation_holdout: values per series in the validation part of the "holdout" split (default: ``holdout``);
            more than the horizon gives several rolling validation windows per series (one per step), so the
            intervals are calibrated on more forecasts (statsforecast's and NeuralForecast's conformal windows).
    """

    method: str = "chronological"
    train: float = 0.7
    validation: float = 0.1
    within_parts: bool = False
    shuffle_seed: int = 13
    holdout: int | None = None
    holdout_test: bool = True
    validation_holdout: int | None = None

    @property
    def validation_values(self) -> int | None:
        """Values per series in a hold-out split's validation part."""
        return self.validation_holdout or self.holdout

    def __post_init__(self):
        if self.method not in SPLITS:
            raise ConfigError(f"split must be one of {', '.join(SPLITS)}; got {self.method!r}")
        for name, value in (("train fraction", self.train), ("validation fraction", self.validation)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"{name} must be a number between 0 and 1; got {value!r}")
        if self.train <= 0:
            raise ConfigError(f"train fraction must be above 0; got {self.train!r}")
        if self.method == "holdout":
            positive_int("holdout", self.holdout)

    @property
    def test(self) -> float:
        if self.method == "holdout":
            return 1.0 if self.holdout_test else 0.0
        return max(0.0, 1.0 - self.train - self.validation)


@dataclass
class WindowedPanel:
    """A panel cut into windows, split into parts and scaled per series; the single input of every model.

    Positions are integer offsets into the panel's flat ``values``. ``starts[part]`` holds the first input
    position of each window of that part; its targets are at ``start + window .. start + window + horizon - 1``
    and always lie in the same series. ``part_bounds`` holds, per series, the local positions where the
    validation and the test parts start (None for the shuffled split).
    """

    panel: "Panel"
    window: int
    horizon: int
    stride: int
    split: SplitSpec
    scaler: Scaler
    scaler_fit: str
    starts: dict[str, np.ndarray]
    part_bounds: np.ndarray | None
    scaled: np.ndarray = field(repr=False)
    dropped: list[str] = field(default_factory=list)  # series too short for any window, kept to be forecast
    # series with windows but none in the scored part (test, else validation): trained on, not scored (validated)
    unscored: list[str] = field(default_factory=list)
    train_history: int | None = None
    pad: bool = False
    covariates: "Covariates | None" = None
    source: np.ndarray | None = field(default=None, repr=False)  # what estimators read: the target in series units
    floor: float | None = None  # forecasts and intervals are clipped below at this (0 for non-negative data), or not
    interval_scale: str = "blend"  # what conformal scores are divided by (tsattn.intervals.INTERVAL_SCALES)
    interval_scores: str = "absolute"  # what a conformal score is (tsattn.intervals.INTERVAL_SCORES)
    # (1-D), or with covariates (N, 1 + columns) (tsattn.covariates.Covariates.source)
    overhang: np.ndarray | None = None  # masked_targets: starts of the extra training windows whose targets run
    # past the end of the training part (trained on with those targets masked; see training_windows)

    def __post_init__(self):
        if self.source is None:
            self.source = self.panel.values

    @property
    def calibration_settings(self) -> dict:
        """The interval settings every calibration of this data takes (tsattn.intervals.Calibration.calibrate's
        floor, kind and scores): one place, so a new setting reaches every path that calibrates."""
        return {"floor": self.floor, "kind": self.interval_scale, "scores": self.interval_scores}

    @property
    def layout(self):
        """(past, future-known, static) covariate columns after the target; None without covariates."""
        return None if self.covariates is None else self.covariates.layout

    def rewindowed(self, window: int) -> "WindowedPanel":
        """The same series, split and scaler cut into windows of another length (an ensemble member's lookback):
        a window no longer than this one keeps every series, and the scaler stays this data's, so the member
        sees its inputs in the units the combined model is given."""
        if window > self.window:
            raise ConfigError(f"a member's window ({window}) cannot be longer than the data's ({self.window})")
        return dataclasses.replace(
            window_panel(self.panel, window, self.horizon, self.stride, self.split, self.scaler.kind,
                         self.scaler_fit, require_test=False, train_history=self.train_history, pad=self.pad,
                         scaler=self.scaler, covariates=self.covariates, fitted_covariates=True,
                         masked_targets=self.overhang is not None),
            floor=self.floor, interval_scale=self.interval_scale,
            interval_scores=self.interval_scores)

    def with_validation_trained(self) -> "WindowedPanel":
        """The same series, window and test part with the validation part moved into training: what the final fit
        trains on once the validation part has chosen the epochs and calibrated the intervals (NeuralForecast's and
        the N-BEATS authors' practice). Windows whose targets straddled the old train / validation boundary now
        train too; the test part is untouched (no test value is trained on). The scaler and the covariates'
        standardisation stay this data's, so both fits read the same inputs. Without a validation part: this."""
        if self.count("validation") == 0:
            return self
        if self.split.method == "shuffled":  # the same permutation: train + validation windows, test as it was
            starts = {"train": np.concatenate([self.starts["train"], self.starts["validation"]]),
                      "validation": self.starts["validation"][:0], "test": self.starts["test"]}
            split = dataclasses.replace(self.split, train=self.split.train + self.split.validation, validation=0.0)
            return dataclasses.replace(self, split=split, starts=starts)
        if self.split.method == "holdout" and self.split.holdout_test:
            split = dataclasses.replace(self.split, validation=0.0)
        elif self.split.method == "holdout":  # no test part: train on everything
            split = SplitSpec("chronological", 1.0, 0.0, self.split.within_parts, self.split.shuffle_seed)
        else:
            split = dataclasses.replace(self.split, train=self.split.train + self.split.validation, validation=0.0)
        with warnings.catch_warnings():  # the series left out or unscored were named when these windows were cut
            warnings.simplefilter("ignore", UserWarning)
            merged = window_panel(self.panel, self.window, self.horizon, self.stride, split, self.scaler.kind,
                                  self.scaler_fit, require_test=False, train_history=self.train_history, pad=self.pad,
                                  scaler=self.scaler, covariates=self.covariates, fitted_covariates=True,
                                  masked_targets=self.overhang is not None)
        if self.part_bounds is not None and merged.part_bounds is not None:  # the test part exactly as before
            merged.part_bounds[:, 1] = self.part_bounds[:, 1]
        merged.starts["test"] = self.starts["test"]
        merged.dropped, merged.unscored = list(self.dropped), list(self.unscored)
        return merged

    @property
    def not_scored(self) -> list[str]:
        """The series no scored window holds: too short for any (``dropped``), then those without one in the scored
        part (``unscored``); forecast all the same."""
        return [*self.dropped, *self.unscored]

    # -- samples ---------------------------------------------------------------------------------------
    def count(self, part: str) -> int:
        return len(self.starts[part])

    def training_windows(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, limits) of every window a network trains on: the training part's windows and, with
        ``masked_targets``, the ones whose targets run past the part's end; ``limits`` is each window's flat end of
        known targets (a target at or after it is masked out of the loss)."""
        starts = self._in_id_order(self.starts["train"])
        limits = starts + self.window + self.horizon
        if self.overhang is None or not len(self.overhang):
            return starts, limits
        overhang = self._in_id_order(self.overhang)
        series = self.panel.series_of(overhang + self.window)
        ends = self.panel.offsets[series] + (self.part_bounds[series, 0] if self.part_bounds is not None
                                             else self.panel.lengths[series])
        return np.concatenate([starts, overhang]), np.concatenate([limits, ends])

    def _in_id_order(self, starts: np.ndarray) -> np.ndarray:
        """Window starts series by series in sorted-id order, each series' in time order (what the seeded shuffle and
        sampler draw from, so the order the series came in changes nothing); the shuffled split's come in its
        seeded permutation of that order already."""
        if self.split.method == "shuffled" or self.panel.n_series < 2:
            return starts
        return self.panel.in_id_order(starts, self.window)

    def series_numbers(self, part: str) -> np.ndarray:
        """The series number of each window of a part (read at its first target: a padded window's first input
        lies before its series)."""
        return self.panel.series_of(self.starts[part] + self.window)

    def first_positions(self, part: str) -> np.ndarray:
        """The flat position of each window's series start (inputs before it are padding)."""
        return self.panel.offsets[self.series_numbers(part)]

    def target_positions(self, part: str) -> np.ndarray:
        """(samples, horizon) integer positions of the targets."""
        return self.starts[part][:, None] + self.window + np.arange(self.horizon)

    @property
    def features(self) -> int:
        """Per-step inputs of a network on this data: the target and the covariates' columns."""
        return 1 if self.scaled.ndim == 1 else int(self.scaled.shape[1])

    def batch(self, part: str, scaled: bool = True, starts: np.ndarray | None = None) -> Batch:
        """The windows of a part (or those starting at ``starts``) as one :class:`Batch`."""
        starts = self.starts[part] if starts is None else starts
        series = self.panel.series_of(starts + self.window)
        batch = gather_batch(self.scaled if scaled else self.source, starts, self.window, self.horizon, series,
                             first=self.panel.offsets[series], layout=self.layout)
        batch.scale = self.scaler.scale[series]
        return batch

    def X(self, part: str, scaled: bool = True) -> np.ndarray:
        """Inputs of a part: (samples, window, features), float32 when scaled, series units otherwise."""
        batch = self.batch(part, scaled)
        return batch.network_input() if scaled else np.concatenate([batch.insample_y, batch.hist_exog], axis=-1)

    def y(self, part: str, scaled: bool = True) -> np.ndarray:
        """Targets of a part: (samples, horizon)."""
        source = self.scaled if scaled else self.panel.values
        return (source if source.ndim == 1 else source[:, 0])[self.target_positions(part)]

    def target_index(self, part: str) -> pd.Index:
        """Index labels (timestamps) of each window's first target."""
        return self.panel.index[self.starts[part] + self.window]

    @property
    def series(self) -> pd.Series:
        """The one series of a panel of one."""
        if self.panel.n_series != 1:
            raise ValueError("this panel holds several series; use .panel")
        return self.panel.series(0)

    @property
    def boundaries(self) -> tuple[int, int] | None:
        """(validation start, test start) of a panel of one, as positions of its series."""
        if self.part_bounds is None or self.panel.n_series != 1:
            return None
        return int(self.part_bounds[0, 0]), int(self.part_bounds[0, 1])

    def insample_values(self) -> np.ndarray:
        """Every finite value before the test part, all series together: what a fit sees."""
        lengths = self.panel.lengths
        local = np.arange(len(self.panel.values)) - np.repeat(self.panel.offsets[:-1], lengths)
        values = self.panel.values[local < np.repeat(self.insample_end(), lengths)]
        return values[np.isfinite(values)]

    def nonnegative_floor(self) -> float | None:
        """0.0 when every value before the test part (what a fit sees) is >= 0, else None: the floor of
        forecasts and intervals on data that cannot go below zero (counts, sales, sunspots)."""
        values = self.insample_values()
        return 0.0 if len(values) and (values >= 0).all() else None

    @functools.cached_property
    def headline(self) -> str:
        """The metric this data's models are chosen, ranked and judged on (:func:`tsattn.metrics.headline_metric`),
        read off the values before the test part: RMSE for one series, sMAPE for a panel, MASE for a panel with a
        value of 0 or below there (MAE where every series is constant there). Worked out once: read several times a
        run, and on a panel with zeros it takes each series' in-sample scale (0.46 s on 30,000 weekly series)."""
        from .metrics import headline_metric

        before = self.panel.heads(self.insample_end())
        return headline_metric(self.panel.n_series, before.values, before.offsets)

    def insample_end(self) -> np.ndarray:
        """Per series, the local position where the test part starts (all values before it are in-sample)."""
        if self.part_bounds is None:
            return self.panel.lengths.copy()
        return self.part_bounds[:, 1].copy()

    def describe(self) -> dict:
        """A JSON-ready summary of the windowing, split and scaling (for config files)."""
        single = self.panel.n_series == 1
        return {
            "window": self.window,
            "horizon": self.horizon,
            "stride": self.stride,
            "split": self.split.method,
            "train_fraction": self.split.train,
            "validation_fraction": self.split.validation,
            "holdout": self.split.holdout if self.split.method == "holdout" else None,
            "within_parts": self.split.within_parts,
            "shuffle_seed": self.split.shuffle_seed if self.split.method == "shuffled" else None,
            "scaling": self.scaler.kind,
            "scaler_fit": self.scaler_fit,
            "scaler": self.scaler.to_dict() if single else "per series, in tsattn.json",
            "series": self.panel.n_series,
            "series_left_out": self.dropped,
            "series_unscored": self.unscored,
            "samples": {part: self.count(part) for part in PARTS},
            "boundaries": list(self.boundaries) if self.boundaries else None,
        }


def _grid(low: np.ndarray, high: np.ndarray, span: int, stride: int) -> np.ndarray:
    """Window starts low, low + stride, ... with start + span <= high, for each [low, high) range."""
    counts = np.maximum(0, (high - low - span) // stride + 1)
    total = int(counts.sum())
    first = np.repeat(low, counts)
    rank = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return (first + rank * stride).astype(np.int64)


def split_bounds(lengths: np.ndarray, spec: SplitSpec) -> np.ndarray:
    """(n_series, 2) local positions where validation and test start."""
    if spec.method == "holdout" and not spec.holdout_test:
        return np.stack([np.maximum(lengths - spec.validation_values, 0), lengths], axis=1)
    if spec.method == "holdout":
        test_start = lengths - spec.holdout
        validation_start = test_start - (spec.validation_values if spec.validation > 0 else 0)
        return np.stack([np.maximum(validation_start, 0), np.maximum(test_start, 0)], axis=1)
    # Python's round (banker's rounding) as before panels, so a single series splits exactly as it did
    train_end = np.array([int(round(n * spec.train)) for n in lengths], dtype=np.int64)
    validation_end = np.array([int(round(n * (spec.train + spec.validation))) for n in lengths], dtype=np.int64)
    return np.stack([train_end, validation_end], axis=1)


def _split_text(split: SplitSpec) -> str:
    """The split in a message: "the last 7 values as validation", "a 0.7/0.15/0.15 split"."""
    if split.method != "holdout":
        return f"a {split.train:g}/{split.validation:g}/{split.test:g} split"
    if split.holdout_test:
        return f"the last {split.holdout} values as test" + (
            f" and the {split.validation_values} before them as validation" if split.validation > 0 else "")
    return f"the last {split.validation_values} values as validation"


def _shorter(length: int, horizon: int, reach: int = 0) -> str:
    """The fix for a series of ``length`` values too short for a window and ``horizon``: the longest window that fits,
    or, where none does (a padded window, ``reach`` > 0, needs only horizon + 1 values), the longest horizon."""
    longest = length - horizon
    if reach == 0 and longest >= 2:
        return f"use a window of at most {longest} (e.g. window={longest}) or a longer series"
    most = length - 1 if reach else length - 2
    if most < 1:  # no horizon fits: only more values help
        return f"give a series of at least {horizon + (1 if reach else 2)} values"
    return f"use a horizon of at most {most} or a longer series"


def window_panel(
    data,
    window: int,
    horizon: int = 1,
    stride: int = 1,
    split: SplitSpec | None = None,
    scaling: str = "minmax",
    scaler_fit: str = "train",
    require_test: bool = True,
    train_history: int | None = None,
    pad: bool = False,
    scaler: "Scaler | None" = None,
    covariates: "Covariates | None" = None,
    fitted_covariates: bool = False,
    masked_targets: bool = False,
    untrained: bool = False,
) -> WindowedPanel:
    """Window, split and scale a panel (or anything :func:`tsattn.panel.as_panel` takes).

    Args:
        data: a Panel, a long frame, a dict of Series or one series.
        window, horizon, stride: as in :func:`make_windows`, per series.
        split: a :class:`SplitSpec` (default chronological 0.7 / 0.1 / 0.2 of each series).
        scaling: "minmax" (to [0, 1], default), "standard", "robust" or "none", one scaler per series.
        scaler_fit: "train" (default: per series, the values covered by its training windows only; a series
            without training windows uses the values before its first validation or test target) or "all"
            (the whole series, as the tutorials do; leaks the test range, so only for reproducing them).
        require_test: refuse splits that leave the test part without windows.
        train_history: keep only training windows whose targets lie in the last ``train_history`` values of each
            series' training part (N-BEATS samples its training windows from recent history); the scaler and
            the linear start are then fitted on those windows too.
        pad: let a window start before its series (at least one real input): the missing inputs repeat the
            series' first value, so series shorter than window + horizon are forecast and train too (N-BEATS pads
            its windows). Chronological and hold-out splits without ``within_parts`` only.
        scaler: a fitted :class:`Scaler` to use instead of fitting one (the same data at another window length,
            :meth:`WindowedPanel.rewindowed`).
        covariates: the :class:`tsattn.covariates.Covariates` the windows carry beside the target: standardised on
            the same training values as the scaler (unless ``fitted_covariates``: fitted already).
        masked_targets: also keep, for training only (``WindowedPanel.overhang``), the windows whose targets run
            past the end of each series' training part with at least one target inside, as the N-BEATS authors'
            sampler does (cut points up to the last value); the targets past the end are masked out of the loss.
            They do not fit the scaler or the linear start. Chronological and hold-out splits without
            ``within_parts`` only.
        untrained: the model learns nothing from training windows (naive, seasonal naive, the statistical
            methods): the training part may hold none, and a series needs only the values its forecast reads
            (one with ``pad``, else one window), so a series of a few values is still forecast.

    Series shorter than window + horizon (horizon + 1 with ``pad``) get no window, with a warning naming a few; they
    stay in the panel, so a fitted model still forecasts them (``dropped`` names them). So do series long enough for
    a window that get none in any part of the split; a series with windows but none in the scored part (test, else
    validation) is trained on but not scored (``unscored``); each with a warning. None long enough is an error.

    Raises:
        DataError / ConfigError with a one-line explanation (series too short, bad fractions...).
    """

    from .panel import as_panel

    window = check_positive_int("window", window)
    horizon = check_positive_int("horizon", horizon)
    stride = check_positive_int("stride", stride)
    split = split or SplitSpec()
    if scaler_fit not in SCALER_FITS:
        raise ConfigError(f"scaler_fit must be one of {', '.join(SCALER_FITS)}; got {scaler_fit!r}")
    if require_test and split.test <= 1e-9:
        raise ConfigError(
            f"split fractions train={split.train} validation={split.validation} leave no test part; "
            "make them sum to less than 1"
        )
    panel = as_panel(data)
    span = window + horizon
    if masked_targets and (split.method == "shuffled" or split.within_parts):
        raise ConfigError("masked_targets works with the chronological and hold-out splits without within_parts; "
                          "drop masked_targets or change the split")
    if pad and (split.method == "shuffled" or split.within_parts):
        raise ConfigError("pad works with the chronological and hold-out splits without within_parts; drop pad or "
                          "change the split")
    reach = window - 1 if pad else 0  # how far before its series a window may start
    lengths = panel.lengths
    least = (1 if pad else window) if untrained else span - reach  # the values a series needs
    short = lengths < least
    dropped = []
    if short.all() and untrained:  # only without pad: a window of inputs is all it needs
        raise TooShortError(f"window {window} needs {window} values but the "
                            + (f"series has {int(lengths[0])}" if panel.n_series == 1 else
                               f"longest of {panel.n_series} series has {int(lengths.max())}")
                            + f"; use a window of at most {max(int(lengths.max()), 1)} or pad=True")
    if short.all():
        if panel.n_series == 1:
            raise TooShortError(f"window {window} + horizon {horizon} needs at least {span} values but the series has "
                            f"{int(lengths[0])}; {_shorter(int(lengths[0]), horizon, reach=reach)}")
        raise TooShortError(f"all {panel.n_series} series are shorter than window {window} + horizon {horizon} "
                        f"(the longest has {int(lengths.max())} values); "
                        f"{_shorter(int(lengths.max()), horizon, reach=reach)}")
    if short.any():
        dropped = [panel.ids[i] for i in np.flatnonzero(short)]
        # kept without windows: no training or scoring on them, but a global model forecasts them from their last
        # values (padded with their first value where fewer than its window)
        warnings.warn(f"{len(dropped)} of {panel.n_series} series have fewer than the {least} values a window needs "
                      f"(window {window}" + ("" if untrained else f", horizon {horizon}") + (", padded" if pad else "")
                      + f"), so they are left out of training and scoring and only forecast ({few_names(dropped)})",
                      UserWarning, stacklevel=user_stacklevel())
    low, high = panel.offsets[:-1], panel.offsets[1:]
    part_bounds = overhang = None
    if split.method == "shuffled":
        every = _grid(low, high, span, stride)
        every = panel.in_id_order(every, window)
        order = np.random.RandomState(seed=split.shuffle_seed).permutation(len(every))
        n_train = int(split.train * len(every))
        n_validation = int(split.validation * len(every))
        starts = {"train": every[order[:n_train]], "validation": every[order[n_train:n_train + n_validation]],
                  "test": every[order[n_train + n_validation:]]}
    else:
        part_bounds = split_bounds(lengths, split)
        bounds = {"train": (low, low + part_bounds[:, 0]), "validation": (low + part_bounds[:, 0], low + part_bounds[:, 1]),
                  "test": (low + part_bounds[:, 1], high)}
        starts = {}
        if split.within_parts:
            for part, (part_low, part_high) in bounds.items():
                starts[part] = _grid(part_low, part_high, span, stride)
        else:
            # a window belongs to the part holding all its targets (start + window >= the part's start,
            # start + window + horizon <= its end); a window whose targets straddle a boundary is dropped,
            # so no target value appears in two parts. Starts stay on each series' lattice low + k * stride.
            for part, (part_low, part_high) in bounds.items():
                begin = np.maximum(part_low - window, low - reach)
                begin = low + -(-(begin - low) // stride) * stride
                starts[part] = _grid(begin, part_high, span, stride)
                if part == "train" and masked_targets:  # cut points (first targets) on to the part's last value
                    every = _grid(begin, part_high + horizon - 1, span, stride)
                    overhang = every[every + span > part_high[panel.series_of(every + window)]]
    if train_history is not None:
        positive_int("train_history", train_history)
        train_end = low + (part_bounds[:, 0] if part_bounds is not None else lengths)  # flat, per series

        def recent(found):  # the windows whose first target lies in the last train_history values
            return found[found + window >= train_end[panel.series_of(found + window)] - train_history]

        starts["train"] = recent(starts["train"])  # every target inside
        if overhang is not None:
            overhang = recent(overhang)
    needed = ([] if untrained else ["train"]) + (["validation"] if split.validation > 0 else []) + \
        (["test"] if require_test else [])
    for part in needed:
        if len(starts[part]) == 0:
            what = f"a series of {counted(lengths[0], 'value')}" if panel.n_series == 1 else \
                f"a panel of {panel.n_series} series of {int(lengths.min())}-{int(lengths.max())} values"
            fractions = ((f"the last {split.holdout} values as test" if split.holdout_test else
                          f"the last {split.validation_values} values as validation") if split.method == "holdout" else
                         f"a {split.train:g}/{split.validation:g}/{split.test:g} split")
            needed = ""
            if split.method == "holdout":  # a training window (a model that trains), then the held-out part(s)
                held = (split.validation_values if split.validation > 0 else 0) + \
                    (split.holdout if split.holdout_test else 0)
                needed = f" (each series needs at least {least + held} values)"
            raise TooShortError(
                f"{what} is too short for window {window}, horizon {horizon}, stride {stride} and {fractions}: "
                f"the {part} part gets no window{needed}; "
                + ("give the series more values" if untrained and pad else  # padded: only more values help
                   "use a shorter window, other fractions or longer series" if split.holdout_test or part != "train"
                   else "use validation=0 (no intervals then), a shorter window or longer series")
            )

    # a series long enough for a window may still get none under the split (each part holds whole windows' targets,
    # so a short series' few values in each part fit none): without any it is left out of training and scoring like
    # a series too short for a window; with some but none in the scored part it is trained on but not scored
    scored_part = "test" if require_test else "validation" if split.validation > 0 else None
    unscored = []
    if scored_part is not None:
        windowed = np.zeros(panel.n_series, dtype=bool)  # the series of every window's first target
        for found in [*starts.values(), *([overhang] if overhang is not None else [])]:
            windowed[panel.series_of(found + window)] = True
        in_scored = np.zeros(panel.n_series, dtype=bool)
        in_scored[panel.series_of(starts[scored_part] + window)] = True
        known = set(dropped)
        empty = [panel.ids[i] for i in np.flatnonzero(~windowed) if panel.ids[i] not in known]
        unscored = [panel.ids[i] for i in np.flatnonzero(windowed & ~in_scored)]
        if empty:
            dropped = dropped + empty
            warnings.warn(f"{len(empty)} of {panel.n_series} series have too few values for a whole window (window "
                          f"{window}, horizon {horizon}) inside any part of {_split_text(split)}, so they are left out "
                          f"of training and scoring and only forecast ({few_names(empty)}); give them more values or use "
                          "a shorter window or horizon", UserWarning, stacklevel=user_stacklevel())
        if unscored:
            held = "trained on" if not untrained else "forecast"
            outcome = (f"{held} but not scored" if scored_part == "test" else
                       f"{held}, but early stopping and the interval calibration read none of their values")
            warnings.warn(f"{len(unscored)} of {panel.n_series} series have no whole window (window {window}, horizon "
                          f"{horizon}) in their {scored_part} part under {_split_text(split)}, so they are {outcome} "
                          f"({few_names(unscored)}); give them more values or use a shorter window or horizon",
                          UserWarning, stacklevel=user_stacklevel())

    values = panel.values
    position_series = np.repeat(np.arange(panel.n_series, dtype=np.int32), lengths)
    mask = None
    if scaler is not None:  # given (another window length of the same data): used as it is
        pass
    elif scaler_fit == "all":
        scaler = Scaler(scaling)
        scaler.fit(values, position_series, panel.n_series)
    else:
        scaler = Scaler(scaling)
        # fit only on values that training windows contain (inputs and targets), never later ones
        covered = np.zeros(len(values) + 1, dtype=np.int64)
        train_first = low[panel.series_of(starts["train"] + window)] if len(starts["train"]) else starts["train"]
        np.add.at(covered, np.maximum(starts["train"], train_first), 1)  # a padded window covers from its series' start
        np.add.at(covered, starts["train"] + span, -1)
        mask = np.cumsum(covered[:len(values)]) > 0
        # a series without training windows (too short for one) falls back to the values before its first
        # validation or test target: still nothing from the parts it is evaluated on
        without = np.ones(panel.n_series, dtype=bool)
        without[position_series[mask]] = False
        if without.any():
            later = [starts[p] for p in ("validation", "test") if len(starts[p])]
            later = np.concatenate(later) if later else np.zeros(0, dtype=np.int64)
            first_target = np.full(panel.n_series, np.iinfo(np.int64).max)
            if len(later):
                np.minimum.at(first_target, panel.series_of(later + window), later + window)
            local = np.arange(len(values)) - low[position_series]
            limit = np.where(first_target < np.iinfo(np.int64).max, first_target - low, lengths)
            mask |= without[position_series] & (local < limit[position_series])
        scaler.fit(values[mask], position_series[mask], panel.n_series)
    scaled = scaler.transform(values, position_series).astype(np.float32)
    source = values
    if covariates is not None:
        if not fitted_covariates:
            covariates.fit(panel, mask)
        source = covariates.source(panel, horizon)
        scaled = np.concatenate([scaled[:, None], source[:, 1:].astype(np.float32)], axis=1)
    return WindowedPanel(panel=panel, window=window, horizon=horizon, stride=stride, split=split, scaler=scaler,
                         scaler_fit=scaler_fit, starts=starts, part_bounds=part_bounds, scaled=scaled,
                         dropped=dropped, unscored=unscored, train_history=train_history, pad=bool(pad),
                         covariates=covariates, source=source, overhang=overhang)


window_series = window_panel  # one function for one series and for many

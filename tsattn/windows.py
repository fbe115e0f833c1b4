"""Windowed samples, leakage-free splits and scaling.

A series of n values becomes samples X of shape (samples, window, features) and targets y of shape
(samples, horizon): the window's inputs are the `window` values before its first target. Windows are
assigned to train / validation / test by the time of their targets, scalers are fit on the training part
only (unless the caller explicitly asks for the tutorials' leaky whole-series fit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import ConfigError, DataError

SPLITS = ("chronological", "shuffled")
SCALINGS = ("minmax", "standard", "none")
SCALER_FITS = ("train", "all")
PARTS = ("train", "validation", "test")


def check_positive_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


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
        raise DataError(
            f"window {window} + horizon {horizon} needs at least {span} values but the series has "
            f"{len(array)}; use a shorter window or a longer series"
        )
    # views: (n - span + 1, features, span) -> strided, then (samples, span, features)
    views = np.lib.stride_tricks.sliding_window_view(array, span, axis=0)[::stride]
    views = np.moveaxis(views, -1, 1)
    return views[:, :window, :], views[:, window:, 0]


# ----------------------------------------------------------------------------------------------------
# Scaling
# ----------------------------------------------------------------------------------------------------
@dataclass
class Scaler:
    """Min-max to [0, 1], standardisation, or identity; fit on chosen values, invertible.

    ``minmax``: (x - min) / (max - min), as scikit-learn's MinMaxScaler in the tutorials.
    ``standard``: (x - mean) / std.
    """

    kind: str = "minmax"
    offset: float = 0.0
    scale: float = 1.0

    def __post_init__(self):
        if self.kind not in SCALINGS:
            raise ConfigError(f"scaling must be one of {', '.join(SCALINGS)}; got {self.kind!r}")

    def fit(self, values: np.ndarray) -> "Scaler":
        values = np.asarray(values, dtype=np.float64)
        if self.kind == "minmax":
            low, high = float(values.min()), float(values.max())
            self.offset, self.scale = low, (high - low) if high > low else 1.0
        elif self.kind == "standard":
            mean, std = float(values.mean()), float(values.std())
            self.offset, self.scale = mean, std if std > 0 else 1.0
        else:
            self.offset, self.scale = 0.0, 1.0
        return self

    def transform(self, values):
        return (np.asarray(values, dtype=np.float64) - self.offset) / self.scale

    def inverse_transform(self, values):
        return np.asarray(values, dtype=np.float64) * self.scale + self.offset

    def to_dict(self) -> dict:
        return {"kind": self.kind, "offset": self.offset, "scale": self.scale}

    @classmethod
    def from_dict(cls, state: dict) -> "Scaler":
        return cls(kind=state["kind"], offset=float(state["offset"]), scale=float(state["scale"]))


# ----------------------------------------------------------------------------------------------------
# Splits
# ----------------------------------------------------------------------------------------------------
@dataclass
class SplitSpec:
    """How windows are divided into train / validation / test parts.

    Attributes:
        method: "chronological" (by the time of each window's targets) or "shuffled" (the Fibonacci
            tutorial's np.random.RandomState(shuffle_seed) permutation of windows).
        train: fraction of the series (chronological) or of the windows (shuffled) for training.
        validation: fraction for validation; the test part gets the rest.
        within_parts: cut each part into windows on its own, so inputs never reach into an earlier part
            (the sunspots tutorial's get_XY on train and test separately). Default: inputs may reach back.
        shuffle_seed: seed of the shuffled split (13 in the tutorial).
    """

    method: str = "chronological"
    train: float = 0.7
    validation: float = 0.1
    within_parts: bool = False
    shuffle_seed: int = 13

    def __post_init__(self):
        if self.method not in SPLITS:
            raise ConfigError(f"split must be one of {', '.join(SPLITS)}; got {self.method!r}")
        for name, value in (("train fraction", self.train), ("validation fraction", self.validation)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"{name} must be a number between 0 and 1; got {value!r}")
        if self.train <= 0:
            raise ConfigError(f"train fraction must be above 0; got {self.train!r}")

    @property
    def test(self) -> float:
        return max(0.0, 1.0 - self.train - self.validation)


@dataclass
class WindowedSeries:
    """A series cut into windows, split into parts and scaled; the single input of every model.

    Positions are integer offsets into ``series``. ``starts[part]`` holds the first input position of
    each window of that part; its targets are at ``start + window .. start + window + horizon - 1``.
    """

    series: pd.Series
    window: int
    horizon: int
    stride: int
    split: SplitSpec
    scaler: Scaler
    scaler_fit: str
    starts: dict[str, np.ndarray]
    boundaries: tuple[int, int] | None
    scaled: np.ndarray = field(repr=False)

    # -- samples ---------------------------------------------------------------------------------------
    def count(self, part: str) -> int:
        return len(self.starts[part])

    def input_positions(self, part: str) -> np.ndarray:
        """(samples, window) integer positions of the inputs."""
        return self.starts[part][:, None] + np.arange(self.window)

    def target_positions(self, part: str) -> np.ndarray:
        """(samples, horizon) integer positions of the targets."""
        return self.starts[part][:, None] + self.window + np.arange(self.horizon)

    def X(self, part: str, scaled: bool = True) -> np.ndarray:
        """Inputs of a part: (samples, window, 1), float32 when scaled, series units otherwise."""
        source = self.scaled if scaled else self.series.to_numpy()
        return source[self.input_positions(part)][:, :, None]

    def y(self, part: str, scaled: bool = True) -> np.ndarray:
        """Targets of a part: (samples, horizon)."""
        source = self.scaled if scaled else self.series.to_numpy()
        return source[self.target_positions(part)]

    def target_index(self, part: str) -> pd.Index:
        """Index labels (timestamps) of each window's first target."""
        return self.series.index[self.starts[part] + self.window]

    def describe(self) -> dict:
        """A JSON-ready summary of the windowing, split and scaling (for config files)."""
        return {
            "window": self.window,
            "horizon": self.horizon,
            "stride": self.stride,
            "split": self.split.method,
            "train_fraction": self.split.train,
            "validation_fraction": self.split.validation,
            "within_parts": self.split.within_parts,
            "shuffle_seed": self.split.shuffle_seed if self.split.method == "shuffled" else None,
            "scaling": self.scaler.kind,
            "scaler_fit": self.scaler_fit,
            "scaler": self.scaler.to_dict(),
            "samples": {part: self.count(part) for part in PARTS},
            "boundaries": list(self.boundaries) if self.boundaries else None,
        }


def _chronological_starts(n: int, window: int, horizon: int, stride: int, spec: SplitSpec):
    train_end = int(round(n * spec.train))
    validation_end = int(round(n * (spec.train + spec.validation)))
    bounds = {"train": (0, train_end), "validation": (train_end, validation_end), "test": (validation_end, n)}
    starts = {}
    if spec.within_parts:
        for part, (low, high) in bounds.items():
            last = high - low - window - horizon
            starts[part] = low + np.arange(0, last + 1, stride) if last >= 0 else np.zeros(0, dtype=np.int64)
    else:
        every = np.arange(0, n - window - horizon + 1, stride)
        first_target, last_target = every + window, every + window + horizon - 1
        # a window belongs to the part holding all its targets; a window whose targets straddle a
        # boundary is dropped, so no target value appears in two parts
        for part, (low, high) in bounds.items():
            starts[part] = every[(first_target >= low) & (last_target < high)]
    return starts, (train_end, validation_end)


def _shuffled_starts(n: int, window: int, horizon: int, stride: int, spec: SplitSpec):
    every = np.arange(0, n - window - horizon + 1, stride)
    order = np.random.RandomState(seed=spec.shuffle_seed).permutation(len(every))
    n_train = int(spec.train * len(every))
    n_validation = int(spec.validation * len(every))
    return {
        "train": every[order[:n_train]],
        "validation": every[order[n_train : n_train + n_validation]],
        "test": every[order[n_train + n_validation :]],
    }


def window_series(
    series: pd.Series,
    window: int,
    horizon: int = 1,
    stride: int = 1,
    split: SplitSpec | None = None,
    scaling: str = "minmax",
    scaler_fit: str = "train",
    require_test: bool = True,
) -> WindowedSeries:
    """Window, split and scale a validated series.

    Args:
        series: a validated float Series (see :func:`tsattn.data.as_series`).
        window, horizon, stride: as in :func:`make_windows`.
        split: a :class:`SplitSpec` (default chronological 0.7 / 0.1 / 0.2).
        scaling: "minmax" (to [0, 1], default), "standard" or "none".
        scaler_fit: "train" (default: values covered by training windows only) or "all" (the whole
            series, as the tutorials do; leaks the test range, so only for reproducing them).
        require_test: refuse splits that leave the test part without windows.

    Raises:
        DataError / ConfigError with a one-line explanation (series too short, bad fractions...).
    """
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
    values = series.to_numpy(dtype=np.float64)
    n = len(values)
    if n < window + horizon:
        raise DataError(
            f"window {window} + horizon {horizon} needs at least {window + horizon} values but the series "
            f"has {n}; use a shorter window or a longer series"
        )
    if split.method == "chronological":
        starts, boundaries = _chronological_starts(n, window, horizon, stride, split)
    else:
        starts, boundaries = _shuffled_starts(n, window, horizon, stride, split), None
    needed = ["train"] + (["validation"] if split.validation > 0 else []) + (["test"] if require_test else [])
    for part in needed:
        if len(starts[part]) == 0:
            raise DataError(
                f"a series of {n} values is too short for window {window}, horizon {horizon}, stride {stride} "
                f"and a {split.train:g}/{split.validation:g}/{split.test:g} split: the {part} part gets no "
                "window; use a shorter window, other fractions or a longer series"
            )

    scaler = Scaler(scaling)
    if scaler_fit == "all":
        scaler.fit(values)
    else:
        # fit only on values that training windows contain (inputs and targets), never later ones
        covered = np.zeros(n + 1, dtype=np.int64)
        np.add.at(covered, starts["train"], 1)
        np.add.at(covered, starts["train"] + window + horizon, -1)
        scaler.fit(values[np.cumsum(covered[:n]) > 0])
    scaled = scaler.transform(values).astype(np.float32)
    return WindowedSeries(
        series=series,
        window=window,
        horizon=horizon,
        stride=stride,
        split=split,
        scaler=scaler,
        scaler_fit=scaler_fit,
        starts=starts,
        boundaries=boundaries,
        scaled=scaled,
    )

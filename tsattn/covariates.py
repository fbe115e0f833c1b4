"""Exogenous covariates: which columns are past-observed, future-known or static, and how they reach a network.

NeuralForecast's three kinds, under its names:

- ``hist_exog``: past-observed columns (known up to the forecast origin: a price observed each day, a
  leading indicator). A window reads them at its input steps only.
- ``futr_exog``: future-known columns (known for the forecast steps too: promotions, a price list, a law).
  ``calendar`` adds generated ones from the timestamps (month, day of week, ...), each as a sine and a cosine
  of its cycle, so nobody builds them by hand.
- ``stat_exog``: static features, one row per series: numbers (standardised over series) or categories
  (one-hot, one column per category seen in fit; a category never seen in fit gets all zeros and a warning).

Every network takes them through one input tensor (batch, window, features), so every model present and future
uses them, attends over them and keeps them through ensembles, save/load and engines: a window's step t holds the
target, the past-observed values at t, the future-known values ``horizon`` steps later (the last ``horizon`` rows
of a window hold the forecast steps' future values), and the static features. The "source" of a panel is that
layout in one flat array, (N, 1 + columns): the target in series units in column 0, then the covariates already
standardised (on the training part), future-known ones shifted. A future-known value after a series' end comes from
the future frame given to ``predict``; where none is given it is NaN, and a forecast that would read one refuses.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from .data import check_exog_columns
from .errors import ConfigError, DataError, user_stacklevel
from .io import describe_index, future_index

# name -> (cycle length, the position in the cycle of each timestamp)
CALENDAR = {
    "month": (12, lambda t: t.month - 1),
    "quarter": (4, lambda t: t.quarter - 1),
    "weekofyear": (53, lambda t: np.asarray(t.isocalendar().week, dtype=np.int64) - 1),
    "dayofweek": (7, lambda t: t.dayofweek),
    "dayofmonth": (31, lambda t: t.day - 1),
    "dayofyear": (366, lambda t: t.dayofyear - 1),
    "hour": (24, lambda t: t.hour),
    "minute": (60, lambda t: t.minute),
}
KINDS = ("hist_exog", "futr_exog", "stat_exog", "calendar")  # the settings that name covariates, in the input's order
# what each kind of the input layout is called where a forecaster refuses it (Capabilities.covariates holds the keys)
KIND_NAMES = {"hist": "past-observed (hist_exog)", "futr": "future-known (futr_exog, calendar)", "stat": "static (stat_exog)"}


class Layout(NamedTuple):
    """How many columns of each kind follow the target in a network's input (and in the flat source of a panel):
    past-observed, future-known (calendar features included), static. A tuple, so it unpacks and saves as one."""

    hist: int
    futr: int
    stat: int

    @classmethod
    def of(cls, value) -> "Layout | None":
        """A stored layout (a list of three integers, as artefacts keep it) or None."""
        return None if value is None else cls(*(int(n) for n in value))


def _names(kind: str, value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{kind} must be a list of column names (e.g. [\"price\", \"promo\"]); got {value!r}")
    return tuple(value)


def check_covariates(hist_exog=None, futr_exog=None, stat_exog=None, calendar=None) -> tuple:
    """The four settings as tuples of names, checked: lists of text, no column in two kinds, known calendar
    features (one line naming the problem and the fix)."""
    named = {kind: _names(kind, value) for kind, value in zip(KINDS, (hist_exog, futr_exog, stat_exog, calendar))}
    seen = {}
    for kind in KINDS:
        if len(set(named[kind])) != len(named[kind]):
            raise ConfigError(f"{kind} names a column twice ({', '.join(named[kind])}); name each column once")
    for kind in KINDS[:3]:
        for name in named[kind]:
            if name in seen:
                raise ConfigError(f"column {name!r} is named in {seen[name]} and in {kind}; give each covariate one kind "
                                  "(hist_exog: known up to the origin, futr_exog: known ahead, stat_exog: per series)")
            seen[name] = kind
    unknown = [name for name in named["calendar"] if name not in CALENDAR]
    if unknown:
        raise ConfigError(f"unknown calendar feature {unknown[0]!r}; calendar takes {', '.join(CALENDAR)}")
    return tuple(named[kind] for kind in KINDS)


def calendar_features(index: pd.Index, names) -> np.ndarray:
    """(len(index), 2 * len(names)) sine and cosine of each calendar feature's cycle at each timestamp."""
    if not names:
        return np.zeros((len(index), 0))
    if isinstance(index, pd.PeriodIndex):
        index = index.to_timestamp()
    if not isinstance(index, pd.DatetimeIndex):
        raise DataError(f"calendar features ({', '.join(names)}) need dates, but the series have integer times; give "
                        "the time column as dates or drop calendar")
    columns = []
    for name in names:
        cycle, position = CALENDAR[name]
        angle = 2 * np.pi * np.asarray(position(index), dtype=np.float64) / cycle
        columns += [np.sin(angle), np.cos(angle)]
    return np.stack(columns, axis=1)


@dataclass
class Covariates:
    """Which covariates a model takes, and (once fitted on the training part) how they are standardised and encoded.

    Attributes:
        hist, futr, stat, calendar: the column names of each kind (calendar: generated features).
        mean, std: per dynamic column (hist then futr), over the training part of every series.
        static: per static column, ("numeric", mean, std) or ("categorical", [categories seen in fit]).
    """

    hist: tuple = ()
    futr: tuple = ()
    stat: tuple = ()
    calendar: tuple = ()
    mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    std: np.ndarray = field(default_factory=lambda: np.ones(0))
    static: dict = field(default_factory=dict)

    @classmethod
    def of(cls, hist_exog=None, futr_exog=None, stat_exog=None, calendar=None) -> "Covariates | None":
        """The covariates these settings name, or None when they name none."""
        hist, futr, stat, cal = check_covariates(hist_exog, futr_exog, stat_exog, calendar)
        if not (hist or futr or stat or cal):
            return None
        return cls(hist, futr, stat, cal)

    # -- shape -------------------------------------------------------------------------------------------
    @property
    def dynamic(self) -> tuple:
        """The panel columns read per step: past-observed, then future-known."""
        return self.hist + self.futr

    @property
    def static_columns(self) -> list[str]:
        """The encoded static columns: a number's name, or name=category per category seen in fit."""
        out = []
        for name in self.stat:
            kind, *info = self.static.get(name, ("numeric",))
            out += [name] if kind == "numeric" else [f"{name}={c}" for c in info[0]]
        return out

    @property
    def layout(self) -> Layout:
        """(past-observed, future-known, static) columns of a network's input after the target."""
        return Layout(len(self.hist), len(self.futr) + 2 * len(self.calendar), len(self.static_columns))

    @property
    def columns(self) -> list[str]:
        """The network input's columns after the target, in order."""
        calendar = [f"{name}_{part}" for name in self.calendar for part in ("sin", "cos")]
        return list(self.hist) + list(self.futr) + calendar + self.static_columns

    def describe(self) -> dict:
        return {"hist_exog": list(self.hist), "futr_exog": list(self.futr), "stat_exog": list(self.stat),
                "calendar": list(self.calendar)}

    # -- fitting -----------------------------------------------------------------------------------------
    def fit(self, panel, mask: np.ndarray | None = None) -> "Covariates":
        """Standardise each dynamic column on the rows in ``mask`` (the training part) and encode the static
        features over the panel's series (categories one-hot, numbers standardised)."""
        self.check_panel(panel)
        if self.calendar:  # hour on monthly data: one value at every step, nothing for a model to read
            features = calendar_features(panel.index, self.calendar)
            constant = [name for k, name in enumerate(self.calendar) if np.ptp(features[:, 2 * k:2 * k + 2], axis=0).max()
                        < 1e-12]
            if constant:
                warnings.warn(f"calendar feature(s) {', '.join(constant)} take one value at every timestamp of this data "
                              f"(its frequency is {panel.freq or 'irregular'}), so they tell the model nothing; drop "
                              "them from calendar", UserWarning, stacklevel=user_stacklevel())
        dynamic = self.dynamic_values(panel)
        rows = dynamic if mask is None else dynamic[mask]
        if len(rows):
            self.mean, std = rows.mean(axis=0), rows.std(axis=0)
        else:
            self.mean, std = np.zeros(dynamic.shape[1]), np.ones(dynamic.shape[1])
        self.std = np.where(np.isfinite(std) & (std > 0), std, 1.0)
        self.static = {}
        for name in self.stat:
            column = panel.static[name]
            if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
                values = column.to_numpy(dtype=np.float64)
                if not np.isfinite(values).all():
                    raise DataError(f"static feature {name!r} has a non-finite value; give every series a finite number")
                spread = float(values.std())
                self.static[name] = ("numeric", float(values.mean()), spread if spread > 0 else 1.0)
            else:
                self.static[name] = ("categorical", sorted({str(v) for v in column}))
        return self

    def check_panel(self, panel) -> None:
        """One line when the panel lacks a column these covariates need, or has made-up dates for calendar ones."""
        if self.calendar and panel.synthetic_dates:
            raise DataError(f"calendar features ({', '.join(self.calendar)}) need real dates, but this data's dates "
                            "are made up (M3 and M1 come without start dates: every series starts at 1990-01); drop "
                            "calendar, or give the series with their real dates")
        for name in self.dynamic:
            if name not in panel.exog_names:
                raise DataError(f"covariate column {name!r} is not in the data; give it beside unique_id, ds and y "
                                f"(the data has {', '.join(panel.exog_names) or 'no covariate columns'})")
        if self.stat:
            if panel.static is None:
                raise DataError(f"static features {', '.join(self.stat)} need a static frame (static_df=..., CLI "
                                "--static-csv) with the data's id column and one row per series")
            check_exog_columns(self.stat, {}, "static_df", [str(c) for c in panel.static.columns])

    def dynamic_values(self, panel) -> np.ndarray:
        """(N, hist + futr) raw values of the dynamic columns."""
        if not self.dynamic:
            return np.zeros((len(panel.values), 0))
        positions = [panel.exog_names.index(name) for name in self.dynamic]
        return np.asarray(panel.exog[:, positions], dtype=np.float64)

    def encode_static(self, panel) -> np.ndarray:
        """(n_series, static columns) encoded static features of the panel's series."""
        if not self.stat:
            return np.zeros((panel.n_series, 0))
        self.check_panel(panel)
        parts = []
        for name in self.stat:
            kind, *info = self.static[name]
            column = panel.static[name]
            if kind == "numeric":
                values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
                if not np.isfinite(values).all():
                    raise DataError(f"static feature {name!r} was a number in fit but is {column.iloc[0]!r} here; give "
                                    "numbers")
                parts.append(((values - info[0]) / info[1])[:, None])
            else:
                categories = info[0]
                text = [str(v) for v in column]
                unseen = sorted({v for v in text if v not in categories})
                if unseen:
                    warnings.warn(f"static feature {name!r} has categories never seen in fit ({', '.join(unseen[:3])}): "
                                  "they get no category's column (all zeros)",
                                  UserWarning, stacklevel=user_stacklevel())
                parts.append(np.array([[v == c for c in categories] for v in text], dtype=np.float64)
                             .reshape(len(text), len(categories)))
        return np.concatenate(parts, axis=1)

    # -- the network's flat source -----------------------------------------------------------------------
    def source(self, panel, horizon: int, future=None) -> np.ndarray:
        """(N, 1 + columns): the target in series units, then the standardised covariates in a network's layout
        (future-known ones ``horizon`` steps ahead; static ones on every step).

        ``future``: (n_series, horizon, len(futr)) raw future-known values for the steps after each series' end
        (what ``predict`` receives), or None: those steps are NaN (never read when fitting or scoring, since every
        window's targets lie inside its series)."""
        n = len(panel.values)
        numbers = np.repeat(np.arange(panel.n_series), panel.lengths)
        dynamic = (self.dynamic_values(panel) - self.mean) / self.std if self.dynamic else np.zeros((n, 0))
        hist = dynamic[:, :len(self.hist)]
        futr = np.concatenate([dynamic[:, len(self.hist):], calendar_features(panel.index, self.calendar)], axis=1)
        shifted = np.full_like(futr, np.nan)
        if futr.shape[1]:
            local = np.arange(n) - panel.offsets[numbers]
            ahead = local + horizon
            inside = ahead < panel.lengths[numbers]
            shifted[inside] = futr[np.flatnonzero(inside) + horizon]
            after = np.flatnonzero(~inside)  # steps whose future value lies after the series' end
            step = ahead[after] - panel.lengths[numbers[after]]  # 0 .. horizon - 1
            tail = np.full((panel.n_series, horizon, futr.shape[1]), np.nan)
            if future is not None and self.futr:
                tail[:, :, :len(self.futr)] = (np.asarray(future, dtype=np.float64) - self.mean[len(self.hist):]) / \
                    self.std[len(self.hist):]
            if self.calendar:
                for i in range(panel.n_series):
                    labels = future_index(describe_index(panel.series_index(i)), horizon)
                    tail[i, :, len(self.futr):] = calendar_features(labels, self.calendar)
            shifted[after] = tail[numbers[after], step]
        static = self.encode_static(panel)[numbers]
        return np.concatenate([np.asarray(panel.values, dtype=np.float64)[:, None], hist, shifted, static], axis=1)

    # -- storage -----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {**self.describe(), "mean": self.mean.tolist(), "std": self.std.tolist(),
                "static": {name: list(info) for name, info in self.static.items()}}

    @classmethod
    def from_dict(cls, state: dict) -> "Covariates":
        spec = cls(*check_covariates(state.get("hist_exog"), state.get("futr_exog"), state.get("stat_exog"),
                                     state.get("calendar")))
        spec.mean = np.asarray(state["mean"], dtype=np.float64)
        spec.std = np.asarray(state["std"], dtype=np.float64)
        if spec.mean.shape != (len(spec.dynamic),) or spec.std.shape != spec.mean.shape or (spec.std <= 0).any():
            raise ValueError("covariate means and scales must have one entry per dynamic covariate, scales > 0")
        spec.static = {name: tuple(info) for name, info in state.get("static", {}).items()}
        return spec


def target_column(values: np.ndarray) -> np.ndarray:
    """The target of a flat source (column 0 of an (N, 1 + columns) array), or flat 1-D values themselves: what a
    model that reads no covariates forecasts from."""
    values = np.asarray(values)
    return values[:, 0] if values.ndim == 2 else values

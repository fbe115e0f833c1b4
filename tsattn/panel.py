"""Panels: one or many series in one flat array with per-series offsets, the one data model of tsattn.

A long DataFrame (``unique_id``, ``ds``, ``y``, the names NeuralForecast and statsforecast use), a dict of
Series, or a single Series / one-column DataFrame / 1-D array all become a :class:`Panel`. A single series
is a panel of one and travels the same path as 1428 M3 series.

    panel = as_panel(frame)                       # long frame: unique_id, ds, y
    panel = as_panel({"a": s1, "b": s2})          # dict of Series
    panel = as_panel(series)                      # one series
    panel.values[panel.offsets[i]:panel.offsets[i + 1]]   # series i
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .data import (FILL_METHODS, as_series, check_exog_columns, csv_columns, date_failure, infer_freq,
                   parse_timestamps, read_csv_frame, read_csv_series, time_and_values, time_text)
from .errors import ConfigError, DataError, MissingColumnError, user_stacklevel

ID_COLUMN, TIME_COLUMN, VALUE_COLUMN = "unique_id", "ds", "y"


@dataclass
class Panel:
    """Validated series laid end to end.

    Attributes:
        ids: series identifiers (strings), in order.
        values: (N,) float64, series after series.
        offsets: (n_series + 1,) int64; series i is ``values[offsets[i]:offsets[i + 1]]``.
        index: (N,) time labels in the same order (DatetimeIndex, PeriodIndex or integer Index).
        freq: the panel's one frequency ("MS", "QS-JAN", ...) or None (integer steps or irregular).
        name: the value's name, for labels ("sunspots", "y").
        horizon: the competition hold-out length when the source defines one (M3 monthly: 18), else None.
        single_input: True when the user passed one series (Series, array): results come back as a Series.
        exog: (N, k) float64 covariate columns beside ``values`` (past-observed and future-known ones, raw), or None.
        exog_names: the names of those columns, in order.
        static: one row of static features per series (indexed by id, raw: numbers or categories), or None.
        synthetic_dates: True when the source gives no real dates and the time labels are made up (the M3 / M1
            frames: every series from 1990-01); calendar features are refused on them.
    """

    ids: list[str]
    values: np.ndarray
    offsets: np.ndarray
    index: pd.Index
    freq: str | None
    name: str | None = None
    horizon: int | None = None
    single_input: bool = False
    exog: np.ndarray | None = None
    exog_names: tuple = ()
    static: pd.DataFrame | None = None
    synthetic_dates: bool = False

    # -- shape -----------------------------------------------------------------------------------------
    @property
    def n_series(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def index_kind(self) -> str:
        if isinstance(self.index, pd.DatetimeIndex):
            return "datetime"
        if isinstance(self.index, pd.PeriodIndex):
            return "period"
        return "range"

    def number(self, series_id) -> int:
        """Position of a series id, or a clear error naming a few known ids."""
        lookup = getattr(self, "_lookup", None)
        if lookup is None:
            lookup = self._lookup = {sid: i for i, sid in enumerate(self.ids)}
        key = str(series_id)
        if key not in lookup:
            raise DataError(f"unknown series id {series_id!r}; known ids include {', '.join(self.ids[:5])}")
        return lookup[key]

    @property
    def ranks(self) -> np.ndarray:
        """Each series' place when the ids are sorted: seeded draws over series (training windows, the N-BEATS
        sampler, the shuffled split) go by it, so a fit does not depend on the order the series came in."""
        ranks = getattr(self, "_ranks", None)
        if ranks is None:
            ranks = self._ranks = np.empty(len(self.ids), dtype=np.int64)
            ranks[np.argsort(np.asarray(self.ids, dtype=object), kind="stable")] = np.arange(len(self.ids))
        return ranks

    def in_id_order(self, starts: np.ndarray, window: int) -> np.ndarray:
        """Window starts (each in the series of its first target, ``start + window``) series by series in sorted-id
        order, each series' in time order."""
        return starts[np.lexsort((starts, self.ranks[self.series_of(starts + window)]))]

    def series_of(self, positions: np.ndarray) -> np.ndarray:
        """The series number of each flat position."""
        return np.searchsorted(self.offsets, positions, side="right") - 1

    # -- one series --------------------------------------------------------------------------------------
    def series_index(self, i: int) -> pd.Index:
        labels = self.index[self.offsets[i]:self.offsets[i + 1]]
        if isinstance(labels, pd.DatetimeIndex) and self.freq is not None:
            return pd.DatetimeIndex(labels, freq=self.freq)
        if self.index_kind == "range" and len(labels) and (np.diff(np.asarray(labels)) == 1).all():
            return pd.RangeIndex(int(labels[0]), int(labels[0]) + len(labels), name=labels.name)
        return labels

    def series(self, i: int) -> pd.Series:
        return pd.Series(self.values[self.offsets[i]:self.offsets[i + 1]], index=self.series_index(i),
                         name=self.name if self.single_input else self.ids[i])

    # -- conversions -------------------------------------------------------------------------------------
    def to_frame(self, id_column: str = ID_COLUMN, time_column: str = TIME_COLUMN,
                 value_column: str = VALUE_COLUMN) -> pd.DataFrame:
        """The long frame: one row per (series, timestamp); with the panel's hold-out length as ``attrs["horizon"]``,
        as the datasets carry it, so a frame made from a competition panel's values (cross_validation's histories)
        splits as the panel does (its hold-out, not the last 10% of each series)."""
        ids = pd.Categorical.from_codes(np.repeat(np.arange(self.n_series), self.lengths), categories=self.ids)
        exog = {} if self.exog is None else {name: self.exog[:, j] for j, name in enumerate(self.exog_names)}
        frame = pd.DataFrame({id_column: ids, time_column: np.asarray(self.index) if self.index_kind == "range"
                              else self.index, value_column: self.values, **exog})
        if self.horizon:
            frame.attrs["horizon"] = int(self.horizon)
        return frame

    def subset(self, keep: np.ndarray) -> "Panel":
        """The panel of the series numbered in ``keep`` (in that order)."""
        keep = np.asarray(keep, dtype=np.int64)
        return self.take(keep, self.offsets[keep], self.lengths[keep], self.single_input and len(keep) == 1)

    def heads(self, counts) -> "Panel":
        """The first ``counts[i]`` values of each series (covariates and static features with them)."""
        return self.take(np.arange(self.n_series), self.offsets[:-1], counts, single_input=False)

    def take(self, numbers, starts, counts, single_input: bool | None = None) -> "Panel":
        """The panel of ``counts[i]`` values from flat position ``starts[i]`` of series ``numbers[i]`` (a subset,
        tails, heads), covariates and static features carried along."""
        numbers = np.asarray(numbers, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        pieces = [np.arange(a, a + n) for a, n in zip(np.asarray(starts, dtype=np.int64), counts)]
        positions = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        ids = [self.ids[i] for i in numbers]
        return Panel(ids, self.values[positions], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                     self.index[positions], self.freq, self.name, self.horizon,
                     self.single_input if single_input is None else single_input,
                     None if self.exog is None else self.exog[positions], self.exog_names,
                     None if self.static is None else self.static.loc[ids])


# ----------------------------------------------------------------------------------------------------
# Building panels
# ----------------------------------------------------------------------------------------------------
def _step_of(index: pd.Index) -> str | None:
    """The frequency (datetime / period) or integer step ("step=2") of one series' index; None if irregular."""
    if isinstance(index, pd.PeriodIndex):
        if len(index) > 1 and not (np.diff(index.asi8) == 1).all():
            return None
        return index.freqstr
    if isinstance(index, pd.DatetimeIndex):
        if index.freq is not None:
            return index.freqstr
        if len(index) < 3:
            return "short"
        return infer_freq(index)
    values = np.asarray(index)
    if len(values) < 2:
        return "short"
    steps = np.unique(np.diff(values))
    return f"step={steps[0]}" if len(steps) == 1 else None


def check_freq(freq):
    """A frequency users state (``freq="MS"``, ``"QS"``, ``"D"``; an integer step for integer times), checked:
    the pandas offset, the integer step, or None."""
    if freq is None:
        return None
    if isinstance(freq, (int, np.integer)) and not isinstance(freq, bool):
        if freq < 1:
            raise ConfigError(f"freq as an integer step must be >= 1; got {freq}")
        return int(freq)
    if isinstance(freq, str) and freq.strip().isdigit():
        return check_freq(int(freq))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return pd.tseries.frequencies.to_offset(freq)
    except (ValueError, TypeError):
        raise ConfigError(f"freq {freq!r} is not a pandas frequency (e.g. \"MS\" month start, \"QS\", \"D\", \"h\") "
                          "or an integer step") from None


def _on_grid(series: pd.Series, freq, fill, label: str) -> pd.Series:
    """``series`` on the regular grid of the stated ``freq`` (:func:`check_freq`): refused with the fix when a
    timestamp is off it, missing steps inserted and filled by ``fill`` (refused without one)."""
    index = series.index
    if isinstance(index, pd.PeriodIndex):
        if isinstance(freq, int) or pd.Period(index[0], freq=freq).freqstr != index[0].freqstr:
            raise DataError(f"{label} has periods of frequency {index.freqstr}, not freq={_freq_text(freq)}; state "
                            f"its own frequency (freq={index.freqstr!r}) or leave freq unset")
        grid = pd.period_range(index[0], index[-1], freq=index.freq)
    elif isinstance(index, pd.DatetimeIndex):
        if isinstance(freq, int):
            raise DataError(f"freq={freq} is an integer step but {label} has dates; state a date frequency "
                            "(e.g. freq=\"MS\") or leave freq unset")
        grid = pd.date_range(index[0], index[-1], freq=freq)
        if not len(grid) or grid[0] != index[0]:
            raise DataError(f"{label} starts at {time_text(index[0])}, which is not on the grid of "
                            f"freq={_freq_text(freq)}; state the frequency its timestamps follow (e.g. \"MS\" for "
                            "month starts, \"ME\" for month ends) or leave freq unset")
    else:
        if not isinstance(freq, int):
            raise DataError(f"{label} has integer times but freq={_freq_text(freq)} names dates; state an integer "
                            "step (freq=1) or leave freq unset")
        grid = pd.Index(np.arange(index[0], index[-1] + 1, freq))
    off = ~index.isin(grid)
    if off.any():
        raise DataError(f"{label} has {int(off.sum())} timestamp(s) off the grid of freq={_freq_text(freq)}, first "
                        f"{time_text(index[off][0])}; resample it to that frequency or state the one it follows")
    if len(grid) > len(index):
        missing = grid[~grid.isin(index)]
        if fill is None:
            raise DataError(f"{label} misses {len(missing)} step(s) of freq={_freq_text(freq)}, first "
                            f"{time_text(missing[0])}; fill them with fill='interpolate' or 'ffill' (CLI: --fill interpolate)")
        series = as_series(series.reindex(grid), name=label, fill=fill)
    if isinstance(index, pd.DatetimeIndex):
        series.index = pd.DatetimeIndex(series.index, freq=freq)
    return series


def _freq_text(freq) -> str:
    return str(freq) if isinstance(freq, int) else freq.freqstr


def _assemble(ids: list[str], series_list: list[pd.Series], name, horizon=None, single_input=False,
              freq=None, fill=None, exog_list=None, static=None) -> Panel:
    """One Panel from validated series, refusing a mix of frequencies or index kinds; with a stated ``freq``
    (:func:`check_freq`) every series is put on its grid (:func:`_on_grid`)."""
    if freq is not None:
        series_list = [_on_grid(s, freq, fill, "the series" if len(ids) == 1 else f"series {sid!r}")
                       for sid, s in zip(ids, series_list)]
    kinds = {type(s.index).__name__ if not isinstance(s.index, pd.RangeIndex) else "Index" for s in series_list}
    kinds = {"Index" if k in ("Index", "RangeIndex") else k for k in kinds}
    if len(kinds) > 1:
        raise DataError(f"the series mix index types ({', '.join(sorted(kinds))}); give every series the same kind "
                        "of time column (all dates or all integers)")
    steps = [_step_of(s.index) for s in series_list]
    if isinstance(freq, int):
        steps = [f"step={freq}"] * len(steps)
    counted = Counter(step for step in steps if step not in (None, "short"))
    freq_key = counted.most_common(1)[0][0] if counted else None
    irregular = [sid for sid, step in zip(ids, steps) if step is None]
    if irregular:
        raise DataError(f"{len(irregular)} series have irregular timestamps ({', '.join(irregular[:3])}); insert "
                        "the missing steps with fill='interpolate' (CLI: --fill interpolate) or resample them to one "
                        "regular frequency first")
    if len(series_list) > 1:
        differ = [f"{sid} ({step})" for sid, step in zip(ids, steps) if step not in (freq_key, "short")]
        if differ:
            raise DataError(f"the panel mixes frequencies: most series are {freq_key} but {len(differ)} differ "
                            f"({', '.join(differ[:3])}); resample them to one frequency or fit them separately")
    freq = freq_key if freq_key is not None and not freq_key.startswith("step=") else None
    lengths = np.array([len(s) for s in series_list], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = np.concatenate([s.to_numpy(dtype=np.float64) for s in series_list]) if series_list else np.zeros(0)
    with np.errstate(over="ignore", invalid="ignore"):
        spans = np.maximum.reduceat(values, offsets[:-1]) - np.minimum.reduceat(values, offsets[:-1])
    if not np.isfinite(spans).all():
        bad = int(np.flatnonzero(~np.isfinite(spans))[0])
        low, high = values[offsets[bad]:offsets[bad + 1]].min(), values[offsets[bad]:offsets[bad + 1]].max()
        what = "the series" if len(ids) == 1 else f"series {ids[bad]!r}"
        raise DataError(f"{what} spans {low:.3g} to {high:.3g}, more than float64 can represent as a difference; "
                        "rescale it first (e.g. divide by 1e300)")
    index = series_list[0].index.append([s.index for s in series_list[1:]]) if len(series_list) > 1 \
        else series_list[0].index
    if isinstance(index, pd.DatetimeIndex):
        index = pd.DatetimeIndex(index, freq=None)
    elif not isinstance(index, pd.PeriodIndex):
        index = pd.Index(np.asarray(index), name=index.name)
    name = None if name is None else str(name)
    exog, exog_names = None, ()
    if exog_list is not None:
        exog = np.concatenate([_aligned_exog(frame, s, sid) for frame, s, sid in zip(exog_list, series_list, ids)])
        exog_names = tuple(exog_list[0].columns)
    return Panel(ids, values, offsets, index, freq, name, horizon, single_input, exog, exog_names,
                 check_static(static, ids))


def _aligned_exog(frame: pd.DataFrame, series: pd.Series, sid: str) -> np.ndarray:
    """A series' covariates on its final index (after fill / the stated grid): a step tsattn inserted into the target
    has no covariate value, and covariates are never invented."""
    if len(frame) == len(series) and frame.index.equals(series.index):
        return frame.to_numpy(dtype=np.float64)
    aligned = frame.reindex(series.index)
    missing = aligned.isna().any(axis=1).to_numpy()
    if missing.any():
        first = series.index[int(np.flatnonzero(missing)[0])]
        raise DataError(f"series {sid!r} has no covariate values at {time_text(first)} (a step filled into the target; "
                        f"{int(missing.sum())} in all); give covariate values for every step of every series")
    return aligned.to_numpy(dtype=np.float64)


def static_by_id(static, id_column: str | None):
    """Static features keyed by the data's own id column (as NeuralForecast keys static_df by id_col): that column
    renamed ``unique_id``, which :func:`check_static` reads."""
    if isinstance(static, pd.DataFrame) and id_column and id_column in static.columns and \
            ID_COLUMN not in static.columns:
        return static.rename(columns={id_column: ID_COLUMN})
    return static


def check_static(static, ids) -> pd.DataFrame | None:
    """Static features, one row per series (a frame with the id column ``unique_id`` or indexed by id): every series
    has exactly one row; rows of series not in the data are dropped. Returned indexed by id, in the panel's order."""
    if static is None:
        return None
    if not isinstance(static, pd.DataFrame):
        raise DataError(f"static features must be a DataFrame with one row per series; got {type(static).__name__}")
    frame = static.copy()
    if ID_COLUMN in frame.columns:
        frame = frame.set_index(ID_COLUMN)
    frame.index = pd.Index([str(i) for i in frame.index])
    duplicated = frame.index[frame.index.duplicated()]
    if len(duplicated):
        raise DataError(f"static features have {len(duplicated)} duplicate row(s) for series {duplicated[0]!r}; give "
                        "one row per series")
    missing = [sid for sid in ids if sid not in frame.index]
    if missing:
        held = ", ".join(map(str, frame.index[:3])) + (f" (+{len(frame) - 3} more)" if len(frame) > 3 else "")
        raise DataError(f"static features have no row for {len(missing)} series ({', '.join(missing[:3])}); they hold "
                        f"rows for {held or 'no series'}: give one row per series, keyed by the data's id column (or "
                        f"{ID_COLUMN}, or ids as the index); series not seen in fit need static_df= (CLI --static-csv)")
    frame = frame.loc[list(ids)]
    for column in frame.columns:
        if frame[column].isna().any():
            first = frame.index[frame[column].isna().to_numpy()][0]
            raise DataError(f"static feature {column!r} is missing for series {first!r}; give every series a value")
    return frame


def _parse_times(column: pd.Series, label: str, expected: pd.Index | None = None) -> pd.Index:
    """``expected``: the times the column should hold (a future frame's steps), which tell dates written day first
    from month first where both readings are regular (:func:`tsattn.data.parse_timestamps`)."""
    if isinstance(column.dtype, pd.PeriodDtype):
        return pd.PeriodIndex(column)
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return pd.DatetimeIndex(column)
    if pd.api.types.is_integer_dtype(column.dtype):
        return pd.Index(column.to_numpy(dtype=np.int64))
    try:
        return parse_timestamps(column, expected)
    except DataError:
        raise  # its own line (dates that read day first and month first alike)
    except (ValueError, TypeError) as exc:
        raise DataError(f"time column {label!r} cannot be parsed as dates or integers ({date_failure(exc)}); write "
                        "every date in one format (e.g. YYYY-MM-DD)") from None


MAX_COVARIATE = 1e30  # |value| above this is refused: scaled and cast to float32 it overflows


def _exog_values(frame: pd.DataFrame, names: tuple, source: str, ids, codes, times) -> np.ndarray:
    """(rows, k) float64 covariate values of a long frame: numeric and finite, else one line naming the column,
    series and time (tsattn never fills a covariate)."""
    out = np.zeros((len(frame), len(names)))
    for j, name in enumerate(names):
        raw = frame[name]
        if raw.dtype == bool:
            raw = raw.astype(np.float64)
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            what = "is not numeric" if raw.notna().iloc[first] and not np.isinf(values[first]) else \
                ("has an infinite value" if np.isinf(values[first]) else "has a missing (NaN) value")
            fix = {"is not numeric": f"encode its categories as numbers first, one 0/1 column each (pd.get_dummies("
                                     f"frame, columns=[{name!r}])), then name those columns (a category fixed per "
                                     "series is a static feature, stat_exog)",
                   "has an infinite value": "replace those values first",
                   }.get(what, "fill those values first, e.g. interpolated per series (--fill fills the target only)")
            raise DataError(f"covariate column {name!r} of {source} {what} ({str(raw.iloc[first])!r}) in series "
                            f"{ids[codes[first]]!r} at {time_text(times[first])} ({int(bad.sum())} such row(s)); "
                            f"covariates must be finite numbers: {fix}")
        huge = np.abs(values) > MAX_COVARIATE
        if huge.any():  # beyond what a float32 network computes with once scaled (it became NaN/inf silently)
            first = int(np.flatnonzero(huge)[0])
            raise DataError(f"covariate column {name!r} of {source} holds {values[first]:.3g} in series "
                            f"{ids[codes[first]]!r} at {time_text(times[first])} ({int(huge.sum())} such row(s)), "
                            f"beyond {MAX_COVARIATE:.0e}, too large to compute with; rescale the column first (e.g. "
                            f"divide it by {10.0 ** np.floor(np.log10(np.abs(values).max())):.0e})")
        out[:, j] = values
    return out


def _from_long(frame: pd.DataFrame, id_column: str, time_column: str, value_column: str, fill, source: str,
               freq=None, exog=()):
    check_unique_columns(frame, source)
    columns = [str(c) for c in frame.columns]
    for role, column in (("id", id_column), ("time", time_column), ("value", value_column)):
        if column not in columns:
            raise MissingColumnError(f"{role} column {column!r} not found in {source}; available columns: "
                                     f"{', '.join(columns)}", "choose it with id_column= / time_column= / "
                                     "value_column=, CLI: --id-column / --date-column / --column")
    exog = check_exog_columns(exog, {"id": id_column, "time": time_column, "value": value_column}, source, columns)
    if frame.empty:
        raise DataError(f"{source} has no rows; pass a frame with values")
    # series in order of first appearance; ids become text once per series, not once per row
    codes, uniques = pd.factorize(frame[id_column], sort=False)
    if (codes < 0).any():
        raise DataError(f"{source} has {int((codes < 0).sum())} row(s) without a series id in {id_column!r}; "
                        "fill or drop them")
    uniques = np.asarray([str(u) for u in uniques], dtype=object)
    if len(set(uniques)) < len(uniques):  # 7 and "7": two series that would both be named "7"
        text = pd.Series(uniques)
        twice = text[text.duplicated()].iloc[0]
        raise DataError(f"{source}'s {id_column!r} holds ids of mixed types that read the same, such as {twice!r} as a "
                        f"number and as text; make the column one type (e.g. frame[{id_column!r}] = "
                        f"frame[{id_column!r}].astype(str))")
    if frame[time_column].isna().any():
        raise DataError(f"{source} has {int(frame[time_column].isna().sum())} row(s) without a time in "
                        f"{time_column!r}; fill or drop them")
    times = _parse_times(frame[time_column], time_column)
    raw = frame[value_column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(values) & raw.notna().to_numpy()
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(f"value column {value_column!r} of {source} is not numeric: {int(bad.sum())} value(s) such "
                        f"as {raw.iloc[first]!r} in series {uniques[codes[first]]!r} cannot be read as numbers; choose "
                        "a numeric column")
    # rows sorted by time within each series
    keys = times.asi8 if isinstance(times, (pd.DatetimeIndex, pd.PeriodIndex)) else times.to_numpy()
    order = np.lexsort((keys, codes))
    if not (order == np.arange(len(order))).all():
        moved = uniques[codes[np.flatnonzero(order != np.arange(len(order)))[0]]]
        warnings.warn(f"{source}: rows were not sorted by series and time (first in series {moved!r}); sorted them",
                      UserWarning, stacklevel=user_stacklevel())
    codes, keys, values = codes[order], keys[order], values[order]
    times = times[order]
    covariates = _exog_values(frame.iloc[order], exog, source, uniques, codes, times) if exog else None
    duplicate = (codes[1:] == codes[:-1]) & (keys[1:] == keys[:-1])
    if duplicate.any():
        first = int(np.flatnonzero(duplicate)[0]) + 1
        count = int(duplicate.sum())
        raise DataError(f"series {uniques[codes[first]]!r} has a duplicate timestamp {time_text(times[first])} "
                        f"({count} duplicate row(s) in all); aggregate or drop duplicates first (e.g. "
                        "df.groupby([id, ds]).mean())")
    infinite = np.isinf(values)
    if infinite.any():
        first = int(np.flatnonzero(infinite)[0])
        raise DataError(f"series {uniques[codes[first]]!r} has an infinite value at {time_text(times[first])} "
                        f"({int(infinite.sum())} in all); replace them with finite numbers")
    counts = np.bincount(codes, minlength=len(uniques))
    offsets = np.concatenate([[0], np.cumsum(counts)])
    missing = np.isnan(values)
    missing_series = np.unique(codes[missing])
    if len(missing_series) and fill is None:
        first = int(np.flatnonzero(missing)[0])
        inner = [i for i in missing_series if _inner_gap(missing[offsets[i]:offsets[i + 1]])]
        if not inner:  # only at the series' starts or ends: series of a wide file that start later or end earlier
            i = int(missing_series[0])
            part = missing[offsets[i]:offsets[i + 1]]
            lead, trail = int(np.argmin(part)), int(np.argmin(part[::-1]))
            where = " and ".join(([f"{lead} before {time_text(times[offsets[i] + lead])}"] if lead else [])
                                 + ([f"{trail} after {time_text(times[offsets[i + 1] - trail - 1])}"] if trail else []))
            raise DataError(f"{len(missing_series)} series have missing (NaN) values only at their start or end "
                            f"(series {uniques[i]!r}: {where}), as a wide file's series that start later or end "
                            "earlier do; trim them with fill='drop' (CLI: --fill drop)")
        raise DataError(f"{len(missing_series)} series have missing (NaN) values, first series {uniques[codes[first]]!r} "
                        f"at {time_text(times[first])} ({int(missing.sum())} in all); fill them with "
                        "fill='interpolate' or 'ffill' (CLI: --fill interpolate; missing values at a series' start "
                        "or end are dropped, never invented)")
    series_list, exog_list = [], []
    for i, sid in enumerate(uniques):
        low, high = offsets[i], offsets[i + 1]
        index = times[low:high]
        if isinstance(index, pd.DatetimeIndex):
            index = pd.DatetimeIndex(index, freq=None)
        series = pd.Series(values[low:high], index=index, name=str(sid))
        if i in missing_series or (fill is not None and freq is None and _step_of(index) is None):
            series = as_series(series, name=f"series {sid!r}", fill=fill)
        series_list.append(series)
        if exog:
            exog_list.append(pd.DataFrame(covariates[low:high], index=index, columns=list(exog)))
    return [str(u) for u in uniques], series_list, (exog_list if exog else None)


def _inner_gap(missing: np.ndarray) -> bool:
    """Whether a series' missing-value mask has a gap between values (not only at its start or end)."""
    present = np.flatnonzero(~missing)
    return bool(len(present)) and bool(missing[present[0]:present[-1] + 1].any())


def as_panel(data, id_column: str = ID_COLUMN, time_column: str = TIME_COLUMN, value_column: str = VALUE_COLUMN,
             fill: str | None = None, horizon: int | None = None, freq=None, exog=(), static=None) -> Panel:
    """Validate one series or many into a :class:`Panel`.

    Args:
        data: a long DataFrame holding ``id_column``, ``time_column`` and ``value_column``; a dict of Series
            (keys are the ids); a Panel; or one series (Series, one-column DataFrame, 1-D array).
        id_column, time_column, value_column: the long frame's columns (NeuralForecast's names by default).
        fill: what to do with NaN values, per series: None (refuse), "interpolate", "ffill" or "drop".
        horizon: the hold-out length the data defines (the competitions' h); kept on the panel.
        freq: the frequency the data follows, when known ("MS", "QS", "D", ...; an integer step for integer
            times): every series must lie on its grid (missing steps filled by ``fill``); None infers it.
        exog: covariate columns of a long frame kept beside the target (past-observed and future-known ones:
            finite numbers at every row, never filled).
        static: static features, one row per series: the id column (named as ``id_column``, or ``unique_id``, or
            ids as the index) and the feature columns.

    Raises:
        DataError: one line naming the series and the problem (NaN, duplicate timestamps, mixed frequencies).

    Example:
        >>> frame = pd.DataFrame({"unique_id": ["a"] * 3 + ["b"] * 3, "ds": list(range(3)) * 2,
        ...                       "y": [1.0, 2, 3, 10, 20, 30]})
        >>> as_panel(frame).n_series
        2
    """
    if fill is not None and fill not in FILL_METHODS:
        raise ConfigError(f"fill must be one of {', '.join(FILL_METHODS)}; got {fill!r}")
    if isinstance(data, (str, os.PathLike)):  # a file's name read as a 0-d array said "got an array of shape ()"
        raise DataError(f"the data is a path ({str(data)!r}), not the values: read it first, "
                        f"tsattn.read_csv_panel({str(data)!r}) (as the command line's --csv reads it), or pass a "
                        "pandas Series or DataFrame")
    freq = check_freq(freq)
    exog = tuple(exog or ())
    static = static_by_id(static, id_column)
    if isinstance(data, Panel):
        missing = [name for name in exog if name not in data.exog_names]
        if missing:
            raise DataError(f"covariate column {missing[0]!r} is not in the data; it holds "
                            f"{', '.join(data.exog_names) or 'no covariates'}")
        if static is not None and data.static is None:
            data = dataclasses.replace(data, static=check_static(static, data.ids))
        return data
    if isinstance(data, pd.DataFrame) and data.shape[1] > 1 and (id_column in data.columns or not exog):
        roles = (id_column, time_column, value_column)
        if not any(name in data.columns for name in roles) and \
                all(pd.api.types.is_numeric_dtype(dtype) for dtype in data.dtypes):
            raise MissingColumnError(
                f"the frame has no {id_column!r}, {time_column!r} or {value_column!r} column, only numbers in "
                f"{', '.join(map(str, data.columns[:4]))}{', ...' if data.shape[1] > 4 else ''}: one series per column "
                "(a wide frame)?", "pass dict(frame.items()), each column a series, or a long frame with "
                f"{id_column}, {time_column}, {value_column}; CLI: --column a,b reads a wide CSV")
        frame_horizon = data.attrs.get("horizon") if horizon is None else horizon
        ids, series_list, exog_list = _from_long(data, id_column, time_column, value_column, fill, "the frame", freq,
                                                 exog)
        panel = _assemble(ids, series_list, value_column if value_column != VALUE_COLUMN else None, frame_horizon,
                          freq=freq, fill=fill, exog_list=exog_list, static=static)
        synthetic = bool(data.attrs.get("synthetic_dates", False))  # set by tsattn.data for M3 / M1
        return dataclasses.replace(panel, synthetic_dates=True) if synthetic else panel
    if exog or static is not None:
        if isinstance(data, pd.DataFrame) and data.shape[1] > 1:  # a frame without the id column asked for
            raise MissingColumnError(
                f"id column {id_column!r} not found in the frame; available columns: "
                f"{', '.join(map(str, data.columns))}", "covariates come in a long frame: name its id, time and "
                "value columns with id_column= / time_column= / value_column=, CLI: --id-column / --date-column / "
                "--column")
        raise DataError("covariates come in a long frame: unique_id, ds, y and the covariate columns (static features: "
                        "a frame with unique_id and one row per series); pass the series that way")
    if isinstance(data, dict):
        if not data:
            raise DataError("the dict of series is empty; pass at least one series")
        ids, series_list = [], []
        for key, value in data.items():
            series_list.append(as_series(value, name=f"series {key!r}", fill=fill))
            ids.append(str(key))
        if len(set(ids)) != len(ids):
            raise DataError("two series ids are equal once written as text; give every series a distinct id")
        return _assemble(ids, series_list, None, horizon, freq=freq, fill=fill)
    series = as_series(data, fill=fill)
    sid = str(series.name) if series.name is not None else "series"
    return _assemble([sid], [series], series.name, horizon, single_input=True, freq=freq, fill=fill)


def read_csv_panel(path: str | Path, column: str | None = None, date_column: str | None = None,
                   id_column: str | None = None, fill: str | None = None, freq=None, exog=(),
                   static=None) -> Panel:
    """Read a CSV file as a panel: long form with ``id_column``, or one series without it.

    Args:
        path: the CSV file.
        column: the value column (may be omitted for a single series with one column besides the date).
        date_column: the time column (dates or integers); required with ``id_column``.
        id_column: the series-id column of a long file (e.g. unique_id). A file with the columns unique_id, ds and y
            (the peers' long form, as Python reads a long frame) is read as one without these three arguments.
        fill: per-series handling of NaN values (see :func:`as_panel`).
        freq: the frequency the file follows (see :func:`as_panel`); None infers it.
        exog: covariate columns kept beside the value column (see :func:`as_panel`).
        static: static features, one row per series (see :func:`as_panel`).
    """
    freq = check_freq(freq)
    exog = tuple(exog or ())
    if id_column is None and (column is None or not _listed_columns(column)):
        # a long file in the peers' names (unique_id, ds, y), as a long frame is read in Python: no options needed
        header = csv_columns(path)
        if ID_COLUMN in header and (date_column or TIME_COLUMN) in header and (column or VALUE_COLUMN) in header:
            id_column, date_column, column = ID_COLUMN, date_column or TIME_COLUMN, column or VALUE_COLUMN
    static = static_by_id(static, id_column)
    if id_column is None and column is not None:
        wide = _wide_columns(path, column, date_column, exog, fill)
        if wide is not None:
            ids, series_list, name = wide
            return _assemble(ids, series_list, name, freq=freq, fill=fill, static=static)
    if id_column is None and not exog:
        return as_panel(read_csv_series(path, column, date_column, fill=fill), fill=fill, freq=freq, static=static)
    path = Path(path)
    single = id_column is None
    if single:  # one series with covariates: the long path with one id
        frame = read_csv_frame(path)
        others = [c for c in frame.columns if c != date_column and c not in exog]
        if column is None and date_column is None:  # dates and values beside the covariates: nothing to choose
            date_column, column = time_and_values(frame, others)
        if column is None and len(others) != 1:
            raise DataError(f"{path} has several value columns ({', '.join(others)}); choose one with --column")
        column = column or others[0]
        id_column = "__series__"
        frame[id_column] = str(column)
        if date_column is None:
            date_column = STEP_COLUMN
            frame[date_column] = np.arange(len(frame))
    else:
        named = {"--id-column": id_column, "--date-column": date_column, "--column": column}
        given = [(option, name) for option, name in named.items() if name is not None]
        for i, (option, name) in enumerate(given):
            for other, other_name in given[i + 1:]:
                if name == other_name:
                    raise DataError(f"{option} and {other} both name the column {name!r}; each role needs its own "
                                    "column")
        frame = read_csv_frame(path, text_columns=[id_column])  # ids are labels: 007 and 7 are two series
        listed = _listed_columns(column)
        if listed and column not in frame.columns and all(name in frame.columns for name in listed):
            raise DataError(f"--column {column} names one series per column (a wide file), and --id-column "
                            f"{id_column!r} one series per id (a long file); give the one that fits {path.name}")
        if date_column is None:
            raise DataError(f"--id-column needs --date-column: name the time column of {path.name} "
                            f"(columns: {', '.join(frame.columns)})")
        if column is None:
            others = [c for c in frame.columns if c not in (id_column, date_column, *exog)]
            if len(others) != 1:
                raise DataError(f"{path} has several value columns ({', '.join(others)}); choose one with --column")
            column = others[0]
    unused = [c for c in frame.columns if c not in (id_column, date_column, column, *exog)]
    if unused:
        warnings.warn(f"{path.name}: column(s) {', '.join(map(str, unused))} are not used (only {column} is "
                      "forecast; name covariates with --hist-exog / --futr-exog)",
                      UserWarning, stacklevel=user_stacklevel())
    ids, series_list, exog_list = _from_long(frame, id_column, date_column, column, fill, f"CSV file {path.name}",
                                             freq, exog)
    return _assemble(ids, series_list, column, single_input=single, freq=freq, fill=fill, exog_list=exog_list,
                     static=static)


WIDE_ID = "__series__"
STEP_COLUMN = "__step__"  # the time column made for a file without one: its rows' positions


def _listed_columns(column) -> list | None:
    """The columns ``column`` lists (a list, or text with commas: "north,south"), or None for one column's name."""
    if isinstance(column, (list, tuple)):
        return list(column)
    return [name.strip() for name in column.split(",")] if isinstance(column, str) and "," in column else None


def _wide_columns(path, column, date_column, exog, fill):
    """A wide file, one column per series (``column="a,b"`` or a list; the columns' names are the ids): (ids, series,
    name) for :func:`_assemble`, read as the long file it melts into (the same checks, one line each); None when
    ``column`` names one column."""
    names = _listed_columns(column)
    if names is None:
        return None
    path = Path(path)
    frame = read_csv_frame(path)
    if isinstance(column, str) and column in frame.columns:  # a column whose name holds a comma
        return None
    missing = [name for name in names if name not in frame.columns]
    if missing or len(set(names)) < len(names) or len(names) < 2:
        problem = (f"column(s) {', '.join(map(repr, missing))} not found" if missing else
                   "a column named twice" if len(set(names)) < len(names) else "one column")
        raise DataError(f"--column {','.join(names)}: {problem} in {path}; name two or more of its columns, one series "
                        f"each (available columns: {', '.join(frame.columns)})")
    if exog:
        raise DataError(f"covariates need a long file (one row per series and time: --id-column); --column "
                        f"{','.join(names)} reads one series from each column of {path.name}, without covariates")
    if date_column is not None and date_column in names:
        raise DataError(f"--date-column {date_column!r} is also named in --column; name the value columns only")
    if date_column is None:
        date_column = STEP_COLUMN
        frame[date_column] = np.arange(len(frame))
    elif date_column not in frame.columns:
        raise MissingColumnError(f"date column {date_column!r} not found in {path}; available columns: "
                                 f"{', '.join(frame.columns)}", "choose it with --date-column")
    unused = [c for c in frame.columns if c not in (date_column, *names)]
    if unused:
        warnings.warn(f"{path.name}: column(s) {', '.join(map(str, unused))} are not used (the series are "
                      f"{', '.join(names)})", UserWarning, stacklevel=user_stacklevel())
    name = ",".join(names)  # the value column of the long frame (no column of the file has that name)
    long = frame.melt(id_vars=[date_column], value_vars=names, var_name=WIDE_ID, value_name=name)
    ids, series_list, _ = _from_long(long, WIDE_ID, date_column, name, fill, f"CSV file {path.name}")
    return ids, series_list, name


def check_unique_columns(frame: pd.DataFrame, source: str) -> None:
    """One line for a frame with two columns of one name (pandas then hands back a frame where a column is
    expected, and every later step fails obscurely)."""
    names = pd.Index([str(c) for c in frame.columns])
    if names.has_duplicates:
        twice = names[names.duplicated()][0]
        raise DataError(f"{source} has two columns named {twice!r}; rename or drop one")


def future_keys(futr_df, id_column: str = ID_COLUMN, time_column: str = TIME_COLUMN,
                expected: pd.Index | None = None) -> pd.MultiIndex:
    """The (id, time) rows of a future frame, ids as text and times parsed as the data's are (``expected``: the times
    it should hold, see :func:`_parse_times`)."""
    if not isinstance(futr_df, pd.DataFrame) or id_column not in futr_df.columns or time_column not in futr_df.columns:
        raise DataError(f"futr_df must be a DataFrame with the {id_column} and {time_column} columns")
    check_unique_columns(futr_df, "futr_df")
    return pd.MultiIndex.from_arrays([futr_df[id_column].astype(str).to_numpy(),
                                      _parse_times(futr_df[time_column], time_column, expected)])


def future_values(futr_df: pd.DataFrame, panel: "Panel", names, horizon: int, id_column: str = ID_COLUMN,
                  time_column: str = TIME_COLUMN) -> np.ndarray:
    """(n_series, horizon, len(names)) future-known values for the ``horizon`` steps after each series of ``panel``,
    read from ``futr_df`` (NeuralForecast's futr_df: the id and time columns and one column per covariate; rows for
    other times are ignored). A missing row, a duplicate, a NaN or a column in no frame: one line naming it."""
    from .io import describe_index, future_index

    if id_column not in futr_df.columns and panel.n_series == 1:  # one series: its future needs no id column
        futr_df = futr_df.assign(**{id_column: panel.ids[0]})

    check_exog_columns(names, {"id": id_column, "time": time_column}, "futr_df",
                       [str(c) for c in futr_df.columns])
    for role, column in (("id", id_column), ("time", time_column)):
        if column not in futr_df.columns:
            raise DataError(f"futr_df has no {role} column {column!r}; give {id_column}, {time_column} and "
                            f"{', '.join(names)}")
    frame = futr_df.reset_index(drop=True)
    ids = frame[id_column].astype(str).to_numpy()
    needed = [future_index(describe_index(panel.series_index(i)), horizon) for i in range(panel.n_series)]
    times = _parse_times(frame[time_column], time_column, needed[0].append(needed[1:]) if needed else None)
    codes, uniques = pd.factorize(ids)
    values = _exog_values(frame, names, "futr_df", uniques, codes, times)
    lookup = pd.Series(np.arange(len(frame)), index=pd.MultiIndex.from_arrays([ids, times]))
    lookup = lookup[~lookup.index.duplicated(keep="first")]
    if len(lookup) < len(frame):
        raise DataError("futr_df has duplicate (id, time) rows; give one row per series and step")
    out = np.empty((panel.n_series, horizon, len(names)))
    missing = []
    for i, labels in enumerate(needed):
        rows = lookup.reindex(pd.MultiIndex.from_arrays([[panel.ids[i]] * len(labels), labels]))
        absent = rows.isna().to_numpy()
        if absent.any():
            missing.append((panel.ids[i], labels[int(np.flatnonzero(absent)[0])], int(absent.sum())))
            continue
        out[i] = values[rows.to_numpy(dtype=np.int64)]
    if missing:
        count = sum(n for _, _, n in missing)
        sid, first, _ = missing[0]
        raise DataError(f"futr_df lacks {count} (series, time) row(s) the forecast needs, in {len(missing)} series "
                        f"(first {sid!r} at {time_text(first)}); give every series' {', '.join(names)} for the next "
                        f"{horizon} steps (get_missing_future(futr_df) lists them)")
    return out

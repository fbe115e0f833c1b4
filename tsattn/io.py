"""Writing results atomically (run directories, reports, artefacts) and index arithmetic.

Everything is written into a temporary sibling first and moved into place at the end, so a crash or a
bad input never leaves a half-written directory or file where the user asked for one.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import ConfigError, DataError

def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (pd.Timestamp, pd.Period)):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(path: Path, payload) -> None:
    Path(path).write_text(json.dumps(payload, indent=2, default=_json_default, allow_nan=False) + "\n")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_parent_writable(target: Path) -> Path:
    parent = target.resolve().parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"cannot write to {target}: {parent} is a file; choose another place")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {parent} ({exc.strerror}); choose a writable place") from None
    if not os.access(parent, os.W_OK):
        raise ConfigError(f"cannot write to {target}: {parent} is not writable; choose a writable place")
    return parent


def check_output_directory(out: Path, force: bool = False) -> Path:
    """Refuse an --out that cannot be written or already holds something (unless ``force``)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a directory; choose a directory")
    if out.exists() and any(out.iterdir()) and not force:
        raise ConfigError(f"--out {out} already exists and is not empty; choose another directory or pass --force")
    _check_parent_writable(out)
    return out


@contextlib.contextmanager
def atomic_directory(out: Path, force: bool = False):
    """Yield a temporary directory that replaces ``out`` only when the block finishes without error."""
    out = check_output_directory(out, force)
    parent = out.resolve().parent
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; the result is an ordinary directory
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
        os.replace(out, trash / out.name)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, out)


@contextlib.contextmanager
def atomic_file(target: Path):
    """Yield a temporary path that replaces ``target`` only when the block finishes without error."""
    target = Path(target)
    if target.exists() and target.is_dir():
        raise ConfigError(f"{target} is a directory; choose a file name")
    parent = _check_parent_writable(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.partial-", dir=parent)
    os.close(handle)
    os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it private; the result is an ordinary file
    try:
        yield Path(temporary)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    os.replace(temporary, target)


# ----------------------------------------------------------------------------------------------------
# Index arithmetic shared by artefacts and forecasts
# ----------------------------------------------------------------------------------------------------
def describe_index(index: pd.Index) -> dict:
    """What is needed to continue an index after its last label."""
    if isinstance(index, pd.DatetimeIndex):
        return {"kind": "datetime", "freq": index.freqstr if index.freq is not None else None,
                "last": index[-1].isoformat(), "tz": str(index.tz) if index.tz is not None else None}
    if isinstance(index, pd.PeriodIndex):
        return {"kind": "period", "freq": index.freqstr, "last": str(index[-1])}
    values = np.asarray(index)
    step = int(values[1] - values[0]) if len(values) > 1 else 1
    return {"kind": "range", "freq": None, "last": int(values[-1]), "step": step}


def future_index(description: dict, steps: int) -> pd.Index:
    """The ``steps`` labels after the last one described by :func:`describe_index`."""
    kind = description["kind"]
    if kind == "datetime":
        if description["freq"] is None:
            raise DataError("the series' timestamps are irregular, so future timestamps cannot be inferred; "
                            "resample it to a regular frequency first (e.g. series.asfreq('D'))")
        last = pd.Timestamp(description["last"])
        return pd.date_range(last, periods=steps + 1, freq=description["freq"])[1:]
    if kind == "period":
        return pd.period_range(pd.Period(description["last"], freq=description["freq"]), periods=steps + 1,
                               freq=description["freq"])[1:]
    step = description.get("step", 1)
    start = description["last"] + step
    return pd.RangeIndex(start, start + step * steps, step)


def index_from_labels(labels: list, description: dict) -> pd.Index:
    if description["kind"] == "datetime":
        return pd.DatetimeIndex(pd.to_datetime(labels), freq=description["freq"])
    if description["kind"] == "period":
        return pd.PeriodIndex([pd.Period(label, freq=description["freq"]) for label in labels])
    return pd.Index(labels)


def versions() -> dict:
    import keras
    import tensorflow as tf

    return {"tsattn": __version__, "keras": keras.__version__, "tensorflow": tf.__version__,
            "numpy": np.__version__, "pandas": pd.__version__}

"""Writing results atomically (run directories, reports, artefacts) and index arithmetic.

Everything is written into a temporary sibling first and moved into place at the end, so a crash or a
bad input never leaves a half-written directory or file where the user asked for one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
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


def json_text(payload) -> str:
    """Strict JSON (NaN refused; numpy numbers and timestamps converted) as written by tsattn."""
    return json.dumps(payload, indent=2, default=_json_default, allow_nan=False)


def write_json(path: Path, payload) -> None:
    Path(path).write_text(json_text(payload) + "\n")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_parent_writable(target: Path) -> Path:
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"cannot write to {target}: {parent} is a file; choose another place")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {parent} ({exc.strerror or exc}); choose a writable place") from None
    if not os.access(parent, os.W_OK):
        raise ConfigError(f"cannot write to {target}: {parent} is not writable; choose a writable place")
    try:  # a place the permissions allow may still refuse files (a read-only mount for root, /proc): before any work
        handle, probe = tempfile.mkstemp(prefix=f".{target.name}.probe-", dir=parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"cannot write to {target}: {parent} refuses new files ({exc.strerror or exc}); choose a "
                          "writable place") from None
    return parent


# ----------------------------------------------------------------------------------------------------
# What tsattn owns: only outputs it wrote may be replaced
# ----------------------------------------------------------------------------------------------------
# Each kind of output directory: the file that identifies it and every file tsattn writes there.
LAYOUTS = {
    "run": ("tsattn.json", ("metrics.json", "config.json", "model.keras", "tsattn.json", "history.csv",
                            "predictions.csv", "metrics_by_series.csv", "choice.csv", "covariate_importance.csv",
                            "plots/*.png")),
    "backtest": ("backtest.csv", ("backtest.csv", "metrics.json", "backtest.png")),
    "forecast": ("forecast.json", ("forecast.json", "forecast.csv", "forecast.png")),
    "compare": ("comparison.json", ("comparison.json", "results.csv", "summary.csv", "report.md", "report.html",
                                    "runs/*.json", "figures/*.png")),
    "tune": (("study.db", "study.json"), ("study.db", "study.db-journal", "study.db-wal", "study.db-shm",
                                          "study.json", "trials.csv", "best.json", "history.png", "importance.png",
                                          "report.md", "report.html")),  # study.json: where a --storage study is
}
WHAT = {"run": "run directory of `tsattn fit`", "backtest": "backtest of `tsattn backtest`",
        "compare": "comparison of `tsattn compare`", "forecast": "forecast of `tsattn predict`",
        "tune": "search of `tsattn tune`"}


def resolve_output(out, option: str = "--out") -> Path:
    """The absolute place an output goes: symlinks followed (write where the link points), and never the
    current directory, one of its parents or a filesystem root (replacing those would take the user's files)."""
    if out is None or not str(out).strip():
        raise ConfigError(f"{option} is empty; name a new directory, e.g. {option} runs/first")
    path = Path(str(out)).expanduser()
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, an unreadable component
        raise ConfigError(f"{option} {out} cannot be resolved ({exc}); choose another place") from None
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents or resolved == Path(resolved.anchor):
        raise ConfigError(f"{option} {out} is the current directory or one that holds it; name a new directory, "
                          f"e.g. {option} runs/first")
    return resolved


def foreign_files(directory: Path, kind: str) -> list[str]:
    """Files in ``directory`` that a tsattn output of this kind does not hold (relative paths)."""
    import fnmatch

    _, patterns = LAYOUTS[kind]
    foreign = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).as_posix()
        if path.is_dir() and not path.is_symlink():
            if not any(pattern.startswith(relative + "/") for pattern in patterns):
                foreign.append(relative + "/")
            continue
        if path.is_symlink() or not path.is_file() or not any(fnmatch.fnmatch(relative, p) for p in patterns):
            foreign.append(relative)
    return [name for name in foreign if not (name.endswith("/") and any(f.startswith(name) for f in foreign
                                                                          if f != name))]


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def check_output_directory(out, force: bool = False, kind: str = "run", inputs=()) -> Path:
    """The resolved --out if it may be written: new, empty, or (with ``force``) a tsattn output of this kind
    holding nothing else. Refuses, in one line, a directory holding other files or the command's input."""
    option = "--out"
    resolved = resolve_output(out, option)
    for item in inputs:
        if item is not None and _inside(Path(item).expanduser().resolve(), resolved):
            raise ConfigError(f"{option} {out} holds the input {item}; choose another directory for the output")
    if resolved.exists() and not resolved.is_dir():
        raise ConfigError(f"{option} {out} is a file, not a directory; choose a directory")
    if resolved.exists() and any(resolved.iterdir()):
        key, _ = LAYOUTS[kind]
        foreign = foreign_files(resolved, kind)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise ConfigError(f"{option} {out} holds files tsattn did not write ({shown}); choose another "
                              "directory (tsattn only replaces its own outputs)")
        keys = key if isinstance(key, tuple) else (key,)  # any one of them marks the kind
        if not any((resolved / k).is_file() for k in keys):
            raise ConfigError(f"{option} {out} is not a {WHAT[kind]} (no {' or '.join(keys)}); choose another "
                              "directory")
        if not force:
            raise ConfigError(f"{option} {out} already holds a {WHAT[kind]}; choose another directory or pass "
                              "--force to replace it")
    _check_parent_writable(resolved)
    clean_stale_staging(resolved)
    return resolved


def check_output_file(target, force: bool = False, recognise=None, option: str = "--out",
                      force_hint: str = "pass --force") -> Path:
    """The resolved output file if it may be written: new, or (with ``force``) a file ``recognise(path)``
    says tsattn wrote. ``force_hint`` is how the caller's user forces (the CLI's --force, a keyword in Python)."""
    resolved = resolve_output(target, option)
    if resolved.is_dir():
        raise ConfigError(f"{option} {target} is a directory; name a file")
    if resolved.exists():
        if not resolved.is_file() or (recognise is not None and not recognise(resolved)):
            raise ConfigError(f"{option} {target} exists and is not a file tsattn wrote; choose another name "
                              "(tsattn only replaces its own outputs)")
        if not force:
            raise ConfigError(f"{option} {target} already exists; choose another name or {force_hint} to replace it")
    _check_parent_writable(resolved)
    clean_stale_staging(resolved)
    return resolved


def _staging_prefix(target: Path) -> str:
    return f".{target.name}.partial-"


def clean_stale_staging(target: Path) -> list[Path]:
    """Remove staging left beside ``target`` by a tsattn process that no longer runs (killed mid-write)."""
    removed = []
    parent = target.parent
    if not parent.is_dir():
        return removed
    for prefix in (_staging_prefix(target), f".{target.name}.old-"):
        for candidate in parent.glob(prefix + "*"):
            pid = candidate.name[len(prefix):].split("-", 1)[0]
            if not pid.isdigit() or process_alive(int(pid)):
                continue
            if candidate.is_dir() and not candidate.is_symlink():
                shutil.rmtree(candidate, ignore_errors=True)
            else:
                candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (a zombie, killed but not yet reaped, does not)."""
    if pid == os.getpid():
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc (or an unexpected line): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@contextlib.contextmanager
def atomic_directory(out, force: bool = False, kind: str = "run", inputs=()):
    """Yield a staging directory that replaces ``out`` only when the block finishes without error.

    ``out`` is checked first (:func:`check_output_directory`); a symlinked ``out`` keeps its link and gets
    the new directory where it points. Staging is named after this process, so a later run removes what
    a killed one left behind.
    """
    out = check_output_directory(out, force, kind, inputs)
    existed = out.exists()  # checked as replaceable just now; a new ``out`` is claimed atomically below
    parent = out.parent
    staging = Path(tempfile.mkdtemp(prefix=f"{_staging_prefix(out)}{os.getpid()}-", dir=parent))
    os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; the result is an ordinary directory
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if existed:
        trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=parent))
        os.replace(out, trash / out.name)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
        return
    try:  # fails when another run published ``out`` meanwhile: the first to finish wins, the other is refused
        os.rename(staging, out)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not out.exists():
            raise
        raise ConfigError(f"--out {out} was written by another run while this one ran; this run's results were not "
                          "saved: choose another --out, or rerun with --force to replace it") from None


@contextlib.contextmanager
def atomic_file(target):
    """Yield a temporary path that replaces ``target`` only when the block finishes without error.

    The caller decides whether ``target`` may be replaced (:func:`check_output_file` for user-named files).
    """
    target = Path(target)
    if target.is_symlink():
        target = target.resolve()
    if target.exists() and target.is_dir():
        raise ConfigError(f"{target} is a directory; choose a file name")
    parent = _check_parent_writable(target)
    handle, temporary = tempfile.mkstemp(prefix=f"{_staging_prefix(target)}{os.getpid()}-", dir=parent)
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
                "last": index[-1].isoformat(), "tz": str(index.tz) if index.tz is not None else None,
                "length": len(index)}
    if isinstance(index, pd.PeriodIndex):
        return {"kind": "period", "freq": index.freqstr, "last": str(index[-1])}
    values = np.asarray(index)
    step = int(values[1] - values[0]) if len(values) > 1 else 1
    return {"kind": "range", "freq": None, "last": int(values[-1]), "step": step}


def future_index(description: dict, steps: int) -> pd.Index:
    """The ``steps`` labels after the last one described by :func:`describe_index`."""
    kind = description["kind"]
    if kind == "datetime":
        if description["freq"] is None and description.get("length", 3) < 3:  # pandas infers from 3 or more
            raise DataError(f"the series has {description['length']} timestamp(s), too few to infer their frequency; "
                            "state it (e.g. freq=\"MS\" for monthly dates)")
        if description["freq"] is None:
            raise DataError("the series' timestamps are irregular, so future timestamps cannot be inferred; "
                            "resample it to a regular frequency first (e.g. series.asfreq('D'))")
        last = pd.Timestamp(description["last"])
        if description.get("tz"):  # the named zone, so labels follow its daylight-saving changes
            last = last.tz_convert(description["tz"])
        try:
            return pd.date_range(last, periods=steps + 1, freq=description["freq"])[1:]
        except (pd.errors.OutOfBoundsDatetime, OverflowError, ValueError):
            offset = pd.tseries.frequencies.to_offset(description["freq"])
            end = pd.Timestamp.max.floor("D") - pd.Timedelta(days=1)
            end = end.tz_localize(last.tz) if last.tz is not None else end
            if isinstance(offset, pd.offsets.Tick):  # fixed steps (hours, minutes...): arithmetic, not billions of labels
                reach = int((end - last) // pd.Timedelta(offset))
            else:  # calendar steps (months, weeks, days with anchors): at most a few hundred thousand labels
                reach = len(pd.date_range(last, end, freq=offset)) - 1
            raise DataError(f"{steps} steps of {description['freq']} after {last} reach past {pd.Timestamp.max:%Y-%m-%d}, "
                            f"the last date pandas timestamps can hold; forecast at most {reach} steps") from None
    if kind == "period":
        return pd.period_range(pd.Period(description["last"], freq=description["freq"]), periods=steps + 1,
                               freq=description["freq"])[1:]
    step = description.get("step", 1)
    start = description["last"] + step
    return pd.RangeIndex(start, start + step * steps, step)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A short hash of the tsattn code running (every .py file of the package, by path and content): records made by
    other code (another version, or an edited checkout at the same version) are told apart by it, so a resumed
    comparison never mixes their figures with this code's."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def versions() -> dict:
    from ._backend import keras, tf  # the quiet TensorFlow import

    return {"tsattn": __version__, "keras": keras.__version__, "tensorflow": tf.__version__,
            "numpy": np.__version__, "pandas": pd.__version__}


def column_texts(values, digits: int = 4, absent: str = "") -> list[str]:
    """The numbers of one table column with one number of decimals, so they line up and compare at a glance
    (12.40 above 12.62, not 12.4): enough for ``digits`` significant digits of the largest and two of the
    smallest; thousands separated, never e-notation from 0.0001 up; "" for a missing value (NaN), ``absent`` for
    None (a figure the row does not have, e.g. "n/a"); see :func:`number_text` for a figure on its own."""
    numbers = []
    for value in values:
        try:
            numbers.append(float(value))
        except (TypeError, ValueError):
            numbers.append(float("nan"))
    sizes = [abs(v) for v in numbers if math.isfinite(v) and v != 0]
    if not sizes or min(sizes) < 1e-4:  # nothing to align, or a figure that needs its exponent
        texts = [number_text(v, digits) for v in numbers]
    else:
        decimals = max(0, digits - 1 - math.floor(math.log10(max(sizes))), 1 - math.floor(math.log10(min(sizes))))
        decimals = min(decimals, 8)
        texts = [number_text(v, digits) if not math.isfinite(v) else f"{v:,.{decimals}f}" for v in numbers]
    return [absent if value is None else text for value, text in zip(values, texts)]


def text_table(header: list[str], rows: list[list[str]], left: tuple = ()) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned (those whose positions are in
    ``left`` left-aligned too: text rather than figures), every column as wide as its widest cell plus two spaces
    (headers never run together)."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [f"{str(row[0]):<{widths[0]}}"] + [
            "  " + (f"{str(c):<{w}}" if i in left else f"{str(c):>{w}}")
            for i, (c, w) in enumerate(zip(row[1:], widths[1:]), start=1)]
        lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def metric_label(name: str) -> str:
    """A metric's name as tables, titles and lines write it: RMSE, MAE, MASE, sMAPE."""
    return name.upper().replace("SMAPE", "sMAPE")


def number_text(value, digits: int = 4) -> str:
    """A figure as people read it in a table: ``digits`` significant digits, thousands separated, no e-notation
    from 0.0001 up (10,020 not 1.002e+04; 0.0001234; 13.46; below 0.0001: 8e-09); "" for a missing value."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(value):
        return "" if math.isnan(value) else ("∞" if value > 0 else "-∞")
    size = abs(value)
    if size == 0:
        return "0"
    if size < 1e-4:  # an exact fit's 8e-09: written with its exponent rather than nine zeros
        return f"{value:.{digits}g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(size)))
    text = f"{value:,.{decimals}f}"
    if "." in text:  # as %g does: 18.2, not 18.20
        text = text.rstrip("0").rstrip(".")
    return "0" if float(text.replace(",", "")) == 0 else text

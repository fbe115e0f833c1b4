"""The saved-artefact format, in one place: what a fitted Forecaster writes, its version, how it is read back.

An artefact is model.keras (networks only) + tsattn.json, as a run directory of `tsattn fit` or a single
zip file from ``Forecaster.save``. tsattn.json holds plain numbers only (never pickles): the per-series
scalers, the last values of every series (enough to forecast after it), the settings and the versions.

Format 2 (panels) is written; format 1 (one series, before panels) is still read.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import ConfigError, DataError
from .io import atomic_file, check_output_file, code_digest, versions, write_json

ARTEFACT_FORMAT = "tsattn-forecaster"
ARTEFACT_VERSION = 2
READS = (1, 2)
METADATA_FILE = "tsattn.json"
MODEL_FILE = "model.keras"


# ----------------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------------
def _labels(index: pd.Index) -> list:
    if isinstance(index, (pd.DatetimeIndex, pd.PeriodIndex)):
        return [str(label) for label in index]
    return [int(label) for label in index]


def _finite_or_none(values) -> list:
    return [float(v) if v is not None and math.isfinite(v) else None for v in np.asarray(values, dtype=np.float64)]


def _per_series(stored) -> np.ndarray:
    """A per-series figure as :func:`_finite_or_none` stored it (or one bare number, as older artefacts did)."""
    stored = [stored] if not isinstance(stored, list) else stored
    return np.array([np.nan if v is None else float(v) for v in stored], dtype=np.float64)


def json_records(frame: pd.DataFrame) -> list[dict]:
    """A frame's rows as JSON records, a figure that is not finite (NaN: e.g. auto's seasonal-naive candidate on a
    series shorter than its season, which has no validation forecast) as null, as :func:`_finite_or_none` stores
    figures: strict JSON allows null and refuses NaN and infinity."""
    return [{key: None if isinstance(value, float) and not math.isfinite(value) else value
             for key, value in row.items()} for row in frame.to_dict(orient="records")]


def metadata(state) -> dict:
    """Everything besides the Keras model that a :class:`tsattn.state.FittedState` needs to forecast again."""
    tails = state.tails
    keras_model = state.keras_model is not None
    trained_until = state.trained_until
    return {
        "format": ARTEFACT_FORMAT,
        "format_version": ARTEFACT_VERSION,
        "kind": "keras" if keras_model else "baseline",
        "model": state.name,
        "model_params": state.config.resolved_model_params() if keras_model else {},
        "estimator_params": dict(state.params),
        "estimator": state.estimator.state(),
        "baselines": [baseline.state() for baseline in state.baselines],
        "window": int(state.window),
        "horizon": int(state.horizon),
        "features": int(getattr(state.estimator, "features", 1)),
        "season": int(state.season),
        "scaler": state.scaler.to_dict(),
        "mase_scale": _finite_or_none(state.mase_scale),
        "end_scale": None if state.end_scale is None else _finite_or_none(state.end_scale),
        "end_deviation": None if state.end_deviation is None else [_finite_or_none(row) for row in state.end_deviation],
        "columns": list(state.columns),
        "series_name": tails.name,
        "single_input": bool(tails.single_input),
        "ids": list(tails.ids),
        "index": {"kind": tails.index_kind, "freq": tails.freq,
                  "tz": str(tails.index.tz) if getattr(tails.index, "tz", None) is not None else None},
        "tails": {"offsets": tails.offsets.tolist(), "values": tails.values.tolist(), "labels": _labels(tails.index),
                  "exog_names": list(tails.exog_names),
                  "exog": None if tails.exog is None else tails.exog.tolist(),
                  "static": None if tails.static is None else {
                      str(column): [v.item() if hasattr(v, "item") else v for v in tails.static[column]]
                      for column in tails.static.columns}},
        "covariates": None if state.covariates is None else state.covariates.to_dict(),
        "layout": None if getattr(state.estimator, "layout", None) is None else list(state.estimator.layout),
        "trained_until": int(trained_until) if isinstance(trained_until, (int, np.integer)) else str(trained_until),
        "history": {column: [float(v) for v in state.history[column]] for column in state.history.columns},
        "epochs_run": state.epochs_run,
        "best_epoch": state.best_epoch,
        "quantiles": None if state.quantiles is None else list(state.quantiles),
        "calibration": None if state.calibration is None else state.calibration.state(),
        "floor": state.floor,
        "note": state.note,
        "choice": None if state.choice is None else {**{key: state.choice.attrs.get(key)
                                                         for key in ("metric", "margin", "windows", "steps",
                                                                     "left_out")},
                                                      "rows": json_records(state.choice)},
        "config": state.config.to_dict(),
        "versions": versions(),
        "code": code_digest(),  # the package's .py files: an artefact says which code (an edited checkout too) made it
    }


def write_directory(directory: Path, state) -> None:
    """model.keras + tsattn.json of a fitted state into an (empty, staging) directory."""
    directory = Path(directory)
    if state.keras_model is not None:
        state.keras_model.save(directory / MODEL_FILE)
    write_json(directory / METADATA_FILE, metadata(state))


def save(state, path: Path, force: bool = False, force_hint: str = "pass overwrite=True") -> Path:
    """Write a single-file artefact (a zip holding model.keras and tsattn.json) atomically; an existing file is
    replaced only when it is a tsattn artefact and ``force`` is given (the --out rule)."""
    path = check_output_file(path, force=force, recognise=is_artefact_file, option="the path", force_hint=force_hint)
    with tempfile.TemporaryDirectory() as scratch:
        write_directory(Path(scratch), state)
        with atomic_file(path) as temporary:
            with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for item in sorted(Path(scratch).iterdir()):
                    archive.write(item, item.name)
    return path


def is_artefact_file(path: Path) -> bool:
    """True for a single-file artefact (a zip holding tsattn.json): the only file ``save`` replaces."""
    try:
        with zipfile.ZipFile(path) as archive:
            return METADATA_FILE in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


# ----------------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------------
METADATA_MAX_BYTES = 512 * 2**20     # tsattn.json: tails of 10,000 series take a few MB
MODEL_MAX_BYTES = 2 * 2**30          # model.keras, and everything inside it once unpacked


def _check_member(path: Path, member: Path) -> None:
    """A member of an artefact directory must be a regular file of a sensible size (not /dev/zero)."""
    if not member.exists() and not member.is_symlink():
        return
    try:
        info = os.stat(member)
    except OSError:
        raise _not_an_artefact(path, f"{member.name} cannot be read") from None
    limit = METADATA_MAX_BYTES if member.name == METADATA_FILE else MODEL_MAX_BYTES
    if not stat.S_ISREG(info.st_mode):
        raise _not_an_artefact(path, f"{member.name} is not a regular file")
    if info.st_size > limit:
        raise _not_an_artefact(path, f"{member.name} is {info.st_size} bytes, over the {limit} that tsattn reads")


def _check_zip_member(path: Path, info: zipfile.ZipInfo) -> None:
    """Before extracting: a regular file (not a symlink entry) whose unpacked size is within the limit."""
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 when the writer set no type (Python's writestr)
    if info.is_dir() or kind not in (0, stat.S_IFREG):
        raise _not_an_artefact(path, f"{info.filename} inside is not a regular file")
    limit = METADATA_MAX_BYTES if info.filename == METADATA_FILE else MODEL_MAX_BYTES
    if info.file_size > limit:
        raise _not_an_artefact(path, f"{info.filename} inside unpacks to {info.file_size} bytes, over the {limit} "
                                     "that tsattn reads")


def _check_keras_file(path: Path, model_path: Path) -> None:
    """model.keras is itself a zip: its members must unpack to a sensible total before Keras reads them."""
    try:
        with zipfile.ZipFile(model_path) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError):
        return  # Keras reports a damaged file itself, with the message below
    if total > MODEL_MAX_BYTES:
        raise _not_an_artefact(path, f"{MODEL_FILE} unpacks to {total} bytes, over the {MODEL_MAX_BYTES} that "
                                     "tsattn reads")


def _not_an_artefact(path: Path, why: str) -> DataError:
    return DataError(f"{path} is not a tsattn model ({why}); pass a directory written by `tsattn fit` or a "
                     "file written by Forecaster.save")


def read(path: Path):
    """(keras model or None, metadata) from an artefact directory or file, with clear errors."""
    from ._backend import keras  # the quiet TensorFlow import
    from . import layers  # noqa: F401  (registers the custom layers before loading)

    path = Path(path)
    if not path.exists():
        raise DataError(f"{path} does not exist; check the path of the saved model")
    with tempfile.TemporaryDirectory() as scratch:
        if path.is_dir():
            directory = path
            for name in (METADATA_FILE, MODEL_FILE):
                _check_member(path, directory / name)
        else:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise _not_an_artefact(path, "not a regular file")
            try:
                with zipfile.ZipFile(path) as archive:
                    members = {info.filename: info for info in archive.infolist()}
                    if METADATA_FILE not in members:
                        raise _not_an_artefact(path, f"no {METADATA_FILE} inside")
                    for name in (METADATA_FILE, MODEL_FILE):  # only the members tsattn reads, checked first
                        if name in members:
                            _check_zip_member(path, members[name])
                            archive.extract(members[name], scratch)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError):
                raise _not_an_artefact(path, "not a zip archive") from None
            directory = Path(scratch)
        metadata_path = directory / METADATA_FILE
        if not metadata_path.exists():
            raise _not_an_artefact(path, f"no {METADATA_FILE}")
        try:
            state = json.loads(metadata_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _not_an_artefact(path, f"{METADATA_FILE} is not valid JSON") from None
        if not isinstance(state, dict) or state.get("format") != ARTEFACT_FORMAT:
            raise _not_an_artefact(path, f"{METADATA_FILE} does not describe a tsattn forecaster")
        version = state.get("format_version")
        if version not in READS:
            raise DataError(f"{path} was saved in artefact format {version!r} (tsattn "
                            f"{(state.get('versions') or {}).get('tsattn', '?')}) but this tsattn {__version__} "
                            f"reads formats {' and '.join(map(str, READS))}; refit the model or use the tsattn that "
                            "saved it")
        model = None
        if state.get("kind", "keras") == "keras":
            model_path = directory / MODEL_FILE
            if not model_path.exists():
                raise _not_an_artefact(path, f"{MODEL_FILE} is missing")
            _check_keras_file(path, model_path)
            try:
                model = keras.saving.load_model(model_path, safe_mode=True)
            except Exception as exc:  # keras raises many types for a damaged file
                raise DataError(f"{model_path if path.is_dir() else path}: the saved Keras model cannot be "
                                f"loaded ({type(exc).__name__}); the file is damaged or from an incompatible "
                                "Keras; refit the model") from None
    return model, state


def _check_state(state: dict) -> None:
    """The types of tsattn.json's fields (a tampered file fails here, as damaged, not later in a forecast)."""
    def need(condition: bool, what: str):
        if not condition:
            raise ValueError(what)

    def integer(value):
        return isinstance(value, int) and not isinstance(value, bool)

    need(isinstance(state.get("estimator_params"), dict), "estimator_params must be a table")
    need(all(isinstance(k, str) for k in state["estimator_params"]), "estimator_params keys must be names")
    for key in ("window", "horizon", "season"):
        need(integer(state.get(key)) and 1 <= state[key] <= 100_000, f"{key} must be a positive integer")
    name = state.get("series_name")
    need(name is None or isinstance(name, str), "series_name must be text or null")
    need(isinstance(state.get("config"), dict), "config must be a table")
    need(isinstance(state.get("scaler"), dict), "scaler must be a table")
    if state["format_version"] >= 2:
        index = state.get("index")
        need(isinstance(index, dict) and index.get("kind") in ("datetime", "period", "range"), "index kind")
        need(index.get("freq") is None or isinstance(index["freq"], str), "index freq must be text or null")
        need(index.get("tz") is None or isinstance(index["tz"], str), "index tz must be text or null")
        need(isinstance(state.get("single_input"), bool), "single_input must be true or false")
        need(isinstance(state.get("ids"), list) and all(isinstance(i, (str, int)) and not isinstance(i, bool)
                                                        for i in state["ids"]), "ids must be a list of names")
        columns = state.get("columns", ["unique_id", "ds", "y"])
        need(isinstance(columns, list) and len(columns) == 3 and all(isinstance(c, str) for c in columns),
             "columns must be three names")
        tails = state.get("tails")
        need(isinstance(tails, dict) and all(isinstance(tails.get(k), list) for k in ("offsets", "values", "labels")),
             "tails must hold offsets, values and labels")
        need(state.get("history") is None or (isinstance(state["history"], dict) and all(
            isinstance(v, list) for v in state["history"].values())), "history must be a table of lists")


def _index(labels: list, kind: str, freq, tz=None) -> pd.Index:
    if kind == "datetime" and tz:
        return pd.DatetimeIndex(pd.to_datetime(labels, utc=True)).tz_convert(tz)
    if kind == "datetime":
        return pd.DatetimeIndex(pd.to_datetime(labels))
    if kind == "period":
        return pd.PeriodIndex([pd.Period(label, freq=freq) for label in labels])
    return pd.Index(np.asarray(labels, dtype=np.int64))


def _tails(state: dict):
    """The Panel of stored tails (format 2) or the one stored tail (format 1)."""
    from .panel import Panel

    if state["format_version"] == 1:
        description = state["index"]
        values = np.asarray(state["tail"]["values"], dtype=np.float64)
        index = _index(state["tail"]["labels"], description["kind"], description["freq"])
        name = state.get("series_name")
        return Panel([str(name) if name is not None else "series"], values, np.array([0, len(values)]), index,
                     description["freq"], name, None, True)
    tails = state["tails"]
    offsets = np.asarray(tails["offsets"], dtype=np.int64)
    values = np.asarray(tails["values"], dtype=np.float64)
    index = _index(tails["labels"], state["index"]["kind"], state["index"]["freq"], state["index"].get("tz"))
    ids = [str(i) for i in state["ids"]]
    if len(offsets) != len(ids) + 1 or offsets[-1] != len(values) or len(index) != len(values) \
            or (np.diff(offsets) < 0).any() or not np.isfinite(values).all():
        raise ValueError("the stored tails do not match the stored series ids")
    exog, static = tails.get("exog"), tails.get("static")
    if exog is not None:
        exog = np.asarray(exog, dtype=np.float64).reshape(len(values), len(tails["exog_names"]))
        if not np.isfinite(exog).all():
            raise ValueError("the stored covariates are not finite")
    if static is not None:
        static = pd.DataFrame(static, index=pd.Index(ids))
        if len(static) != len(ids):
            raise ValueError("one row of static features per series is needed")
    return Panel(ids, values, offsets, index, state["index"]["freq"], state.get("series_name"), None,
                 bool(state["single_input"]), exog, tuple(str(n) for n in tails.get("exog_names", ())), static)


def _calibration(state: dict):
    """The stored calibration: a table of interval methods, or the separate keys of artefacts written before it was
    one object ("conformal", "quantile_conformal")."""
    from .intervals import Calibration

    if "calibration" in state:
        return None if state["calibration"] is None else Calibration.from_state(state["calibration"])
    methods = {name: state.get(name) for name in ("conformal", "quantile_conformal") if state.get(name) is not None}
    return Calibration.from_state(methods) if methods else None


def _floor(state: dict) -> float | None:
    """The floor of the forecasts (:attr:`tsattn.state.FittedState.floor`); an artefact written before forecasts were
    floored kept it in its calibration alone (its intervals'), where there was one."""
    if "floor" in state:
        return None if state["floor"] is None else float(state["floor"])
    calibration = state.get("calibration")
    return None if not isinstance(calibration, dict) or calibration.get("floor") is None else float(calibration["floor"])


def load(path: Path):
    """The :class:`tsattn.state.FittedState` of an artefact written by :func:`save` or `tsattn fit` (formats 1
    and 2), with one clear line for anything else."""
    from .baselines import Naive, NetworkModel, SeasonalNaive, from_state
    from .config import RunConfig, check_config
    from .covariates import Covariates
    from .intervals import check_quantiles
    from .state import FittedState
    from .windows import Scaler

    model, state = read(path)
    try:
        _check_state(state)
        params = dict(state["estimator_params"])
        name = params.get("model", state.get("model"))
        tails = _tails(state)
        mase_scale = _per_series(state.get("mase_scale"))
        end = state.get("end_scale")  # absent in artefacts saved before interval_scale
        end_scale = None if end is None else _per_series(end)
        deviation = state.get("end_deviation")  # with interval_scale "ets" only (absent before it existed)
        end_deviation = None if deviation is None else np.array([_per_series(row) for row in deviation])
        kind = tails.index_kind
        label = state["trained_until"]
        trained_until = (int(label) if kind == "range" else
                         _index([label], kind, tails.freq, state["index"].get("tz"))[0])
        # "preset": None first: an artefact written before automatic presets (0.1.0) records none, and was fitted as set
        config = RunConfig(**{"preset": None, **{k: v for k, v in state["config"].items() if k in RunConfig.fields()}})
        window, horizon, season = int(state["window"]), int(state["horizon"]), int(state["season"])
        quantiles = state.get("quantiles")
        if quantiles is not None:
            quantiles = check_quantiles(quantiles)
        if model is not None:
            outputs = (horizon,) if quantiles is None else (horizon, len(quantiles))
            features = int(state.get("features", 1))  # the target and any covariates, per step
            if tuple(model.input_shape[1:]) != (window, features) or tuple(model.output_shape[1:]) != outputs:
                raise ValueError(f"the model maps {model.input_shape} to {model.output_shape}, not window {window} "
                                 f"to {outputs}")
            combination = state.get("estimator") or {}
            combined = combination.get("key") == "combination"  # model auto's median: the network is one member
            network = combination["names"][combination["members"].index(None)] if combined else name
            estimator = NetworkModel(model, network, window, horizon, quantiles, state.get("layout"))
            if combined:
                estimator = from_state(combination, network=estimator)
        elif "estimator" in state:
            estimator = from_state(state["estimator"])
        else:  # format 1 baselines
            estimator = Naive(horizon) if name == "naive" else SeasonalNaive(horizon, season)
        history = state.get("history") or {"loss": []}
        fitted = FittedState(
            config=config, estimator=estimator, window=window, horizon=horizon,
            scaler=Scaler.from_dict(state["scaler"]), season=season, mase_scale=mase_scale, tails=tails,
            trained_until=trained_until,
            history=pd.DataFrame(history, index=pd.RangeIndex(1, len(next(iter(history.values()))) + 1,
                                                               name="epoch")),
            calibration=_calibration(state),
            columns=tuple(state.get("columns", ("unique_id", "ds", "y"))), params=params,
            epochs_run=state.get("epochs_run"), best_epoch=state.get("best_epoch"),
            covariates=None if state.get("covariates") is None else Covariates.from_dict(state["covariates"]),
            baselines=[from_state(baseline) for baseline in state.get("baselines") or ()], end_scale=end_scale,
            end_deviation=end_deviation, floor=_floor(state))
        fitted.note = state.get("note")
        if state.get("choice"):  # model auto: what it chose among
            fitted.choice = pd.DataFrame(state["choice"]["rows"])
            fitted.choice.attrs["metric"] = state["choice"]["metric"]
            for key in ("margin", "windows", "steps", "left_out"):  # artefacts written before the margin rule (or
                if state["choice"].get(key) is not None:  # before the windows or the left-out methods were kept) lack them
                    fitted.choice.attrs[key] = state["choice"][key]
        if fitted.covariates is not None:
            fitted.covariates.check_panel(tails)
            layout = fitted.covariates.layout
            if getattr(estimator, "layout", layout) != layout or (model is not None and 1 + sum(layout) != features):
                raise ValueError("the stored covariates do not match the model's input")
        if len(fitted.scaler.offset) != tails.n_series:
            raise ValueError("one scaler per series is needed")
        if params.get("window") not in (None, window) or params.get("horizon") not in (None, horizon):
            raise ValueError("the estimator's window and horizon differ from the model's")
        check_config(config)
        if len(mase_scale) != tails.n_series or (end_scale is not None and len(end_scale) != tails.n_series):
            raise ValueError("one MASE scale per series is needed")
        if end_deviation is not None and end_deviation.shape != (tails.n_series, horizon):
            raise ValueError("one AutoETS deviation per series and step is needed")
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, ConfigError, DataError,
            StopIteration) as exc:
        raise DataError(f"{path} is a damaged tsattn artefact ({type(exc).__name__}: {exc}); refit and save "
                        "again") from None
    return fitted

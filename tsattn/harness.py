"""The one training harness: every model trains, evaluates and reports through :func:`fit`.

panel (one series or many) -> :func:`tsattn.windows.window_panel` -> tf.data batches gathered from the flat
array of all series -> one global Keras model (Adam, MSE) with early stopping on validation loss -> forecasts
of every part -> metrics per series (tidy frame) and over series, beside the naive, seasonal-naive and
linear-autoregression baselines computed on the same targets through the same model interface.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _backend  # noqa: F401  (quiet TensorFlow import)
import keras
import tensorflow as tf

from . import metrics as M
from .baselines import LINEAR_FITS, NetworkModel, baseline_models, linear_coefficients, statistical_keys
from . import checks as C
from .data import load_dataset
from .errors import ConfigError, TrainingError
from .layers import EnsembleCombine, PinballLoss, WarmupSchedule
from .models import get_model, get_spec
from .panel import Panel, as_panel, read_csv_panel
from .windows import SPLITS as SPLIT_METHODS, SplitSpec, WindowedPanel, window_panel

LR_SCHEDULES = ("constant", "warmup-cosine", "warmup-inverse-sqrt")
SKIP_INITS = ("least-squares", "least-squares+zero-output", "zeros")
LOSSES = ("mse", "mae", "huber", "quantile")
DEFAULT_QUANTILES = (0.1, 0.5, 0.9)


@dataclass
class RunConfig:
    """Everything that defines one training run (written to config.json, enough to rerun it)."""

    model: str = "attention-rnn"
    model_params: dict = field(default_factory=dict)
    dataset: str | None = "sunspots"
    dataset_options: dict = field(default_factory=dict)
    csv: str | None = None
    column: str | None = None
    date_column: str | None = None
    id_column: str | None = None
    fill: str | None = None
    window: int | None = None        # None: DEFAULT_WINDOW, shortened so every series can be forecast
    horizon: int = 1
    stride: int = 1
    split: str = "auto"
    train_fraction: float = 0.7
    validation_fraction: float = 0.1
    within_parts: bool = False
    shuffle_seed: int = 13
    holdout: int | None = None
    scaling: str = "minmax"
    scaler_fit: str = "train"
    epochs: int = 200
    batch_size: int = 32
    learning_rate: float = 1e-3
    lr_schedule: str = "constant"
    warmup_epochs: int = 5
    early_stopping: bool = True
    patience: int = 20
    seed: int = 0
    season: int | None = None
    jit_compile: bool | str = "auto"  # XLA: true, false, or auto (on from XLA_MIN_STEPS training steps per epoch)
    steps_per_execution: int = 32
    skip_init: str = "least-squares"
    linear_fit: str = "pooled"
    baselines: list = field(default_factory=list)  # statistical baselines beside the always-on ones
    ensemble: int = 1                # members trained with seeds seed, seed + 1, ...; one combined model
    ensemble_method: str = "median"  # how members' forecasts are combined
    loss: str = "mse"                # training loss on scaled values: mse, mae, huber or quantile (pinball)
    quantiles: list | None = None    # loss=quantile: the quantiles (default: from level, else 0.1, 0.5, 0.9)
    level: list = field(default_factory=list)  # interval levels in percent (e.g. [80, 95]): lo-80 / hi-80 ...

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def updated(self, **changes) -> "RunConfig":
        """A copy with ``changes``; keys that are not run settings but parameters of the model go to
        ``model_params`` (a ``model.`` prefix forces that). Unknown keys are refused."""
        config = dataclasses.replace(self, model_params=dict(self.model_params),
                                     dataset_options=dict(self.dataset_options))
        model_keys = set(get_spec(changes.get("model", config.model)).params)
        for key, value in changes.items():
            if key.startswith("model."):
                config.model_params[key[len("model."):]] = value
            elif key in config.fields():
                setattr(config, key, value)
            elif key in model_keys:
                config.model_params[key] = value
            else:
                raise ConfigError(
                    f"unknown setting {key!r}; run settings: {', '.join(self.fields())}; "
                    f"{config.model} parameters: {', '.join(sorted(model_keys))}"
                )
        return config


# Presets reproduce the tutorials exactly; every option can still be overridden one by one.
PRESETS: dict[str, dict[str, Any]] = {
    "tutorial-sunspots": {
        "model": "simple-rnn",
        "model_params": {"units": 3, "activation": "tanh", "output_activation": "tanh", "skip": "none",
                         "center": "none"},
        "dataset": "sunspots", "window": 12, "stride": 12, "within_parts": True, "split": "chronological",
        "train_fraction": 0.8, "validation_fraction": 0.0, "scaler_fit": "all", "scaling": "minmax",
        "epochs": 20, "batch_size": 1, "early_stopping": False, "learning_rate": 1e-3,
    },
    "tutorial-fibonacci": {
        "model": "attention-rnn",
        "model_params": {"units": 2, "activation": "tanh", "output_activation": "tanh", "skip": "none",
                         "center": "none"},
        "dataset": "fibonacci", "dataset_options": {"n": 1200}, "window": 20, "stride": 1, "split": "shuffled",
        "shuffle_seed": 13, "train_fraction": 0.7, "validation_fraction": 0.0, "scaler_fit": "all",
        "scaling": "minmax", "epochs": 30, "batch_size": 1, "early_stopping": False, "learning_rate": 1e-3,
    },
}


def preset_config(name: str | None, **overrides) -> RunConfig:
    """A RunConfig from a preset (or the defaults when ``name`` is None) with ``overrides`` applied.

    Overriding ``model`` keeps the preset's model parameters that the new model also takes.
    """
    if name is None:
        return RunConfig().updated(**overrides)
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; available: {', '.join(PRESETS)}")
    settings = dict(PRESETS[name])
    model = overrides.get("model", settings["model"])
    accepted = get_spec(model).params
    settings["model_params"] = {k: v for k, v in settings["model_params"].items() if k in accepted}
    settings["model"] = model
    base = RunConfig(**settings)
    return base.updated(**{k: v for k, v in overrides.items() if k != "model"})


# ----------------------------------------------------------------------------------------------------
# Result of a run
# ----------------------------------------------------------------------------------------------------
@dataclass
class PartForecast:
    """Forecasts of one part: first-target timestamps, actual and predicted (samples, horizon), series units.

    ``series`` holds the series number of each window; ``baselines`` the baselines' forecasts by key.
    """

    index: pd.Index
    actual: np.ndarray
    predicted: np.ndarray
    actual_scaled: np.ndarray
    predicted_scaled: np.ndarray
    baselines: dict[str, np.ndarray]
    series: np.ndarray
    intervals: dict = field(default_factory=dict)  # model key -> {quantile: (samples, horizon)} (with levels)


@dataclass
class RunResult:
    """A finished run. ``metrics`` is metrics.json's layout (means over series; for one series, its metrics);
    ``metrics_frame`` the tidy per-series frame (series, part, model, metric, value) it is computed from."""

    config: RunConfig
    data: WindowedPanel
    model: keras.Model
    history: pd.DataFrame
    forecasts: dict[str, PartForecast]
    metrics: dict
    epochs_run: int
    best_epoch: int | None
    fit_seconds: float
    predict_seconds: float
    season: int
    metrics_frame: pd.DataFrame = None
    mase_scale: np.ndarray = None
    baselines: list = None
    baseline_seconds: dict = None  # baseline key -> seconds spent forecasting it (statistical ones: fitting too)
    conformal: dict = None         # model key -> intervals.Conformal (calibrated on the validation part)
    interval_scale: np.ndarray = None  # per series: the scale conformal scores are measured in
    quantile_conformal: Any = None     # intervals.QuantileConformal of a loss=quantile model

    @property
    def parameter_count(self) -> int:
        return int(self.model.count_params())

    @property
    def panel(self) -> Panel:
        return self.data.panel


# ----------------------------------------------------------------------------------------------------
# Data loading
# ----------------------------------------------------------------------------------------------------
def load_panel(config: RunConfig) -> Panel:
    """The data a config names: a registered dataset or a CSV file (one series, or long with --id-column)."""
    if config.csv is not None and config.dataset is not None:
        raise ConfigError("give either a dataset or a CSV file, not both")
    if config.csv is not None:
        return read_csv_panel(config.csv, config.column, config.date_column, config.id_column, fill=config.fill)
    if config.dataset is None:
        raise ConfigError("no data: give a dataset (e.g. sunspots) or a CSV file with its column")
    return as_panel(load_dataset(config.dataset, **config.dataset_options), fill=config.fill)


def split_of(config: RunConfig, panel: Panel) -> SplitSpec:
    """The split a config asks for; "auto" is the competitions' hold-out for data that defines one
    (M3, M1: the last h values of each series), chronological fractions otherwise."""
    method = config.split
    if method == "auto":
        method = "holdout" if panel.horizon or config.holdout else "chronological"
    holdout = None
    if method == "holdout":
        holdout = config.holdout or panel.horizon or config.horizon
    return SplitSpec(method, config.train_fraction, config.validation_fraction, config.within_parts,
                     config.shuffle_seed, holdout)


DEFAULT_WINDOW = 24


def auto_window(panel: Panel, horizon: int) -> int:
    """The default input window: DEFAULT_WINDOW, shortened to the shortest series' length minus the horizon
    so that every series of a panel of short series (M3 yearly: 20 values, h = 6 -> 14) is forecast rather
    than left out; never below 2. Longer series still train on every window they hold."""
    return int(max(2, min(DEFAULT_WINDOW, int(panel.lengths.min()) - horizon)))


def resolved_window(panel: Panel, config: RunConfig) -> int:
    return config.window if config.window is not None else auto_window(panel, config.horizon)


def window_config(data, config: RunConfig, require_test: bool = True) -> WindowedPanel:
    panel = as_panel(data, fill=config.fill)
    return window_panel(panel, resolved_window(panel, config), config.horizon, config.stride, split_of(config, panel),
                        config.scaling, config.scaler_fit, require_test=require_test)


SHUFFLE_BUFFER = 262_144  # windows; below it every epoch is a full uniform shuffle, as before panels
# Up to this size the windows are gathered once, up front: a pipeline with a map step costs ~6 ms per iterator
# and Keras makes two iterators per dataset per epoch, ~30% of a sunspots epoch. Above it each batch gathers
# its windows (memory stays at the flat series). Both give the same batches in the same order.
GATHER_ONCE_BYTES = 64 * 2**20


def make_dataset(scaled: np.ndarray, starts: np.ndarray, window: int, horizon: int, batch_size: int,
                 shuffle_seed: int | None = None) -> tf.data.Dataset:
    """Batches of (X, y) gathered from the flat scaled panel inside the tf.data graph.

    Only the flat array of all series and the window starts are held in memory; each batch gathers its
    windows (a start never lets a window cross into the next series), so 10,000 series never become a
    (samples, window) array. With ``shuffle_seed`` batches mix windows of every series in a seeded order.
    """
    series = tf.constant(scaled.astype(np.float32))
    offsets = tf.range(window + horizon, dtype=tf.int64)
    starts = starts.astype(np.int64)
    if shuffle_seed is not None and len(starts) > SHUFFLE_BUFFER:
        # a shuffle buffer holds ~190 bytes per window; above SHUFFLE_BUFFER windows a seeded permutation
        # first mixes every series, then the bounded buffer reshuffles each epoch (memory stays bounded)
        starts = starts[np.random.default_rng(shuffle_seed).permutation(len(starts))]

    def gather(batch_starts):
        windows = tf.gather(series, batch_starts[:, None] + offsets[None, :])  # (batch, window + horizon)
        return windows[:, :window, None], windows[:, window:]

    gather_once = len(starts) * (window + horizon) * 4 <= GATHER_ONCE_BYTES
    dataset = tf.data.Dataset.from_tensor_slices(gather(starts) if gather_once else starts)
    if shuffle_seed is not None:
        dataset = dataset.shuffle(min(len(starts), SHUFFLE_BUFFER), seed=shuffle_seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size)
    if not gather_once:
        dataset = dataset.map(gather, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


# ----------------------------------------------------------------------------------------------------
# Callbacks
# ----------------------------------------------------------------------------------------------------
class _NonFiniteLoss(keras.callbacks.Callback):
    """Stops training at the first non-finite loss and remembers where."""

    def __init__(self):
        super().__init__()
        self.failed_epoch: int | None = None
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            self.failed_epoch = self.epoch + 1
            self.model.stop_training = True


_STOP = {"training": False, "requested": False}


def request_stop() -> None:
    """Stop what runs now as Ctrl-C would, at a safe point: inside training at the end of the current steps
    (an exception raised inside TensorFlow's execution can crash the process), elsewhere at once."""
    if _STOP["training"]:
        _STOP["requested"] = True
    else:
        raise KeyboardInterrupt


class _StopOnRequest(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if _STOP["requested"]:
            self.model.stop_training = True


class EpochProgress(keras.callbacks.Callback):
    """One status line per epoch (loss, validation loss, ETA): rewritten in place on a terminal."""

    def __init__(self, epochs: int, stream=None, every: int = 10):
        super().__init__()
        self.epochs, self.stream, self.every = epochs, stream or sys.stderr, every
        self.interactive = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        done = epoch + 1
        elapsed = time.perf_counter() - self.start
        eta = elapsed / done * (self.epochs - done)
        text = f"epoch {done}/{self.epochs}  loss {logs.get('loss', float('nan')):.5f}"
        if "val_loss" in logs:
            text += f"  val_loss {logs['val_loss']:.5f}"
        text += f"  elapsed {elapsed:.0f}s  ETA <= {eta:.0f}s"
        if self.interactive:
            self.stream.write("\r" + text.ljust(90))
            self.stream.flush()
        elif done == 1 or done % self.every == 0:
            self.stream.write(text + "\n")

    def on_train_end(self, logs=None):
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()


# ----------------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------------
def _optimizer(config: RunConfig, steps_per_epoch: int):
    """Adam with the configured schedule (settings already checked by check_config)."""
    if config.lr_schedule == "constant":
        return keras.optimizers.Adam(learning_rate=config.learning_rate)
    warmup = max(1, config.warmup_epochs * steps_per_epoch)
    total = max(warmup + 1, config.epochs * steps_per_epoch)
    decay = "cosine" if config.lr_schedule == "warmup-cosine" else "inverse_sqrt"
    return keras.optimizers.Adam(learning_rate=WarmupSchedule(config.learning_rate, warmup, decay, total))


# Every run setting's range, checked before any work (README: "Settings and their ranges").
INTEGER_RANGES = {"horizon": (1, 10_000), "stride": (1, 100_000), "epochs": (1, 100_000),
                  "batch_size": (1, 1_000_000), "warmup_epochs": (0, 10_000), "patience": (1, 10_000),
                  "seed": (0, C.SEED_MAX), "shuffle_seed": (0, C.SEED_MAX), "steps_per_execution": (1, 10_000),
                  "ensemble": (1, 100)}
OPTIONAL_RANGES = {"window": (2, 100_000), "season": (1, 10_000), "holdout": (1, 100_000)}


def check_config(config: RunConfig) -> RunConfig:
    """Refuse a setting outside its documented range or of the wrong type, naming it, its value and the range."""
    from .data import FILL_METHODS
    from .windows import SCALER_FITS, SCALINGS

    C.text("model", config.model, optional=False)
    get_spec(config.model)
    for name, (low, high) in INTEGER_RANGES.items():
        C.positive_int(name, getattr(config, name), low, high)
    for name, (low, high) in OPTIONAL_RANGES.items():
        C.optional_positive_int(name, getattr(config, name), low, high)
    C.number("learning_rate", config.learning_rate, 0.0, 10.0, low_open=True)
    C.number("train_fraction", config.train_fraction, 0.0, 1.0, low_open=True)
    C.fraction("validation_fraction", config.validation_fraction)
    for name in ("early_stopping", "within_parts"):
        C.boolean(name, getattr(config, name))
    if config.jit_compile != "auto":
        if not isinstance(config.jit_compile, bool):
            raise ConfigError(f"jit_compile must be true, false or auto; got {config.jit_compile!r}")
    C.optional_choice("fill", config.fill, FILL_METHODS)
    C.choice("scaling", config.scaling, SCALINGS)
    C.choice("scaler_fit", config.scaler_fit, SCALER_FITS)
    C.choice("split", config.split, ("auto",) + SPLIT_METHODS)
    C.choice("skip_init", config.skip_init, SKIP_INITS)
    C.choice("linear_fit", config.linear_fit, LINEAR_FITS)
    C.choice("lr_schedule", config.lr_schedule, LR_SCHEDULES)
    C.choice("ensemble_method", config.ensemble_method, EnsembleCombine.METHODS)
    C.choice("loss", config.loss, LOSSES)
    if model_quantiles(config) is None and config.level and not config.validation_fraction:
        raise ConfigError("conformal intervals (level) are calibrated on the validation part, and "
                          "validation_fraction is 0; set validation_fraction above 0 (or train with loss=quantile)")
    statistical_keys(config.baselines)
    C.mapping("model_params", config.model_params)
    C.mapping("dataset_options", config.dataset_options)
    for name in ("dataset", "csv", "column", "date_column", "id_column"):
        C.text(name, getattr(config, name))
    get_spec(config.model).resolve(config.model_params)
    return config


def model_quantiles(config: RunConfig) -> tuple | None:
    """The quantiles a ``loss="quantile"`` model outputs (None for other losses), checked: the given ones, else
    each level's bounds, else 0.1, 0.5, 0.9; the median is always among them (it is the point forecast)."""
    from .intervals import check_levels, check_quantiles, level_name, missing_levels, quantiles_for_levels

    levels = check_levels(config.level)
    if config.loss != "quantile":
        if config.quantiles is not None:
            raise ConfigError(f"quantiles is used with loss=quantile only; got loss={config.loss} (set loss=quantile "
                              "or drop quantiles)")
        return None
    if config.quantiles is None:
        return quantiles_for_levels(levels) if levels else DEFAULT_QUANTILES
    quantiles = tuple(sorted(set(check_quantiles(config.quantiles)) | {0.5}))
    missing = missing_levels(levels, quantiles)
    if missing:
        needed = ", ".join(f"{q:g}" for level in missing for q in quantiles_for_levels([level]) if q not in quantiles)
        raise ConfigError(f"level {level_name(missing[0])} needs quantiles {needed}, which quantiles="
                          f"{','.join(f'{q:g}' for q in quantiles)} lacks; add them or drop quantiles (the levels "
                          "then choose them)")
    return quantiles


def start_from_linear_autoregression(model: keras.Model, data: WindowedPanel, zero_output: bool = False) -> bool:
    """Start a model's linear skip path at the least-squares autoregression of the training windows.

    The skip Dense gets the AR coefficients fit on the (scaled) training windows of every series (pooled:
    one global model has one skip path), so training begins near the linear model's forecasts and the
    network learns what the linear model misses. With ``zero_output`` the network's output layer also
    starts at zero (training starts exactly at the AR forecasts). Returns False (and changes nothing) for
    models without a skip path.
    """
    names = {layer.name for layer in model.layers}
    if "linear_skip" not in names or "output" not in names:
        return False
    coefficients = linear_coefficients(data, data.starts["train"], relative="level" in names)  # (window + 1, h)
    skip = model.get_layer("linear_skip")
    skip.set_weights([coefficients[:-1].astype(np.float32), coefficients[-1].astype(np.float32)])
    if zero_output:
        output = model.get_layer("output")
        output.set_weights([np.zeros_like(w) for w in output.get_weights()])
    return True


# XLA compiles the training step once (1.5-3 s more for the first epoch) and then runs each step faster: on
# M3 monthly (~3,000 steps per epoch) simple-rnn's fit 110 -> 44 s and attention-rnn's 174 -> 71 s with the same
# epochs and the same sMAPE (benchmarks/results/xla.md); on sunspots (71 steps per epoch) the compile costs more
# than it saves. So "auto" turns it on for epochs of at least this many steps, for the models whose spec says so
# (not the transformer: there XLA changed the numerics and gained ~5% per epoch).
XLA_MIN_STEPS = 500


def use_xla(config: RunConfig, steps_per_epoch: int) -> bool:
    """Whether training compiles with XLA: the jit_compile setting, or for "auto" long epochs of models whose
    spec allows it."""
    if config.jit_compile == "auto":
        return get_spec(config.model).xla and steps_per_epoch >= XLA_MIN_STEPS
    return bool(config.jit_compile)


def _member_config(config: RunConfig, index: int) -> RunConfig:
    """The settings of ensemble member ``index``: one model, seeded seed + index."""
    return dataclasses.replace(config, ensemble=1, seed=(config.seed + index) % (C.SEED_MAX + 1))


def _train_member(shared: dict, index: int):
    """One ensemble member (a unit of work of any engine): (the model as .keras bytes, history, epochs, best)."""
    import os
    import tempfile

    model, history, epochs, best = train_model(shared["data"], _member_config(shared["config"], index))
    handle, path = tempfile.mkstemp(suffix=".keras")
    os.close(handle)
    try:
        model.save(path)
        with open(path, "rb") as stream:
            return stream.read(), history, epochs, best
    finally:
        os.unlink(path)


def _load_member(payload: bytes) -> keras.Model:
    import os
    import tempfile

    handle, path = tempfile.mkstemp(suffix=".keras")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
        return keras.saving.load_model(path, compile=False)
    finally:
        os.unlink(path)


def train_model(data: WindowedPanel, config: RunConfig, progress: keras.callbacks.Callback | None = None,
                engine=None):
    """Build, compile and train the configured model on ``data``; returns (model, history, epochs, best).

    With ``ensemble=k`` it trains k members (seeds seed, seed + 1, ... each with its own early stopping) and
    returns one Keras model whose forecast is their median (or mean); the history, epochs and best epoch
    are the first member's, with the epochs of every member in ``history.attrs["member_epochs"]``. The
    members are independent units of work: with an ``engine`` ("ray", or one of :func:`tsattn.engine.get_engine`)
    they train there, each in its own process, with the same weights as one after another.
    """
    check_config(config)
    if config.ensemble > 1:
        if isinstance(engine, str):
            from .engine import get_engine

            engine = get_engine(engine)
        if engine is None or engine.in_process:
            trained = [train_model(data, _member_config(config, i), progress) for i in range(config.ensemble)]
        else:
            outcomes = dict(engine.map(_train_member, {"data": data, "config": config}, range(config.ensemble)))
            failed = [f"member {i}: {outcomes[i].error}" for i in range(config.ensemble) if not outcomes[i].ok]
            if failed:
                raise TrainingError(f"ensemble training failed: {'; '.join(failed)}")
            trained = [(_load_member(outcomes[i].value[0]), *outcomes[i].value[1:]) for i in range(config.ensemble)]
        members = [keras.Model(member.input, member.output, name=f"member_{i}")
                   for i, (member, *_) in enumerate(trained)]
        inputs = keras.Input(shape=(data.window, 1), name="window")
        combined = EnsembleCombine(config.ensemble_method, name="ensemble")([m(inputs) for m in members])
        model = keras.Model(inputs, combined, name=f"{config.model.replace('-', '_')}_ensemble")
        _, history, epochs_run, best = trained[0]
        history.attrs["member_epochs"] = [epochs for _, _, epochs, _ in trained]
        return model, history, epochs_run, best
    keras.utils.set_random_seed(config.seed)  # weights, dropout and batch order
    quantiles = model_quantiles(config)
    model = get_model(config.model, window=data.window, features=1, horizon=data.horizon, quantiles=quantiles,
                      **config.model_params)
    if config.skip_init != "zeros":
        start_from_linear_autoregression(model, data, zero_output=config.skip_init.endswith("zero-output"))
    batch_size = min(config.batch_size, data.count("train"))
    steps_per_epoch = math.ceil(data.count("train") / batch_size)
    # several training steps per call of the compiled function: the same losses, less dispatch per step
    # (a ~1k-parameter model is dispatch-bound); the non-finite guard then reads the running loss every
    # `steps_per_execution` steps, and a NaN stays in that running mean, so it still stops the same epoch
    loss = PinballLoss(quantiles) if quantiles else config.loss
    model.compile(optimizer=_optimizer(config, steps_per_epoch), loss=loss, jit_compile=use_xla(config, steps_per_epoch),
                  steps_per_execution=config.steps_per_execution)
    train = make_dataset(data.scaled, data.starts["train"], data.window, data.horizon, batch_size,
                         shuffle_seed=config.seed)
    has_validation = data.count("validation") > 0
    validation = (make_dataset(data.scaled, data.starts["validation"], data.window, data.horizon, 1024)
                  if has_validation else None)
    guard = _NonFiniteLoss()
    callbacks = [guard, _StopOnRequest()]
    if config.early_stopping and has_validation:
        callbacks.append(keras.callbacks.EarlyStopping(monitor="val_loss", patience=config.patience,
                                                       restore_best_weights=True))
    if progress is not None:
        callbacks.append(progress)
    _STOP.update(training=True, requested=False)
    try:
        history = model.fit(train, validation_data=validation, epochs=config.epochs, callbacks=callbacks, verbose=0,
                            shuffle=False)  # the dataset is already shuffled with the seed
    finally:
        stopped = _STOP["requested"]
        _STOP.update(training=False, requested=False)
    if stopped:
        raise KeyboardInterrupt
    if guard.failed_epoch is not None:
        raise TrainingError(
            f"training loss became non-finite at epoch {guard.failed_epoch}; lower the learning rate "
            f"(now {config.learning_rate:g}, e.g. --set learning_rate={config.learning_rate / 10:g}) or check "
            "the data's scale"
        )
    frame = pd.DataFrame(history.history)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="epoch")
    best = None
    if "val_loss" in frame:
        best = int(frame["val_loss"].idxmin())
    return model, frame, len(frame), best


def season_of(config: RunConfig, panel: Panel) -> int:
    """The season length: the setting, else from the panel's frequency (12 for monthly, 4 quarterly...)."""
    return config.season or M.season_from_frequency(panel.freq)


def fit(config: RunConfig | None = None, series=None, progress: keras.callbacks.Callback | None = None,
        panel: Panel | None = None, engine=None, **overrides) -> RunResult:
    """Train and evaluate one global model: the shared harness behind the CLI, Forecaster and compare.

    Args:
        config: a :class:`RunConfig` (default: ``RunConfig()``, attention-rnn on sunspots).
        series: user data instead of the config's dataset / CSV: one series or a panel (a long frame
            ``unique_id, ds, y``, a dict of Series, a :class:`tsattn.panel.Panel`).
        progress: an optional Keras callback (e.g. :class:`EpochProgress`).
        panel: the data the config names, already loaded by :func:`load_panel` (compare loads each dataset
            once and sends it to every run); the config keeps naming it.
        engine: where the members of an ensemble (``ensemble=k``) train: None / "local" here, one after
            another; an engine of :func:`tsattn.engine.get_engine` (local processes or Ray) in parallel.
        **overrides: settings or model parameters applied to ``config`` (see :meth:`RunConfig.updated`).

    Example:
        >>> result = fit(model="simple-rnn", epochs=5)
        >>> result.metrics["test"]["model"]["rmse"], result.metrics["test"]["naive"]["rmse"]
    """
    from .evaluation import score_windows

    config = config or RunConfig()
    if overrides:
        config = config.updated(**overrides)
    check_config(config)  # unknown model, parameters or settings out of range fail before any work
    if panel is not None:
        if series is not None:
            raise ConfigError("give fit either series (user data) or panel (the config's data, loaded), not both")
    elif series is None:
        panel = load_panel(config)
    else:
        panel = as_panel(series, fill=config.fill)
        config = config.updated(dataset=None, csv=None)
    data = window_config(panel, config)
    season = season_of(config, data.panel)
    start = time.perf_counter()
    model, history, epochs_run, best = train_model(data, config, progress, engine)
    fit_seconds = time.perf_counter() - start
    network = NetworkModel(model, config.model, data.window, data.horizon, model_quantiles(config))
    baselines = [b.fit(data, config) for b in baseline_models(data.window, data.horizon, season, config.linear_fit,
                                                              config.baselines)]
    evaluation = score_windows(network, baselines, data, season, levels=config.level)
    return RunResult(config, data, model, history, evaluation.forecasts, evaluation.metrics, epochs_run, best,
                     fit_seconds, evaluation.predict_seconds, season, evaluation.frame, evaluation.mase_scale,
                     baselines, evaluation.baseline_seconds, evaluation.conformal, evaluation.interval_scale,
                     evaluation.quantile_conformal)

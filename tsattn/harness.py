"""The one training harness: every model is fitted through :func:`fit_state` and scored through :func:`fit`.

panel (one series or many) -> :func:`tsattn.config.window_config` (windows, split, per-series scalers) ->
:func:`fit_state`: tf.data batches gathered from the flat array of all series -> one global Keras model with
early stopping on validation loss (or a baseline's fit) -> conformal calibration on the validation part ->
a :class:`tsattn.state.FittedState`. :func:`fit` then scores that state on every part beside the naive,
seasonal-naive and linear-autoregression baselines (:func:`tsattn.evaluation.score_windows`).

``tsattn fit``, ``tsattn.Forecaster.fit``, compare, backtest refits and the benchmarks all call
:func:`fit_state`, so the same data, settings and seed give the same model, forecasts and intervals.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _backend  # quiet TensorFlow import
import keras
import tensorflow as tf
from keras import layers

from . import metrics as M
from .baselines import (NetworkModel, baseline_models, choose_covariate_lags, choose_normalisation, end_deviation,
                        cross_series_coefficients, forecaster_baseline, linear_coefficients,
                        statsforecast_installed)
from .config import LossPart, NetworkPart, RunConfig, TrainingPart, resolve, season_of, settings_text, window_config
from .errors import ConfigError, TooShortError, TrainingError, user_stacklevel
from .evaluation import PartForecast, calibrate, score_windows  # noqa: F401  (PartForecast: RunResult's parts)
from .intervals import series_scale, window_scale
from .layers import Adam, EnsembleCombine, HalvingSchedule, StackMembers, WarmupSchedule
from .losses import get_loss
from .models import get_model
from .panel import Panel
from .progress import EVERY_SECONDS, progress_bar
from .selection import AUTO, fit_auto, short_series_fallback
from .state import FittedState, kept_values, seen_until, tails_of
from .windows import WindowedPanel, gather_batch, target_mask


# ----------------------------------------------------------------------------------------------------
# Result of a run
# ----------------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    """A finished run: the fitted state and its scores. ``metrics`` is metrics.json's layout (means over series;
    for one series, its metrics); ``metrics_frame`` the tidy per-series frame (series, part, model, metric,
    value) it is computed from."""

    state: FittedState
    data: WindowedPanel
    forecasts: dict[str, PartForecast]
    metrics: dict
    predict_seconds: float
    metrics_frame: pd.DataFrame
    baselines: list
    baseline_seconds: dict         # baseline key -> seconds spent forecasting it (statistical ones: fitting too)
    calibration: dict              # model key -> intervals.Calibration (on the validation part), baselines too
    interval_scale: np.ndarray     # per series: its in-sample scale (what conformal scores are measured in with
    # interval_scale=insample; the others measure each window's at its origin: tsattn.evaluation.scales_at)

    # what the state holds, under the names reports read
    config = property(lambda self: self.state.config)
    model = property(lambda self: self.state.keras_model)
    history = property(lambda self: self.state.history)
    epochs_run = property(lambda self: self.state.epochs_run)
    best_epoch = property(lambda self: self.state.best_epoch)
    fit_seconds = property(lambda self: self.state.fit_seconds)
    season = property(lambda self: self.state.season)
    mase_scale = property(lambda self: self.state.mase_scale)
    quantile_conformal = property(lambda self: self.state.quantile_conformal)
    conformal = property(lambda self: self.state.conformal)

    @property
    def parameter_count(self) -> int:
        return int(self.model.count_params()) if self.model is not None else 0

    @property
    def panel(self) -> Panel:
        return self.data.panel

    @property
    def beside(self) -> tuple:
        """The keys of the baselines shown beside the model (tables, verdict): every one scored but the model itself
        (`tsattn fit --model linear` is scored beside the linear baseline too, the same numbers: one row, not two)."""
        return tuple(model.key for model in self.baselines if model.label != self.config.model)


# ----------------------------------------------------------------------------------------------------
# Data loading
# ----------------------------------------------------------------------------------------------------
SHUFFLE_BUFFER = 262_144  # windows; below it every epoch is a full uniform shuffle, as before panels
# Up to this size the windows are gathered once, up front: a pipeline with a map step costs ~6 ms per iterator
# and Keras makes two iterators per dataset per epoch, ~30% of a sunspots epoch. Above it each batch gathers
# its windows (memory stays at the flat series). Both give the same batches in the same order.
GATHER_ONCE_BYTES = 64 * 2**20


def _untuned(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """``dataset`` with tf.data's autotuning off (its parallel map and prefetch then keep fixed sizes). With it on, about
    half the processes training patch-transformer on M3 monthly took ~55% longer for the same CPU time (2 epochs: 23.5 s
    against 14-16 s, the cores a third idle), as if tuned into waiting on the training; off, 10 of 10 were fast, nbeats
    steadier too. The batches, and so the weights, are the same: autotuning changes when a batch is made, not what."""
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)


def make_dataset(scaled: np.ndarray, starts: np.ndarray, window: int, horizon: int, batch_size: int,
                 shuffle_seed: int | None = None, extras: np.ndarray | None = None,
                 sampled: bool = False, first: np.ndarray | None = None,
                 series: np.ndarray | None = None, limits: np.ndarray | None = None) -> tf.data.Dataset:
    """Batches of (X, y) gathered from the flat scaled panel inside the tf.data graph.

    Only the flat array of all series and the window starts are held in memory; each batch gathers its
    windows (a start never lets a window cross into the next series), so 10,000 series never become a
    (samples, window) array. With ``shuffle_seed`` batches mix windows of every series in a seeded order.
    ``extras`` (windows, k) are appended to each window's target (a series-units loss reads its series'
    offset, scale and MASE scale there). ``sampled`` gives an endless stream of batches of windows drawn with
    replacement in a seeded order (N-BEATS' sampling; the caller sets the steps per epoch). ``first`` (each
    window's series start) pads a window that starts before its series with the series' first value. ``series``
    (each window's series key, its rank in sorted-id order; sampled only) draws a series uniformly, then one of its
    windows. ``limits`` (each window's end of known targets, :meth:`WindowedPanel.training_windows`) appends a
    (horizon,) mask after the target and its extras, 0 where a target runs past its part's end (read by
    :class:`MaskedTargets`).
    """
    if first is None:
        first = starts  # no window reaches before its series: clipping at its own start changes nothing
    if limits is not None:  # the mask travels with the target, after the extras
        mask = target_mask(starts, window, horizon, limits)
        extras = mask if extras is None else np.concatenate([np.asarray(extras, dtype=np.float32), mask], axis=1)
    if sampled:
        return _sampled_dataset(scaled, starts, window, horizon, batch_size, shuffle_seed or 0, extras, first,
                                series=series, limits=limits)
    columns = np.asarray(scaled, dtype=np.float32).reshape(len(scaled), -1)  # (N, 1 + covariates): y in column 0
    starts = starts.astype(np.int64)
    first = np.asarray(first, dtype=np.int64)
    limits = starts + window + horizon if limits is None else np.asarray(limits, dtype=np.int64)
    if shuffle_seed is not None and len(starts) > SHUFFLE_BUFFER:
        # a shuffle buffer holds ~190 bytes per window; above SHUFFLE_BUFFER windows a seeded permutation
        # first mixes every series, then the bounded buffer reshuffles each epoch (memory stays bounded)
        order = np.random.default_rng(shuffle_seed).permutation(len(starts))
        starts, first, limits = starts[order], first[order], limits[order]
    gather_once = len(starts) * (window + horizon) * columns.shape[1] * 4 <= GATHER_ONCE_BYTES
    if extras is not None:
        extras = np.asarray(extras, dtype=np.float32)
        if shuffle_seed is not None and len(starts) > SHUFFLE_BUFFER:
            extras = extras[np.random.default_rng(shuffle_seed).permutation(len(extras))]  # as the starts above
    if gather_once:  # the one gather of windows (tsattn.windows.gather_batch), done up front
        batch = gather_batch(columns if columns.shape[1] > 1 else columns[:, 0], starts, window, horizon, first=first,
                             limits=limits)
        target = batch.target.astype(np.float32)
        if extras is not None:
            target = np.concatenate([target, extras], axis=1)
        dataset = tf.data.Dataset.from_tensor_slices((batch.network_input(), target))
    else:  # the same layout gathered per batch inside the graph: inputs (batch, window, columns), target column 0
        flat = tf.constant(columns)
        offsets = tf.range(window + horizon, dtype=tf.int64)

        def gather(batch_starts, batch_first, batch_limits, batch_extras=None):
            positions = tf.maximum(batch_starts[:, None] + offsets[None, :], batch_first[:, None])  # padded inputs
            positions = tf.minimum(positions, batch_limits[:, None] - 1)  # masked targets read the last known value
            windows = tf.gather(flat, positions)  # (batch, window + horizon, columns)
            target = windows[:, window:, 0]
            if batch_extras is not None:
                target = tf.concat([target, batch_extras], axis=1)
            return windows[:, :window, :], target

        dataset = tf.data.Dataset.from_tensor_slices((starts, first, limits) if extras is None else
                                                     (starts, first, limits, extras))
    if shuffle_seed is not None:
        dataset = dataset.shuffle(min(len(starts), SHUFFLE_BUFFER), seed=shuffle_seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size)
    if not gather_once:
        dataset = dataset.map(gather, num_parallel_calls=tf.data.AUTOTUNE)
    return _untuned(dataset.prefetch(tf.data.AUTOTUNE))


def _sampled_dataset(scaled, starts, window: int, horizon: int, batch_size: int, seed: int, extras=None, first=None,
                     series=None, limits=None):
    """Endless batches of ``batch_size`` windows drawn uniformly with replacement; seeded, a new draw each pass.
    With ``series`` (each window's series key) a series is drawn uniformly first, then one of its windows (the
    N-BEATS authors' sampler: a long series is not drawn more often than a short one)."""
    batch = gather_batch(np.asarray(scaled, dtype=np.float32), starts, window, horizon, first=first, limits=limits)
    inputs = tf.constant(batch.network_input())
    target = batch.target.astype(np.float32)
    if extras is not None:
        target = np.concatenate([target, np.asarray(extras, dtype=np.float32)], axis=1)
    target = tf.constant(target)
    count = tf.constant(len(starts), dtype=tf.int64)
    # the raw draws are batched first and mapped a batch at a time: the same picks as mapping each draw, in ~1 ms a
    # batch of 1024 instead of ~33 ms (a tf.data function call per draw), which took a core from training
    if series is None:
        picks = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(batch_size).map(
            lambda r: tf.math.floormod(r, count))
    else:  # windows grouped by series: (first window index, windows) of each series that has any
        order = np.argsort(series, kind="stable")
        inputs, target = tf.gather(inputs, order), tf.gather(target, order)
        _, begin, sizes = np.unique(np.asarray(series)[order], return_index=True, return_counts=True)
        begin, sizes = tf.constant(begin, dtype=tf.int64), tf.constant(sizes, dtype=tf.int64)
        groups = tf.constant(len(sizes), dtype=tf.int64)
        draws = tf.data.Dataset.zip(
            (tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(batch_size),
             tf.data.Dataset.random(seed=seed + 1, rerandomize_each_iteration=True).batch(batch_size)))

        def pick(first_draw, second_draw):
            group = tf.math.floormod(first_draw, groups)
            return tf.gather(begin, group) + tf.math.floormod(second_draw, tf.gather(sizes, group))

        picks = draws.map(pick)
    return _untuned(picks.map(lambda i: (tf.gather(inputs, i), tf.gather(target, i))).prefetch(tf.data.AUTOTUNE))


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
    """Progress per epoch: on a terminal a tqdm bar (epochs done, loss and validation loss, tqdm's rate and time
    left); off a terminal (a log, CI) a status line for the first epoch, every ``every``-th and at least one every
    10 s (loss, validation loss, ETA).

    The lines' ETA is the epochs left at the pace of the epochs after the first (the first also traces and
    compiles the model, often taking several times longer), so none is given after the first epoch; it is an
    upper bound when early stopping may end training sooner."""

    def __init__(self, epochs: int, stream=None, every: int = 10, heartbeat=None):
        super().__init__()
        self.epochs, self.stream, self.every = epochs, stream or sys.stderr, every
        self.heartbeat = heartbeat  # a tsattn.progress.Heartbeat: told what runs, and every line written
        if heartbeat is not None:  # the CLI's: a bar where its progress output has a terminal (not with --json)
            self.stream = heartbeat.stream(self.stream)
            self.interactive = heartbeat.terminal is not None
        else:
            self.interactive = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = self.last_line = time.perf_counter()
        self.first_end = None
        self.label = ""
        self.bar = None
        self.epoch, self.step = 0, 0  # where training is (the heartbeat reads it within a long epoch)

    def stage(self, label: str, epochs: int | None = None) -> None:
        """Another fit begins (``model="auto"``'s next candidate, a final fit): its lines start with ``label``, and the
        heartbeat says it until training starts (a statistical candidate never trains: without this the heartbeat
        went on naming the last network, "auto, simple-rnn: training done", while ETS fitted)."""
        self.label = label
        self.epochs = self.epochs if epochs is None else epochs
        self.start, self.first_end = time.perf_counter(), None
        if self.heartbeat is not None:
            self.heartbeat.stage(f"{label}fitting")

    def final_fit(self, epochs: int) -> None:
        """The final fit begins (training + validation values, ``epochs`` epochs): its lines say so."""
        self.stage(f"{self.label.rstrip(': ')}, final fit: " if self.label else "final fit: ", epochs)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        done = epoch + 1
        now = time.perf_counter()
        elapsed = now - self.start
        if self.first_end is None:
            self.first_end = now
        losses = f"loss {logs.get('loss', float('nan')):.5f}"
        if "val_loss" in logs:
            losses += f"  val_loss {logs['val_loss']:.5f}"
        if self.bar is not None:
            self.bar.set_postfix_str(losses, refresh=False)
            self.bar.update(1)
            return
        text = f"{self.label}epoch {done}/{self.epochs}  {losses}  elapsed {elapsed:.0f}s"
        if done > 1:  # the pace of the epochs after the first (which compiles)
            pace = (now - self.first_end) / (done - 1)
            text += f"  ETA <= {pace * (self.epochs - done):.0f}s"
        elif self.epochs > 1:
            text += "  (ETA after epoch 2: the first epoch also compiles the model)"
        if done == 1 or done % self.every == 0 or now - self.last_line >= EVERY_SECONDS:
            self.stream.write(text + "\n")  # off a terminal: the first, every 10th, and one at least every 10 s
            self.last_line = now

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.step = epoch + 1, 0

    def on_train_batch_end(self, batch, logs=None):
        self.step = batch + 1  # one assignment a step: the heartbeat says how far a long epoch has got

    def _where(self) -> str:
        steps = (self.params or {}).get("steps")
        return (f"{self.label}training, epoch {self.epoch}/{self.epochs}, step {self.step}"
                + (f"/{steps}" if steps else ""))

    def on_train_begin(self, logs=None):
        if self.heartbeat is not None:
            self.heartbeat.stage(self._where)
        if self.interactive:  # a terminal: a bar (early stopping may end it before the total)
            self.bar = progress_bar(self.epochs, self.label.rstrip(": ") or "training", "epoch", self.stream)

    def on_train_end(self, logs=None):
        if self.heartbeat is not None:
            self.heartbeat.stage(f"{self.label}training done; scoring and calibrating")
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# ----------------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------------
def _optimizer(training: TrainingPart, steps_per_epoch: int):
    """Adam with the configured schedule (settings already checked by check_config)."""
    clip = {} if training.clipnorm is None else \
        {"global_clipnorm" if training.clip_scope == "global" else "clipnorm": training.clipnorm}
    if training.lr_schedule == "constant":
        return Adam(learning_rate=training.learning_rate, **clip)
    if training.lr_schedule == "halving":  # N-BEATS: the rate halves after each third of the training steps
        total = max(3, training.epochs * steps_per_epoch)
        rate = training.learning_rate
        return Adam(learning_rate=HalvingSchedule(rate, total), **clip)
    warmup = max(1, training.warmup_epochs * steps_per_epoch)
    total = max(warmup + 1, training.epochs * steps_per_epoch)
    decay = "cosine" if training.lr_schedule == "warmup-cosine" else "inverse_sqrt"
    return Adam(learning_rate=WarmupSchedule(training.learning_rate, warmup, decay, total), **clip)


class TrainedGraphs:
    """The compiled Keras models of this process's latest trainings (at most ``size``, the least recently used
    dropped), each under what its traced training step fixed (:func:`_trained`'s key: architecture, optimizer, losses,
    steps per call). A later training with the same key (a fit's final fit, the next seed of a comparison, an
    ensemble's next member, a backtest's or cross-validation's refit) takes that model, restarts it from its own
    initial weights, dropout state and a fresh optimizer, and trains it instead of compiling and tracing a new one:
    tracing took ~7 s (nbeats) to ~9 s (patch-transformer) of each M3 monthly training when each traced its step
    twice (before the optimizer was built ahead of the trace), about half since; most of a small fit. The
    restarted model trains to the same weights as a new one would (tests/test_harness.py). The model a caller gets is
    never the cached one (a later training would change it): it gets the trained weights."""

    def __init__(self, size: int = 4):
        self.size, self.models, self.restarts = size, collections.OrderedDict(), 0

    def take(self, key):
        """The cached model under ``key`` (taken out while it trains), or None."""
        return self.models.pop(key, None)

    def keep(self, key, model: keras.Model) -> None:
        self.models[key] = model
        while len(self.models) > self.size:
            self.models.popitem(last=False)

    def clear(self) -> None:
        self.models.clear()


TRAINED_GRAPHS = TrainedGraphs()


def _architecture(model: keras.Model) -> tuple:
    """What fixes a model's traced graph apart from its weights' values: each layer's class and settings (names
    aside: Keras numbers layers per process) and the weights' shapes."""
    parts = []
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            parts.append((type(layer).__name__, _architecture(layer)))
            continue
        config = {k: v for k, v in layer.get_config().items() if k != "name"}
        parts.append((type(layer).__name__, json.dumps(config, sort_keys=True, default=repr)))
    return tuple(parts), tuple(tuple(w.shape) for w in model.weights), tuple(sorted(_choices_of(model).items()))


def _optimizer_key(optimizer) -> str:
    """The optimizer's settings a traced training step holds (a halving schedule's total steps aside: a variable)."""
    config = {k: v for k, v in optimizer.get_config().items() if k != "name"}  # Keras numbers its optimizers
    if isinstance(optimizer._learning_rate, HalvingSchedule):
        config["learning_rate"] = ("halving", optimizer._learning_rate.learning_rate)
    return json.dumps(config, sort_keys=True, default=repr)


def _state_variables(model: keras.Model) -> list:
    """A model's weights and its random generators' states (dropout's), in an order two builds share."""
    return list(model.weights) + [v for v in model.variables if v.path.endswith("seed_generator_state")]


def _copy_state(target: keras.Model, source: keras.Model) -> None:
    """``target`` (of ``source``'s architecture) set to ``source``'s state: weights and random generators."""
    for variable, value in zip(_state_variables(target), _state_variables(source), strict=True):
        variable.assign(value)


def _restarted(trainer: keras.Model, fresh: keras.Model, optimizer) -> keras.Model:
    """``trainer`` (compiled and traced) set to ``fresh``'s initial state (weights, random generators) with its
    optimizer as new (steps and moments at zero, the schedule's total from ``optimizer``, built for this training)."""
    _copy_state(trainer, fresh)
    used = trainer.optimizer
    for variable in used.variables:
        if variable.name != "learning_rate":  # Adam's steps and moments start at zero; a constant rate stays
            variable.assign(keras.ops.zeros(variable.shape, variable.dtype))
    if isinstance(optimizer._learning_rate, HalvingSchedule):
        used._learning_rate.set_total_steps(int(keras.ops.convert_to_numpy(optimizer._learning_rate.total_steps)))
    return trainer


def _twin(model: keras.Model) -> keras.Model:
    """A new model of ``model``'s architecture in its state (weights, random generators), to compile and train."""
    twin = model.__class__.from_config(model.get_config())
    _copy_state(twin, model)
    return twin


def start_from_linear_autoregression(model: keras.Model, data: WindowedPanel, zero_output: bool = False,
                                     covariate_lags: int | str = 0, cross_series: bool = False) -> bool:
    """Start a model's linear skip path at the least-squares autoregression of the training windows.

    The skip Dense gets the AR coefficients fit on the (scaled) training windows of every series (pooled:
    one global model has one skip path), so training begins near the linear model's forecasts and the
    network learns what the linear model misses. With ``zero_output`` the network's output layer also
    starts at zero (training starts exactly at the AR forecasts). ``covariate_lags``: each forecast step also regresses
    on the future-known covariates of that many steps before it ("auto": :func:`choose_covariate_lags`); with
    future-known covariates the number used is kept as ``model.covariate_lags``. Returns False (and changes nothing)
    for models without a skip path.
    """
    names = {layer.name for layer in model.layers}
    if "linear_skip" not in names or "output" not in names:
        return False
    alone = "target_window" in names and "covariate_skip" not in names  # covariate_path="none": no covariate slopes
    futures = data.layout is not None and data.layout[1] > 0 and not alone  # future-known covariates (calendar too)
    if covariate_lags == "auto":
        covariate_lags = choose_covariate_lags(data, relative="level" in names) if futures else 0
    if futures:
        model.covariate_lags = covariate_lags  # reported with the fit (train_model's history.attrs)
    if cross_series:  # the target alone (check_config refuses it with covariates): shrunk across series
        if int(model.input_shape[-1]) != 1:
            raise ValueError("the cross-series start reads the target alone; this model's input has "
                             f"{int(model.input_shape[-1])} columns")
        coefficients, penalty = cross_series_coefficients(data, relative="level" in names)
        model.skip_penalty_chosen = "zero start" if np.isinf(penalty) else f"{penalty:g}"
    else:
        coefficients = linear_coefficients(data, data.starts["train"], relative="level" in names,
                                           covariates=not alone, covariate_lags=covariate_lags)
        # (window * features + 1, h); alone (window + 1, h)
    skip = model.get_layer("linear_skip")
    if "covariate_skip" in names:  # covariate_path="outside": the target's slopes inside, the covariates' outside
        features = int(model.input_shape[-1])
        slopes = coefficients[:-1].reshape(-1, features, coefficients.shape[1])
        model.get_layer("covariate_skip").set_weights([
            slopes[:, 1:, :].reshape(-1, coefficients.shape[1]).astype(np.float32),
            np.zeros(coefficients.shape[1], dtype=np.float32)])
        coefficients = np.concatenate([slopes[:, 0, :], coefficients[-1:]])
    intercept = coefficients[-1].astype(np.float32)
    if ("window_scale" in names or "instance_stats" in names) and "forecast_with_skip" not in names:
        # the skip path sees normalised windows: an intercept fit in the data's units means nothing there (the slopes
        # are scale-free); with skip_units="data" it reads the data's units and keeps it
        intercept = np.zeros_like(intercept)
    skip.set_weights([coefficients[:-1].astype(np.float32), intercept])
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


def use_xla(network: NetworkPart, training: TrainingPart, steps_per_epoch: int) -> bool:
    """Whether training compiles with XLA: the jit_compile setting, or for "auto" long epochs of models whose
    spec allows it."""
    if training.jit_compile == "auto":
        return network.xla and steps_per_epoch >= XLA_MIN_STEPS
    return bool(training.jit_compile)


def _member_parts(data: WindowedPanel, loss: LossPart, training: TrainingPart, member: tuple[int, str, int]):
    """What ensemble member (window, loss, seed offset) trains on and with: its windows, loss and training part."""
    window, name, seed = member
    member_data = data if window == data.window else data.rewindowed(window)
    return member_data, dataclasses.replace(loss, name=name), training.member(seed)


def _train_member(shared: dict, index: int):
    """One ensemble member (a unit of work of any engine): (the model as .keras bytes, history, epochs, best)."""
    import os
    import tempfile

    member_data, loss, training = _member_parts(shared["data"], shared["loss"], shared["training"],
                                                shared["members"][index])
    model, history, epochs, best = train_model(member_data, shared["network"], loss, training)
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


def _series_units(data: WindowedPanel, loss: LossPart) -> np.ndarray:
    """Per series: (scaler offset, scaler scale, MASE scale) for a loss computed in series units; the MASE scale is
    the in-sample seasonal-naive MAE of the training part (the scaler's scale where it is zero or undefined)."""
    panel = data.panel
    train_end = panel.lengths if data.part_bounds is None else data.part_bounds[:, 0]
    mase = series_scale(M.insample_scale(panel.values, panel.offsets, train_end, loss.season), data.scaler.scale)
    return np.stack([data.scaler.offset, data.scaler.scale, mase], axis=1)


# what a fit chooses on its own data, kept in history.attrs
CHOICES = ("covariate_lags", "normalise_chosen", "skip_penalty_chosen")


def _choices_of(model: keras.Model) -> dict:
    """What a built model chose on its own data: the :data:`CHOICES` it holds."""
    return {name: getattr(model, name) for name in CHOICES if getattr(model, name, None) is not None}


def train_model(data: WindowedPanel, network: NetworkPart, loss: LossPart, training: TrainingPart,
                progress: keras.callbacks.Callback | None = None, engine=None):
    """Build, compile and train a network on ``data``; returns (model, history, epochs, best).

    It receives only its parts of the settings (:meth:`tsattn.config.RunConfig.parts`, checked at the edge):
    which network, which loss (it sizes the head) and how to train.

    With ``ensemble=k`` it trains k members (seeds seed, seed + 1, ...), for each lookback of
    ``ensemble_lookbacks`` and each loss of ``ensemble_losses`` (N-BEATS' ensembles), and returns one Keras model
    whose forecast is their median (or mean): its input is the data's window (the longest lookback) and each member
    reads its own last steps. Members train one of two ways (:func:`trains_stacked`):

    - **stacked** (here, without early stopping: the N-BEATS recipe): every member in one Keras model trained by
      one ``fit`` on one stream of batches, each member's loss added (the members share no weights, so each gets
      exactly its own gradient). One traced graph and one input pipeline instead of one per member; each member
      starts from the weights it would have alone (its seed), and all draw the first member's batches.
    - **one after another** (with early stopping, which stops each member at its own best epoch, or on an
      ``engine``: "ray", or one of :func:`tsattn.engine.get_engine`, each member in its own process with the same
      weights as one after another): each member its own fit, seed and batches.

    The history, epochs and best epoch are the first member's (stacked: the members' mean loss), with every
    member's epochs in ``history.attrs["member_epochs"]`` and its window, loss and seed in
    ``history.attrs["members"]``.
    """
    if not training.is_ensemble:
        model = _built(data, network, loss, training)
        model, history, epochs_run, best = _trained(model, data, network, training, [loss.name], loss, progress)
        history.attrs.update(_choices_of(model))
        return model, history, epochs_run, best
    members = training.members(data.horizon, data.window, loss.name)
    if isinstance(engine, str):
        from .engine import get_engine

        engine = get_engine(engine)
    local = engine is None or engine.in_process
    chosen = []  # each member's choices made on its data (covariate_lags, normalise_chosen), reported with it
    if local and trains_stacked(data, training):
        built = []
        for i, member in enumerate(members):
            member_data, member_loss, member_training = _member_parts(data, loss, training, member)
            model = _built(member_data, network, member_loss, member_training)
            chosen.append(_choices_of(model))
            built.append(keras.Model(model.input, model.output, name=f"member_{i}"))
        inputs, forecasts = _member_outputs(data, built, members)
        stacked = keras.Model(inputs, StackMembers(name="members")(forecasts))
        stacked, history, epochs_run, best = _trained(stacked, data, network, training,
                                                      [name for _, name, _ in members], loss, progress)
        history["loss"] /= len(members)  # the members' mean loss (their sum trained)
        if "val_loss" in history:
            history["val_loss"] /= len(members)
        epochs = [epochs_run] * len(members)
    else:
        if local:
            trained = []
            for member in members:
                member_data, member_loss, member_training = _member_parts(data, loss, training, member)
                trained.append(train_model(member_data, network, member_loss, member_training, progress))
        else:
            shared = {"data": data, "network": network, "loss": loss, "training": training, "members": members}
            outcomes = dict(engine.map(_train_member, shared, range(len(members))))
            failed = [f"member {i}: {outcomes[i].error}" for i in range(len(members)) if not outcomes[i].ok]
            if failed:
                raise TrainingError(f"ensemble training failed: {'; '.join(failed)}")
            trained = [(_load_member(outcomes[i].value[0]), *outcomes[i].value[1:]) for i in range(len(members))]
        built = [keras.Model(member.input, member.output, name=f"member_{i}")
                 for i, (member, *_) in enumerate(trained)]
        inputs, forecasts = _member_outputs(data, built, members)
        _, history, epochs_run, best = trained[0]
        epochs = [member_epochs for _, _, member_epochs, _ in trained]
        chosen = [{name: h.attrs[name] for name in CHOICES if name in h.attrs} for _, h, _, _ in trained]
    combined = EnsembleCombine(training.ensemble_method, name="ensemble")(forecasts)
    model = keras.Model(inputs, combined, name=f"{network.model.replace('-', '_')}_ensemble")
    history.attrs["member_epochs"] = epochs
    history.attrs["members"] = [{"window": w, "loss": name, "seed": training.member(seed).seed, **made}
                                for (w, name, seed), made in zip(members, chosen)]
    for name in CHOICES:  # the ensemble's own: what every member chose alike (else only the members list says)
        values = {made.get(name) for made in chosen}
        if len(values) == 1 and None not in values:
            history.attrs[name] = values.pop()
        else:
            history.attrs.pop(name, None)
    return model, history, epochs_run, best


def trains_stacked(data: WindowedPanel, training: TrainingPart) -> bool:
    """Whether an ensemble's members train stacked in one model (see :func:`train_model`): when no early stopping
    has to stop each member at its own epoch, and gradients are clipped per weight (a global norm would mix the
    members' gradients)."""
    stopping = training.early_stopping and data.count("validation") > 0
    return not stopping and training.clip_scope != "global"


def _member_outputs(data: WindowedPanel, members: list, specs: list) -> tuple:
    """The ensemble's input (the longest window) and each member's forecast of it: a shorter lookback reads the
    last steps of the longest one's window."""
    inputs = keras.Input(shape=(data.window, data.features), name="window")
    forecasts = []
    for i, (member, (window, _, _)) in enumerate(zip(members, specs)):
        member_input = inputs if window == data.window else \
            layers.Cropping1D((data.window - window, 0), name=f"lookback_{i}")(inputs)
        forecasts.append(member(member_input))
    return inputs, forecasts


def _built(data: WindowedPanel, network: NetworkPart, loss: LossPart, training: TrainingPart) -> keras.Model:
    """The network with its seeded initial weights (and its skip path at the least-squares start)."""
    keras.utils.set_random_seed(training.seed)  # weights, dropout and batch order
    params, normalise = network.params, None
    if params.get("normalise") == "auto":  # chosen on this data's training part (choose_normalisation)
        normalise = choose_normalisation(data)
        params = {**params, "normalise": normalise}
    model = get_model(network.model, window=data.window, features=data.features, horizon=data.horizon,
                      quantiles=loss.quantiles, loss=loss.name, layout=data.layout, **params)
    if normalise is not None:
        model.normalise_chosen = normalise  # reported with the fit (train_model's history.attrs)
    init = training.skip_init
    if init == "auto":  # with covariates the network's random first output over a few events misled training
        init = "least-squares+zero-output" if data.covariates is not None else "least-squares"
    if init != "zeros":
        start_from_linear_autoregression(model, data, zero_output=init.endswith("zero-output"),
                                         covariate_lags=training.covariate_lags, cross_series=init == "cross-series")
    return model


class _EarlyStopping(keras.callbacks.EarlyStopping):
    """Keras' early stopping, which with ``start_loss`` (the validation loss of the weights training starts from)
    counts the start as epoch 0: when no epoch beats it, training stops after ``patience`` epochs and the starting
    weights are restored (``keep_start``)."""

    def __init__(self, start_loss: float | None, **kwargs):
        super().__init__(**kwargs)
        self.start_loss = start_loss

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self.start_loss is not None and math.isfinite(self.start_loss):
            self.best, self.best_epoch = self.start_loss, -1
            self.best_weights = self.model.get_weights()


def _trained(model: keras.Model, data: WindowedPanel, network: NetworkPart, training: TrainingPart, losses: list,
             loss: LossPart, progress) -> tuple:
    """Train ``model`` (one network, or stacked members with one loss each in ``losses``) from its initial state;
    returns (``model`` trained, history frame, epochs, best epoch). The training itself runs in a compiled twin:
    :data:`TRAINED_GRAPHS`' model of an earlier training with the same traced step, restarted from ``model``'s initial
    state (no new trace), or a new one compiled and kept there for the next; ``model`` then gets its trained weights.
    History attrs: ``optimizer_steps``, the batches trained. Zero epochs (a final fit after early stopping kept the
    start) train nothing: ``model`` as built, at its start."""
    if training.epochs == 0:
        frame = pd.DataFrame({"loss": pd.Series(dtype=float)}, index=pd.RangeIndex(1, 1, name="epoch"))
        frame.attrs["optimizer_steps"] = 0
        return model, frame, 0, None
    sampled = training.sampled_steps is not None
    starts, limits = data.training_windows()
    masked = data.overhang is not None  # targets past the training part's end: a mask travels with the target
    batch_size = training.batch_size if sampled else min(training.batch_size, len(starts))
    steps_per_epoch = training.sampled_steps if sampled else math.ceil(len(starts) / batch_size)
    if sampled and training.max_passes is not None:  # few training windows: draw each at most max_passes times
        steps_per_epoch = max(1, min(steps_per_epoch, math.ceil(
            training.max_passes * len(starts) / (training.epochs * batch_size))))
    specs = [get_loss(name) for name in losses]
    keras_losses = [spec.keras_loss(loss.quantiles) for spec in specs]
    if masked:
        from .layers import MaskedTargets

        keras_losses = [MaskedTargets(each, data.horizon, spec.needs_scale) for each, spec in zip(keras_losses, specs)]
    if len(losses) == 1:
        keras_loss = keras_losses[0]
    else:
        from .layers import MemberLosses

        # a masked loss takes y_true whole (it reads the mask), a series-units loss its series units too
        keras_loss = MemberLosses(keras_losses, [masked or spec.needs_scale for spec in specs], data.horizon)
    # several training steps per call of the compiled function: the same losses, less dispatch per step
    # (a ~1k-parameter model is dispatch-bound); the non-finite guard then reads the running loss every
    # `steps_per_execution` steps, and a NaN stays in that running mean, so it still stops the same epoch
    optimizer = _optimizer(training, steps_per_epoch)
    jit = use_xla(network, training, steps_per_epoch)
    per_call = min(training.steps_per_execution, steps_per_epoch) if sampled else training.steps_per_execution
    if steps_per_epoch * training.epochs <= SHORT_TRAINING and steps_per_epoch <= per_call:
        per_call = 1  # a short training: the loop saves fewer calls than its tracing costs (the same batches, weights)
    key = repr((_architecture(model), _optimizer_key(optimizer), tuple(losses), loss.quantiles, masked, data.horizon,
                jit, per_call)) if REUSE_TRAINED_GRAPH else None
    trainer = TRAINED_GRAPHS.take(key) if key is not None else None
    if trainer is not None:
        trainer = _restarted(trainer, model, optimizer)
        TRAINED_GRAPHS.restarts += 1
    else:
        trainer = model if key is None else _twin(model)
        trainer.compile(optimizer=optimizer, loss=keras_loss, jit_compile=jit, steps_per_execution=per_call)
        # the optimizer's slots made now: Keras' TensorFlow trainer (no distribution strategy) makes them while it traces
        # the first training step, and a tf.function that makes variables traces its step a second time
        trainer.optimizer.build(trainer.trainable_variables)
    # (n_series, 3) or None: each window's series units, when a loss is computed in them
    extras = _series_units(data, loss) if any(spec.needs_scale for spec in specs) else None
    series = data.panel.series_of(starts + data.window)
    train = make_dataset(data.scaled, starts, data.window, data.horizon, batch_size, shuffle_seed=training.seed,
                         extras=None if extras is None else extras[series], sampled=sampled,
                         first=data.panel.offsets[series],
                         series=data.panel.ranks[series] if sampled and training.sample_by == "series" else None,
                         limits=limits if masked else None)
    has_validation = data.count("validation") > 0
    validation = (make_dataset(data.scaled, data.starts["validation"], data.window, data.horizon, 1024,
                               extras=None if extras is None else extras[data.series_numbers("validation")],
                               first=data.first_positions("validation"),
                               limits=data.starts["validation"] + data.window + data.horizon if masked else None)
                  if has_validation else None)
    guard = _NonFiniteLoss()
    callbacks = [guard, _StopOnRequest()]
    start_loss = None
    if training.early_stopping and has_validation:
        if training.keep_start:  # the start competes with the trained epochs
            start_loss = float(trainer.evaluate(validation, verbose=0, return_dict=True)["loss"])
        callbacks.append(_EarlyStopping(start_loss, monitor="val_loss", patience=training.patience,
                                        restore_best_weights=True))
    if progress is not None:
        callbacks.append(progress)
    _STOP.update(training=True, requested=False)
    try:
        with _backend.gradient_functions_released():  # else TensorFlow keeps each fit's traced graph till exit
            history = trainer.fit(train, validation_data=validation, epochs=training.epochs, callbacks=callbacks,
                                verbose=0, steps_per_epoch=steps_per_epoch if sampled else None,
                                shuffle=False)  # the dataset is already shuffled with the seed
    finally:
        stopped = _STOP["requested"]
        _STOP.update(training=False, requested=False)
    if stopped:
        raise KeyboardInterrupt
    if guard.failed_epoch is not None:
        raise TrainingError(
            f"training loss became non-finite at epoch {guard.failed_epoch}; lower the learning rate "
            f"(now {training.learning_rate:g}, e.g. --set learning_rate={training.learning_rate / 10:g}) or check "
            "the data's scale"
        )
    if trainer is not model:
        for target, source in zip(model.weights, trainer.weights, strict=True):
            target.assign(source)
        TRAINED_GRAPHS.keep(key, trainer)
    frame = pd.DataFrame(history.history)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="epoch")
    frame.attrs["optimizer_steps"] = int(keras.ops.convert_to_numpy(trainer.optimizer.iterations))
    best = None
    if "val_loss" in frame:
        best = int(frame["val_loss"].idxmin())
        if start_loss is not None:
            frame.attrs["start_val_loss"] = start_loss
            if start_loss <= float(frame["val_loss"].min()):  # no epoch improved on the start: it was kept
                best = 0
        frame.attrs["best_epoch"] = best  # what the loss plot marks (0: the start, kept)
    return model, frame, len(frame), best


def added_baselines(baselines, covariates) -> list:
    """The statistical baselines a run adds by itself to those asked for (``baselines``): with future-known
    covariates statsforecast's AutoARIMA with them as regressors (when statsforecast is installed), so every run
    with covariates is scored beside the classical regression on the same covariates. Not asked for, it is fitted
    once per series at its first origin and filtered forward through the later ones (``ADDED_FITS``): refitted at
    up to 50 origins of every hourly series (season 24, seconds a fit) it took over 15 minutes of a run whose
    network trained in seconds."""
    from .baselines import statistical_keys

    keys = statistical_keys(list(baselines or []))
    if covariates is not None and covariates.futr and "arima" not in keys and statsforecast_installed():
        return ["arima"]
    return []


def with_regression_baseline(baselines, covariates) -> list:
    """The statistical baselines of a run: the ones asked for, then :func:`added_baselines`."""
    from .baselines import statistical_keys

    return statistical_keys(list(baselines or [])) + added_baselines(baselines, covariates)


def scoring_text(baselines) -> str:
    """The heartbeat's stage while a run is scored: the statistical baselines are the slow part (AutoARIMA on hourly
    data, season 24, takes seconds a fit), so it names them (:func:`statistical_text`)."""
    statistical = statistical_text(baselines)
    return f"training done; scoring, with {statistical}" if statistical else "training done; scoring and calibrating"


def statistical_text(baselines) -> str:
    """"statsforecast's theta fitted at the origins of every series and arima (added for the future-known
    covariates) fitted once per series", or "" without statistical baselines: what the heartbeat names while a
    run (:func:`scoring_text`) or a backtest waits on them. Read off each baseline's own refit cap: one fit per
    series is the AutoARIMA a run adds by itself (:func:`added_baselines`)."""
    from .baselines import ADDED_FITS, StatisticalModel

    statistical = [b for b in baselines if isinstance(b, StatisticalModel)]
    if not statistical:
        return ""
    refitted = [b.label for b in statistical if b.fits != ADDED_FITS]
    parts = [f"{', '.join(refitted)} fitted at the origins of every series"] if refitted else []
    parts += [f"{b.label} (added for the future-known covariates) fitted once per series"
              for b in statistical if b.fits == ADDED_FITS]
    return f"statsforecast's {' and '.join(parts)}"


def check_takes_covariates(name: str, estimator, covariates) -> None:
    """One line when a forecaster is given covariate kinds it cannot use (never ignored silently)."""
    refused = estimator.capabilities.refused_covariates(covariates)
    if refused:
        from .covariates import KIND_NAMES

        takes = ", ".join(KIND_NAMES[k] for k in estimator.capabilities.covariates) or "none"
        from .specs import list_models

        raise ConfigError(f"{name} takes no {' or '.join(KIND_NAMES[k] for k in refused)} covariates (it takes: {takes}); "
                          f"fit a network ({', '.join(list_models())}) or linear to use them, or drop them")


# at most this many training steps in all (epochs x steps per epoch): one step per call of the compiled function.
# Keras runs several steps a call in a traced while loop with a cond per step, which costs ~15% more to trace (a tiny
# tft, patch-transformer or attention-rnn fit of 2-3 epochs: 9.9 -> 8.5, 3.8 -> 3.3, 1.9 -> 1.6 s) and saves ~1 ms a
# call; the same weights to the bit either way (tests/test_harness.py). Only where an epoch fits in one call: a sampled
# epoch of more steps runs in whole calls, and one step a call would train fewer steps than before.
SHORT_TRAINING = 128

# whether trainings restart the compiled models of earlier ones with the same traced step (TRAINED_GRAPHS) rather
# than compile new ones: the same weights either way (tests/test_harness.py compares the two), the first saves traces
REUSE_TRAINED_GRAPH = True


def fit_state(config: RunConfig, data: WindowedPanel, progress: keras.callbacks.Callback | None = None,
              engine=None, params: dict | None = None, columns: tuple | None = None,
              ends: bool = True) -> FittedState:
    """Fit one model on windowed data and calibrate it: the one fit path of every caller.

    Args:
        config: resolved run settings (:func:`tsattn.config.resolve`); a baseline's name as the model fits that
            baseline (:data:`tsattn.baselines.BASELINES`) through the same path.
        data: the windows, split and scalers of :func:`tsattn.config.window_config`.
        progress: an optional Keras callback (e.g. :class:`EpochProgress`).
        engine: where an ensemble's members train (see :func:`train_model`).
        params: the facade's parameters, kept with the state (``Forecaster.get_params()``); default: the
            config's model, window and horizon and its model parameters.
        columns: the long frame's id, time and value columns.
        ends: whether the state keeps AutoETS's deviation at the series' ends when its intervals are in the ets
            scale (:func:`tsattn.baselines.end_deviation`); auto's candidates do not (auto fits it for the state
            it keeps).

    Returns:
        A :class:`tsattn.state.FittedState`: the trained estimator, scalers, per-series scales (over the values
        fit saw: training and validation), the conformal calibration on the validation part, and the last
        values of each series.
    """
    if config.model == AUTO:  # every candidate through this function, the best on validation kept
        return fit_auto(config, data, fit_state, progress, engine, params=params, columns=columns)
    season = season_of(config, data.panel)
    start = time.perf_counter()
    final = config.final_fit and data.count("validation") > 0
    keys = with_regression_baseline(config.baselines, data.covariates)
    added = added_baselines(config.baselines, data.covariates)  # among keys: fitted once per series (ADDED_FITS)
    if not config.is_baseline:
        network, loss, training = config.parts()
        loss = dataclasses.replace(loss, season=season)  # the data's season (a MASE loss's scale)
    else:
        check_takes_covariates(config.model, forecaster_baseline(config.model, data.window, data.horizon, season,
                                                                 config.linear_fit), data.covariates)

    def network_model(model: keras.Model) -> NetworkModel:
        return NetworkModel(model, network.model, data.window, data.horizon, loss.quantiles, data.layout)

    def fitted(on: WindowedPanel, training: TrainingPart | None = None):
        """The model (trained for ``training``, or fitted when a baseline) and the baselines scored beside it (fit,
        evaluate, backtest, compare, tune), on ``on``; with the training history, epochs run and best epoch."""
        beside = [b.fit(on) for b in baseline_models(data.window, data.horizon, season, config.linear_fit, keys,
                                                     added)]
        if config.is_baseline:
            estimator = forecaster_baseline(config.model, data.window, data.horizon, season, config.linear_fit)
            return estimator.fit(on), beside, (pd.DataFrame(columns=["loss"]), None, None)
        model, *trained = train_model(on, network, loss, training, progress, engine)
        return network_model(model), beside, tuple(trained)

    estimator, baselines, (history, epochs_run, best) = fitted(data, None if config.is_baseline else training)
    panel = data.panel
    mase_scale = M.insample_scale(panel.values, panel.offsets, data.insample_end(), season)
    # the intervals are calibrated on the validation part by the model that never trained on it
    insample = series_scale(mase_scale, data.scaler.scale)
    calibration = calibrate(estimator, data, insample, season)
    selection = None
    if final:  # the final fit: the same model again on training + validation values, with the choices made above
        final_training = None
        if not config.is_baseline:
            epochs = int(best if training.early_stopping and best is not None else training.epochs)
            final_training = dataclasses.replace(training, epochs=epochs, early_stopping=False)
            if hasattr(progress, "final_fit"):
                progress.final_fit(epochs)
        selection = (estimator, baselines)  # its own model: the final fit trains another (or TRAINED_GRAPHS' twin)
        estimator, baselines, (final_history, _, _) = fitted(data.with_validation_trained(), final_training)
        if not config.is_baseline:
            history.attrs["final_epochs"] = final_training.epochs
            history.attrs["final_loss"] = [float(v) for v in final_history["loss"]]
    fit_seconds = time.perf_counter() - start
    if params is None:
        params = {"model": config.model, "window": data.window, "horizon": data.horizon, **config.model_params}
    keep = kept_values(panel, data.window, estimator, season)
    end_scale = window_scale("expanding", panel.values, panel.offsets[1:] - 1, panel.offsets[:-1], season,
                             data.horizon, insample)
    deviation = end_deviation(panel, season, data.horizon, calibration, keep) if ends else None
    return FittedState(config=config, estimator=estimator, window=data.window, horizon=data.horizon,
                       scaler=data.scaler, season=season, mase_scale=mase_scale, tails=tails_of(panel, keep),
                       trained_until=seen_until(data), history=history, calibration=calibration,
                       columns=tuple(columns) if columns else (config.id_column or "unique_id",
                                                              config.date_column or "ds", config.column or "y"),
                       params=dict(params), epochs_run=epochs_run, best_epoch=best, fit_seconds=fit_seconds,
                       end_scale=end_scale, end_deviation=deviation, floor=data.floor,
                       covariates=data.covariates, baselines=baselines, selection=selection)


def windowed_or_fallback(config: RunConfig, panel: Panel, with_test: bool):
    """The config, its windows (:func:`tsattn.config.window_config`) and None; or, for one series too short for
    ``config``, the best baseline's config and windows for it and the line that says so, also warned
    (:func:`tsattn.selection.short_series_fallback`). Every fit (``Forecaster.fit``, ``tsattn fit``, each refit)
    goes through here, so a short series is forecast the same way on every path."""
    import warnings

    try:
        return config, window_config(panel, config, with_test=with_test), None  # validates window / horizon / length
    except TooShortError as error:
        config, windowed, note = short_series_fallback(config, panel, error, window_config, with_test=with_test)
        warnings.warn(note, UserWarning, stacklevel=user_stacklevel())
        return config, windowed, note


def fit_all(config: RunConfig, data, static=None, columns: tuple | None = None,
            progress: keras.callbacks.Callback | None = None, engine=None, params: dict | None = None,
            announce=None) -> FittedState:
    """Resolve settings and data (:func:`tsattn.config.resolve`) and fit on everything given, with no test part (the
    split's validation part stays at the end of each series): ``Forecaster.fit`` and every refit of a backtest or
    cross-validation. ``announce``: called with one line saying what was chosen (preset, window, horizon, epochs)
    before training, as `tsattn fit` says it."""
    automatic = (config.preset if isinstance(config, RunConfig) else None) == "auto"
    config, panel = resolve(config, data, static, columns)
    config, windowed, note = windowed_or_fallback(config, panel, with_test=False)
    if announce is not None:
        chosen = settings_text(config, panel, automatic)
        budget = "" if config.is_baseline or config.model == AUTO else \
            f", up to {config.epochs} epochs" + (" with early stopping" if config.early_stopping else "")
        announce(f"Fitting {config.model} on {panel.n_series} series (window {windowed.window}, horizon "
                 f"{windowed.horizon}{chosen}{budget}); fit(verbose=0) silences this")
    state = fit_state(config, windowed, progress, engine, params=params, columns=columns)
    state.note = note
    return state


def fit(config: RunConfig | None = None, series=None, progress: keras.callbacks.Callback | None = None,
        panel: Panel | None = None, engine=None, static_df=None, static=None, **overrides) -> RunResult:
    """Resolve settings and data (:func:`tsattn.config.resolve`), fit one model and score it on every part.

    Args:
        config: a :class:`RunConfig` (default: ``RunConfig()``, attention-rnn on sunspots).
        series: user data instead of the config's dataset / CSV: one series or a panel (a long frame
            ``unique_id, ds, y`` with the covariate columns the settings name, a dict of Series, a
            :class:`tsattn.panel.Panel`).
        progress: an optional Keras callback (e.g. :class:`EpochProgress`).
        panel: the data the config names, already loaded by :func:`tsattn.config.load_panel` (compare loads each
            dataset once and sends it to every run); the config keeps naming it.
        engine: where the members of an ensemble (``ensemble=k``) train: None / "local" here, one after
            another; an engine of :func:`tsattn.engine.get_engine` (local processes or Ray) in parallel.
        static_df: static features of ``series`` (``stat_exog``): ``unique_id`` and the feature columns (the
            name Forecaster.fit, compare and tune take; ``static`` is the same argument under its older name).
        **overrides: settings or model parameters applied to ``config`` (see :meth:`RunConfig.updated`).

    Example:
        >>> result = fit(model="simple-rnn", epochs=5)
        >>> result.metrics["test"]["model"]["rmse"], result.metrics["test"]["naive"]["rmse"]
    """
    config = config or RunConfig()
    if overrides:
        config = config.updated(**overrides)
    if panel is not None and series is not None:
        raise ConfigError("give fit either series (user data) or panel (the config's data, loaded), not both")
    if static is not None and static_df is not None:
        raise ConfigError("static and static_df name the same argument of fit(); give one")
    config, data = resolve(config, series if series is not None else panel, static_df if static is None else static)
    if isinstance(series, Panel):
        config = dataclasses.replace(config, dataset=None, csv=None)  # the user's data, not the one named
    return run(config, data, progress, engine)


def run(config: RunConfig, panel: Panel, progress: keras.callbacks.Callback | None = None, engine=None) -> RunResult:
    """Fit a resolved config on its panel (:func:`tsattn.config.resolve`) through :func:`fit_state` and score it on
    every part beside the baselines (:func:`tsattn.evaluation.score_windows`): what :func:`fit` does once the data
    is read (``tsattn fit`` resolves first, to print what it chose before training)."""
    config, data, note = windowed_or_fallback(config, panel, with_test=True)
    state = fit_state(config, data, progress, engine)
    state.note = note
    beat = getattr(progress, "heartbeat", None)
    if beat is not None:  # what the wait after training is: statsforecast's methods fitted origin by origin
        beat.stage(scoring_text(state.baselines))
    evaluation = score_windows(state.estimator, state.baselines, data, state.season, levels=config.level,
                               calibration=state.calibration, mase_scale=state.mase_scale, selection=state.selection)
    return RunResult(state, data, evaluation.forecasts, evaluation.metrics, evaluation.predict_seconds,
                     evaluation.frame, state.baselines, evaluation.baseline_seconds, evaluation.calibration,
                     evaluation.interval_scale)

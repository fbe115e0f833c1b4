"""Cross-validation and backtests of any fitted forecaster: functions over the estimator, not methods inside it.

    windows = cross_validation(Forecaster("nbeats", horizon=8), frame, n_windows=3)   # unique_id, ds, cutoff, y, nbeats
    rows = backtest(fitted, series, start=0.8, retrain=6)                            # rolling origins, refit every 6

``forecaster`` is anything with the :class:`tsattn.Forecaster` protocol (``get_params`` / ``fit`` / ``predict`` and,
once fitted, ``state_``): refits are fresh clones fitted through the one fit path (:func:`tsattn.harness.fit_all`),
and every forecast is scored by the one scoring core (:func:`tsattn.evaluation.score_origins`) beside the baselines
the fitted state carries.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd

from .checks import MAX_STEPS, few_names, positive_int
from .data import time_text
from .errors import ConfigError, DataError, TrainingError, user_stacklevel
from .panel import ID_COLUMN, TIME_COLUMN, VALUE_COLUMN
from .metrics import headline_metric


def cross_validation(forecaster, df, h: int | None = None, n_windows: int = 1, step_size: int | None = None,
                     refit: bool = True, level=None, validation: float | int | str = "auto",
                     epochs: int | None = None, seed: int = 0, id_column: str | None = None,
                     time_column: str | None = None, value_column: str | None = None,
                     static_df=None, verbose: int | None = None) -> pd.DataFrame:
    """NeuralForecast's and statsforecast's cross-validation: ``n_windows`` forecasts of ``h`` steps at the end
    of every series, ``step_size`` apart, each made by a model that saw only the values before its window.

    Args:
        df: one series or a panel (a long frame ``unique_id, ds, y`` or a dict of Series).
        h: steps per window (default: the model's horizon).
        n_windows, step_size: how many windows and how far apart (default step: 1, as statsforecast and
            NeuralForecast; before this release it was ``h``, non-overlapping windows: pass step_size=h); the last window
            ends at each series' last value.
        refit: True fits a fresh copy of this Forecaster (same parameters) before every window on the values
            before it; False fits once, before the first window, and forecasts the later windows from
            their histories with that model. ``forecaster`` itself is never changed.
        level: interval levels in percent (``<model>-lo-80`` columns), as in :meth:`predict`.
        validation, epochs, seed: as in :meth:`fit`, for every fit.
        id_column, time_column, value_column: the frame's columns; by default the ones a fitted ``forecaster`` was
            fitted on where ``df`` has them (as :meth:`predict` reads a frame), else ``unique_id``, ``ds``, ``y``.
        static_df: static features (``stat_exog``), as in :meth:`fit`. Future-known covariates of each window
            come from ``df`` itself (known in advance by definition); past-observed ones only up to its cutoff.
        verbose: None (default) prints one line (stderr) saying how many fits and windows the run makes, and the
            fits print nothing; 1 prints every fit's own line and epoch counter as ``fit(verbose=1)`` does; 0
            prints nothing.

    Returns:
        A long frame ``unique_id, ds, cutoff, y, <model>`` (+ interval columns), ``cutoff`` being the last
        timestamp each window's model saw: what ``utilsforecast.evaluation.evaluate`` takes.
    """
    from sklearn.base import clone

    from .config import resolve

    id_column, time_column, value_column = frame_columns(forecaster, df, (id_column, time_column, value_column))
    # the data read as a fit reads it: the covariate columns and static features the forecaster's settings name
    config, panel = resolve(forecaster.run_config(validation, epochs, seed), df, static_df,
                            (id_column, time_column, value_column))
    covariates = config.covariates()
    if not isinstance(refit, (bool, np.bool_)):  # a truthy "yes" or 0.5 used to be taken as True
        raise ConfigError(f"refit must be True (a fresh fit before every window) or False (one fit before the "
                          f"first); got {refit!r}")
    h = positive_int("h", config.horizon if h is None else h, 1, MAX_STEPS)
    n_windows = positive_int("n_windows", n_windows, 1, 10_000)
    step_size = positive_int("step_size", 1 if step_size is None else step_size, 1, 100_000)
    span = h + (n_windows - 1) * step_size
    shortest = int(panel.lengths.min())
    if shortest - span < 2:
        raise ConfigError(f"{n_windows} window(s) of {h} steps, {step_size} apart, need more than {span + 1} values "
                          f"per series; the shortest series has {shortest}: use fewer or shorter windows")
    if not (verbose is None or isinstance(verbose, (bool, int, np.integer)) and verbose >= 0):
        raise ConfigError(f"verbose must be None (one line), 0 (nothing) or 1 (every fit's line and epochs); got "
                          f"{verbose!r}")
    if verbose is None:
        fits = f"{n_windows} fits, a fresh one before each window" if refit and n_windows > 1 else \
            "one fit, before the first window"
        print(f"Cross-validating {config.model} on {panel.n_series} series: {n_windows} window(s) of {h} steps, "
              f"{step_size} apart, {fits}; cross_validation(verbose=0) silences this", file=sys.stderr, flush=True)
    frames, model = [], None
    for k in range(n_windows):
        cut = panel.lengths - span + k * step_size  # values before window k, per series
        history = panel.heads(cut).to_frame(id_column, time_column, value_column)
        if refit or model is None:
            model = clone(forecaster).fit(history, validation=validation, epochs=epochs, seed=seed, id_column=id_column,
                                          time_column=time_column, value_column=value_column, static_df=panel.static,
                                          verbose=verbose or 0)
        positions = panel.offsets[:-1] + cut  # each window's first target
        future = None  # the window's own future-known values: what a user would have known at its cutoff
        if covariates is not None and covariates.futr:
            reach = np.minimum(model.state_.horizon, panel.lengths - cut)
            future = panel.take(np.arange(panel.n_series), positions, reach).to_frame(id_column, time_column,
                                                                                     value_column)
        forecast = model.predict(h, series=history, level=level, futr_df=future)
        targets = (positions[:, None] + np.arange(h)).ravel()
        forecast.insert(2, "cutoff", np.repeat(np.asarray(panel.index[positions - 1]), h))
        forecast.insert(3, value_column, panel.values[targets])
        frames.append(forecast)
    out = pd.concat(frames, ignore_index=True)
    out[id_column] = out[id_column].astype(object)
    return out.sort_values([id_column, "cutoff", time_column], kind="stable").reset_index(drop=True)


BACKTEST_COLUMNS = ("origin", "step", "actual", "predicted", "naive", "trained_until")  # beside the id and time


def frame_columns(forecaster, df, given: tuple) -> tuple[str, str, str]:
    """The id, time and value columns of ``df``: each one given; else the ones a fitted ``forecaster`` reads a frame
    by, as predict does (:meth:`tsattn.state.FittedState.frame_columns`: a model fitted with ``id_column="store"``
    cross-validates on the same frame without being told again); else Nixtla's ``unique_id``, ``ds``, ``y``."""
    state = getattr(forecaster, "state_", None)
    read = state.frame_columns(df) if state is not None else (ID_COLUMN, TIME_COLUMN, VALUE_COLUMN)
    return tuple(name if name is not None else default for name, default in zip(given, read))


def backtest(forecaster, series, start=0.8, steps: int | None = None, stride: int = 1,
             retrain: bool | int = False, epochs: int | None = None, engine: str = "local", jobs: int = 1,
             address: str | None = None, cpus_per_run: int = 1, echo=None, static_df=None) -> pd.DataFrame:
    """Rolling-origin historical forecasts (per series for a panel).

    Args:
        series: one series or a panel to walk through.
        start: the first forecast origin's target in each series: a fraction (0.8), a position (int) or
            a timestamp label. Forecasts are made from origins ``start - 1, start - 1 + stride, ...``.
        steps: how many steps ahead to forecast from each origin, as in :meth:`predict` (default: the
            model's horizon; longer continues recursively).
        stride: steps between origins.
        retrain: False uses the fitted model everywhere (honest only when it was fitted on data before
            ``start``: a warning says when it was not); True refits a fresh copy at every origin; an int
            k refits every k origins. A refit sees only values up to its origin (scaler included).
            On a panel each refit reads every series up to its first origin time (:func:`refit_blocks`).
        epochs: maximum epochs of each refit.
        echo: called with a progress line after each refit (refits done of all, the origin, an ETA).
        engine, jobs, address, cpus_per_run: where the refits run (they are independent): "local"
            (``jobs`` processes) or "ray" (each refit a Ray task of ``cpus_per_run`` CPUs; ``address``
            joins a cluster), as in :func:`tsattn.compare`. Every engine gives the same forecasts.
        static_df: static features of series not seen in fit (fitted series keep theirs), as in predict.

    Returns:
        A DataFrame (origin, the targets' time, step, actual, predicted, naive, trained_until; a panel adds its
        series' ids first), the id and time columns named as the data names them (``unique_id``, ``ds`` for a
        bundled dataset or a Series); ``attrs["metrics"]`` holds the summary (model and every baseline of
        :meth:`evaluate`, per step).
    """
    from .evaluation import origins_in, score_origins, summarise

    state = forecaster._state()  # NotFittedError in one line for a Forecaster not fitted yet
    horizon = positive_int("steps", state.horizon if steps is None else steps, 1, MAX_STEPS)
    stride = positive_int("stride", stride, 1, 100_000)
    panel = state.panel_of(series, static=static_df)
    if not isinstance(retrain, (bool, int, np.integer)) or (not isinstance(retrain, bool) and retrain < 1):
        raise ConfigError(f"retrain must be True, False or an integer >= 1 (refit every k origins); got {retrain!r}")
    every = int(retrain) if not isinstance(retrain, bool) else (1 if retrain else 0)
    from .engine import get_engine

    runner = get_engine(engine, jobs=jobs, address=address, cpus=cpus_per_run)  # checked even when nothing refits
    lookback = state.lookback
    longest = int(panel.lengths.max())
    if longest < lookback + horizon:  # no start can work: say what can
        fix = (f"use steps of at most {longest - lookback} (CLI: --steps)" if longest > lookback else
               "pass a longer series")
        raise ConfigError(f"the series has {longest} values, too few to backtest a window of {lookback} with "
                          f"{horizon} step(s) from any start (that needs {lookback + horizon}); {fix}")
    first_targets = np.array([_start_position(panel.series(i), start) for i in range(panel.n_series)])
    if (first_targets < lookback).any():
        i = int(np.argmin(first_targets))
        raise ConfigError(f"backtest start {start!r} leaves {int(first_targets[i])} value(s) before the first "
                          f"origin, fewer than one window ({lookback}); start at or after "
                          f"{time_text(panel.series(i).index[lookback])}")
    try:
        origins = origins_in(panel, lookback, horizon, first_targets, stride)
    except DataError:
        i = int(np.argmax(panel.lengths))
        raise ConfigError(f"backtest start {start!r} leaves no origin with {horizon} step(s) after it; start at or "
                          f"before {time_text(panel.series(i).index[int(panel.lengths[i]) - horizon])}") from None
    trained_until = np.empty(len(origins), dtype=object)
    if every == 0:
        scores = score_origins(state, panel, origins, horizon)
        fitted_end = state.trained_until
        first_origin = panel.index[origins[0]]
        if panel.n_series == 1 and _at_or_after(fitted_end, first_origin):  # one series, or one of a fitted panel
            warnings.warn(f"the model was fitted on data up to {time_text(fitted_end)}, after the first origin "
                          f"{time_text(first_origin)}: these forecasts are optimistic; use retrain=True",
                          UserWarning, stacklevel=user_stacklevel())
        elif panel.n_series > 1 and fitted_end >= panel.index[origins].min():
            warnings.warn(f"the model was fitted on data up to {time_text(fitted_end)}, after some origins: these "
                          "forecasts are optimistic; fit on data before start",
                          UserWarning, stacklevel=user_stacklevel())
        trained_until[:] = fitted_end
    else:
        shared = {"config": state.config if epochs is None else state.config.updated(epochs=epochs),
                  "params": state.params, "panel": panel, "columns": state.columns, "origins": origins,
                  "horizon": horizon}
        predicted, baselines = np.zeros((len(origins), horizon)), {}
        blocks = refit_blocks(panel, origins, every)
        began = time.perf_counter()
        if hasattr(echo, "count"):  # a tsattn.progress.Heartbeat: on a terminal, a bar of the refits
            echo.count(len(blocks), "refit")
        for done, (block, outcome) in enumerate(runner.map(_refit_block, shared, blocks), 1):
            label = time_text(panel.index[origins[block[0]]])
            if echo is not None:
                left = (time.perf_counter() - began) / done * (len(blocks) - done)
                echo(f"backtest: refit {done} of {len(blocks)} done (origin {label})"
                     + (f", ETA {left:.0f}s" if done < len(blocks) else ""))
                getattr(echo, "advance", lambda: None)()
            if not outcome.ok:
                raise TrainingError(f"the refit at origin {label} failed: {outcome.error}")
            block_predicted, block_baselines, until = outcome.value
            predicted[block] = block_predicted
            for key, values in block_baselines.items():  # each refit's own baselines, fitted on its past only
                baselines.setdefault(key, np.zeros((len(origins), horizon)))[block] = values
            trained_until[block] = until
        scores = score_origins(state, panel, origins, horizon, predicted, baselines)
    # the targets' times and a panel's ids named as the data names them, as predict and cross_validation do
    id_column, time_column = state.key_columns(BACKTEST_COLUMNS)
    rows = pd.DataFrame({
        "origin": np.repeat(panel.index[origins], horizon),
        time_column: panel.index[(origins[:, None] + np.arange(1, horizon + 1)).ravel()],
        "step": np.tile(np.arange(1, horizon + 1), len(origins)),
        "actual": scores.actual.ravel(),
        "predicted": scores.predicted.ravel(),
        "naive": scores.baselines["naive"].ravel(),
        "trained_until": np.repeat(trained_until, horizon),
    })
    if not state.one_series(panel, series):  # a long frame in (of one series too): its ids out
        rows.insert(0, id_column, np.repeat(np.asarray(panel.ids, dtype=object)[scores.series], horizon))
    summary = summarise(panel, scores, horizon)
    uncovered = summary.get("series_not_scored")
    if uncovered:  # a panel's short series: none of their values from start leaves room for the steps
        warnings.warn(f"{len(uncovered)} of {panel.n_series} series have fewer than {horizon} value(s) from "
                      f"start {start!r}, so they get no origin and are not backtested ({few_names(uncovered)}); "
                      "start earlier or backtest fewer steps", UserWarning, stacklevel=user_stacklevel())
    before = panel.heads(first_targets)  # what the first origins' forecasts learn from
    summary.update({"origins": int(len(origins)), "retrain": every,
                    "headline": headline_metric(panel.n_series, before.values, before.offsets)})
    if "per_step" not in summary:
        summary["per_step"] = [summary["model"]]
    rows.attrs["metrics"] = {k: v for k, v in summary.items() if k != "by_series"}
    if "by_series" in summary:
        # records, not a frame: pandas compares attrs when it combines frames (printing one, concat), and a frame
        # there made that raise "The truth value of a DataFrame is ambiguous"
        rows.attrs["metrics_by_series"] = summary["by_series"].to_dict("records")
    return rows


def _start_position(series: pd.Series, start) -> int:
    n = len(series)
    if isinstance(start, float) and not isinstance(start, bool):
        if not 0 < start < 1:
            raise ConfigError(f"backtest start as a fraction must be in (0, 1); got {start!r}")
        return int(round(n * start))
    if isinstance(start, (int, np.integer)) and not isinstance(start, bool):
        if not 0 < start < n:
            raise ConfigError(f"backtest start position must be in 1..{n - 1}; got {start!r}")
        return int(start)
    try:
        label = pd.Timestamp(start) if isinstance(series.index, pd.DatetimeIndex) else start
        if isinstance(label, pd.Timestamp) and series.index.tz is not None and label.tz is None:
            label = label.tz_localize(series.index.tz)
        position = int(series.index.get_indexer([label])[0])
    except (ValueError, TypeError):
        position, label = -1, None
    if position > 0:
        return position
    first, last = series.index[0], series.index[-1]
    try:
        if label is not None and label > last:
            raise ConfigError(f"backtest start {start!r} is after the series' last timestamp {time_text(last)}; start at "
                              f"a timestamp between {time_text(series.index[1])} and {time_text(last)}")
        if label is not None and label <= first:
            raise ConfigError(f"backtest start {start!r} is at or before the series' first timestamp {time_text(first)}; "
                              f"start at a timestamp between {time_text(series.index[1])} and {time_text(last)}")
    except TypeError:  # a label that does not compare with the index
        pass
    raise ConfigError(f"backtest start {start!r} is not a fraction in (0, 1), a position or a timestamp of the "
                      f"series (it runs from {time_text(first)} to {time_text(last)})")


def refit_blocks(panel, origins: np.ndarray, every: int) -> list[np.ndarray]:
    """The refits of a backtest with ``retrain=every``: each a block of positions in ``origins``, forecast by one
    refit on every series' values up to the block's first origin time. Origin times are taken in order, ``every`` of
    them per block (for one series, every ``every`` origins); a block also ends before a time at which a series
    that had no value yet at the block's first time has an origin, so no series is forecast by a refit that never
    read it."""
    labels = pd.Index(panel.index[origins])
    times = labels.unique().sort_values()
    inverse = times.get_indexer(labels)
    order = np.argsort(inverse, kind="stable")  # origins grouped by time, in one pass
    groups = np.split(order, np.cumsum(np.bincount(inverse, minlength=len(times)))[:-1])
    series = panel.series_of(origins)
    starts = pd.Index(panel.index[panel.offsets[:-1]])  # each series' first time
    blocks, current, cut = [], [], None
    for k, members in enumerate(groups):
        unseen = cut is not None and (np.asarray(starts[series[members]]) > cut).any()
        if current and (len(current) == every or unseen):
            blocks.append(np.concatenate(current))
            current = []
        if not current:
            cut = times[k]
        current.append(members)
    if current:
        blocks.append(np.concatenate(current))
    return blocks


def _refit_block(shared: dict, block: np.ndarray):
    """One backtest refit (a unit of work of any engine): fit a fresh copy on every series' values up to the
    block's first origin time, forecast every origin of the block with it and with its baselines (scored as
    :func:`tsattn.evaluation.score_origins` scores a fitted model); -> (forecasts (block, steps), {baseline key:
    forecasts}, the refit's last training time)."""
    from .evaluation import score_origins
    from .harness import fit_all

    panel, origins = shared["panel"], shared["origins"][block]
    cut = panel.index[origins].min()
    counts = np.array([int(panel.series_index(i).searchsorted(cut, side="right")) for i in range(panel.n_series)])
    numbers = np.flatnonzero(counts > 0)
    history = panel.take(numbers, panel.offsets[:-1][numbers], counts[numbers])
    if panel.n_series == 1 and history.exog is None and panel.static is None:  # one series: a Series, as fit takes it
        data, columns = history.series(0), None
    else:  # a frame with the covariate columns and the names the model was fitted with
        data, columns = history.to_frame(*shared["columns"]), shared["columns"]
    state = fit_all(shared["config"], data, static=panel.static, columns=columns, params=shared["params"])
    scores = score_origins(state, panel, origins, shared["horizon"])
    return scores.predicted, scores.baselines, state.trained_until


def _at_or_after(fitted_end, origin) -> bool:
    """Whether a fit's last label is at or after a backtest origin; labels of different kinds (a model fitted on
    dates, a series of integer steps) cannot be compared: no claim then."""
    try:
        return bool(fitted_end >= origin)
    except TypeError:
        return False

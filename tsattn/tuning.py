"""Hyper-parameter search: `tsattn tune`, resumable, chosen on validation only.

    result = tsattn.tune("attention-rnn", dataset="m3-monthly", settings={"horizon": 18}, trials=30, out="tunes/m3")
    result.best_settings        # the settings found (a RunConfig's keys)
    result.forecaster           # refitted with them on everything before the test part

Optuna (TPE sampler, median pruning of poor trials from their validation curve) keeps its study in a real database:
``study.db`` (SQLite) in the result folder by default, or any SQLAlchemy URL (``storage=``, e.g. PostgreSQL) so several
machines can work on one study. A search that is interrupted (Ctrl-C, a killed process, a lost machine) resumes from
the database: trials it finished are kept, a trial that was running when it died is marked failed, and the search
runs until ``trials`` trials have completed.

Trials run in parallel on the engines compare uses (``jobs`` local processes, or Ray tasks with ``engine="ray"``):
every worker is a loop of Optuna trials on the same study, sharing it through its database, so the study stays the
one record whether the search ran here, on a cluster, or on several machines at once (``storage=`` a PostgreSQL URL).
We use Optuna's shared storage rather than Ray Tune's Optuna searcher because Ray Tune keeps the searcher's state in
the driver: a search could then not be resumed from the database, nor shared by machines outside one Ray cluster.
A Ray worker lost with its node is run again by Ray (the engine's retries); the trial it was running is marked failed
at once when its process was on this machine, else when its heartbeat (every 10 s to the database) stops for 60 s.

The test part is cut off before anything else: each trial sees only the values before it (for M3, the values before
the competition's hold-out), fits on them with the end of each series as validation (the Forecaster's split: the
data's horizon, or the last 10% of each series) and is scored on those validation windows with ``metric``; or, with
``windows=k`` (rolling origins), fits once on the values before the earliest of k one-horizon windows ``step`` apart at
the end of each series and is scored on all k, forecast from their own histories. Only
the final model, refitted with the best settings on the same values, is scored on the test part, once, beside the
defaults.
"""

from __future__ import annotations

import dataclasses

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ConfigError, DataError, TsattnError, user_stacklevel
from .io import atomic_file, code_digest, metric_label, number_text, process_alive, write_json

METRICS = ("smape", "mase", "rmse", "mae")
MAX_FAILURES_IN_A_ROW = 10
STUDY_FILE = "study.db"
BEST_FILE = "best.json"
INSTALL_HINT = "pip install 'tsattn[tune]' (or pip install optuna)"


def _optuna():
    try:
        import optuna
    except ImportError:
        raise ConfigError(f"tsattn tune needs optuna, which is not installed: {INSTALL_HINT}") from None
    # ERROR: a failed trial is one line of ours ("[3/20] trial 2: fail (the reason)"), not Optuna's warning with
    # the trial's traceback
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    return optuna


# ----------------------------------------------------------------------------------------------------
# The space
# ----------------------------------------------------------------------------------------------------
def search_space(model: str, horizon: int = 1, overrides: dict | None = None) -> dict:
    """The dimensions a search of ``model`` varies: its spec's default space (a lookback in horizons for horizons of
    4 and more, else a window of 8-96 values), updated by ``overrides`` ({name: dimension as in
    :meth:`tsattn.specs.Search.from_value`}, ``None`` removing one). Every name must be a run setting or a parameter
    of the model (one line otherwise)."""
    from .config import RunConfig
    from .specs import Search, get_spec

    spec = get_spec(model)
    space = dict(spec.default_space())
    if horizon < 4:
        space.pop("lookback", None)
        space["window"] = Search("int", 8, 96, log=True)
    if overrides is not None and not isinstance(overrides, dict):
        raise ConfigError(f"a search space is a table of name: dimension; got {type(overrides).__name__}")
    for name, value in (overrides or {}).items():
        if name in ("model", "dataset", "csv", "seed", "horizon"):
            raise ConfigError(f"search dimension {name}: it defines the run, it cannot be searched; set it outside the "
                              "space")
        if name not in spec.params and name not in RunConfig.fields():
            raise ConfigError(f"unknown search dimension {name!r}: {model} takes {', '.join(sorted(spec.params))} and "
                              f"the run settings ({', '.join(RunConfig.fields())})")
        if value is None:
            space.pop(name, None)
            continue
        space[name] = Search.from_value(name, value)
    if "window" in space and "lookback" in space:
        space.pop("window" if overrides and "lookback" in overrides else "lookback")
    if not space:
        raise ConfigError("the search space is empty: name at least one dimension")
    return space


def read_space(path) -> dict:
    """A search space from a YAML or JSON file ({name: dimension}); one line for a file that does not parse."""
    from .data import read_settings_text

    path = Path(path)
    text = read_settings_text(path, "search space file")
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            loaded = yaml.safe_load(text)
        else:
            loaded = json.loads(text)
    except ImportError:
        raise ConfigError(f"{path} is YAML, which needs PyYAML (pip install pyyaml); or write it as JSON") from None
    except Exception as exc:  # noqa: BLE001 - any parse error: one line naming the file
        raise ConfigError(f"search space file {path} does not parse ({str(exc).splitlines()[0]}); fix it") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"search space file {path} must hold a table of name: dimension")
    return loaded


def _sample(trial, space: dict) -> dict:
    values = {}
    for name, dimension in space.items():
        if dimension.kind == "choice":
            values[name] = trial.suggest_categorical(name, list(dimension.choices))
        elif dimension.kind == "int":
            values[name] = trial.suggest_int(name, int(dimension.low), int(dimension.high), log=dimension.log)
        else:
            values[name] = trial.suggest_float(name, float(dimension.low), float(dimension.high), log=dimension.log)
    return values


# ----------------------------------------------------------------------------------------------------
# Data: the test part is gone before the search starts
# ----------------------------------------------------------------------------------------------------
def before_test(panel, config):
    """The panel of the values before each series' test part (as ``tsattn fit`` splits it): all a search sees."""
    from .config import window_config

    data = window_config(panel, config)
    ends = data.insample_end()
    return data.panel.take(np.arange(data.panel.n_series), data.panel.offsets[:-1], ends, single_input=False), data


# ----------------------------------------------------------------------------------------------------
# The search
# ----------------------------------------------------------------------------------------------------
@dataclass
class TuneResult:
    best_settings: dict
    best_value: float
    metric: str
    trials: pd.DataFrame
    forecaster: object = None
    test: dict = field(default_factory=dict)       # "tuned" / "defaults" -> test metrics of the refits
    out: Path | None = None
    study_name: str | None = None                  # the Optuna study's name in its database


def check_windows(seen, horizon: int, windows: int | None, step: int) -> int:
    """The values rolling validation holds back before its earliest window (0 without windows), or one line when
    the series before the test part are too short for them (checked before a search starts, and by every trial)."""
    extra = (windows - 1) * step if windows else 0
    if extra and int(seen.lengths.min()) - extra <= horizon + 1:
        raise DataError(f"{windows} validation windows {step} apart need more than {extra + horizon + 1} values per "
                        f"series before the test part; the shortest series has {int(seen.lengths.min())}: use fewer "
                        "windows or a smaller step")
    return extra


def _validation_score(config, seen, metric: str, trial=None, windows: int | None = None,
                      step: int | None = None) -> float:
    """A trial's score on the values of ``seen`` (everything before the test part).

    Without ``windows``: fitted as `tsattn fit` fits (the end of each series as validation: the data's hold-out of one
    horizon, or the last 10%) and scored on every window of that validation part. With ``windows=k``: fitted on the
    values before the earliest of k validation windows of one horizon at the end of each series, ``step`` apart
    (default: the horizon), the last ending at each series' last value; the fit keeps its own validation part for
    early stopping and pruning, and every window is forecast from its own history by that one model
    (NeuralForecast's cross-validation without refits). The figure is the mean over series of each series' metric
    over its windows: the later windows are values the model never saw, so it is less tied to one stretch of time.
    """
    from .config import window_config
    from .evaluation import origins_of, score_origins, summarise
    from .harness import fit_state

    h = config.horizon
    step = h if step is None else step
    extra = check_windows(seen, h, windows, step)
    data = window_config(seen.heads(seen.lengths - extra) if extra else seen, config, with_test=False)
    left_out = len(data.dropped)  # (a series without validation windows is still scored: on the origins after)
    if left_out:  # scored on fewer series, its figure could not be compared with the other trials'
        raise DataError(f"window {data.window} + horizon {h} leaves out {left_out} of {seen.n_series} series too "
                        "short for it, so its score is not comparable; set pad=true to keep them (N-BEATS pads) or "
                        "narrow the window / lookback")
    callback = _PruningCallback(trial) if trial is not None else None
    # scored on the values it validates on, so no final fit on them (the refit of the best settings has one)
    state = fit_state(dataclasses.replace(config, final_fit=False), data, progress=callback)
    if windows:
        ends = seen.offsets[1:]
        origins = np.sort(np.concatenate([ends - h - 1 - j * step for j in range(windows)]))
    else:  # the fit's validation windows: the same local positions in seen, which is the fitted panel
        local, _, series = origins_of(data, "validation")
        origins = local - data.panel.offsets[series] + seen.offsets[series]
    # the model alone: a trial's figure is its own, and the baselines cost (statsforecast's AutoARIMA, added for
    # future-known covariates on hourly data: over a minute of every search, for a score nobody read)
    scores = score_origins(state, seen, origins.astype(np.int64), h, baselines={})
    value = summarise(seen, scores, h)["model"][metric]
    if value is None or not math.isfinite(value):
        raise DataError(f"the trial's validation {metric} is not finite")
    return float(value)


class _PruningCallback:
    """Reports each epoch's validation loss to the trial and stops a trial the pruner calls poor (a Keras callback
    built lazily, so importing this module does not import TensorFlow)."""

    def __new__(cls, trial):
        from ._backend import keras

        optuna = _optuna()

        class Callback(keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                value = (logs or {}).get("val_loss")
                if value is None or not math.isfinite(value):
                    return
                trial.report(float(value), epoch)
                if trial.should_prune():
                    raise optuna.TrialPruned(f"validation loss {value:.4g} at epoch {epoch + 1} is worse than the median")

        return Callback()


HEARTBEAT_SECONDS = 10   # a running trial writes a heartbeat this often to a database study
GRACE_SECONDS = 60       # ... and is failed by any worker when none came for this long (its machine was lost)
# a RUNNING trial that says no worker: every tsattn worker writes who it is within milliseconds of making its trial, so
# one still without after this long was made by a process killed in between (failed after GRACE_SECONDS before: a
# search resumed after such a kill waited a minute at its end, the kill test 75 s against 18 s)
CLAIM_SECONDS = 10
POLL_SECONDS = 1.0
INTERRUPTED = "interrupted (the search stopped during it: a killed process or a lost machine)"


def _host() -> str:
    import socket

    return socket.gethostname()


def _interrupted(study, trial) -> None:
    """What a trial failed by Optuna's heartbeat check (or ours) says in trials.csv."""
    study._storage.set_trial_user_attr(trial._trial_id, "error", INTERRUPTED)


def _fail_stale(study) -> int:
    """Fail the trials left RUNNING by a worker that died: at once when the worker was a process of this machine
    (a SIGKILL, a Ray node of a local cluster), otherwise when its heartbeat stopped for GRACE_SECONDS (Optuna's
    check, for studies in a database shared by several machines), or, when it never said which worker runs it, once
    older than CLAIM_SECONDS; a trial running elsewhere is left alone.
    How many were failed here."""
    import datetime

    optuna = _optuna()
    host, stale, now = _host(), 0, datetime.datetime.now()
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        worker = trial.user_attrs.get("worker") or {}
        dead = worker.get("host") == host and isinstance(worker.get("pid"), int) and not process_alive(worker["pid"])
        # a trial that never said who runs it (its process killed before it could, an earlier tsattn, another
        # program) has no heartbeat either: it is failed once older than CLAIM_SECONDS, or a search would wait for it
        unknown = not worker and trial.datetime_start is not None and \
            (now - trial.datetime_start).total_seconds() > CLAIM_SECONDS
        if dead or unknown:
            _interrupted(study, trial)
            try:
                study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)
                stale += 1
            except optuna.exceptions.UpdateFinishedTrialError:  # another worker failed it first
                pass
    import warnings

    with warnings.catch_warnings():  # fail_stale_trials is "experimental" since Optuna 2.9
        warnings.simplefilter("ignore")
        optuna.storages.fail_stale_trials(study)
    return stale


STORAGE_EXAMPLE = "e.g. sqlite:///study.db (a file) or postgresql+psycopg2://user:password@host/database"


def storage_url(storage: str, jobs: int = 1) -> str:
    """``storage`` checked before anything is written, as the URL to open: one line for a URL that does not parse,
    a SQLite file whose directory is missing or not writable or that is not a database, an in-memory database
    shared by parallel trials, or a database whose driver is not installed. ``postgresql://`` gets the PostgreSQL
    driver that is installed (SQLAlchemy 2 names psycopg 2 or 3 by default, whichever a user lacks)."""
    import importlib.util
    import os

    from sqlalchemy.engine import make_url

    try:
        url = make_url(storage)
    except Exception:  # noqa: BLE001 - sqlalchemy's ArgumentError and friends
        raise ConfigError(f"--storage {storage!r} is not a database URL; give one, {STORAGE_EXAMPLE}") from None
    shown = storage if url.password is None else url.render_as_string(hide_password=True)
    if url.get_backend_name() == "sqlite":
        if in_memory_sqlite(url):
            if jobs > 1:
                raise ConfigError(f"--storage {shown} is an in-memory database, which parallel trials cannot share; "
                                  f"give a file ({STORAGE_EXAMPLE}) or run one job")
            return storage
        path = Path(url.database)
        if not path.parent.is_dir():
            raise ConfigError(f"--storage {shown}: the directory {path.parent} does not exist; create it or name "
                              "another file")
        if path.exists():
            if not path.is_file():
                raise ConfigError(f"--storage {shown}: {path} is not a regular file; name a database file")
            with open(path, "rb") as handle:
                head = handle.read(16)
            if head and head != b"SQLite format 3\x00":
                raise ConfigError(f"--storage {shown}: {path} is not a SQLite database (a file of another kind); "
                                  "name a new file, e.g. study.db")
            if not os.access(path, os.W_OK):
                raise ConfigError(f"--storage {shown}: {path} is read-only; make it writable or name another file")
        elif not os.access(path.parent, os.W_OK):
            raise ConfigError(f"--storage {shown}: cannot create a file in {path.parent} (read-only); name another "
                              "directory")
        return storage
    if url.get_backend_name() == "postgresql" and url.get_driver_name() in (None, "", "psycopg2", "psycopg") \
            and "+" not in url.drivername:
        for module, driver in (("psycopg2", "psycopg2"), ("psycopg", "psycopg")):
            if importlib.util.find_spec(module) is not None:
                return url.set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)
        raise ConfigError(f"--storage {shown} needs a PostgreSQL driver: pip install psycopg2-binary (or psycopg)")
    try:
        url.get_dialect().import_dbapi()
    except ImportError as exc:
        raise ConfigError(f"--storage {shown} needs the database driver {url.get_driver_name() or url.drivername!r}, "
                          f"which is not installed ({exc}); install it or use SQLite ({STORAGE_EXAMPLE})") from None
    except Exception:  # noqa: BLE001 - an unknown dialect
        raise ConfigError(f"--storage {shown}: SQLAlchemy knows no database {url.drivername!r}; "
                          f"{STORAGE_EXAMPLE}") from None
    return storage


def in_memory_sqlite(url) -> bool:
    """Whether a SQLAlchemy URL names an in-memory SQLite database (``sqlite://``, ``sqlite:///:memory:``)."""
    database = url.database or ":memory:"
    return url.get_backend_name() == "sqlite" and (database == ":memory:" or database.startswith("file::memory:"))


def _immediate_transactions(engine) -> None:
    """Make every transaction on a SQLite study take the database's write lock when it begins (BEGIN IMMEDIATE).
    Optuna claims a waiting trial (the defaults, enqueued first) by reading it WAITING and setting it RUNNING in one
    transaction, with SELECT ... FOR UPDATE, which SQLite ignores; and pysqlite begins a transaction only at the
    first write, so two workers could both read WAITING and both run the same trial: the second to finish stopped
    with "Cannot tell a COMPLETE trial" and the search lost that worker (1 of 4 runs of the two-process test under
    load; 7-12 of 60 waiting trials popped twice by two threads). A PostgreSQL or MySQL study locks the row."""
    from sqlalchemy import event

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    engine.dispose()  # the connections the storage opened to create its tables begin no transaction of their own


def _storage(storage):
    """An Optuna storage: an SQLAlchemy URL opened with heartbeats (a trial lost with its machine is failed by the
    others), Optuna's in-memory storage for an in-memory SQLite URL, or a storage object as it is. A database that
    cannot be opened (a server that is down, no permission) is one line naming it."""
    if not isinstance(storage, str):
        return storage
    optuna = _optuna()
    import warnings

    from sqlalchemy.engine import make_url

    if in_memory_sqlite(make_url(storage)):
        # Optuna's own in-memory storage, made for threads (the progress line reads the study from its own): through
        # SQLAlchemy every thread got its own connection and so its own empty database, and the heartbeat thread died
        # with a traceback ("no such table: trial_heartbeats"). No heartbeat is needed: only this process's trials
        # use it (parallel trials are refused an in-memory study), and they end with it
        return optuna.storages.InMemoryStorage()
    sqlite = storage.startswith("sqlite")
    # workers wait for the lock; pysqlite's own transaction handling off (see _immediate_transactions)
    engine = {"connect_args": {"timeout": 60, "isolation_level": None}} if sqlite else None
    try:
        with warnings.catch_warnings():  # heartbeats are "experimental" in Optuna's words since 2.9
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            opened = optuna.storages.RDBStorage(storage, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_SECONDS,
                                                grace_period=GRACE_SECONDS, heartbeat_stale_trial_callback=_interrupted)
        if sqlite:
            _immediate_transactions(opened.engine)
        return opened
    except (ImportError, ConfigError):
        raise
    except Exception as exc:  # noqa: BLE001 - sqlalchemy's OperationalError, DatabaseError...: the first line
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:200]
        shown = make_url(storage).render_as_string(hide_password=True)
        raise ConfigError(f"--storage {shown}: the study database cannot be opened ({reason}); check that the "
                          "server runs and the URL, user and database are right") from None


@dataclass
class _Search:
    """All a search worker needs, sent to each worker once (a local process, a Ray task, or this process)."""

    storage: object          # an SQLAlchemy URL, or (in this process only) an in-memory storage
    study_name: str
    base: object             # the RunConfig every trial starts from
    dimensions: dict
    metric: str
    seen: object             # the panel before the test part
    trials: int
    deadline: float | None   # time.time() after which no trial starts
    seed: int
    windows: int | None = None  # validation windows per series, ``step`` values apart (None: the fit's own)
    step: int | None = None
    echo: object = None      # progress lines (in this process only)


def _worker_identity() -> dict:
    import os
    import sys

    identity = {"host": _host(), "pid": os.getpid(), "code": code_digest()}  # code: a resumed study names other code's
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        try:
            identity["node"] = ray.get_runtime_context().get_node_id()
        except Exception:  # noqa: BLE001 - the node id only labels the trial
            pass
    return identity


def _own_values(base, dimensions: dict, window: int | None = None) -> dict:
    """The run's own value of each search dimension that has one (None where the sampler must choose). ``window``:
    the input window the run's own settings give on the trials' data (the automatic one when neither window nor
    lookback is set), as ``window`` or as a ``lookback`` of whole horizons."""
    params = base.resolved_model_params()  # the model's parameters as a fit of ``base`` resolves them
    found = {}
    for name in dimensions:
        value = params[name] if name in params else getattr(base, name, None)
        if value is None and window is not None and name in ("window", "lookback"):
            value = window if name == "window" else window // base.horizon if window % base.horizon == 0 else None
        found[name] = value
    return found


def _holds(dimension, value) -> bool:
    """Whether a search dimension holds ``value`` (a choice it lists, a number in its range of its kind)."""
    if dimension.kind == "choice":
        return any(value == choice and type(value) is type(choice) for choice in dimension.choices)
    return not isinstance(value, bool) and isinstance(value, (int, float)) and dimension.low <= value <= dimension.high \
        and (dimension.kind == "float" or float(value).is_integer())


def _defaults_in(base, dimensions: dict, window: int | None = None) -> dict:
    """The run's own value of each search dimension, for those the space holds; the others are left to the sampler
    (see :func:`_own_values` for ``window``)."""
    found = {}
    for name, value in _own_values(base, dimensions, window).items():
        if value is not None and _holds(dimensions[name], value):
            found[name] = int(value) if dimensions[name].kind == "int" else \
                float(value) if dimensions[name].kind == "float" else value
    return found


def holding_defaults(base, dimensions: dict, window: int | None = None, given=()) -> dict:
    """The space widened to hold the run's own value of each of its default dimensions (``given``: the ones a user
    named, kept as given), so the first trial is the defaults and a search is never worse on validation than not
    searching. Under the N-BEATS recipe (batches of 1024) the default batch_size choices (16-128) held no default: the
    first trial sampled a batch of 32, and on M3 other (3 trials, 1 epoch) the best trial scored 4.353 on validation
    where the defaults scored 4.279, reported as 'tuned'."""
    from .specs import Search

    widened = dict(dimensions)
    for name, value in _own_values(base, dimensions, window).items():
        dimension = dimensions[name]
        if name in given or value is None or _holds(dimension, value):
            continue
        if dimension.kind == "choice":
            if isinstance(value, (str, bool, int, float)):
                widened[name] = Search("choice", choices=(*dimension.choices, value))
        elif not isinstance(value, bool) and isinstance(value, (int, float)) and \
                (dimension.kind == "float" or float(value).is_integer()) and (not dimension.log or value > 0):
            widened[name] = Search(dimension.kind, min(dimension.low, type(dimension.low)(value)),
                                   max(dimension.high, type(dimension.high)(value)), log=dimension.log)
    return widened


def _search_worker(job: _Search, worker: int) -> int:
    """One worker of a search: runs trials until the study holds ``job.trials`` finished (complete or pruned) ones
    or the deadline passes, while other workers (processes, Ray tasks, machines) do the same on the same study. A
    worker whose own trials fail MAX_FAILURES_IN_A_ROW times in a row stops with the last error. Its trial count."""
    from .config import check_config

    optuna = _optuna()
    storage = job.storage
    if isinstance(storage, str) and storage.startswith("sqlite:///"):
        path = Path(storage[len("sqlite:///"):])
        if not path.is_file():  # a Ray node on another machine: never start a second, empty study there
            raise ConfigError(f"the study is a SQLite file ({path}) this worker ({_host()}) cannot see; on a cluster of "
                              "several machines give --storage a database URL every node reaches (e.g. postgresql://...)")
    study = optuna.load_study(study_name=job.study_name, storage=_storage(storage),
                              pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=5))
    # each worker its own draws, and a resumed search new ones
    study.sampler = optuna.samplers.TPESampler(seed=job.seed + 7919 * worker + len(study.trials))
    identity = _worker_identity()

    def objective(trial):
        trial.set_user_attr("worker", identity)
        if _surplus(study, trial, job.trials):  # another worker claimed the last trial asked first: not run
            trial.set_user_attr(SURPLUS, True)
            raise _Surplus("not run: the trials asked for were already running")
        values = _sample(trial, job.dimensions)
        trial.set_user_attr("settings", values)
        try:
            config = check_config(job.base.updated(**values))
            return _validation_score(config, job.seen, job.metric, trial, job.windows, job.step)
        except optuna.TrialPruned:
            raise
        except (TsattnError, ValueError, ArithmeticError) as exc:  # a bad combination: recorded, the search goes on
            trial.set_user_attr("error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            raise

    ran, failures_in_a_row, mine = 0, 0, []
    while True:
        _fail_stale(study)
        # finished and running trials read in one snapshot: read one after the other, a trial of another worker that
        # ended between the two reads was in neither, and both workers started one more trial than asked
        trials = study.get_trials(deepcopy=False)
        finished = _counted_of(trials)
        left = None if job.deadline is None else job.deadline - time.time()
        if finished >= job.trials or (left is not None and left <= 0):
            return ran
        if finished + sum(trial.state == optuna.trial.TrialState.RUNNING for trial in trials) >= job.trials:
            time.sleep(POLL_SECONDS)  # the trials still wanted are running on other workers: wait for them to end
            continue
        if failures_in_a_row >= MAX_FAILURES_IN_A_ROW:
            error = mine[-1].user_attrs.get("error", "see trials.csv")
            raise TsattnError(f"{MAX_FAILURES_IN_A_ROW} trials in a row failed (the last: {error}); narrow the "
                              "search space or fix the settings")
        # no gc.collect() after each trial (gc_after_trial): Python's own collector frees a trial's garbage, and a
        # full collection costs seconds in a process that has fitted many models (Keras keeps each fit's traced training
        # graphs alive, keras-team/keras#17458: 13,000-67,000 objects a fit, 8 million after 120 small fits of three
        # models, 7.4 s a collection; in the test workers the padded-search test took 27 s against 4 s alone)
        study.optimize(objective, n_trials=1, timeout=left, catch=(TsattnError, ValueError, ArithmeticError),
                       gc_after_trial=False, callbacks=[lambda _, trial: mine.append(trial)])
        last = mine[-1]
        if last.user_attrs.get(SURPLUS):  # nothing ran: wait for the other workers' trials (the loop's next look)
            mine.pop()
            continue
        ran += 1
        failures_in_a_row = failures_in_a_row + 1 if last.state == optuna.trial.TrialState.FAIL else 0
        if job.echo is not None:
            job.echo(_trial_line(last, job.metric, job.trials, _counted(study)),
                     _counts(last))  # a failed trial is not counted (another runs)


class _Progress:
    """Echoes the trials other processes finish (read from the study's database every POLL_SECONDS) while this
    process waits for its workers."""

    def __init__(self, storage: str, study_name: str, metric: str, wanted: int, echo):
        import threading

        self.storage, self.study_name, self.metric, self.wanted, self.echo = storage, study_name, metric, wanted, echo
        self.stop = threading.Event()
        self.seen = set()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        optuna = _optuna()
        study = optuna.load_study(study_name=self.study_name, storage=self.storage)
        self.seen = {t.number for t in study.get_trials(deepcopy=False) if t.state.is_finished()}
        self.done = _counted(study)
        while not self.stop.wait(POLL_SECONDS):
            self.report(study)
        self.report(study)  # the trials that ended since the last look

    def report(self, study) -> None:
        for trial in study.get_trials(deepcopy=False):
            if trial.state.is_finished() and trial.number not in self.seen:
                self.seen.add(trial.number)
                if trial.user_attrs.get(SURPLUS):  # never ran (see _surplus)
                    continue
                self.done += _counts(trial)
                self.echo(_trial_line(trial, self.metric, self.wanted, self.done), _counts(trial))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def tune(model: str = "attention-rnn", data=None, dataset: str | None = None, trials: int = 20,
         timeout: float | None = None, metric: str = "auto", storage: str | None = None, out=None,
         space: dict | None = None, seed: int = 0, settings: dict | None = None, study_name: str | None = None,
         refit: bool = True, echo=None, force: bool = False, engine: str = "local", jobs: int = 1,
         address: str | None = None, cpus: int = 1, workers: int | None = None, windows: int | None = None,
         step: int | None = None, static=None, id_column: str | None = None, time_column: str | None = None,
         value_column: str | None = None, static_df=None) -> TuneResult:
    """Search ``model``'s settings on validation windows, refit the best on everything before the test part and
    score it once on test (beside the defaults).

    Args:
        model: a registered network.
        data: user data (a long frame with the covariate columns ``settings`` names, a Series, a Panel) or None with
            ``dataset``.
        trials: finished (completed or pruned) trials the study should hold (a resumed study runs only the missing
            ones).
        timeout: stop starting trials after this many seconds.
        metric: the validation metric minimised: smape, mase, rmse or mae; "auto": RMSE for one series, sMAPE for a
            panel, MASE for a panel with values of 0 or below before the test part (what compare ranks by).
        storage: an SQLAlchemy URL for the study (default: ``sqlite:///<out>/study.db``; in memory without ``out``).
        out: the result folder (trials.csv, best.json, plots, report.md, study.db); rerun to resume.
        space: overrides of the model's search space (see :func:`search_space`).
        seed: the sampler's seed and every trial's training seed.
        settings: fixed run settings of every trial (``horizon=18``, ``epochs=50``, covariates, ...).
        engine, jobs, address, cpus: where trials run (as for compare): one after another in this process
            (the default), in ``jobs`` local processes, or as Ray tasks (``engine="ray"``, ``cpus`` per trial) that
            share the study through its database; a worker lost with its node is rerun by Ray and the trial it was
            running is marked failed.
        workers: trials at once (default: ``jobs``; on Ray, the cluster's CPUs / ``cpus``).
        windows, step: rolling-origin validation: each trial is fitted once on the values before the earliest of
            ``windows`` forecasts of one horizon at the end of each series' values before the test part, ``step``
            apart (default: the horizon), and scored on all of them; None (default) scores the fit's own validation
            part (the data's hold-out, or the last 10% of each series). A resumed study must use the same metric,
            windows, step and settings (it is refused otherwise: its trials would not be comparable).
        static: static features of ``data`` (``stat_exog``): its id column (or ``unique_id``) and the feature
            columns; ``static_df`` is the same argument under Forecaster.fit's and compare's name.
        id_column, time_column, value_column: the long frame's columns, as in Forecaster.fit (default ``unique_id``,
            ``ds``, ``y``); kept in the study's settings (``id_column``, ``date_column``, ``column``).
    """
    from .config import RunConfig, check_config, resolve
    from .engine import get_engine
    from .specs import get_spec

    optuna = _optuna()
    get_spec(model)
    if metric not in METRICS + ("auto",):
        raise ConfigError(f"metric must be auto or one of {', '.join(METRICS)}; got {metric!r}")
    if not isinstance(trials, int) or isinstance(trials, bool) or not 1 <= trials <= 100_000:
        raise ConfigError(f"trials must be an integer in 1..100000; got {trials!r}")
    for name, value in (("windows", windows), ("step", step)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ConfigError(f"{name} must be an integer >= 1; got {value!r}")
    if study_name is not None and (not isinstance(study_name, str) or not study_name.strip() or len(study_name) > 256):
        raise ConfigError(f"study_name must be a non-empty name of at most 256 characters; got {study_name!r}")
    if step is not None and windows is None:
        raise ConfigError("step is the distance between validation windows; give windows too (e.g. windows=3)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers must be an integer >= 1; got {workers!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= 10 * 365 * 86_400):
        raise ConfigError(f"timeout must be a number of seconds above 0; got {timeout!r} (leave it out for no limit)")
    runner = get_engine(engine, jobs=jobs, address=address, cpus=cpus)
    echo = echo or (lambda line: None)
    # settings and data resolved as every fit path does (covariate columns and static features of `data` included);
    # preset "auto": every trial starts from the settings `tsattn fit` uses for this data
    from .config import canonical

    settings = canonical(settings or {})
    if static is not None and static_df is not None:
        raise ConfigError("static and static_df name the same argument of tune(); give one")
    static = static if static is not None else static_df
    for key, value in (("id_column", id_column), ("date_column", time_column), ("column", value_column)):
        if value is not None:
            if settings.get(key, value) != value:
                raise ConfigError(f"the {key} is given twice ({value!r} and settings {key}={settings[key]!r}); give it "
                                  "once")
            settings[key] = value
    for key, argument in (("model", "model"), ("seed", "seed")):
        if key in settings and settings[key] != {"model": model, "seed": seed}[key]:
            raise ConfigError(f"the {key} is given twice ({argument}={ {'model': model, 'seed': seed}[key]!r} and "
                              f"settings {key}={settings[key]!r}); give it once (CLI: --{key}, not --set {key}=...)")
    base, panel = resolve(RunConfig(model=model, dataset=dataset, seed=seed).updated(**settings), data, static)
    dimensions = search_space(model, base.horizon, space)
    fixed = sorted(key for key in set(settings) & set(dimensions)  # a one-value dimension of that value agrees
                   if not (dimensions[key].kind == "choice" and list(dimensions[key].choices) == [settings[key]]))
    if fixed:  # the value given is fixed and left out of the search (it used to be overridden without a word)
        for key in fixed:
            dimensions.pop(key)
        echo(f"{', '.join(f'{key}={settings[key]!r}' for key in fixed)} fixed by the settings (--set): left out of "
             "the search")
        if not dimensions:
            raise ConfigError("every dimension of the search space is fixed by the settings (--set); leave one free")
    for name, dimension in dimensions.items():  # every value of the space must be a valid setting
        probes = dimension.choices if dimension.kind == "choice" else (dimension.low, dimension.high)
        for value in probes:
            value = int(value) if dimension.kind == "int" else value
            try:
                check_config(base.updated(**{name: value}))
            except TsattnError as exc:
                raise ConfigError(f"search dimension {name}: {value!r} is not a valid setting ({exc})") from None
    seen, split = before_test(panel, base)
    extra = check_windows(seen, base.horizon, windows, step or base.horizon)  # before anything is written
    from .config import resolved_window

    default_window = resolved_window(seen.heads(seen.lengths - extra) if extra else seen, base)  # as a trial's fit
    dimensions = holding_defaults(base, dimensions, default_window, given=set(space or ()))
    if metric == "auto":  # what compare ranks by: RMSE for one series, sMAPE (scale-free) for a panel, MASE for a
        metric = split.headline  # panel with values of 0 or below before the test part
    runner.check()  # an unreachable cluster is refused before anything is written
    opened, in_memory = None, False  # the study database too: checked and opened (once) before --out is made
    if storage is not None:
        from sqlalchemy.engine import make_url

        storage = storage_url(storage, jobs=max(int(jobs or 1), int(workers or 1)))
        opened = _storage(storage)
        in_memory = in_memory_sqlite(make_url(storage))
    fingerprint, legacy = data_fingerprint(panel), _legacy_data(panel)  # what the study records of its data, once
    scratch, own_folder = None, False  # own_folder: the study is the result folder's own study.db
    if out is not None:
        from .io import check_output_directory

        out = Path(check_output_directory(out, True, "tune"))  # new, empty, or an earlier search (resumed)
        if force and storage is None:  # start over: only the files a search writes are removed
            from .io import LAYOUTS

            for name in LAYOUTS["tune"][1]:
                (out / name).unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        if storage is not None:  # the study lives elsewhere: say where, which also marks this folder as a search
            from .io import write_json

            study_name = study_name or default_study_name(model, fingerprint, storage, legacy=legacy)
            where = ("in memory: it ended with the run that wrote this folder (not resumable)" if in_memory
                     else make_url(storage).render_as_string(hide_password=True))
            write_json(out / "study.json", {"storage": where, "study": study_name})
        own_folder = storage is None
        storage = storage or f"sqlite:///{out / STUDY_FILE}"
    elif storage is None and not runner.in_process:  # workers in other processes share the study through a file
        import tempfile

        scratch = tempfile.TemporaryDirectory(prefix="tsattn-tune-")
        storage = f"sqlite:///{Path(scratch.name) / STUDY_FILE}"
    name = study_name or default_study_name(model, fingerprint, storage, own_folder=own_folder, legacy=legacy)
    resumable = bool(storage) and scratch is None and not in_memory  # an in-memory or scratch study ends with the run
    try:
        if opened is None and storage:
            opened = _storage(storage)
        study = optuna.create_study(study_name=name, storage=opened,
                                    load_if_exists=True, direction="minimize")
        protocol = {"metric": metric, "windows": windows, "step": (step or base.horizon) if windows else None,
                    "settings": json.loads(json.dumps(settings or {}, sort_keys=True, default=str)),
                    "space": {key: repr(value) for key, value in sorted(dimensions.items())},
                    "data": fingerprint}
        if not study.trials:  # the first trial is the defaults (where the space holds them): a search is never
            study.set_user_attr("protocol", protocol)
            defaults = _defaults_in(base, dimensions, window=default_window)  # worse on validation than not
            if defaults:  # searching; it is "the defaults" only if it holds every dimension (one sampled is not)
                study.enqueue_trial(defaults, user_attrs={"defaults": len(defaults) == len(dimensions)})
        else:
            _check_protocol(study.user_attrs.get("protocol"), protocol, legacy_data=legacy)
            other = _other_code_trials(study)
            if other:
                echo(f"resuming: {other} finished trial(s) of this study were scored by other tsattn code (another "
                     "version, or code edited since), so the best may compare figures of two codes; --force (or "
                     "another --out) starts the search over")
        stale = _fail_stale(study)
        if stale:
            echo(f"resuming: {stale} trial(s) left running by an interrupted search marked failed")
        done = _counted(study)
        started = time.perf_counter()
        if done < trials:
            count = workers or runner.slots()
            count = max(1, min(count, trials - done))
            echo(f"{done} of {trials} trials done; searching {', '.join(dimensions)}"
                 + (f" with {count} workers ({runner.describe()})" if count > 1 or not runner.in_process else ""))
            from .progress import Heartbeat

            # a line per trial, one at least every 10 s between them; on a terminal a bar of the trials done
            with Heartbeat(echo, "tune", total=trials - done, unit="trial") as beat:
                to_run = trials - done
                ended = []
                beat.stage(lambda: f"{len(ended)} of {to_run} trial(s) done, the next running")

                def trial_line(line, counted=True):  # counted: a completed or pruned trial (a failed one is rerun)
                    beat.echo(line)
                    if counted:
                        ended.append(line)
                        beat.advance()

                # trials in this process share the study's own storage object (an in-memory SQLite URL opened
                # again would be another, empty database); other processes open the URL
                job = _Search(study._storage if runner.in_process or not storage else storage, name, base, dimensions,
                              metric, seen, trials,
                              None if timeout is None else time.time() + timeout, seed, windows,
                              protocol["step"], trial_line if runner.in_process else None)
                try:
                    if runner.in_process:
                        outcomes = dict(runner.map(_search_worker, job, range(count)))
                    else:
                        with _Progress(storage, name, metric, trials, trial_line):
                            outcomes = dict(runner.map(_search_worker, job, range(count)))
                except KeyboardInterrupt:
                    beat.echo("stopped: the finished trials are in the study; rerun the same command to resume"
                              if resumable else "stopped: the study was in memory and ends with this run; a search "
                              "in a database resumes (--out's study.db, or --storage with a file or server URL)")
                    raise
            errors = {worker: outcome.error for worker, outcome in sorted(outcomes.items()) if not outcome.ok}
            if errors and _counted(study) < trials and (timeout is None or time.perf_counter() - started < timeout):
                raise TsattnError(next(iter(errors.values())))
            for worker, error in errors.items():  # the others ran the trials asked; a worker lost is still said
                echo(f"tune: worker {worker + 1} of {count} stopped early ({error}); the other workers ran the "
                     "trials asked")
        result = _finish(study, model, panel, base, settings, dimensions, metric, seed, refit, out, echo)
        result.study_name = name
        return result
    finally:
        if scratch is not None:
            scratch.cleanup()


def _protocol_line(protocol: dict | None) -> str:
    windows = (protocol or {}).get("windows")
    if not windows:
        return "Each trial was scored on its fit's own validation part (the end of each series before the test part)."
    return (f"Each trial was fitted once and scored on {windows} validation windows per series, {protocol['step']} "
            "values apart, the last ending where the test part begins (rolling origins, no refits).")


def default_study_name(model: str, fingerprint: str, storage, own_folder: bool = False,
                       legacy: str | None = None) -> str:
    """The study a search uses when none is named: ``tsattn-<model>-<digest of the data>`` (``fingerprint``:
    :func:`data_fingerprint`), so searches of one model on different data share a database without mixing (a
    fibonacci search used to join a sunspots study). A study of the older names already in the database is resumed
    (its recorded data is checked): ``tsattn-<model>``, the one named by ``legacy`` (:func:`_legacy_data`, the
    fingerprint before time labels were in it), and the one study of a result folder's own study.db: a folder holds
    one search."""
    name = _study_name(model, fingerprint)
    if not isinstance(storage, str):
        return name
    if storage.startswith("sqlite:///") and not Path(storage[len("sqlite:///"):]).exists():
        return name  # a new file: nothing to resume (and nothing created by looking)
    names = _optuna().get_all_study_names(storage=_storage(storage))
    older = [n for n in names if n == f"tsattn-{model}"
             or (own_folder and n.startswith(f"tsattn-{model}-"))
             or (legacy is not None and n == _study_name(model, legacy))]
    return name if name in names or not older else older[0]


def _study_name(model: str, fingerprint: str) -> str:
    import hashlib

    return f"tsattn-{model}-{hashlib.sha1(fingerprint.encode()).hexdigest()[:8]}"


def data_fingerprint(panel) -> str:
    """What a study was searched on, in a few words and digests: a study resumed on other data (a fibonacci search
    joining a sunspots study in one database, the same values with other covariates, dates or static features) is
    refused. The first part (values and ids) is what studies recorded before the rest was added."""
    import hashlib

    labels = hashlib.sha1(np.ascontiguousarray(panel.offsets, dtype=np.int64).tobytes())
    labels.update(f"{panel.freq}|".encode())
    labels.update(pd.util.hash_pandas_object(pd.Series(panel.index.astype(str)), index=False).to_numpy().tobytes())
    parts = [_values_fingerprint(panel), f"time labels sha1 {labels.hexdigest()[:12]}"]
    if panel.exog is not None:
        digest = hashlib.sha1(np.ascontiguousarray(panel.exog, dtype=np.float64).tobytes())
        parts.append(f"covariates {', '.join(map(str, panel.exog_names))} sha1 {digest.hexdigest()[:12]}")
    if panel.static is not None:
        hashed = pd.util.hash_pandas_object(panel.static.astype(str), index=True).to_numpy().tobytes()
        digest = hashlib.sha1("|".join(map(str, panel.static.columns)).encode() + hashed)
        parts.append(f"static {', '.join(map(str, panel.static.columns))} sha1 {digest.hexdigest()[:12]}")
    return ", ".join(parts)


def _values_fingerprint(panel) -> str:
    """The target's values and the series ids: all a study recorded of its data before time labels and covariates
    (such a study resumes on a panel without covariates whose values and ids match)."""
    import hashlib

    digest = hashlib.sha1(np.ascontiguousarray(panel.values, dtype=np.float64).tobytes())
    digest.update("|".join(map(str, panel.ids)).encode())
    return f"{panel.n_series} series, {int(panel.lengths.sum())} values, sha1 {digest.hexdigest()[:12]}"


def _legacy_data(panel) -> str | None:
    """The fingerprint a study recorded before time labels and covariates were part of it, when this panel could
    have been searched then with nothing left out (no covariates, no static features); else None."""
    return _values_fingerprint(panel) if panel.exog is None and panel.static is None else None


def _other_code_trials(study) -> int:
    """How many finished trials of ``study`` a worker running other tsattn code scored (trials from before the code
    was recorded are not counted: nothing says which code they ran)."""
    codes = [(trial.user_attrs.get("worker") or {}).get("code") for trial in study.trials
             if trial.state.name in ("COMPLETE", "PRUNED")]
    return sum(1 for code in codes if code is not None and code != code_digest())


def _check_protocol(recorded: dict | None, wanted: dict, legacy_data: str | None = None) -> None:
    """A resumed study's trials were scored one way; a search that would score its new trials another way (metric,
    validation windows, fixed settings) is refused rather than mixing figures that cannot be compared."""
    if recorded is None:  # a study from before the protocol was recorded
        return
    # space and data are recorded since issue 39: a study from before keeps resuming without them
    # a study recorded before time labels and covariates were fingerprinted resumes on the same values and ids
    # (legacy_data: only for a panel without covariates, all such a study could have been searched on)
    changed = [key for key in wanted if (key in recorded or key not in ("space", "data"))
               and recorded.get(key) != wanted[key]
               and not (key == "data" and legacy_data is not None and recorded.get(key) == legacy_data)]
    if changed:
        def differs(key):
            old, new = recorded.get(key), wanted[key]
            if key == "space" and isinstance(old, dict):  # name the dimensions, not two pages of ranges
                names = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
                return f"another search space (changed: {', '.join(names)})"
            return f"{key} {old!r} (now {new!r})"

        what = ", ".join(differs(key) for key in changed)
        raise ConfigError(f"this study's trials were scored with {what}; rerun with the same options to resume, "
                          "or start over with --force or another --out")


def _finish(study, model, panel, base, settings, dimensions, metric, seed, refit, out, echo) -> TuneResult:
    """The search's result: the trials, the best settings, their refit scored once on test, the files in out."""
    frame = trials_table(study, metric)
    complete = frame[frame["state"] == "COMPLETE"]
    if complete.empty:
        errors = frame["error"].dropna()
        raise TsattnError("no trial completed" + (f"; the first error: {errors.iloc[0]}" if len(errors) else ""))
    best = study.best_trial
    fixed = {key: value for key, value in (settings or {}).items() if value is not None}  # e.g. csv=None from the CLI
    best_settings = {**fixed, **best.user_attrs.get("settings", best.params)}
    result = TuneResult(best_settings, float(best.value), metric, frame, out=out)
    if refit:
        result.test = _refits(model, panel, base, best_settings, seed, echo, metric)
        result.forecaster = result.test.pop("forecaster", None)
    if out is not None:
        write_result(out, result, model, dimensions, study)
    return result


SURPLUS = "surplus"  # a trial's user attribute: created by a worker after the trials asked were all claimed


class _Surplus(TsattnError):
    """Ends a trial that is not needed (see :func:`_surplus`)."""


def _surplus(study, trial, wanted: int) -> bool:
    """Whether ``trial``, just created, is one more than ``wanted``: the counted trials (complete or pruned) and the
    ones still running that were created before it already make up the number asked. Two workers that looked at the
    study at the same moment both start a trial; of the two, the later-created one is surplus (a storage numbers its
    trials in the order they were created), so a search never runs more trials than asked. A trial created earlier
    that fails later leaves a place that the workers' next look fills. A waiting trial (the defaults, enqueued when the
    study was made) is created first and every worker runs it before any other, so it counts as claimed."""
    optuna = _optuna()
    trials = study.get_trials(deepcopy=False)
    claimed = (optuna.trial.TrialState.RUNNING, optuna.trial.TrialState.WAITING)  # a waiting one: the next to run
    earlier = sum(other.state in claimed and other._trial_id < trial._trial_id for other in trials)
    return _counted_of(trials) + earlier >= wanted


def _counted(study) -> int:
    return _counted_of(study.get_trials(deepcopy=False))


def _counted_of(trials) -> int:
    return sum(_counts(trial) for trial in trials)


def _counts(trial) -> bool:
    """Whether a trial counts toward the number asked: complete or pruned (a failed one is run again)."""
    optuna = _optuna()
    return trial.state in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)


def _trial_line(trial, metric: str, wanted: int, done: int) -> str:
    optuna = _optuna()
    if trial.state == optuna.trial.TrialState.PRUNED:  # its value is its last validation loss, not the metric
        step = max(trial.intermediate_values) + 1 if trial.intermediate_values else 0
        value = f"pruned after epoch {step} (its validation loss was worse than the median of earlier trials)"
    else:
        value = f"validation {metric_label(metric)} {trial.value:.4g}" if trial.value is not None else trial.state.name.lower()
    error = trial.user_attrs.get("error")
    return f"[{done}/{wanted}] trial {trial.number}: {value}" + (f" ({error})" if error else "")


def trials_table(study, metric: str) -> pd.DataFrame:
    optuna = _optuna()
    rows = []
    for trial in study.trials:
        if trial.user_attrs.get(SURPLUS):  # never ran (see _surplus)
            continue
        complete = trial.state == optuna.trial.TrialState.COMPLETE
        losses = trial.intermediate_values
        rows.append({"number": trial.number, "state": trial.state.name,
                     f"validation_{metric}": trial.value if complete else None,  # a pruned trial's value is a loss
                     "epochs_reported": len(losses), "last_validation_loss": losses[max(losses)] if losses else None,
                     "seconds": (trial.datetime_complete - trial.datetime_start).total_seconds()
                     if trial.datetime_complete and trial.datetime_start else None,
                     "error": trial.user_attrs.get("error"), "defaults": bool(trial.user_attrs.get("defaults")),
                     **{f"param_{k}": v for k, v in trial.user_attrs.get("settings", trial.params).items()}})
    return pd.DataFrame(rows)


def _refits(model, panel, base, best_settings, seed, echo, metric: str = "smape") -> dict:
    """The defaults and the tuned settings refitted as `tsattn fit` fits them, scored once on the test part."""
    from .config import check_config
    from .forecaster import Forecaster
    from .harness import run

    out = {}
    for label, config in (("defaults", base), ("tuned", check_config(base.updated(**best_settings)))):
        result = run(config, panel)  # resolved: the base by tune, the tuned settings checked as in their trial
        out[label] = {"test": result.metrics["test"]["model"], "validation": result.metrics["validation"]["model"],
                      "epochs_run": result.epochs_run, "fit_seconds": result.fit_seconds,
                      "series": result.data.panel.n_series,
                      "naive": result.metrics["test"]["naive"], "linear": result.metrics["test"]["linear"],
                      "baselines": {name: values for name, values in result.metrics["test"].items() if name != "model"}}
        if label == "tuned":
            out["forecaster"] = Forecaster.from_state(result.state)
        echo(f"{label}: test {scores_text(out[label]['test'], metric)}")
    return out


def scores_text(metrics: dict, first: str = "smape") -> str:
    """"sMAPE 3.743, MASE 1.281, RMSE 4.478": a refit's scores as tune's lines and report write them, the search's
    metric ``first`` (MASE first on a panel judged on it)."""
    keys = (first, *(key for key in ("smape", "mase", "rmse") if key != first))
    return ", ".join(f"{metric_label(key)} {number_text(metrics[key])}" for key in keys if metrics.get(key) is not None)


def write_result(out: Path, result: TuneResult, model: str, dimensions: dict, study) -> None:
    """trials.csv, best.json (settings `tsattn fit --config` takes), history.png, importance.png, report.md and
    report.html (through the reporting layer)."""
    from .plots import PHONE_RENDERS, phone_renders, save_figure
    from .report import write_document

    with atomic_file(out / "trials.csv") as temporary:
        result.trials.to_csv(temporary, index=False)
    with atomic_file(out / BEST_FILE) as temporary:
        write_json(temporary, {"model": model, **result.best_settings})
    figures = {}
    try:
        figures["history.png"] = _history_figure(result)
        figures["importance.png"] = _importance_figure(study, result.metric)
    except Exception as exc:  # noqa: BLE001 - a figure that cannot be drawn never costs the search
        import warnings

        warnings.warn(f"a tuning figure could not be drawn ({exc}); the trials and best settings are written",
                      UserWarning, stacklevel=user_stacklevel())
    with phone_renders():  # each figure also at a phone's width, its text legible at 390 px
        for name, figure in figures.items():
            if figure is not None:
                save_figure(figure, out / name)
        phones = {Path(path).name: render for path, render in PHONE_RENDERS.items() if path != "active"}
    write_document(out, f"Tuning {model}", report_blocks(result, study.user_attrs.get("protocol"),
                                                          figures.get("importance.png") is not None, phones))



def report_blocks(result: TuneResult, protocol: dict | None, importance: bool, phones: dict | None = None) -> list:
    """The tuning report's content (:func:`tsattn.report.write_document` writes it as Markdown and HTML): the
    verdict (tuned against the defaults on test), the protocol, the best settings, the defaults trial, the refits
    scored once on test, and the figures (with their phone-sized renders: ``phones``, file name -> (render, its
    smallest text in px))."""
    phones = phones or {}

    def figure(caption, name):
        phone, smallest = phones.get(name, (None, None))
        return {"kind": "figure", "caption": caption, "path": result.out / name if result.out else Path(name),
                "link": name, "phone": phone, "smallest": smallest}

    states = result.trials["state"]
    metric = result.metric
    blocks = [("p", f"Validation metric: {metric_label(metric)} (minimised); {int((states == 'COMPLETE').sum())} trials completed, "
                    f"{int((states == 'PRUNED').sum())} pruned, {int((states == 'FAIL').sum())} failed."),
              ("p", _protocol_line(protocol)), ("h2", "Best settings (chosen on validation only)"),
              ("table", ["setting", "value"], [[key, _value_text(value)] for key, value in result.best_settings.items()]),
              ("p", f"Best validation {metric_label(metric)}: {number_text(result.best_value)}.")]
    defaults = result.trials[result.trials["defaults"] & (states == "COMPLETE")]
    if len(defaults):  # trial 0 ran the run's own settings where the space holds them
        row = defaults.iloc[0]
        blocks.append(("p", f"The defaults (trial {int(row['number'])}): validation {metric_label(metric)} "
                            f"{number_text(row[f'validation_{metric}'])}."))
    if result.test:
        blocks += [("h2", "Refitted and scored once on the test part"),
                   ("table", ["settings", "validation", "test", "epochs"],
                    [[label, scores_text(result.test[label]["validation"], metric),
                      scores_text(result.test[label]["test"], metric),
                      str(result.test[label]["epochs_run"])] for label in ("defaults", "tuned")]),
                   ("p", f"Naive on test: {scores_text(result.test['tuned']['naive'], metric)}.")]
        tuned, plain = result.test["tuned"]["test"].get(metric), result.test["defaults"]["test"].get(metric)
        if tuned is not None and plain is not None:  # the verdict, either way, first
            checked = (result.test["tuned"]["validation"].get(metric), result.test["defaults"]["validation"].get(metric))
            if tuned > plain and None not in checked and checked[0] > checked[1]:  # a space without the defaults
                verdict = (f"The tuned settings are WORSE than the defaults on validation too ({metric_label(metric)} "
                           f"{number_text(checked[0])} against {number_text(checked[1])}; on test "
                           f"{number_text(tuned)} against {number_text(plain)}): the search space did not hold the "
                           "defaults and found nothing better; keep the defaults, or widen the space to hold them.")
            elif tuned > plain:
                verdict = (f"The tuned settings are WORSE on test than the defaults ({metric_label(metric)} "
                           f"{number_text(tuned)} against {number_text(plain)}): the validation part did not rank "
                           "these settings as the test part does; more validation windows (--windows) or the "
                           "defaults are the safer choice.")
            elif tuned < plain:
                verdict = (f"The tuned settings are better on test than the defaults ({metric_label(metric)} "
                           f"{number_text(tuned)} against {number_text(plain)}; one split, one seed: check it with "
                           "tsattn compare over seeds before trusting the gain).")
            else:
                verdict = f"The tuned settings score the same on test as the defaults ({metric_label(metric)} {number_text(tuned)})."
            completed = int((states == "COMPLETE").sum())
            if completed < 20:
                verdict += f" Only {completed} trial(s) completed: the search has barely started."
            blocks.insert(0, ("verdict", [verdict]))
    blocks.append(figure("Optimisation history: validation metric per trial", "history.png"))
    if importance:
        completed = int((states == "COMPLETE").sum())
        blocks.append(figure(f"Importance of each setting (fANOVA over {completed} completed trials"
                             + ("; few trials: a rough guide only" if completed < 20 else "") + ")", "importance.png"))
    return blocks


def _value_text(value) -> str:
    return number_text(value) if isinstance(value, float) else str(value)


def _history_figure(result: TuneResult):
    from matplotlib.figure import Figure

    column = f"validation_{result.metric}"
    done = result.trials[result.trials["state"] == "COMPLETE"]
    figure = Figure(figsize=(7, 3.5), layout="constrained")
    axes = figure.subplots()
    axes.scatter(done["number"], done[column], s=14, label="trial")
    axes.plot(done["number"], done[column].cummin(), color="C3", label="best so far")
    axes.set_xlabel("trial")
    axes.set_ylabel(f"validation {metric_label(result.metric)}")
    axes.legend()
    return figure


def _importance_figure(study, metric: str):
    optuna = _optuna()
    from matplotlib.figure import Figure

    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if len(complete) < 3:
        return None
    importances = optuna.importance.get_param_importances(study)
    figure = Figure(figsize=(6, 0.4 * len(importances) + 1.2), layout="constrained")
    axes = figure.subplots()
    names = list(importances)[::-1]
    axes.barh(names, [importances[n] for n in names])
    axes.set_xlabel(f"importance for validation {metric_label(metric)} (fANOVA)")
    return figure


def load_best(path) -> dict:
    """The settings of a best.json (or of a tune folder) as RunConfig keys."""
    from .data import read_settings_text

    path = Path(path)
    if path.is_dir():
        path = path / BEST_FILE
    text = read_settings_text(path, "settings file")  # a FIFO or /dev/zero: refused, never read for ever
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not a tuning result's best.json ({exc}); run tsattn tune first") from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{path} must hold a table of settings")
    if settings.get("csv") is not None and "dataset" not in settings:
        settings["dataset"] = None  # a search on a CSV file names no dataset (not the default one)
    return settings


def tuned_settings(paths, models=None) -> dict:
    """Settings of ``tsattn tune`` results (best.json files or tune folders) as per-model compare settings
    ("attention-rnn.learning_rate": ...), so "does attention help?" can be asked of tuned models. With ``models``
    (the compared models) each file is checked against them, and a problem names the file, not a --set."""
    from .config import RunConfig
    from .specs import get_spec

    settings = {}
    for path in paths or []:
        best = dict(load_best(path))
        model = best.pop("model", None)
        if not isinstance(model, str):
            raise ConfigError(f"{path} names no model; give the best.json of a tsattn tune search")
        if models is not None and model not in models:
            raise ConfigError(f"--tuned {path} is a search of {model}, which is not compared here "
                              f"({', '.join(models)}); add {model} to --models or leave the file out")
        for key, value in best.items():
            if key in ("horizon", "dataset", "csv", "column", "date_column", "id_column", "seed"):
                continue  # the comparison's data, horizon and seeds are its own (a tuned seed would make every
                # seed of the comparison the same fit)
            if models is not None and key not in RunConfig.fields() and key not in get_spec(model).params:
                raise ConfigError(f"--tuned {path}: {model} has no setting or parameter {key!r} (was the file "
                                  "edited?); remove it from the file")
            settings[f"{model}.{key}"] = value
    return settings


__all__ = ["tune", "search_space", "read_space", "TuneResult", "load_best", "trials_table", "tuned_settings"]

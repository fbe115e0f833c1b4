"""Comparison runs (the experiment): every chosen model on every chosen dataset with several seeds, one shared
harness, and the resumable store of their records. Tables, the verdict, figures and the report are
:mod:`tsattn.report`'s.

    results = tsattn.compare(models=["simple-rnn", "attention-rnn"], datasets=["sunspots"], seeds=[0, 1, 2],
                             out="reports/sunspots")

Writes results.csv (one row per dataset x model x seed, plus the baselines), summary.csv (mean and std
over seeds, rank on test RMSE, ratio to naive), report.md / report.html with plots and a plain-language
verdict, and comparison.json (the configuration, to rerun it). Each finished run is saved at once
(runs/*.json, atomically), so rerunning with the same --out resumes where it stopped.
"""

from __future__ import annotations

import json
import sys
import time
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .checks import SEED_MAX
from .errors import ConfigError, TrainingError, TsattnError
from .covariates import KINDS as COVARIATE_KINDS
from .io import atomic_file, code_digest, metric_label, number_text, write_json
from .report import (is_complete_record, record_headline, results_table, summarise, tested_on_text,
                     write_report)
from .verdicts import WITHOUT_COVARIATES, comparison_verdict, count_test_zeros, test_part_text

SPEC_FILE = "comparison.json"
COVARIATE_SETTINGS = COVARIATE_KINDS  # the settings a run without covariates leaves out


@dataclass
class SeriesSource:
    """A dataset of the comparison: a registered dataset, a CSV column, or data given in Python (``digest``: a hash
    of its content, so that a resumed comparison holds the same data)."""

    name: str
    dataset: str | None = None
    options: dict = field(default_factory=dict)
    csv: str | None = None
    column: str | None = None
    date_column: str | None = None
    id_column: str | None = None
    digest: str | None = None


@dataclass
class ComparisonSpec:
    models: list[str]
    sources: list[SeriesSource]
    seeds: list[int]
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        sources = [{k: v for k, v in asdict(s).items() if k != "digest" or v is not None}  # a file's: no digest
                   for s in self.sources]
        return {"models": self.models, "sources": sources, "seeds": self.seeds, "settings": self.settings}

    @property
    def with_covariates(self) -> bool:
        """Whether the runs take covariates: each network then also runs without them (its twin), so the report
        answers "does this covariate help?" with the same seeds and data."""
        return any(self.settings.get(key) for key in COVARIATE_SETTINGS)

    def run_models(self) -> list[str]:
        """The models run: the ones named, each followed by its twin without covariates when covariates are given."""
        if not self.with_covariates:
            return list(self.models)
        return [label for model in self.models for label in (model, model + WITHOUT_COVARIATES)]

    def run_keys(self) -> list[tuple[str, str, int]]:
        return [(source.name, model, seed) for source in self.sources for model in self.run_models()
                for seed in self.seeds]

    def source(self, name: str) -> SeriesSource:
        return next(s for s in self.sources if s.name == name)


# ----------------------------------------------------------------------------------------------------
# Specification and validation
# ----------------------------------------------------------------------------------------------------
def _split_settings(models: list[str], settings: dict) -> dict[str, dict]:
    """Per-model overrides from settings: run settings apply to all; `param` to the models that take it;
    `model-name.param` to one model; `model.param` like `param`."""
    from .config import RunConfig
    from .specs import get_spec

    per_model = {model: {} for model in models}
    for key, value in settings.items():
        target, _, name = key.rpartition(".")
        if target and target != "model":
            if target not in per_model:
                raise ConfigError(f"--set {key}: {target!r} is not one of the compared models ({', '.join(models)})")
            if name in RunConfig.fields() and name not in get_spec(target).params:  # one model's run setting (tuned)
                per_model[target][name] = value
                continue
            if name not in get_spec(target).params:
                raise ConfigError(f"--set {key}: {target} has no parameter {name!r}; it takes: "
                                  f"{', '.join(sorted(get_spec(target).params))}")
            per_model[target][f"model.{name}"] = value
            continue
        name = key if not target else name
        if name in RunConfig.fields() and not target:
            for model in models:
                per_model[model][name] = value
            continue
        takers = [m for m in models if name in get_spec(m).params]
        if not takers:
            raise ConfigError(f"unknown setting {key!r}: no compared model takes it and it is not a run setting "
                              f"({', '.join(RunConfig.fields())})")
        for model in takers:
            per_model[model][f"model.{name}"] = value
    return per_model


def data_digest(data) -> str:
    """A hash of data given in Python (a frame, a Series, an array or a dict of them, nested): its values, labels and
    column names."""
    import hashlib

    digest = hashlib.sha256()

    def feed(key: str, part) -> None:
        if isinstance(part, dict):
            for name, value in sorted(part.items(), key=lambda item: str(item[0])):
                feed(f"{key}/{name}", value)
            return
        part = part if isinstance(part, (pd.DataFrame, pd.Series)) else pd.Series(np.asarray(part))
        labels = list(part.columns) if isinstance(part, pd.DataFrame) else [part.name]
        digest.update(repr((key, type(part).__name__, [str(c) for c in labels], str(part.index.dtype))).encode())
        digest.update(pd.util.hash_pandas_object(part, index=True).to_numpy().tobytes())

    feed("", data)
    return digest.hexdigest()[:16]


def given_data(data, id_column: str, time_column: str, value_column: str, static_df=None) -> dict:
    """compare's ``data`` as {name: (the data, its SeriesSource)}: one frame / Series (named after the Series, else
    "data") or a dict of them by name; ``static_df`` (static features of their series) enters each one's hash."""
    from .panel import ID_COLUMN, TIME_COLUMN, VALUE_COLUMN

    if data is None:
        return {}
    if isinstance(data, (str, bytes, Path)):
        raise ConfigError(f"data takes pandas data (a long frame, a Series or a dict of them), not a file name; got "
                          f"{str(data)!r}: for a CSV file pass csv=[{{\"path\": {str(data)!r}}}] (read as the CLI's "
                          "--csv reads it; \"column\", \"date_column\", \"id_column\" where the file needs them)")
    if isinstance(data, dict) and data and all(isinstance(v, (pd.DataFrame, pd.Series)) for v in data.values()) \
            and not all(isinstance(v, pd.Series) for v in data.values()):
        entries = {str(name): part for name, part in data.items()}  # several datasets, each a frame
    else:  # one dataset: a frame, a Series or a dict of Series (a panel)
        name = data.name if isinstance(data, pd.Series) and data.name is not None else "data"
        entries = {str(name): data}
    names = {"column": value_column, "date_column": time_column, "id_column": id_column}
    defaults = {"column": VALUE_COLUMN, "date_column": TIME_COLUMN, "id_column": ID_COLUMN}
    kept = {key: value for key, value in names.items() if value != defaults[key]}  # the data's own names only
    if static_df is not None and not isinstance(static_df, pd.DataFrame):
        raise ConfigError(f"static_df must be a DataFrame with one row per series; got {type(static_df).__name__}")
    extra = {"static": static_df} if static_df is not None else {}
    return {name: (part, SeriesSource(name, digest=data_digest({"data": part, **extra}), **kept))
            for name, part in entries.items()}


def build_spec(models=None, datasets=None, seeds=(0, 1, 2), csv: list[dict] | None = None, window=None,
               horizon=None, epochs=None, settings: dict | None = None, given: list | None = None) -> ComparisonSpec:
    """Validate the comparison's choices (empty lists, unknown names, duplicate seeds, unknown settings);
    ``given``: the SeriesSources of data given in Python."""
    from .data import DATASETS
    from .specs import list_models

    models = list_models() if models is None else list(models)
    if not models:
        raise ConfigError("no models to compare; name at least one of " + ", ".join(list_models()))
    unknown = [m for m in models if m not in (*list_models(), "auto")]
    from .baselines import BASELINES

    baselines = [m for m in unknown if m in BASELINES]
    if baselines:  # a comparison scores the baselines beside every network: they are not its models
        kind = "is a baseline, not a network" if len(baselines) == 1 else "are baselines, not networks"
        raise ConfigError(f"{', '.join(baselines)} {kind} to compare: every comparison scores "
                          "naive, seasonal-naive and linear beside each network, and the statistical methods named "
                          "by baselines (CLI --baselines theta,dynamic-theta,ets,arima); --models takes "
                          f"{', '.join(list_models())}, auto")
    if unknown:
        raise ConfigError(f"unknown model(s) {', '.join(unknown)}; available: {', '.join(list_models())}, auto")
    if len(set(models)) != len(models):
        raise ConfigError(f"models are listed twice: {', '.join(models)}")
    sources = []
    if datasets is None and not csv and not given:
        datasets = ["sunspots"]
    for entry in datasets or []:
        name, options = (entry, {}) if isinstance(entry, str) else (entry["name"], dict(entry.get("options", {})))
        if name not in DATASETS:
            raise ConfigError(f"unknown dataset {name!r}; available: {', '.join(sorted(DATASETS))}")
        label = name if not options else name + "(" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"
        sources.append(SeriesSource(label, dataset=name, options=options))
    for entry in csv or []:
        path = Path(entry["path"])
        label = entry.get("name") or (f"{path.stem}:{entry['column']}" if entry.get("column") else path.stem)
        sources.append(SeriesSource(label, csv=str(path), column=entry.get("column"),
                                    date_column=entry.get("date_column"), id_column=entry.get("id_column")))
    sources += list(given or [])
    if not sources:
        raise ConfigError("no datasets to compare; name at least one (e.g. sunspots) or give --csv")
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ConfigError(f"datasets are listed twice: {', '.join(names)}")
    seeds = list(seeds)
    if not seeds:
        raise ConfigError("no seeds; give at least one, e.g. --seeds 0,1,2")
    if any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= SEED_MAX for s in seeds):
        raise ConfigError(f"seeds must be integers in 0..{SEED_MAX}; got {seeds}")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"duplicate seeds {seeds}: each seed must appear once")
    merged = dict(settings or {})
    for key, value in (("window", window), ("horizon", horizon), ("epochs", epochs)):
        if value is not None:
            merged[key] = value
    _split_settings(models, merged)  # refuse unknown keys now
    spec = ComparisonSpec(models, sources, seeds, merged)
    from .config import check_config

    for model in models:  # refuse bad values now, not after an hour of runs
        for seed in seeds:
            check_config(_run_config(spec, sources[0], model, seed))
    return spec


def load_grid(path: str | Path) -> dict:
    """Read a TOML grid: models, datasets, seeds, window, horizon, epochs, [set] and [[csv]] entries."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from .data import read_settings_text

    path = Path(path)
    try:
        grid = tomllib.loads(read_settings_text(path, "--config file"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {path} does not parse as TOML ({str(exc).splitlines()[0]}); fix the file") from None
    except TsattnError as exc:
        raise ConfigError(str(exc)) from None
    if not grid:  # an empty file (or only comments) is most likely the wrong file, not a grid of defaults
        raise ConfigError(f"--config {path} holds no settings; give a TOML grid (e.g. models = [\"nbeats\"]) or "
                          "leave --config out")
    unknown = sorted(set(grid) - set(GRID_KEYS))
    if unknown:
        raise ConfigError(f"--config {path} has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(GRID_KEYS))}")
    for key, (check, expected) in GRID_KEYS.items():
        if key in grid and not check(grid[key]):
            raise ConfigError(f"--config {path}: {key} must be {expected}; got {grid[key]!r}")
    return grid


def _list_of(kind):
    return lambda value: isinstance(value, list) and all(isinstance(v, kind) and not isinstance(v, bool) for v in value)


def _dataset_entry(value) -> bool:
    return isinstance(value, str) or (isinstance(value, dict) and isinstance(value.get("name"), str)
                                      and isinstance(value.get("options", {}), dict))


GRID_KEYS = {
    "models": (_list_of(str), "a list of model names, e.g. [\"simple-rnn\", \"transformer\"]"),
    "datasets": (lambda v: isinstance(v, list) and all(_dataset_entry(d) for d in v),
                 "a list of dataset names (or {name, options} tables)"),
    "seeds": (_list_of(int), "a list of integers, e.g. [0, 1, 2]"),
    "window": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "horizon": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "epochs": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "set": (lambda v: isinstance(v, dict), "a table of settings ([set])"),
    "csv": (lambda v: isinstance(v, list) and all(isinstance(e, dict) and isinstance(e.get("path"), str) for e in v),
            "a list of [[csv]] tables, each with a path"),
}


# ----------------------------------------------------------------------------------------------------
# One run
# ----------------------------------------------------------------------------------------------------
def _run_config(spec: ComparisonSpec, source: SeriesSource, model: str, seed: int):
    from .config import RunConfig

    plain = model.endswith(WITHOUT_COVARIATES)
    model = model[:-len(WITHOUT_COVARIATES)] if plain else model
    overrides = _split_settings(spec.models, spec.settings)[model]
    if plain:  # the twin: the same run without any covariate
        overrides = {key: value for key, value in overrides.items() if key not in (*COVARIATE_SETTINGS, "static_csv")}
    base = RunConfig(model=model, seed=seed, dataset=source.dataset, dataset_options=dict(source.options),
                     csv=source.csv, column=source.column, date_column=source.date_column,
                     id_column=source.id_column)
    return base.updated(**overrides)


def _run_file(out: Path, key) -> Path:
    dataset, model, seed = key
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in dataset)
    return out / "runs" / f"{safe}__{model.replace(' ', '_')}__seed{seed}.json"


BY_SERIES_METRICS = ("smape", "mase", "rmse", "mae")  # mae: the headline where MASE is undefined everywhere


def _by_series(result) -> dict:
    """Per-series test metrics of the model and the baselines: {metric: {model key: [value per series]}}."""
    frame = result.metrics_frame
    frame = frame[(frame["part"] == "test") & frame["metric"].isin(BY_SERIES_METRICS)]
    table = frame.pivot_table(index="series", columns=["metric", "model"], values="value", sort=False, dropna=False)
    ids = list(table.index)
    return {"ids": ids, **{metric: {model: [None if v != v else round(float(v), 8) for v in table[(metric, model)]]
                                    for model in table[metric].columns} for metric in BY_SERIES_METRICS}}


def _test_record(result, test) -> dict:
    """A single series' test part as forecast.png draws it (:func:`tsattn.plots.drawn`: each window's first step, or
    a one-window part's whole path): timestamps, actual, forecasts, baselines and interval bounds."""
    from . import plots
    from .intervals import bands, level_name

    series = pd.Series(result.panel.values, index=result.panel.index)

    def drawn(values):
        return np.asarray(plots.drawn(series, test, values)[1]).tolist()

    return {"index": [str(x) for x in plots.drawn(series, test, test.predicted)[0]], "actual": drawn(test.actual),
            "predicted": drawn(test.predicted), "kind": plots.forecast_kind({"test": test}),
            "baselines": {name: drawn(values) for name, values in test.baselines.items()},
            "intervals": {level_name(level): [drawn(low), drawn(high)] for level, (low, high)
                          in bands(test.intervals.get("model") or {}, result.config.level).items()}}


TIMING = ("fit_seconds", "predict_seconds", "run_seconds")  # a record's fields that differ between two runs of it
SLOW_SCORING_SECONDS = 5.0  # a run whose scoring took this much longer than its fit says so in its line


def slow_scoring(record: dict) -> str:
    """What a comparison run's line adds when the run took much longer than its fit: scoring beside statsforecast's
    methods (AutoARIMA on hourly data, season 24: over a minute beside a fit of 2.5 s, which the line left
    unexplained)."""
    extra = record.get("run_seconds", 0.0) - record["fit_seconds"]
    if extra < SLOW_SCORING_SECONDS:
        return ""
    beside = record.get("statistical") or []
    return f" (the run {record['run_seconds']:.0f}s" + (f", scored beside statsforecast's {', '.join(beside)})"
                                                        if beside else ")")


def _record(result, key, max_windows: int = 600) -> dict:
    from .baselines import StatisticalModel
    from .models import attention_per_lag, patches_layer, read_attention
    from .selection import describe_choice

    dataset, model, seed = key
    test = result.forecasts.get("test")
    single = result.panel.n_series == 1
    record = {
        "dataset": dataset, "model": model, "seed": seed,
        "code": code_digest(),  # the code that made it: a resumed comparison runs it again under other code
        "config": result.config.to_dict(),
        "parameters": result.parameter_count, "epochs_run": result.epochs_run, "best_epoch": result.best_epoch,
        "fit_seconds": result.fit_seconds, "predict_seconds": result.predict_seconds,
        "statistical": [b.label for b in result.baselines if isinstance(b, StatisticalModel)],  # named when slow
        "metrics": result.metrics,
        "history": {column: result.history[column].tolist() for column in result.history.columns},
        "series": result.panel.n_series,
        "headline": result.data.headline,  # the metric the dataset is ranked on (MASE for a panel with zeros)
        # too short for a window in the test part: forecast, not scored
        "series_left_out": result.data.not_scored,
        # which values of each series the test figures are on (a panel's report says it: hold-out or last fifth)
        "test_part": test_part_text(getattr(result.data, "split", None)),
        # [zeros, values] of the test part: where a panel ranked on sMAPE needs MASE beside it (comparison_verdict)
        "test_zeros": None if single else list(count_test_zeros(result)),
        "by_series": None if single else _by_series(result),
        "test": _test_record(result, test) if single else None,
        "series_name": str(result.panel.name) if single and result.panel.name is not None else dataset,
        "attention": None,
        "choice": None if result.state.choice is None else describe_choice(result.state.choice),  # model auto's
    }
    weights = read_attention(result.model, result.data.X("test")[-max_windows:])
    if weights is not None:
        if patches_layer(result.model) is not None or weights[-1].ndim == 3:  # patch transformer, tft: per lag
            weights = [attention_per_lag(weights, result.model)]
        if weights[0].ndim == 2:
            labels = [str(x) for x in test.index[-max_windows:]]
            if not single:
                ids = np.asarray(result.panel.ids, dtype=object)[test.series[-max_windows:]]
                labels = [f"{sid} {label}" for sid, label in zip(ids, labels)]  # plots.time_label shortens dates
            record["attention"] = {"kind": "rnn", "weights": np.round(weights[0], 6).tolist(), "labels": labels}
        else:
            record["attention"] = {"kind": "transformer", "window_label": str(test.index[-1])[:24],
                                   "blocks": [np.round(w[-1], 6).tolist() for w in weights]}
    return record


def _spec_from_dict(spec_dict: dict) -> ComparisonSpec:
    return ComparisonSpec(spec_dict["models"], [SeriesSource(**s) for s in spec_dict["sources"]],
                          spec_dict["seeds"], spec_dict["settings"])


def _execute(shared: dict, key) -> dict:
    """One (dataset, model, seed) run -> its record: the unit of work of every engine. ``shared`` holds the
    comparison (as a dict) and every dataset loaded once by the driver, so a worker reads no files."""
    from .harness import fit

    spec = _spec_from_dict(shared["spec"])
    dataset, model, seed = key
    requested = _run_config(spec, spec.source(dataset), model, seed)
    began = time.perf_counter()
    result = fit(requested, panel=shared["panels"][dataset])
    record = {**_record(result, key), "run_seconds": time.perf_counter() - began}  # fit, scoring and all
    return {**record, "requested": requested.to_dict()}  # what identifies the run; "config" is what it ran with


def _save_record(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as temporary:
        write_json(temporary, record)


# ----------------------------------------------------------------------------------------------------
# The comparison
# ----------------------------------------------------------------------------------------------------
def _previous_spec(spec_path: Path):
    try:
        state = json.loads(spec_path.read_text(encoding="utf-8"))
        return state.get("spec") if isinstance(state, dict) else None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def _check_out(out, spec: ComparisonSpec, force: bool, inputs=()) -> tuple[Path, bool]:
    """The resolved --out and whether it must be cleared first; nothing is created or removed here.

    The same comparison resumes without --force; a different one (or leftovers of an interrupted
    --force) needs --force, and only a directory holding nothing but a comparison's files is replaced.
    """
    from .io import check_output_directory, foreign_files, resolve_output

    resolved = resolve_output(out)
    if not resolved.is_dir() or not any(resolved.iterdir()):  # new, empty, or a file (refused there)
        return check_output_directory(out, False, "compare", inputs), False
    if foreign_files(resolved, "compare"):  # refused, naming them, with or without --force
        check_output_directory(out, force, "compare", inputs)
    spec_path = resolved / SPEC_FILE
    if spec_path.is_file():
        previous = _previous_spec(spec_path)
        if previous == spec.to_dict():
            return check_output_directory(out, True, "compare", inputs), False  # resume
        if not force:
            if previous is None:
                raise ConfigError(f"--out {out}: its {SPEC_FILE} is damaged (not a comparison's JSON), so this "
                                  "comparison cannot resume from it; pass --force to start it over there or choose "
                                  "another directory")
            other = "comparison of other data (the data given differs from the one its records are of)" if \
                _without_digests(previous) == _without_digests(spec.to_dict()) else "different comparison"
            raise ConfigError(f"--out {out} holds a {other}; choose another directory or pass --force to replace it")
        return check_output_directory(out, True, "compare", inputs), True
    if not force:
        raise ConfigError(f"--out {out} holds the files of an interrupted comparison; pass --force to replace "
                          "them or choose another directory")
    return resolved, True


def _without_digests(spec: dict) -> dict:
    """A comparison's spec with the hashes of its data given in Python left out."""
    return {**spec, "sources": [{k: v for k, v in source.items() if k != "digest"}
                                for source in spec.get("sources", []) if isinstance(source, dict)]}


def _prepare_out(out: Path, spec: ComparisonSpec, clear: bool):
    """Create --out (clearing a replaced comparison first) and write comparison.json.

    A directory always describes one comparison: the old comparison.json goes first, then its results;
    a run interrupted in between leaves only files that the next --force recognises and removes.
    """
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    spec_path = out / SPEC_FILE
    if clear:
        spec_path.unlink(missing_ok=True)
        for name in ("runs", "figures"):
            shutil.rmtree(out / name, ignore_errors=True)
        for name in ("results.csv", "summary.csv", "report.md", "report.html"):
            (out / name).unlink(missing_ok=True)
    from .io import versions

    with atomic_file(spec_path) as temporary:
        write_json(temporary, {"spec": spec.to_dict(), "versions": versions(), "code": code_digest(),
                               "rerun": "tsattn compare --config <this file's spec> or tsattn.compare(**spec)"})


def _failure_record(spec: ComparisonSpec, key, error: str) -> dict:
    """What a failed run leaves in runs/: its settings and message (a resumed comparison runs it again)."""
    dataset, model, seed = key
    return {"dataset": dataset, "model": model, "seed": seed,
            "config": _run_config(spec, spec.source(dataset), model, seed).to_dict(), "failed": error}


def _load_sources(spec: ComparisonSpec, given: dict, static_df=None) -> dict:
    """Every dataset of the comparison, loaded once (bad data fails before --out is created): {name: Panel}; data
    given in Python (``given``: {name: data}) is read as a fit reads it. Runs get these panels (workers and cluster
    nodes never need the files)."""
    from .config import load_panel, resolve

    panels = {}
    for source in spec.sources:
        config = _run_config(spec, source, spec.models[0], spec.seeds[0])
        panels[source.name] = resolve(config, given[source.name], static_df)[1] if source.name in given else \
            load_panel(config)
    return panels


def _load_done(out: Path, spec: ComparisonSpec) -> tuple[dict, int]:
    """The finished runs' records in ``out`` that this comparison can keep, and how many finished runs it cannot
    because other tsattn code made them (another version or edited code: run again, so that one report never mixes
    the figures of two codes). Damaged, failed and differently-configured records are run again too."""
    done, other_code = {}, 0
    for key in spec.run_keys():
        path = _run_file(out, key)
        if path.exists():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError, UnicodeDecodeError):
                continue  # a damaged record is simply run again
            if isinstance(record, dict) and is_complete_record(record) and \
                    record.get("requested", record.get("config")) == \
                    _run_config(spec, spec.source(key[0]), key[1], key[2]).to_dict():
                if record.get("code") == code_digest():
                    done[key] = record
                else:
                    other_code += 1
    return done, other_code


def compare(models=None, datasets=None, seeds=(0, 1, 2), csv: list[dict] | None = None, window=None,
            horizon=None, epochs=None, settings: dict | None = None, out: str | Path | None = None,
            jobs: int = 1, force: bool = False, echo=None, engine: str = "local", address: str | None = None,
            cpus_per_run: int = 1, data=None, id_column: str = "unique_id", time_column: str = "ds",
            value_column: str = "y", static_df=None) -> pd.DataFrame:
    """Train every model on every dataset with every seed and write the report.

    Args:
        models: registered model names (default: all). datasets: registered dataset names (default:
            sunspots unless ``csv`` is given). seeds: distinct seeds (default 0, 1, 2).
        csv: user series, each ``{"path": ..., "column": ..., "date_column": ..., "name": ...}``.
        data: your data in Python, as ``Forecaster.fit`` takes it: a long frame (``id_column``, ``time_column``,
            ``value_column`` and any covariate columns the settings name), a Series or a dict of Series, named
            "data" (a Series: its name) in the report; or a dict of such frames by name, each a dataset. A resumed
            comparison (``out``) checks it holds the same data (a hash of it is in comparison.json). ``static_df``:
            the static features (``stat_exog``) of its series, keyed by ``id_column`` (or ``unique_id``), as in fit.
        window, horizon, epochs: shortcuts for settings.
        settings: run settings for all runs, model parameters for the models that take them, or
            ``"model-name.param"`` for one model.
        out: the report directory (resumable); None keeps everything in memory.
        jobs: local engine: runs in parallel processes (each with cores / jobs threads).
        force: replace an --out that holds a different comparison.
        echo: a function receiving one progress line per run (default: print to stderr).
        engine: "local" (this machine) or "ray" (every run a Ray task; ``pip install 'tsattn[ray]'``).
        address: ray engine: None starts a local Ray instance for the run; "auto" or "HOST:PORT" joins a
            running cluster.
        cpus_per_run: ray engine: CPUs (and TensorFlow threads) each run asks for.

    Returns:
        The results table (one row per dataset x model x seed, plus baseline rows). Runs that failed for
        their own reasons (bad settings, a non-finite loss) are left out of it and listed with their
        messages in ``results.attrs["failures"]`` and the report; the others still run.
    """
    from .engine import get_engine

    if static_df is not None and data is None:
        raise ConfigError("static_df is for data given in Python (data=...); for datasets and CSV files name a "
                          "static CSV with settings={\"static_csv\": PATH} (CLI --static-csv)")
    given = given_data(data, id_column, time_column, value_column, static_df)
    spec = build_spec(models, datasets, seeds, csv, window, horizon, epochs, settings,
                      [source for _, source in given.values()])
    echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    runner = get_engine(engine, jobs=jobs, address=address, cpus=cpus_per_run)
    records: dict = {}
    failures: dict = {}
    if out is not None:
        out, clear = _check_out(out, spec, force, inputs=[source.csv for source in spec.sources])
    panels = _load_sources(spec, {name: part for name, (part, _) in given.items()}, static_df)  # before any writing
    runner.check()  # an unreachable cluster too, before anything is written
    if out is not None:
        _prepare_out(out, spec, clear)
        records, other_code = _load_done(out, spec)
        if records:
            echo(f"resuming: {len(records)} of {len(spec.run_keys())} runs already done in {out}")
        if other_code:
            echo(f"running again {other_code} finished run(s) in {out} that other tsattn code made (another version, "
                 "or code edited since), so the report holds this code's figures only")
    pending = [key for key in spec.run_keys() if key not in records]
    total, started = len(spec.run_keys()), time.perf_counter()
    if pending and not runner.in_process:
        echo(f"running {len(pending)} runs on {runner.describe()}")

    def report(key, outcome):
        if outcome.ok:
            records[key] = outcome.value
        else:
            failures[key] = outcome.error
        finished = sum(1 for k in pending if k in records or k in failures)
        elapsed = time.perf_counter() - started
        eta = elapsed / finished * (len(pending) - finished)
        where = f"[{len(records) + len(failures)}/{total}] {key[0]} {key[1]} seed {key[2]}"
        if not outcome.ok:
            echo(f"{where}: FAILED: {outcome.error}; elapsed {elapsed:.0f}s, ETA {eta:.0f}s")
            return finished, eta
        record = outcome.value
        test = record["metrics"]["test"]
        metric = record_headline(record)
        label = f"test {metric_label(metric)}"
        echo(f"{where}: {label} {number_text(test['model'][metric])} (naive {number_text(test['naive'][metric])}), "
             f"{record['epochs_run']} epochs, {record['fit_seconds']:.1f}s{slow_scoring(record)}; elapsed "
             f"{elapsed:.0f}s, ETA {eta:.0f}s")
        return finished, eta  # for the heartbeat's stage

    from .progress import Heartbeat

    with Heartbeat(echo, "compare", total=len(pending)) as beat:  # between run lines, one at least every 10 s
        echo = beat.echo  # (on a terminal: a bar of the runs done, the run lines above it)
        beat.stage(f"{len(pending)} run(s) to do, the first running ({pending[0][0]} {pending[0][1]} seed "
                   f"{pending[0][2]})" if pending else "nothing to run")
        for key, outcome in runner.map(_execute, {"spec": spec.to_dict(), "panels": panels}, pending):
            if out is not None:  # written as each run finishes: an interrupted comparison resumes from here
                _save_record(_run_file(out, key), outcome.value if outcome.ok else _failure_record(spec, key,
                                                                                                   outcome.error))
            finished, eta = report(key, outcome)
            beat.advance()
            if finished < len(pending):
                beat.stage(f"{finished} of {len(pending)} runs done, the next running (ETA ~{eta:.0f}s)")
    if not records:
        first = next(iter(failures.items()))
        raise TrainingError(f"every run of the comparison failed; the first, {' '.join(map(str, first[0]))}: "
                            f"{first[1]}")
    ordered = [records[key] for key in spec.run_keys() if key in records]
    failed = [{"dataset": key[0], "model": key[1], "seed": key[2], "error": failures[key]}
              for key in spec.run_keys() if key in failures]
    results = results_table(ordered)
    summary = summarise(results)
    if out is not None:
        with atomic_file(out / "results.csv") as temporary:
            results.to_csv(temporary, index=False)
        with atomic_file(out / "summary.csv") as temporary:
            summary.to_csv(temporary, index=False)
        write_report(out, spec, ordered, results, summary, failed)
    results.attrs["summary"] = summary.to_dict("records")  # records: a frame in attrs broke printing (backtesting)
    results.attrs["failures"] = failed
    results.attrs["verdict"] = {dataset: comparison_verdict(results, summary, dataset, ordered)
                                for dataset in dict.fromkeys(results["dataset"])}
    results.attrs["tested_on"] = {dataset: tested_on_text(ordered, dataset)  # ", tested on the last 8 values of each"
                                  for dataset in dict.fromkeys(results["dataset"])}
    return results


class _CallableModule(types.ModuleType):
    """``tsattn.compare`` is both this module and, lazily, the function :func:`compare` (``tsattn.compare(...)``).
    Importing the module (``tsattn.tune`` does) sets the package's attribute to the module, so the module itself
    forwards a call to the function: ``tsattn.compare(...)`` works whatever was imported first."""

    def __call__(self, *args, **kwargs):
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

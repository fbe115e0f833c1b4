"""Comparison runs: every chosen model on every chosen dataset with several seeds, one shared harness.

    results = tsattn.compare(models=["simple-rnn", "attention-rnn"], datasets=["sunspots"], seeds=[0, 1, 2],
                             out="reports/sunspots")

Writes results.csv (one row per dataset x model x seed, plus the baselines), summary.csv (mean and std
over seeds, rank on test RMSE, ratio to naive), report.md / report.html with plots and a plain-language
verdict, and comparison.json (the configuration, to rerun it). Each finished run is saved at once
(runs/*.json, atomically), so rerunning with the same --out resumes where it stopped.
"""

from __future__ import annotations

import base64
import html
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .baselines import STATISTICAL_LABELS, baseline_labels
from .checks import SEED_MAX
from .errors import ConfigError, TrainingError, TsattnError
from .io import atomic_file, write_json
from .metrics import interval_metric_names, is_interval_metric, paired_comparison

BASELINE_ROWS = baseline_labels()  # key -> row label (naive, seasonal naive, linear, then the statistical ones)
METRICS = ("rmse", "mae", "mse", "mape", "smape", "mase")
SPEC_FILE = "comparison.json"


@dataclass
class SeriesSource:
    """A dataset of the comparison: a registered dataset or a CSV column."""

    name: str
    dataset: str | None = None
    options: dict = field(default_factory=dict)
    csv: str | None = None
    column: str | None = None
    date_column: str | None = None
    id_column: str | None = None


@dataclass
class ComparisonSpec:
    models: list[str]
    sources: list[SeriesSource]
    seeds: list[int]
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"models": self.models, "sources": [asdict(s) for s in self.sources], "seeds": self.seeds,
                "settings": self.settings}

    def run_keys(self) -> list[tuple[str, str, int]]:
        return [(source.name, model, seed) for source in self.sources for model in self.models for seed in self.seeds]

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


def build_spec(models=None, datasets=None, seeds=(0, 1, 2), csv: list[dict] | None = None, window=None,
               horizon=None, epochs=None, settings: dict | None = None) -> ComparisonSpec:
    """Validate the comparison's choices (empty lists, unknown names, duplicate seeds, unknown settings)."""
    from .data import DATASETS
    from .specs import list_models

    models = list_models() if models is None else list(models)
    if not models:
        raise ConfigError("no models to compare; name at least one of " + ", ".join(list_models()))
    unknown = [m for m in models if m not in list_models()]
    if unknown:
        raise ConfigError(f"unknown model(s) {', '.join(unknown)}; available: {', '.join(list_models())}")
    if len(set(models)) != len(models):
        raise ConfigError(f"models are listed twice: {', '.join(models)}")
    sources = []
    if datasets is None and not csv:
        datasets = ["sunspots"]
    for entry in datasets or []:
        name, options = (entry, {}) if isinstance(entry, str) else (entry["name"], dict(entry.get("options", {})))
        if name not in DATASETS:
            raise ConfigError(f"unknown dataset {name!r}; available: {', '.join(sorted(DATASETS))}")
        label = name if not options else name + "(" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"
        sources.append(SeriesSource(label, dataset=name, options=options))
    for entry in csv or []:
        path = Path(entry["path"])
        label = entry.get("name") or f"{path.stem}:{entry.get('column')}"
        sources.append(SeriesSource(label, csv=str(path), column=entry.get("column"),
                                    date_column=entry.get("date_column"), id_column=entry.get("id_column")))
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
    from .data import regular_file

    path = Path(path)
    try:
        regular_file(path, "--config file")
        grid = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {path} does not parse as TOML ({str(exc).splitlines()[0]}); fix the file") from None
    except TsattnError as exc:
        raise ConfigError(str(exc)) from None
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

    overrides = _split_settings(spec.models, spec.settings)[model]
    base = RunConfig(model=model, seed=seed, dataset=source.dataset, dataset_options=dict(source.options),
                     csv=source.csv, column=source.column, date_column=source.date_column,
                     id_column=source.id_column)
    return base.updated(**overrides)


def _run_file(out: Path, key) -> Path:
    dataset, model, seed = key
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in dataset)
    return out / "runs" / f"{safe}__{model}__seed{seed}.json"


BY_SERIES_METRICS = ("smape", "mase", "rmse")


def _by_series(result) -> dict:
    """Per-series test metrics of the model and the baselines: {metric: {model key: [value per series]}}."""
    frame = result.metrics_frame
    frame = frame[(frame["part"] == "test") & frame["metric"].isin(BY_SERIES_METRICS)]
    table = frame.pivot_table(index="series", columns=["metric", "model"], values="value", sort=False, dropna=False)
    ids = list(table.index)
    return {"ids": ids, **{metric: {model: [None if v != v else round(float(v), 8) for v in table[(metric, model)]]
                                    for model in table[metric].columns} for metric in BY_SERIES_METRICS}}


def _record(result, key, max_windows: int = 600) -> dict:
    from .intervals import bands, level_name
    from .models import attention_model

    dataset, model, seed = key
    test = result.forecasts.get("test")
    single = result.panel.n_series == 1
    record = {
        "dataset": dataset, "model": model, "seed": seed,
        "config": result.config.to_dict(),
        "parameters": result.parameter_count, "epochs_run": result.epochs_run, "best_epoch": result.best_epoch,
        "fit_seconds": result.fit_seconds, "predict_seconds": result.predict_seconds,
        "metrics": result.metrics,
        "history": {column: result.history[column].tolist() for column in result.history.columns},
        "series": result.panel.n_series,
        "by_series": None if single else _by_series(result),
        "test": None if not single else {
            "index": [str(x) for x in test.index], "actual": test.actual[:, 0].tolist(),
            "predicted": test.predicted[:, 0].tolist(),
            "baselines": {name: values[:, 0].tolist() for name, values in test.baselines.items()},
            "intervals": {level_name(level): [low[:, 0].tolist(), high[:, 0].tolist()] for level, (low, high)
                          in bands(test.intervals.get("model") or {}, result.config.level).items()}},
        "series_name": str(result.panel.name) if single and result.panel.name is not None else dataset,
        "attention": None,
    }
    attention = attention_model(result.model)
    if attention is not None:
        X = result.data.X("test")[-max_windows:]
        weights = attention.predict(X, verbose=0, batch_size=1024)
        weights = [np.asarray(w) for w in (weights if isinstance(weights, list) else [weights])]
        if weights[0].ndim == 2:
            labels = [str(x) for x in test.index[-max_windows:]]
            if not single:
                ids = np.asarray(result.panel.ids, dtype=object)[test.series[-max_windows:]]
                labels = [f"{sid} {label[:10]}" for sid, label in zip(ids, labels)]
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
    result = fit(_run_config(spec, spec.source(dataset), model, seed), panel=shared["panels"][dataset])
    return _record(result, key)


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
        if _previous_spec(spec_path) == spec.to_dict():
            return check_output_directory(out, True, "compare", inputs), False  # resume
        if not force:
            raise ConfigError(f"--out {out} holds a different comparison; choose another directory or pass "
                              "--force to replace it")
        return check_output_directory(out, True, "compare", inputs), True
    if not force:
        raise ConfigError(f"--out {out} holds the files of an interrupted comparison; pass --force to replace "
                          "them or choose another directory")
    return resolved, True


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
        write_json(temporary, {"spec": spec.to_dict(), "versions": versions(),
                               "rerun": "tsattn compare --config <this file's spec> or tsattn.compare(**spec)"})


RECORD_KEYS = {"dataset": str, "model": str, "seed": int, "config": dict, "parameters": int, "epochs_run": int,
               "fit_seconds": (int, float), "predict_seconds": (int, float), "metrics": dict, "history": dict}


def _failure_record(spec: ComparisonSpec, key, error: str) -> dict:
    """What a failed run leaves in runs/: its settings and message (a resumed comparison runs it again)."""
    dataset, model, seed = key
    return {"dataset": dataset, "model": model, "seed": seed,
            "config": _run_config(spec, spec.source(dataset), model, seed).to_dict(), "failed": error}


def _complete(record: dict) -> bool:
    """A run record of the right shape (a valid JSON file of another shape is run again, not trusted)."""
    if not all(isinstance(record.get(key), kind) for key, kind in RECORD_KEYS.items()):
        return False
    test = record["metrics"].get("test")
    return isinstance(test, dict) and isinstance(test.get("model"), dict) and isinstance(test.get("naive"), dict)


def _load_sources(spec: ComparisonSpec) -> dict:
    """Every dataset of the comparison, loaded once (bad data fails before --out is created): {name: Panel}.
    Runs get these panels (workers and cluster nodes never need the files)."""
    from .config import load_panel

    return {source.name: load_panel(_run_config(spec, source, spec.models[0], spec.seeds[0]))
            for source in spec.sources}


def _load_done(out: Path, spec: ComparisonSpec) -> dict:
    done = {}
    for key in spec.run_keys():
        path = _run_file(out, key)
        if path.exists():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError, UnicodeDecodeError):
                continue  # a damaged record is simply run again
            if isinstance(record, dict) and _complete(record) and \
                    record.get("config") == _run_config(spec, spec.source(key[0]), key[1], key[2]).to_dict():
                done[key] = record
    return done


def compare(models=None, datasets=None, seeds=(0, 1, 2), csv: list[dict] | None = None, window=None,
            horizon=None, epochs=None, settings: dict | None = None, out: str | Path | None = None,
            jobs: int = 1, force: bool = False, echo=None, engine: str = "local", address: str | None = None,
            cpus_per_run: int = 1) -> pd.DataFrame:
    """Train every model on every dataset with every seed and write the report.

    Args:
        models: registered model names (default: all). datasets: registered dataset names (default:
            sunspots unless ``csv`` is given). seeds: distinct seeds (default 0, 1, 2).
        csv: user series, each ``{"path": ..., "column": ..., "date_column": ..., "name": ...}``.
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

    spec = build_spec(models, datasets, seeds, csv, window, horizon, epochs, settings)
    echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    runner = get_engine(engine, jobs=jobs, address=address, cpus=cpus_per_run)
    records: dict = {}
    failures: dict = {}
    if out is not None:
        out, clear = _check_out(out, spec, force, inputs=[source.csv for source in spec.sources])
    panels = _load_sources(spec)  # every dataset loads before anything is written
    if out is not None:
        _prepare_out(out, spec, clear)
        records = _load_done(out, spec)
        if records:
            echo(f"resuming: {len(records)} of {len(spec.run_keys())} runs already done in {out}")
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
            return
        record = outcome.value
        test = record["metrics"]["test"]
        metric = "rmse" if record.get("series", 1) == 1 else "smape"
        label = "test RMSE" if metric == "rmse" else "test sMAPE"
        echo(f"{where}: {label} {test['model'][metric]:.4g} (naive {test['naive'][metric]:.4g}), "
             f"{record['epochs_run']} epochs, {record['fit_seconds']:.1f}s; elapsed {elapsed:.0f}s, ETA {eta:.0f}s")

    for key, outcome in runner.map(_execute, {"spec": spec.to_dict(), "panels": panels}, pending):
        if out is not None:  # written as each run finishes: an interrupted comparison resumes from here
            _save_record(_run_file(out, key), outcome.value if outcome.ok else _failure_record(spec, key,
                                                                                               outcome.error))
        report(key, outcome)
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
    results.attrs["summary"] = summary
    results.attrs["failures"] = failed
    results.attrs["verdict"] = {dataset: verdict(results, summary, dataset, ordered)
                                for dataset in dict.fromkeys(results["dataset"])}
    return results


# ----------------------------------------------------------------------------------------------------
# Tables
# ----------------------------------------------------------------------------------------------------
def results_table(records: list[dict]) -> pd.DataFrame:
    """One row per run, plus one row per dataset for each baseline (same targets, no seed)."""
    rows = []
    baselines_done = set()
    for record in records:
        row = {"dataset": record["dataset"], "model": record["model"], "seed": record["seed"],
               "series": record.get("series", 1), "parameters": record["parameters"], "epochs_run": record["epochs_run"],
               "fit_seconds": round(record["fit_seconds"], 3), "predict_seconds": round(record["predict_seconds"], 4)}
        for part in ("validation", "test"):
            block = record["metrics"].get(part)
            for metric in METRICS:
                row[f"{part}_{metric}"] = block["model"][metric] if block else None
            for metric in ("mse", "rmse"):
                row[f"{part}_scaled_{metric}"] = block["scaled"][metric] if block else None
        for metric in interval_metrics(record):
            row[f"test_{metric}"] = (record["metrics"].get("test") or {}).get("model", {}).get(metric)
        rows.append(row)
        if record["dataset"] not in baselines_done:
            baselines_done.add(record["dataset"])
            for key, label in BASELINE_ROWS.items():
                if key not in (record["metrics"].get("test") or {}):
                    continue  # a statistical baseline this comparison did not ask for
                base = {"dataset": record["dataset"], "model": label, "seed": None,
                        "series": record.get("series", 1), "parameters": 0,
                        "epochs_run": 0, "fit_seconds": 0.0, "predict_seconds": 0.0}
                for part in ("validation", "test"):
                    block = record["metrics"].get(part)
                    for metric in METRICS:
                        base[f"{part}_{metric}"] = block.get(key, {}).get(metric) if block else None
                    for metric in ("mse", "rmse"):
                        base[f"{part}_scaled_{metric}"] = None
                for metric in interval_metrics(record):
                    base[f"test_{metric}"] = (record["metrics"].get("test") or {}).get(key, {}).get(metric)
                rows.append(base)
    return pd.DataFrame(rows)


def interval_metrics(record: dict) -> list[str]:
    """The interval metrics a run scored (coverage, width and MSIS per level, scaled CRPS), or none."""
    return interval_metric_names(record["config"].get("level"))


def headline(series: int) -> str:
    """The metric a dataset is ranked on: test RMSE for one series (its own units), test sMAPE (mean over
    series, scale-free) for a panel, where RMSE would add up series of different scales."""
    return "test_rmse" if series <= 1 else "test_smape"


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds per (dataset, model); rank on the headline metric (mean test
    RMSE for one series, mean test sMAPE over series for a panel) and on test RMSE; ratio to naive."""
    rows = []
    for (dataset, model), group in results.groupby(["dataset", "model"], sort=False):
        series = int(group["series"].max()) if "series" in group else 1
        row = {"dataset": dataset, "model": model, "seeds": int(group["seed"].notna().sum()),
               "series": series, "headline": headline(series), "parameters": int(group["parameters"].iloc[0])}
        intervals = [c for c in group.columns if c.startswith("test_") and is_interval_metric(c[len("test_"):])]
        for column in ["test_rmse", "test_mae", "test_mase", "test_smape", "validation_rmse", "fit_seconds",
                       "epochs_run"] + intervals:
            values = pd.to_numeric(group[column], errors="coerce")
            row[f"{column}_mean"] = float(values.mean())
            row[f"{column}_std"] = float(values.std(ddof=1)) if len(values.dropna()) > 1 else 0.0
        rows.append(row)
    summary = pd.DataFrame(rows)
    summary["rank_test_rmse"] = summary.groupby("dataset")["test_rmse_mean"].rank(method="min").astype(int)
    summary["headline_mean"] = [row[f"{row['headline']}_mean"] for _, row in summary.iterrows()]
    summary["rank"] = summary.groupby("dataset")["headline_mean"].rank(method="min").astype(int)
    naive = summary[summary["model"] == "naive"].set_index("dataset")["test_rmse_mean"]
    summary["ratio_to_naive"] = summary["test_rmse_mean"] / summary["dataset"].map(naive)
    naive_headline = summary[summary["model"] == "naive"].set_index("dataset")["headline_mean"]
    summary["headline_ratio_to_naive"] = summary["headline_mean"] / summary["dataset"].map(naive_headline)
    return summary.sort_values(["dataset", "rank"], kind="stable").reset_index(drop=True)


def _series_values(records: list[dict], dataset: str, model: str, key: str, metric: str):
    """A per-series test metric of ``key`` ("model" or a baseline key) in the runs of ``model``, mean over seeds."""
    runs = [r for r in records if r["dataset"] == dataset and r["model"] == model and r.get("by_series")]
    if not runs:
        return None
    values = pd.DataFrame([[np.nan if v is None else v for v in r["by_series"][metric][key]] for r in runs],
                          dtype=np.float64)
    return pd.Series(values.mean(axis=0).to_numpy(), index=runs[0]["by_series"]["ids"])


def _paired_over_series(records: list[dict], dataset: str, model: str, other: str, metric: str = "smape"):
    """``model`` against ``other`` (another model, or a baseline key) series by series, each averaged over
    seeds: (wins, series compared, p-value of the Wilcoxon signed-rank test or None)."""
    mine = _series_values(records, dataset, model, "model", metric)
    theirs = (_series_values(records, dataset, model, other, metric) if other in BASELINE_ROWS
              else _series_values(records, dataset, other, "model", metric))
    if mine is None or theirs is None:
        return None
    return paired_comparison(mine, theirs)


def verdict(results: pd.DataFrame, summary: pd.DataFrame, dataset: str, records: list[dict] | None = None) -> list[str]:
    """Plain-language conclusions for one dataset, with the seed-to-seed spread taken into account and, for a
    panel, each model compared with the runner-up and the baselines series by series (paired)."""
    table = summary[summary["dataset"] == dataset]
    metric = table["headline"].iloc[0]
    name = {"test_rmse": "test RMSE", "test_smape": "test sMAPE (mean over series)"}[metric]
    panel = metric == "test_smape"
    neural = table[~table["model"].isin(BASELINE_ROWS.values())]
    runs = results[(results["dataset"] == dataset) & results["seed"].notna()]
    naive = float(table.loc[table["model"] == "naive", f"{metric}_mean"].iloc[0])
    linear = float(table.loc[table["model"] == "linear", f"{metric}_mean"].iloc[0])
    lines = []
    best = neural.iloc[0]
    seeds = int(best["seeds"])
    lines.append(f"Best model on {name}: **{best['model']}**, {best[f'{metric}_mean']:.4g} ± "
                 f"{best[f'{metric}_std']:.2g} (mean ± standard deviation over {seeds} seed(s)).")
    if len(neural) > 1:
        runner_up = neural.iloc[1]
        mine = runs[runs["model"] == best["model"]].set_index("seed")[metric]
        theirs = runs[runs["model"] == runner_up["model"]].set_index("seed")[metric]
        wins = int((mine < theirs.reindex(mine.index)).sum())
        low = best[f"{metric}_mean"] + best[f"{metric}_std"]
        high = runner_up[f"{metric}_mean"] - runner_up[f"{metric}_std"]
        overlap = "the mean ± std intervals overlap, so the lead is within the seed-to-seed spread" if low >= high \
            else "the mean ± std intervals do not overlap"
        lines.append(f"It beats the runner-up, {runner_up['model']} ({runner_up[f'{metric}_mean']:.4g} ± "
                     f"{runner_up[f'{metric}_std']:.2g}), on {wins} of {len(mine)} seeds; {overlap}.")
        paired = _paired_over_series(records or [], dataset, best["model"], runner_up["model"]) if panel else None
        if paired:
            won, total, p_value = paired
            test = f"Wilcoxon signed-rank p = {p_value:.2g}" if p_value is not None else "too few series for a test"
            lines.append(f"Series by series (sMAPE averaged over seeds) it is better on {won} of {total} series "
                         f"({test}).")
        if seeds < 3:
            lines.append("With fewer than 3 seeds this ranking is not reliable.")
    for _, row in neural.iterrows():
        model_runs = runs[runs["model"] == row["model"]][metric]
        beats = int((model_runs < naive).sum())
        beats_linear = int((model_runs < linear).sum())
        ratio = row["headline_ratio_to_naive"]
        line = (f"{row['model']}: beats the naive last-value forecast ({naive:.4g}) on {beats} of "
                f"{len(model_runs)} seeds (ratio {ratio:.3f}) and the linear autoregression "
                f"({linear:.4g}) on {beats_linear} of {len(model_runs)}")
        if panel:
            for key, label in (("naive", "naive"), ("seasonal_naive", "seasonal naive")):
                paired = _paired_over_series(records or [], dataset, row["model"], key)
                if paired:
                    line += f"; better than {label} on {paired[0]} of {paired[1]} series"
        lines.append(line + ".")
    if not (neural[f"{metric}_mean"] < naive).any():
        lines.append("No neural model beats the naive baseline on average here.")
    statistical = table[table["model"].isin(list(STATISTICAL_LABELS))]
    for _, row in statistical.iterrows():  # the strong baselines asked for with --baselines
        value = float(row[f"{metric}_mean"])
        better = neural[neural[f"{metric}_mean"] < value]
        verdict = (f"beaten on average by {', '.join(better['model'])}" if len(better) else
                   f"better on average than every neural model here (best {best['model']} {best[f'{metric}_mean']:.4g})")
        line = f"{row['model']} ({value:.4g}): {verdict}"
        if panel:
            key = STATISTICAL_LABELS[row["model"]]
            paired = _paired_over_series(records or [], dataset, best["model"], key)
            if paired:
                line += f"; {best['model']} is better on {paired[0]} of {paired[1]} series"
        lines.append(line + ".")
    return lines


# ----------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------
def _figures(out: Path, dataset: str, records: list[dict], summary: pd.DataFrame) -> list[tuple[str, Path]]:
    from . import plots

    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in dataset)
    figures_dir = out / "figures"
    figures_dir.mkdir(exist_ok=True)
    mine = [r for r in records if r["dataset"] == dataset]
    first_seed = mine[0]["seed"]
    table = summary[summary["dataset"] == dataset]
    naive = float(table.loc[table["model"] == "naive", "test_rmse_mean"].iloc[0])
    linear = float(table.loc[table["model"] == "linear", "test_rmse_mean"].iloc[0])
    neural = table[~table["model"].isin(BASELINE_ROWS.values())]
    metric = table["headline"].iloc[0]
    units = f"{mine[0]['series_name']} (series units)"
    if metric == "test_rmse":
        figures = [("Test RMSE by model (mean ± std over seeds; lines: baselines)", plots.plot_bars(
            list(neural["model"]), neural["test_rmse_mean"], neural["test_rmse_std"],
            figures_dir / f"{safe}_rmse.png", f"{dataset}: test RMSE over {int(neural['seeds'].max())} seed(s)",
            f"test RMSE ({units})", {"naive": naive, "linear AR": linear}))]
    else:
        reference = {label: float(table.loc[table["model"] == label, "test_smape_mean"].iloc[0])
                     for label in ("naive", "seasonal-naive", "linear")}
        figures = [("Test sMAPE by model (mean over series; mean ± std over seeds; lines: baselines)",
                    plots.plot_bars(list(neural["model"]), neural["test_smape_mean"], neural["test_smape_std"],
                                    figures_dir / f"{safe}_smape.png",
                                    f"{dataset}: test sMAPE over {int(neural['seeds'].max())} seed(s)",
                                    "test sMAPE (%), mean over series", reference))]
    if mine[0].get("test"):
        index = _parse_index(mine[0]["test"]["index"])
        actual = pd.Series(mine[0]["test"]["actual"], index=index)
        overlay = {r["model"]: pd.Series(r["test"]["predicted"], index=index) for r in mine
                   if r["seed"] == first_seed}
        overlay["naive"] = pd.Series(mine[0]["test"]["baselines"]["naive"], index=index)
        figures.append((f"Test-part one-step forecasts of every model (seed {first_seed})", plots.plot_overlay(
            actual, overlay, figures_dir / f"{safe}_forecasts.png", f"{dataset}: test part, actual and forecasts "
            f"(seed {first_seed})", units)))
    else:
        first = [r for r in mine if r["seed"] == first_seed]
        distributions = {r["model"]: [v for v in r["by_series"]["smape"]["model"] if v is not None] for r in first}
        for key, label in BASELINE_ROWS.items():
            if key in first[0]["by_series"]["smape"]:
                distributions[label] = [v for v in first[0]["by_series"]["smape"][key] if v is not None]
        figures.append((f"Per-series test sMAPE of every model and baseline (seed {first_seed})",
                        plots.plot_distribution(distributions, figures_dir / f"{safe}_smape_distribution.png",
                                                f"{dataset}: per-series test sMAPE (seed {first_seed}, "
                                                f"{mine[0]['series']} series)", "sMAPE (%)")))
    calibration = calibration_points(table)
    if calibration:
        figures.append(("Calibration: nominal against empirical coverage of the test part (mean over seeds)",
                        plots.plot_calibration(calibration, figures_dir / f"{safe}_calibration.png",
                                               f"{dataset}: interval calibration (test part)")))
        fanned = [r for r in mine if r["seed"] == first_seed and (r.get("test") or {}).get("intervals")]
        if fanned:
            best = table[~table["model"].isin(BASELINE_ROWS.values())].sort_values("rank").iloc[0]["model"]
            record = next((r for r in fanned if r["model"] == best), fanned[0])
            index = _parse_index(record["test"]["index"])
            shown = slice(-min(len(index), plots.ZOOM), None)
            actual = pd.Series(record["test"]["actual"], index=index)[shown]
            fans = {float(level): (np.asarray(low)[shown], np.asarray(high)[shown])
                    for level, (low, high) in record["test"]["intervals"].items()}
            figures.append((f"{record['model']}: last test forecasts with their intervals (seed {first_seed})",
                            plots.plot_series_forecasts([actual], [pd.Series(np.asarray(record['test']['predicted'])
                                                                             [shown], index=index[shown])],
                                                        figures_dir / f"{safe}_{record['model']}_fan.png",
                                                        f"{dataset}, {record['model']}: one-step test forecasts and "
                                                        "intervals", [fans], history_label="actual")))
    histories = {r["model"]: pd.DataFrame(r["history"], index=pd.RangeIndex(1, len(r["history"]["loss"]) + 1))
                 for r in mine if r["seed"] == first_seed}
    figures.append((f"Loss curves (seed {first_seed})", plots.plot_loss_curves(
        histories, figures_dir / f"{safe}_loss.png", f"{dataset}: loss per epoch (seed {first_seed})")))
    for record in mine:
        if record["seed"] != first_seed or not record["attention"]:
            continue
        attention = record["attention"]
        if attention["kind"] == "rnn":
            figures.append((f"{record['model']}: attention weights over the test windows (seed {first_seed})",
                            plots.plot_attention_rnn(np.asarray(attention["weights"]),
                                                     attention.get("labels") or record["test"]["index"],
                                                     figures_dir / f"{safe}_{record['model']}_attention.png",
                                                     f"{dataset}, {record['model']}: attention (test part)")))
        else:
            figures.append((f"{record['model']}: attention of each head for the last test window (seed {first_seed})",
                            plots.plot_transformer_heads([np.asarray(b) for b in attention["blocks"]],
                                                         figures_dir / f"{safe}_{record['model']}_heads.png",
                                                         f"{dataset}, {record['model']}: head maps, window "
                                                         f"forecasting {attention['window_label'][:10]}")))
    return figures


def _parse_index(labels: list[str]) -> pd.Index:
    try:
        return pd.Index([int(x) for x in labels])
    except ValueError:
        return pd.DatetimeIndex(pd.to_datetime(labels))


SUMMARY_COLUMNS = [("model", "model"), ("seeds", "seeds"), ("parameters", "parameters"),
                   ("test_rmse", "test RMSE"), ("test_mae", "test MAE"), ("test_mase", "test MASE"),
                   ("test_smape", "test sMAPE"), ("validation_rmse", "validation RMSE"),
                   ("headline_ratio_to_naive", "ratio to naive"), ("fit_seconds", "fit s"), ("rank", "rank")]


def _interval_columns(table: pd.DataFrame) -> list[str]:
    return [c[len("test_"):-len("_mean")] for c in table.columns
            if c.startswith("test_") and c.endswith("_mean") and is_interval_metric(c[len("test_"):-len("_mean")])
            and table[c].notna().any()]


def interval_table(table: pd.DataFrame) -> list[list[str]]:
    """Header and rows (text) of a dataset's interval metrics, means over seeds; empty without levels."""
    columns = _interval_columns(table)
    if not columns:
        return []
    names = {"coverage": "coverage {}%", "width": "width {}%", "msis": "MSIS {}%"}
    rows = [["model"] + ["scaled CRPS" if c == "scaled_crps" else names[c.split("-")[0]].format(c.split("-", 1)[1])
                         for c in columns]]
    for _, row in table.iterrows():
        cells = [row["model"]]
        for column in columns:
            mean, std = row[f"test_{column}_mean"], row[f"test_{column}_std"]
            cells.append("" if mean != mean else f"{mean:.4g}" + (f" ± {std:.2g}" if row["seeds"] > 1 and std == std
                                                                   else ""))
        rows.append(cells)
    return rows


def calibration_points(table: pd.DataFrame) -> dict:
    """{model: {level: mean empirical coverage}} of a dataset's summary rows."""
    points = {}
    for _, row in table.iterrows():
        found = {float(c[len("coverage-"):]): row[f"test_{c}_mean"] for c in _interval_columns(table)
                 if c.startswith("coverage-") and row[f"test_{c}_mean"] == row[f"test_{c}_mean"]}
        if found:
            points[row["model"]] = found
    return points


TRAINED_ONLY = ("seeds", "parameters", "fit_seconds")  # blank on baseline rows (no seeds, no training)


def _cells(row) -> list[str]:
    """One summary row as text: 4 significant digits, ± the seed spread at 2, blanks where nothing applies."""
    cells = []
    baseline = row["model"] in BASELINE_ROWS.values()
    for key, _ in SUMMARY_COLUMNS:
        if baseline and key in TRAINED_ONLY:
            cells.append("")
        elif f"{key}_mean" in row:
            mean, std = row[f"{key}_mean"], row[f"{key}_std"]
            cells.append("" if mean != mean else f"{mean:.4g}" + (f" ± {std:.2g}" if row["seeds"] > 1 and std == std
                                                                   else ""))
        elif key == "headline_ratio_to_naive":
            cells.append(f"{row[key]:.3f}" if row[key] == row[key] else "")
        else:
            cells.append(str(row[key]))
    return cells


def write_report(out: Path, spec: ComparisonSpec, records: list[dict], results: pd.DataFrame,
                 summary: pd.DataFrame, failures: list[dict] = ()) -> tuple[Path, Path]:
    """report.md (images in figures/) and a self-contained report.html (images inlined)."""
    from .io import versions

    md = ["# tsattn comparison report", "",
          f"Models: {', '.join(spec.models)}. Seeds: {', '.join(map(str, spec.seeds))}. "
          f"Settings: {json.dumps(spec.settings) if spec.settings else 'defaults'}. "
          f"Versions: {json.dumps(versions())}.", "",
          "Every model trains through the same harness on the same chronological split; the scaler is fit on "
          "the training part only. Baselines are scored on the same test targets: naive (last value), seasonal "
          "naive (value one season earlier) and linear (least-squares autoregression on the same window). "
          "Metrics are in the series' units; ± is the standard deviation over seeds.", ""]
    body = [f"<h1>tsattn comparison report</h1><p>{html.escape(md[2])}</p><p>{html.escape(md[4])}</p>"]
    for source in spec.sources:
        dataset = source.name
        table = summary[summary["dataset"] == dataset]
        if table.empty:  # every run on it failed: listed under "Failed runs"
            continue
        best_value = table[~table["model"].isin(BASELINE_ROWS.values())]["headline_mean"].min()
        ranked_on = {"test_rmse": "test RMSE", "test_smape": "test sMAPE, mean over series"}[table["headline"].iloc[0]]
        md += [f"## {dataset}", "", f"{int(table['series'].iloc[0])} series; ranked on {ranked_on}; ratio to naive "
               "on the same metric.", "", "| " + " | ".join(label for _, label in SUMMARY_COLUMNS) + " |",
               "|" + "---|" * len(SUMMARY_COLUMNS)]
        rows_html = []
        for _, row in table.iterrows():
            cells = _cells(row)
            is_best = row["headline_mean"] == best_value and row["model"] not in BASELINE_ROWS.values()
            md.append("| " + " | ".join(f"**{c}**" if is_best else c for c in cells) + " |")
            rows_html.append("<tr%s>%s</tr>" % (' class="best"' if is_best else "",
                                                "".join(f"<td>{html.escape(c)}</td>" for c in cells)))
        lines = verdict(results, summary, dataset, records)
        md += ["", "**Verdict.**", ""] + [f"- {line}" for line in lines] + [""]
        body.append(f"<h2>{html.escape(dataset)}</h2><p>{int(table['series'].iloc[0])} series; ranked on "
                    f"{html.escape(ranked_on)}; ratio to naive on the same metric.</p><div class='scroll'><table><thead><tr>"
                    + "".join(f"<th>{html.escape(label)}</th>" for _, label in SUMMARY_COLUMNS)
                    + "</tr></thead><tbody>" + "".join(rows_html) + "</tbody></table></div>"
                    + "<div class='verdict'><b>Verdict.</b><ul>"
                    + "".join(f"<li>{html.escape(line).replace('**', '')}</li>" for line in lines) + "</ul></div>")
        interval_rows = interval_table(table)
        if interval_rows:
            from .intervals import interval_source

            source = f"{interval_source(spec.settings.get('loss'))}, calibrated on each model's validation forecasts"
            md += [f"**Prediction intervals** (test part; networks: {source}; baselines: conformal). Coverage is "
                   "the share of test targets inside the interval (nominal: the level); MSIS is M4's scaled "
                   "interval score and scaled CRPS is approximated from the interval bounds and the forecast "
                   "(lower is better).", ""]
            md += ["| " + " | ".join(interval_rows[0]) + " |", "|" + "---|" * len(interval_rows[0])]
            md += ["| " + " | ".join(row) + " |" for row in interval_rows[1:]] + [""]
            body.append("<p><b>Prediction intervals</b> (test part; networks: " + html.escape(source) +
                        "; baselines: conformal).</p><div class='scroll'><table><thead><tr>"
                        + "".join(f"<th>{html.escape(c)}</th>" for c in interval_rows[0]) + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                                  for row in interval_rows[1:]) + "</tbody></table></div>")
        for caption, path in _figures(out, dataset, records, summary):
            md += [f"### {caption}", "", f"![{caption}](figures/{path.name})", ""]
            encoded = base64.b64encode(path.read_bytes()).decode("ascii")
            body.append(f"<h3>{html.escape(caption)}</h3><img alt='{html.escape(caption)}' "
                        f"src='data:image/png;base64,{encoded}'>")
    if failures:
        md += ["## Failed runs", "", f"{len(failures)} run(s) failed and are left out of every table above; "
               "rerunning the comparison with the same --out runs them again.", ""]
        md += [f"- {f['dataset']} {f['model']} seed {f['seed']}: {f['error']}" for f in failures] + [""]
        body.append(f"<h2>Failed runs</h2><p>{len(failures)} run(s) failed and are left out of every table above; "
                    "rerunning the comparison with the same --out runs them again.</p><ul>"
                    + "".join(
                        f"<li>{html.escape(str(f['dataset']))} {html.escape(str(f['model']))} seed {f['seed']}: "
                        f"{html.escape(str(f['error']))}</li>" for f in failures) + "</ul>")
    md += ["## Files", "", "results.csv (one row per run), summary.csv (mean/std over seeds), comparison.json "
           "(the configuration: rerun with the same --out to resume, or with tsattn.compare(**spec)).", ""]
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'><title>tsattn comparison</title><style>"
            "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
            ".scroll{overflow-x:auto;max-width:100%}.verdict ul{margin:.3em 0;padding-left:1.2em}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
            "th{background:#f2f2f2}tr.best td{background:#e6f4ea;font-weight:bold}img{max-width:100%}"
            ".verdict{background:#f8f8f8;padding:.8em;border-left:4px solid #4a8}</style></head><body>"
            + "".join(body) + "</body></html>")
    with atomic_file(out / "report.md") as temporary:
        temporary.write_text("\n".join(md))
    with atomic_file(out / "report.html") as temporary:
        temporary.write_text(page)
    return out / "report.md", out / "report.html"

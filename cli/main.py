"""`tsattn` command line: each command parses its options and calls one library function."""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
from pathlib import Path

import click

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from tsattn import __version__  # noqa: E402
from tsattn.errors import TsattnError  # noqa: E402


class CliError(click.ClickException):
    """A one-line error for the user: printed as 'Error: ...', exit code 2, no traceback."""

    exit_code = 2

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(message)
        self.kind = kind


class TsattnGroup(click.Group):
    """The command group: with --json anywhere on the command line every outcome is one JSON object on stdout,
    errors and usage errors included: {"error": "...", "kind": "DataError" | "usage" | ..., "exit_code": 2}
    (the usual 'Error: ...' line still goes to stderr)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            value = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            error.show()
            if "--json" in argv:
                kind = getattr(error, "kind", None) or ("usage" if isinstance(error, click.UsageError) else "error")
                click.echo(json.dumps({"error": error.format_message(), "kind": kind, "exit_code": error.exit_code}))
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(value if isinstance(value, int) else 0)


def friendly_errors(command):
    """Turn library errors into one clear line and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        import warnings

        try:
            with warnings.catch_warnings():
                _plain_warnings(quiet=bool(kwargs.get("quiet")))
                return command(*args, **kwargs)
        except TsattnError as exc:
            raise CliError(str(exc), kind=type(exc).__name__) from None
        except PermissionError as exc:
            raise CliError(f"permission denied: {exc.filename}; choose a writable place", kind="PermissionError") \
                from None
        except KeyboardInterrupt:
            click.echo("Interrupted: nothing half-written was left; what had finished is kept.", err=True)
            raise click.exceptions.Exit(130) from None
        except OSError as exc:  # disk full, missing parents under /proc, not a directory, cross-device...
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise CliError(f"cannot read or write{where}: {exc.strerror or exc}; check the path and free space",
                           kind="OSError") from None

    return wrapper


def _plain_warnings(quiet: bool) -> None:
    """Warnings as one plain line on stderr ("Warning: ..."), no file, line or source; none with --quiet. What
    tsattn warns about (UserWarning: series left out, too few scores, a figure not drawn) is shown once per
    message; the libraries' deprecation and future notices are for developers, not for the command's user."""
    import warnings

    warnings.resetwarnings()
    warnings.simplefilter("ignore")
    if quiet:
        return
    warnings.simplefilter("default", UserWarning)
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            click.echo(f"Warning: {text}", err=True)

    warnings.showwarning = show


@click.group(cls=TsattnGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tsattn")
def main():
    """tsattn: forecast time series with attention-based neural networks, beside honest baselines."""
    _terminate_cleanly()


def _terminate_cleanly():
    """SIGTERM and Ctrl-C end a command at a safe point: staging is removed, nothing half-written stays."""
    import signal

    def interrupt(signum, frame):
        harness = sys.modules.get("tsattn.harness")
        if harness is None:  # TensorFlow not loaded: nothing runs that an exception could upset
            raise KeyboardInterrupt
        harness.request_stop()

    try:
        signal.signal(signal.SIGTERM, interrupt)
        signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread (e.g. inside a test runner's worker thread)
        pass


class Output:
    """Where a command's words go: tables and summaries on stdout, progress on stderr, nothing but errors
    with --quiet, and one JSON document on stdout (nothing else there) with --json."""

    def __init__(self, quiet: bool = False, as_json: bool = False):
        self.quiet, self.json = quiet, as_json
        self.progress = _Progress(quiet, as_json)

    def say(self, text: str = "") -> None:
        """Human output (stdout): tables, verdicts, 'Wrote ...'."""
        if not self.quiet and not self.json:
            click.echo(text)

    def document(self, payload) -> None:
        """The --json document (printed even with --quiet: it was asked for)."""
        if self.json:
            from tsattn.io import json_text

            click.echo(json_text(payload))


class _Progress:
    """Output.progress: progress and warnings (stderr), kept out of --json's stdout; ``terminal`` is stderr when a
    progress bar may be drawn there (a terminal, without --quiet or --json), else None."""

    def __init__(self, quiet: bool, as_json: bool):
        self.quiet = quiet
        stream = sys.stderr  # (CliRunner swaps it for a buffer: no terminal there)
        self.terminal = stream if not quiet and not as_json and hasattr(stream, "isatty") and stream.isatty() else None

    def __call__(self, text: str) -> None:
        if not self.quiet:
            click.echo(text, err=True)


def output_options(command):
    """--quiet and --json, on every command."""
    command = click.option("--json", "as_json", is_flag=True,
                           help="print one JSON document on stdout instead of tables (progress stays on stderr).")(
        command)
    return click.option("--quiet", "-q", is_flag=True, help="print nothing but errors (and --json output).")(command)


def level_option(command):
    """--level, repeatable: interval levels in percent (checked by the library, one line when bad)."""
    return click.option("--level", "levels", multiple=True, metavar="L",
                        help="prediction interval level in percent, repeatable (e.g. --level 80 --level 95): adds "
                             "<model>-lo-L / <model>-hi-L columns (conformal intervals, or the model's own with loss=quantile)."
                        )(command)


def _levels(levels) -> list:
    from tsattn.intervals import check_levels

    return list(check_levels(list(levels)))


def _complete_models(ctx, param, incomplete):
    """Shell completion of a model name, or of the last item of a comma-separated list."""
    from tsattn.specs import list_models

    return _complete_list(incomplete, list_models())


def _complete_datasets(ctx, param, incomplete):
    from tsattn.data import list_datasets

    return _complete_list(incomplete, list_datasets())


def _complete_list(incomplete: str, names) -> list[str]:
    done, _, last = incomplete.rpartition(",")
    prefix = done + "," if done else ""
    return [prefix + name for name in names if name.startswith(last)]


def _records(frame) -> list[dict]:
    """A frame as JSON-ready records: NaN as null, timestamps as text, as forecast.csv writes them (a column of
    midnights as dates, 2020-01-01, not 2020-01-01 00:00:00)."""
    import pandas as pd

    frame = frame.copy()
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column) and column.dt.tz is None and column.notna().any():
            if (column.dropna() == column.dropna().dt.normalize()).all():
                frame[name] = column.dt.strftime("%Y-%m-%d").where(column.notna(), None)
    records = []
    for row in frame.astype(object).to_dict(orient="records"):
        records.append({key: (None if (isinstance(value, float) and value != value) or value is pd.NaT else
                              str(value) if isinstance(value, (pd.Timestamp, pd.Period)) else value)
                        for key, value in row.items()})
    return records


@main.command("datasets", short_help="List the bundled datasets, their lengths and horizons.",
              epilog="\b\nExample:\n  tsattn datasets --json")
@output_options
@friendly_errors
def datasets_command(quiet, as_json):
    """List the bundled datasets: series, lengths, frequency, hold-out horizon and what the dates are."""
    from tsattn.data import describe_datasets
    from tsattn.io import text_table

    output = Output(quiet, as_json)
    table = describe_datasets()
    output.document(_records(table))
    rows = []
    for row in table.itertuples(index=False):
        length = str(row.length_min) if row.length_min == row.length_max else f"{row.length_min}-{row.length_max}"
        horizon = "-" if row.horizon is None or row.horizon != row.horizon else str(int(row.horizon))
        rows.append((row.name, str(row.series), length, row.frequency, horizon, row.dates, row.description))
    # each column as wide as its widest cell (tourism-quarterly ran into its series count at a fixed 14)
    output.say(text_table(["name", "series", "length", "frequency", "horizon", "dates", "description"], rows,
                          left=(3, 5, 6)))


def with_settings(options: dict, settings) -> dict:
    """The options given as flags, then the `--set` pairs; a setting given twice with different values (a flag
    and --set, two --set, or a model parameter and the same key inside --set model_params=...) is refused with
    one line naming both, never resolved silently."""
    parsed = parse_settings(settings)
    for key, value in parsed.items():
        if key in options and options[key] != value:
            flag = "--" + key.replace("_", "-")
            raise CliError(f"{flag} {_shown(options[key])} and --set {key}={_shown(value)} both set {key}; give it once")
    inside = parsed.get("model_params")
    if isinstance(inside, dict):
        for key, value in inside.items():
            for outer in (key, f"model.{key}"):
                if outer in parsed and parsed[outer] != value:
                    raise CliError(f"--set {outer}={_shown(parsed[outer])} and --set model_params={{\"{key}\": "
                                   f"{_shown(value)}}} both set {key}; give it once")
    return {**options, **parsed}


def _shown(value) -> str:
    return json.dumps(value) if isinstance(value, (list, dict, bool)) or value is None else str(value)


def parse_settings(settings) -> dict:
    """`--set key=value` pairs; values read as JSON (numbers, true/false, null, lists) or else as text
    (so `--set scaling=none` is the text "none" and `--set season=null` is None). A key given twice with
    different values is refused."""
    parsed = {}
    for item in settings:
        if "=" not in item:
            raise CliError(f"--set expects KEY=VALUE; got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        if not key:
            raise CliError(f"--set expects KEY=VALUE; got {item!r}")
        lowered = raw.strip().lower()
        if lowered in ("true", "false"):
            value = lowered == "true"
        elif lowered == "null":
            value = None
        else:
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                value = raw
        if key in parsed and parsed[key] != value:
            raise CliError(f"--set {key}={_shown(parsed[key])} and --set {key}={_shown(value)} both set {key}; "
                           "give it once")
        parsed[key] = value
    return parsed


def data_overrides(dataset, csv, column, date_column, fill, id_column=None) -> dict:
    """Data options of a command as RunConfig overrides (both or neither of --dataset/--csv refused)."""
    if dataset is not None and csv is not None:
        raise CliError("give either --dataset or --csv, not both")
    overrides = {}
    if dataset is not None:
        overrides.update(dataset=dataset, csv=None)
    if csv is not None:
        overrides.update(csv=csv, dataset=None, column=column, date_column=date_column, id_column=id_column)
    elif column is not None or date_column is not None or id_column is not None:
        raise CliError("--column, --date-column and --id-column go with --csv PATH")
    if fill is not None:
        overrides["fill"] = fill
    return overrides


def data_options(command):
    """--dataset / --csv / --column / --date-column / --fill, shared by the commands that read a series."""
    options = [
        click.option("--dataset", shell_complete=_complete_datasets,
                     help="a bundled dataset (see `tsattn datasets`)."),
        click.option("--csv", type=click.Path(dir_okay=True), help="a CSV file holding the series (a file of two "
                     "columns, dates and values, or a long file with unique_id, ds and y needs no column options)."),
        click.option("--column", help="the value column of --csv (several, comma-separated, for a wide file: one "
                                     "series per column, e.g. north,south)."),
        click.option("--date-column", help="the date column of --csv (parsed, sorted, frequency inferred)."),
        click.option("--id-column", help="the series-id column of a long --csv holding many series "
                                         "(e.g. unique_id; needs --date-column)."),
        FILL_OPTION,
    ]
    for option in reversed(options):
        command = option(command)
    return command


FILL_OPTION = click.option("--fill", type=click.Choice(["interpolate", "ffill", "drop"]),
                           help="what to do with NaN values (default: refuse them).")


def covariate_options(command):
    """--hist-exog / --futr-exog / --stat-exog / --calendar / --static-csv, shared by fit and compare."""
    options = [
        click.option("--hist-exog", metavar="COLUMNS", help="past-observed covariate columns (known up to each "
                     "forecast origin), comma-separated."),
        click.option("--futr-exog", metavar="COLUMNS", help="future-known covariate columns (known for the forecast "
                     "steps too: promotions, prices, holidays), comma-separated."),
        click.option("--stat-exog", metavar="COLUMNS", help="static feature columns of --static-csv (one row per "
                     "series; text columns are categories, one-hot), comma-separated."),
        click.option("--calendar", metavar="FEATURES", help="calendar features made from the dates: month, quarter, "
                     "weekofyear, dayofweek, dayofmonth, dayofyear, hour, minute (comma-separated)."),
        click.option("--static-csv", type=click.Path(), help="a CSV of static features: unique_id (or --id-column) "
                     "and the --stat-exog columns."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def covariate_overrides(hist_exog, futr_exog, stat_exog, calendar, static_csv) -> dict:
    named = {"hist_exog": hist_exog, "futr_exog": futr_exog, "stat_exog": stat_exog, "calendar": calendar}
    overrides = {key: _names(value, key) for key, value in named.items() if value is not None}
    if static_csv is not None:
        overrides["static_csv"] = static_csv
    return overrides


@main.command("models", short_help="List the models, their parameters and defaults.",
              epilog="\b\nExample:\n  tsattn models --json")
@output_options
def models_command(quiet, as_json):
    """List the models with their parameters and defaults (no TensorFlow import: instant)."""
    from tsattn.specs import MODELS

    output = Output(quiet, as_json)
    output.document([spec.to_dict() for spec in MODELS.values()])
    for name, spec in MODELS.items():
        output.say(f"{name}: {spec.description}")
        for key, param in spec.params.items():
            output.say(f"    {key:<18} default {param.default!r:<14} {param.help} ({param.accepts})")
        output.say("")


class ModelChoice(click.Choice):
    """click's choice of a model name, whose refusal also says what an unknown name likely meant (lstm: simple-rnn
    with cell=lstm; PatchTST: patch-transformer; nbeat: nbeats), as Forecaster's does."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value not in self.choices:
            from tsattn.specs import model_hint

            if value in (*_baseline_names(), "auto"):  # tune's choice: the networks, whose settings it searches
                self.fail(f"{value!r} has no settings to search; tune takes a network: {', '.join(self.choices)}",
                          param, ctx)
            self.fail(f"unknown model {value!r}{model_hint(value, self.choices)}; choose from "
                      f"{', '.join(self.choices)}", param, ctx)
        return super().convert(value, param, ctx)


def _model_names() -> list[str]:
    from tsattn.specs import list_models

    return list_models()


def _baseline_names() -> list[str]:
    from tsattn.baselines import BASELINES

    return list(BASELINES)


@main.command("fit", short_help="Train one model, score it beside baselines, save the run.",
              epilog="\b\nExample:\n  tsattn fit --model attention-rnn --dataset sunspots --level 80 --out runs/sun")
@click.option("--model", "model_name", type=ModelChoice([*_model_names(), *_baseline_names(), "auto"]),
              help="the network to train (default attention-rnn; see `tsattn models`), a baseline (naive, "
                   "seasonal-naive, linear; theta, dynamic-theta, ets, arima with statsforecast) scored the same "
                   "way, or auto: the networks and baselines compared on the validation part, the best kept.")
@data_options
@click.option("--window", type=int, help="input window length (default 24, shorter when the shortest series "
                                         "needs it so that every series is forecast, or when half a panel's "
                                         "series would hold no training window).")
@click.option("--horizon", type=int, help="steps the model forecasts directly from each window (default: the "
                                           "dataset's hold-out horizon as `tsattn datasets` lists it, e.g. 18 for "
                                           "m3-monthly; else 1).")
@click.option("--epochs", type=int, help="maximum epochs (early stopping on validation loss; default 200).")
@click.option("--batch-size", type=int, help="batch size (default 32).")
@click.option("--learning-rate", type=float, help="Adam learning rate (default 0.001).")
@click.option("--seed", type=int, help="seed for weights, batch order and dropout (default 0).")
@click.option("--preset", help="auto (default: nbeats-recipe for a panel of 40+ series and horizon 2+, else classic), "
                                "classic, nbeats-recipe (N-BEATS' training recipe for any model), tutorial-sunspots, "
                                "tutorial-fibonacci or tutorial-transformer (the tutorials' exact setups); options "
                                "given beside it win.")
@click.option("--baselines", "stat_baselines", metavar="NAMES",
              help="statistical baselines beside naive, seasonal naive and linear: theta, dynamic-theta, ets, arima "
                   "(with future-known covariates, AutoARIMA uses them as regressors and joins by itself; "
                   "comma-separated; needs statsforecast: pip install 'tsattn[bench]').")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="any run setting or model parameter, e.g. --set units=64 --set validation_fraction=0.15.")
@level_option
@covariate_options
@click.option("--config", "config_path", type=click.Path(), help="a JSON file of settings (e.g. the best.json of "
              "`tsattn tune`); options given beside it win.")
@click.option("--out", required=True, type=click.Path(), help="directory to write the run to.")
@click.option("--force", is_flag=True, help="replace --out if it holds an earlier run (and nothing else).")
@output_options
@friendly_errors
def fit_command(model_name, dataset, csv, column, date_column, id_column, fill, window, horizon, epochs, batch_size,
                learning_rate, seed, preset, stat_baselines, settings, hist_exog, futr_exog, stat_exog, calendar,
                static_csv, config_path, levels, out, force, quiet, as_json):
    """Train one model, evaluate it beside the baselines and write the run to --out."""
    from tsattn.io import check_output_directory

    output = Output(quiet, as_json)
    overrides = {key: value for key, value in {
        "model": model_name, "window": window, "horizon": horizon, "epochs": epochs, "batch_size": batch_size,
        "learning_rate": learning_rate, "seed": seed}.items() if value is not None}
    overrides.update(data_overrides(dataset, csv, column, date_column, fill, id_column))
    overrides.update(covariate_overrides(hist_exog, futr_exog, stat_exog, calendar, static_csv))
    if stat_baselines is not None:
        overrides["baselines"] = _names(stat_baselines, "baselines")
    if levels:
        overrides["level"] = _levels(levels)
    overrides = with_settings(overrides, settings)
    if config_path is not None:
        from tsattn.tuning import load_best

        overrides = {**load_best(config_path), **overrides}  # the options given beside it win
    if preset is None and dataset is None and csv is None and overrides.get("dataset") is None \
            and overrides.get("csv") is None:
        raise CliError("no data: give --dataset NAME (see `tsattn datasets`) or --csv PATH --column COL")
    check_output_directory(out, force, "run", inputs=[csv, static_csv])  # fail before training, not after

    from tsattn.config import preset_config
    from tsattn.harness import EpochProgress, run
    from tsattn.runs import importance_line, interval_table, metrics_table, write_run
    from tsattn.verdicts import interval_verdict, run_verdict

    config = preset_config(preset, **overrides)
    if config.csv is None and config.dataset is not None:
        from tsattn.data import check_dataset_name

        check_dataset_name(config.dataset)  # before "Training ...": a typo is named first, with the closest name
    from tsattn.config import resolve, settings_text

    automatic = config.preset == "auto"
    config, panel = resolve(config)  # checked, read and settled before "Training ...": errors come first
    column = config.column or panel.name  # the one read without --column (a two-column or unique_id/ds/y file)
    source = config.dataset if config.csv is None else f"{config.csv}" + (f" column {column}" if column else "")
    window = "auto" if config.window is None else config.window
    if config.lookback is not None:
        window = f"{config.lookback} horizons"
    chosen = settings_text(config, panel, automatic)
    output.progress(f"Training {config.model} on {source} (window {window}, horizon {config.horizon}, "
                    f"seed {config.seed}{chosen})")
    from tsattn.progress import Heartbeat

    with Heartbeat(output.progress, f"fit {config.model}") as beat:  # a line at least every 10 s, quiet or not
        beat.stage("windowing the data and building the model")
        result = run(config, panel, progress=None if quiet else EpochProgress(config.epochs, heartbeat=beat))
        beat.stage("writing the run (predictions, metrics, figures)")
        files = write_run(result, Path(out), force=force)
    verdict = run_verdict(result)
    output.document({
        "model": result.config.model, "out": str(files["directory"]), "parameters": result.parameter_count,
        "choice": None if result.state.choice is None else result.state.choice.to_dict(orient="records"),
        "epochs_run": result.epochs_run, "best_epoch": result.best_epoch,
        "fit_seconds": round(result.fit_seconds, 3), "series": result.panel.n_series, "note": result.state.note,
        "series_not_scored": [str(name) for name in result.data.not_scored],
        "verdict": verdict,
        "metrics": {part: values for part, values in result.metrics.items()
                    if part in ("train", "validation", "test")},
        "files": [name for name in files if name != "directory"]})
    stopped = f", best epoch {result.best_epoch}" if result.best_epoch else ""
    history = result.state.history
    if history is not None and history.attrs.get("covariate_lags") is not None:
        stopped += f", least-squares start on the future covariates and {history.attrs['covariate_lags']} lags of them"
    if history is not None and history.attrs.get("normalise_chosen") is not None:
        stopped += f", normalise={history.attrs['normalise_chosen']} (normalise=auto, chosen on the training part)"
    if result.state.choice is not None:
        from tsattn.selection import describe_choice

        output.say(describe_choice(result.state.choice) + " (every candidate: choice.csv)")
    trained = ("a baseline" if result.config.is_baseline else  # auto's mean of statistical methods: no network
               "no network kept (statistical methods and baselines only)" if result.epochs_run is None else
               f"{result.parameter_count} parameters, {result.epochs_run} epochs{stopped}")
    output.say(f"{result.config.model}: {trained}, fit {result.fit_seconds:.1f}s")
    output.say(metrics_table(result))
    if result.config.level:
        output.say(interval_table(result))
        line = interval_verdict(result)
        if line:
            output.say(line)
    shuffled = importance_line(files["directory"] / "covariate_importance.csv")
    if shuffled:
        output.say(shuffled)
    if verdict:
        output.say(verdict)
    output.say(f"Wrote {files['directory']}: " + ", ".join(k for k in files if k != "directory"))


def _series_from_options(dataset, csv, column, date_column, fill, default_config: dict | None = None,
                         id_column=None, static_csv=None):
    """The data named by --dataset / --csv options (or None when neither is given), loaded as `tsattn fit` loads
    it (tsattn.config.load_panel); a dataset gets the options the model was fitted with, and the static features of
    the fit's --static-csv unless ``static_csv`` (--static-csv: series not seen in fit) names others."""
    from tsattn.config import RunConfig, load_panel

    overrides = data_overrides(dataset, csv, column, date_column, fill, id_column)
    if overrides.get("csv") is None and overrides.get("dataset") is None:
        if static_csv is not None:
            raise CliError("--static-csv gives the static features of series not seen in fit: give those series with "
                           "--csv (the series the model was fitted on keep theirs)")
        return None
    if static_csv is not None:
        overrides["static_csv"] = static_csv
    fitted = default_config or {}
    if dataset is not None and fitted.get("dataset") == dataset:
        overrides["dataset_options"] = fitted.get("dataset_options", {})
    from tsattn.covariates import KINDS

    for key in (*KINDS, "static_csv"):  # the columns the model reads
        overrides.setdefault(key, fitted.get(key))
    return load_panel(RunConfig(**{"dataset": None, **overrides}))


def model_dir_options(command):
    """The saved model of predict and backtest: --model-dir, or the directory as the one argument (`tsattn predict
    runs/sun`, as a user first types it: it said "Missing option '--model-dir'")."""

    @functools.wraps(command)
    def wrapper(*args, model_dir=None, model_dir_argument=None, **kwargs):
        if model_dir is not None and model_dir_argument is not None and model_dir != model_dir_argument:
            raise click.UsageError(f"two saved models named: {model_dir_argument} and --model-dir {model_dir}; name one")
        chosen = model_dir if model_dir is not None else model_dir_argument
        if chosen is None:
            name = click.get_current_context().info_name
            raise click.UsageError(f"name the saved model: a run directory of `tsattn fit` or a file of "
                                   f"Forecaster.save (tsattn {name} runs/sun, or --model-dir runs/sun)")
        return command(*args, model_dir=chosen, **kwargs)

    wrapper = click.option("--model-dir", type=click.Path(),
                           help="a run directory of `tsattn fit` or a file written by Forecaster.save (or give it "
                                "as the argument MODEL_DIR).")(wrapper)
    return click.argument("model_dir_argument", metavar="[MODEL_DIR]", required=False, type=click.Path())(wrapper)


STATIC_CSV_OPTION = click.option("--static-csv", type=click.Path(), help="a CSV of the static features of series "
                                 "not seen in fit: the id column (as --id-column) and the model's --stat-exog columns "
                                 "(default: the fit's --static-csv).")


@main.command("predict", short_help="Forecast after the series with a saved model.",
              epilog="\b\nExample:\n  tsattn predict runs/sun --steps 12 --level 80 --out forecasts/sun")
@model_dir_options
@click.option("--steps", type=int, default=None, help="how many steps to forecast (default: the model's horizon).")
@data_options
@STATIC_CSV_OPTION
@click.option("--out", type=click.Path(),
              help="directory to write forecast.csv, forecast.png and forecast.json to (like every --out).")
@click.option("--force", is_flag=True, help="replace --out if it holds an earlier forecast (and nothing else).")
@click.option("--futr-csv", type=click.Path(), help="a CSV of the future-known covariates for the forecast steps: "
              "the id and date columns and one column per --futr-exog column the model was fitted with.")
@level_option
@output_options
@friendly_errors
def predict_command(model_dir, steps, dataset, csv, column, date_column, id_column, fill, static_csv, out, force,
                    futr_csv, levels, quiet, as_json):
    """Forecast after the training series (or after --csv / --dataset) with a saved model."""
    from tsattn.forecaster import Forecaster
    from tsattn.io import atomic_directory, check_output_directory, write_json

    output = Output(quiet, as_json)
    if out is not None and not str(out).strip():
        raise CliError("--out is empty; name a directory for forecast.csv, forecast.png and forecast.json (e.g. --out "
                       "forecasts/next), or leave --out out to print the forecast")
    if out and str(out).lower().endswith(".csv"):
        raise CliError(f"--out is a directory for every command (predict writes forecast.csv, forecast.png and "
                       f"forecast.json inside it); got {out}: name a directory, e.g. --out forecasts/next")
    if out:
        check_output_directory(out, force, "forecast", inputs=[csv, model_dir, futr_csv, static_csv])  # before any work
    levels = _levels(levels)
    forecaster = Forecaster.load(model_dir)
    series = _series_from_options(dataset, csv, column, date_column, fill, forecaster.config_.to_dict(),
                                  id_column=id_column, static_csv=static_csv)
    futr_df = None
    if futr_csv is not None:
        from tsattn.data import read_csv_frame

        futr_df = read_csv_frame(Path(futr_csv), text_columns=[forecaster.columns_[0]])
    try:
        forecast = forecaster.predict(steps, series=series, level=levels or None, futr_df=futr_df)
    except TsattnError as error:  # the API's futr_df is this command's --futr-csv
        raise type(error)(futr_csv_terms(str(error), futr_csv, forecaster.columns_)) from None
    frame = forecaster.long_forecast(forecast, series)  # one series too: a panel of one
    output.document(_records(frame))
    import pandas as pd

    from tsattn.io import number_text

    # on screen six significant digits, thousands separated, never e-notation (43,878.8, not 4.387883e+04, where a
    # panel's series differ in size); forecast.csv (--out) and --json keep every digit
    shown = frame if len(frame) <= 60 else pd.concat([frame.head(30), frame.tail(10)])  # a panel's forecasts: the
    # first and last rows on screen (in one table, so their columns line up), all of them in --out
    lines = shown.to_string(index=False, float_format=lambda value: number_text(value, 6)).splitlines()
    if len(shown) < len(frame):
        lines.insert(31, f"... {len(frame) - 40} more rows ...")
    output.say("\n".join(lines))
    if out:
        from tsattn import __version__ as version

        inputs = [csv, model_dir, futr_csv, static_csv]
        with atomic_directory(out, force=force, kind="forecast", inputs=inputs) as staging:
            frame.to_csv(staging / "forecast.csv", index=False)
            from tsattn.plots import kept

            kept(forecaster.plot)(staging / "forecast.png", "forecast", steps=steps, series=series,
                                  level=levels or None, futr_df=futr_df)  # a figure that cannot be drawn: warned
            write_json(staging / "forecast.json", {
                "model_dir": str(Path(model_dir).expanduser().resolve()), "model": forecaster.model,
                "steps": int(steps if steps is not None else forecaster.horizon_), "rows": int(len(frame)),
                "level": levels, "intervals": None if not levels else (
                    "the model's own quantiles" if forecaster.quantiles_ is not None else
                    "split conformal, calibrated on the validation part, scores in "
                    + forecaster.calibration_.describe_scale()) + (
                    "" if getattr(forecaster.calibration_, "floor", None) is None else
                    "; forecasts and bounds floored at 0 (every fitted value is non-negative)"),
                "data": dataset or (str(csv) if csv else "the series the model was fitted on"), "tsattn": version})
        output.say(f"Wrote {out}: forecast.csv, forecast.png, forecast.json")


def engine_options(function):
    """--jobs, --engine, --address, --cpus-per-run: where independent runs (compare runs, backtest refits) go."""
    for option in reversed([
        click.option("--jobs", type=int, default=1, show_default=True,
                     help="local engine: runs in parallel processes."),
        click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     help="where runs execute: this machine, or Ray tasks (needs pip install 'tsattn[ray]')."),
        click.option("--address", help="ray engine: a running cluster to join ('auto' or HOST:PORT); without it "
                                       "a local Ray instance starts for the run."),
        click.option("--cpus-per-run", type=int, default=1, show_default=True,
                     help="ray engine: CPUs (and TensorFlow threads) per run."),
        click.option("--ray-timeout", type=float, default=None, expose_value=False, callback=_ray_timeout,
                     help="ray engine: seconds to reach the cluster's --address before giving up (default 60; "
                          "also TSATTN_RAY_TIMEOUT)."),
    ]):
        function = option(function)
    return function


def _ray_timeout(ctx, param, value):
    """--ray-timeout reaches every engine the command makes through TSATTN_RAY_TIMEOUT (checked there)."""
    if value is not None:
        os.environ["TSATTN_RAY_TIMEOUT"] = repr(value)
    return value


@main.command("backtest", short_help="Rolling-origin forecasts of a saved model, scored.",
              epilog="\b\nExample:\n  tsattn backtest runs/sun --start 0.8 --out backtests/sun")
@model_dir_options
@data_options
@STATIC_CSV_OPTION
@click.option("--start", default="0.8", show_default=True,
              help="first target: a fraction of the series, a position or a timestamp.")
@click.option("--steps", type=int, help="how many steps to forecast from each origin, as in predict (default: the "
                                        "model's horizon; longer continues recursively).")
@click.option("--stride", type=int, default=1, show_default=True, help="steps between origins.")
@click.option("--retrain", type=int, default=0, show_default=True,
              help="refit a fresh model every N origin times on the data up to that time (a panel: every series "
                   "up to it; 0: never).")
@click.option("--epochs", type=int, help="maximum epochs of each refit.")
@engine_options
@click.option("--out", required=True, type=click.Path(), help="directory for backtest.csv, metrics.json, backtest.png.")
@click.option("--force", is_flag=True, help="replace --out if it holds an earlier backtest (and nothing else).")
@output_options
@friendly_errors
def backtest_command(model_dir, dataset, csv, column, date_column, id_column, fill, static_csv, start, steps, stride,
                     retrain, epochs, jobs, engine, address, cpus_per_run, out, force, quiet, as_json):
    """Rolling-origin historical forecasts of a saved model, with metrics and a plot."""
    from tsattn.baselines import baseline_labels
    from tsattn.forecaster import Forecaster
    from tsattn.harness import statistical_text
    from tsattn.io import atomic_directory, check_output_directory, write_json
    from tsattn.plots import plot_backtest
    from tsattn.runs import scores_table

    output = Output(quiet, as_json)
    check_output_directory(out, force, "backtest", inputs=[csv, model_dir, static_csv])
    if retrain < 0:
        raise CliError(f"--retrain must be 0 or a positive number of origins; got {retrain}")
    forecaster = Forecaster.load(model_dir)
    series = _series_from_options(dataset, csv, column, date_column, fill, forecaster.config_.to_dict(), id_column,
                                  static_csv)
    if series is None:
        if forecaster.config_.dataset is None:
            fitted = forecaster.config_
            example = " ".join(f"--{flag} {shlex.quote(str(value))}" for flag, value in (
                ("csv", fitted.csv), ("column", fitted.column), ("date-column", fitted.date_column),
                ("id-column", fitted.id_column)) if value is not None)
            raise CliError("give the series to backtest on with --dataset or --csv PATH --column COL"
                           + (f" (the model was fitted on {example})" if fitted.csv else ""))
        from tsattn.data import load_dataset

        series = load_dataset(forecaster.config_.dataset, **forecaster.config_.dataset_options)
    start_value = _parse_start(start)
    from tsattn.progress import Heartbeat

    state = forecaster.state_
    with Heartbeat(output.progress, "backtest") as beat:  # a line per refit, and one at least every 10 s
        statistical = statistical_text(state.baselines)
        beat.stage(("refitting" if retrain else "forecasting") + (f", with {statistical}" if statistical else ""))
        table = forecaster.backtest(series, start=start_value, steps=steps, stride=stride,
                                    retrain=retrain if retrain else False, epochs=epochs, engine=engine,
                                    jobs=jobs, address=address, cpus_per_run=cpus_per_run, echo=beat)
    summary = table.attrs["metrics"]
    rows = forecaster.long_backtest(table, series)  # one series too: a panel of one, its id as predictions.csv's
    with atomic_directory(out, force=force, kind="backtest", inputs=[csv, model_dir, static_csv]) as staging:
        rows.to_csv(staging / "backtest.csv", index=False)
        write_json(staging / "metrics.json", summary)
        plot_backtest(table, staging / "backtest.png", f"{forecaster.model} backtest from {start}")
    output.document({"out": str(Path(out)), "steps": int(table["step"].max()), **summary})
    n_series = summary.get("series", 1)
    output.say(f"{summary['origins']} origins{f' over {n_series} series' if n_series > 1 else ''}, "
               f"{table['step'].max()} step(s) from each{'; means over series' if n_series > 1 else ''}")
    # the model and every baseline scored beside it (statistical ones too), but the model itself once
    names = ["model"] + [key for key, label in baseline_labels().items()
                         if key in summary and label != forecaster.model]
    output.say(scores_table({"": summary}, names, forecaster.model, summary["headline"]))  # fit's: the headline first
    for name in names:
        if (summary[name] or {}).get("rmse") is None:  # e.g. a season longer than the values before an origin
            output.say(f"n/a: {name.replace('_', '-')} has no forecast at these origins (too few values before them)")
    output.say(f"Wrote {out}: backtest.csv, metrics.json, backtest.png")


def futr_csv_terms(message: str, futr_csv, columns) -> str:
    """An error of ``Forecaster.predict`` about its ``futr_df`` in `tsattn predict`'s terms: the --futr-csv file
    (or, when none was given, the option), its columns named, and no advice only Python can follow."""
    name = f"--futr-csv {futr_csv}" if futr_csv else "--futr-csv FILE"
    for python, cli in ((" (make_future_dataframe() builds the id and time columns)",
                         f" (columns {columns[0]}, {columns[1]} and each covariate)"),
                        (" (get_missing_future(futr_df) lists them)", ""),
                        ("pass futr_df with", f"give {name} with"),
                        ("covariates (futr_exog), so futr_df is not used; drop it",
                         "covariates (--futr-exog), so --futr-csv is not used; drop it"),
                        ("fit with futr_exog=[...] naming its columns", "fit with --futr-exog COLUMNS")):
        message = message.replace(python, cli)
    return message.replace("futr_df", name)


def _names(text: str | None, what: str):
    if text is None:
        return None
    names = [part.strip() for part in text.split(",")]
    if not any(names):
        raise CliError(f"--{what} is empty; give a comma-separated list")
    if "" in names:
        raise CliError(f"--{what} {text!r} has an empty item; give a comma-separated list")
    return names


@main.command("compare", short_help="Compare models across datasets and seeds in one report.",
              epilog="\b\nExample:\n  tsattn compare --models simple-rnn,attention-rnn --datasets sunspots --seeds 0,1 --out reports/sun")
@click.option("--models", shell_complete=_complete_models, help="comma-separated models (default: all "
                                                                 "registered; see `tsattn models`).")
@click.option("--datasets", shell_complete=_complete_datasets, help="comma-separated datasets (default: "
                                                                     "sunspots).")
@click.option("--csv", help="a CSV series to compare on as well (read as tsattn fit reads --csv).")
@click.option("--column", help="the value column of --csv (several, comma-separated, for a wide file: one series "
              "per column, e.g. north,south).")
@click.option("--date-column", help="the date column of --csv.")
@click.option("--id-column", help="the series-id column of a long --csv holding many series.")
@FILL_OPTION
@click.option("--seeds", help="comma-separated distinct seeds (default 0,1,2).")
@click.option("--baselines", "stat_baselines", metavar="NAMES",
              help="statistical baselines beside naive, seasonal naive and linear: theta, dynamic-theta, ets, arima "
                   "(with future-known covariates, AutoARIMA uses them as regressors and joins by itself; "
                   "comma-separated; needs statsforecast: pip install 'tsattn[bench]').")
@click.option("--window", type=int, help="input window for every model.")
@click.option("--horizon", type=int, help="steps every model forecasts directly from each window (default: each "
                                           "dataset's hold-out horizon; else 1).")
@click.option("--epochs", type=int, help="maximum epochs of every run.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="run setting, model parameter (for the models that take it) or MODEL.param.")
@click.option("--config", "config_path", type=click.Path(), help="a TOML grid with the same keys.")
@click.option("--tuned", multiple=True, type=click.Path(), help="the best.json (or folder) of a `tsattn tune` "
              "search: its model runs with the settings found (repeat for several models).")
@covariate_options
@engine_options
@level_option
@click.option("--out", required=True, type=click.Path(), help="report directory (rerun to resume).")
@click.option("--force", is_flag=True, help="replace an --out that holds a different comparison.")
@output_options
@friendly_errors
def compare_command(models, datasets, csv, column, date_column, id_column, fill, seeds, stat_baselines, window, horizon,
                    epochs, settings, config_path, tuned, hist_exog, futr_exog, stat_exog, calendar, static_csv, jobs,
                    engine, address, cpus_per_run, levels, out, force, quiet, as_json):
    """Compare models across datasets and seeds, beside the baselines; write a report to --out."""
    from tsattn.compare import compare, load_grid

    output = Output(quiet, as_json)
    grid = load_grid(config_path) if config_path else {}
    seed_list = grid.get("seeds", [0, 1, 2])
    if seeds is not None:
        try:
            seed_list = [int(s) for s in _names(seeds, "seeds")]
        except ValueError:
            raise CliError(f"--seeds must be comma-separated integers; got {seeds!r}") from None
    csv_entries = list(grid.get("csv", []))
    if csv is not None:  # the columns as tsattn fit reads them (a file that needs --column says so in one line)
        csv_entries.append({"path": csv, "column": column, "date_column": date_column, "id_column": id_column})
    elif column is not None or date_column is not None or id_column is not None:
        raise CliError("--column and --date-column go with --csv PATH")
    from tsattn.tuning import tuned_settings

    merged = dict(grid.get("set", {}))
    compared = _names(models, "models") if models is not None else grid.get("models")
    merged.update(tuned_settings(tuned, models=compared))
    merged.update(covariate_overrides(hist_exog, futr_exog, stat_exog, calendar, static_csv))
    if stat_baselines is not None:
        merged["baselines"] = _names(stat_baselines, "baselines")
    if levels:
        merged["level"] = _levels(levels)
    if fill is not None:
        merged["fill"] = fill
    merged = with_settings(merged, settings)
    flags = {"window": window, "horizon": horizon, "epochs": epochs}
    with_settings({key: value for key, value in flags.items() if value is not None}, settings)  # conflicts refused
    results = compare(
        models=_names(models, "models") if models is not None else grid.get("models"),
        datasets=_names(datasets, "datasets") if datasets is not None else grid.get("datasets"),
        seeds=seed_list, csv=csv_entries, window=window if window is not None else grid.get("window"),
        horizon=horizon if horizon is not None else grid.get("horizon"),
        epochs=epochs if epochs is not None else grid.get("epochs"), settings=merged, out=out, jobs=jobs,
        force=force, echo=output.progress, engine=engine, address=address, cpus_per_run=cpus_per_run)
    import pandas as pd

    summary = pd.DataFrame(results.attrs["summary"])  # records (tsattn.compare): a frame again
    failures = results.attrs.get("failures", [])
    output.document({"out": str(Path(out)), "summary": _records(summary), "verdict": results.attrs.get("verdict"),
                     "failures": failures})
    from tsattn.io import text_table
    from tsattn.report import dataset_label, ranked_on_text, summary_table

    verdicts = results.attrs.get("verdict") or {}
    for dataset in summary["dataset"].unique() if len(summary) else ():  # each dataset's table as the report shows it
        table = summary[summary["dataset"] == dataset]
        header, rows = summary_table(table, brief=True)
        tested = (results.attrs.get("tested_on") or {}).get(dataset, "")  # ", tested on the last 8 values of each"
        output.say(f"{dataset_label(dataset)}: {int(table['series'].iloc[0])} series{tested}, ranked on "
                   f"{ranked_on_text(table)}")
        output.say(text_table(header, rows))
        if verdicts.get(dataset):
            output.say("Verdict:")
            for line in verdicts[dataset]:
                output.say(f"  - {line.replace('**', '')}")
    output.say(f"Wrote {out}: results.csv, summary.csv, report.md, report.html, comparison.json")
    if failures:
        click.echo(f"tsattn: {len(failures)} run(s) failed (listed in {Path(out) / 'report.md'}; rerun to retry "
                   f"them); the first: {failures[0]['dataset']} "
                   f"{failures[0]['model']} seed {failures[0]['seed']}: {failures[0]['error']}", err=True)
        sys.exit(1)


@main.command("tune", short_help="Search a model's settings on validation windows (Optuna).",
              epilog="\b\nExample:\n  tsattn tune --model nbeats --dataset m3-other --horizon 8 --trials 20 --out tuned/other")
@click.option("--model", "model_name", type=ModelChoice(_model_names()), default="attention-rnn", show_default=True,
              shell_complete=_complete_models, help="the network whose settings are searched.")
@data_options
@click.option("--horizon", type=int, help="steps the model forecasts directly (default: the dataset's hold-out "
              "horizon, e.g. 18 for m3-monthly; else 1).")
@click.option("--trials", type=int, default=20, show_default=True,
              help="completed trials the study should hold (a resumed search runs the missing ones).")
@click.option("--timeout", type=float, help="stop starting new trials after this many seconds.")
@click.option("--metric", type=click.Choice(["auto", "smape", "mase", "rmse", "mae"]), default="auto",
              show_default=True, help="validation metric minimised (auto: RMSE for one series, sMAPE for a panel, "
              "MASE for a panel with values of 0 or below).")
@click.option("--windows", type=click.IntRange(min=1), help="rolling-origin validation: score each trial on this many "
              "forecasts of one horizon at the end of each series (before the test part), one fit per trial; "
              "default: the fit's own validation part.")
@click.option("--step", type=click.IntRange(min=1), help="values between the validation windows (default: the horizon).")
@click.option("--space", "space_path", type=click.Path(), help="a YAML or JSON file of search dimensions overriding "
              "the model's space (see `tsattn models --json`), e.g. {units: {int: [8, 64], log: true}}.")
@click.option("--storage", help="an SQLAlchemy URL for the study (default: sqlite in --out), e.g. a PostgreSQL URL "
              "shared by several machines.")
@click.option("--study-name", help="the study's name in --storage (default: tsattn-<model>-<digest of the data>, so "
              "searches on other data never mix).")
@click.option("--seed", type=int, default=0, show_default=True, help="the sampler's seed and every trial's seed.")
@click.option("--epochs", type=int, help="maximum epochs of every trial (as fit's --epochs; default: the fit's).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="a fixed run setting of every trial, e.g. --set batch_size=64.")
@covariate_options
@engine_options
@click.option("--out", required=True, type=click.Path(), help="the search's folder (rerun the command to resume).")
@click.option("--force", is_flag=True, help="start the search in --out over (only the files a search writes).")
@output_options
@friendly_errors
def tune_command(model_name, dataset, csv, column, date_column, id_column, fill, horizon, trials, timeout, metric,
                 windows, step, space_path, storage, study_name, seed, epochs, settings, hist_exog, futr_exog, stat_exog, calendar, static_csv, jobs, engine,
                 address, cpus_per_run, out, force, quiet, as_json):
    """Search a model's settings on validation windows (Optuna, resumable), then refit the best and score it once
    on the test part beside the defaults."""
    from tsattn.io import metric_label, number_text
    from tsattn.tuning import read_space, scores_text, tune

    output = Output(quiet, as_json)
    fixed = {key: value for key, value in {"horizon": horizon, "epochs": epochs}.items() if value is not None}
    fixed.update(data_overrides(dataset, csv, column, date_column, fill, id_column))
    fixed.update(covariate_overrides(hist_exog, futr_exog, stat_exog, calendar, static_csv))
    fixed = with_settings(fixed, settings)
    if fixed.get("dataset") is None and fixed.get("csv") is None:
        raise CliError("no data: give --dataset NAME (see `tsattn datasets`) or --csv PATH --column COL")
    space = read_space(space_path) if space_path else None
    dataset_name = fixed.pop("dataset", None)
    result = tune(model_name, dataset=dataset_name, trials=trials, timeout=timeout, metric=metric, storage=storage,
                  out=out, space=space, seed=seed, settings=fixed, echo=output.progress, force=force, engine=engine,
                  jobs=jobs, address=address, cpus=cpus_per_run, windows=windows, step=step, study_name=study_name)
    complete = int((result.trials["state"] == "COMPLETE").sum())
    output.document({"out": str(out), "metric": result.metric, "best_value": result.best_value,
                     "best_settings": result.best_settings, "trials": len(result.trials), "completed": complete,
                     "test": {label: values["test"] for label, values in result.test.items()}})
    output.say(f"Best validation {metric_label(result.metric)}: {result.best_value:.4g} after {complete} completed "
               "trial(s)")
    output.say("Best settings: " + ", ".join(  # floats to 4 digits here; best.json keeps them whole
        f"{k}={number_text(v, 4).replace(',', '') if isinstance(v, float) else v}"
        for k, v in result.best_settings.items()))
    for label in ("defaults", "tuned"):
        if label in result.test:
            test = result.test[label]["test"]
            output.say(f"  {label:8s} test {scores_text(test, result.metric)}")
    if storage is None:
        study = "study.db"
    else:
        from sqlalchemy.engine import make_url

        from tsattn.tuning import in_memory_sqlite

        url = make_url(storage)
        study = (f"(the study {result.study_name} was in memory and ends with this command; --storage "
                 f"sqlite:///study.db keeps one to resume)" if in_memory_sqlite(url) else
                 f"(the study {result.study_name} is in {url.render_as_string(hide_password=True)})")
    output.say(f"Wrote {out}: trials.csv, best.json, report.md, history.png, importance.png, {study} "
               f"(refit: tsattn fit --config {Path(out) / 'best.json'} ...)")


def _parse_start(text: str):
    try:
        number = float(text)
    except ValueError:
        return text  # a timestamp label
    if number.is_integer() and number >= 1:
        return int(number)
    return number


def run():  # pragma: no cover - console entry for `python -m tsattn.cli.main`
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    main()

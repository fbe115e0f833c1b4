"""A run directory: what `tsattn fit` writes (metrics, config, model, history, predictions, plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import artefacts, plots
from .baselines import baseline_labels
from . import metrics as M
from .errors import DataError
from .harness import RunResult
from .intervals import bands, check_levels, interval_source, level_name
from .io import atomic_directory, column_texts, metric_label, number_text, text_table, write_json
from .models import (attention_per_lag, first_member, fusion_layer, patches_layer, read_attention,
                     selection_names, variable_importance)
from .windows import PARTS



def baseline_keys(result: RunResult) -> tuple:
    """Keys of the baselines scored in a run: naive, seasonal naive, linear, then any statistical ones."""
    return tuple(model.key for model in result.baselines)


def predictions_frame(result: RunResult) -> pd.DataFrame:
    """Long form: the data's id and time columns (:meth:`tsattn.state.FittedState.key_columns`; ``unique_id``, ``ds``
    for a bundled dataset), step when horizon > 1, actual, predicted, part, the baselines and, with
    levels, the model's ``lo-80`` / ``hi-80`` ... (validation and test parts; empty on the train part), for every
    forecast target of every series."""
    frames = []
    panel = result.panel
    ids = np.asarray(panel.ids, dtype=object)
    taken = {"step", "actual", "predicted", "part", *(model.key for model in result.baselines)} | \
        {f"{side}-{level_name(level)}" for level in check_levels(result.config.level) for side in ("lo", "hi")}
    id_column, time_column = result.state.key_columns(taken)
    for part in PARTS:
        forecast = result.forecasts.get(part)
        if forecast is None:
            continue
        positions = result.data.target_positions(part)
        found = bands(forecast.intervals.get("model") or {}, result.config.level)  # {level: (low, high)}
        for step in range(result.data.horizon):
            frame = pd.DataFrame({
                id_column: ids[forecast.series],
                time_column: panel.index[positions[:, step]],
                "actual": forecast.actual[:, step],
                "predicted": forecast.predicted[:, step],
                "part": part,
            })
            for name, baseline in forecast.baselines.items():
                frame[name] = baseline[:, step]
            for level in check_levels(result.config.level):  # NaN where the part has no intervals (train)
                low, high = found.get(level, (None, None))
                frame[f"lo-{level_name(level)}"] = low[:, step] if low is not None else np.nan
                frame[f"hi-{level_name(level)}"] = high[:, step] if high is not None else np.nan
            if result.data.horizon > 1:
                frame.insert(2, "step", step + 1)
            frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    order = [id_column, time_column] + (["step"] if result.data.horizon > 1 else [])
    table[id_column] = pd.Categorical(table[id_column], categories=panel.ids)
    return table.sort_values(order, kind="stable")


def metrics_table(result: RunResult, parts=("validation", "test")) -> str:
    """A short text table of the model's metrics with the baselines beside it (means over series), each column
    with one number of decimals."""
    shown = {part: result.metrics[part] for part in parts if part in result.metrics}
    return scores_table(shown, ("model",) + result.beside, result.config.model, result.data.headline)


def scores_table(scores: dict[str, dict], names, model: str, headline: str) -> str:
    """The text table `tsattn fit` and `tsattn backtest` print: a row per forecaster (``names``: "model", labelled
    ``model``, then baseline keys), per part of ``scores`` ({part: {name: {metric: mean}}}; a part "" has no
    prefix) the ``headline`` metric first (:func:`tsattn.metrics.headline_metric`: RMSE, MAE, MASE for one series;
    sMAPE, MASE, RMSE for a panel; MASE, sMAPE, RMSE for a panel with values of 0 or below; MAE, sMAPE, RMSE where
    every series is constant there too); "n/a" where a forecaster has no score (e.g. a statistical baseline on the
    validation part)."""
    keys = {"rmse": ("rmse", "mae", "mase"), "smape": ("smape", "mase", "rmse"), "mase": ("mase", "smape", "rmse"),
            "mae": ("mae", "smape", "rmse")}[headline]
    header = [""] + [f"{part} {metric_label(m)}".strip() for part in scores for m in keys]
    labels = baseline_labels()
    rows = [[model if name == "model" else labels.get(name, name)] for name in names]
    for values in scores.values():
        for key in keys:
            texts = column_texts([(values.get(name) or {}).get(key) for name in names], absent="n/a")
            for row, text in zip(rows, texts):
                row.append(text)
    return text_table(header, rows)


def interval_table(result: RunResult, part: str = "test") -> str:
    """A short text table of interval metrics on the test part: the model's intervals and the baselines'."""
    test = result.metrics.get(part, {})
    # grouped by kind (every level's coverage, then widths, then MSIS), the order a text table reads best in
    hidden = "scaled_width-" if result.panel.n_series == 1 else "width-"  # a panel's widths: scaled, as MSIS
    columns = sorted((name for name in M.interval_metric_names(result.config.level) if not name.startswith(hidden)),
                     key=lambda name: (M.INTERVAL_KINDS + ("scaled_crps",)).index(name.split("-")[0]))
    source = interval_source(result.config.loss)
    labels = baseline_labels()
    keys = ("model", "model_native") + result.beside + tuple(f"{k}_native" for k in result.beside)
    rows, cells = [], []
    for key in keys:
        values = test.get(key)
        if not values or columns[0] not in values:
            continue
        if key == "model":
            label = f"{result.config.model} ({source})"
        elif key == "model_native":
            label = f"{result.config.model} (raw quantiles)"
        elif key.endswith("_native"):
            label = f"{labels.get(key[:-7], key)} (own)"
        else:
            label = f"{labels.get(key, key)} (conformal)"
        rows.append([label])
        cells.append([values.get(c) for c in columns])
    for j in range(len(columns)):
        for row, text in zip(rows, column_texts([values[j] for values in cells], absent="n/a")):
            row.append(text)
    return text_table([f"intervals ({part})"] + columns, rows)


def write_run(result: RunResult, out: Path, force: bool = False, units: str | None = None) -> dict[str, Path]:
    """Write a complete run directory atomically; returns the written files by role."""
    out = Path(out)
    config = result.config.to_dict()
    panel = result.panel
    with atomic_directory(out, force=force, kind="run", inputs=[result.config.csv]) as staging:
        artefacts.write_directory(staging, result.state)
        lengths = panel.lengths
        write_json(staging / "config.json", {
            "config": config,
            "model_params_resolved": result.config.resolved_model_params(),
            "windows": result.data.describe(),
            "season": result.season,
            "series": {"name": panel.name, "count": panel.n_series, "length_min": int(lengths.min()),
                       "length_max": int(lengths.max()), "start": str(panel.index.min()),
                       "end": str(panel.index.max()), "frequency": panel.freq},
            "versions": artefacts.versions(),
            "code": artefacts.code_digest(),  # which code made the run (io.code_digest), as compare's records say
        })
        write_json(staging / "metrics.json", {
            "model": result.config.model,
            "parameters": result.parameter_count,
            "epochs_run": result.epochs_run,
            "best_epoch": result.best_epoch,
            "fit_seconds": round(result.fit_seconds, 3),
            "predict_seconds": round(result.predict_seconds, 3),
            "season": result.season,
            "units": "series units unless under 'scaled'; with several series, means over series (medians "
                     "under 'median'); per-series values in metrics_by_series.csv",
            **result.metrics,
        })
        if len(result.history):  # a baseline (or auto choosing one) trains no epochs: no loss to show
            result.history.to_csv(staging / "history.csv")
        if result.state.choice is not None:  # model auto: every candidate's validation score, the chosen one marked
            result.state.choice.to_csv(staging / "choice.csv", index=False)
        predictions_frame(result).to_csv(staging / "predictions.csv", index=False)
        if panel.n_series > 1:
            by_series(result).to_csv(staging / "metrics_by_series.csv", index=False)
        importance = covariate_importance(result)
        if importance is not None:
            importance.assign(metric=importance.attrs["metric"], part=importance.attrs["part"],
                              intact=importance.attrs["baseline"]).to_csv(staging / "covariate_importance.csv",
                                                                          index=False)
            plots.plot_permutation_importance(importance, staging / "plots" / "covariate_importance.png",
                                              result.config.model)
        write_plots(result, staging / "plots", units=units)
    files = {"directory": out}
    out = out.resolve()
    for path in sorted(out.rglob("*")):
        if path.is_file():
            files[str(path.relative_to(out))] = path
    return files


def covariate_importance(result: RunResult, repeats: int = 5):
    """covariate_importance.csv of a run with covariates: :func:`tsattn.evaluation.permutation_importance` on its test
    part (else validation), on the headline metric; None without covariates, scored parts or an error to compare."""
    from .evaluation import has_covariates, origins_of, permutation_importance

    if not has_covariates(result.state):
        return None
    data = result.data
    part = next((p for p in ("test", "validation") if data.count(p)), None)
    if part is None:
        return None
    try:
        frame = permutation_importance(result.state, data.panel, origins_of(data, part)[0],
                                       data.headline, repeats, result.config.seed)
    except DataError:  # a perfect forecast: nothing to compare shuffles with
        return None
    frame.attrs["part"] = part
    return frame


def importance_line(path: Path) -> str | None:
    """One line of a run's covariate_importance.csv: each covariate's effect when shuffled."""
    if not Path(path).is_file():
        return None
    frame = pd.read_csv(path)
    if frame.empty:
        return None
    shares = ", ".join(f"{row.variable} " + ("n/a" if pd.isna(row.importance) else f"{100 * row.importance:+.1f}%")
                       for row in frame.itertuples())
    metric = metric_label(frame["metric"].iloc[0])
    return (f"Covariates shuffled one at a time, {frame['part'].iloc[0]} {metric}: {shares} "
            "(covariate_importance.csv)")


def by_series(result: RunResult) -> pd.DataFrame:
    """One row per (series, part, model) with a column per metric: metrics_by_series.csv. The series column is named
    as the data's id column, as in predictions.csv (:meth:`tsattn.state.FittedState.key_columns`; ``unique_id`` for a
    bundled dataset), so the two files join on it."""
    frame = result.metrics_frame
    keys = ["series", "part", "model"]
    wide = frame.pivot_table(index=keys, columns="metric", values="value", sort=False, dropna=False)
    # dropna=False keeps a metric that is undefined for a series (NaN) but also makes every (series, part, model)
    # combination: only those scored stay (a series without test windows has no test rows)
    wide = wide.loc[pd.MultiIndex.from_frame(frame[keys].drop_duplicates())].reset_index()
    wide.columns.name = None
    id_column = result.state.key_columns(set(wide.columns) - {"series"})[0]
    return wide.rename(columns={"series": id_column})


def sample_series(result: RunResult, part: str = "test") -> dict[str, int]:
    """The best, median and worst series of a part by the model's headline metric (sMAPE, or MASE for a panel with
    values of 0 or below; series numbers)."""
    frame = result.metrics_frame
    scores = frame[(frame["part"] == part) & (frame["model"] == "model") & (frame["metric"] == result.data.headline)]
    scores = scores.dropna(subset=["value"]).sort_values("value", kind="stable")
    if scores.empty:
        return {}
    positions = {"best": 0, "median": len(scores) // 2, "worst": len(scores) - 1}
    return {label: result.panel.number(scores["series"].iloc[i]) for label, i in positions.items()}


GRID_HISTORY = 120  # values drawn before a forecast in a panel's series grid, at least (more for long horizons)


def grid_history(result: RunResult) -> int:
    """How many values before its forecast series_grid.png draws of each series: :data:`GRID_HISTORY`, or 8 horizons
    or 4 seasons when more (an M3 monthly series, at most 144 values, is drawn whole; an hourly one of 504, 120)."""
    return max(GRID_HISTORY, 8 * result.data.horizon, 4 * result.season)


def write_plots(result: RunResult, directory: Path, units: str | None = None) -> list[Path]:
    """forecast.png (one series) or series_grid.png + smape_distribution.png (a panel; mase_distribution.png for a
    panel ranked on MASE), loss.png, and attention plots for attention models."""
    directory.mkdir(parents=True, exist_ok=True)
    panel = result.panel
    name = panel.name or result.config.dataset or "series"
    title = f"{result.config.model} on {name}"
    written = []
    if panel.n_series == 1:
        series = panel.series(0)
        units = units or f"{name} (series units)"
        test_start = validation_start = None
        if result.data.count("test"):
            test_start = series.index[int(result.data.target_positions("test").min())]
        if result.data.count("validation"):
            validation_start = series.index[int(result.data.target_positions("validation").min())]
        rmse = result.metrics.get("test", {}).get("model", {}).get("rmse")
        naive = result.metrics.get("test", {}).get("naive", {}).get("rmse")
        subtitle = f" — test RMSE {number_text(rmse)} (naive {number_text(naive)})" if rmse is not None and naive is not None else ""
        written.append(plots.plot_forecast(series, result.forecasts, directory / "forecast.png",
                                           f"{title}: actual vs {plots.forecast_kind(result.forecasts)}{subtitle}",
                                           units, test_start,
                                           validation_start, result.config.level))
    else:
        part = "test" if "test" in result.forecasts else "validation"
        metric = result.data.headline
        shown = metric_label(metric)
        chosen = sample_series(result, part)
        forecast = result.forecasts[part]
        panels = []
        for label, number in chosen.items():
            rows = forecast.series == number
            last = np.flatnonzero(rows)[-1]  # the last window of the series in this part
            positions = result.data.target_positions(part)[last]
            score = result.metrics_frame.query("part == @part and model == 'model' and metric == @metric and "
                                               "series == @panel.ids[@number]")["value"].iloc[0]
            quantiles = forecast.intervals.get("model")
            fans = None if not quantiles else {level: (low[last], high[last]) for level, (low, high)
                                               in bands(quantiles, result.config.level).items()}
            history = panel.series(number)
            # the values before the forecast, as many as show it (a long hourly series drew its 6 steps as a sliver)
            start = max(0, int(positions[0] - panel.offsets[number]) - grid_history(result))
            cut = "" if start == 0 else f"; the last {len(history) - start} of {len(history)} values"
            panels.append((f"{label}: {panel.ids[number]} ({shown} {score:.3g}{cut})", history.iloc[start:],
                           pd.Series(forecast.predicted[last], index=panel.index[positions]),
                           {key: pd.Series(values[last], index=panel.index[positions])
                            for key, values in forecast.baselines.items() if key != "linear"}, fans))
        written.append(plots.plot_series_grid(panels, directory / "series_grid.png",
                                              f"{title}: {part} forecasts of the best, median and worst series"))
        frame = result.metrics_frame
        scores = frame[(frame["part"] == part) & (frame["metric"] == metric)]
        distributions = {(result.config.model if key == "model" else key.replace("_", "-")):
                         scores.loc[scores["model"] == key, "value"].dropna().to_numpy()
                         for key in ("model",) + baseline_keys(result)}
        scored = len(distributions[result.config.model])  # MASE is undefined on a series constant before the part
        count = f"{panel.n_series} series" if scored == panel.n_series else f"{scored} of {panel.n_series} series"
        written.append(plots.plot_distribution(distributions, directory / f"{metric}_distribution.png",
                                               f"{title}: per-series {part} {shown} ({count})",
                                               plots.metric_axis(metric)))
    if len(result.history):
        written.append(plots.plot_loss(result.history, directory / "loss.png",
                                       f"{title}: training and validation loss", result.config.loss))
    written += write_attention_plots(result.model, result.data, directory, title)
    return [path for path in written if path is not None]  # a figure that could not be drawn was warned about


def write_attention_plots(model, data, directory: Path, title: str, max_windows: int = 2000) -> list[Path]:
    """attention.png (weight per lag; for the transformer, the last step's attention in the last block, mean
    over heads) and, for the transformer, attention_heads.png and positional_encoding.png; for tft,
    attention_steps.png (each forecast step's weights) and variable_importance.png."""
    part = "test" if data.count("test") else "train"
    X = data.X(part)[-max_windows:]
    weights = read_attention(model, X)
    if weights is None:
        return []
    labels = data.target_index(part)[-max_windows:]
    if data.panel.n_series > 1:
        ids = np.asarray(data.panel.ids, dtype=object)[data.series_numbers(part)[-max_windows:]]
        labels = [f"{sid} {plots.time_label(label)}" for sid, label in zip(ids, labels)]
    written = []
    if weights[0].ndim == 2:  # attention-rnn: (windows, window)
        written.append(plots.plot_attention_rnn(weights[0], labels, directory / "attention.png",
                                                f"{title}: attention over the window ({part} part)"))
    elif patches_layer(model) is not None:  # patch-transformer: (windows, heads, patches, patches)
        written.append(plots.plot_attention_rnn(attention_per_lag(weights, model), labels,
                                                directory / "attention.png",
                                                f"{title}: attention each patch receives ({part} part)\nlast "
                                                "block, mean over heads and attending patches, shared by the "
                                                "patch's steps"))
        layer = first_member(model).get_layer("positional_encoding")
        written.append(plots.plot_positional_encoding(
            layer.encoding_matrix(), directory / "positional_encoding.png",
            f"Positional encoding ({layer.mode}), patches x d_model"))
    elif fusion_layer(model) is not None:  # tft: (windows, horizon, window + horizon)
        written.append(plots.plot_attention_rnn(attention_per_lag(weights, model), labels, directory / "attention.png",
                                                f"{title}: attention over the window ({part} part)\nmean over heads "
                                                "and forecast steps, as a share of the weight on the window"))
        written.append(plots.plot_fusion_steps(weights[-1], directory / "attention_steps.png",
                                               f"{title}: each forecast step's attention ({part} part)"))
        names = selection_names(data.layout or (0, 0, 0), data.covariates)
        written.append(plots.plot_variable_importance(
            variable_importance(model, X, names), directory / "variable_importance.png",
            f"{title}: variable importance ({part} part)"))
    else:  # transformer: per block (windows, heads, window, window)
        # the last step's attention in the last block, mean over heads (what last-step pooling reads), drawn
        # like attention-rnn's so the two models' attention can be compared lag by lag
        written.append(plots.plot_attention_rnn(attention_per_lag(weights), labels,
                                                directory / "attention.png",
                                                f"{title}: last step's attention over the window, last block, mean "
                                                f"of heads ({part} part)"))
        chosen = len(X) - 1
        written.append(plots.plot_transformer_heads(
            [w[chosen] for w in weights], directory / "attention_heads.png",
            f"{title}: attention of each head for the window forecasting {plots.time_label(labels[chosen])}"))
        layer = first_member(model).get_layer("positional_encoding")
        written.append(plots.plot_positional_encoding(
            layer.encoding_matrix(), directory / "positional_encoding.png",
            f"Positional encoding ({layer.mode}), window x d_model"))
    return [path for path in written if path is not None]

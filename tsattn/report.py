"""Reporting of comparisons: records -> results table -> summary over seeds -> figures, Markdown and HTML.

A record is one finished run of a comparison (what :mod:`tsattn.compare` stores in runs/*.json); everything
here reads records and writes nothing but report files, so a new experiment (a tuner, a benchmark) can
report through the same tables and the one verdict (:func:`tsattn.verdicts.comparison_verdict`).
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd

from .checks import few_names
from .io import atomic_file, metric_label, number_text
from .metrics import MAE_REASON, MASE_REASON, headline_metric, interval_metric_names, is_interval_metric
from .verdicts import BASELINE_ROWS, comparison_verdict

METRICS = ("rmse", "mae", "mse", "mape", "smape", "mase")


def results_table(records: list[dict]) -> pd.DataFrame:
    """One row per run, plus one row per dataset for each baseline (same targets, no seed)."""
    rows = []
    baselines_done = set()
    for record in records:
        row = {"dataset": record["dataset"], "model": record["model"], "seed": record["seed"],
               "series": record.get("series", 1), "headline": record_headline(record),
               "parameters": record["parameters"], "epochs_run": record["epochs_run"],
               "fit_seconds": round(record["fit_seconds"], 3), "predict_seconds": round(record["predict_seconds"], 4),
               "best_epoch": best_epoch(record)}
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
                        "series": record.get("series", 1), "headline": record_headline(record), "parameters": 0,
                        "epochs_run": 0, "fit_seconds": 0.0, "predict_seconds": 0.0, "best_epoch": None}
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

def best_epoch(record: dict):
    """The epoch with the lowest validation loss (1-based), or None without one."""
    if record.get("best_epoch") is not None:
        return int(record["best_epoch"])
    losses = (record.get("history") or {}).get("val_loss")
    if not losses:
        return None
    values = np.asarray([np.nan if v is None else v for v in losses], dtype=np.float64)
    return int(np.nanargmin(values)) + 1 if np.isfinite(values).any() else None


def interval_metrics(record: dict) -> list[str]:
    """The interval metrics a run scored (coverage, width and MSIS per level, scaled CRPS), or none."""
    return interval_metric_names(record["config"].get("level"))

def record_headline(record: dict) -> str:
    """The metric a run's dataset is ranked on (:func:`tsattn.metrics.headline_metric`): RMSE for one series (its
    own units); for a panel, where RMSE would add up series of different scales, sMAPE (mean over series,
    scale-free), or MASE where the values before the test part include 0 or below. A record written before runs
    kept it (a resumed comparison) was ranked on sMAPE."""
    return record.get("headline") or headline_metric(record.get("series", 1))

def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds per (dataset, model); rank on the headline metric (mean test
    RMSE for one series, mean test sMAPE (or MASE, :func:`record_headline`) over series for a panel) and on test
    RMSE; ratio to naive."""
    rows = []
    # one metric per dataset: a comparison resumed from records written before they kept theirs (then sMAPE for a
    # panel) ranks every run of a dataset on MASE once one of them says so
    ranked = results.groupby("dataset", sort=False)["headline"].agg(
        lambda names: "mase" if (names == "mase").any() else names.iloc[0]) if "headline" in results else {}
    for (dataset, model), group in results.groupby(["dataset", "model"], sort=False):
        series = int(group["series"].max()) if "series" in group else 1
        row = {"dataset": dataset, "model": model, "seeds": int(group["seed"].notna().sum()), "series": series,
               "headline": f"test_{ranked[dataset] if dataset in ranked else headline_metric(series)}",
               "parameters": int(group["parameters"].iloc[0])}
        intervals = [c for c in group.columns if c.startswith("test_") and is_interval_metric(c[len("test_"):])]
        for column in ["test_rmse", "test_mae", "test_mase", "test_smape", "validation_rmse", "fit_seconds",
                       "epochs_run", "best_epoch"] + intervals:
            values = pd.to_numeric(group[column], errors="coerce") if column in group else pd.Series([np.nan])
            row[f"{column}_mean"] = float(values.mean())
            row[f"{column}_std"] = float(values.std(ddof=1)) if len(values.dropna()) > 1 else 0.0
        spread = pd.to_numeric(group[row["headline"]], errors="coerce").dropna()
        row["headline_min"], row["headline_max"] = (float(spread.min()), float(spread.max())) if len(spread) \
            else (np.nan, np.nan)
        rows.append(row)
    summary = pd.DataFrame(rows)
    # a model with no score (seasonal-naive where no series has a season before its test part) ranks last
    summary["rank_test_rmse"] = summary.groupby("dataset")["test_rmse_mean"].rank(method="min", na_option="bottom") \
        .astype(int)
    summary["headline_mean"] = [row[f"{row['headline']}_mean"] for _, row in summary.iterrows()]
    summary["rank"] = summary.groupby("dataset")["headline_mean"].rank(method="min", na_option="bottom").astype(int)
    naive = summary[summary["model"] == "naive"].set_index("dataset")["test_rmse_mean"]
    summary["ratio_to_naive"] = summary["test_rmse_mean"] / summary["dataset"].map(naive)
    naive_headline = summary[summary["model"] == "naive"].set_index("dataset")["headline_mean"]
    summary["headline_ratio_to_naive"] = summary["headline_mean"] / summary["dataset"].map(naive_headline)
    return summary.sort_values(["dataset", "rank"], kind="stable").reset_index(drop=True)

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
    label = dataset_label(dataset)
    if metric == "test_rmse":
        figures = [("Test RMSE by model (mean ± std over seeds; lines: baselines; the axis spans the figures, not from 0)", plots.plot_bars(
            list(neural["model"]), neural["test_rmse_mean"], neural["test_rmse_std"],
            figures_dir / f"{safe}_rmse.png", f"{label}: test RMSE over {int(neural['seeds'].max())} seed(s)",
            f"test RMSE ({units})", {"naive": naive, "linear AR": linear}))]
    else:  # every baseline the comparison scored, the statistical ones too (they often beat the networks)
        name = metric[len("test_"):]  # smape, or mase (mae) for a panel with values of 0 or below
        shown = metric_label(name)
        reference = {label: float(table.loc[table["model"] == label, f"{metric}_mean"].iloc[0])
                     for label in BASELINE_ROWS.values() if (table["model"] == label).any()
                     and table.loc[table["model"] == label, f"{metric}_mean"].notna().any()}
        figures = [(f"Test {shown} by model (mean over series; mean ± std over seeds; lines: baselines; the axis spans "
                    "the figures)",
                    plots.plot_bars(list(neural["model"]), neural[f"{metric}_mean"], neural[f"{metric}_std"],
                                    figures_dir / f"{safe}_{name}.png",
                                    f"{label}: test {shown} over {int(neural['seeds'].max())} seed(s)",
                                    f"test {plots.metric_axis(name)}, mean over series", reference))]
    if mine[0].get("test"):
        index = _parse_index(mine[0]["test"]["index"])
        shown = slice(-min(len(index), plots.OVERLAY), None)  # the last targets: a few dozen points stay readable
        actual = pd.Series(mine[0]["test"]["actual"], index=index)[shown]
        overlay = {r["model"]: pd.Series(r["test"]["predicted"], index=index)[shown] for r in mine
                   if r["seed"] == first_seed}
        overlay["naive"] = pd.Series(mine[0]["test"]["baselines"]["naive"], index=index)[shown]
        what = f"last {len(actual)} of {len(index)}" if len(actual) < len(index) else f"all {len(index)}"
        kind = mine[0]["test"].get("kind", "one-step forecasts")  # or "the 12-step forecast" of a one-window part
        figures.append((f"Test-part {kind} of every model, {what} targets (seed {first_seed})",
                        plots.plot_overlay(actual, overlay, figures_dir / f"{safe}_forecasts.png",
                                           f"{label}: the {what} test targets and every model's forecast "
                                           f"(seed {first_seed})", units)))
    elif all(metric[len("test_"):] in (r.get("by_series") or {}) for r in mine):  # (older records lack per-series MAE)
        first = [r for r in mine if r["seed"] == first_seed]
        name = metric[len("test_"):]
        distributions = {r["model"]: [v for v in r["by_series"][name]["model"] if v is not None] for r in first}
        for key, row in BASELINE_ROWS.items():  # (not `label`: the dataset's, in the titles below)
            if key in first[0]["by_series"][name]:
                distributions[row] = [v for v in first[0]["by_series"][name][key] if v is not None]
        figures.append((f"Per-series test {metric_label(name)} of every model and baseline (seed {first_seed})",
                        plots.plot_distribution(distributions, figures_dir / f"{safe}_{name}_distribution.png",
                                                f"{label}: per-series test {metric_label(name)} (seed {first_seed}, "
                                                f"{mine[0]['series']} series)", plots.metric_axis(name))))
    calibration = calibration_points(table)
    if calibration:
        figures.append(("Calibration: the share of test values inside each model's intervals against the nominal level "
                        "(mean over seeds)",
                        plots.plot_calibration(calibration, figures_dir / f"{safe}_calibration.png",
                                               f"{label}: interval calibration (test part)")))
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
                                                        f"{label}, {record['model']}: "
                                                        f"{record['test'].get('kind', 'one-step forecasts')} (test) "
                                                        "and intervals", [fans], history_label="actual")))
    histories = {r["model"]: pd.DataFrame(r["history"], index=pd.RangeIndex(1, len(r["history"]["loss"]) + 1))
                 for r in mine if r["seed"] == first_seed}
    figures.append((f"Loss curves (seed {first_seed})", plots.plot_loss_curves(
        histories, figures_dir / f"{safe}_loss.png", f"{label}: loss per epoch (seed {first_seed})",
        [r["config"].get("loss", "mse") for r in mine if r["seed"] == first_seed])))
    for record in mine:
        if record["seed"] != first_seed or not record["attention"]:
            continue
        attention = record["attention"]
        if attention["kind"] == "rnn":
            figures.append((f"{record['model']}: attention weights over the test windows (seed {first_seed})",
                            plots.plot_attention_rnn(np.asarray(attention["weights"]),
                                                     attention.get("labels") or record["test"]["index"],
                                                     figures_dir / f"{safe}_{record['model']}_attention.png",
                                                     f"{label}, {record['model']}: attention (test part)")))
        else:
            figures.append((f"{record['model']}: attention of each head for the last test window (seed {first_seed})",
                            plots.plot_transformer_heads([np.asarray(b) for b in attention["blocks"]],
                                                         figures_dir / f"{safe}_{record['model']}_heads.png",
                                                         f"{label}, {record['model']}: head maps, window "
                                                         f"forecasting {plots.time_label(attention['window_label'])}")))
    return figures

def _parse_index(labels: list[str]) -> pd.Index:
    try:
        return pd.Index([int(x) for x in labels])
    except ValueError:
        return pd.DatetimeIndex(pd.to_datetime(labels))

SUMMARY_COLUMNS = [("model", "model"), ("rank", "rank"), ("headline_range", "seed range"),
                   ("test_rmse", "test RMSE"), ("test_mae", "test MAE"), ("test_mase", "test MASE"),
                   ("test_smape", "test sMAPE"), ("validation_rmse", "validation RMSE"),
                   ("headline_ratio_to_naive", "ratio to naive"), ("best_epoch", "best epoch"), ("seeds", "seeds"),
                   ("parameters", "parameters"), ("fit_seconds", "fit s")]
SCALE_DEPENDENT = ("test_rmse", "test_mae", "validation_rmse")  # means over series of different sizes: not shown


BRIEF_LEFT_OUT = ("validation_rmse", "best_epoch", "parameters")  # in the report, not in the terminal's table


def summary_columns(headline_metric: str, panel: bool, brief: bool = False) -> list[tuple[str, str]]:
    """The summary table's columns for a dataset: the model, its rank, the metric it is ranked on, the seed range
    and ratio to naive first (what a phone shows without scrolling), then the rest; a panel leaves out the
    metrics in series units, whose means over series of different sizes say little. ``brief`` (the terminal's
    table) leaves out the validation score, best epoch and parameter count too."""
    first = ["model", "rank", headline_metric, "headline_range", "headline_ratio_to_naive"]
    labels = dict(SUMMARY_COLUMNS)
    rest = [key for key, _ in SUMMARY_COLUMNS if key not in first and not (panel and key in SCALE_DEPENDENT)
            and not (brief and key in BRIEF_LEFT_OUT)]
    return [(key, labels[key]) for key in first + rest]


def ranked_on_text(table: pd.DataFrame) -> str:
    """What a dataset's summary rows are ranked on, e.g. "test sMAPE, mean over series"; for MASE, why not sMAPE."""
    return {"test_rmse": "test RMSE", "test_smape": "test sMAPE, mean over series",
            "test_mase": f"test MASE, mean over series ({MASE_REASON}, where sMAPE misleads)",
            "test_mae": f"test MAE, mean over series ({MAE_REASON})"}[table["headline"].iloc[0]]


def summary_table(table: pd.DataFrame, brief: bool = False) -> tuple[list[str], list[list[str]]]:
    """A dataset's summary rows as the report and `tsattn compare` show them: the header's labels and each row's
    cells as text (``brief``: the terminal's columns, :func:`summary_columns`)."""
    columns = summary_columns(table["headline"].iloc[0], int(table["series"].iloc[0]) > 1, brief)
    rows = [_cells(row, columns, means) for (_, row), means in zip(table.iterrows(), _column_means(table, columns))]
    at = [key for key, _ in columns].index(table["headline"].iloc[0])
    for cells, (_, row) in zip(rows, table.iterrows()):
        if row["headline_mean"] != row["headline_mean"]:  # no score (ranked last): said, not a blank
            cells[at] = "n/a"
    return [label for _, label in columns], rows

def _interval_columns(table: pd.DataFrame) -> list[str]:
    return [c[len("test_"):-len("_mean")] for c in table.columns
            if c.startswith("test_") and c.endswith("_mean") and is_interval_metric(c[len("test_"):-len("_mean")])
            and table[c].notna().any()]

def mean_spread(mean, std, seeds, shown: str | None = None) -> str:
    """"13.46 ± 0.35": the mean over seeds and the standard deviation (none for one seed; a spread that is only
    floating-point noise, below a billionth of the mean, is 0)."""
    if mean != mean:
        return ""
    text = shown or number_text(mean)
    if seeds > 1 and std == std:
        text += f" ± {number_text(std if abs(std) > 1e-9 * abs(mean) else 0.0, 2)}"
    return text


def interval_table(table: pd.DataFrame) -> list[list[str]]:
    """Header and rows (text) of a dataset's interval metrics, means over seeds; empty without levels. A panel
    shows widths scaled by each series' in-sample MAE (as MSIS is), one series its width in series units."""
    panel = int(table["series"].max()) > 1
    columns = [c for c in _interval_columns(table) if not c.startswith("scaled_width-" if not panel else "width-")]
    if not columns:
        return []
    names = {"coverage": "coverage {}%", "width": "width {}%", "scaled_width": "scaled width {}%", "msis": "MSIS {}%"}
    rows = [["model"] + ["scaled CRPS" if c == "scaled_crps" else names[c.split("-")[0]].format(c.split("-", 1)[1])
                         for c in columns]]
    for _, row in table.iterrows():
        cells = [row["model"]]
        for column in columns:
            mean, std = row[f"test_{column}_mean"], row[f"test_{column}_std"]
            cells.append(mean_spread(mean, std, row["seeds"]))
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

TRAINED_ONLY = ("seeds", "parameters", "fit_seconds", "best_epoch", "headline_range")  # blank on baseline rows

def _cells(row, columns=SUMMARY_COLUMNS, means: dict | None = None) -> list[str]:
    """One summary row as text: 4 significant digits (never e-notation; ``means``: key -> this row's mean as its
    column writes it, one number of decimals down a column), ± the seed spread at 2, the headline's range over
    seeds, blanks where nothing applies."""
    cells = []
    baseline = row["model"] in BASELINE_ROWS.values()
    for key, _ in columns:
        if baseline and key in TRAINED_ONLY:
            cells.append("")
        elif key == "headline_range":
            cells.append(f"{number_text(row['headline_min'])}–{number_text(row['headline_max'])}"
                         if row["seeds"] > 1 and row["headline_min"] == row["headline_min"] else "")
        elif key == "best_epoch":
            mean = row["best_epoch_mean"]
            cells.append("" if mean != mean else f"{mean:.0f}" if float(mean).is_integer() else f"{mean:.1f}")
        elif f"{key}_mean" in row:
            mean, std = row[f"{key}_mean"], row[f"{key}_std"]
            cells.append(mean_spread(mean, std, row["seeds"], (means or {}).get(key)))
        elif key == "headline_ratio_to_naive":
            cells.append(f"{row[key]:.3f}" if row[key] == row[key] else "")
        elif key == "parameters":
            cells.append(f"{int(row[key]):,}")
        else:
            cells.append(str(row[key]))
    return cells

def write_report(out: Path, spec, records: list[dict], results: pd.DataFrame,
                 summary: pd.DataFrame, failures: list[dict] = ()) -> tuple[Path, Path]:
    """report.md (images in figures/) and a self-contained report.html (images inlined), from the templates of
    :func:`write_document`."""
    from .io import versions

    settings = ", ".join(f"{key} = {_setting_text(value)}" for key, value in spec.settings.items()) \
        if spec.settings else "the defaults"
    methods = ("Every model trains through the same harness on the same chronological split; the scaler is fit on "
               "the training part only. Baselines are scored on the same test targets: naive (last value), seasonal "
               "naive (value one season earlier) and linear (least-squares autoregression on the same window). "
               "Metrics are in the series' units; ± is the standard deviation over seeds.")
    meta = (("Models", ", ".join(spec.models)), ("Seeds", ", ".join(map(str, spec.seeds))), ("Settings", settings),
            ("Versions", ", ".join(f"{name} {version}" for name, version in versions().items())))
    # the verdict first (each dataset's, above its table and figures); how the comparison was made at the end
    blocks = []
    for source in spec.sources:
        dataset = source.name
        table = summary[summary["dataset"] == dataset]
        if table.empty:  # every run on it failed: listed under "Failed runs"
            continue
        best_value = table["headline_mean"].min()  # rank 1, network or baseline: the row the verdict names
        header, rows = summary_table(table)
        blocks += [{"kind": "h2", "text": dataset_label(dataset)},
                   {"kind": "verdict", "items": comparison_verdict(results, summary, dataset, records)},
                   {"kind": "p", "text": f"{int(table['series'].iloc[0])} series{_left_out_text(records, dataset)}"
                                         f"{tested_on_text(records, dataset)}; "
                                         f"ranked on {ranked_on_text(table)}; ratio to naive on the same "
                                         "metric."},
                   {"kind": "table", "header": header, "rows": rows,
                    "best": [row["headline_mean"] == best_value for _, row in table.iterrows()],
                    "label": 0}]
        interval_rows = interval_table(table)
        if interval_rows:
            from .intervals import interval_source

            source = f"{interval_source(spec.settings.get('loss'))}, calibrated on each model's validation forecasts"
            blocks += [{"kind": "p", "lead": "Prediction intervals",
                        "text": f"(test part; networks: {source}; baselines: conformal). Coverage is the share of "
                                "test targets inside the interval (nominal: the level); MSIS is M4's scaled interval "
                                "score and scaled CRPS is approximated from the interval bounds and the forecast "
                                "(lower is better)."},
                       {"kind": "table", "header": interval_rows[0], "rows": interval_rows[1:], "label": 0}]
        from .plots import PHONE_RENDERS, phone_renders

        with phone_renders():  # each figure also at a phone's width, its text legible at 390 px
            drawn = _figures(out, dataset, records, summary)
            phones = dict(PHONE_RENDERS)
        for caption, path in drawn:
            if path is not None:  # None: could not be drawn (warned)
                phone, smallest = phones.get(str(path), (None, None))
                blocks.append({"kind": "figure", "caption": caption, "path": path, "link": f"figures/{path.name}",
                               "phone": phone, "smallest": smallest})
    if failures:
        blocks += [{"kind": "h2", "text": "Failed runs"},
                   {"kind": "p", "text": f"{len(failures)} run(s) failed and are left out of every table above; "
                                         "rerunning the comparison with the same --out runs them again."},
                   {"kind": "list", "items": [f"{f['dataset']} {f['model']} seed {f['seed']}: {f['error']}"
                                              for f in failures]}]
    blocks += [{"kind": "h2", "text": "How this was made"}, {"kind": "meta", "items": meta},
               {"kind": "p", "text": methods},
               {"kind": "h2", "text": "Files", "markdown_only": True},
               {"kind": "p", "markdown_only": True, "text": "results.csv (one row per run), summary.csv (mean/std over "
                "seeds), comparison.json (the configuration: rerun with the same --out to resume, or with "
                "tsattn.compare(**spec))."}]
    return write_document(out, "tsattn comparison report", blocks, page_title="tsattn comparison")


def _left_out_text(records: list[dict], dataset: str) -> str:
    """The clause after a dataset's series count naming its series that no run scored (too short for a window in
    the test part: forecast, not scored), e.g. ", of which 2 are too short ... (forecast, not scored: a, b)"; "" if
    none."""
    left = sorted({str(name) for record in records if record["dataset"] == dataset
                   for name in record.get("series_left_out") or ()})
    if not left:
        return ""
    return (f", of which {len(left)} {'is' if len(left) == 1 else 'are'} too short for a test window (forecast, "
            f"not scored: {few_names(left)})")


def tested_on_text(records: list[dict], dataset: str) -> str:
    """", tested on the last 8 values of each" for a panel whose runs say which values their test figures are on
    (records written before they said it: ""); one series' test part is told by its own figures."""
    mine = [record for record in records if record["dataset"] == dataset]
    parts = {record.get("test_part") for record in mine} - {None, ""}
    panel = any(record.get("series", 1) > 1 for record in mine)
    return f", tested on {parts.pop()}" if panel and len(parts) == 1 else ""


def _column_means(table: pd.DataFrame, columns) -> list[dict]:
    """Per row, each mean column's text with one number of decimals down the column (:func:`column_texts`)."""
    from .io import column_texts

    rows = [{} for _ in range(len(table))]
    for key, _ in columns:
        if f"{key}_mean" in table:
            for row, text in zip(rows, column_texts(table[f"{key}_mean"].tolist())):
                row[key] = text
    return rows


def dataset_label(name: str) -> str:
    """A dataset's name as a reader reads it: ``m3_40:y`` (a CSV's file stem and value column) becomes
    "m3_40 (column y)"; a bundled dataset's name is kept."""
    stem, colon, column = str(name).rpartition(":")
    return f"{stem} (column {column})" if colon and stem and column else str(name)


def _template(name: str):
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(loader=PackageLoader("tsattn", "templates"), autoescape=select_autoescape(["html.j2"]),
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return environment.get_template(name)


def _blocks(blocks: list, out: Path) -> list[dict]:
    """Blocks as the templates read them: the short tuple form (``("p", text)``, ``("table", header, rows)``,
    ``("figure", caption, file in out)``...) as dicts, figures read and inlined (a missing one left out), numbered."""
    from .plots import DPI, PHONE_DPI

    shaped, number = [], 0
    for block in blocks:
        if isinstance(block, tuple):
            kind = block[0]
            if kind in ("h2", "p"):
                block = {"kind": kind, "text": block[1]}
            elif kind in ("list", "verdict"):
                block = {"kind": kind, "items": list(block[1])}
            elif kind == "table":
                block = {"kind": "table", "header": block[1], "rows": block[2], "label": 0}
            elif kind == "figure":
                block = {"kind": "figure", "caption": block[1], "path": Path(out) / block[2], "link": block[2]}
            else:
                raise ValueError(f"unknown report block {kind!r}")
        block = dict(block)
        if block["kind"] not in ("h2", "p", "list", "verdict", "table", "figure", "meta"):
            raise ValueError(f"unknown report block {block['kind']!r}")
        if block["kind"] == "figure":
            path = Path(block["path"])
            if not path.is_file():
                continue
            number += 1
            phone, smallest = block.get("phone"), block.get("smallest")
            block.update(number=number, png=base64.b64encode(path.read_bytes()).decode("ascii"),
                         phone=None if phone is None else base64.b64encode(Path(phone).read_bytes()).decode("ascii"))
            if phone is not None:
                Path(phone).unlink()  # inlined in the HTML; report.md links the full-size figure
            if smallest is not None:
                block.update(text_px=f"{smallest * DPI / PHONE_DPI:.1f}", phone_text_px=f"{smallest:.1f}")
        shaped.append(block)
    return shaped


def write_document(out: Path, title: str, blocks: list, page_title: str | None = None) -> tuple[Path, Path]:
    """report.md and a self-contained report.html (figures inlined, each with its phone-sized render where the
    block names one) from blocks, through one pair of Jinja templates (tsattn/templates/report.{md,html}.j2) for
    every report: ``h2``, ``p`` (an optional bold ``lead``), ``list``, ``verdict`` (its lines, first on the page),
    ``table`` (``header``, ``rows`` of text cells, ``best`` row flags, ``label``: the text column), ``figure``
    (``caption``, ``path``, ``link`` from report.md) and ``meta`` (label, text pairs); a block with
    ``markdown_only`` is left out of the page. The short tuple forms ``("p", text)``, ``("table", header, rows)``,
    ``("figure", caption, file in out)`` are read too."""
    shaped = _blocks(blocks, out)
    markdown = _template("report.md.j2").render(title=title, blocks=shaped)
    page = _template("report.html.j2").render(title=title, page_title=page_title or title, css=REPORT_CSS,
                                              blocks=[b for b in shaped if not b.get("markdown_only")])
    with atomic_file(out / "report.md") as temporary:
        temporary.write_text(markdown.rstrip("\n") + "\n", encoding="utf-8")
    with atomic_file(out / "report.html") as temporary:
        temporary.write_text(page, encoding="utf-8")
    return out / "report.md", out / "report.html"


def _setting_text(value) -> str:
    """A setting as people write it: lists comma-separated (theta, ets), tables as key: value pairs."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting_text(v) for v in value) or "none"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_setting_text(v)}" for k, v in value.items()) + "}"
    return str(value)


# The report's style, checked in Chromium at 1280 px and 390 px (tests/test_report_browser.py): the page never
# scrolls sideways, wide tables scroll inside their box with a shadow at the edge that has more (and the model
# column stays put), numbers do not wrap, figures fit the page and open at full size on a click, text >= 12 px.
REPORT_CSS = (
    "html{-webkit-text-size-adjust:100%}"
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.45;"
    "max-width:1400px;margin:1.5em auto;padding:0 1em;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.3em;margin-top:1.8em;border-bottom:1px solid #ddd}h3{font-size:1.05em}"
    ".meta{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;font-size:.9em}"
    ".meta dt{font-weight:bold}.meta dd{margin:0;overflow-wrap:anywhere}"
    ".scroll{overflow-x:auto;max-width:100%;margin:1em 0;"
    "background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)) left/40px 100% no-repeat local,"
    "linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) right/40px 100% no-repeat local,"
    "linear-gradient(to right,rgba(0,0,0,.18),rgba(0,0,0,0)) left/14px 100% no-repeat scroll,"
    "linear-gradient(to left,rgba(0,0,0,.18),rgba(0,0,0,0)) right/14px 100% no-repeat scroll}"
    "table{border-collapse:collapse;font-size:14px}"
    "td,th{border:1px solid #ccc;padding:4px 8px;white-space:nowrap}"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.text,th.text{text-align:left}"
    "th{background:#f2f2f2}tr.best td{background:#e6f4ea;font-weight:bold}"
    "td.text{position:sticky;left:0;background:#fff}tr.best td.text{background:#e6f4ea}th.text{position:sticky;left:0}"
    ".verdict{background:#f8f8f8;padding:.8em;border-left:4px solid #4a8}.verdict ul{margin:.3em 0;padding-left:1.2em}"
    ".fig{margin:.5em 0 1.5em}.fig img{max-width:100%;height:auto;cursor:zoom-in;display:block}"
    ".fig.full{overflow-x:auto}.fig.full img{max-width:none;cursor:zoom-out}"
    "figcaption{font-size:13px;color:#555}"
    "@media (max-width:600px){body{padding:0 .6em;margin:.8em auto}table{font-size:13px}td,th{padding:3px 6px}}"
)


RECORD_KEYS = {"dataset": str, "model": str, "seed": int, "config": dict, "parameters": int, "epochs_run": int,
               "fit_seconds": (int, float), "predict_seconds": (int, float), "metrics": dict, "history": dict}


def is_complete_record(record: dict) -> bool:
    """A run record of the right shape (a valid JSON file of another shape is run again, not trusted)."""
    if not all(isinstance(record.get(key), kind) for key, kind in RECORD_KEYS.items()):
        return False
    test = record["metrics"].get("test")
    return isinstance(test, dict) and isinstance(test.get("model"), dict) and isinstance(test.get("naive"), dict)

"""Every verdict tsattn prints, in one place: plain-language conclusions that read the figures and never
overstate them.

- :func:`run_verdict`: one run (`tsattn fit`): the model against naive and the linear AR (one series), or mean
  sMAPE (MASE where the panel has values of 0 or below) and series won against each baseline (a panel).
- :func:`interval_verdict`: how often a run's intervals covered the test values, against each level.
- :func:`comparison_verdict`: a comparison's conclusions for one dataset, with the seed-to-seed spread and,
  for a panel, paired per-series tests against the runner-up and the baselines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .baselines import STATISTICAL_LABELS, baseline_labels
from .checks import counted, few_names
from .intervals import check_levels, interval_source, level_name
from .io import metric_label, number_text
from .metrics import MAE_REASON, MASE_REASON, paired_comparison

BASELINE_ROWS = baseline_labels()  # key -> row label (naive, seasonal naive, linear, then the statistical ones)


def p_text(p_value: float) -> str:
    """A p-value as a statement: "= 0.034", "< 0.001"."""
    return "< 0.001" if p_value < 0.001 else f"= {number_text(p_value, 2)}"


def run_verdict(result) -> str | None:
    """The closing line of `tsattn fit` for a run (:class:`tsattn.harness.RunResult`), or None without a test part."""
    test = result.metrics.get("test")
    seeded = not result.config.is_baseline  # a baseline gives the same forecasts under every seed
    if result.data.headline != "rmse" and test:
        return panel_verdict(result, seeded)
    if test and test["model"]["rmse"] is not None and test["naive"]["rmse"] is not None:
        return single_verdict(test, result.data.window, seeded, naive_model=result.config.model == "naive",
                              covariates=result.data.covariates is not None, horizon=result.data.horizon)
    return None


ONE_SEED = " One seed: compare several before concluding (tsattn compare)."


def single_verdict(test: dict, window: int, seeded: bool = True, naive_model: bool = False,
                   covariates: bool = False, horizon: int = 1) -> str:
    """One line for one series: test RMSE against the naive forecast (and the linear AR, an ARX model with
    ``covariates``) and how many forecasts it rests on (``horizon`` steps from each origin); ``naive_model``: the
    model is the naive forecast itself, the yardstick, not something measured against it."""
    model_rmse, naive_rmse = test["model"]["rmse"], test["naive"]["rmse"]
    linear = test["linear"]["rmse"]
    linear_text = f"{number_text(linear)}" if linear is not None else "n/a"
    if naive_model:
        head = (f"Test RMSE {number_text(model_rmse)}: the naive last-value forecast itself, the yardstick every "
                "other model's verdict is measured against")
    elif naive_rmse == 0:
        head = (f"Test RMSE {number_text(model_rmse)}; the naive last-value forecast is exact on the test part (RMSE 0: "
                "the series does not change there), so no model can beat it")
    else:
        change = (model_rmse / naive_rmse - 1) * 100
        verdict = "beats" if model_rmse < naive_rmse else "does NOT beat"
        head = (f"Test RMSE {number_text(model_rmse)} {verdict} the naive last-value forecast ({number_text(naive_rmse)}, "
                f"{change:+.1f}%){_resting_on(test['model'].get('count'), horizon)}")
    linear_name = f"linear ARX({window}, with the covariates)" if covariates else f"linear AR({window})"
    return f"{head}; {linear_name} {linear_text}." + (ONE_SEED if seeded else "")


def _resting_on(count: int | None, horizon: int) -> str:
    """What one series' verdict rests on: " over 1 test value" (a 6-value series says little), " over 114 forecasts
    (19 origins x 6 steps)" with a horizon; "" when the count is unknown."""
    if not count:
        return ""
    if horizon == 1:
        return f" over {counted(count, 'test value')}"
    return f" over {count} forecasts ({counted(count // horizon, 'origin')} x {horizon} steps)"


def test_part_text(split) -> str:
    """Which values of each series a panel's test figures are on, so a competition's hold-out and a data file's last
    fifth are never read as one protocol: "the last 8 values of each", "the last 20% of each" ("" if neither)."""
    if split is None:
        return ""
    if split.method == "holdout" and split.holdout_test:
        return f"the last {counted(split.holdout, 'value')} of each"
    if split.method == "chronological":
        return f"the last {split.test:.0%} of each"
    return ""


def _test_part(split) -> str:
    text = test_part_text(split)
    return f"; {text}" if text else ""


def panel_verdict(result, seeded: bool = True) -> str:
    """One line for a panel run: mean test sMAPE (MASE where the values before the test part include 0 or below)
    beside the baselines, and the share of series won."""
    metric = result.data.headline
    frame = result.metrics_frame
    scores = frame[(frame["part"] == "test") & (frame["metric"] == metric)].pivot(
        index="series", columns="model", values="value")
    test = result.metrics["test"]
    left = result.data.not_scored  # no window in the test part: forecast, not scored
    of = f"of {result.panel.n_series} " if left else ""
    unscored = f"; not scored, too short for a test window: {few_names(left)}" if left else ""
    # sMAPE with two decimals throughout, as the benchmark tables give it (16.00 beside 17.88, not 16); MASE three
    digits = 2 if metric == "smape" else 3
    why = {"smape": "", "mase": f"; {MASE_REASON}", "mae": f"; {MAE_REASON}"}[metric]
    undefined = list(scores.index[scores["model"].isna()]) if metric == "mase" else []
    if undefined:  # MASE divides by the in-sample naive error: 0 on a series constant before its test part
        shown = len(scores) - len(undefined)
        of = f"of {result.panel.n_series} " if left else f"of {len(scores)} "
        unscored += f"; MASE is undefined on {few_names(undefined)}, constant before the test part"
    else:
        shown = len(scores)
    model = test["model"][metric]
    where = _test_part(getattr(result.data, "split", None))
    parts = [f"Test {metric_label(metric)} (mean over {shown} {of}series{where}{unscored}{why}) {model:.{digits}f}"]
    labels = baseline_labels()
    for key in result.beside:
        wins = f"model better on {int((scores['model'] < scores[key]).sum())} of {int(scores[key].notna().sum())} series"
        score = test[key][metric]
        # the naive forecast is the yardstick, said in words as for one series: a model can be better on most series
        # and still worse on the mean (the transformer on tourism-yearly: 282 of 518 series, 23.66 against 22.34)
        if key == "naive" and result.config.model != "naive" and score:
            verdict = "beats" if model < score else "does NOT beat"
            parts[0] += (f" {verdict} the naive forecast ({score:.{digits}f}, {(model / score - 1) * 100:+.1f}%; "
                         f"{wins})")
        elif score is None:  # e.g. seasonal-naive where no series has a season of values before its test part
            parts.append(f"{labels[key]} n/a (no forecast: too few values before the test part)")
        else:
            parts.append(f"{labels[key]} {score:.{digits}f} ({wins})")
    if metric == "smape":
        parts += zero_actuals_caution(result)
    return "; ".join(parts) + "." + (ONE_SEED if seeded else "")


def zero_actuals_caution(result) -> list[str]:
    """[a clause] when test values are 0 although the values before them were all above 0 (else MASE is the
    headline already), where sMAPE is 200 for any forecast but exactly 0 (a series of zeros forecast 0.003 scores
    worse than one forecast 50% off): the model and the naive forecast on MASE, which has no such trap; []
    otherwise."""
    zeros, total = count_test_zeros(result)
    test = result.metrics["test"]
    if not zeros or result.config.model == "naive" or test["model"].get("mase") is None or \
            test["naive"].get("mase") is None:
        return []
    model, naive = test["model"]["mase"], test["naive"]["mase"]
    verdict = "better" if model < naive else "NOT better"
    return [f"but {zeros_text(zeros, total)}: on MASE, which has no such trap, the model is {verdict} than the naive "
            f"forecast ({model:.3f} against {naive:.3f})"]


def count_test_zeros(result) -> tuple[int, int]:
    """(how many of the test part's values are 0, how many values it has): where sMAPE is 200 for any forecast of a
    0 but exactly 0."""
    actual = np.asarray(result.panel.values, dtype=np.float64)[np.unique(result.data.target_positions("test"))]
    return int((actual == 0).sum()), int(actual.size)


def zeros_text(zeros: int, total: int) -> str:
    """How many test values are 0 and why that matters, as the fit verdict and compare's say it."""
    return f"{zeros} of {total} test values are 0, where sMAPE is 200 for any forecast but exactly 0"


def interval_verdict(result, part: str = "test", tolerance: float = 3.0) -> str | None:
    """One line: how often the model's intervals covered the test values, against each level."""
    values = result.metrics.get(part, {}).get("model", {})
    found = [(level, values.get(f"coverage-{level_name(level)}")) for level in check_levels(result.config.level)]
    found = [(level, coverage) for level, coverage in found if coverage is not None]
    if not found:
        return None
    source = interval_source(result.config.loss)
    first, *rest = found
    covered = f"The {level_name(first[0])}% interval covered {first[1]:.1f}% of the {part} values" + "".join(
        f", the {level_name(level)}% one {coverage:.1f}%" for level, coverage in rest)
    gaps = [coverage - level for level, coverage in found]
    if all(abs(gap) <= tolerance for gap in gaps):
        judgement = f"within {tolerance:g} points of every level: calibrated here"
    elif all(gap < tolerance for gap in gaps) and any(gap < -tolerance for gap in gaps):
        judgement = "too narrow for this part (below the level)"
    elif all(gap > -tolerance for gap in gaps):
        judgement = "wider than needed here (above the level)"
    else:
        judgement = "off the level in both directions"
    calibration = result.state.calibration
    floor = getattr(calibration, "floor", None)
    clipped = "" if floor is None else (" Forecasts and bounds are floored at 0 (every fitted value is "
                                        "non-negative; clip_intervals=false keeps them as they come).")
    chosen = "" if getattr(calibration, "scale_choice", None) is None else \
        f" Scores in {calibration.describe_scale()} (interval_scale auto)."
    return f"{covered} ({source}, calibrated on the validation part): {judgement}.{clipped}{chosen}"


def _series_values(records: list[dict], dataset: str, model: str, key: str, metric: str):
    """A per-series test metric of ``key`` ("model" or a baseline key) in the runs of ``model``, mean over seeds."""
    # (records written before they kept per-series MAE lack it: no paired test on it from them)
    # (a baseline only some runs have is compared where they have it: the regression baseline with covariates, ARIMA,
    # is not in the runs of a twin without covariates, whose table row still ranks it beside the twin)
    runs = [r for r in records if r["dataset"] == dataset and r["model"] == model
            and key in ((r.get("by_series") or {}).get(metric) or {})]
    if not runs:
        return None
    values = pd.DataFrame([[np.nan if v is None else v for v in r["by_series"][metric][key]] for r in runs],
                          dtype=np.float64)
    return pd.Series(values.mean(axis=0).to_numpy(), index=runs[0]["by_series"]["ids"])

def _paired_over_series(records: list[dict], dataset: str, model: str, other: str, metric: str):
    """``model`` against ``other`` (another model, or a baseline key) series by series, each averaged over
    seeds: (wins, series compared, p-value of the Wilcoxon signed-rank test or None); None when no series has both
    (e.g. seasonal naive, which forecasts no series shorter than a season before its test part)."""
    mine = _series_values(records, dataset, model, "model", metric)
    theirs = (_series_values(records, dataset, model, other, metric) if other in BASELINE_ROWS
              else _series_values(records, dataset, other, "model", metric))
    if mine is None or theirs is None:
        return None
    paired = paired_comparison(mine, theirs)
    return paired if paired[1] else None

def _early_stopping(records: list[dict], dataset: str, model: str) -> bool:
    """Whether ``model``'s runs on ``dataset`` stopped early (restoring their best epoch's weights); a record without
    the setting ran RunConfig's default, which does."""
    settings = [(record.get("config") or {}).get("early_stopping", True) for record in records
                if record["dataset"] == dataset and record["model"] == model]
    return any(settings) or not settings


WITHOUT_COVARIATES = " without covariates"  # tsattn.compare's twin runs


def _wilcoxon(p_value) -> str:
    """The Wilcoxon signed-rank p-value in brackets after a count of series; nothing when there were too few."""
    return "" if p_value is None else f" (Wilcoxon signed-rank p {p_text(p_value)})"


def _architecture(model: str) -> str:
    """The network a compare row is: a twin without covariates is the same architecture as the model."""
    return model[:-len(WITHOUT_COVARIATES)] if str(model).endswith(WITHOUT_COVARIATES) else str(model)


COVARIATE_METRICS = (("test_rmse", "RMSE"), ("test_mae", "MAE"))  # and sMAPE, or MASE where it is the headline
SIGNIFICANCE = 0.05


def _seed_test(wins: int, total: int):
    """Two-sided sign test of ``wins`` of ``total`` paired seeds (None below 5 seeds: no test can reach 0.05)."""
    if total < 5:
        return None
    from scipy.stats import binomtest

    return float(binomtest(wins, total, 0.5).pvalue)


def _covariate_lines(table, runs, records, dataset: str, metric: str, panel: bool) -> list[str]:
    """"Does the covariate help?": each network with its covariates against its twin without them on every test
    metric (RMSE, MAE, sMAPE or MASE: where they disagree, the line says so and names each), seed by seed and, for a
    panel, series by series (averaged over seeds, Wilcoxon signed-rank); whether the difference is significant
    (p < 0.05) is said either way, and with one series and few seeds that no test can tell."""
    lines = []
    for twin in [m for m in table["model"] if str(m).endswith(WITHOUT_COVARIATES)]:
        model = twin[:-len(WITHOUT_COVARIATES)]
        if model not in set(table["model"]):
            continue
        compared = []
        scale_free = "test_mase" if metric == "test_mase" else "test_smape"
        for column, label in (*COVARIATE_METRICS, (scale_free, metric_label(scale_free[len("test_"):]))):
            if f"{column}_mean" not in table:
                continue
            a, b = (float(table.loc[table["model"] == name, f"{column}_mean"].iloc[0]) for name in (model, twin))
            if np.isfinite(a) and np.isfinite(b):
                compared.append((label, a, b))
        figures = "; ".join(f"{label} {number_text(a)} with them, {number_text(b)} without" for label, a, b in compared)
        better = [label for label, a, b in compared if a < b]
        if len(better) == len(compared):
            answer = "They help on every metric"
        elif not better:
            answer = "They do not help on any metric"
        else:
            worse = [label for label, a, b in compared if a >= b]
            answer = f"The metrics disagree: better with them on {', '.join(better)}, not on {', '.join(worse)}"
        mine = runs[runs["model"] == model].set_index("seed")[metric]
        theirs = runs[runs["model"] == twin].set_index("seed")[metric].reindex(mine.index)
        wins, seeds = int((mine < theirs).sum()), len(mine)
        line = (f"Do the covariates help {model}? {answer} ({figures}); on the headline metric better with them on "
                f"{wins} of {seeds} seed(s)")
        p_value = None
        if panel:
            paired = _paired_over_series(records, dataset, model, twin, metric[len("test_"):])
            if paired:
                line += f" and on {paired[0]} of {paired[1]} series" + _wilcoxon(paired[2])
                p_value = paired[2]
        else:
            p_value = _seed_test(wins, seeds)
            if p_value is not None:
                line += f" (sign test over seeds p {p_text(p_value)})"
        if p_value is None:
            what = f"{seeds} seed(s) of one series" if not panel else "too few series"
            line += f". With {what} no test can tell this difference from noise: it is not significant"
        elif p_value >= SIGNIFICANCE:
            line += ". The difference is not significant (p >= 0.05)"
        else:
            line += ". The difference is significant (p < 0.05)"
        lines.append(line + ".")
    return lines


def _zeros_caution(table: pd.DataFrame, records: list[dict], dataset: str) -> list[str]:
    """[a line] when a panel ranked on sMAPE (every value before the test part above 0) has zeros in its test part:
    the models on MASE, which has no such trap, best first; [] otherwise (or for records written before they counted
    zeros)."""
    zeros, total = next((record["test_zeros"] for record in records
                         if record["dataset"] == dataset and record.get("test_zeros")), (0, 0))
    if not zeros:
        return []
    ranked = table.dropna(subset=["test_mase_mean"]).sort_values("test_mase_mean", kind="stable")
    if ranked.empty:
        return []
    order = ", ".join(f"{row['model']} {number_text(row['test_mase_mean'])}" for _, row in ranked.iterrows())
    return [f"But {zeros_text(zeros, total)}: on test MASE (mean over series), which has no such trap, the "
            f"order is {order}."]


def _spread(row, metric: str) -> str:
    """A summary row's mean, with its standard deviation over seeds when there are several (one seed has none)."""
    mean = number_text(row[f"{metric}_mean"])
    return f"{mean} ± {number_text(row[f'{metric}_std'], 2)}" if int(row["seeds"]) > 1 else mean


def comparison_verdict(results: pd.DataFrame, summary: pd.DataFrame, dataset: str, records: list[dict] | None = None) -> list[str]:
    """Plain-language conclusions for one dataset, with the seed-to-seed spread taken into account and, for a
    panel, each model compared with the runner-up and the baselines series by series (paired)."""
    table = summary[summary["dataset"] == dataset]
    metric = table["headline"].iloc[0]
    name = {"test_rmse": "test RMSE", "test_smape": "test sMAPE (mean over series)",
            "test_mase": f"test MASE (mean over series; {MASE_REASON})",
            "test_mae": f"test MAE (mean over series; {MAE_REASON})"}[metric]
    panel = metric != "test_rmse"
    per_series = metric[len("test_"):]  # the by-series records' name of it: rmse, smape or mase
    neural = table[~table["model"].isin(BASELINE_ROWS.values())]
    runs = results[(results["dataset"] == dataset) & results["seed"].notna()]
    naive = float(table.loc[table["model"] == "naive", f"{metric}_mean"].iloc[0])
    linear = float(table.loc[table["model"] == "linear", f"{metric}_mean"].iloc[0])
    lines = []
    winner = table.sort_values("rank", kind="stable").iloc[0]  # rank 1, network or baseline: what the verdict names
    neural = neural.sort_values("rank", kind="stable")
    best = neural.iloc[0]
    seeds = int(best["seeds"])
    over = f"(mean ± standard deviation over {seeds} seeds)" if seeds > 1 else "(one seed: no seed-to-seed spread)"
    if winner["model"] in BASELINE_ROWS.values():
        lines.append(f"Best model on {name}: **{winner['model']}** ({number_text(winner[f'{metric}_mean'])}), a baseline: no "
                     f"network beats it here. Best network: {best['model']}, rank {int(best['rank'])} of "
                     f"{int(table['headline_mean'].notna().sum())}, {_spread(best, metric)} {over}.")
    else:
        lines.append(f"Best model on {name}: **{best['model']}**, {_spread(best, metric)} {over}.")
    # the runner-up is another architecture: the best network's own twin without covariates is asked about below
    others = neural[neural["model"].map(_architecture) != _architecture(best["model"])]
    if len(others):
        runner_up = others.iloc[0]
        mine = runs[runs["model"] == best["model"]].set_index("seed")[metric]
        theirs = runs[runs["model"] == runner_up["model"]].set_index("seed")[metric]
        wins = int((mine < theirs.reindex(mine.index)).sum())
        if int(best["seeds"]) < 2 or int(runner_up["seeds"]) < 2:  # as _spread: one seed has no spread
            overlap = "one seed cannot say whether the lead exceeds the seed-to-seed spread"
        elif best[f"{metric}_mean"] + best[f"{metric}_std"] >= runner_up[f"{metric}_mean"] - runner_up[f"{metric}_std"]:
            overlap = "the mean ± std intervals overlap, so the lead is within the seed-to-seed spread"
        else:
            overlap = "the mean ± std intervals do not overlap"
        first = "It" if winner["model"] == best["model"] else f"{best['model']}"
        # auto chooses among the networks and the baselines: "the runner-up network" would misname it
        kind = "model" if "auto" in (best["model"], runner_up["model"]) else "network"
        lines.append(f"{first} beats the runner-up {kind}, {runner_up['model']} ({_spread(runner_up, metric)}), on {wins} "
                     f"of {len(mine)} seed{'s' if len(mine) != 1 else ''}; {overlap}.")
        paired = _paired_over_series(records or [], dataset, best["model"], runner_up["model"], per_series) \
            if panel else None
        if paired:
            won, total, p_value = paired
            test = f"Wilcoxon signed-rank p {p_text(p_value)}" if p_value is not None else "too few series for a test"
            lines.append(f"Series by series ({metric_label(per_series)} averaged over seeds) it is better on {won} of "
                         f"{total} series ({test}).")
    if len(neural) > 1 and seeds < 3:
        lines.append("With fewer than 3 seeds this ranking is not reliable.")
    for _, row in neural.iterrows():
        model_runs = runs[runs["model"] == row["model"]][metric]
        beats = int((model_runs < naive).sum())
        beats_linear = int((model_runs < linear).sum())
        ratio = row["headline_ratio_to_naive"]
        line = (f"{row['model']}: beats the naive last-value forecast ({number_text(naive)}) on {beats} of "
                f"{len(model_runs)} seeds (ratio {ratio:.3f}) and the linear autoregression "
                f"({number_text(linear)}) on {beats_linear} of {len(model_runs)}")
        if panel:
            for key, label in (("naive", "naive"), ("seasonal_naive", "seasonal naive")):
                paired = _paired_over_series(records or [], dataset, row["model"], key, per_series)
                if paired:
                    line += f"; better than {label} on {paired[0]} of {paired[1]} series"
        if len(model_runs) > 1:
            line += f"; over its seeds it ranged {number_text(model_runs.min())}–{number_text(model_runs.max())}"
        epochs = pd.to_numeric(runs.loc[runs["model"] == row["model"], "best_epoch"], errors="coerce").dropna() \
            if "best_epoch" in runs else pd.Series(dtype=float)
        kept = int((epochs == 0).sum())
        if kept:
            line += (f"; no epoch of training beat its start on validation in {kept} of {len(epochs)} seed(s), so "
                     "it forecasts from its starting weights (keep_start)")
        first = int((epochs == 1).sum())
        if first and _early_stopping(records or [], dataset, row["model"]):
            line += (f"; its validation loss was lowest at the first epoch in {first} of {len(epochs)} seed(s): "
                     "later epochs never improved on it (a lower learning_rate may help)")
        elif first:  # every epoch trained (the recipe): what validation saw, no cure drawn from it
            trained = int(runs.loc[runs["model"] == row["model"], "epochs_run"].max())
            line += (f"; its validation loss was lowest after the first of its {trained} epochs in {first} of "
                     f"{len(epochs)} seed(s) (without early stopping it forecasts after all of them)")
        lines.append(line + ".")
    if not (neural[f"{metric}_mean"] < naive).any():
        lines.append("No neural model beats the naive baseline on average here.")
    if metric == "test_smape":
        lines += _zeros_caution(table, records or [], dataset)
    lines += _covariate_lines(table, runs, records or [], dataset, metric, panel)
    statistical = table[table["model"].isin(list(STATISTICAL_LABELS))]
    for _, row in statistical.iterrows():  # the strong baselines asked for with --baselines
        value = float(row[f"{metric}_mean"])
        better = neural[neural[f"{metric}_mean"] < value]
        verdict = (f"beaten on average by {', '.join(better['model'])}" if len(better) else
                   f"better on average than every neural model here (best {best['model']} {number_text(best[f'{metric}_mean'])})")
        line = f"{row['model']} ({number_text(value)}): {verdict}"
        if panel:
            key = STATISTICAL_LABELS[row["model"]]
            paired = _paired_over_series(records or [], dataset, best["model"], key, per_series)
            if paired:
                line += f"; {best['model']} is better on {paired[0]} of {paired[1]} series" + _wilcoxon(paired[2])
        lines.append(line + ".")
    for record in sorted((r for r in records or () if r["dataset"] == dataset and r.get("choice")),
                         key=lambda r: (r["model"], r["seed"])):  # what auto kept, seed by seed
        lines.append(f"Seed {record['seed']}: {record['choice']}.")
    return lines

"""Reporting from records alone (no training): the results table, the summary over seeds, the verdict and
the report files, on hand-made records whose figures are known."""

import pytest

from tsattn.report import is_complete_record, results_table, summarise, write_report
from tsattn.verdicts import comparison_verdict

METRICS = ("rmse", "mae", "mse", "mape", "smape", "mase")


def block(model_rmse, naive=20.0, seasonal=40.0, linear=18.2):
    def metrics(rmse):
        return {"rmse": rmse, "mae": rmse * 0.8, "mse": rmse ** 2, "mape": 10.0, "smape": rmse, "mase": rmse / 20}
    return {"model": metrics(model_rmse), "naive": metrics(naive), "seasonal_naive": metrics(seasonal),
            "linear": metrics(linear), "scaled": {"mse": 0.01, "rmse": 0.1}}


def record(model, seed, rmse):
    return {"dataset": "sun", "model": model, "seed": seed, "config": {"level": []}, "parameters": 100,
            "epochs_run": 10, "fit_seconds": 1.0, "predict_seconds": 0.1, "series": 1, "by_series": None,
            "metrics": {"validation": block(rmse + 1), "test": block(rmse)}, "history": {"loss": [1.0]},
            "test": {"index": ["2000-01-01", "2000-02-01"], "actual": [1.0, 2.0], "predicted": [1.1, 2.1],
                     "baselines": {"naive": [1.0, 1.0]}, "intervals": {}},
            "series_name": "sun", "attention": None}


RECORDS = [record("simple-rnn", 0, 18.0), record("simple-rnn", 1, 18.2), record("simple-rnn", 2, 18.1),
           record("transformer", 0, 19.0), record("transformer", 1, 19.4), record("transformer", 2, 19.2)]


def test_results_table_has_a_row_per_run_and_per_baseline():
    table = results_table(RECORDS)
    assert len(table) == 6 + 3  # runs, then naive, seasonal naive and linear once for the dataset
    assert table.loc[table["model"] == "naive", "test_rmse"].tolist() == [20.0]
    assert table.loc[table["model"] == "simple-rnn", "test_rmse"].tolist() == [18.0, 18.2, 18.1]


def test_summary_means_spreads_and_ranks():
    summary = summarise(results_table(RECORDS))
    rnn = summary.set_index("model").loc["simple-rnn"]
    assert rnn["test_rmse_mean"] == pytest.approx(18.1)
    assert rnn["test_rmse_std"] == pytest.approx(0.1)
    assert rnn["ratio_to_naive"] == pytest.approx(18.1 / 20)
    ranks = summary.set_index("model")["rank"].to_dict()
    assert ranks["simple-rnn"] == 1 and ranks["linear"] == 2 and ranks["transformer"] == 3 and ranks["naive"] == 4


def test_verdict_weighs_the_lead_against_the_seed_spread():
    results = results_table(RECORDS)
    lines = comparison_verdict(results, summarise(results), "sun", RECORDS)
    assert "**simple-rnn**" in lines[0]
    assert "on 3 of 3 seeds; the mean ± std intervals do not overlap" in lines[1]
    close = [record("simple-rnn", s, v) for s, v in ((0, 18.0), (1, 18.6), (2, 18.3))] + \
            [record("transformer", s, v) for s, v in ((0, 18.4), (1, 18.2), (2, 18.5))]
    results = results_table(close)
    lines = comparison_verdict(results, summarise(results), "sun", close)
    assert "the lead is within the seed-to-seed spread" in lines[1]
    # one seed has no spread: no "± 0", no intervals said not to overlap
    one = [record("simple-rnn", 0, 18.0), record("transformer", 0, 19.0)]
    results = results_table(one)
    lines = comparison_verdict(results, summarise(results), "sun", one)
    assert lines[0].endswith("**simple-rnn**, 18 (one seed: no seed-to-seed spread).") and "±" not in " ".join(lines)
    assert lines[1] == ("It beats the runner-up network, transformer (19), on 1 of 1 seed; one seed cannot say whether "
                        "the lead exceeds the seed-to-seed spread.")
    # model auto's records carry what it kept (compare's _record): said seed by seed, after the rest
    chosen = [{**record("auto", s, 18.0 + s), "choice": f"auto chose ets: validation sMAPE {s}"} for s in (1, 0)]
    results = results_table(chosen + one)
    lines = comparison_verdict(results, summarise(results), "sun", chosen + one)
    assert lines[-2:] == ["Seed 0: auto chose ets: validation sMAPE 0.", "Seed 1: auto chose ets: validation sMAPE 1."]
    assert lines[1].startswith("It beats the runner-up model, auto (18.5 ± 0.7")  # auto is no network: it chose ets


def test_report_files_from_records(tmp_path):
    class Spec:  # what write_report reads of a comparison
        models, seeds, settings = ["simple-rnn", "transformer"], [0, 1, 2], {}
        sources = [type("Source", (), {"name": "sun"})()]

    results = results_table(RECORDS)
    md, page = write_report(tmp_path, Spec, RECORDS, results, summarise(results))
    text = md.read_text()
    assert "## sun" in text and "**Verdict.**" in text and "| simple-rnn |" not in text  # best row is bold
    assert "| **simple-rnn** |" in text
    assert "<tr class=\"best\">" in page.read_text() or "class=\"best\"" in page.read_text()


def test_incomplete_records_are_not_trusted():
    assert is_complete_record(RECORDS[0])
    broken = dict(RECORDS[0], metrics={"test": {"model": {}}})
    assert not is_complete_record(broken)
    assert not is_complete_record({"dataset": "sun"})


def test_the_verdict_and_the_highlighted_row_name_rank_one_even_when_it_is_a_baseline(tmp_path):
    """Issue 24: the linear AR (18.2 here) ranks above every network (19.0-19.4); the verdict must name it, say
    that no network beats it and give the best network's rank, and the bold row must be the linear one."""
    behind = [record("simple-rnn", s, v) for s, v in ((0, 19.0), (1, 19.2), (2, 19.1))] + \
             [record("transformer", s, v) for s, v in ((0, 19.3), (1, 19.4), (2, 19.5))]
    results = results_table(behind)
    summary = summarise(results)
    rank_one = summary.sort_values("rank").iloc[0]["model"]
    assert rank_one == "linear"
    lines = comparison_verdict(results, summary, "sun", behind)
    assert lines[0].startswith("Best model on test RMSE: **linear** (18.2), a baseline: no network beats it here.")
    assert "Best network: simple-rnn, rank 2 of 5" in lines[0]
    assert lines[1].startswith("simple-rnn beats the runner-up network, transformer")

    class Spec:
        models, seeds, settings = ["simple-rnn", "transformer"], [0, 1, 2], {}
        sources = [type("Source", (), {"name": "sun"})()]

    md, page = write_report(tmp_path, Spec, behind, results, summary)
    bold = [line for line in md.read_text().splitlines() if line.startswith("| **")]
    assert len(bold) == 1 and bold[0].startswith("| **linear** |")
    assert "****" not in md.read_text()  # a baseline's empty cells stay empty, not bold nothing


def test_numbers_read_as_people_write_them():
    from tsattn.io import number_text

    assert [number_text(v) for v in (10_020.4, 1.0024e6, 13.456, 18.2, 0.0001234, -2.5, 0.0)] == \
        ["10,020", "1,002,400", "13.46", "18.2", "0.0001234", "-2.5", "0"]
    assert number_text(float("nan")) == "" and number_text(None) == "" and number_text(0.35, 2) == "0.35"
    assert number_text(7.988e-09) == "7.988e-09"  # an exact fit's error: its exponent, not nine zeros


def test_ranking_shows_the_seed_range_and_the_best_epoch_and_the_verdict_says_when_training_never_improved():
    """Issue 24: the seed spread (range) and the best epoch sit beside the ranking; a network whose best validation
    epoch was the first is named in the verdict."""
    from tsattn.report import _cells, summary_columns

    runs = [dict(record("simple-rnn", s, v), best_epoch=1) for s, v in ((0, 18.0), (1, 18.6), (2, 18.3))] + \
        [dict(record("transformer", s, v), best_epoch=12) for s, v in ((0, 19.0), (1, 19.4), (2, 19.2))]
    results = results_table(runs)
    summary = summarise(results)
    row = summary[summary["model"] == "simple-rnn"].iloc[0]
    columns = summary_columns("test_rmse", panel=False)
    assert [key for key, _ in columns][:5] == ["model", "rank", "test_rmse", "headline_range",
                                               "headline_ratio_to_naive"]
    assert "test_rmse" not in [key for key, _ in summary_columns("test_smape", panel=True)]
    cells = dict(zip([key for key, _ in columns], _cells(row, columns)))
    assert cells["headline_range"] == "18–18.6" and cells["best_epoch"] == "1" and cells["model"] == "simple-rnn"
    assert _cells(summary[summary["model"] == "naive"].iloc[0], columns)[3] == ""  # baselines: no seeds, no range
    lines = comparison_verdict(results, summary, "sun", runs)
    simple = next(line for line in lines if line.startswith("simple-rnn: beats"))
    assert "ranged 18–18.6" in simple and "lowest at the first epoch in 3 of 3 seed(s): later epochs never " \
        "improved" in simple
    assert "never improved" not in next(line for line in lines if line.startswith("transformer: beats"))
    # keep_start: a best epoch 0 is the start kept, said as such (not "the first epoch")
    kept = [dict(run, best_epoch=0 if run["seed"] < 2 else 1) if run["model"] == "simple-rnn" else run for run in runs]
    lines = comparison_verdict(results_table(kept), summarise(results_table(kept)), "sun", kept)
    simple = next(line for line in lines if line.startswith("simple-rnn: beats"))
    assert "no epoch of training beat its start on validation in 2 of 3 seed(s)" in simple
    assert "lowest at the first epoch in 1 of 3 seed(s)" in simple
    # without early stopping (the recipe) every epoch trains: the verdict says what validation saw, not a cure
    recipe = [dict(run, config={"level": [], "early_stopping": False}, epochs_run=2) for run in runs]
    lines = comparison_verdict(results_table(recipe), summarise(results_table(recipe)), "sun", recipe)
    simple = next(line for line in lines if line.startswith("simple-rnn: beats"))
    assert "lowest after the first of its 2 epochs in 3 of 3 seed(s) (without early stopping it forecasts after " \
        "all of them)" in simple and "learning_rate" not in simple


def test_the_runner_up_is_another_network_not_the_best_ones_twin_without_covariates():
    twins = RECORDS + [record("simple-rnn without covariates", s, v) for s, v in ((0, 18.5), (1, 18.6), (2, 18.7))]
    results = results_table(twins)
    lines = comparison_verdict(results, summarise(results), "sun", twins)
    assert lines[1].startswith("It beats the runner-up network, transformer")
    assert lines[-1] == ("Do the covariates help simple-rnn? They help on every metric (RMSE 18.1 with them, 18.6 "
                         "without; MAE 14.48 with them, 14.88 without; sMAPE 18.1 with them, 18.6 without); on the "
                         "headline metric better with them on 3 of 3 seed(s). With 3 seed(s) of one series no test "
                         "can tell this difference from noise: it is not significant.")


def test_a_covariate_verdict_where_the_metrics_disagree_names_each_and_says_one_seed_proves_nothing():
    """Issue 38's macro case: one series, one seed, two drivers; RMSE worse with them, MAE and sMAPE better. The
    verdict said "They do not help on average" from RMSE alone."""
    def run(model, rmse, mae, smape):
        out = record(model, 0, rmse)
        out["metrics"]["test"]["model"].update(mae=mae, smape=smape)
        return out

    runs = [run("attention-rnn", 0.5743, 0.394, 9.1), run("attention-rnn without covariates", 0.5302, 0.430, 9.8)]
    results = results_table(runs)
    line = comparison_verdict(results, summarise(results), "sun", runs)[-1]
    assert line == ("Do the covariates help attention-rnn? The metrics disagree: better with them on MAE, sMAPE, not "
                    "on RMSE (RMSE 0.5743 with them, 0.5302 without; MAE 0.394 with them, 0.43 without; sMAPE 9.1 "
                    "with them, 9.8 without); on the headline metric better with them on 0 of 1 seed(s). With 1 "
                    "seed(s) of one series no test can tell this difference from noise: it is not significant.")
    many = [run("attention-rnn", 0.5 - s / 100, 0.3, 9.0) | {"seed": s} for s in range(6)] + \
        [run("attention-rnn without covariates", 0.6, 0.4, 9.9) | {"seed": s} for s in range(6)]
    results = results_table(many)
    line = comparison_verdict(results, summarise(results), "sun", many)[-1]
    assert "They help on every metric" in line and "6 of 6 seed(s) (sign test over seeds p = 0.031" in line \
        and line.endswith("The difference is significant (p < 0.05).")


def test_the_report_names_the_series_forecast_but_not_scored(tmp_path):
    """A panel's series too short for a training window are forecast but not scored: the report says how many and
    names them (once, whatever the number of runs), so the series count above the table is not read as all scored."""
    class Spec:
        models, seeds, settings = ["simple-rnn"], [0, 1], {}
        sources = [type("Source", (), {"name": "sun"})()]

    records = [dict(record("simple-rnn", seed, 18.0 + seed), series=9, series_left_out=["b", "a"]) for seed in (0, 1)]
    results = results_table(records)
    md, page = write_report(tmp_path, Spec, records, results, summarise(results))
    assert "9 series, of which 2 are too short for a test window (forecast, not scored: a, b); ranked on" in \
        md.read_text()
    assert "(forecast, not scored: a, b)" in page.read_text()
    whole = [dict(r, series_left_out=[]) for r in records]
    (tmp_path / "whole").mkdir()
    md, _ = write_report(tmp_path / "whole", Spec, whole, results, summarise(results))
    assert "9 series; ranked on" in md.read_text()  # records written before they said their test part: nothing said
    (tmp_path / "fifth").mkdir()
    fifth = [dict(r, test_part="the last 20% of each") for r in whole]
    md, _ = write_report(tmp_path / "fifth", Spec, fifth, results, summarise(results))
    assert "9 series, tested on the last 20% of each; ranked on" in md.read_text()


def test_baseline_labels_of_the_bar_chart_never_overlap():
    """Two baselines 0.04 apart (linear 1.089, seasonal naive 1.045 on a MASE chart from 0.8 to 3.3) were written over
    each other at the chart's right edge: the upper is moved up to keep 10 points between them; far apart, none moves."""
    import matplotlib.pyplot as plt

    from tsattn.plots import label_shifts

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.set_ylim(0.8, 3.3)
    values = [3.112, 1.089, 1.045]
    shifts = label_shifts(ax, values)
    at = [ax.transData.transform((0, v))[1] * 72 / fig.dpi + shift for v, shift in zip(values, shifts)]
    assert shifts[0] == shifts[2] == 0.0 and shifts[1] > 0 and at[1] - at[2] >= 10.0 - 1e-9
    assert label_shifts(ax, [1.0, 3.0]) == [0.0, 0.0] and label_shifts(ax, []) == []
    plt.close(fig)


def test_a_panel_is_ranked_on_one_metric_even_when_resumed_from_records_without_it():
    """A record keeps the metric its dataset is ranked on (MASE for a panel with values of 0 or below); one written
    before records kept it (sMAPE was a panel's only headline then) must not rank its model on another metric."""
    old, new = record("simple-rnn", 0, 12.0), record("nbeats", 0, 10.0)
    for each in (old, new):
        each["series"] = 3
    new["headline"] = "mase"
    summary = summarise(results_table([old, new]))
    assert set(summary["headline"]) == {"test_mase"}
    assert list(summary["headline_mean"]) == sorted(summary["headline_mean"])  # ranked on MASE: rmse / 20 here
    assert summarise(results_table([old]))["headline"].eq("test_smape").all()


def test_every_figure_of_a_panel_is_titled_with_its_dataset(tmp_path, monkeypatch):
    """Found by looking at a panel's report: every figure after the per-series distribution was titled "arima: ..."
    (the last baseline's row label, left in a loop variable that shadowed the dataset's label)."""
    from tsattn import plots

    titles = []
    for name in ("plot_bars", "plot_distribution", "plot_loss_curves"):
        def recorded(*args, _draw=getattr(plots, name), _at=4 if name == "plot_bars" else 2, **kwargs):
            titles.append(args[_at])
            return _draw(*args, **kwargs)
        monkeypatch.setattr(plots, name, recorded)

    class Spec:
        models, seeds, settings = ["simple-rnn"], [0], {}
        sources = [type("Source", (), {"name": "shops:units"})()]

    keys = ("model", "naive", "seasonal_naive", "linear")
    by_series = {"ids": ["a", "b"], **{metric: {key: [1.0, 2.0] for key in keys} for metric in ("smape", "mase", "rmse")}}
    records = [dict(record("simple-rnn", 0, 18.0), dataset="shops:units", series=2, by_series=by_series, test=None)]
    results = results_table(records)
    write_report(tmp_path, Spec, records, results, summarise(results))
    assert len(titles) == 3 and all(title.startswith("shops (column units)") for title in titles), titles


def test_a_baseline_some_runs_lack_is_paired_only_where_they_have_it():
    """A covariate comparison's twin without covariates has no regression baseline (ARIMA with the covariates): the
    per-series pairing against it is skipped (None), not a KeyError that loses the report."""
    from tsattn.verdicts import _paired_over_series

    def record(model, rows):
        return {"dataset": "d", "model": model, "by_series": {"ids": ["a", "b", "c"], "test_smape": rows}}

    twin = record("simple-rnn without covariates", {"model": [1.0, 2.0, 3.0], "naive": [2.0, 3.0, 4.0]})
    full = record("simple-rnn", {"model": [1.5, 2.5, 3.5], "naive": [2.0, 3.0, 4.0], "arima": [1.0, 1.0, 1.0]})
    assert _paired_over_series([twin, full], "d", "simple-rnn without covariates", "arima", "test_smape") is None
    wins, compared, _ = _paired_over_series([twin, full], "d", "simple-rnn without covariates", "naive", "test_smape")
    assert (wins, compared) == (3, 3)
    assert _paired_over_series([twin, full], "d", "simple-rnn", "arima", "test_smape")[:2] == (0, 3)

"""model="auto": every candidate through the one fit path, chosen on the validation part, never on test."""

import json
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from tsattn.cli.main import main
from tsattn.errors import ConfigError, DataError
from tsattn.forecaster import Forecaster
from tsattn.selection import AUTO_NETWORKS, statistical_candidates


def panel(n=6, length=60, seed=0):
    """Seasonal series with a trend: a seasonal or linear method beats naive on them."""
    rng = np.random.default_rng(seed)
    t = np.arange(length)
    return pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": pd.period_range("2000-01", periods=length, freq="M")
                                    .to_timestamp(), "y": 50 + 10 * i + 0.3 * t + 8 * np.sin(2 * np.pi * t / 12)
                                    + rng.normal(0, 0.5, length)}) for i in range(n)], ignore_index=True)


def test_auto_chooses_the_lowest_validation_score_and_forecasts_with_it(tmp_path):
    frame = panel()
    f = Forecaster("auto", horizon=4, epochs=2).fit(frame)
    choice = f.choice_
    expected = {*AUTO_NETWORKS, *statistical_candidates(), "naive", "seasonal-naive", "linear"}
    combined = [c for c in choice["candidate"] if c.startswith("weighted mean of ")]  # the default combination
    assert set(choice["candidate"]) - set(combined) == expected and len(combined) == 1
    assert choice["chosen"].sum() == 1
    assert choice.attrs["metric"] == "smape" and choice["smape"].is_monotonic_increasing
    winner = choice["candidate"].iloc[0]
    assert f.config_.model == winner and f.get_params()["model"] == "auto"
    # the winner's forecast is exactly that candidate's, fitted alone with the same settings
    alone = Forecaster(winner, horizon=4, epochs=2).fit(frame)
    np.testing.assert_allclose(f.predict()["auto"], alone.predict()[winner], rtol=1e-5)
    assert choice.loc[choice["candidate"] == "naive", "smape"].item() >= choice["smape"].iloc[0]
    f.save(tmp_path / "auto")
    again = Forecaster.load(tmp_path / "auto")
    pd.testing.assert_frame_equal(again.choice_, choice)
    assert again.choice_.attrs == choice.attrs  # the metric and the margin rule it was chosen under
    np.testing.assert_allclose(again.predict()["auto"], f.predict()["auto"])


def test_auto_never_reads_the_test_part():
    """Changing the test values of tsattn fit's data changes no candidate's validation score nor the choice."""
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    frame = panel(n=4)
    config = RunConfig(model="auto", dataset=None, horizon=4, epochs=2, split="holdout", holdout=4)
    first = fit(config, series=frame)
    changed = frame.copy()
    last = changed.groupby("unique_id").cumcount(ascending=False) < 4
    changed.loc[last, "y"] *= 3
    second = fit(config, series=changed)
    pd.testing.assert_frame_equal(first.state.choice.drop(columns="seconds"),
                                  second.state.choice.drop(columns="seconds"))


def test_auto_chooses_on_mase_where_values_before_the_test_part_reach_0(monkeypatch):
    """sMAPE is 200 for any forecast of a 0 but exactly 0: on a panel with zeros before the test part auto chooses
    on MASE and says why; zeros in the test part alone leave the choice on sMAPE (it never reads the test part)."""
    import tsattn.selection as S
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    frame = panel(n=4)
    rows = np.flatnonzero(frame["unique_id"] == "s0")
    intermittent = frame.copy()
    intermittent.loc[rows[::3], "y"] = 0.0
    config = RunConfig(model="auto", dataset=None, horizon=4, epochs=1, split="holdout", holdout=4)
    choice = fit(config, series=intermittent).state.choice
    assert choice.attrs["metric"] == "mase" and choice["mase"].is_monotonic_increasing and "smape" not in choice
    assert "validation MASE (not sMAPE: some values are 0 or below) " in S.describe_choice(choice)
    # a series constant before its test part has no MASE: its windows are not counted in what the choice rests on
    constant = intermittent.copy()
    constant.loc[constant["unique_id"] == "s1", "y"] = 7.0
    left = fit(config, series=constant).state.choice
    assert left.attrs["windows"] == choice.attrs["windows"] * 3 // 4 > 0  # 3 of the 4 series, one window each
    tested = frame.copy()
    tested.loc[rows[-2:], "y"] = 0.0  # in the test part only
    assert fit(config, series=tested).state.choice.attrs["metric"] == "smape"


def test_auto_refuses_data_without_a_validation_part_in_one_line():
    with pytest.raises(DataError, match="model auto chooses on the validation part.*at least"):
        Forecaster("auto", horizon=4).fit(panel(n=2), validation=0)
    with pytest.raises(ConfigError, match="auto takes no model parameters"):
        Forecaster("auto", horizon=4, units=8).fit(panel(n=2))


def test_tsattn_fit_model_auto_says_what_it_chose(tmp_path):
    path = tmp_path / "data.csv"
    panel(n=3).to_csv(path, index=False)
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["fit", "--model", "auto", "--csv", str(path), "--column", "y", "--id-column", "unique_id",
                                       "--date-column", "ds", "--horizon", "4",
                                       "--epochs", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "auto chose " in result.output and "validation sMAPE" in result.output  # a panel: sMAPE
    assert re.search(r"validation sMAPE [\d.]+ over \d+ windows of 4 steps", result.output), result.output  # what the
    # choice rests on (found by a user-path check: on a 6-value series auto chose on one value and did not say so)
    choice = pd.read_csv(out / "choice.csv")
    assert choice["chosen"].sum() == 1 and f"auto chose {choice['candidate'][0]}" in result.output
    assert json.loads((out / "config.json").read_text())["config"]["model"] == choice["candidate"][0]


def test_auto_on_series_too_short_for_a_validation_window_names_the_length_it_needs():
    short = panel(n=2, length=10)
    with pytest.raises(DataError, match=r"each series needs at least \d+ values"):
        Forecaster("auto", horizon=4, window=6).fit(short)


def test_a_combination_forecasts_the_median_of_its_members_and_survives_save_and_load(monkeypatch, tmp_path):
    """When the median of the best three candidates wins on validation (forced here), the forecaster is that
    combination: the median of its members' final forecasts (at most one network), with intervals, saved and loaded."""
    import tsattn.selection as S
    from tsattn.baselines import Combination, NetworkModel

    monkeypatch.setattr(S, "_validation_score", lambda *a, **k: -1.0)
    frame = panel(n=4)
    f = Forecaster("auto", horizon=4, epochs=2, auto_combination="median").fit(frame)
    assert f.choice_["candidate"].iloc[0].startswith("median of ") and f.choice_["chosen"].iloc[0]
    combination = f.estimator_
    assert isinstance(combination, Combination) and len(combination.members) == 3
    assert sum(isinstance(m, NetworkModel) for m in combination.members) <= 1
    forecasts = [Forecaster(name, horizon=4, epochs=2).fit(frame).predict()[name] for name in combination.names]
    np.testing.assert_allclose(f.predict()["auto"], np.median(np.stack(forecasts), axis=0), rtol=1e-5)
    bands = f.predict(level=[80, 95])
    assert (bands["auto-lo-95"] <= bands["auto-lo-80"]).all() and (bands["auto-lo-80"] <= bands["auto"]).all()
    f.save(tmp_path / "combined")
    again = Forecaster.load(tmp_path / "combined")
    pd.testing.assert_frame_equal(again.predict(level=[80]), f.predict(level=[80]))
    assert again.estimator_.names == combination.names
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(f)).predict(level=[80]), f.predict(level=[80]))


def test_a_candidate_without_a_validation_forecast_is_saved_as_null_not_nan(monkeypatch, tmp_path):
    """Found by a user-path check: `tsattn fit --model auto` on a monthly series of 6 values fitted, then stopped with a
    traceback writing tsattn.json (seasonal-naive, with less than a season before the validation part, has no
    validation score: NaN, which strict JSON refuses). It is null in the file, missing (NaN) again when loaded."""
    import tsattn.selection as S

    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    series = panel(n=1, length=10).set_index("ds")["y"]
    f = Forecaster("auto", epochs=1).fit(series, verbose=0)
    score = f.choice_.set_index("candidate").loc["seasonal-naive", f.choice_.attrs["metric"]]
    assert np.isnan(score)
    import zipfile

    with zipfile.ZipFile(f.save(tmp_path / "short.tsattn")) as archive:
        rows = json.loads(archive.read("tsattn.json"))["choice"]["rows"]
    assert {"candidate": "seasonal-naive", f.choice_.attrs["metric"]: None} in [
        {key: row[key] for key in ("candidate", f.choice_.attrs["metric"])} for row in rows]
    pd.testing.assert_frame_equal(Forecaster.load(tmp_path / "short.tsattn").choice_, f.choice_)


def test_a_choice_on_too_few_validation_windows_is_warned_and_validation_windows_gives_more(monkeypatch):
    """Found by a user-path check: on one series of 30 values auto chose among ten candidates on one validation window
    (a 6-step forecast) and said nothing of it but "over 1 window"; its choice, patch-transformer, then lost to naive on
    test by 293%. Fewer than FEW_WINDOWS windows is warned about, naming the setting that gives more."""
    import warnings

    import tsattn.selection as S

    assert S.few_windows_note(S.FEW_WINDOWS, 6) is None
    assert S.few_windows_note(1, 6).startswith("auto's choice rests on 1 validation window of 6 steps, too few")
    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    series = panel(n=1, length=30).set_index("ds")["y"]
    with pytest.warns(UserWarning, match=r"rests on 1 validation window of 4 steps.*validation_windows=2"):
        f = Forecaster("auto", horizon=4, epochs=1).fit(series, verbose=0)
    assert f.choice_.attrs["windows"] == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = Forecaster("auto", horizon=4, epochs=1, validation_windows=2).fit(series, verbose=0)
    assert f.choice_.attrs["windows"] == 5  # every window with its targets in the last two horizons
    assert not [w for w in caught if "validation window" in str(w.message)]


def test_a_combination_without_a_network_reports_no_training_of_its_own(monkeypatch, tmp_path):
    """Found by a user-path check: auto's mean of statistical methods reported "0 parameters, 2 epochs, best epoch 2"
    and wrote the first network's loss curve (history.csv, loss.png), though no network was kept."""
    import tsattn.selection as S

    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    monkeypatch.setattr(S, "_validation_score", lambda *a, **k: -1.0)  # the combination wins
    monkeypatch.setattr(S, "combination_members", lambda ranked, network: [n for n in ranked if not network[n]][:3])
    frame = panel(n=2)
    f = Forecaster("auto", horizon=4, epochs=1).fit(frame, verbose=0)
    assert f.choice_["candidate"].iloc[0].startswith("weighted mean of ") and f.choice_["chosen"].iloc[0]
    assert f.state_.keras_model is None and f.state_.epochs_run is None and f.state_.best_epoch is None
    assert len(f.state_.history) == 0
    path = tmp_path / "panel.csv"
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(main, ["fit", "--model", "auto", "--csv", str(path), "--column", "y", "--date-column",
                                       "ds", "--id-column", "unique_id", "--horizon", "4", "--epochs", "1",
                                       "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "auto: no network kept (statistical methods and baselines only), fit" in result.output
    assert not (tmp_path / "run" / "history.csv").exists() and not (tmp_path / "run" / "plots" / "loss.png").exists()
    assert Forecaster.load(tmp_path / "run").predict().shape[0] == 8


def test_a_weighted_combination_weighs_its_members_by_inverse_validation_score(monkeypatch, tmp_path):
    """auto_combination="weighted": the same three members, their mean weighted by the inverse of each one's
    validation score (the choice table's), saved and loaded with its weights."""
    import tsattn.selection as S
    from tsattn.baselines import Combination

    assert S.combination_weights([1.0, 2.0, 4.0]) == pytest.approx([4 / 7, 2 / 7, 1 / 7])
    assert S.combination_weights([0.0, 2.0, 1.0]) == [1.0, 0.0, 0.0]  # a perfect member takes it all
    assert S.combination_weights([np.nan, 2.0, 2.0]) == pytest.approx([0.0, 0.5, 0.5])
    real = S._validation_score
    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))  # one network is enough to weigh (each is trained twice)
    monkeypatch.setattr(S, "_validation_score", lambda *a, **k: -1.0)  # the combination wins
    frame = panel(n=4)
    f = Forecaster("auto", horizon=4, epochs=2).fit(frame)  # weighted: the default
    label = f.choice_["candidate"].iloc[0]
    assert label.startswith("weighted mean of ") and f.choice_["chosen"].iloc[0]
    combination = f.estimator_
    assert isinstance(combination, Combination) and len(combination.weights) == 3
    scores = f.choice_.set_index("candidate")[f.choice_.attrs["metric"]]
    assert combination.weights == pytest.approx(S.combination_weights([scores[n] for n in combination.names]))
    forecasts = np.stack([Forecaster(name, horizon=4, epochs=2).fit(frame).predict()[name]
                          for name in combination.names])
    np.testing.assert_allclose(f.predict()["auto"], np.tensordot(combination.weights, forecasts, axes=1), rtol=1e-5)
    f.save(tmp_path / "weighted")
    again = Forecaster.load(tmp_path / "weighted")
    assert again.estimator_.weights == combination.weights
    pd.testing.assert_frame_equal(again.predict(level=[80]), f.predict(level=[80]))
    monkeypatch.setattr(S, "_validation_score", real)
    with pytest.raises(ConfigError, match="auto_combination must be one of median, weighted, auto"):
        Forecaster("auto", auto_combination="mean").fit(frame)


def test_a_combination_floors_each_member_as_auto_scored_it_and_keeps_its_floor_when_saved():
    """auto scores each member's floored forecasts and combines those; the combination it keeps must forecast the same:
    on data never below 0 a member forecasting -30 counts as 0 in the mean (0 + 10 + 10 weighted), not as -30."""
    from tsattn.baselines import Combination, Naive, from_state

    values = np.r_[np.linspace(100.0, 10.0, 19), 10.0]  # the naive forecast is 10
    origins, first, series, scaler = np.array([19]), np.array([0]), np.array([0]), None  # naive reads no scaler

    class Fixed(Naive):  # a member with a known forecast below zero
        def forecast(self, values, origins, first, series, scaler):
            return np.full((len(origins), self.horizon), -30.0)

    members = [Fixed(3), Naive(3), Naive(3)]
    raw = Combination(members, ["low", "naive", "naive2"], [1.0, 1.0, 1.0])
    floored = Combination(members, ["low", "naive", "naive2"], [1.0, 1.0, 1.0], floor=0.0)
    np.testing.assert_allclose(raw.forecast(values, origins, first, series, scaler), [[-10 / 3] * 3])
    np.testing.assert_allclose(floored.forecast(values, origins, first, series, scaler), [[20 / 3] * 3])
    assert from_state(Combination([Naive(3), Naive(3)], ["a", "b"], floor=0.0).state()).floor == 0.0
    assert from_state({**Combination([Naive(3)], ["a"]).state()}).floor is None


@pytest.mark.parametrize("scores, chosen", [((-1.0, -2.0), "median of "), ((-2.0, -1.0), "weighted mean of ")])
def test_auto_combination_auto_offers_both_combinations_and_keeps_the_lower(monkeypatch, scores, chosen):
    """auto_combination="auto": the weighted mean and the median of the same three members are both candidates (scored
    weighted first, then median: forced here), and the one with the lower validation score is the combination."""
    import tsattn.selection as S

    calls = iter(scores)
    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))  # what is offered and kept, not which networks
    monkeypatch.setattr(S, "_validation_score", lambda *a, **k: next(calls))
    f = Forecaster("auto", horizon=4, epochs=2, auto_combination="auto").fit(panel(n=4))
    labels = list(f.choice_["candidate"])
    assert sum(c.startswith("median of ") for c in labels) == 1
    assert sum(c.startswith("weighted mean of ") for c in labels) == 1
    assert labels[0].startswith(chosen) and f.choice_["chosen"].iloc[0] and f.choice_["chosen"].sum() == 1
    assert (f.estimator_.weights is None) == (chosen == "median of ")


def test_compare_takes_auto_beside_the_networks(monkeypatch, tmp_path):
    """compare runs auto beside the networks, and its report says what auto kept (the run's choice line)."""
    import tsattn.selection as S
    from tsattn.compare import build_spec

    assert build_spec(models=["nbeats", "auto"], seeds=[0]).models == ["nbeats", "auto"]
    with pytest.raises(ConfigError, match="unknown model.*auto"):
        build_spec(models=["automatic"], seeds=[0])
    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    results = tsattn.compare(models=["auto"], data=panel(n=3), seeds=[0], horizon=4, epochs=1, out=tmp_path / "c")
    lines = results.attrs["verdict"]["data"]
    assert lines[-1].startswith("Seed 0: auto chose ") and "validation sMAPE" in lines[-1]
    assert lines[-1] in (tmp_path / "c" / "report.md").read_text()


def test_a_margin_keeps_the_median_unless_a_single_candidate_beats_it_by_more(monkeypatch):
    """With ``SINGLE_MARGIN`` the lowest single candidate wins only when it beats the median combination by more
    than that fraction of its score; otherwise the median is chosen, and the line tsattn fit prints names it."""
    import tsattn.selection as S

    choice = pd.DataFrame({"candidate": ["linear", "median of a, b, c", "naive"], "smape": [9.7, 10.0, 12.0],
                           "seconds": 0.0})
    choice.attrs["metric"] = "smape"
    monkeypatch.setattr(S, "SINGLE_MARGIN", 0.0)
    assert S.chosen_by_margin(choice, "smape", "median of a, b, c") == "linear"  # no margin: the lowest
    monkeypatch.setattr(S, "SINGLE_MARGIN", 0.02)
    assert S.chosen_by_margin(choice, "smape", "median of a, b, c") == "linear"  # 3% lower: clears 2%
    monkeypatch.setattr(S, "SINGLE_MARGIN", 0.05)
    assert S.chosen_by_margin(choice, "smape", "median of a, b, c") == "median of a, b, c"
    choice["chosen"] = choice["candidate"] == "median of a, b, c"
    assert S.chosen_candidate(choice) == "median of a, b, c"
    choice.attrs["margin"] = 0.05
    assert S.describe_choice(choice) == ("auto chose median of a, b, c: validation sMAPE 10 (kept over linear 9.7, "
                                         "which was not lower by more than 5% of its score; 3 candidates)")
    choice["chosen"] = choice["candidate"] == "linear"
    assert S.describe_choice(choice) == ("auto chose linear: validation sMAPE 9.7 (next: median of a, b, c 10; "
                                         "3 candidates)")
    best = choice.iloc[[1, 0, 2]].reset_index(drop=True)  # the median lowest: chosen whatever the margin
    assert S.chosen_by_margin(best, "smape", "median of a, b, c") == "median of a, b, c"
    unscored = choice.assign(smape=[9.7, np.nan, 12.0])  # a median without a score is never preferred
    assert S.chosen_by_margin(unscored, "smape", "median of a, b, c") == "linear"


def test_auto_with_covariates_leaves_out_the_statistical_candidates_that_cannot_read_them():
    """auto with a future-known covariate chose among the candidates that use it (and the naive references): the
    statistical methods, which refuse covariates, used to stop the fit with their refusal."""
    from tsattn.selection import takes_covariates
    from tsattn.covariates import Covariates

    assert takes_covariates("ets", None) and takes_covariates("linear", Covariates.of(None, ["promo"], None, None))
    assert not takes_covariates("ets", Covariates.of(None, ["promo"], None, None))
    frame = panel(n=3)
    frame["promo"] = (np.arange(len(frame)) % 5 == 0).astype(float)
    f = Forecaster("auto", horizon=4, epochs=1, futr_exog=["promo"]).fit(frame)
    candidates = set(f.choice_["candidate"])
    assert {*AUTO_NETWORKS, "naive", "linear"} <= candidates and not candidates & set(statistical_candidates())
    future = frame.groupby("unique_id").tail(4)[["unique_id", "ds", "promo"]].copy()
    future["ds"] = future["ds"] + pd.DateOffset(months=4)
    assert f.predict(futr_df=future)["auto"].notna().all()


def test_a_hold_out_longer_than_the_one_series_is_refused_not_replaced(tmp_path):
    """`tsattn fit --set split=holdout --set holdout=1000` on a series of 120 values fell back to theta and tested it on
    the last value alone (the fallback replaced the hold-out by the horizon); it is refused in one line naming a
    hold-out that works, and nothing is written."""
    path = tmp_path / "series.csv"
    pd.DataFrame({"ds": pd.date_range("2000-01-01", periods=120, freq="MS"),
                  "y": 5 + np.sin(np.arange(120) / 3)}).to_csv(path, index=False)
    result = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(path), "--column", "y",
                                       "--date-column", "ds", "--set", "split=holdout", "--set", "holdout=1000",
                                       "--out", str(tmp_path / "run"), "-q"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "holdout=1000 asks for a test part as long as the series or longer (it has 120 values); give a holdout " \
           "below 120, e.g. 24" in result.output
    assert not (tmp_path / "run").exists()


def test_auto_keeps_autoets_deviation_at_the_ends_once_for_the_state_it_keeps(monkeypatch):
    """interval_scale="ets": auto's candidates leave AutoETS's deviation at the series' ends to auto, which fits it
    for a single network it keeps (its tails hold a window, too few values to fit AutoETS at predict); a combination
    with a statistical member keeps every value instead, and its bands at the ends (AutoETS fitted when first needed)
    equal those from the deviation computed at fit."""
    pytest.importorskip("statsforecast")
    import dataclasses

    import tsattn.selection as S
    from tsattn.baselines import ets_deviation
    from tsattn.state import FittedState

    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    monkeypatch.setattr(S, "statistical_candidates", lambda: ("ets",))
    frame = panel(n=4)
    values = frame["y"].to_numpy()
    ends, starts = np.arange(1, 5) * 60 - 1, np.arange(4) * 60
    kept = []
    real = FittedState.__init__
    monkeypatch.setattr(FittedState, "__init__", lambda self, *a, **k: kept.append(k.get("end_deviation")) or
                        real(self, *a, **k))
    monkeypatch.setattr(S, "chosen_by_margin", lambda choice, metric, label: "simple-rnn")
    single = Forecaster("auto", horizon=4, epochs=1, interval_scale="ets").fit(frame, verbose=0)
    assert single.config_.model == "simple-rnn"
    assert [d is None for d in kept] == [True, True, False]  # the two candidates' states, then the one auto keeps
    np.testing.assert_allclose(single.state_.end_deviation, ets_deviation(values, ends, starts, 12, 4))

    monkeypatch.setattr(S, "chosen_by_margin", lambda choice, metric, label: label)
    combined = Forecaster("auto", horizon=4, epochs=1, interval_scale="ets").fit(frame, verbose=0)
    assert combined.choice_["candidate"].iloc[0].startswith("weighted mean of ")
    assert combined.state_.end_deviation is None and (combined.state_.tails.lengths == 60).all()
    band = combined.predict(level=[80])
    combined.state_ = dataclasses.replace(combined.state_, end_deviation=ets_deviation(values, ends, starts, 12, 4))
    pd.testing.assert_frame_equal(combined.predict(level=[80]), band)


def test_auto_without_statsforecast_says_which_methods_it_did_not_try(monkeypatch, tmp_path):
    """On a core install (no statsforecast) auto chooses among the networks and the baselines, and its choice line
    says DynamicOptimizedTheta and AutoETS were not tried and how to install them, also after save and load."""
    import tsattn.baselines
    import tsattn.selection as S
    from tsattn.selection import describe_choice

    monkeypatch.setattr(S, "AUTO_NETWORKS", ("simple-rnn",))
    monkeypatch.setattr(tsattn.baselines, "statsforecast_installed", lambda: False)
    fitted = Forecaster("auto", horizon=4, epochs=1).fit(panel(n=2), verbose=0)
    assert not {"dynamic-theta", "ets"} & set(fitted.choice_["candidate"])
    line = describe_choice(fitted.choice_)
    assert line.endswith("; not tried: dynamic-theta and ets (statsforecast is not installed: pip install "
                         "'tsattn[bench]')")
    assert describe_choice(Forecaster.load(fitted.save(tmp_path / "auto")).choice_) == line
    monkeypatch.setattr(tsattn.baselines, "statsforecast_installed", lambda: True)
    assert "not tried" not in describe_choice(Forecaster("auto", horizon=4, epochs=1).fit(panel(n=2), verbose=0).choice_)

"""One pipeline: the Forecaster, `tsattn fit` and the harness (what compare and the benchmarks call) fit one way,
so the same data, settings and seed give the same forecasts, intervals and metrics; and the fitted state, its
calibration and its artefact are shared by all of them."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from conftest import make_series
from tsattn import artefacts
from tsattn.cli.main import main
from tsattn.config import AUTO_MIN_SERIES, RunConfig, auto_preset, check_config, resolve, settle, window_config
from tsattn.errors import ConfigError, DataError
from tsattn.evaluation import calibrate, origins_in, score_origins, summarise
from tsattn.forecaster import Forecaster
from tsattn.harness import fit, fit_state
from tsattn.intervals import series_scale

DATA = Path(__file__).resolve().parent / "data"
HORIZON = 4
SETTINGS = {"window": 8, "epochs": 3, "batch_size": 16, "units": 4}


def panel(n_series=5, n=48):
    frames = []
    for k in range(n_series):
        series = make_series(n=n - 2 * (k % 5), seed=k) * (k % 5 + 1)
        frames.append(pd.DataFrame({"unique_id": f"s{k}", "ds": series.index, "y": series.to_numpy()}))
    return pd.concat(frames, ignore_index=True)


def without_last(frame, count):
    return frame[frame.groupby("unique_id", sort=False).cumcount(ascending=False) >= count]


@pytest.fixture(scope="module")
def three_paths(tmp_path_factory):
    """The same small panel, settings and seed through `tsattn fit`, the harness and the Forecaster."""
    folder = tmp_path_factory.mktemp("paths")
    frame = panel()
    csv = folder / "long.csv"
    frame.to_csv(csv, index=False)
    run = folder / "run"
    result = CliRunner().invoke(main, [
        "fit", "--model", "simple-rnn", "--csv", str(csv), "--id-column", "unique_id", "--date-column", "ds",
        "--column", "y", "--horizon", str(HORIZON), "--window", "8", "--epochs", "3", "--batch-size", "16",
        "--set", "units=4", "--set", "split=holdout", "--set", f"holdout={HORIZON}", "--level", "80",
        "--seed", "0", "--out", str(run), "-q"])
    assert result.exit_code == 0, result.output
    harness = fit(RunConfig(model="simple-rnn", dataset=None, horizon=HORIZON, split="holdout", holdout=HORIZON,
                            level=[80]), series=frame, **SETTINGS)
    forecaster = Forecaster("simple-rnn", horizon=HORIZON, **SETTINGS).fit(without_last(frame, HORIZON),
                                                                          validation=HORIZON, seed=0)
    return run, harness, forecaster


def test_forecaster_cli_and_harness_give_the_same_forecasts_and_intervals(three_paths):
    run, harness, forecaster = three_paths
    predicted = forecaster.predict(level=80)
    cli = pd.read_csv(run / "predictions.csv")
    cli = cli[cli["part"] == "test"].sort_values(["unique_id", "ds", "step"])
    np.testing.assert_allclose(predicted["simple-rnn"], cli["predicted"], rtol=1e-6)
    np.testing.assert_allclose(predicted["simple-rnn-lo-80"], cli["lo-80"], rtol=1e-6)
    np.testing.assert_allclose(predicted["simple-rnn-hi-80"], cli["hi-80"], rtol=1e-6)
    test = harness.forecasts["test"]
    np.testing.assert_allclose(predicted["simple-rnn"].to_numpy().reshape(-1, HORIZON), test.predicted, rtol=1e-6)
    # the same training, the same calibration
    np.testing.assert_allclose(forecaster.history_["loss"], harness.history["loss"], rtol=1e-6)
    assert forecaster.conformal_.state() == harness.state.conformal.state()
    np.testing.assert_allclose(forecaster.mase_scale_, harness.mase_scale)


def test_forecaster_and_cli_give_the_same_metrics(three_paths):
    """Forecaster.evaluate on the hold-out windows scores what `tsattn fit` reports on its test part."""
    run, harness, forecaster = three_paths
    metrics = json.loads((run / "metrics.json").read_text())
    frame = panel()
    state = forecaster.state_
    tails = state.panel_of(frame)
    ends = tails.offsets[1:] - HORIZON - 1  # the last origin before each series' hold-out
    scores = score_origins(state, tails, ends, HORIZON)
    summary = summarise(tails, scores, HORIZON)
    assert summary["model"]["smape"] == pytest.approx(metrics["test"]["model"]["smape"], rel=1e-6)
    assert summary["model"]["mase"] == pytest.approx(metrics["test"]["model"]["mase"], rel=1e-6)
    assert harness.metrics["test"]["model"]["smape"] == pytest.approx(metrics["test"]["model"]["smape"], rel=1e-9)


def test_compare_and_tune_score_what_the_cli_and_the_forecaster_score(three_paths, tmp_path):
    """The fourth and fifth paths: a compare run and tune's refit of the defaults fit the same model on the same data
    with the same seed, so their test metrics are `tsattn fit`'s (and so the Forecaster's, above)."""
    run, harness, _ = three_paths
    metrics = json.loads((run / "metrics.json").read_text())["test"]["model"]
    settings = {"horizon": HORIZON, "split": "holdout", "holdout": HORIZON, "level": [80], **SETTINGS}
    frame = panel()
    frame.to_csv(tmp_path / "long.csv", index=False)
    from tsattn.compare import compare

    results = compare(models=["simple-rnn"], seeds=[0], settings=settings, echo=lambda line: None,
                      csv=[{"path": str(tmp_path / "long.csv"), "column": "y", "date_column": "ds",
                            "id_column": "unique_id", "name": "long"}])
    row = results[results["model"] == "simple-rnn"].iloc[0]
    assert row["test_smape"] == pytest.approx(metrics["smape"], rel=1e-9)
    assert row["test_mase"] == pytest.approx(metrics["mase"], rel=1e-9)
    pytest.importorskip("optuna")
    tuned = tsattn.tune("simple-rnn", data=frame, trials=1, settings=settings, echo=lambda line: None,
                        space={"units": [4], "learning_rate": None, "batch_size": None, "lookback": None,
                               "window": None, "cell": None, "dropout": None, "skip": None})
    defaults = tuned.test["defaults"]["test"]
    assert defaults["smape"] == pytest.approx(metrics["smape"], rel=1e-9)
    assert defaults["mase"] == pytest.approx(metrics["mase"], rel=1e-9)


def test_run_directory_loads_into_the_same_state(three_paths):
    run, harness, _ = three_paths
    loaded = Forecaster.load(run).state_
    assert loaded.window == harness.state.window and loaded.horizon == HORIZON
    np.testing.assert_allclose(loaded.conformal.state()["scores"], harness.state.conformal.state()["scores"],
                               rtol=1e-12)  # through JSON
    assert loaded.trained_until == harness.state.trained_until
    np.testing.assert_allclose(loaded.tails.values, harness.state.tails.values)


def test_api_defaults_are_the_cli_defaults():
    """A panel with a competition horizon (attrs) gets the CLI's hold-out and automatic window in Python too."""
    frame = panel(n_series=4, n=40)
    frame.attrs["horizon"] = HORIZON
    f = Forecaster("simple-rnn", horizon=HORIZON, epochs=1, units=4).fit(frame)
    assert f.config_.split == "auto" and f.config_.preset == "classic"  # 4 series: the classic settings
    config = settle(check_config(RunConfig(model="simple-rnn", dataset=None, horizon=HORIZON)), tsattn.as_panel(frame))
    cli_window = window_config(frame, config).window  # what `tsattn fit --horizon 4` picks on the full data
    assert f.window_ == cli_window == 24  # the shortest series has 34 values: the default window fits
    # the last HORIZON values of each series are the validation part (nothing is held out unused)
    assert str(f.trained_until_) == str(pd.to_datetime(frame["ds"]).max())
    assert f.conformal_ is not None


def test_set_params_refuses_unknown_keys():
    f = Forecaster("simple-rnn")
    f.set_params(units=8, epochs=2)
    assert f.get_params()["units"] == 8
    with pytest.raises(ConfigError, match="invalid parameter.*nonsense"):
        f.set_params(nonsense=1)


@pytest.mark.parametrize("model", ["naive", "seasonal-naive", "linear"])
def test_baselines_are_forecasters_through_the_same_fit_path(model, tmp_path):
    frame = panel(n_series=3)
    f = Forecaster(model, window=12, horizon=HORIZON).fit(frame, validation=HORIZON)
    forecast = f.predict(level=80)
    assert list(forecast.columns) == ["unique_id", "ds", model, f"{model}-lo-80", f"{model}-hi-80"]
    assert (forecast[f"{model}-lo-80"] <= forecast[model]).all() and (forecast[model] <= forecast[f"{model}-hi-80"]).all()
    path = f.save(tmp_path / "b.tsattn")
    pd.testing.assert_frame_equal(Forecaster.load(path).predict(level=80), forecast)


def test_calibration_is_one_function():
    """fit_state's calibration is evaluation.calibrate on the validation part, in the state's scale."""
    frame = panel(n_series=3)
    config = check_config(RunConfig(model="simple-rnn", dataset=None, horizon=HORIZON, split="holdout",
                                    holdout=HORIZON).updated(**SETTINGS))
    config = settle(config, tsattn.as_panel(frame))
    data = window_config(frame, config)
    state = fit_state(config, data)
    again = calibrate(state.estimator, data, series_scale(state.mase_scale, data.scaler.scale), state.season)
    assert again.state() == state.calibration.state() and list(again.methods) == ["conformal"]


def test_origins_in_keep_windows_inside_each_series():
    frame = panel(n_series=2, n=20)
    p = tsattn.panel.as_panel(frame)
    origins = origins_in(p, lookback=5, horizon=3)
    series = p.series_of(origins)
    assert ((origins - 4) >= p.offsets[series]).all()            # inputs start inside the series
    assert ((origins + 3) < p.offsets[series + 1]).all()         # targets end inside it
    assert len(origins) == sum(n - 5 - 3 + 1 for n in p.lengths)
    with pytest.raises(DataError, match="too few"):
        origins_in(p, lookback=30, horizon=3)


@pytest.mark.parametrize("name", ["single", "panel"])
def test_artefacts_of_release_0_1_0_load_and_forecast_the_same(name):
    """Files written by tsattn 0.1.0 (before the fitted state) still load, with the same forecasts and intervals."""
    expected = json.loads((DATA / "release-0.1.0-expected.json").read_text())[name]
    f = Forecaster.load(DATA / f"release-0.1.0-{name}.tsattn")
    if name == "single":
        forecast = f.predict(2, level=80)
        values = forecast.iloc[:, 0]
    else:
        forecast = f.predict(level=80)
        values = forecast["simple-rnn"]
        assert forecast["unique_id"].tolist() == expected["ids"]
    point = forecast.columns[0] if name == "single" else "simple-rnn"  # 0.1.0 wrote lo-80; now <model>-lo-80
    np.testing.assert_allclose(values, expected["forecast"], rtol=1e-5)
    np.testing.assert_allclose(forecast[f"{point}-lo-80"], expected["lo-80"], rtol=1e-5)
    np.testing.assert_allclose(forecast[f"{point}-hi-80"], expected["hi-80"], rtol=1e-5)


def test_a_tft_saved_before_its_stacked_variable_networks_loads_and_forecasts_the_same():
    """A tft written at 06fae2f (one gated residual network layer per input variable, before the stack) still loads,
    with past-observed, future-known and static covariates, and gives the same forecasts and intervals."""
    expected = json.loads((DATA / "tft-06fae2f-expected.json").read_text())
    f = Forecaster.load(DATA / "tft-06fae2f.tsattn")
    futr = pd.DataFrame(expected["futr_df"]).assign(ds=lambda d: pd.to_datetime(d["ds"]))
    forecast = f.predict(futr_df=futr, static_df=pd.DataFrame(expected["static_df"]), level=80)
    want = pd.DataFrame(expected["forecast"])
    assert forecast["unique_id"].tolist() == want["unique_id"].tolist()
    for column in ("tft", "tft-lo-80", "tft-hi-80"):
        np.testing.assert_allclose(forecast[column], want[column], rtol=1e-5)
    assert not f.state_.keras_model.get_layer("past_selection").stacked


def test_artefact_module_reads_a_state_without_the_facade(tmp_path):
    f = Forecaster("naive", window=12).fit(make_series(60))
    path = artefacts.save(f.state_, tmp_path / "n.tsattn")
    state = artefacts.load(path)
    assert state.name == "naive" and state.window == 12
    np.testing.assert_allclose(state.forecast(state.contexts(state.tails), 3, state.scaler, np.zeros(1, int)),
                               f.predict(3).to_numpy()[None])


def test_the_m3_line_of_the_issue_fits_with_the_cli_defaults():
    """`Forecaster(model, horizon=18).fit(m3_monthly_frame)` fits (48 of its series here, one epoch), with the window
    and the 18-value validation that `tsattn fit --dataset m3-monthly --horizon 18` uses."""
    m3 = tsattn.load_dataset("m3-monthly")
    ids = m3["unique_id"].unique()[::30]
    frame = m3[m3["unique_id"].isin(ids)]
    f = Forecaster("simple-rnn", horizon=18, epochs=1, units=4, sampled_steps=2).fit(frame)
    config = settle(check_config(RunConfig(model="simple-rnn", dataset=None, horizon=18)), tsattn.as_panel(frame))
    cli = window_config(frame, config)
    assert f.config_.preset == config.preset == "nbeats-recipe"  # 48 series, h = 18: the recipe, padded
    assert f.window_ == cli.window == 36 and f.config_.pad
    assert cli.split.method == "holdout" and cli.split.holdout == 18
    assert f.conformal_.counts == [len(ids)] * 18  # one validation window of 18 steps per series
    forecast = f.predict(level=80)
    assert len(forecast) == 18 * len(ids) and forecast["simple-rnn-lo-80"].notna().all()


def test_the_default_preset_is_chosen_from_the_shape_of_the_data():
    """preset "auto" (the default): the N-BEATS recipe for a panel of many series and a multi-step horizon, the
    classic settings for one series, a few series or one-step forecasts; never by a dataset's name."""
    many, few = tsattn.as_panel(panel(n_series=AUTO_MIN_SERIES, n=40)), tsattn.as_panel(panel(n_series=3, n=40))
    assert auto_preset(many, 4) == ("nbeats-recipe", {"pad": True})
    one = tsattn.as_panel(panel(n_series=1, n=40))
    assert auto_preset(many, 1)[0] == auto_preset(few, 4)[0] == auto_preset(one, 4)[0] == "classic"
    assert RunConfig().preset == "auto"
    with pytest.raises(ConfigError, match="call settle"):
        window_config(many, RunConfig(dataset=None, horizon=4))


def test_settings_given_explicitly_survive_the_automatic_preset():
    """Settle applies the chosen preset under every setting the user gave: even one equal to the classic default
    (scaling=minmax), model parameters, and a window in place of the recipe's lookback."""
    many = tsattn.as_panel(panel(n_series=AUTO_MIN_SERIES, n=40))
    config = check_config(RunConfig(model="simple-rnn", dataset=None, horizon=4).updated(scaling="minmax", units=4,
                                                                                         epochs=2))
    settled = settle(config, many)
    assert settled.preset == "nbeats-recipe"
    assert settled.given == ["dataset", "epochs", "horizon", "model", "scaling", "units"]
    assert (settled.scaling, settled.epochs, settled.loss, settled.lookback, settled.pad) == ("minmax", 2, "smape", 2, True)
    assert settled.model_params == {"units": 4, "normalise": "window"}
    assert settle(settled, many) is settled  # settled once: a refit keeps what was chosen
    windowed = settle(config.updated(window=6), many)
    assert (windowed.window, windowed.lookback) == (6, None)
    assert settle(config.updated(pad=False), many).pad is False
    assert settle(config.updated(preset="classic"), many).loss == "mse"  # a preset named is kept


def test_the_recipe_gives_nbeats_alone_masked_targets_and_a_setting_named_beside_it_wins():
    """Under the N-BEATS recipe nbeats trains with masked targets (chosen on validation for nbeats only), whether the
    recipe is chosen for the data, named, or reached through auto's candidate; other networks do not, and
    masked_targets=false named beside it is kept. A split the preset's masking cannot take says which preset set it."""
    from tsattn.selection import candidate_config

    many = tsattn.as_panel(panel(n_series=AUTO_MIN_SERIES, n=40))
    chosen = {model: settle(check_config(RunConfig(model=model, dataset=None, horizon=4)), many)
              for model in ("nbeats", "simple-rnn", "patch-transformer", "auto")}
    assert [c.masked_targets for c in chosen.values()] == [True, False, False, False]
    assert candidate_config(chosen["auto"], "nbeats", many).masked_targets is True
    assert candidate_config(chosen["auto"], "attention-rnn", many).masked_targets is False
    assert RunConfig().updated(preset="nbeats-recipe", model="nbeats").masked_targets is True
    assert RunConfig().updated(preset="classic", model="nbeats").masked_targets is False
    kept = settle(check_config(RunConfig(model="nbeats", dataset=None, horizon=4, masked_targets=False)), many)
    assert (kept.preset, kept.masked_targets) == ("nbeats-recipe", False)
    assert candidate_config(settle(check_config(RunConfig(model="auto", dataset=None, horizon=4,
                                                          masked_targets=False)), many), "nbeats", many).masked_targets \
        is False
    shuffled = RunConfig().updated(preset="nbeats-recipe", model="nbeats", dataset=None, horizon=4, split="shuffled",
                                   pad=False)
    with pytest.raises(ConfigError, match="set for nbeats by the nbeats-recipe preset.*masked_targets=false"):
        window_config(many, check_config(shuffled))
    window_config(many, check_config(shuffled.updated(masked_targets=False)))


def test_the_recipe_gives_attention_rnn_the_naive_skip_on_data_without_a_season_only(capsys):
    """attention-rnn's skip path is "naive" under the recipe on data without a season (chosen on validation), whether
    the recipe is chosen for the data or reached through auto's candidate; seasonal data, the classic settings, a
    skip named by the user and covariates (whose default is the linear skip) keep theirs, and a fitted model has it
    and says so when it starts (a skip the user named is not said to be chosen)."""
    from tsattn.config import settings_text
    from tsattn.selection import candidate_config

    def shaped(freq, n_series=AUTO_MIN_SERIES):
        frame = panel(n_series=n_series, n=30)
        frame["ds"] = frame.groupby("unique_id").cumcount() if freq is None else \
            frame.groupby("unique_id")["ds"].transform(lambda d: pd.date_range("1980", periods=len(d), freq=freq))
        return tsattn.as_panel(frame)

    def skip(panel_, **settings):
        config = settle(check_config(RunConfig(model="attention-rnn", dataset=None, horizon=4, **settings)), panel_)
        return config.resolved_model_params()["skip"]

    yearly, steps, monthly = shaped("YS"), shaped(None), shaped("MS")
    assert (skip(yearly), skip(steps), skip(monthly)) == ("naive", "naive", "relative")
    assert skip(shaped("YS", n_series=3)) == skip(monthly.subset(np.arange(3))) == "relative"  # classic settings
    assert skip(yearly, model_params={"skip": "relative"}) == "relative"                     # named: kept
    assert skip(yearly, season=12) == "relative"                                             # a season set
    auto = settle(check_config(RunConfig(model="auto", dataset=None, horizon=4)), yearly)
    assert candidate_config(auto, "attention-rnn", yearly).resolved_model_params()["skip"] == "naive"
    assert candidate_config(auto, "simple-rnn", yearly).resolved_model_params()["skip"] == \
        RunConfig(model="simple-rnn").resolved_model_params()["skip"]                         # attention-rnn alone
    frame = yearly.to_frame()
    frame["x"] = np.arange(len(frame), dtype=float) % 7
    covariates = tsattn.as_panel(frame, exog=["x"])
    assert skip(covariates, hist_exog=["x"]) == "linear"
    fitted = tsattn.Forecaster("attention-rnn", horizon=4, seed=0, units=4, sampled_steps=2, epochs=1).fit(
        yearly.to_frame())
    assert fitted.state_.config.resolved_model_params()["skip"] == "naive"
    said = capsys.readouterr().err
    assert f"settings nbeats-recipe (chosen for {AUTO_MIN_SERIES} series, horizon 4), skip naive (for data without " \
           "a season)" in said, said

    def text(panel_, **settings):
        config = RunConfig(model="attention-rnn", dataset=None, horizon=4, **settings)
        return settings_text(settle(check_config(config), panel_), panel_, automatic=True)

    assert "skip naive (for data without a season)" in text(yearly)
    assert "skip" not in text(monthly) and "skip" not in text(yearly, model_params={"skip": "relative"})
    assert "skip" not in text(yearly, model_params={"skip": "naive"})                        # named, not chosen
    assert "skip" not in settings_text(settle(check_config(RunConfig(model="attention-rnn", dataset=None, horizon=4)
                                                           .updated(**{"model.skip": "naive"})), yearly), yearly, True)


def test_masked_targets_stay_off_where_future_known_covariates_would_be_read_past_the_data():
    """A window whose targets run past the end of the data (the final fit's masked windows) would read the unknown
    future values of future-known covariates (NaN: the loss became non-finite): the recipe's masking is turned off
    there, past-observed covariates keep it, and masked_targets=true named with futr_exog is refused in one line."""
    many = tsattn.as_panel(panel(n_series=AUTO_MIN_SERIES, n=40))
    settled = {kind: settle(check_config(RunConfig(model="nbeats", dataset=None, horizon=4, **{kind: ["promo"]})),
                            many) for kind in ("futr_exog", "hist_exog")}
    assert (settled["futr_exog"].masked_targets, settled["hist_exog"].masked_targets) == (False, True)
    assert settled["futr_exog"].preset == "nbeats-recipe"
    with pytest.raises(ConfigError, match=r"future-known covariates \(promo\) are unknown; drop masked_targets"):
        check_config(RunConfig(model="nbeats", dataset=None, horizon=4, futr_exog=["promo"], masked_targets=True))


def test_a_preset_named_to_the_constructor_is_applied_as_updated_applies_it():
    """RunConfig(preset=...) once recorded the preset's name over the default settings: a fit said "nbeats-recipe"
    and trained by the classic ones (mse, min-max scaling, early stopping). Now the constructor applies it, the
    settings named beside it winning; an artefact's saved settings (every field and its given list) are kept as saved."""
    direct = RunConfig(model="nbeats", preset="nbeats-recipe", epochs=2, dataset=None, horizon=6)
    assert direct == RunConfig(model="nbeats").updated(preset="nbeats-recipe", epochs=2, dataset=None, horizon=6)
    assert (direct.loss, direct.scaling, direct.early_stopping, direct.epochs, direct.masked_targets) == \
        ("smape", "none", False, 2, True)
    assert direct.given == ["dataset", "epochs", "horizon", "model"]
    tutorial = RunConfig(preset="tutorial-sunspots", epochs=3)
    assert (tutorial.model, tutorial.window, tutorial.epochs, tutorial.model_params["units"]) == ("simple-rnn", 12, 3, 3)
    mine = RunConfig(model="nbeats", preset="nbeats-recipe", model_params={"units": 16}, loss="mae")
    assert (mine.loss, mine.model_params) == ("mae", {"normalise": "window", "units": 16})
    assert dataclasses.replace(direct, loss="mase").loss == "mase"  # a copy names every field: nothing re-applied
    assert RunConfig(**direct.to_dict()) == direct


def test_settings_named_to_the_constructor_at_their_default_survive_the_preset_and_the_hold_out():
    """RunConfig(...) records the settings it is named (as updated() does): early_stopping=True, the classic default
    the recipe turns off, is kept; horizon=1 is kept on data whose hold-out would give its own horizon. A copy by
    dataclasses.replace, which names every field and its given list, records nothing more."""
    many = tsattn.as_panel(panel(n_series=AUTO_MIN_SERIES, n=40))
    named = RunConfig(model="simple-rnn", dataset=None, horizon=4, early_stopping=True, batch_size=32)
    assert named.given == ["batch_size", "dataset", "early_stopping", "horizon", "model"]
    settled = settle(check_config(named), many)
    assert (settled.preset, settled.early_stopping, settled.batch_size, settled.loss) == ("nbeats-recipe", True, 32,
                                                                                          "smape")
    unnamed = settle(check_config(RunConfig(model="simple-rnn", dataset=None, horizon=4)), many)
    assert (unnamed.early_stopping, unnamed.batch_size) == (False, 1024)  # the recipe's, where nothing was named
    assert dataclasses.replace(unnamed, epochs=3).given == unnamed.given == ["dataset", "horizon", "model"]
    assert RunConfig("nbeats").given == ["model"] and RunConfig().given == []
    held = panel(n_series=3, n=40)
    held.attrs["horizon"] = 6  # data with its own hold-out horizon (as M3's frames carry)
    assert resolve(RunConfig(model="simple-rnn", horizon=1), held)[0].horizon == 1
    assert resolve(RunConfig(model="simple-rnn"), held)[0].horizon == 6
    assert resolve({"model": "simple-rnn"}, held)[0].horizon == 6


def test_the_automatic_preset_is_the_same_through_the_forecaster_and_the_cli(tmp_path):
    """A panel of AUTO_MIN_SERIES series, horizon 4: `tsattn fit` and the Forecaster choose the recipe alike, record
    it in config.json and the artefact, and give the same test forecasts."""
    frame = panel(n_series=AUTO_MIN_SERIES, n=40)
    csv = tmp_path / "panel.csv"
    frame.to_csv(csv, index=False)
    settings = ["--set", "units=4", "--set", "epochs=2", "--set", "sampled_steps=3", "--set", "batch_size=64"]
    done = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(csv), "--id-column", "unique_id",
                                     "--date-column", "ds", "--column", "y", "--horizon", "4", "--set", "split=holdout",
                                     "--set", "holdout=4", *settings, "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    assert f"settings nbeats-recipe (chosen for {AUTO_MIN_SERIES} series, horizon 4)" in done.output
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert recorded["preset"] == "nbeats-recipe" and recorded["loss"] == "smape" and recorded["pad"] is True
    f = Forecaster("simple-rnn", horizon=4, units=4, epochs=2, sampled_steps=3, batch_size=64).fit(
        without_last(frame, 4), validation=4)
    assert f.config_.preset == "nbeats-recipe" and f.window_ == recorded["lookback"] * 4
    cli = pd.read_csv(tmp_path / "run" / "predictions.csv")
    cli = cli[cli["part"] == "test"].sort_values(["unique_id", "ds", "step"])
    ours = f.predict().sort_values(["unique_id", "ds"])
    np.testing.assert_allclose(ours["simple-rnn"], cli["predicted"], rtol=1e-6)
    path = f.save(tmp_path / "auto.tsattn")
    assert Forecaster.load(path).config_.preset == "nbeats-recipe"
    again = Forecaster.load(path).predict().sort_values(["unique_id", "ds"])
    np.testing.assert_allclose(again["simple-rnn"], ours["simple-rnn"])


def test_the_final_fit_gives_tsattn_fit_and_the_forecaster_the_same_forecasts():
    """A panel trained by the recipe final-fits on training + validation values: tsattn fit's test forecasts and a
    Forecaster fitted on the values before the hold-out forecast the same numbers (the same windows, scaler, seed)."""
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    frame = tsattn.load_dataset("m3-yearly")
    frame = frame[frame["unique_id"].isin(frame["unique_id"].unique()[:45])]
    h = 6
    result = fit(RunConfig(model="nbeats", dataset=None, horizon=h, epochs=2, sampled_steps=3), series=frame)
    assert result.state.config.preset == "nbeats-recipe" and result.state.selection is not None
    seen = frame[frame.groupby("unique_id").cumcount(ascending=False) >= h]
    f = tsattn.Forecaster("nbeats", horizon=h, epochs=2, sampled_steps=3).fit(seen)
    assert f.state_.selection is not None
    np.testing.assert_array_equal(f.predict()["nbeats"].to_numpy().reshape(-1, h), result.forecasts["test"].predicted)

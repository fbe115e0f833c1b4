"""The one way in (issue 35): settings and data are resolved by one function, so every public entry fits the same
covariates, and the same model, data and seed give the same forecasts, intervals and metrics on every path."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from tsattn import Forecaster
from tsattn.cli.main import main
from tsattn.config import RunConfig, check_config, resolve
from tsattn.errors import ConfigError

from test_covariates import STATIC, panel_frame

H = 3
# covariates of every kind, and tiny settings
SETTINGS = dict(model="simple-rnn", horizon=H, window=6, epochs=2, batch_size=16, units=3, futr_exog=["promo"],
                hist_exog=["price"], stat_exog=["kind", "size"])
COLUMNS = ["price", "promo", "kind=a", "kind=b", "size"]


@pytest.fixture(scope="module")
def frame():
    return panel_frame()


def network_inputs(state):
    return state.covariates.columns, state.keras_model.input_shape


def test_resolve_reads_covariates_and_static_features_of_user_data(frame):
    config, panel = resolve(RunConfig().updated(**SETTINGS), frame, STATIC)
    assert panel.exog_names == ("price", "promo") and panel.static is not None
    assert config.dataset is None and config.preset == "classic"  # the user's data; settled for its shape


def test_check_config_is_a_pure_check():
    config = RunConfig().updated(futr_exog="promo,price", freq="MS")
    before = config.to_dict()
    assert check_config(config) is config and config.to_dict() == before
    assert config.normalised().futr_exog == ["promo", "price"]


def test_every_public_entry_fits_with_the_covariates(frame, tmp_path):
    expected = (COLUMNS, (None, 6, 1 + len(COLUMNS)))  # the target, then price, promo (read H steps ahead), kind=a/b, size
    settings = {k: v for k, v in SETTINGS.items() if k != "model"}

    forecaster = Forecaster("simple-rnn", **settings).fit(frame, static_df=STATIC, seed=0)
    assert network_inputs(forecaster.state_) == expected

    result = tsattn.fit(RunConfig().updated(**SETTINGS), series=frame, static_df=STATIC)  # it dropped them before
    assert network_inputs(result.state) == expected
    with pytest.raises(ConfigError, match="static and static_df name the same argument of fit\\(\\); give one"):
        tsattn.fit(RunConfig().updated(**SETTINGS), series=frame, static=STATIC, static_df=STATIC)

    windows = forecaster.cross_validation(frame, n_windows=1, static_df=STATIC, refit=True)
    assert len(windows) == 3 * H and windows["simple-rnn"].notna().all()

    pytest.importorskip("optuna")
    fixed = {k: v for k, v in settings.items() if k != "units"}  # units is searched (a one-value space) here
    tuned = tsattn.tune("simple-rnn", data=frame, static_df=STATIC, trials=1, settings=fixed,
                        space={"units": [3], "learning_rate": None, "batch_size": None, "lookback": None,
                               "window": None, "cell": None, "dropout": None, "skip": None}, echo=lambda line: None)
    assert network_inputs(tuned.forecaster.state_) == expected  # it refused the frame before

    frame.to_csv(tmp_path / "panel.csv", index=False)
    STATIC.to_csv(tmp_path / "static.csv", index=False)
    command = ["fit", "--model", "simple-rnn", "--csv", str(tmp_path / "panel.csv"),
               "--id-column", "unique_id", "--date-column", "ds", "--column", "y", "--futr-exog", "promo",
               "--hist-exog", "price", "--stat-exog", "kind,size", "--static-csv", str(tmp_path / "static.csv"),
               "--horizon", str(H), "--window", "6", "--epochs", "2", "--batch-size", "16", "--set", "units=3",
               "--out", str(tmp_path / "run"), "-q"]
    done = CliRunner().invoke(main, command)  # the `tsattn` script's command, in this process
    assert done.exit_code == 0, done.output
    assert network_inputs(Forecaster.load(tmp_path / "run").state_) == expected
    assert set(pd.read_csv(tmp_path / "run" / "covariate_importance.csv")["kind"]) == {"futr_exog", "hist_exog",
                                                                                       "stat_exog"}

    from tsattn.compare import compare

    results = compare(models=["simple-rnn"], csv=[{"path": str(tmp_path / "panel.csv"), "column": "y",
                                                   "date_column": "ds", "id_column": "unique_id", "name": "panel"}],
                      seeds=[0], settings={**settings, "static_csv": str(tmp_path / "static.csv")},
                      out=tmp_path / "cmp", echo=lambda line: None)
    record = json.loads(next(p for p in (tmp_path / "cmp" / "runs").glob("*.json")
                             if "without" not in p.name).read_text())
    assert record["parameters"] == forecaster.model_.count_params()
    assert "simple-rnn without covariates" in set(results["model"])


def test_a_bad_setting_is_refused_before_the_data_is_read(tmp_path):
    with pytest.raises(ConfigError, match="epochs"):
        resolve(RunConfig(csv=str(tmp_path / "missing.csv"), dataset=None).updated(epochs=0))


def test_evaluate_and_backtest_score_the_baselines_fit_scores():
    """One scoring core: Forecaster.evaluate and backtest show the linear autoregression `tsattn fit` shows, fitted
    with the model on the same training windows (a retraining backtest: each refit's own, fitted on its past)."""
    from conftest import make_series

    series = make_series(n=120)
    f = Forecaster("simple-rnn", window=8, horizon=2, epochs=2, units=3).fit(series.iloc[:100], seed=0)
    assert [model.key for model in f.state_.baselines] == ["naive", "seasonal_naive", "linear"]
    metrics = f.evaluate(series)
    assert {"naive", "seasonal_naive", "linear"} <= set(metrics) and metrics["linear"]["rmse"] > 0
    assert "linear" not in f.evaluate(series, steps=3)  # it forecasts the horizon it was fitted for only
    rows = f.backtest(series, start=0.85, retrain=6, epochs=1)
    assert rows.attrs["metrics"]["linear"]["rmse"] > 0
    frozen = f.backtest(series, start=0.85)
    assert frozen.attrs["metrics"]["linear"] != rows.attrs["metrics"]["linear"]  # refits fit their own


def test_a_per_series_linear_baseline_reads_each_series_coefficients_by_id():
    from tsattn.evaluation import origin_baselines
    from test_pipeline import panel

    frame = panel(n_series=3)
    f = Forecaster("naive", window=8, horizon=2, linear_fit="per-series").fit(frame)
    linear = f.state_.baselines[-1]
    reordered = f.state_.panel_of(frame[frame["unique_id"].isin(["s2", "s0"])])
    mapped = [m for m in origin_baselines(f.state_, 2, reordered) if m.key == "linear"][0]
    np.testing.assert_array_equal(mapped.per_series[0], linear.per_series[f.state_.tails.number(reordered.ids[0])])
    assert f.evaluate(frame)["linear"]["rmse"] > 0

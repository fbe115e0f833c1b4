"""Hyper-parameter search (issue 27): spaces, validation only, failures recorded, resumable after SIGKILL."""

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from tsattn.errors import ConfigError, DataError, TrainingError, TsattnError

optuna = pytest.importorskip("optuna")

from tsattn import tuning as T  # noqa: E402

from conftest import make_series  # noqa: E402

SPACE = {"units": [2, 3], "window": {"int": [4, 8]}, "learning_rate": {"float": [1e-3, 1e-2], "log": True},
         "batch_size": [16], "cell": None, "dropout": None, "skip": None}
FIXED = {"epochs": 2}


def test_default_spaces_are_valid_settings_of_every_model():
    from tsattn.specs import MODELS

    for name, spec in MODELS.items():
        space = T.search_space(name, horizon=18)
        assert "learning_rate" in space and "lookback" in space
        assert "window" in T.search_space(name, horizon=1)
        assert spec.to_dict()["search_space"]["learning_rate"] == {"float": [1e-4, 1e-2], "log": True}


@pytest.mark.parametrize("space, message", [
    ({"units": {"int": [64, 8]}}, "an empty range: low 64 is above high 8"),
    ({"units": {"choice": []}}, "at least one choice"),
    ({"num_heads": [1, 2]}, "unknown search dimension 'num_heads': simple-rnn takes"),
    ({"colour": [1]}, "unknown search dimension 'colour'"),
    ({"learning_rate": {"float": [0, 1], "log": True}}, "log-uniform range must be above 0"),
    ({"units": {"int": [1, 2], "step": 2}}, "give one of int"),
    ({"seed": [0, 1]}, "it defines the run"),
    ({"scaling": ["minmax", "cubic"]}, "search dimension scaling: 'cubic' is not a valid setting"),
])
def test_bad_spaces_get_one_line(space, message):
    with pytest.raises(ConfigError) as caught:
        T.tune("simple-rnn", data=make_series(n=80), trials=1, space=space, settings=FIXED, refit=False)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_space_files(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps({"units": {"int": [2, 4]}}))
    assert T.read_space(tmp_path / "space.json") == {"units": {"int": [2, 4]}}
    (tmp_path / "bad.json").write_text("{units: ")
    with pytest.raises(ConfigError, match="does not parse"):
        T.read_space(tmp_path / "bad.json")


@pytest.mark.parametrize("windows", [None, 3])
def test_the_test_part_is_never_read(windows):
    series = make_series(n=120)
    garbage = series.copy()
    garbage.iloc[-24:] = 1e6  # the test part (last 20% of the chronological split)
    runs = [T.tune("simple-rnn", data=data, trials=2, space=SPACE, settings=FIXED, refit=False, windows=windows,
                   step=windows and 2).trials for data in (series, garbage)]
    assert runs[0]["validation_rmse"].notna().all()
    pd.testing.assert_frame_equal(runs[0].drop(columns="seconds"), runs[1].drop(columns="seconds"))


@pytest.mark.slow  # trials until three complete around the failing ones: about 30 s
def test_a_failing_trial_is_recorded_and_the_search_goes_on(monkeypatch, tmp_path):
    real = T._validation_score

    def flaky(config, data, metric, trial=None, windows=None, step=None):
        if config.model_params.get("units") == 3:
            raise TrainingError("training loss became non-finite at epoch 1")
        return real(config, data, metric, trial, windows, step)

    monkeypatch.setattr(T, "_validation_score", flaky)
    result = T.tune("simple-rnn", data=make_series(n=80), trials=3, space=SPACE, settings=FIXED, out=tmp_path / "t",
                    refit=False)
    failed = result.trials[result.trials["state"] == "FAIL"]
    assert (result.trials["state"] == "COMPLETE").sum() == 3
    assert len(failed) >= 1 and failed["error"].str.contains("non-finite").all()
    assert (tmp_path / "t" / "trials.csv").is_file() and json.loads((tmp_path / "t" / "best.json").read_text())["units"] == 2


def _completed(db) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as connection:
            return connection.execute("select count(*) from trials where state = 'COMPLETE'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow  # a search in a subprocess, killed and resumed: about 20 s
def test_a_killed_search_resumes_to_the_same_number_of_trials(tmp_path):
    csv = tmp_path / "series.csv"
    make_series(n=100).rename_axis("date").reset_index().to_csv(csv, index=False)
    space = tmp_path / "space.json"
    space.write_text(json.dumps(SPACE))
    out = tmp_path / "search"
    command = [sys.executable, "-m", "tsattn", "tune", "--model", "simple-rnn", "--csv", str(csv), "--column", "demand",
               "--date-column", "date", "--trials", "4", "--space", str(space), "--set", "epochs=3", "--out", str(out),
               "-q"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while _completed(out / "study.db") < 1 and time.time() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 1 <= _completed(out / "study.db") < 4
    # the resumed search and the refit of its best settings run in this process (the same command objects as the
    # `tsattn` script, without a TensorFlow import per command): only the killed search needs a process of its own
    from click.testing import CliRunner

    from tsattn.cli.main import main

    # resumed with --epochs 3 for --set epochs=3: the same fixed setting, so the same study (study.db counts them all)
    resumed = [*command[3:-1]]
    at = resumed.index("--set")
    resumed[at:at + 2] = ["--epochs", "3"]
    done = CliRunner().invoke(main, resumed + ["--json"])
    assert done.exit_code == 0, f"{done.output[-2000:]}{done.exception!r}"
    summary = json.loads(done.stdout)
    assert summary["completed"] == 4 and _completed(out / "study.db") == 4
    trials = pd.read_csv(out / "trials.csv")
    assert (trials["state"] == "RUNNING").sum() == 0  # a trial killed mid-way is marked failed, not left running
    # the best settings are a config tsattn fit takes
    run = CliRunner().invoke(main, ["fit", "--config", str(out / "best.json"), "--csv", str(csv), "--column", "demand",
                                    "--date-column", "date", "--out", str(tmp_path / "refit"), "--json", "-q"])
    assert run.exit_code == 0, f"{run.output[-2000:]}{run.exception!r}"
    config = json.loads((tmp_path / "refit" / "config.json").read_text())["config"]
    best = json.loads((out / "best.json").read_text())
    assert config["model_params"]["units"] == best["units"] and config["learning_rate"] == best["learning_rate"]
    assert np.isfinite(json.loads(run.stdout)["metrics"]["test"]["model"]["rmse"])


def test_missing_optuna_gives_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)
    with pytest.raises(ConfigError, match=r"tsattn tune needs optuna, which is not installed: pip install 'tsattn\[tune\]'"):
        T.tune("simple-rnn", data=make_series(n=80), trials=1)


def test_cli_refuses_a_bad_space_with_exit_2(tmp_path):
    from click.testing import CliRunner

    from tsattn.cli.main import main

    (tmp_path / "space.json").write_text(json.dumps({"units": {"int": [9, 3]}}))
    result = CliRunner().invoke(main, ["tune", "--model", "simple-rnn", "--dataset", "sunspots", "--space",
                                       str(tmp_path / "space.json"), "--out", str(tmp_path / "t")])
    assert result.exit_code == 2 and "an empty range: low 9 is above high 3" in result.output
    assert not (tmp_path / "t").exists()
    baseline = CliRunner().invoke(main, ["tune", "--model", "ets", "--dataset", "sunspots", "--out", str(tmp_path / "t")])
    assert baseline.exit_code == 2 and "'ets' has no settings to search; tune takes a network: simple-rnn" in \
        baseline.output and not (tmp_path / "t").exists()


def _workers(trials: pd.DataFrame, db) -> dict:
    """trial number -> the worker record (host, pid, Ray node) of each trial in the study database."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute("select t.number, a.value_json from trials t join trial_user_attributes a "
                                  "on a.trial_id = t.trial_id where a.key = 'worker'").fetchall()
    return {number: json.loads(value) for number, value in rows}


def _search_worker_once_all_joined(job, worker: int) -> int:
    """The search's own worker, started once every process of the search is up with Keras imported, and whose first
    trial goes on only once the other process has begun one too: without the first wait, under the load of the other
    test workers one process could finish every trial before the other had imported TensorFlow (it happened once in 4
    fresh-clone runs); without the second, before the other had loaded the study (once, at 13c5560). The test would
    read that race, not tsattn's sharing."""
    import os
    from pathlib import Path

    import keras  # noqa: F401  (the slow import each process pays before its first trial)

    barrier = Path(os.environ["TSATTN_TEST_BARRIER"])

    def wait_for(kind: str) -> None:
        (barrier / f"{kind}-{worker}-{os.getpid()}").touch()
        deadline = time.time() + 300
        while len(list(barrier.glob(f"{kind}-*"))) < 2:
            if time.time() > deadline:  # the worker's error, echoed by the search: the test says why it failed
                raise RuntimeError(f"the test's barrier: no other process reached '{kind}' in 300 s")
            time.sleep(0.05)

    wait_for("joined")
    score = T._validation_score

    def first_trial_once_both_began(*args, **kwargs):
        if not list(barrier.glob(f"trial-{worker}-*")):
            wait_for("trial")
        return score(*args, **kwargs)

    T._validation_score = first_trial_once_both_began  # this process's own module (spawned): the objective reads it
    return T._search_worker(job, worker)


@pytest.mark.slow
def test_two_local_processes_share_one_study_and_stop_at_the_number_asked(tmp_path, monkeypatch):
    (tmp_path / "barrier").mkdir()  # spawned processes read the environment and import this module by name
    monkeypatch.setenv("TSATTN_TEST_BARRIER", str(tmp_path / "barrier"))
    monkeypatch.setattr(T, "_search_worker", _search_worker_once_all_joined)
    lines = []
    result = T.tune("simple-rnn", data=make_series(n=80), trials=4, space=SPACE, settings=FIXED, out=tmp_path / "t",
                    refit=False, jobs=2, echo=lines.append)
    assert (result.trials["state"] == "COMPLETE").sum() == 4 and len(result.trials) == 4  # exactly the trials asked
    assert not [line for line in lines if "stopped early" in line], lines  # no worker lost (its error, if one was)
    workers = _workers(result.trials, tmp_path / "t" / "study.db")
    assert len({worker["pid"] for worker in workers.values()}) == 2  # both processes ran trials
    assert len(list((tmp_path / "barrier").glob("joined-*"))) == 2  # ... through the wrapper: two processes, one each
    assert len(list((tmp_path / "barrier").glob("trial-*"))) == 2
    assert lines[0].startswith("0 of 4 trials done") and "with 2 workers (local, 2 processes)" in lines[0]
    trials = [line for line in lines if not line.startswith("tune: ")]  # the heartbeat's lines between them
    assert len(trials) == 5 and trials[-1].startswith("[4/4] trial")  # a line for each trial, whichever process ran it


def test_a_worker_that_stops_while_the_others_finish_the_search_is_said(tmp_path, monkeypatch):
    real = T._search_worker

    def second_fails(job, worker):  # e.g. a process that could not open the study
        if worker == 1:
            raise RuntimeError("database is locked")
        return real(job, worker)

    monkeypatch.setattr(T, "_search_worker", second_fails)
    lines = []
    result = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, refit=False,
                    workers=2, storage=f"sqlite:///{tmp_path / 'study.db'}", echo=lines.append)
    assert (result.trials["state"] == "COMPLETE").sum() == 2
    assert "tune: worker 2 of 2 stopped early (RuntimeError: database is locked); the other workers ran the trials " \
           "asked" in lines


def test_two_workers_on_a_sqlite_study_never_claim_the_same_waiting_trial(tmp_path):
    import threading
    import warnings

    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(storage=T._storage(url), study_name="s")
    for x in range(40):
        study.enqueue_trial({"x": float(x)})
    claimed = [[], []]

    def worker(k):  # each its own storage and connections, as two processes have (SQLite locks the same way)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Heartbeat of storage is supposed to be used with Study.optimize"
            mine = optuna.load_study(study_name="s", storage=T._storage(url))
            for _ in range(20):
                claimed[k].append(mine.ask()._trial_id)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # without BEGIN IMMEDIATE both read a trial WAITING and both set it RUNNING: 7-12 of 40-60 were claimed twice
    assert not set(claimed[0]) & set(claimed[1]) and len(study.trials) == 40


def test_of_two_trials_started_at_once_for_the_last_place_the_later_created_one_is_surplus(tmp_path):
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'study.db'}")
    study.enqueue_trial({"x": 1.0})  # the defaults: waiting, created first, the next any worker runs

    def created():  # a trial another worker created while the waiting one was still there
        return optuna.trial.Trial(study, study._storage.create_new_trial(study._study_id))

    second = created()
    assert T._surplus(study, second, 1) and not T._surplus(study, second, 2)
    first = study.ask()  # pops the waiting trial: created before the second, so it keeps its place
    assert first._trial_id < second._trial_id and not T._surplus(study, first, 1)
    study.tell(first, 1.0)
    third = created()
    assert T._surplus(study, third, 2) and not T._surplus(study, third, 3)  # 1 complete + the second running
    study.tell(second, state=optuna.trial.TrialState.FAIL)  # a failed trial frees its place
    assert not T._surplus(study, third, 2)


def test_a_surplus_trial_is_not_counted_echoed_or_listed_and_the_search_still_runs_the_number_asked(tmp_path,
                                                                                                      monkeypatch):
    real, calls = T._surplus, []

    def second_is_surplus(study, trial, wanted):  # as if another worker had claimed the place first
        calls.append(trial.number)
        return len(calls) == 2 or real(study, trial, wanted)

    monkeypatch.setattr(T, "_surplus", second_is_surplus)
    lines = []
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    result = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, storage=storage,
                    refit=False, echo=lines.append)
    assert calls == [0, 1, 2]
    assert list(result.trials["number"]) == [0, 2] and (result.trials["state"] == "COMPLETE").all()
    study = optuna.load_study(study_name=result.study_name, storage=storage)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "FAIL", "COMPLETE"]
    assert study.trials[1].user_attrs[T.SURPLUS] and "error" not in study.trials[1].user_attrs
    trials = [line for line in lines if line.startswith("[")]
    assert [line.split(":")[0] for line in trials] == ["[1/2] trial 0", "[2/2] trial 2"]


def test_a_trial_of_a_dead_process_on_this_machine_is_failed_at_once_and_a_live_one_is_left(tmp_path, monkeypatch):
    import os

    storage = f"sqlite:///{tmp_path / 'study.db'}"
    result = T.tune("simple-rnn", data=make_series(n=80), trials=1, space=SPACE, settings=FIXED, storage=storage,
                    refit=False)
    study = optuna.load_study(study_name=result.study_name, storage=storage)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for pid in (int(dead.stdout), os.getpid()):
        trial = study.ask()
        trial.set_user_attr("worker", {"host": T._host(), "pid": pid})
    study.ask()  # a trial that never said who runs it (no heartbeat either): left alone while just made
    assert T._fail_stale(study) == 1
    states = [t.state.name for t in study.trials]
    assert states == ["COMPLETE", "FAIL", "RUNNING", "RUNNING"] and study.trials[1].user_attrs["error"] == T.INTERRUPTED
    monkeypatch.setattr(T, "CLAIM_SECONDS", 0)  # ... and failed after it, or a search could wait for it for ever
    assert T._fail_stale(study) == 1 and [t.state.name for t in study.trials][2:] == ["RUNNING", "FAIL"]


def test_searches_of_other_data_in_one_database_are_separate_studies_and_the_same_data_resumes(tmp_path):
    storage = f"sqlite:///{tmp_path / 'shared.db'}"
    run = dict(trials=1, space=SPACE, settings=FIXED, storage=storage, refit=False)
    first = T.tune("simple-rnn", data=make_series(n=60), **run)
    other = T.tune("simple-rnn", data=make_series(n=60, seed=1), **run)
    assert first.study_name.startswith("tsattn-simple-rnn-") and other.study_name != first.study_name
    assert sorted(optuna.get_all_study_names(storage)) == sorted([first.study_name, other.study_name])
    again = T.tune("simple-rnn", data=make_series(n=60), **{**run, "trials": 2})
    assert again.study_name == first.study_name and (again.trials["state"] == "COMPLETE").sum() == 2
    named = T.tune("simple-rnn", data=make_series(n=60), study_name="mine", **run)
    assert named.study_name == "mine" and "mine" in optuna.get_all_study_names(storage)
    with pytest.raises(ConfigError, match="study_name"):
        T.tune("simple-rnn", data=make_series(n=60), study_name="", **run)


@pytest.mark.slow  # ten failing trials, then a padded search: about 30 s
def test_a_trial_that_would_score_fewer_series_fails_and_pad_keeps_them(tmp_path):
    long, short = make_series(n=90), make_series(n=36, seed=1)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": s.index, "y": s.to_numpy()})
                       for name, s in (("long", long), ("short", short))])
    space = {**SPACE, "units": [2], "window": [30]}  # 30 + 4 is more than the short series holds before its test part
    settings = {**FIXED, "horizon": 4}
    with pytest.warns(UserWarning, match="left out"), pytest.raises(TsattnError, match="10 trials in a row failed") as error:
        T.tune("simple-rnn", data=frame, trials=1, space=space, settings=settings, refit=False)
    assert "leaves out 1 of 2 series too short for it" in str(error.value) and "pad=true" in str(error.value)
    padded = T.tune("simple-rnn", data=frame, trials=1, space=space, settings={**settings, "pad": True}, refit=False)
    assert (padded.trials["state"] == "COMPLETE").sum() == 1


def test_a_frame_with_its_own_column_names_and_static_features_is_searched_as_fit_reads_it():
    """tune takes Forecaster.fit's and compare's words: id_column / time_column / value_column (into the study's
    settings) and static_df (static's other name), keyed by the data's id column."""
    frame = pd.concat([pd.DataFrame({"sku": name, "week": s.index, "units": s.to_numpy()})
                       for name, s in (("a", make_series(n=60)), ("b", make_series(n=60, seed=1)))], ignore_index=True)
    static = pd.DataFrame({"sku": ["a", "b"], "size": [1.0, 2.0]})
    run = {"trials": 1, "space": {**SPACE, "units": [2]}, "refit": False,
           "settings": {**FIXED, "horizon": 4, "stat_exog": ["size"]}}
    result = T.tune("simple-rnn", data=frame, id_column="sku", time_column="week", value_column="units",
                    static_df=static, **run)
    assert (result.trials["state"] == "COMPLETE").sum() == 1
    with pytest.raises(ConfigError, match="static and static_df name the same argument"):
        T.tune("simple-rnn", data=frame, static=static, static_df=static, **run)
    with pytest.raises(ConfigError, match="the id_column is given twice"):
        T.tune("simple-rnn", data=frame, id_column="sku", **{**run, "settings": {**run["settings"], "id_column": "x"}})


def test_the_auto_metric_of_a_panel_with_values_of_0_or_below_is_mase():
    """What compare ranks by: sMAPE for a panel, MASE where values before the test part are 0 or below (sMAPE is 200
    for any forecast of a 0 but exactly 0)."""
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": s.index, "y": s.to_numpy()})
                       for name, s in (("a", make_series(n=60)), ("b", make_series(n=60, seed=1)))], ignore_index=True)
    run = {"trials": 1, "space": {**SPACE, "units": [2]}, "settings": {**FIXED, "horizon": 4}, "refit": False}
    assert T.tune("simple-rnn", data=frame, **run).metric == "smape"
    frame.loc[3, "y"] = 0.0
    assert T.tune("simple-rnn", data=frame, **run).metric == "mase"
    # the refits' scores (tune's lines, report and terminal) name the search's metric first
    scores = {"smape": 20.0, "mase": 1.323, "rmse": 3.219}
    assert T.scores_text(scores, "mase") == "MASE 1.323, sMAPE 20, RMSE 3.219"
    assert T.scores_text(scores) == "sMAPE 20, MASE 1.323, RMSE 3.219"
    assert T.scores_text(scores, "rmse") == "RMSE 3.219, sMAPE 20, MASE 1.323"


def test_the_defaults_trial_takes_the_head_a_fit_would_use():
    from tsattn.config import RunConfig
    from tsattn.specs import get_spec
    from tsattn.tuning import _defaults_in

    space = {"skip": get_spec("transformer").space["skip"]}
    assert _defaults_in(RunConfig(model="transformer"), space) == {"skip": "relative"}
    assert _defaults_in(RunConfig(model="transformer", futr_exog=["promo"]), space) == {"skip": "linear"}  # covariates
    # the window the defaults resolve to on the trials' data (found by a user-path check: a lookback was sampled for
    # "the defaults" trial, whose report line then named a score the defaults never had)
    from tsattn.specs import Search

    window, lookback = {"window": Search("int", 4, 8)}, {"lookback": Search("int", 1, 5)}
    assert _defaults_in(RunConfig(model="simple-rnn"), window, window=6) == {"window": 6}
    assert _defaults_in(RunConfig(model="simple-rnn"), window, window=24) == {}  # outside the space: not the defaults
    assert _defaults_in(RunConfig(model="nbeats", horizon=4), lookback, window=12) == {"lookback": 3}
    assert _defaults_in(RunConfig(model="nbeats", horizon=4), lookback, window=22) == {}  # not whole horizons


def test_a_tuned_result_worse_on_validation_too_says_the_space_missed_the_defaults():
    """The verdict blamed the validation part ("did not rank these settings as the test part does") when the tuned
    settings were worse than the defaults on validation as well: a space that did not hold the defaults."""
    from tsattn.tuning import TuneResult, report_blocks

    def refit(validation, test):
        return {"validation": {"smape": validation}, "test": {"smape": test}, "naive": {"smape": 9.0}, "epochs_run": 1}

    trials = pd.DataFrame({"state": ["COMPLETE"] * 3, "defaults": [False] * 3, "number": [0, 1, 2]})
    result = TuneResult({"units": 8}, 4.353, "smape", trials, test={"tuned": refit(4.353, 4.685),
                                                                   "defaults": refit(4.279, 4.573)})
    verdict = report_blocks(result, None, importance=False)[0][1][0]
    assert verdict.startswith("The tuned settings are WORSE than the defaults on validation too (sMAPE 4.353 against "
                              "4.279; on test 4.685 against 4.573): the search space did not hold the defaults")
    result.test["defaults"] = refit(4.4, 4.573)  # better on validation, worse on test: the validation part's ranking
    assert "did not rank these settings as the test part does" in report_blocks(result, None, importance=False)[0][1][0]


def test_the_default_space_is_widened_to_hold_the_runs_own_settings():
    """Under the N-BEATS recipe (batches of 1024) the default batch_size choices (16-128) held no default, so the first
    trial was not the defaults and a search could end worse on validation than its defaults (found on M3 other: best
    trial 4.353, the defaults 4.279). The default space now holds the run's own value; a dimension the user gave stays
    as given."""
    from tsattn.config import RunConfig
    from tsattn.specs import Search
    from tsattn.tuning import _defaults_in, holding_defaults, search_space

    base = RunConfig(model="simple-rnn", preset="nbeats-recipe", horizon=4)
    space = search_space("simple-rnn", 4)
    assert _defaults_in(base, space, window=8).get("batch_size") is None  # 1024: not among 16-128
    widened = holding_defaults(base, space, window=8)
    assert widened["batch_size"].choices == (16, 32, 64, 128, 1024)
    assert _defaults_in(base, widened, window=8) == {"batch_size": 1024, "learning_rate": 1e-3, "lookback": 2,
                                                     "units": 32, "cell": "rnn", "dropout": 0.0, "skip": "relative"}
    assert holding_defaults(base, space, window=8, given={"batch_size"})["batch_size"] == space["batch_size"]
    fast = RunConfig(model="simple-rnn", learning_rate=0.05)  # a number outside a range widens the range
    assert holding_defaults(fast, {"learning_rate": Search("float", 1e-4, 1e-2, log=True)})["learning_rate"] == \
        Search("float", 1e-4, 0.05, log=True)
    assert holding_defaults(RunConfig(model="simple-rnn", horizon=4), space, window=24) == space  # classic: held
    one_step = search_space("simple-rnn", 1)
    assert holding_defaults(RunConfig(model="simple-rnn"), one_step, window=24) == one_step


def test_the_first_trial_is_the_defaults_where_the_space_holds_them(tmp_path):
    space = {**SPACE, "units": [2, 32], "learning_rate": {"float": [1e-4, 1e-2], "log": True},
             "window": {"int": [4, 24]}, "batch_size": [16, 32]}  # holding every default: trial 0 is the defaults
    result = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=space, settings=FIXED, out=tmp_path / "t",
                    refit=False)
    first = result.trials.iloc[0]
    assert first["defaults"] and not result.trials["defaults"].iloc[1:].any()
    assert first["param_units"] == 32 and first["param_learning_rate"] == 1e-3  # simple-rnn's defaults
    assert first["param_window"] == 24  # the automatic window of the defaults on the values before the test part
    assert "The defaults (trial 0): validation RMSE" in (tmp_path / "t" / "report.md").read_text()
    assert result.best_value <= first["validation_rmse"]


def test_rolling_validation_fits_before_the_earliest_window_and_scores_every_window(monkeypatch):
    from tsattn import evaluation, harness
    from tsattn.config import RunConfig, check_config
    from tsattn.panel import as_panel

    fitted, scored = [], []
    real_fit, real_score = harness.fit_state, evaluation.score_origins

    def fit_state(config, data, **kwargs):
        fitted.append(data.panel.lengths.copy())
        return real_fit(config, data, **kwargs)

    def score_origins(state, panel, origins, horizon, predicted=None, baselines=None):
        scored.append(origins - panel.offsets[panel.series_of(origins)])  # local positions
        # the model alone: no baseline forecast (AutoARIMA on hourly data cost a search over a minute for nothing)
        assert baselines == {}
        return real_score(state, panel, origins, horizon, predicted, baselines)

    monkeypatch.setattr(harness, "fit_state", fit_state)
    monkeypatch.setattr(evaluation, "score_origins", score_origins)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": s.index, "y": s.to_numpy()})
                       for name, s in (("a", make_series(n=60)), ("b", make_series(n=50, seed=1)))])
    seen = as_panel(frame)
    config = check_config(RunConfig(model="simple-rnn", dataset=None, horizon=3, window=6, epochs=1,
                                    model_params={"units": 2}, preset="classic"))
    value = T._validation_score(config, seen, "smape", windows=4, step=2)
    assert np.isfinite(value)
    np.testing.assert_array_equal(fitted[0], seen.lengths - 6)  # the values before the earliest of 4 windows
    # the origins (last input) of the 4 windows of 3 values, 2 apart, the last ending at each series' last value
    assert sorted(scored[0].tolist()) == sorted([n - 3 - 1 - j * 2 for n in (60, 50) for j in range(4)])
    T._validation_score(config, seen, "smape")  # without windows: the fit's own validation part, all of it
    np.testing.assert_array_equal(fitted[1], seen.lengths)
    assert len(scored[1]) >= 2
    with pytest.raises(DataError, match="4 validation windows 20 apart need more than 64 values per series"):
        T._validation_score(config, seen, "smape", windows=4, step=20)


def test_a_resumed_search_must_score_its_trials_the_same_way(tmp_path):
    T.tune("simple-rnn", data=make_series(n=80), trials=1, space=SPACE, settings=FIXED, out=tmp_path / "t",
           refit=False, windows=2, step=3)
    assert "scored on 2 validation windows per series, 3 values apart" in (tmp_path / "t" / "report.md").read_text()
    with pytest.raises(ConfigError, match=r"this study's trials were scored with windows 2 \(now None\), step 3 "
                                          r"\(now None\); rerun with the same options"):
        T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, out=tmp_path / "t",
               refit=False)
    with pytest.raises(ConfigError, match="step is the distance between validation windows; give windows too"):
        T.tune("simple-rnn", data=make_series(n=80), trials=2, step=3)
    resumed = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, out=tmp_path / "t",
                     refit=False, windows=2, step=3)
    assert (resumed.trials["state"] == "COMPLETE").sum() == 2


def test_a_resumed_search_names_the_trials_other_tsattn_code_scored(tmp_path, monkeypatch):
    """Each trial records the code that scored it; a search resumed by other code (an edited checkout, another
    version) says how many of the study's trials that code did not score, and goes on."""
    lines = []
    T.tune("simple-rnn", data=make_series(n=80), trials=1, space=SPACE, settings=FIXED, out=tmp_path / "t",
           refit=False, echo=lines.append)
    assert not any("other tsattn code" in line for line in lines)
    monkeypatch.setattr(T, "code_digest", lambda: "0123456789abcdef")
    resumed = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, out=tmp_path / "t",
                     refit=False, echo=lines.append)
    assert any(line.startswith("resuming: 1 finished trial(s) of this study were scored by other tsattn code")
               for line in lines)
    assert (resumed.trials["state"] == "COMPLETE").sum() == 2


def test_cli_tune_takes_rolling_validation_windows(tmp_path):
    from click.testing import CliRunner

    from tsattn.cli.main import main

    csv = tmp_path / "series.csv"
    make_series(n=80).rename_axis("date").reset_index().to_csv(csv, index=False)
    space = tmp_path / "space.json"
    space.write_text(json.dumps(SPACE))
    common = ["tune", "--model", "simple-rnn", "--csv", str(csv), "--column", "demand", "--date-column", "date",
              "--space", str(space), "--set", "epochs=1", "--trials", "1"]
    refused = CliRunner().invoke(main, common + ["--windows", "0", "--out", str(tmp_path / "bad")])
    assert refused.exit_code == 2 and not (tmp_path / "bad").exists()
    result = CliRunner().invoke(main, common + ["--windows", "2", "--step", "4", "--out", str(tmp_path / "t"), "--json",
                                                "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["completed"] == 1
    assert "2 validation windows per series, 4 values apart" in (tmp_path / "t" / "report.md").read_text()


def test_the_report_comes_as_markdown_and_html_and_says_when_tuning_lost_on_test(tmp_path):
    result = T.tune("simple-rnn", data=make_series(n=80), trials=2, space=SPACE, settings=FIXED, out=tmp_path / "t")
    html = (tmp_path / "t" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<h2>Best settings (chosen on validation only)</h2>" in html
    assert "data:image/png;base64," in html  # the history figure, inlined
    md = (tmp_path / "t" / "report.md").read_text()
    assert "e-0" not in md and "0.0027583" not in md  # numbers as people read them
    tuned, plain = (result.test[label]["test"]["rmse"] for label in ("tuned", "defaults"))
    checked = [result.test[label]["validation"]["rmse"] for label in ("tuned", "defaults")]
    assert ("WORSE on test than the defaults" in md) == (tuned > plain and checked[0] <= checked[1])
    # worse on validation too (a space without the defaults): said so, not blamed on the validation part
    assert ("WORSE than the defaults on validation too" in md) == (tuned > plain and checked[0] > checked[1])
    head, verdict = md.split("\n\n")[1:3]  # the verdict first, either way, with the caveat on 2 trials
    assert head == "**Verdict.**" and verdict.startswith("- The tuned settings ") and "Only 2 trial(s)" in verdict
    assert html.index("class='verdict'") < html.index("<h2>")  # first on the page too
    assert "data-phone-text-px=" in html  # each figure has its phone-sized render
    assert ("better on test" in verdict) == (tuned < plain)


def test_a_resumed_search_on_other_data_or_another_space_is_refused_naming_it(tmp_path):
    """Issue 39: a fibonacci tune joined a sunspots study (its trials scored on other data); a changed --space
    gave ten Optuna tracebacks and ten failed trials written into the study."""
    T.tune("simple-rnn", data=make_series(n=80), trials=1, space=SPACE, settings=FIXED, out=tmp_path / "t",
           refit=False)
    with pytest.raises(ConfigError, match=r"scored with data '1 series, 80 values, sha1 \w+, time labels sha1 \w+' "
                                          r"\(now '1 series, 90 "):
        T.tune("simple-rnn", data=make_series(n=90), trials=2, space=SPACE, settings=FIXED, out=tmp_path / "t",
               refit=False)
    with pytest.raises(ConfigError, match=r"scored with another search space \(changed: units\)"):
        T.tune("simple-rnn", data=make_series(n=80), trials=2, space={**SPACE, "units": [2, 4]}, settings=FIXED,
               out=tmp_path / "t", refit=False)
    assert _completed(tmp_path / "t" / "study.db") == 1  # nothing was added to the study


def test_a_resumed_search_on_the_same_values_with_other_dates_or_covariates_is_refused(tmp_path):
    """The data fingerprint covered only the values and ids: the same target with another covariate (or shifted
    dates) resumed a study whose trials were scored on other inputs. A study recorded before (values and ids only)
    still resumes on a panel without covariates."""
    series = make_series(n=80)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"unique_id": "a", "ds": series.index, "y": series.to_numpy(), "x": rng.normal(size=80)})
    fixed = {**FIXED, "hist_exog": ["x"]}
    T.tune("simple-rnn", data=frame, trials=1, space=SPACE, settings=fixed, out=tmp_path / "c", refit=False)
    with pytest.raises(ConfigError, match=r"scored with data '1 series, 80 values, sha1 (\w+), time labels sha1 \w+, "
                                          r"covariates x sha1 \w+' \(now '1 series, 80 values, sha1 \1, time labels"):
        T.tune("simple-rnn", data=frame.assign(x=frame["x"] + 1), trials=2, space=SPACE, settings=fixed,
               out=tmp_path / "c", refit=False)
    T.tune("simple-rnn", data=series, trials=1, space=SPACE, settings=FIXED, out=tmp_path / "d", refit=False)
    shifted = pd.Series(series.to_numpy(), index=series.index + pd.DateOffset(months=1))
    with pytest.raises(ConfigError, match=r"time labels sha1 (\w+)' \(now '.*time labels sha1 (?!\1)"):
        T.tune("simple-rnn", data=shifted, trials=2, space=SPACE, settings=FIXED, out=tmp_path / "d", refit=False)
    assert _completed(tmp_path / "c" / "study.db") == 1 and _completed(tmp_path / "d" / "study.db") == 1
    storage = f"sqlite:///{tmp_path / 'd' / 'study.db'}"
    study = optuna.load_study(study_name=optuna.get_all_study_names(storage)[0], storage=storage)
    protocol = study.user_attrs["protocol"]
    study.set_user_attr("protocol", {**protocol, "data": protocol["data"].split(", time labels")[0]})  # as recorded before
    T.tune("simple-rnn", data=series, trials=2, space=SPACE, settings=FIXED, out=tmp_path / "d", refit=False)
    assert _completed(tmp_path / "d" / "study.db") == 2


@pytest.mark.parametrize("storage, message", [
    ("notaurl", "is not a database URL; give one, e.g. sqlite:///study.db"),
    ("sqlite:////nonexistent-dir/x.db", "the directory /nonexistent-dir does not exist"),
    ("sqlite:///{readme}", "is not a SQLite database (a file of another kind)"),
    ("mysql://user@127.0.0.1/db", "needs the database driver 'mysqldb', which is not installed"),
    ("nosuchdb://user@host/db", "SQLAlchemy knows no database 'nosuchdb'"),
])
def test_an_unusable_storage_is_one_line_and_nothing_is_written(storage, message, tmp_path):
    from click.testing import CliRunner

    from tsattn.cli.main import main

    (tmp_path / "notes.txt").write_text("a user's file, not a database")
    storage = storage.format(readme=tmp_path / "notes.txt")
    result = CliRunner().invoke(main, ["tune", "--model", "simple-rnn", "--dataset", "sunspots", "--trials", "1",
                                       "--storage", storage, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "out").exists() and (tmp_path / "notes.txt").read_text().startswith("a user's file")


def test_an_in_memory_study_is_refused_for_parallel_trials_and_postgresql_gets_the_installed_driver(monkeypatch):
    import importlib.util

    with pytest.raises(ConfigError, match="in-memory database, which parallel trials cannot share"):
        T.storage_url("sqlite:///:memory:", jobs=2)
    assert T.storage_url("sqlite:///:memory:", jobs=1) == "sqlite:///:memory:"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "psycopg2" else real(name, *a))
    if real("psycopg") is None:
        with pytest.raises(ConfigError, match=r"postgresql://u:\*\*\*@h/db needs a PostgreSQL driver: pip install"):
            T.storage_url("postgresql://u:secret@h/db")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "psycopg2" else None)
    assert T.storage_url("postgresql://u:secret@h/db") == "postgresql+psycopg2://u:secret@h/db"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_study_is_one_database_for_every_thread(url):
    """The progress line reads the study from its own thread: an in-memory SQLite study is Optuna's in-memory storage,
    one study for every thread (through SQLAlchemy each thread had its own, empty database: the heartbeat thread died
    with a traceback on stderr, "no such table: trial_heartbeats")."""
    import threading

    from sqlalchemy.engine import make_url

    storage = T._storage(url)
    study = optuna.create_study(storage=storage, study_name="memory")
    study.enqueue_trial({"x": 1.0})
    seen = []
    reader = threading.Thread(target=lambda: seen.append(len(storage.get_all_trials(study._study_id))))
    reader.start()
    reader.join()
    assert seen == [1] and T.in_memory_sqlite(make_url(url))
    assert not T.in_memory_sqlite(make_url("sqlite:///study.db"))


@pytest.mark.parametrize("storage, resumes", [("sqlite://", False), (None, True)])
def test_an_interrupted_search_says_whether_it_resumes_and_study_json_never_names_a_gone_database(
        storage, resumes, tmp_path, monkeypatch):
    """An in-memory study ends with its run: Ctrl-C does not promise a resume, and the folder's study.json does not
    name sqlite:// as where the study is; a search in the folder's own study.db resumes, and says so."""
    lines = []

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(T, "_search_worker", interrupted)
    with pytest.raises(KeyboardInterrupt):
        T.tune("simple-rnn", data=make_series(n=80), trials=1, space=SPACE, settings=FIXED, storage=storage,
               out=tmp_path / "t", refit=False, echo=lines.append)
    said = [line for line in lines if line.startswith("stopped:")]
    assert said == ["stopped: the finished trials are in the study; rerun the same command to resume" if resumes
                    else "stopped: the study was in memory and ends with this run; a search in a database resumes "
                    "(--out's study.db, or --storage with a file or server URL)"], lines
    if storage:
        assert json.loads((tmp_path / "t" / "study.json").read_text())["storage"].startswith("in memory: it ended")


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of this machine's Debian package, started on 127.0.0.1 in a scratch directory for
    these tests (skipped, saying why, where there is none: .ci/run installs it)."""
    import glob
    import os
    import shutil
    import socket
    import tempfile

    pytest.importorskip("psycopg2")
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not binaries:
        pytest.skip("no PostgreSQL server installed (apt-get install postgresql)")
    bin_dir = binaries[-1]
    as_user = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    if as_user and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL")
    data = tempfile.mkdtemp(prefix="tsattn-pg-")
    if as_user:
        shutil.chown(data, "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    subprocess.run([*as_user, f"{bin_dir}/initdb", "-D", data, "-U", "tsattn", "--auth=trust"], check=True,
                   capture_output=True)
    server = _Server([*as_user, f"{bin_dir}/pg_ctl", "-D", data, "-w", "-l", f"{data}/log", "-o",
                      f"-p {port} -k {data} -c listen_addresses=127.0.0.1"],
                     f"postgresql://tsattn@127.0.0.1:{port}/postgres")
    server.start()
    try:
        yield server
    finally:
        subprocess.run(server.control + ["-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(data, ignore_errors=True)


class _Server:
    """A scratch PostgreSQL server: its URL, and pg_ctl to start and stop it."""

    def __init__(self, control, url):
        self.control, self.url = control, url

    def start(self):
        subprocess.run(self.control + ["start"], check=True, capture_output=True)

    def stop(self):
        subprocess.run(self.control + ["-m", "fast", "stop"], check=True, capture_output=True)

    def completed(self, study):
        import psycopg2

        try:
            with psycopg2.connect(self.url) as connection, connection.cursor() as cursor:
                cursor.execute("select count(*) from trials t join studies s on s.study_id = t.study_id "
                               "where s.study_name = %s and t.state = 'COMPLETE'", (study,))
                return cursor.fetchone()[0]
        except psycopg2.Error:  # the tables are made by the first search
            return 0


def test_a_search_in_a_real_postgresql_database_resumes_and_says_where_its_study_is(postgres, tmp_path):
    postgres = postgres.url
    """The README's spelling, postgresql://, with the driver that is installed; a resumed search adds trials to
    the same study; the output names the database, not a study.db that is not there."""
    from click.testing import CliRunner

    from tsattn.cli.main import main

    args = ["tune", "--model", "simple-rnn", "--dataset", "sunspots", "--set", "epochs=1", "--space",
            str(tmp_path / "space.json"), "--storage", postgres, "--out", str(tmp_path / "t")]
    (tmp_path / "space.json").write_text(json.dumps({k: v for k, v in SPACE.items()}))
    first = CliRunner().invoke(main, args + ["--trials", "1"])
    assert first.exit_code == 0, first.output
    best = json.loads((tmp_path / "t" / "best.json").read_text())
    shown = re.search(r"Best settings: .*learning_rate=([0-9.e-]+)", first.output).group(1)  # 4 digits; best.json all
    assert len(shown.replace(".", "").lstrip("0")) <= 4 and float(shown) == pytest.approx(best["learning_rate"],
                                                                                         rel=1e-3)
    assert "(the study tsattn-simple-rnn-" in first.output and f" is in {postgres})" in first.output and not (tmp_path / "t" / "study.db").exists()
    second = CliRunner().invoke(main, args + ["--trials", "2"])
    assert second.exit_code == 0 and "1 of 2 trials done" in second.output, second.output
    down = postgres.rsplit(":", 1)[0] + ":1/postgres"  # a port where no server listens
    refused = CliRunner().invoke(main, args[:-4] + ["--storage", down, "--out", str(tmp_path / "u"), "--trials", "1"])
    assert refused.exit_code == 2 and "the study database cannot be opened" in refused.output, refused.output


@pytest.mark.slow  # a search in a subprocess killed with SIGKILL, resumed, then the server stopped: about 30 s
def test_a_search_in_postgresql_survives_kill_9_and_a_stopped_server_is_one_line(postgres, tmp_path):
    csv = tmp_path / "series.csv"
    make_series(n=100).rename_axis("date").reset_index().to_csv(csv, index=False)
    (tmp_path / "space.json").write_text(json.dumps(SPACE))
    out = tmp_path / "search"
    command = [sys.executable, "-m", "tsattn", "tune", "--model", "simple-rnn", "--csv", str(csv), "--column", "demand",
               "--date-column", "date", "--trials", "4", "--space", str(tmp_path / "space.json"), "--set", "epochs=3",
               "--storage", postgres.url, "--study-name", "killed", "--out", str(out), "-q"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while postgres.completed("killed") < 1 and time.time() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 1 <= postgres.completed("killed") < 4
    done = subprocess.run(command[:-1] + ["--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["completed"] == 4 and postgres.completed("killed") == 4
    trials = pd.read_csv(out / "trials.csv")
    assert (trials["state"] == "RUNNING").sum() == 0  # the trial killed mid-way is failed, not left running
    before = sorted(p.name for p in out.iterdir())
    postgres.stop()
    try:
        stopped = subprocess.run(command[:-1] + ["--trials", "5"], capture_output=True, text=True, timeout=120)
    finally:
        postgres.start()
    assert stopped.returncode == 2, stopped.stderr[-2000:]
    lines = [line for line in stopped.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "the study database cannot be opened" in lines[0] and "Traceback" not in stopped.stderr
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written on the refusal
    assert postgres.completed("killed") == 4

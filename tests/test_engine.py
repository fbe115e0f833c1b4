"""Execution engines: local (sequential / processes) and Ray, on a real multi-node Ray cluster on this machine.

The Ray tests share a head node and two worker nodes of one CPU each (ray.cluster_utils.Cluster, started once per
module) and are slow (seconds to tens of seconds each); CI runs them. They are skipped only where Ray is not
installed (it is in the test extra).
"""

import json
import os
import signal
import sys
import time

import pytest
from click.testing import CliRunner

from tsattn.cli.main import main
from tsattn.compare import TIMING, compare
from tsattn.engine import MAX_JOBS, LocalEngine, Outcome, get_engine
from tsattn.errors import ConfigError

# A test that starts a Ray cluster (the `cluster` fixture) is marked `ray` by conftest.py: `python3 dev.py test` runs
# those one after another after the rest; the local-process and refusal tests here run with the rest, in parallel.


def options(small_csv, **changes):
    kwargs = dict(models=["simple-rnn", "attention-rnn"], datasets=None, seeds=[0, 1], window=8, epochs=2,
                  settings={"units": 4}, echo=lambda line: None,
                  csv=[{"path": str(small_csv), "column": "demand", "date_column": "date", "name": "demand"}])
    kwargs.update(changes)
    return kwargs


def records(out):
    """The run records of a comparison without their timings (the only thing allowed to differ)."""
    found = {}
    for path in sorted((out / "runs").glob("*.json")):
        record = json.loads(path.read_text())
        found[path.name] = {k: v for k, v in record.items() if k not in TIMING}
    return found


def _square(shared, key):
    if key == 3:
        raise ValueError("three is not welcome")
    return shared["factor"] * key * key


def test_local_engine_runs_units_and_keeps_failures_apart(monkeypatch):
    outcomes = dict(LocalEngine(1).map(_square, {"factor": 2}, [1, 2, 3, 4]))
    assert outcomes[2] == Outcome(8) and outcomes[4].value == 32
    assert not outcomes[3].ok and outcomes[3].error == "ValueError: three is not welcome"
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # more processes than cores: said, and the runs still go
    with pytest.warns(UserWarning, match="2 local processes on 1 cores: they share the cores.*jobs=1 uses every"):
        parallel = dict(LocalEngine(2).map(_square, {"factor": 2}, [1, 2, 3, 4]))
    assert parallel == outcomes


def test_engine_choices_are_checked():
    with pytest.raises(ConfigError, match="unknown engine 'spark'; choose one of local, ray"):
        get_engine("spark")
    with pytest.raises(ConfigError, match="--address is for the ray engine"):
        get_engine("local", address="auto")
    with pytest.raises(ConfigError, match="--jobs is for the local engine"):
        get_engine("ray", jobs=2)
    for jobs in (0, MAX_JOBS + 1, 99999999999):
        with pytest.raises(ConfigError, match=f"jobs must be an integer from 1 to {MAX_JOBS} .*; got {jobs}"):
            get_engine("local", jobs=jobs)


def test_ray_missing_gives_one_line(monkeypatch, tmp_path, small_csv):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"needs Ray, which is not installed: pip install 'tsattn\[ray\]'"):
        get_engine("ray")
    result = CliRunner().invoke(main, ["compare", "--csv", str(small_csv), "--column", "demand", "--engine", "ray",
                                       "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 2 and "tsattn[ray]" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "cmp").exists()  # nothing written


def test_a_failing_run_is_recorded_and_the_others_finish(tmp_path, small_csv):
    out = tmp_path / "cmp"
    # d_model 6 is not divisible by 4 heads: only the transformer's runs fail, when they build their model
    results = compare(out=out, **options(small_csv, models=["simple-rnn", "transformer"], seeds=[0],
                                         settings={"units": 4, "transformer.d_model": 6}))
    assert list(results[results["seed"].notna()]["model"]) == ["simple-rnn"]
    (failure,) = results.attrs["failures"]
    assert failure["model"] == "transformer" and "divisible by num_heads" in failure["error"]
    assert "## Failed runs" in (out / "report.md").read_text()
    saved = json.loads((out / "runs" / "demand__transformer__seed0.json").read_text())
    assert "divisible" in saved["failed"]
    arguments = ["compare", "--csv", str(small_csv), "--column", "demand", "--date-column", "date", "--models",
                 "simple-rnn,transformer", "--seeds", "0", "--window", "8", "--epochs", "2", "--set", "units=4",
                 "--set", "transformer.d_model=6", "--out", str(tmp_path / "cli")]
    first = CliRunner().invoke(main, arguments)
    assert first.exit_code == 1 and "1 run(s) failed" in first.output and "Traceback" not in first.output
    assert (tmp_path / "cli" / "report.html").is_file()
    again = CliRunner().invoke(main, arguments)
    assert again.exit_code == 1 and "resuming: 1 of 2 runs already done" in again.output  # the failed run is retried


# ----------------------------------------------------------------------------------------------------
# A real multi-node Ray cluster on this machine
# ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def _one_cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})  # the head only schedules
    workers = [nodes.add_node(num_cpus=1) for _ in range(2)]
    nodes.wait_for_nodes()
    ray.init(address=nodes.address, logging_level="ERROR", log_to_driver=False)
    try:
        yield nodes, workers
    finally:
        ray.shutdown()
        nodes.shutdown()


@pytest.fixture
def cluster(_one_cluster):
    """A head node and two one-CPU worker nodes, shared by the Ray tests of this module: one start (some 6 s) and
    worker processes that keep TensorFlow imported from test to test. A worker node a test killed is replaced when
    a later test asks for the cluster, so each finds two (the tests that kill one come last)."""
    nodes, workers = _one_cluster
    _replace_lost_workers(nodes, workers)
    return nodes, workers


def _replace_lost_workers(nodes, workers):
    """Replace each worker node a test killed with a new one-CPU node (``workers`` is updated in place)."""
    lost = [node for node in workers if node not in nodes.worker_nodes]
    for node in lost:
        workers.remove(node)
        workers.append(nodes.add_node(num_cpus=1))
    if lost:
        nodes.wait_for_nodes()


@pytest.mark.slow
def test_ray_cluster_gives_the_same_records_as_the_sequential_run(cluster, tmp_path, small_csv):
    nodes, _ = cluster
    lines = []
    compare(out=tmp_path / "ray", engine="ray", address=nodes.address, **options(small_csv, echo=lines.append))
    compare(out=tmp_path / "one", **options(small_csv))
    assert records(tmp_path / "ray") == records(tmp_path / "one")
    assert len(records(tmp_path / "one")) == 4
    runs = [line for line in lines[1:] if not line.startswith("compare: ")]  # the heartbeat's lines between runs
    assert lines[0].startswith("running 4 runs on ray") and len(runs) == 4 and all("ETA" in line for line in runs)
    for name in ("results.csv", "summary.csv"):  # the same tables, apart from the timing columns
        import pandas as pd

        ray_table, one_table = (pd.read_csv(tmp_path / d / name) for d in ("ray", "one"))
        keep = [c for c in one_table.columns if not any(t in c for t in ("seconds",))]
        pd.testing.assert_frame_equal(ray_table[keep], one_table[keep])


def _backtest(**engine):
    import numpy as np
    import pandas as pd

    from tsattn import Forecaster

    t = np.arange(120)
    series = pd.Series(np.sin(t / 4) + t / 60, index=pd.date_range("2000-01-01", periods=120, freq="MS"))
    model = Forecaster("simple-rnn", window=8, units=4, batch_size=16, epochs=2).fit(series.iloc[:80], seed=0)  # (200
    # epochs without it: 6-13 s a call, and what is checked is the refits)
    return model.backtest(series, start=100, stride=5, retrain=2, epochs=2, **engine)


def test_backtest_refits_in_local_processes_match_sequential():
    import pandas as pd

    pd.testing.assert_frame_equal(_backtest(engine="local", jobs=2), _backtest())


@pytest.mark.slow
def test_backtest_refits_on_a_ray_cluster_match_sequential(cluster):
    import pandas as pd

    nodes, _ = cluster
    pd.testing.assert_frame_equal(_backtest(engine="ray", address=nodes.address), _backtest())


def _ensemble(engine=None):
    import numpy as np
    import pandas as pd

    from tsattn import Forecaster

    t = np.arange(100)
    series = pd.Series(np.sin(t / 4) + t / 60, index=pd.date_range("2000-01-01", periods=100, freq="MS"))
    model = Forecaster("simple-rnn", horizon=2, units=4, batch_size=16, ensemble=1, epochs=2,
                       ensemble_lookbacks=[3, 4], ensemble_losses=["mse", "mae"])  # 4 members, two windows
    model.fit(series, seed=3, engine=engine)
    return model.predict(4), model.history_.attrs["member_epochs"]


def test_ensemble_members_in_local_processes_match_sequential():
    import pandas as pd

    from tsattn.engine import get_engine

    (parallel, epochs), (sequential, epochs_one) = _ensemble(get_engine("local", jobs=2)), _ensemble()
    pd.testing.assert_series_equal(parallel, sequential)
    assert epochs == epochs_one


@pytest.mark.slow
def test_ensemble_members_on_a_ray_cluster_match_sequential(cluster):
    import pandas as pd

    pd.testing.assert_series_equal(_ensemble("ray")[0], _ensemble()[0])


# Runs of some 3 s each (150 epochs, no early stopping), so the node dies while one is mid-run, not as it ends: with
# 40 epochs (early stopping on) a run took 1.0-1.3 s on an AMD EPYC, about the state API's lag, and a CI run once
# missed all three kills (each run ended 14-23 ms before its node died). Four runs: the node dies as the third begins,
# which Ray runs again beside the fourth on the node left (six took ~15 s more, here and in the sequential run)
KILLED_RUNS = dict(seeds=[0, 1], epochs=150, settings={"units": 4, "early_stopping": False})


def _kill_a_node_mid_run(nodes, workers, out, small_csv) -> str:
    """Run a Ray comparison and kill the worker node of a run the moment it begins; "retried" when Ray ran the lost
    run again, else what the state API says of the killed run (a run already finished when its node died is a
    missed kill, not a defect: the state API reports tasks with some delay, seconds on a loaded machine)."""
    from ray.util.state import list_tasks

    killed = []  # (node, task_id, kill time in ms)

    def busy_worker(since_ms):
        # the worker of a run that began after the last one ended: it has just begun, so the kill lands mid-run (a
        # node whose run is ending, or whose RUNNING state is stale, would lose nothing and Ray would retry nothing;
        # the state API reports a new task with some delay, so the other node's older run must not be taken)
        running = [t for t in list_tasks(filters=[("state", "=", "RUNNING"), ("name", "=", "_ray_call")], detail=True)
                   if t.start_time_ms and not t.end_time_ms and t.start_time_ms >= since_ms]
        for task in sorted(running, key=lambda t: t.start_time_ms, reverse=True):
            node = next((node for node in workers if node.node_id == task.node_id), None)
            if node is not None:
                return node, task.task_id
        return None, None

    def echo(line):
        if line.startswith("[") and not killed:  # a run is in: kill the node that has just begun the next one
            since_ms = time.time() * 1000 - 1500  # the run that ended was reported at most a moment ago
            for _ in range(100):
                node, task_id = busy_worker(since_ms)
                if node is not None:  # at once: a run that ends before its node dies is not retried
                    nodes.remove_node(node, allow_graceful=False)
                    killed.append((node, task_id, time.time() * 1000))
                    return
                time.sleep(0.1)

    began_ms = time.time() * 1000  # the cluster is shared: an earlier test's retried tasks are not this test's
    results = compare(out=out, engine="ray", address=nodes.address, **options(small_csv, echo=echo, **KILLED_RUNS))
    assert killed and not results.attrs["failures"]
    _, task_id, killed_ms = killed[0]
    for _ in range(150):  # the state API reports task attempts with some delay (seconds on a loaded machine)
        attempts = list_tasks(filters=[("task_id", "=", task_id)], limit=100, detail=True)
        if any(t.attempt_number > 0 and (t.start_time_ms or 0) >= began_ms for t in attempts):
            return "retried"  # the run lost with the node was run again by Ray
        time.sleep(0.2)
    seen = "; ".join(f"attempt {t.attempt_number} {t.state}, ended {(t.end_time_ms or 0) - killed_ms:+.0f} ms after "
                     f"the kill" for t in attempts) or "no attempt reported"
    ended = [t for t in attempts if t.state == "FINISHED" and t.end_time_ms and t.end_time_ms <= killed_ms]
    return ("missed: " if ended else "not retried: ") + seen


@pytest.mark.slow
def test_ray_cluster_survives_a_worker_node_killed_mid_run(cluster, tmp_path, small_csv):
    nodes, workers = cluster
    outcomes = []
    for attempt in range(3):  # a kill that landed after its run had finished is tried again on a new node
        outcomes.append(_kill_a_node_mid_run(nodes, workers, tmp_path / f"ray{attempt}", small_csv))
        if not outcomes[-1].startswith("missed"):
            break
        _replace_lost_workers(nodes, workers)
    assert outcomes[-1] == "retried", outcomes
    compare(out=tmp_path / "one", **options(small_csv, **KILLED_RUNS))
    last = tmp_path / f"ray{len(outcomes) - 1}"
    assert records(last) == records(tmp_path / "one") and len(records(tmp_path / "one")) == 4


@pytest.mark.slow
def test_a_search_runs_trials_on_two_ray_nodes_and_survives_losing_one(cluster, tmp_path):
    """Issue 27: tune's workers are Ray tasks sharing the study's database; a node killed mid-trial costs that
    trial (marked failed) and nothing else: the search still ends with the trials asked for."""
    import sqlite3
    import threading

    import numpy as np
    import pandas as pd

    from tsattn import tuning

    nodes, workers = cluster
    db = tmp_path / "t" / "study.db"
    killed = []

    def trials_by_node():
        if not db.exists():
            return []
        try:
            with sqlite3.connect(db, timeout=30) as connection:
                rows = connection.execute("select t.number, t.state, t.datetime_start, a.value_json from trials t join "
                                          "trial_user_attributes a on a.trial_id = t.trial_id "
                                          "where a.key = 'worker'").fetchall()
        except sqlite3.OperationalError:  # the study's tables are not made yet
            return []
        return [(number, state, start, json.loads(value)) for number, state, start, value in rows]

    def kill_a_node_mid_trial(done):
        """Watch the study: once both nodes finished a trial, kill the node of a trial the moment it starts (the
        furthest from its end). Watching, rather than acting on progress lines, which come only as trials end,
        found a trial to kill every time (with the lines, a run once saw none running when it looked)."""
        while not done.wait(0.2):
            seen = trials_by_node()
            if len({worker.get("node") for _, state, _, worker in seen if state == "COMPLETE"}) < 2:
                continue
            running = sorted((start, number, worker) for number, state, start, worker in seen
                             if state == "RUNNING" and start)
            for _, number, worker in reversed(running):
                node = next((node for node in workers if node.node_id == worker.get("node")), None)
                if node is not None:
                    # the machine is lost at once, with everything on it: its Ray node and the worker process running
                    # the trial (on its own, a worker outlives its killed raylet for a moment and could end it)
                    nodes.remove_node(node, allow_graceful=False)
                    try:
                        os.kill(worker["pid"], signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    killed.append(number)
                    return

    done = threading.Event()
    watcher = threading.Thread(target=kill_a_node_mid_trial, args=(done,), daemon=True)
    watcher.start()
    t = np.arange(90)
    series = pd.Series(np.sin(t / 4) + t / 60, index=pd.date_range("2000-01-01", periods=90, freq="MS"))
    result = tuning.tune("simple-rnn", data=series, trials=8, refit=False, out=tmp_path / "t", engine="ray",
                         address=nodes.address, settings={"epochs": 40, "early_stopping": False},
                         space={"units": [3, 4], "window": {"int": [4, 8]}, "learning_rate": [0.003], "batch_size": [8],
                                "cell": None, "dropout": None, "skip": None})
    done.set()
    watcher.join(timeout=30)
    assert killed  # a node died while it ran a trial
    assert result.trials["state"].isin(["COMPLETE", "PRUNED"]).sum() == 8  # the search still has every trial asked
    failed = result.trials[result.trials["state"] == "FAIL"]
    assert list(failed["number"]) == killed and failed["error"].iloc[0] == tuning.INTERRUPTED  # the trial lost
    assert len({w.get("node") for _, state, _, w in trials_by_node() if state == "COMPLETE"}) == 2  # on both nodes
    assert len(result.trials) == 9  # nothing more: 8 finished and the lost one


def test_ray_gives_up_on_an_unreachable_cluster_within_its_time_out(monkeypatch, tmp_path, small_csv):
    """Issue 25: `--engine ray --address 127.0.0.1:1` retried "Failed to connect to GCS" for over 6 minutes."""
    import time

    from tsattn import engine as engine_module

    pytest.importorskip("ray")
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["compare", "--csv", str(small_csv), "--column", "demand", "--models",
                                       "simple-rnn", "--seeds", "0", "--epochs", "1", "--engine", "ray", "--address",
                                       "127.0.0.1:1", "--ray-timeout", "5", "--out", str(tmp_path / "r1")])
    assert result.exit_code == 2 and "could not reach a Ray cluster at 127.0.0.1:1" in result.output
    assert "Traceback" not in result.output and time.perf_counter() - started < 30
    assert not (tmp_path / "r1").exists() or not any((tmp_path / "r1").iterdir())
    # an address that never answers (packets dropped): the time-out ends the wait
    import socket

    def silent(address, timeout=None):
        raise socket.timeout("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    runner = engine_module.get_engine("ray", address="10.255.255.1:6379", timeout=0.5)
    with pytest.raises(ConfigError, match=r"no answer from a Ray cluster at 10.255.255.1:6379 within 0.5 s"):
        runner.check()
    with pytest.raises(ConfigError, match="time-out must be a number of seconds"):
        engine_module.get_engine("ray", timeout="soon")


@pytest.mark.parametrize("answer", [b"-ERR unknown command 'PRI'\r\n", b"", None])
def test_an_address_where_something_other_than_ray_listens_is_refused_at_once(answer, tmp_path, small_csv):
    """Issue 39: a Redis (or any listener) at --address passed the TCP check, then ray.init retried past
    --ray-timeout (still waiting after 300-424 s). Ray's GCS answers HTTP/2's preface; a Redis says -ERR, a
    closed connection says nothing, a silent listener is waited on only up to the time-out."""
    import socket
    import threading

    pytest.importorskip("ray")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def serve():
        connection, _ = server.accept()
        connection.recv(100)
        if answer is None:
            time.sleep(3)  # silent: says nothing, keeps the connection open
        elif answer:
            connection.sendall(answer)
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["compare", "--csv", str(small_csv), "--column", "demand", "--models",
                                       "simple-rnn", "--seeds", "0", "--epochs", "1", "--engine", "ray", "--address",
                                       f"127.0.0.1:{port}", "--ray-timeout", "2", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and f"something listens at 127.0.0.1:{port} but it is not a Ray cluster" in \
        result.output, result.output
    assert time.perf_counter() - started < 20 and not (tmp_path / "r").exists()
    server.close()

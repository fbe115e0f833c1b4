import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np
import pandas as pd
import pytest


def make_series(n=160, freq="MS", seed=0):
    """A small seasonal series with noise (monthly timestamps unless freq is None)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    values = 50 + 30 * np.sin(2 * np.pi * t / 12) + 5 * rng.normal(size=n)
    index = pd.date_range("2000-01-01", periods=n, freq=freq) if freq else pd.RangeIndex(n)
    return pd.Series(values, index=index, name="demand")


@pytest.fixture
def small_series():
    return make_series()


def pytest_collection_modifyitems(items):
    """A test on the multi-node Ray cluster (the ``cluster`` fixture of tests/test_engine.py) is marked ``ray``:
    `python3 dev.py test` runs those on their own, one after another, after the rest (under pytest-xdist a node killed
    once took its worker down). A test whose subprocess starts a local Ray instance (marked ``local_ray``) runs beside
    the others, one such test at a time (:func:`_one_local_ray_instance_at_a_time`). The slow tests run first (see
    below)."""
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.ray)
    # the slow tests (benchmark scripts, docs examples, installs: up to a minute each) first, so that the two workers
    # end together on short tests rather than one waiting for the other's last long one (the order within each kind
    # is kept); the local Ray ones first of all, side by side: pytest-xdist's worksteal hands each worker a contiguous
    # share of the list and steals from its end, so one worker runs them one after the other and the other never
    # waits on their lock
    items.sort(key=lambda item: (item.get_closest_marker("local_ray") is None, item.get_closest_marker("slow") is None))


@pytest.fixture(autouse=True)
def _one_local_ray_instance_at_a_time(request, tmp_path_factory):
    """Tests marked ``local_ray`` hold a lock shared by the pytest-xdist workers (a file beside the workers' temporary
    directories) while they run: two local Ray instances started at once by two workers once both waited for ever."""
    if request.node.get_closest_marker("local_ray") is None:
        yield
        return
    import fcntl

    with open(tmp_path_factory.getbasetemp().parent / "local-ray.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# tiny settings that keep training tests fast
TINY = {"window": 8, "epochs": 3, "batch_size": 16}
TINY_PARAMS = {"simple-rnn": {"units": 4}, "attention-rnn": {"units": 4},
               "transformer": {"d_model": 8, "num_heads": 2, "ff_dim": 8, "num_blocks": 1},
               "patch-transformer": {"d_model": 8, "num_heads": 2, "ff_dim": 8, "num_blocks": 1},
               "tft": {"hidden_size": 4, "num_heads": 2},
               "nbeats": {"units": 8, "layers": 1, "blocks": 2}}


def registered_models() -> list[str]:
    """Every registered model, for tests parametrised over the registry: one without tiny parameters here fails
    (a new model must join the contract tests, not slip past them)."""
    from tsattn.specs import list_models

    missing = [name for name in list_models() if name not in TINY_PARAMS]
    assert not missing, f"add tiny parameters for {missing} to TINY_PARAMS in tests/conftest.py"
    return list_models()


@pytest.fixture
def small_csv(tmp_path, small_series):
    path = tmp_path / "demand.csv"
    small_series.rename_axis("date").reset_index().to_csv(path, index=False)
    return path

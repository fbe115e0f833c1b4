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
    """A test that starts Ray (a multi-node cluster: the ``cluster`` fixture; or a local instance: the tests marked
    ``xdist_group("ray")``) is marked ``ray``: `python3 dev.py test` runs those on their own, one after another, after
    the rest. Under pytest-xdist a node killed once took its worker down, and two local Ray instances started at once
    by two workers once both waited for ever. One script starting a local instance runs among the workers, as the only
    one there (benchmarks/engines.py's quick mode, tests/test_benchmarks.py). The slow tests run first (see below)."""
    for item in items:
        groups = [mark.args[0] for mark in item.iter_markers("xdist_group") if mark.args]
        if "cluster" in getattr(item, "fixturenames", ()) or "ray" in groups:
            item.add_marker(pytest.mark.ray)
    # the slow tests (benchmark scripts, docs examples, installs: up to a minute each) first, so that the workers
    # end together on short tests rather than one waiting for the other's last long one (the order within each kind
    # is kept)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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

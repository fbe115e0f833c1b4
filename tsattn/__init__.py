"""tsattn: time-series forecasting with attention-based neural networks, with honest baselines.

Heavy modules (TensorFlow / Keras) are imported on first use, so ``import tsattn`` and the CLI's
``--help`` stay fast.
"""

from __future__ import annotations

import os

# TensorFlow's C++ start-up log (oneDNN notices, CPU feature lines) is noise for users; keep errors.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from ._version import __version__  # noqa: E402
from .data import as_series, fibonacci, list_datasets, load_dataset, read_csv_series  # noqa: E402
from .errors import ConfigError, DataError, NotFittedError, TrainingError, TsattnError  # noqa: E402
from .panel import Panel, as_panel, read_csv_panel  # noqa: E402
from .windows import SplitSpec, make_windows, window_panel, window_series  # noqa: E402

_LAZY = {
    "Forecaster": ("tsattn.forecaster", "Forecaster"),
    "compare": ("tsattn.compare", "compare"),
    "tune": ("tsattn.tuning", "tune"),
    "get_model": ("tsattn.models", "get_model"),
    "list_models": ("tsattn.specs", "list_models"),
    "fit": ("tsattn.harness", "fit"),
    "RunConfig": ("tsattn.config", "RunConfig"),
    "plot_series": ("tsattn.plots", "plot_series"),
    "get_engine": ("tsattn.engine", "get_engine"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        return getattr(importlib.import_module(module_name), attribute)
    raise AttributeError(f"module 'tsattn' has no attribute {name!r}")


__all__ = [
    "__version__",
    "as_series",
    "fibonacci",
    "list_datasets",
    "load_dataset",
    "read_csv_series",
    "make_windows",
    "window_series",
    "window_panel",
    "as_panel",
    "read_csv_panel",
    "Panel",
    "SplitSpec",
    "TsattnError",
    "DataError",
    "ConfigError",
    "NotFittedError",
    "TrainingError",
    *_LAZY,
]

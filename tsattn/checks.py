"""Small argument checks shared by every module: each names the setting, the value and what is accepted.

    positive_int("window", 24)           -> 24
    fraction("validation", 0.1)          -> 0.1
    choice("scaling", "robust", SCALINGS) -> "robust"
    counted(1, "value")                  -> "1 value" (and "3 values": the counts messages and titles print)
"""

from __future__ import annotations

import numpy as np

from .errors import ConfigError


def counted(count, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is 1: "1 value", "3 values", "0 windows"."""
    count = int(count)
    return f"{count} {noun}{'' if count == 1 else 's'}"


def few_names(names, limit: int = 5) -> str:
    """The first ``limit`` names for a message, "..." after them if there are more: "a, b, c, d, e, ..."."""
    names = list(names)
    return ", ".join(str(name) for name in names[:limit]) + (", ..." if len(names) > limit else "")


def positive_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum] (bools refused), returned as a Python int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum \
            or (maximum is not None and value > maximum):
        bound = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise ConfigError(f"{name} must be an integer {bound}; got {value!r}")
    return int(value)


def optional_positive_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int | None:
    """None or an integer in [minimum, maximum]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum \
            or (maximum is not None and value > maximum):
        bound = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise ConfigError(f"{name} must be an integer {bound} or null; got {value!r}")
    return int(value)


def fraction(name: str, value, low: float = 0.0, high: float = 1.0, high_open: bool = False) -> float:
    """A number in [low, high] (or [low, high) with ``high_open``)."""
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if ok:
        ok = low <= value < high if high_open else low <= value <= high
    if not ok:
        bracket = ")" if high_open else "]"
        raise ConfigError(f"{name} must be a number in [{low:g}, {high:g}{bracket}; got {value!r}")
    return float(value)


def choice(name: str, value, options) -> str:
    """One of ``options``."""
    if value not in tuple(options):
        raise ConfigError(f"{name} must be one of {', '.join(map(str, options))}; got {value!r}")
    return value


def boolean(name: str, value) -> bool:
    """True or False exactly (1, "yes" and None are refused: a setting means one thing)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be true or false; got {value!r}")
    return bool(value)


def number(name: str, value, low: float, high: float, low_open: bool = False) -> float:
    """A finite number in [low, high] (or (low, high] with ``low_open``)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ok = ok and np.isfinite(value) and (low < value if low_open else low <= value) and value <= high
    if not ok:
        raise ConfigError(f"{name} must be a number in {'(' if low_open else '['}{low:g}, {high:g}]; got {value!r}")
    return float(value)


def optional_choice(name: str, value, options):
    """None or one of ``options``."""
    if value is None:
        return None
    return choice(name, value, options)


def text(name: str, value, optional: bool = True):
    """A string (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{name} must be {'a name or null' if optional else 'a name'}; got {value!r}")
    return value


def mapping(name: str, value) -> dict:
    """A dict of settings (e.g. dataset_options, model_params)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{name} must be a table of settings (a dict / TOML table); got {value!r}")
    return value


SEED_MAX = 2**32 - 1  # NumPy's seeds
MAX_STEPS = 100_000   # forecast steps of predict / backtest horizon

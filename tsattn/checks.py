"""Small argument checks shared by every module: each names the setting, the value and what is accepted.

    positive_int("window", 24)           -> 24
    fraction("validation", 0.1)          -> 0.1
    choice("scaling", "robust", SCALINGS) -> "robust"
"""

from __future__ import annotations

import numpy as np

from .errors import ConfigError


def positive_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum] (bools refused), returned as a Python int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be an integer in {minimum}..{maximum}; got {value!r}")
    return int(value)


def optional_positive_int(name: str, value, minimum: int = 1) -> int | None:
    """None or an integer >= minimum."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum} or None; got {value!r}")
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

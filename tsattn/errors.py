"""User-facing errors.

Every problem a user can cause (bad data, a bad option, a missing file) raises a subclass of
:class:`TsattnError` with a one-line message that names the problem and how to fix it. The CLI prints
that line and exits with code 2; library users can catch ``TsattnError`` (it is also a ``ValueError``).
"""


class TsattnError(ValueError):
    """A problem with the user's input or configuration, explained in one line."""


class DataError(TsattnError):
    """The series or file cannot be used as given (NaN values, a missing column, too short...)."""


class MissingColumnError(DataError):
    """A frame lacks the id, time or value column asked for; ``problem`` says which and what the frame has, so a caller
    whose columns the user cannot choose (a fitted model's predict) can give its own fix."""

    def __init__(self, problem: str, fix: str):
        super().__init__(f"{problem} ({fix})")
        self.problem, self.fix = problem, fix

    def __reduce__(self):  # rebuilt from both parts (a failure sent back by an engine's worker process)
        return type(self), (self.problem, self.fix)


class TooShortError(DataError):
    """The series are too short for the window, horizon and split asked for (no training or validation window)."""


class ConfigError(TsattnError):
    """An unknown name or an invalid parameter (model, dataset, preset, window, split...)."""


class NotFittedError(TsattnError, AttributeError):
    """A method that needs a fitted Forecaster was called before ``fit``."""


class TrainingError(TsattnError):
    """Training failed in a way the user can act on (for example a non-finite loss)."""


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that points at the first caller outside tsattn (the user's line, as
    pandas' and scikit-learn's warnings do), not at tsattn's own code: a warning shows where the user can act."""
    import inspect
    import os

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = inspect.currentframe(), 0
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return max(level, 1)

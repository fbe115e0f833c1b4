"""Prediction intervals: levels and quantiles, and split-conformal calibration for any forecaster.

A level L (e.g. 80) is the central interval between the quantiles 0.5 - L/200 and 0.5 + L/200; its columns are
``lo-80`` and ``hi-80`` (the names NeuralForecast and statsforecast use). Two sources give them:

- a network trained with ``loss="quantile"`` outputs the quantiles itself (pinball loss; :mod:`tsattn.models`);
- every other forecaster, networks and baselines alike, gets **split-conformal** intervals: the absolute errors
  of its rolling forecasts on the validation part (never the test part), divided by each series' scale at the
  forecast's origin (a seasonal-naive MAE, MASE's denominator: :data:`INTERVAL_SCALES`), are pooled over series per
  step ahead; the interval of level L at step j is the forecast +/- the ceil((n + 1) L / 100)-th smallest of those n
  scores times the series' scale at its origin. Pooled, because a panel's validation part often holds one window per
  series (M3 monthly: 1428 series x 1 window of 18 steps), far too few errors for per-series quantiles; scaled, so
  that series of different sizes share one distribution of errors. For one series this is plain split conformal.

This module needs no Keras.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ConfigError, user_stacklevel

MAX_LEVELS = 20
MAX_SCORES = 4096  # order statistics kept per step (all of them below this; evenly spaced ranks above)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def check_levels(levels) -> tuple[float, ...]:
    """Interval levels in percent, each strictly between 0 and 100, sorted and without repeats.

    Accepts one level or a list (numbers or numeric text: ``80``, ``"95"``, ``[80, 95]``, ``"80,95"``); None or
    an empty list means no intervals.
    """
    if levels is None:
        return ()
    if isinstance(levels, str):
        levels = [part for part in levels.split(",") if part.strip()]
    elif not isinstance(levels, (list, tuple, np.ndarray)):
        levels = [levels]
    if len(levels) > MAX_LEVELS:
        raise ConfigError(f"level takes at most {MAX_LEVELS} levels; got {len(levels)}")
    checked = []
    for value in levels:
        number = _number(value)
        if number is None or not math.isfinite(number) or not 0 < number < 100:
            raise ConfigError(f"level must be a number between 0 and 100 (exclusive), e.g. 80 or 95; got {value!r}")
        checked.append(int(number) if number.is_integer() else number)
    return tuple(sorted(set(checked)))


def check_quantiles(quantiles) -> tuple[float, ...]:
    """Quantiles strictly between 0 and 1, sorted and without repeats (at most 99)."""
    if isinstance(quantiles, str):
        quantiles = [part for part in quantiles.split(",") if part.strip()]
    elif not isinstance(quantiles, (list, tuple, np.ndarray)):
        quantiles = [quantiles]
    checked = []
    for value in quantiles:
        number = _number(value)
        if number is None or not math.isfinite(number) or not 0 < number < 1:
            raise ConfigError(f"quantiles must be numbers between 0 and 1 (exclusive), e.g. 0.1,0.5,0.9; got {value!r}")
        checked.append(round(number, 6))
    if not checked or len(checked) > 99:
        raise ConfigError(f"quantiles must list 1 to 99 numbers between 0 and 1; got {quantiles!r}")
    return tuple(sorted(set(checked)))


def level_bounds(level: float) -> tuple[float, float]:
    """The quantiles (lower, upper) bounding the central interval of ``level`` percent."""
    return round(0.5 - level / 200, 6), round(0.5 + level / 200, 6)


def quantiles_for_levels(levels) -> tuple[float, ...]:
    """The quantiles a quantile model needs for ``levels``: the median and each level's bounds."""
    wanted = {0.5}
    for level in check_levels(levels):
        wanted.update(level_bounds(level))
    return tuple(sorted(wanted))


def missing_levels(levels, quantiles) -> list:
    """The levels whose bounds are not among ``quantiles``."""
    have = set(round(q, 6) for q in quantiles)
    return [level for level in check_levels(levels) if not set(level_bounds(level)) <= have]


def steps_text(steps) -> str:
    """Forecast steps as a message names them: runs as ranges (1-3, 5, 7-12), every step named."""
    steps, runs = sorted(int(step) for step in steps), []
    for step in steps:
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def level_name(level: float) -> str:
    """A level as written in column names: 80, 97.5, 99.99999999 (the shortest text that reads back as the same
    number, so two levels never share a column)."""
    level = float(level)
    return str(int(level)) if level.is_integer() else repr(level)


def interval_columns(levels, model: str | None = None) -> list[str]:
    """``lo-80, hi-80, lo-95, hi-95`` for levels (80, 95); with ``model`` NeuralForecast's and statsforecast's
    ``<model>-lo-80, <model>-hi-80, ...`` (what a forecast frame carries)."""
    prefix = f"{model}-" if model else ""
    return [f"{prefix}{side}-{level_name(level)}" for level in check_levels(levels) for side in ("lo", "hi")]


def point_quantile(quantiles) -> int:
    """Index of the quantile that gives a quantile model's point forecast: the median, else the nearest to it."""
    quantiles = np.asarray(quantiles, dtype=np.float64)
    return int(np.argmin(np.abs(quantiles - 0.5)))


def interval_source(loss) -> str:
    """How a model's intervals are made, as tables and reports name it."""
    return "conformalized quantiles" if loss == "quantile" else "conformal"


# What conformal scores are divided by (RunConfig.interval_scale), each a seasonal-naive MAE (M4's MASE denominator)
# over some of a series' values: "expanding", every value up to each forecast's origin, so a validation
# forecast's score is scaled on what was known at its origin and a later forecast (the test origin, predict after the
# data's end) on what is known then; "insample", every value before the test part (MASE's in-sample values), one
# figure per series whatever the origin, so a validation score is scaled on values after its origin too (tsattn's
# scale before the setting existed: under-covered M3 yearly, whose validation years swing more than their past);
# "recent", the last recent_span(season, horizon) seasonal differences before each origin, so bands follow recent
# swings; "blend" (the default), the mean of the expanding and the recent figures (each falling back alike): a long
# run's level shrunk toward the recent swings. Measured before M3's and
# M1's hold-outs (benchmarks/results/intervals_scale.md). Where a series is too short for one season before an origin,
# the in-sample figure. "ets": per step ahead, the geometric mean of the blend figure and statsforecast AutoETS's own
# forecast standard deviation for that series, step and origin (AutoETS fitted on the values up to the origin): a
# model-based difficulty, which grows with the step as the series' own smoothing says (the blend figure where AutoETS
# cannot fit the history). With AutoETS as the forecaster, one horizon before each M3 hold-out, it lowered the MSIS of
# split-conformal bands against blend by 2-14% on every frequency and level but one
# (benchmarks/results/intervals_ets_scale_o2.md). It needs statsforecast and costs one AutoETS fit per origin.
INTERVAL_SCALES = ("expanding", "insample", "recent", "blend", "ets")
# "auto" (a setting, never a calibration's scale): blend or ets, whichever gives the lower interval score on the
# validation forecasts themselves, cross-fitted over series (:func:`choose_scale`); blend where that cannot be told
# (statsforecast missing, a single series, fewer than CHOICE_MIN_WINDOWS windows in either half).
INTERVAL_SCALE_SETTINGS = (*INTERVAL_SCALES, "auto")
SCALE_CANDIDATES = ("blend", "ets")  # what "auto" chooses between, the first kept on a tie or without the others
CHOICE_LEVELS = (80, 95)  # the levels whose interval scores (MSIS's numerator) "auto" compares
CHOICE_MIN_WINDOWS = 40  # validation windows each half of the series must hold for "auto" to compare scales
ETS_DEVIATION_LEVEL = 80  # AutoETS's deviation is read off its own interval at this level: (hi - lo) / (2 z)

# What a split-conformal score is (RunConfig.interval_scores): "absolute", the scaled absolute error, one radius per
# step and level, a band symmetric about the forecast (tsattn's scores before the setting existed); "signed", the
# scaled error itself (actual - forecast), whose lower and upper tails give the band's two sides separately (Darts'
# ``symmetric=False``): narrower where errors lean one way (a trend the forecasts under-extrapolate), each tail
# guaranteed at (100 - L) / 2 percent, so it needs about twice the scores per step of an absolute band of the same
# level. A point forecaster's intervals only: a quantile model's are conformalized quantiles either way.
INTERVAL_SCORES = ("absolute", "signed")


def recent_span(season: int, horizon: int) -> int:
    """How many seasonal differences before an origin the "recent" interval scale averages: three seasons or two
    horizons, whichever is longer (36 for M3 monthly, 16 quarterly, 12 yearly)."""
    return max(3 * max(int(season), 1), 2 * max(int(horizon), 1))


def window_scale(kind: str, values, origins, first, season: int, horizon: int, insample, deviation=None) -> np.ndarray:
    """(windows,) the scale each forecast's conformal score is measured in (:data:`INTERVAL_SCALES`): ``insample``
    (per window, its series' in-sample scale: :func:`series_scale`) as it is, or the mean absolute seasonal
    difference of the values up to each origin (``origins``: flat positions of the last input in ``values``;
    ``first``: each one's series start), all of them ("expanding") or the last :func:`recent_span` ("recent"), or
    the mean of those two ("blend"); ``insample`` where that is undefined or 0."""
    insample = np.asarray(insample, dtype=np.float64)
    if kind not in INTERVAL_SCALES:
        raise ConfigError(f"interval_scale must be one of {', '.join(INTERVAL_SCALES)}; got {kind!r}")
    if kind == "insample":
        return insample
    values = np.asarray(values, dtype=np.float64)
    origins, first = np.asarray(origins, dtype=np.int64), np.asarray(first, dtype=np.int64)
    lag = max(int(season), 1)
    if len(values) <= lag or not len(origins):
        return insample
    differences = np.full(len(values), np.nan)
    differences[lag:] = np.abs(values[lag:] - values[:-lag])  # across a series boundary too: never read (low below)
    present = np.isfinite(differences)
    filled = np.where(present, differences, 0.0)
    # running sums restarted at each series start, so a series' figures do not depend on the series stored before it
    # (the same series in another panel gives the same scale to the last bit)
    sums, counts = np.zeros(len(values) + 1), np.zeros(len(values) + 1, dtype=np.int64)
    starts = np.unique(first)
    for start, end in zip(starts, np.append(starts[1:], len(values))):
        inside = min(start + lag, end)  # the first difference within the series (earlier ones cross its start)
        sums[start + 1:inside + 1], counts[start + 1:inside + 1] = 0.0, 0
        sums[inside + 1:end + 1] = np.cumsum(filled[inside:end])
        counts[inside + 1:end + 1] = np.cumsum(present[inside:end])
    high = np.clip(origins + 1, 0, len(values))

    def over(span: int) -> np.ndarray:  # the mean of the last ``span`` differences up to each origin (one set of sums)
        low = np.minimum(np.maximum(first + lag, high - span), high)
        number = counts[high] - counts[low]
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = (sums[high] - sums[low]) / number
        good = (number > 0) & np.isfinite(scale) & (scale > 0)
        return np.where(good, scale, insample)

    if kind in ("blend", "ets"):
        blended = blend_scale(over(len(values)), over(recent_span(season, horizon)))
        if kind == "ets" and deviation is None:  # an AutoETS fit per origin: tsattn.baselines.interval_scale_at
            raise ConfigError("the ets interval scale needs AutoETS's deviation at each origin "
                              "(tsattn.baselines.interval_scale_at computes it)")
        return blended if kind == "blend" else ets_scale(blended, deviation)
    return over(recent_span(season, horizon) if kind == "recent" else len(values))


def fold_counts(series) -> np.ndarray:
    """(2,) the validation windows in each half of the series (:func:`choice_folds`' halves)."""
    return np.bincount(np.asarray(series, dtype=np.int64) % 2, minlength=2)


def choice_folds(series) -> np.ndarray | None:
    """(windows,) the half (0 or 1) of the series each validation window belongs to (alternate series by number), for
    :func:`choose_scale`; None when either half holds fewer than :data:`CHOICE_MIN_WINDOWS` windows."""
    return np.asarray(series, dtype=np.int64) % 2 if fold_counts(series).min() >= CHOICE_MIN_WINDOWS else None


def interval_score(actual, lower, upper, level: float, normaliser) -> float:
    """The mean interval score (Gneiting & Raftery; MSIS's numerator) of bands (windows, steps) at ``level``, each
    window's divided by its ``normaliser`` (windows,): width plus 2 / alpha times the miss below or above."""
    alpha = (100 - float(level)) / 100
    actual, lower, upper = (np.asarray(a, dtype=np.float64) for a in (actual, lower, upper))
    score = (upper - lower) + 2 / alpha * (np.maximum(lower - actual, 0) + np.maximum(actual - upper, 0))
    score = score / np.asarray(normaliser, dtype=np.float64)[:, None]
    return float(np.nanmean(score)) if np.isfinite(score).any() else float("nan")


def choose_scale(actual, point, quantiles, scales: dict, folds, normaliser, floor=None,
                 scores: str = "absolute") -> tuple[str, dict]:
    """The interval scale (a key of ``scales``: {kind: that scale of each validation window}) whose split-conformal
    bands score best on the validation forecasts, and each candidate's score as a ratio to the first's.

    Cross-fitted over series (``folds``: :func:`choice_folds`): the bands of one half are calibrated on the other
    half's windows, so every window is scored by a calibration that never saw it, at the same origins as the
    calibration (the scales read only values up to each origin). A candidate's score is the mean over
    :data:`CHOICE_LEVELS` (those a quantile model's own quantiles bound) of its interval score (each window's divided
    by ``normaliser``, its series' scale) as a ratio to the first candidate's; the lowest wins, the first on a tie or
    when no level can be scored."""
    actual, point = np.asarray(actual, dtype=np.float64), np.asarray(point, dtype=np.float64)
    folds = np.asarray(folds)
    normaliser = np.asarray(normaliser, dtype=np.float64)
    totals = {}
    for kind, scale in scales.items():
        scale = np.asarray(scale, dtype=np.float64)
        per_level = {level: [] for level in CHOICE_LEVELS}
        for fold in (0, 1):
            fit, held = folds != fold, folds == fold
            own = None if quantiles is None else {q: np.asarray(v)[fit] for q, v in quantiles.items()}
            calibration = Calibration.calibrate(actual[fit], point[fit], own, scale[fit], floor, kind, scores)
            shown = None if quantiles is None else {q: np.asarray(v)[held] for q, v in quantiles.items()}
            predicted = calibration.quantiles(point[held], shown, scale[held], CHOICE_LEVELS)
            for level, (lower, upper) in bands(predicted, CHOICE_LEVELS).items():
                per_level[level].append((interval_score(actual[held], lower, upper, level, normaliser[held]),
                                         int(held.sum())))
        totals[kind] = {level: sum(s * n for s, n in parts) / sum(n for _, n in parts)
                        for level, parts in per_level.items() if parts}  # a quantile model's own levels only
    first = next(iter(scales))
    levels = [level for level in CHOICE_LEVELS if all(level in totals[kind] for kind in scales)]
    ratios = {kind: float(np.mean([totals[kind][level] / totals[first][level] for level in levels]))
              if levels else float("nan") for kind in scales}
    finite = {kind: ratio for kind, ratio in ratios.items() if np.isfinite(ratio)}
    chosen = min(finite, key=lambda kind: (finite[kind], kind != first)) if first in finite else first
    return chosen, ratios


ETS_SCALE_BOUND = 4.0  # the ets scale stays within this factor of the blend figure either way


def ets_scale(blended, deviation) -> np.ndarray:
    """The "ets" interval scale (windows, horizon): sqrt(blend x AutoETS's forecast deviation) at each origin and step
    (``deviation``, (windows, horizon): :func:`tsattn.baselines.ets_deviation`), the blend figure where the deviation
    is missing, and never more than :data:`ETS_SCALE_BOUND` times the blend figure or less than its inverse: AutoETS's
    deviation can explode along the horizon (M3 monthly one horizon before its hold-out: the last step's deviation a
    median 1.33 times the first's, but 3.5 at the 99th percentile and up to ~10,000), and one such band's width
    outweighs hundreds of others in a mean score."""
    blended = np.asarray(blended, dtype=np.float64)[:, None]
    scale = np.sqrt(blended * np.asarray(deviation, dtype=np.float64))
    scale = np.clip(scale, blended / ETS_SCALE_BOUND, blended * ETS_SCALE_BOUND)
    return np.where(np.isfinite(scale) & (scale > 0), scale, np.broadcast_to(blended, scale.shape))


def per_step(scale, steps: int | None = None) -> np.ndarray:
    """A scale as (rows, steps): each row's figure (rows,) on every step, or a per-step scale (rows, horizon) cut to
    its first ``steps`` columns."""
    scale = np.asarray(scale, dtype=np.float64)
    if scale.ndim == 1:
        return scale[:, None]
    return scale if steps is None else scale[:, :steps]


def blend_scale(expanding, recent) -> np.ndarray:
    """The "blend" interval scale from the expanding and the recent ones: their mean."""
    return (np.asarray(expanding, dtype=np.float64) + np.asarray(recent, dtype=np.float64)) / 2


def series_scale(mase_scale, fallback) -> np.ndarray:
    """Per-series normaliser of the conformal scores: the in-sample seasonal-naive MAE, or ``fallback`` (e.g.
    the scaler's scale) where that is zero or undefined (a constant training part)."""
    scale = np.asarray(mase_scale, dtype=np.float64)
    fallback = np.broadcast_to(np.asarray(fallback, dtype=np.float64), scale.shape)
    good = np.isfinite(scale) & (scale > 0)
    return np.where(good, scale, np.where(np.isfinite(fallback) & (fallback > 0), fallback, 1.0))


class Conformal:
    """Split-conformal calibration: per step ahead, the sorted scaled absolute (or, ``signed``, plain) errors of
    validation forecasts (:data:`INTERVAL_SCORES`).

    Only order statistics are stored (all up to :data:`MAX_SCORES` per step, else that many evenly spaced
    ranks), as plain numbers, so a saved and reloaded forecaster gives identical intervals.
    """

    def __init__(self, counts, ranks, scores, signed: bool = False):
        self.counts = [int(n) for n in counts]                       # scores per step
        self.ranks = [np.asarray(r, dtype=np.int64) for r in ranks]  # 1-based ranks kept, ascending
        self.scores = [np.asarray(s, dtype=np.float64) for s in scores]
        self.signed = bool(signed)  # scores are actual - forecast (each side of the band its own tail), not |.|

    @property
    def steps(self) -> int:
        return len(self.counts)

    @classmethod
    def calibrate(cls, actual, predicted, scale, signed: bool = False) -> "Conformal":
        """From validation targets and forecasts (windows, horizon) and each window's series scale (windows,; or per
        step, (windows, horizon));
        ``signed``: keep the errors' signs (:data:`INTERVAL_SCORES`)."""
        actual, predicted = np.asarray(actual, dtype=np.float64), np.asarray(predicted, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            errors = (actual - predicted) / per_step(scale)
        return cls.from_scores(errors if signed else np.abs(errors), signed=signed)

    @classmethod
    def from_scores(cls, errors, signed: bool = False) -> "Conformal":
        """From conformity scores (windows, horizon), already scaled (NaN entries are skipped); ``signed``: they are
        signed errors, not magnitudes."""
        errors = np.asarray(errors, dtype=np.float64)
        counts, ranks, scores = [], [], []
        for step in range(errors.shape[1]):
            column = np.sort(errors[:, step][np.isfinite(errors[:, step])])
            n = len(column)
            kept = np.arange(1, n + 1) if n <= MAX_SCORES else \
                np.unique(np.round(np.linspace(1, n, MAX_SCORES)).astype(np.int64))
            counts.append(n)
            ranks.append(kept)
            scores.append(column[kept - 1] if n else np.zeros(0))
        return cls(counts, ranks, scores, signed=signed)

    def radius(self, level: float, extrapolate: bool = True) -> tuple[np.ndarray, list[int]]:
        """(steps,) half-widths in scaled units for ``level``, and the steps with too few scores to reach it.

        Where the finite-sample rank ceil((n + 1) L / 100) exceeds the n scores, no order statistic guarantees the
        level. The largest score alone would give every such level the same band (one validation window: the 80%
        and the 95% interval identical); with ``extrapolate`` (absolute errors) the half-width there is the larger
        of the largest score and the half-normal quantile of the scores (root mean square times the standard normal
        quantile (1 + L/100) / 2): wider for a higher level, an assumption about the errors rather than a guarantee
        (the warning of :meth:`quantiles` says so)."""
        widths, short = np.full(self.steps, np.nan), []
        for step in range(self.steps):
            n = self.counts[step]
            if n == 0:
                short.append(step + 1)
                continue
            k = math.ceil((n + 1) * level / 100 - 1e-9)  # the finite-sample conformal rank
            if k > n:
                short.append(step + 1)
                k = n
            position = int(np.searchsorted(self.ranks[step], k, side="left"))  # smallest kept rank >= k
            widths[step] = self.scores[step][min(position, len(self.scores[step]) - 1)]
            if extrapolate and step + 1 in short:
                from statistics import NormalDist

                spread = math.sqrt(float(np.mean(np.square(self.scores[step]))))
                widths[step] = max(widths[step], spread * NormalDist().inv_cdf(0.5 + level / 200))
        return widths, short

    def _at_rank(self, step: int, k: int, lower: bool = False) -> float:
        """The k-th smallest score of a step: where only some ranks are kept, the nearest kept rank at or above k (at
        or below it for a ``lower`` bound), so the band is never narrower than the full scores would make it."""
        ranks = self.ranks[step]
        position = int(np.searchsorted(ranks, k, side="right")) - 1 if lower else \
            int(np.searchsorted(ranks, k, side="left"))
        return float(self.scores[step][min(max(position, 0), len(self.scores[step]) - 1)])

    def offsets(self, level: float) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(steps,) lower and upper offsets from the forecast in scaled units for ``level`` (lower <= 0 <= upper),
        and the steps with too few scores to reach it.

        Absolute scores: minus and plus :meth:`radius`. Signed scores: the floor((n + 1) a)-th and the
        ceil((n + 1)(1 - a))-th smallest scores, a = (100 - L) / 200 (each tail its conformal rank, so the band
        covers at least L% when validation and future errors are exchangeable), clamped so that the band holds its
        forecast; where a step holds too few scores for either rank (fewer than 200 / (100 - L) - 1), the absolute
        band of its scores' magnitudes (:meth:`radius`, with its rule where even that is short)."""
        if not self.signed:
            widths, short = self.radius(level)
            return -widths, widths, short
        low, high, short = np.full(self.steps, np.nan), np.full(self.steps, np.nan), []
        tail = (100 - level) / 200
        for step in range(self.steps):
            n = self.counts[step]
            lower_rank = math.floor((n + 1) * tail + 1e-9)
            upper_rank = math.ceil((n + 1) * (1 - tail) - 1e-9)
            if n == 0 or lower_rank < 1 or upper_rank > n:  # too few for a tail: the band of the (kept)
                # scores' magnitudes
                widths, lacking = Conformal.from_scores(np.abs(self.scores[step])[:, None]).radius(level)
                low[step], high[step] = -widths[0], widths[0]
                short += [step + 1] if lacking else []
                continue
            low[step] = min(self._at_rank(step, lower_rank, lower=True), 0.0)
            high[step] = max(self._at_rank(step, upper_rank), 0.0)
        return low, high, short

    def quantiles(self, point, scale, levels) -> dict[float, np.ndarray]:
        """{quantile: (rows, steps)} from point forecasts (rows, steps) and each row's series scale (rows,; or per
        step, (rows, horizon): :func:`per_step`):
        the point as the median and each level's bounds."""
        import warnings

        point = np.asarray(point, dtype=np.float64)
        steps = point.shape[1]
        if steps > self.steps:
            raise ConfigError(f"conformal intervals reach {self.steps} step(s) ahead (the model's horizon); got "
                              f"{steps} steps: forecast at most {self.steps} steps with intervals, or fit with "
                              f"horizon={steps}")
        scale = per_step(scale, steps)
        out = {0.5: point}
        for level in check_levels(levels):
            below, above, short = self.offsets(level)
            short = [step for step in short if step <= steps]  # of the steps forecast (it named steps 1-5 of 6 for 3)
            if short:
                warnings.warn(f"too few validation forecasts for a {level_name(level)}% conformal interval at step(s) "
                              f"{steps_text(short)} (need at least {math.ceil(100 / (100 - level)) - 1}): there the interval is "
                              "the larger of their largest error and their half-normal quantile, an assumption rather "
                              "than a guarantee; more validation values (validation=...) calibrate it",
                              UserWarning, stacklevel=user_stacklevel())
            low, high = level_bounds(level)
            out[low] = point + np.nan_to_num(below[:steps], nan=0.0)[None, :] * scale
            out[high] = point + np.nan_to_num(above[:steps], nan=0.0)[None, :] * scale
        return dict(sorted(out.items()))

    # the interval-method protocol of :data:`INTERVAL_METHODS` (see :class:`Calibration`)
    @staticmethod
    def applies(quantiles) -> bool:
        """Split conformal calibrates any forecaster's point forecasts."""
        return True

    @classmethod
    def fit(cls, actual, point, quantiles, scale, scores: str = "absolute") -> "Conformal":
        return cls.calibrate(actual, point, scale, signed=scores == "signed")

    def apply(self, point, quantiles, scale, levels) -> dict:
        return self.quantiles(point, scale, levels)

    def state(self) -> dict:
        return {"counts": self.counts, "ranks": [r.tolist() for r in self.ranks],
                "scores": [[float(v) for v in s] for s in self.scores], **({"signed": True} if self.signed else {})}

    @classmethod
    def from_state(cls, state: dict) -> "Conformal":
        counts, ranks, scores = state["counts"], state["ranks"], state["scores"]
        if not (len(counts) == len(ranks) == len(scores)) or any(len(r) != len(s) for r, s in zip(ranks, scores)):
            raise ValueError("conformal counts, ranks and scores must match")
        made = cls(counts, ranks, scores, signed=bool(state.get("signed", False)))  # absent before interval_scores
        for n, r, s in zip(made.counts, made.ranks, made.scores):
            if (n < 0 or (len(r) and (r[0] < 1 or r[-1] > n or (np.diff(r) <= 0).any()))
                    or not np.isfinite(s).all() or (np.diff(s) < 0).any()):
                raise ValueError("conformal scores must be sorted finite numbers at ranks 1..n")
        return made


def quantile_levels(quantiles) -> tuple:
    """The levels a set of quantiles bounds (pairs q, 1 - q): (0.025, 0.1, 0.5, 0.9, 0.975) -> (80, 95)."""
    have = set(round(float(q), 6) for q in quantiles)
    found = [round((1 - 2 * q) * 100, 4) for q in sorted(have) if q < 0.5 and round(1 - q, 6) in have]
    return check_levels(found) if found else ()


class QuantileConformal:
    """Conformalized quantile regression (Romano et al., 2019) for a quantile model: per level L, the scores
    max(lower - y, y - upper) of its validation forecasts (scaled like :class:`Conformal`'s, pooled per step)
    give a margin r (the finite-sample conformal quantile), and the calibrated interval is
    [lower - r, upper + r] (r < 0 narrows a band that was too wide). The median is left as it is."""

    def __init__(self, by_level: dict):
        self.by_level = {float(level): conformal for level, conformal in by_level.items()}

    @classmethod
    def calibrate(cls, actual, quantiles: dict, scale) -> "QuantileConformal":
        actual = np.asarray(actual, dtype=np.float64)
        scale = per_step(scale)
        by_level = {}
        for level, (low, high) in bands(quantiles, quantile_levels(quantiles)).items():
            with np.errstate(invalid="ignore", divide="ignore"):
                by_level[level] = Conformal.from_scores(np.maximum(low - actual, actual - high) / scale)
        return cls(by_level)

    def quantiles(self, quantiles: dict, scale, levels) -> dict:
        """The model's quantiles with each calibrated level's bounds moved by its margin (levels without a
        calibration keep the raw bounds)."""
        import warnings

        scale = np.asarray(scale, dtype=np.float64)
        out = dict(quantiles)
        for level in check_levels(levels):
            conformal = self.by_level.get(float(level))
            low, high = level_bounds(level)
            if conformal is None or low not in quantiles:
                continue
            steps = quantiles[low].shape[1]
            margin, short = conformal.radius(level, extrapolate=False)  # signed scores: no half-normal
            short = [step for step in short if step <= steps]
            if short:
                warnings.warn(f"too few validation forecasts to calibrate the {level_name(level)}% quantile band at "
                              f"step(s) {steps_text(short)}; the largest score is used there",
                              UserWarning, stacklevel=user_stacklevel())
            margin = np.nan_to_num(margin[:steps], nan=0.0)[None, :] * per_step(scale, steps)
            out[low], out[high] = quantiles[low] - margin, quantiles[high] + margin
            # a negative margin can cross the bounds over the median: keep every quantile ordered
        ordered = np.sort(np.stack([out[q] for q in sorted(out)], axis=-1), axis=-1)
        return {q: ordered[..., i] for i, q in enumerate(sorted(out))}

    @staticmethod
    def applies(quantiles) -> bool:
        """Conformalized quantile regression calibrates a model that forecasts quantiles of its own."""
        return quantiles is not None

    @classmethod
    def fit(cls, actual, point, quantiles, scale, scores: str = "absolute") -> "QuantileConformal":
        return cls.calibrate(actual, quantiles, scale)  # its scores are signed distances to the band already

    def apply(self, point, quantiles, scale, levels) -> dict:
        return self.quantiles(quantiles, scale, levels)

    def state(self) -> dict:
        return {level_name(level): conformal.state() for level, conformal in self.by_level.items()}

    @classmethod
    def from_state(cls, state: dict) -> "QuantileConformal":
        return cls({float(level): Conformal.from_state(value) for level, value in state.items()})


# The interval methods, by the name artefacts store them under; each calibrates on validation forecasts and turns a
# forecast into quantiles: applies(own quantiles) -> bool, fit(actual, point, own quantiles, scale,
# scores=one of INTERVAL_SCORES) -> method,
# method.apply(point, own quantiles, scale, levels) -> {quantile: array}, method.state() / cls.from_state(state).
# A model is calibrated by every method that applies to it; the last that applies gives its intervals. A new method
# is one class and one entry here.
INTERVAL_METHODS = {"conformal": Conformal, "quantile_conformal": QuantileConformal}


def floored(values, floor: float | None):
    """Forecasts raised to ``floor`` (0 for data that has never been below zero, else None: unchanged): an array, or
    a model's own quantiles {quantile: array}; None stays None. Every path that forecasts applies it to every
    model's point forecast (a network's, a baseline's, a combination's), so a forecast of counts or sales is never
    negative and never lies outside its own interval, whose bounds :class:`Calibration` floors alike."""
    if floor is None or values is None:
        return values
    if isinstance(values, dict):
        return {key: np.maximum(value, floor) for key, value in values.items()}
    return np.maximum(values, floor)


class Calibration:
    """A fitted model's interval calibration on its validation part: the one object a fitted state keeps, saves and
    forecasts intervals with, whatever the methods (:data:`INTERVAL_METHODS`)."""

    def __init__(self, methods: dict, floor: float | None = None, scale: str = "insample",
                 scale_choice: dict | None = None, unchosen: str | None = None):
        self.methods = dict(methods)  # name -> calibrated method, in INTERVAL_METHODS' order
        self.floor = floor  # bounds below it are raised to it (0 for non-negative data), None: none
        self.scale = scale  # what the scores are measured in (INTERVAL_SCALES): forecasts are scaled alike
        # with interval_scale "auto": {candidate: its cross-fitted validation score as a ratio to blend's}
        # (choose_scale), or {} when the choice could not be made (blend then); None when the scale was set
        self.scale_choice = scale_choice
        self.unchosen = unchosen  # why "auto" could not choose (scale_choice {}), as a run's files say it

    @classmethod
    def calibrate(cls, actual, point, quantiles, scale, floor: float | None = None,
                  kind: str = "insample", scores: str = "absolute") -> "Calibration":
        """Every method that applies, calibrated on validation targets and forecasts (windows, horizon), a quantile
        model's own quantiles ({quantile: (windows, horizon)}, or None) and each window's scale (windows,; "ets":
        (windows, horizon):
        :func:`window_scale` of ``kind``); ``floor``: the lowest value an interval may reach
        (:meth:`tsattn.windows.WindowedPanel.nonnegative_floor`); ``scores``: one of :data:`INTERVAL_SCORES`."""
        if scores not in INTERVAL_SCORES:
            raise ConfigError(f"interval_scores must be one of {', '.join(INTERVAL_SCORES)}; got {scores!r}")
        return cls({name: method.fit(actual, point, quantiles, scale, scores=scores)
                    for name, method in INTERVAL_METHODS.items() if method.applies(quantiles)}, floor, kind)

    def describe_scale(self) -> str:
        """What the conformal scores are measured in, as run files say it: "the blend scale", or with interval_scale
        auto "the ets scale, chosen on the validation forecasts (interval score against blend's: ets 0.946)"."""
        text = f"the {self.scale} scale"
        if self.scale_choice is None:
            return text
        if not self.scale_choice or len(self.scale_choice) < 2:  # a model saved before the reason was kept: both
            why = self.unchosen or "too few validation windows, or no statsforecast"
            return text + f" (interval_scale auto could not choose: {why})"
        first = next(iter(self.scale_choice))
        scores = ", ".join(f"{kind} {ratio:.3f}" for kind, ratio in self.scale_choice.items() if kind != first)
        return text + f", chosen on the validation forecasts (interval score against {first}'s: {scores})"

    def get(self, name: str):
        """The calibrated method of that name, or None."""
        return self.methods.get(name)

    def quantiles(self, point, quantiles, scale, levels) -> dict:
        """{quantile: (rows, steps)}: the intervals of the last method that applies to this forecast (a model's own
        quantiles, conformalized, or split conformal around its point forecast)."""
        for name in reversed(list(INTERVAL_METHODS)):
            if name in self.methods and INTERVAL_METHODS[name].applies(quantiles):
                out = self.methods[name].apply(point, quantiles, scale, levels)
                return floored(out, self.floor)
        raise ConfigError("no interval calibration applies to this forecast")

    def state(self) -> dict:
        return {**{name: method.state() for name, method in self.methods.items()}, "floor": self.floor,
                "scale": self.scale, **({} if self.scale_choice is None else {"scale_choice": self.scale_choice}),
                **({} if self.unchosen is None else {"unchosen": self.unchosen})}

    @classmethod
    def from_state(cls, state: dict) -> "Calibration":
        state = dict(state)
        floor = state.pop("floor", None)  # absent in models saved before intervals were clipped
        scale = state.pop("scale", "insample")  # absent in models saved before interval_scale: the in-sample one
        choice = state.pop("scale_choice", None)  # with interval_scale "auto" only
        unchosen = state.pop("unchosen", None)  # ... when it could not choose (absent in models saved before)
        if scale not in INTERVAL_SCALES:
            raise ValueError(f"unknown interval scale {scale!r}")
        unknown = sorted(set(state) - set(INTERVAL_METHODS))
        if unknown:
            raise ValueError(f"unknown interval method(s) {', '.join(unknown)}")
        return cls({name: INTERVAL_METHODS[name].from_state(value) for name, value in state.items()
                    if value is not None}, floor, scale,
                   None if choice is None else {str(k): float(v) for k, v in dict(choice).items()},
                   None if unchosen is None else str(unchosen))


def bands(quantiles: dict, levels) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """{level: (lower, upper)} read from a quantile dict (levels whose bounds are missing are left out)."""
    out = {}
    for level in check_levels(levels):
        low, high = level_bounds(level)
        if low in quantiles and high in quantiles:
            out[level] = (quantiles[low], quantiles[high])
    return out

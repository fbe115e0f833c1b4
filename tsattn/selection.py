"""``model="auto"``: choose the forecaster for this data on its validation part, as AutoETS and AutoARIMA choose
their form, then forecast with it.

    f = Forecaster("auto", horizon=8).fit(frame)      # CLI: tsattn fit --model auto
    f.choice_                                          # every candidate's validation score; the chosen one marked

Every candidate is fitted through the one fit path (:func:`tsattn.harness.fit_state`) with the same resolved
settings and data: the networks of :data:`AUTO_NETWORKS` (each with the preset the data's shape chooses, and its
final fit when the preset has one), the baselines every run fits (naive, seasonal naive, the linear
autoregression) and, when statsforecast is installed, DynamicOptimizedTheta and AutoETS. Each is scored on the
validation part by the model that never trained on it (a final fit's selection model), on the headline metric
(:func:`tsattn.metrics.headline_metric`: sMAPE for a panel, MASE for one with values of 0 or below, RMSE for one
series); the lowest wins and its fitted state
is the forecaster's. The test part is never read.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .errors import DataError, TooShortError

AUTO = "auto"
AUTO_NETWORKS = ("nbeats", "attention-rnn", "simple-rnn", "patch-transformer")  # the tutorial transformer is left
# out: the slowest and never the best network on M3 (README); it stays a model a user can ask for. patch-transformer:
# on the values before each M3 hold-out (seeds 0, 1) auto scored 13.669 with it against 13.692 without, weighted by
# series (benchmarks/results/auto_pool.md)
AUTO_STATISTICAL = ("dynamic-theta", "ets")  # with statsforecast (tsattn[bench]); naive, seasonal naive and linear
# always. DynamicOptimizedTheta rather than Theta (or both): chosen on validation over M3's 3003 series, the chosen
# candidate's validation sMAPE weighted by series 12.99 against 13.07 with Theta and 13.03 with both (adding it beside
# Theta made the median of the best three purely statistical on quarterly); docs/api.md


STATISTICAL_LEFT_OUT = ("not tried: dynamic-theta and ets (statsforecast is not installed: pip install "
                        "'tsattn[bench]')")


def statistical_candidates() -> tuple:
    from .baselines import statsforecast_installed

    return AUTO_STATISTICAL if statsforecast_installed() else ()


def takes_covariates(name: str, covariates) -> bool:
    """Whether the baseline ``name`` uses every covariate kind the data gives (``covariates``: the windowed data's, or
    None). auto leaves out a statistical candidate that does not: fitted as the model it would refuse them, and the
    user asked for them (naive, seasonal naive and linear are scored beside the first network as references)."""
    from .baselines import BASELINES

    return not BASELINES[name].capabilities.refused_covariates(covariates)


def candidate_config(config, name: str, panel):
    """``config`` (model "auto", settled on ``panel``) for candidate ``name``: the same preset and every setting given
    explicitly, with the preset's model parameters that this model takes (for data of ``panel``'s shape too)."""
    from .config import data_model_settings

    given = {key: getattr(config, key) for key in config.given if key not in ("model", "model_params", "preset")}
    candidate = config.updated(preset=config.preset, model=name, **given) if config.preset not in (None, AUTO) else \
        config.updated(model=name)
    return data_model_settings(dataclasses.replace(candidate, given=list(config.given)), panel)


COMBINED = 3  # the combination candidate: the best three candidates (at most one network) combined
# how they are combined: tsattn.baselines.AUTO_COMBINATIONS (RunConfig.auto_combination)
SINGLE_MARGIN = 0.02  # a single candidate is chosen over the combination only when its validation score is lower by
# more than this fraction of the combination's (0: the lowest score wins); 2% chosen before the M3 hold-outs at two
# origins (benchmarks/results/auto_margin_*.md)
FEW_WINDOWS = 3  # a choice resting on fewer validation windows (forecast origins over all series) is warned about:
# the errors of one window's steps move together, so one or two windows cannot tell the candidates apart


def few_windows_note(windows: int, steps: int) -> str | None:
    """The warning for a choice on fewer than :data:`FEW_WINDOWS` validation windows of ``steps`` steps, else None."""
    if windows >= FEW_WINDOWS:
        return None
    from .checks import counted

    return (f"auto's choice rests on {counted(windows, 'validation window')} of {counted(steps, 'step')}, too few to "
            "tell the candidates apart: validation_windows=2 (--set validation_windows=2) keeps two horizons for "
            "validation and scores every window in them, if the series are long enough; or choose the model yourself")


def combination_members(ranked: list, network: dict) -> list:
    """The members of the combination candidate: the best :data:`COMBINED` of ``ranked`` (candidates, best first)
    with at most one network (``network``: candidate -> whether it is one; an artefact holds one Keras model)."""
    best = []
    for name in ranked:
        if network[name] and any(network[b] for b in best):
            continue
        best.append(name)
        if len(best) == COMBINED:
            break
    return best


def combination_weights(scores) -> list[float]:
    """Weights of the "weighted" combination: each member's inverse validation score, normalised to sum to 1 (a score
    of 0, a perfect validation forecast, takes all the weight; equal weights where no score is finite)."""
    scores = np.asarray(scores, dtype=np.float64)
    if not np.isfinite(scores).any():
        return [1 / len(scores)] * len(scores)
    scores = np.where(np.isfinite(scores), np.maximum(scores, 0.0), np.inf)
    if (scores == 0).any():
        inverse = (scores == 0).astype(np.float64)
    else:
        inverse = 1 / scores
    return [float(w) for w in inverse / inverse.sum()]


def combination_kinds(setting: str) -> tuple:
    """The combinations ``auto_combination`` offers as candidates (:data:`tsattn.baselines.AUTO_COMBINATIONS`):
    "auto" offers the median and the weighted mean, and the lower validation score of the two stands for the
    combination; any other value offers itself alone."""
    return ("weighted", "median") if setting == "auto" else (setting,)


def chosen_by_margin(choice: pd.DataFrame, metric: str, label: str) -> str:
    """The winner of ``choice`` (every candidate's validation score, lowest first, the combination ``label`` among
    them): the lowest, unless it is a single candidate not lower than the combination by more than
    :data:`SINGLE_MARGIN` of the combination's score."""
    winner = str(choice["candidate"].iloc[0])
    combined = float(choice.loc[choice["candidate"] == label, metric].iloc[0])
    if winner != label and np.isfinite(combined) and not choice[metric].iloc[0] <= combined * (1 - SINGLE_MARGIN):
        return label
    return winner


def _validation_score(actual, predicted, series, ids, scale, metric: str) -> float:
    from . import metrics as M

    frame = M.tidy_metrics(actual, {"model": predicted}, series, ids, "validation", scale)
    return float(M.nested_metrics(M.aggregate(frame), "mean")["validation"]["model"][metric])


def fit_auto(config, data, fit_state, progress=None, engine=None, params=None, columns=None):
    """Fit every candidate on ``data``, score each on its validation part and return the winner's fitted state with
    ``choice`` (the table of candidates) set. Besides the single candidates, the best three (at most one network)
    combined are a candidate too (``auto_combination``: their mean weighted by :func:`combination_weights`, the
    default, their median, or with "auto" both, the lower standing for the combination), scored on the same
    validation forecasts; when it wins, the state's estimator is a
    :class:`tsattn.baselines.Combination` of their final fits. ``fit_state`` is :func:`tsattn.harness.fit_state`
    (passed to keep the layers apart)."""
    from . import metrics as M
    from .baselines import Combination, NetworkModel, combine, end_deviation
    from .evaluation import calibrate_forecasts, origins_of, scales_at, score_windows
    from .intervals import series_scale
    from .state import kept_values, tails_of
    if data.count("validation") == 0:
        needed = data.window + 2 * data.horizon if data.split.method != "shuffled" else None
        raise DataError("model auto chooses on the validation part and this data has none; "
                        + (f"give series of at least {needed} values (window {data.window} + 2 x horizon "
                           f"{data.horizon}) and validation above 0" if needed else "set validation above 0"))
    metric = data.headline
    rows, states, members = [], {}, {}  # members: candidate -> (final estimator, selection estimator, forecasts)
    part = None
    statistical = [name for name in statistical_candidates() if takes_covariates(name, data.covariates)]
    for name in (*AUTO_NETWORKS, *statistical):
        candidate = candidate_config(config, name, data.panel)
        if hasattr(progress, "stage"):  # each candidate's epoch lines name it
            progress.stage(f"auto, {name}: ", candidate.epochs)
        state = fit_state(candidate, data, progress, engine, params=params, columns=columns, ends=False)
        states[name] = state
        estimator, baselines = state.selection or (state.estimator, state.baselines)
        scores = score_windows(estimator, baselines, data, state.season, parts=("validation",),
                               mase_scale=state.mase_scale)
        part = scores.forecasts["validation"]
        rows.append({"candidate": name, metric: scores.metrics["validation"]["model"][metric],
                     "seconds": state.fit_seconds})
        members[name] = (state.estimator, estimator, part.predicted)
        if name == AUTO_NETWORKS[0]:  # the always-on baselines, fitted on the training part by the first fit
            final = {b.key: b for b in state.baselines}
            for key, label in (("naive", "naive"), ("seasonal_naive", "seasonal-naive"), ("linear", "linear")):
                if key in scores.metrics["validation"]:
                    rows.append({"candidate": label, metric: scores.metrics["validation"][key][metric], "seconds": 0.0})
                    selected = {b.key: b for b in baselines}[key]
                    members[label] = (final[key], selected, part.baselines[key])
    first = states[AUTO_NETWORKS[0]]
    choice = pd.DataFrame(rows).sort_values(metric, kind="stable", na_position="last").reset_index(drop=True)
    best = combination_members(list(choice["candidate"]),
                               {name: isinstance(members[name][0], NetworkModel) for name in members})
    combinations = {}  # label -> (weights or None for the median, validation forecasts, validation score)
    scored = choice.set_index("candidate")[metric]
    for kind in combination_kinds(config.auto_combination):
        weights = combination_weights([scored[name] for name in best]) if kind == "weighted" else None
        combined = combine([members[name][2] for name in best], weights)
        label = f"median of {', '.join(best)}" if weights is None else \
            "weighted mean of " + ", ".join(f"{name} ({weight:.2f})" for name, weight in zip(best, weights))
        combinations[label] = (weights, combined, _validation_score(part.actual, combined, part.series,
                                                                     data.panel.ids, first.mase_scale, metric))
    label = min(combinations, key=lambda key: np.inf if np.isnan(combinations[key][2]) else combinations[key][2])
    choice = pd.concat([choice, pd.DataFrame([{"candidate": key, metric: score, "seconds": 0.0}
                                              for key, (_, _, score) in combinations.items()])],
                       ignore_index=True).sort_values(metric, kind="stable", na_position="last").reset_index(drop=True)
    winner = chosen_by_margin(choice, metric, label)
    weights, combined, _ = combinations[label]
    choice["chosen"] = choice["candidate"] == winner
    choice.attrs["metric"] = metric
    choice.attrs["margin"] = SINGLE_MARGIN
    # what the choice rests on: validation windows of a horizon (on MASE those of series where it is defined: a series
    # constant before the test part has none, and the mean leaves it out)
    choice.attrs["windows"] = int(M.has_mase(np.asarray(first.mase_scale, dtype=np.float64)[part.series]).sum()) \
        if metric == "mase" else int(len(part.actual))
    choice.attrs["steps"] = int(data.horizon)
    if not statistical_candidates():  # a core install: said, since they are often what auto keeps (README, M3)
        choice.attrs["left_out"] = STATISTICAL_LEFT_OUT
    note = few_windows_note(choice.attrs["windows"], choice.attrs["steps"])
    if note:
        import warnings

        from .errors import user_stacklevel

        warnings.warn(note, UserWarning, stacklevel=user_stacklevel())
    if winner == label:
        network = next((states[name] for name in best if name in states and
                        isinstance(states[name].estimator, NetworkModel)), None)
        trained = {}
        if network is None:  # no network among the members: no training history, epochs or Keras model of its own
            network = first
            trained = {"history": pd.DataFrame(columns=["loss"]), "epochs_run": None, "best_epoch": None}
        final = Combination([members[name][0] for name in best], best, weights, data.floor)
        selected = Combination([members[name][1] for name in best], best, weights, data.floor)
        origins, starts, series = origins_of(data, "validation")
        insample = series_scale(first.mase_scale, data.scaler.scale)
        calibration = calibrate_forecasts(data, part.actual, combined, None, series, insample,
                                          lambda kind: scales_at(data, origins, starts, series, insample,
                                                                 first.season, kind))
        kept = kept_values(data.panel, data.window, final, first.season)
        state = dataclasses.replace(
            network, config=dataclasses.replace(network.config, model=AUTO, model_params={}), estimator=final,
            calibration=calibration, end_deviation=end_deviation(data.panel, first.season, data.horizon, calibration,
                                                                 kept),
            tails=tails_of(data.panel, kept),
            selection=(selected, (first.selection or (None, first.baselines))[1]),
            fit_seconds=sum(s.fit_seconds for s in states.values()),
            params=dict(params) if params is not None else {"model": AUTO, "window": data.window,
                                                            "horizon": data.horizon}, **trained)
    else:
        if winner not in states:  # a baseline fitted as the model, through the same path
            states[winner] = fit_state(candidate_config(config, winner, data.panel), data, progress, engine,
                                       params=params, columns=columns)
        state = states[winner]
        if state.end_deviation is None:  # a candidate's fit left it to auto: the kept state's own
            state = dataclasses.replace(state, end_deviation=end_deviation(
                data.panel, state.season, data.horizon, state.calibration,
                kept_values(data.panel, data.window, state.estimator, state.season)))
    state.choice = choice
    return state


def chosen_candidate(choice: pd.DataFrame) -> str:
    """The candidate auto chose (the row marked ``chosen``; the lowest score unless the margin kept the combination)."""
    return str(choice["candidate"][choice["chosen"].astype(bool)].iloc[0])


def describe_choice(choice: pd.DataFrame) -> str:
    """One line: what auto chose, on which metric, against the best other candidate (and, when the margin kept the
    combination over a lower single candidate, why)."""
    metric = choice.attrs["metric"]  # set by fit_auto and kept by artefacts
    chosen = choice["chosen"].astype(bool)
    first = choice[chosen].iloc[0]
    from .checks import counted
    from .io import metric_label

    # a panel's headline is sMAPE unless it has values of 0 or below: then said (and why MAE, where MASE is undefined)
    why = {"mase": " (not sMAPE: some values are 0 or below)",
           "mae": " (not sMAPE: some values are 0 or below; not MASE: every series is constant)"}.get(metric, "")
    text = f"auto chose {first['candidate']}: validation {metric_label(metric)}{why} {first[metric]:.4g}"
    windows, steps = choice.attrs.get("windows"), choice.attrs.get("steps")
    if windows is not None and steps is not None:  # (choices saved before these were kept lack them)
        text += f" over {counted(windows, 'window')} of {counted(steps, 'step')}"
    if len(choice) > 1:
        second = choice[~chosen].iloc[0]
        if second[metric] < first[metric]:  # the margin rule kept the combination
            margin = choice.attrs.get("margin")
            rule = "the margin rule" if margin is None else f"{float(margin):.0%} of its score"
            text += (f" (kept over {second['candidate']} {second[metric]:.4g}, which was not lower by more than "
                     f"{rule}; {len(choice)} candidates)")
        else:
            text += f" (next: {second['candidate']} {second[metric]:.4g}; {len(choice)} candidates)"
    if choice.attrs.get("left_out"):
        text += f"; {choice.attrs['left_out']}"
    return text


SHORT_FALLBACK = ("theta", "naive")  # a single series too short for a network: Theta (with statsforecast; the
# strongest cheap method on M3's short yearly series, README), else the naive forecast
THETA_MIN_VALUES = 4  # statsforecast's Theta fits on 4 values or more (fewer: NotImplementedError): naive below


SMALLEST_LENGTH_LIMIT = 1_000_000  # the longest series smallest_length tries


def smallest_length(panel, config, window_config, with_test: bool) -> int | None:
    """The fewest values the one series of ``panel`` needs for ``config`` to window it as asked (``window_config``
    accepting it), found on the series repeated to each length tried (doubling, then halving the gap); None when no
    length up to :data:`SMALLEST_LENGTH_LIMIT` is enough. The note of a series too short for a model names it."""
    from .errors import TsattnError
    from .io import describe_index, future_index

    n = int(panel.lengths[0])
    labels = panel.series_index(0)
    described = describe_index(labels)

    def windows(length: int) -> bool:
        positions = np.resize(np.arange(n), length)  # the series again and again, its covariates with it
        try:  # its labels continued as a forecast continues them
            index = labels.append(future_index(described, length - n))
        except DataError:  # timestamps that cannot be continued (irregular): positions stand in for them
            index = pd.RangeIndex(length)
        longer = dataclasses.replace(panel, values=panel.values[positions], index=index,
                                     offsets=np.array([0, length], dtype=np.int64),
                                     exog=None if panel.exog is None else panel.exog[positions])
        try:
            window_config(longer, config, with_test=with_test)
        except TsattnError:
            return False
        return True

    low, high = n, max(n + 1, 2 * n)
    while not windows(high):
        low, high = high, 2 * high
        if high > SMALLEST_LENGTH_LIMIT:
            return None
    while high - low > 1:  # windows(low) is False, windows(high) True
        middle = (low + high) // 2
        low, high = (low, middle) if windows(middle) else (middle, high)
    return high


def short_series_fallback(config, panel, error: TooShortError, window_config, with_test: bool = False):
    """The config that still forecasts one series too short for ``config`` (``error`` said why), and the line
    that says so; ``error`` again where a fallback would hide a choice the user made (a window or lookback given).

    A network (or ``auto``) becomes the best baseline for such data (:data:`SHORT_FALLBACK`; naive where the
    forecast reads fewer than :data:`THETA_MIN_VALUES` values), a baseline stays itself; each is tried with the
    validation part kept (padded windows, so intervals can be calibrated), then fitted on every value before the
    test part if any (no intervals). ``window_config`` is
    :func:`tsattn.config.window_config`; ``with_test``: the last horizon is kept back as test (`tsattn fit`)."""
    if panel.n_series != 1 or config.window is not None or config.lookback is not None:
        raise error
    from .baselines import baseline_learns
    from .checks import counted
    from .state import UNCALIBRATED

    name, n = config.model, int(panel.lengths[0])
    given_holdout = "holdout" in config.given and config.split == "holdout"
    if given_holdout and with_test and config.holdout >= n:  # a test part as long as the series: nothing to fit on
        raise TooShortError(f"holdout={config.holdout} asks for a test part as long as the series or longer (it has "
                            f"{counted(n, 'value')}); give a holdout below {n}, e.g. {max(1, n // 5)}") from error
    if not config.is_baseline:  # Theta where the forecast reads enough values for it
        theta = statistical_candidates() and n - (config.horizon if with_test else 0) >= THETA_MIN_VALUES
        name = SHORT_FALLBACK[0] if theta else SHORT_FALLBACK[1]
    fields = config.fields()  # config.given also names the model parameters given (the baseline takes none)
    given = {key: getattr(config, key) for key in config.given if key in fields
             and key not in ("model", "model_params", "preset", "split", "holdout", "validation_fraction", "pad")}
    unread, dropped = [], {}  # the covariates the fallback baseline cannot read: left out, and the note says so
    if name != config.model:
        from .baselines import BASELINES

        settings = {"hist": ("hist_exog",), "futr": ("futr_exog", "calendar"), "stat": ("stat_exog",)}
        for kind in BASELINES[name].capabilities.refused_covariates(config.covariates()):
            for key in settings[kind]:
                unread += list(getattr(config, key) or ())
                given.pop(key, None)
                dropped[key] = None

    for keep_validation in (True, False):
        # a hold-out the user gave stays (a test part of 1000 values on 120 was made the last value's alone)
        holdout = config.holdout if given_holdout else config.horizon
        split = {} if keep_validation else {"split": "holdout", "holdout": holdout, "validation_fraction": 0.0}
        candidate = config.updated(model=name, pad=True, **given, **split)
        candidate = dataclasses.replace(candidate, preset=None, final_fit=False, **dropped)
        try:
            windowed = window_config(panel, candidate, with_test=with_test)
        except TooShortError as short:
            last = short
            continue
        if name == config.model:
            what = f"{name} is fitted with padded windows"
        else:
            what = f"forecast with the {name} baseline instead of {config.model}"
        validates = not (config.split == "chronological" and config.validation_fraction == 0)
        uses = {(True, True): "train, validate and test", (True, False): "train and validate",
                (False, True): "train and test", (False, False): "train"}[validates, with_test]
        if config.is_baseline and not baseline_learns(name):
            uses = uses.replace("train, ", "").replace("train and ", "")  # it trains on nothing
            uses = "be fitted" if uses == "train" else uses
        values = f"{counted(n - holdout, 'value')} before the test part" if with_test else \
            ("its one value" if n == 1 else f"all {n} values")
        least = smallest_length(panel, config, window_config, with_test)
        needs = f"; it needs at least {least} values" if least else ""
        note = (f"the series has {counted(n, 'value')}, too short for {config.model} to {uses} on "
                f"(horizon {config.horizon}{needs}); {what}"
                + ("" if keep_validation else f", on {values} ({UNCALIBRATED})")
                + (f"; {name} reads no covariates, so {', '.join(unread)} {'is' if len(unread) == 1 else 'are'} not "
                   "used" if unread else ""))
        return candidate, windowed, note
    if name == config.model:
        raise error
    raise TooShortError(f"too short for {config.model} and for the {name} baseline that forecasts series too short "
                        f"for a network: {last}") from error

"""Prediction intervals on hold-out data: are tsattn's 80% and 95% intervals really 80% and 95%?

    pip install 'tsattn[bench]'                 # statsforecast (AutoETS's own intervals)
    python benchmarks/intervals.py              # -> benchmarks/results/intervals.md
    python benchmarks/intervals.py --quick      # 24 M3 series, 2 epochs (run by the tests)
    python benchmarks/intervals.py --datasets m3-monthly --models nbeats --out benchmarks/results/intervals_ensemble.md \
        --set '{"ensemble_lookbacks": [2, 3], "ensemble_losses": ["smape", "mase", "mape"]}'   # the best ensemble

For M3 monthly (1428 series, h = 18, the competition hold-out as test part, the 18 values before it as
validation) and sunspots (one series, one step ahead, chronological 70/10/20 split), each network at its
defaults (MSE) gets split-conformal intervals calibrated on its validation forecasts; a quantile model
(attention-rnn, ``loss=quantile``: the levels' bounds and the median) gives its own, raw and conformalized on
the validation part (conformalized quantile regression, the default for quantile models); the baselines get
conformal intervals too, and statsforecast's AutoETS adds its own intervals (``ets (own)``) on the same test
targets. Every figure is computed by tsattn's metrics on the test part only: coverage (% of targets inside),
mean width, MSIS (M4's scaled interval score) and the scaled CRPS approximated from the quantiles.

Targets (issue 13): M3 monthly conformal 80% and 95% coverage within 3 points of nominal for every network, and
the quantile model's 10-90% band covering 80% within 5 points.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

LEVELS = [50, 80, 95]
MODELS = ("simple-rnn", "attention-rnn", "transformer", "nbeats")
LABELS = {"naive": "naive (conformal)", "seasonal_naive": "seasonal naive (conformal)",
          "linear": "linear AR (conformal)", "ets": "AutoETS (conformal)", "ets_native": "AutoETS (its own intervals)"}


def run(frame, settings: dict, model: str, seed: int, quick: bool, **extra):
    """One fit as `tsattn fit` makes it, at the defaults (preset auto) unless ``settings`` / ``extra`` say more."""
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    keras.backend.clear_session()
    config = RunConfig(model=model, seed=seed, level=LEVELS, **settings, **extra, **({"epochs": 2} if quick else {}))
    start = time.perf_counter()
    result = fit(config, series=frame)
    return result, time.perf_counter() - start


def rescored(result, kind: str | None, scores: str | None = None) -> tuple[dict, str]:
    """The run's metrics with conformal scores measured in another interval scale (``interval_scale``; None: the
    run's own) or of another kind (``interval_scores``, absolute or signed; None: the run's own): the same fitted
    models recalibrated on the same validation forecasts (the fit never reads either setting, so this is what a fit
    with them gives, at no second fit's cost); and, for interval_scale auto, what the model's calibration chose."""
    import dataclasses

    from tsattn.evaluation import score_windows

    if (kind is None or kind == result.data.interval_scale) and \
            (scores is None or scores == result.data.interval_scores):
        return result.metrics, chosen_scale(result.state.calibration)
    state = result.state
    data = dataclasses.replace(result.data, interval_scale=kind or result.data.interval_scale,
                               interval_scores=scores or result.data.interval_scores)
    evaluation = score_windows(state.estimator, state.baselines, data, state.season, levels=LEVELS,
                               mase_scale=state.mase_scale, selection=state.selection)
    return evaluation.metrics, chosen_scale(evaluation.calibration.get("model"))


def chosen_scale(calibration) -> str:
    """What interval_scale auto chose (", chose ets: 0.962 of blend's score on validation"), or ""."""
    choice = getattr(calibration, "scale_choice", None)
    if choice is None:
        return ""
    if not choice:
        return f", {calibration.scale} (no choice: too few windows)"
    ratios = ", ".join(f"{kind} {ratio:.3f}" for kind, ratio in choice.items())
    return f", chose {calibration.scale}; validation score {ratios}"


def rows_of(metrics: dict, label: str, keys) -> list[list]:
    rows = []
    test = metrics["test"]
    for key in keys:
        values = test.get(key, {})
        if "coverage-80" not in values:
            continue
        name = label if key in ("model", "model_native") else LABELS.get(key, key)
        rows.append([name] + [values.get(f"coverage-{level}") for level in LEVELS] +
                    [values.get(f"width-{level}") for level in (80, 95)] +
                    [values.get(f"msis-{level}") for level in (80, 95)] + [values.get("scaled_crps"),
                                                                              values.get("smape"), values.get("mase")])
    return rows


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "intervals.md")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds of the networks")
    parser.add_argument("--datasets", default="m3-monthly,sunspots")
    parser.add_argument("--models", default=",".join(MODELS[:3]) + ",quantile",
                        help="models with conformal intervals (any registered network, or auto), and 'quantile' for "
                             "the quantile model")
    parser.add_argument("--before-holdout", action="store_true",
                        help="cut each panel's competition hold-out off first and measure on the last horizon of what "
                             "is left (validation data: for choosing a default such as validation_windows)")
    parser.add_argument("--origin", type=int, default=1,
                        help="with --before-holdout, measure on the K-th horizon before each hold-out (default 1: the "
                             "last horizon before it; 2: one horizon earlier, data a choice made at 1 has not seen)")
    parser.add_argument("--statistical", default="ets",
                        help="statistical baselines beside the first model ('' for none: with several validation "
                             "windows per series every origin refits them, which takes long)")
    parser.add_argument("--interval-scales", default="",
                        help="comma-separated interval_scale values to score every network fit with (e.g. "
                             "expanding,recent: one fit, recalibrated per scale); default: the fit's own")
    parser.add_argument("--interval-scores", default="",
                        help="comma-separated interval_scores values (absolute, signed) to score every network fit "
                             "with, each with every --interval-scales value; default: the fit's own")
    parser.add_argument("--set", dest="settings", default="{}",
                        help="JSON settings for every network run (e.g. an ensemble: ensemble_lookbacks, ensemble_losses)")
    args = parser.parse_args()
    if args.origin < 1 or (args.origin > 1 and not args.before_holdout):
        parser.error(f"--origin takes 1 or more, and more than 1 only with --before-holdout; got {args.origin}")
    import json

    given = json.loads(args.settings)
    members = 1  # of the last network fitted: an ensemble records its members (lookbacks x losses x seeds)
    seeds = [int(s) for s in args.seeds.split(",")]
    kinds = [k for k in args.interval_scales.split(",") if k] or [None]
    score_kinds = [k for k in args.interval_scores.split(",") if k] or [None]
    from tsattn.intervals import INTERVAL_SCALE_SETTINGS, INTERVAL_SCORES

    if set(kinds) - {None} - set(INTERVAL_SCALE_SETTINGS):
        parser.error(f"--interval-scales takes {', '.join(INTERVAL_SCALE_SETTINGS)}; got {args.interval_scales!r}")
    if set(score_kinds) - {None} - set(INTERVAL_SCORES):
        parser.error(f"--interval-scores takes {', '.join(INTERVAL_SCORES)}; got {args.interval_scores!r}")
    chosen = args.models.split(",")
    models = [m for m in chosen if m != "quantile"]
    from tsattn.specs import list_models

    unknown = sorted(set(models) - set(list_models()) - {"auto"})
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {', '.join(list_models())}, auto, quantile")
    lines = C.header("Prediction intervals: coverage on hold-out data", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    checks = []
    headers = ["model (interval source)"] + [f"coverage {level}%" for level in LEVELS] + \
        ["width 80%", "width 95%", "MSIS 80%", "MSIS 95%", "scaled CRPS", "sMAPE", "MASE"]
    for name in args.datasets.split(","):
        frame, settings = C.dataset_for_run(name, args.quick)
        if args.before_holdout and frame is not None:
            horizon = frame.attrs["horizon"]
            frame = C.without_last(frame, horizon * args.origin)
            frame.attrs["horizon"] = horizon
        rows, coverage, baseline_rows, ets = [], {}, [], {}
        for model in models:
            for seed in seeds:
                baselines = [b for b in args.statistical.split(",") if b] \
                    if model == models[0] and seed == seeds[0] and not (args.quick and frame is None) else []
                result, seconds = run(frame, {**settings, **given}, model, seed, args.quick, baselines=baselines)
                members = len(result.history.attrs.get("members", [None]))
                for kind in kinds:
                    for scores in score_kinds:
                        metrics, choice = rescored(result, kind, scores)
                        scale = (f", {kind} scale" if kind else "") + choice
                        scale += f", {scores} scores" if scores else ""
                        label = f"{model} seed {seed}{f' ensemble of {members} (median)' if members > 1 else ''} " \
                                f"(conformal{scale})"
                        rows += rows_of(metrics, label, ["model"])
                        what = model + (f", {kind} scale" if kind else "") + (f", {scores} scores" if scores else "")
                        coverage.setdefault(what, []).append(metrics["test"]["model"])
                if model == models[0] and seed == seeds[0]:
                    baseline_rows = rows_of(result.metrics, "", [b.key for b in result.baselines] + ["ets_native"])
                    ets = result.metrics["test"].get("ets_native", {})
                print(f"{name} {model} seed {seed}: {seconds:.0f} s", file=sys.stderr)
        for seed in seeds if "quantile" in chosen else []:
            result, seconds = run(frame, settings, "attention-rnn", seed, args.quick, loss="quantile")
            rows += rows_of(result.metrics, f"attention-rnn seed {seed} (quantile loss, raw quantiles)", ["model_native"])
            rows += rows_of(result.metrics, f"attention-rnn seed {seed} (quantile loss, conformalized)", ["model"])
            coverage.setdefault("quantile", []).append(result.metrics["test"]["model_native"])
            coverage.setdefault("cqr", []).append(result.metrics["test"]["model"])
            print(f"{name} attention-rnn quantile seed {seed}: {seconds:.0f} s", file=sys.stderr)
        rows += baseline_rows
        n_series = result.panel.n_series
        part = "test part" + (f", ending {args.origin - 1} horizon(s) before the hold-out" if args.origin > 1 else "")
        lines += [f"## {name} ({n_series} series, {part}, levels {', '.join(map(str, LEVELS))})", ""]
        lines += C.table(headers, rows) + [""]
        variants = [what for what in coverage if what not in ("quantile", "cqr")]
        if len(kinds) * len(score_kinds) > 1 and len(seeds) > 1:  # the variants side by side, mean over seeds
            keys = ["coverage-80", "coverage-95", "msis-80", "msis-95"]
            lines += [f"Mean over seeds {args.seeds}:", ""]
            lines += C.table(["variant", "coverage 80%", "coverage 95%", "MSIS 80%", "MSIS 95%"],
                             [[what] + [round(sum(m[key] for m in coverage[what]) / len(coverage[what]), 3)
                                        for key in keys] for what in variants]) + [""]
        if name == "m3-monthly" and not args.before_holdout:  # issue 36: the default model's intervals (issue 23:
            # the best ensemble's); the targets are on the hold-out, not on the windows before it
            for model in [m for m in coverage if m not in ("quantile", "cqr")]:
                for level, published in ((80, 4.20), (95, 6.83)):
                    worst = max(abs(m[f"coverage-{level}"] - level) for m in coverage[model])
                    msis = max(m[f"msis-{level}"] for m in coverage[model])
                    own = ets.get(f"msis-{level}", float("nan"))
                    what = f"{model} ensemble of {members}" if members > 1 else model
                    checks.append(f"- M3 monthly {what}: conformal {level}% coverage within 2 "
                                  f"points: {'met' if worst <= 2 else 'NOT met'} (largest gap {worst:.1f}); MSIS "
                                  f"{msis:.2f} at or below AutoETS's own intervals in this run ({own:.2f}): "
                                  f"{'met' if msis <= own else 'NOT met'}; at or below the issue's {published}: "
                                  f"{'met' if msis <= published else 'NOT met'}")
            for model in [m for m in coverage if m not in ("quantile", "cqr")]:
                for level in (80, 95):
                    worst = max(abs(m[f"coverage-{level}"] - level) for m in coverage[model])
                    checks.append(f"- M3 monthly {model} conformal {level}% coverage within 3 points of nominal: "
                                  f"{'met' if worst <= 3 else 'NOT met'} (largest gap over seeds {worst:.1f})")
            for key, what in (("quantile", "raw"), ("cqr", "conformalized")):
                if key in coverage:
                    worst = max(abs(m["coverage-80"] - 80) for m in coverage[key])
                    checks.append(f"- M3 monthly quantile model's 10-90% band ({what}) within 5 points of 80%: "
                                  f"{'met' if worst <= 5 else 'NOT met'} (largest gap over seeds {worst:.1f})")
    if checks:
        lines += ["## Targets", ""] + checks + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Does a covariate help? Every network with and without its covariates on real series with drivers, beside
statsforecast's AutoARIMA with the same regressors, and a synthetic panel whose effects are known.

    python benchmarks/covariates.py           # -> benchmarks/results/covariates.md (seeds 0-2)
    python benchmarks/covariates.py --quick   # one model, one seed, 3 epochs, PromoData, 4 of the synthetic panel's series (tests)

Every network is fitted as `tsattn fit --dataset D --horizon H [--futr-exog ...]` fits it (tsattn.harness.fit: the
last H values are the test part, the H before them validation for early stopping, defaults otherwise) and scored on
the hold-out. AutoARIMA is the harness's own statistical baseline of those runs (`--baselines arima`): fitted on each
history before an origin, with the run's future-known covariates as regressors (statsforecast's X / X_future) in the
runs with covariates, and on the target alone in the runs without. The promotion lift of the
synthetic panel is read through tsattn.Forecaster: fitted on the values before the hold-out, it forecasts the
hold-out with its real promotion calendar and with the promotions removed, and the relative lift on the promoted
steps is compared with the true one (also shown: all steps promoted at once, a calendar never seen in training).

    python benchmarks/covariates.py --lift-only --out benchmarks/results/covariates_lift.md
    python benchmarks/covariates.py --models simple-rnn,attention-rnn,nbeats,patch-transformer,tft \
        --lift-models attention-rnn,tft --out benchmarks/results/covariates_attention.md

tft's variable importance is read from each of its fits on the synthetic panel with the promotion (future-known)
and the pure-noise column (past-observed): each one's share of the whole forecast (linear terms plus the network's
remainder split by the selection weights) and its selection weight at the past steps, per seed. Every network's
permutation importance (tsattn.Forecaster.covariate_importance) is read from the same fits on the hold-out windows:
how much the test sMAPE rises when the promotion, or the noise, is shuffled.

    python benchmarks/covariates.py --importance-only --models simple-rnn,attention-rnn,nbeats,patch-transformer,tft \
        --out benchmarks/results/covariates_importance.md

``--set '{"normalise": "auto"}'`` gives every network run (and the lift's Forecaster) those settings.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "attention-rnn", "transformer", "nbeats")
# attention against no attention, with the same covariates (the pairs present among --models are tested)
ATTENTION_PAIRS = (("tft", "nbeats"), ("tft", "simple-rnn"), ("patch-transformer", "nbeats"),
                   ("patch-transformer", "simple-rnn"), ("attention-rnn", "simple-rnn"))
SETTINGS = {}  # --set: settings for every network run
IMPORTANCE = {}  # (model, seed) -> tft's variable importance frame on the synthetic panel with promo and noise
PERMUTATION = {}  # (model, seed) -> tsattn.Forecaster.covariate_importance on that panel's hold-out windows
REPEATS = 10  # shuffles per covariate
REAL = {"promodata": {"futr_exog": ["promo1", "promo2"]},
        "seatbelts": {"futr_exog": ["kms", "petrol_price", "law"]},
        "bjsales": {"futr_exog": ["lead"]}}
QUICK_PANEL = {"n_series": 4}  # quick mode: the synthetic panel's first 4 series (its full-mode figures use all 12)
SYNTHETIC = {"none": {}, "promo (futr)": {"futr_exog": ["promo"]},
             "promo + noise (futr + hist)": {"futr_exog": ["promo"], "hist_exog": ["noise"]},
             "promo + category (futr + static)": {"futr_exog": ["promo"], "stat_exog": ["category"]}}


def smape(actual, forecast) -> float:
    actual, forecast = np.asarray(actual, dtype=float), np.asarray(forecast, dtype=float)
    return float(np.mean(200 * np.abs(actual - forecast) / (np.abs(actual) + np.abs(forecast))))


def network_run(dataset: str, model: str, seed: int, covariates: dict, quick: bool):
    """(test MAE, test sMAPE, per-series test sMAPE, fit seconds, AutoARIMA's (MAE, sMAPE)) of one `tsattn fit`-style
    run; AutoARIMA is the harness's statistical baseline (with the run's future-known covariates as regressors), on the
    real series only (the synthetic panel's tables leave it out: None there, and its twelve series' fits would take
    most of the quick mode's time)."""
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    options = QUICK_PANEL if quick and dataset == "promo-panel" else {}
    frame = __import__("tsattn").load_dataset(dataset, **options)
    # quick mode (the test suite) scores AutoARIMA with the regressors only: its weekly seasonal fits, one per test
    # window, were 42 of the quick mode's 78 s, the half without them the same code path
    arima = dataset != "promo-panel" and (not quick or bool(covariates))
    config = RunConfig(model=model, dataset=dataset, dataset_options=options, horizon=int(frame.attrs["horizon"]), seed=seed,
                       baselines=["arima"] if arima else [], **({"epochs": 3} if quick else {}),
                       **covariates).updated(**SETTINGS)
    started = time.perf_counter()
    result = fit(config)
    seconds = time.perf_counter() - started
    test = result.metrics["test"]
    if model == "tft" and dataset == "promo-panel" and covariates.get("hist_exog"):
        from tsattn.models import selection_names, variable_importance

        data = result.data
        IMPORTANCE[(model, seed)] = variable_importance(result.model, data.X("test"),
                                                        selection_names(data.layout, data.covariates))
    if dataset == "promo-panel" and covariates.get("hist_exog"):  # every network: shuffle each covariate
        import tsattn

        holdout = frame.groupby("unique_id").tail(result.state.lookback + int(frame.attrs["horizon"]))
        PERMUTATION[(model, seed)] = tsattn.Forecaster.from_state(result.state).covariate_importance(
            holdout, repeats=REPEATS, seed=0)
    tidy = result.metrics_frame
    per_series = tidy[(tidy["part"] == "test") & (tidy["model"] == "model") & (tidy["metric"] == "smape")]
    return (test["model"]["mae"], test["model"]["smape"], per_series.set_index("series")["value"], seconds,
            (test["arima"]["mae"], test["arima"]["smape"]) if "arima" in test else None,
            (test["linear"]["mae"], test["linear"]["smape"]) if "linear" in test else None)


def importance_lines(heading: str = "###") -> list[str]:
    """The tables of tft's selection weights (IMPORTANCE) and every network's permutation importance (PERMUTATION),
    each under a ``heading``-level title."""
    lines = []
    if IMPORTANCE:
        lines += [f"{heading} tft's variable importance on the synthetic panel (promo + noise, test windows)", "",
                  "`tsattn.Forecaster.variable_importance`: whole forecast = each input's share of the forecast's "
                  "mean absolute contributions (its exact linear-skip term plus the network's remainder split by its "
                  "selection weight); selection = the mean selection weight at the past steps (what the network beside "
                  "the linear path weighed).", ""]
        rows = []
        for (model, seed), frame in sorted(IMPORTANCE.items()):
            whole = frame[frame["part"] == "model"].set_index("variable")["importance"]
            past = frame[frame["part"] == "past"].set_index("variable")["importance"]
            rows.append([seed, f"{whole['promo']:.3f}", f"{whole['noise']:.3f}", f"{whole['y']:.3f}",
                         "yes" if whole["promo"] > whole["noise"] else "no", f"{past['promo']:.3f}",
                         f"{past['noise']:.3f}", "yes" if past["promo"] > past["noise"] else "no"])
        lines += C.table(["seed", "whole: promo", "whole: noise", "whole: y", "whole: driver above noise",
                          "selection: promo", "selection: noise", "selection: driver above noise"], rows) + [""]
    if PERMUTATION:
        lines += [f"{heading} Permutation importance on the synthetic panel (promo + noise; every network)", "",
                  "`tsattn.Forecaster.covariate_importance` on the hold-out (each series' last window and its 13 "
                  f"targets): the rise of the test sMAPE when the covariate is shuffled over each series' steps, as a "
                  f"share of the sMAPE with it intact, mean of {REPEATS} shuffles.", ""]
        rows = []
        for (model, seed), frame in PERMUTATION.items():
            rise = frame.set_index("variable")["importance"]
            rows.append([model, seed, f"{frame.attrs['baseline']:.2f}", f"{rise['promo']:+.3f}",
                         f"{rise['noise']:+.3f}", "yes" if rise["promo"] > rise["noise"] else "no"])
        lines += C.table(["model", "seed", "test sMAPE intact", "promo shuffled", "noise shuffled",
                          "driver above noise"], rows) + [""]
    return lines


def lift_recovery(seed: int, quick: bool, name: str = "attention-rnn") -> tuple[float, float, float]:
    """(lift on the promoted steps of the real calendar, lift with every step promoted, true lift) of attention-rnn
    with the promotion as a future-known covariate, through tsattn.Forecaster fitted on the values before the
    hold-out. The first forecasts the hold-out with its real promotion calendar and with the promotions removed and
    averages forecast(with) / forecast(without) - 1 over the promoted steps (the issue's "forecast lift on promoted
    steps"); the second promotes all 13 steps at once, a calendar never seen in training (about one week in five is
    promoted), so it reads the network off its data."""
    import tsattn

    frame = tsattn.load_dataset("promo-panel", **(QUICK_PANEL if quick else {}))
    h = int(frame.attrs["horizon"])
    history = frame.groupby("unique_id").head(len(frame) // frame["unique_id"].nunique() - h)
    calendar = frame.groupby("unique_id").tail(h)[["unique_id", "ds", "promo"]]
    model = tsattn.Forecaster(name, horizon=h, futr_exog=["promo"], **({"epochs": 3} if quick else {}), **SETTINGS)
    model.fit(history, seed=seed)
    future = model.make_future_dataframe().merge(calendar, on=["unique_id", "ds"])
    promoted = future["promo"].to_numpy() == 1

    def forecast(promo):
        return model.predict(futr_df=future.assign(promo=promo))[name].to_numpy()

    without = forecast(0.0)
    real = float(np.mean(forecast(future["promo"].to_numpy())[promoted] / without[promoted] - 1))
    return real, float(np.mean(forecast(1.0) / without - 1)), float(frame.attrs["lift"])


def lift_lines(seeds, quick: bool, name: str = "attention-rnn") -> list[str]:
    lifts = np.array([lift_recovery(seed, quick, name) for seed in seeds])
    true = float(lifts[0, 2])
    lines = [f"### Promotion lift recovered ({name} with promo as futr_exog, through tsattn.Forecaster)", "",
             "Lift on the promoted steps of the hold-out's real calendar (forecast with its promotions over the same "
             "forecast with them removed), and, as a stress reading, with all 13 steps promoted at once (a calendar "
             "never seen in training, where about one week in five is promoted).", ""]
    lines += C.table(["seed", "lift on promoted steps (real calendar)", "within 10% of the true lift",
                      "every step promoted", "true lift"],
                     [[seed, f"{real:.3f}", "yes" if abs(real - true) <= 0.1 * true else "no", f"{every:.3f}",
                       f"{true:.3f}"] for seed, (real, every, _) in zip(seeds, lifts)]) + [""]
    return lines + [f"Mean recovered lift on promoted steps {lifts[:, 0].mean():.3f} against {true:.3f} "
                    f"({100 * (lifts[:, 0].mean() - true) / true:+.1f}%); every step promoted: "
                    f"{lifts[:, 1].mean():.3f} ({100 * (lifts[:, 1].mean() - true) / true:+.1f}%).", ""]


def paired_cells(a: pd.Series, b: pd.Series) -> tuple[str, str, float]:
    """("series where a is better" as k/n, the mean difference a - b, Wilcoxon's p over series or NaN where there is
    one series or no difference) for per-series test sMAPE ``a`` and ``b``."""
    from scipy.stats import wilcoxon

    difference = a - b
    p = wilcoxon(a, b).pvalue if len(a) > 1 and (difference != 0).any() else float("nan")
    return f"{int((difference < 0).sum())}/{len(a)}", f"{difference.mean():+.2f}", p


def main() -> None:

    parser = C.parser(__doc__.splitlines()[0], "covariates.md")
    parser.add_argument("--lift-only", action="store_true", help="only the synthetic panel's promotion lift")
    parser.add_argument("--importance-only", action="store_true",
                        help="only the synthetic panel with promo and noise: which covariate each network used")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated networks")
    parser.add_argument("--lift-models", default="attention-rnn", help="comma-separated networks whose promotion "
                                                                      "lift is read")
    parser.add_argument("--set", dest="settings", default="{}", help="JSON settings for every network run")
    args = parser.parse_args()
    SETTINGS.update(json.loads(args.settings))
    seeds = [0] if args.quick else [0, 1, 2]
    lift_models = args.lift_models.split(",")
    if args.lift_only:
        lines = C.header("Covariates: the promotion lift recovered on the synthetic panel", C.command_line(),
                         args.quick)
        C.write(args.out, lines + [line for name in lift_models for line in lift_lines(seeds, args.quick, name)])
        return
    models = tuple(args.models.split(","))[:1] if args.quick else tuple(args.models.split(","))
    if args.importance_only:
        lines = C.header("Covariates: which covariate each network used, on the synthetic panel", C.command_line(),
                         args.quick)
        lines += ["Each network fitted as `tsattn fit --dataset promo-panel --futr-exog promo --hist-exog noise` "
                  "(defaults; the last 13 weeks are the test part). The promotion drives the series (lift 30%); the "
                  "noise column is pure noise.", ""]
        for model in models:
            for seed in seeds:
                network_run("promo-panel", model, seed, SYNTHETIC["promo + noise (futr + hist)"], args.quick)
        C.write(args.out, lines + importance_lines("##"))
        return
    best_with = {}  # dataset -> {model: mean test MAE with the covariates}
    linear_with = {}  # dataset -> the linear baseline's test MAE with the covariates (deterministic: seed 0's run)
    lines = C.header("Covariates: does a covariate help?", C.command_line(), args.quick)
    lines += ["Test part = the published hold-out (PromoData 13 weeks, Seatbelts 12 months, BJsales 12 values; the "
              "synthetic panel 13 weeks). Networks at their defaults, fitted as `tsattn fit --dataset D --horizon H` "
              "with and without `--futr-exog ...`; mean ± std over seeds; AutoARIMA is deterministic.", ""]
    summary = []
    with_series = {}  # (dataset, model) -> per-series test sMAPE with the covariates, averaged over seeds
    real = dict(list(REAL.items())[:1]) if args.quick else REAL  # quick: PromoData only
    for dataset, covariates in real.items():
        rows, arima, linear = [], {}, {}
        for model in models:
            figures = {}
            for variant, settings in (("without", {}), ("with", covariates)):
                runs = [network_run(dataset, model, seed, settings, args.quick) for seed in seeds]
                figures[variant] = runs
                arima["AutoARIMA + regressors (statsforecast, the harness's baseline)" if settings else
                      "AutoARIMA (statsforecast, the harness's baseline)"] = runs[0][4]
                linear[f"linear {variant} covariates (least squares, the harness's baseline)"] = runs[0][5]
                mae = np.array([r[0] for r in runs])
                sm = np.array([r[1] for r in runs])
                rows.append([f"{model} {variant} covariates", f"{mae.mean():.2f} ± {mae.std():.2f}",
                             f"{sm.mean():.2f} ± {sm.std():.2f}", f"{np.mean([r[3] for r in runs]):.1f}"])
            best_with.setdefault(dataset, {})[model] = float(np.mean([r[0] for r in figures["with"]]))
            with_series[(dataset, model)] = pd.concat([r[2] for r in figures["with"]], axis=1).mean(axis=1)
            gain = np.mean([r[1] for r in figures["without"]]) - np.mean([r[1] for r in figures["with"]])
            gain_mae = np.mean([r[0] for r in figures["without"]]) - np.mean([r[0] for r in figures["with"]])
            summary.append([dataset, model, f"{gain_mae:+.2f}", f"{gain:+.2f}",
                            "yes" if gain > 0 and gain_mae > 0 else "no"])
        for label, figures in {**arima, **linear}.items():
            if figures is not None:  # AutoARIMA without the regressors: not run in quick mode
                rows.append([label, f"{figures[0]:.2f}", f"{figures[1]:.2f}", "-"])
        linear_with[dataset] = linear["linear with covariates (least squares, the harness's baseline)"][0]
        lines += [f"## {dataset} ({', '.join(covariates['futr_exog'])} as future-known)", ""]
        lines += C.table(["model", "test MAE", "test sMAPE", "fit s"], rows) + [""]
    lines += ["## Summary: each network's gain from its covariates (without minus with; positive = covariates help)",
              ""]
    lines += C.table(["dataset", "model", "MAE gain", "sMAPE gain", "helps on both"], summary) + [""]
    if "tft" in models and len(models) > 1:
        lines += ["### tft against the best other network with the same covariates (mean test MAE)", ""]
        rows = []
        for dataset, by_model in best_with.items():
            others = {m: v for m, v in by_model.items() if m != "tft"}
            best = min(others, key=others.get)
            linear_mae = linear_with[dataset]
            rows.append([dataset, f"{by_model['tft']:.2f}", f"{best} {others[best]:.2f}",
                         "yes" if by_model["tft"] <= others[best] else "no", f"{linear_mae:.2f}",
                         "yes" if by_model["tft"] <= linear_mae else "no"])
        lines += C.table(["dataset", "tft", "best other network", "tft at or below it", "linear with the covariates",
                          "tft at or below it"], rows) + [""]

    # the synthetic panel: known effects
    rows, per_series = [], {}
    for label, settings in SYNTHETIC.items():
        for model in models:
            runs = [network_run("promo-panel", model, seed, settings, args.quick) for seed in seeds]
            sm = np.array([r[1] for r in runs])
            rows.append([model, label, f"{np.mean([r[0] for r in runs]):.2f}", f"{sm.mean():.2f} ± {sm.std():.2f}"])
            per_series[(model, label)] = pd.concat([r[2] for r in runs], axis=1).mean(axis=1)
            if label == "promo (futr)":
                with_series[("promo-panel", model)] = per_series[(model, label)]
    panel_series = QUICK_PANEL["n_series"] if args.quick else 12  # tsattn.data.promo_panel's default
    lines += [f"## Synthetic panel ({panel_series} weekly series, promotion lift 30%, a pure-noise past covariate, a static "
              "category)", ""]
    lines += C.table(["model", "covariates", "test MAE", "test sMAPE (mean ± std over seeds)"], rows) + [""]
    tests = []
    for model in models:
        for first, second in (("promo + category (futr + static)", "promo (futr)"),
                              ("promo + noise (futr + hist)", "promo (futr)"), ("promo (futr)", "none")):
            a, b = per_series[(model, first)], per_series[(model, second)]
            better, difference, p = paired_cells(a, b)
            tests.append([model, f"{first} vs {second}", better, difference, f"{p:.2g}"])
    lines += ["### Paired over series (per-series test sMAPE averaged over seeds)", ""]
    lines += C.table(["model", "comparison", "series where the first is better", "mean sMAPE difference",
                      "Wilcoxon p"], tests) + [""]
    pairs = [(a, b) for a, b in ATTENTION_PAIRS if a in models and b in models]
    if pairs:
        lines += ["### Does attention help? (the same covariates, per-series test sMAPE averaged over seeds, paired)",
                  "", "Each panel's networks with the same future-known covariates; Wilcoxon signed-rank over series "
                  "(a single series gives no test: its difference alone).", ""]
        rows = []
        for dataset in (*real, "promo-panel"):
            for first, second in pairs:
                a, b = with_series[(dataset, first)], with_series[(dataset, second)]
                better, difference, p = paired_cells(a, b)
                rows.append([dataset, f"{first} vs {second}", better, difference, "-" if np.isnan(p) else f"{p:.2g}"])
        lines += C.table(["dataset", "comparison", "series where the first is better", "mean sMAPE difference",
                          "Wilcoxon p"], rows) + [""]
    lines += importance_lines()
    for name in lift_models:
        lines += lift_lines(seeds, args.quick, name)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

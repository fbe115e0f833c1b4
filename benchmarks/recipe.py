"""The N-BEATS training recipe (issue 23) on M3: every network and nbeats under the recipe beside its defaults, the
variants of the recipe chosen on validation, and ensembles over lookbacks x losses x seeds with each member's
figure beside the ensemble's; Theta, naive and seasonal naive from the same run.

    python benchmarks/recipe.py                                              # -> benchmarks/results/recipe.md
    python benchmarks/recipe.py --frequencies monthly --models nbeats,attention-rnn --seeds 0,1
    python benchmarks/recipe.py --sections variants --frequencies monthly    # only the choice of the recipe
    python benchmarks/recipe.py --quick                                      # 24 series, 2 steps (the tests)

Every run is `tsattn fit --dataset m3-FREQ --horizon H --set ...` with the settings of its row: the competition
hold-out is the test part, the H values before it validation (never used to stop training under the recipe, only
to choose between variants and to calibrate intervals). "recipe" is RECIPE below: no per-series scaling, each
window divided by its largest absolute value (normalise=window), the sMAPE loss, a window of 2 horizons,
training windows cut from the last 20 horizons of each series (10 for "other"), 8 epochs of 100 batches of 1024
windows sampled with replacement, the learning rate halved after each third, gradient norm clipped at 1, no
early stopping, the network forecasting the whole horizon from the window (skip=none, center=none).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RECIPE = {"scaling": "none", "normalise": "window", "loss": "smape", "lookback": 2, "history": 20,
          "sampled_steps": 100, "batch_size": 1024, "epochs": 8, "lr_schedule": "halving", "clipnorm": 1.0,
          "early_stopping": False, "skip": "none", "center": "none"}
HISTORY = {"other": 10}  # N-BEATS' L_H per frequency (20 elsewhere)
# variants of the recipe, each one change, compared on validation (seed by seed) to choose the recipe
VARIANTS = [
    ("recipe", {}),
    ("skip=naive (last value + network)", {"skip": "naive"}),
    ("skip=relative, center=last (tsattn's default head)", {"skip": "relative", "center": "last"}),
    ("loss=mase", {"loss": "mase"}),
    ("every training window (history=None)", {"history": None}),
    ("16 epochs (1,600 steps)", {"epochs": 16}),
    ("lookback 1", {"lookback": 1}),
    ("scaling=minmax, normalise=none (per-series scaling)", {"scaling": "minmax", "normalise": "none"}),
]
ENSEMBLE = {"ensemble_lookbacks": [1, 2], "ensemble_losses": ["smape", "mase", "mape"], "ensemble": 2}
MODELS = ("nbeats", "attention-rnn", "simple-rnn", "transformer")


def run(frame, model: str, settings: dict, quick: bool, baselines=()):
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    keras.backend.clear_session()
    if quick:
        settings = {**settings, "epochs": 1, **({"sampled_steps": 2} if settings.get("sampled_steps") else {})}
    config = RunConfig(model=model, dataset=None, horizon=int(frame.attrs["horizon"]),
                       baselines=list(baselines)).updated(**settings)
    began = time.perf_counter()
    result = fit(config, series=frame)
    return result, time.perf_counter() - began


def smape(result, part: str, key: str = "model") -> float:
    return result.metrics.get(part, {}).get(key, {}).get("smape", float("nan"))


def member_scores(result) -> list[float]:
    """Each ensemble member's test sMAPE, forecast on the same windows as the ensemble."""
    from tsattn.baselines import NetworkModel
    from tsattn.evaluation import score_windows
    from tsattn.models import ensemble_members

    scores = []
    for member in ensemble_members(result.model):
        estimator = NetworkModel(member, result.config.model, result.data.window, result.data.horizon, None)
        scored = score_windows(estimator, [], result.data, result.season, parts=("test",))
        scores.append(scored.metrics["test"]["model"]["smape"])
    return scores


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "recipe.md")
    parser.add_argument("--frequencies", default="monthly,quarterly,yearly,other")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--sections", default="models,variants,ensemble",
                        help="comma-separated: models (defaults vs recipe), variants (choice on validation), ensemble")
    parser.add_argument("--variant-models", default="nbeats", help="the models whose recipe variants are compared")
    parser.add_argument("--ensemble-models", default="nbeats")
    args = parser.parse_args()
    import tsattn

    seeds = [int(s) for s in args.seeds.split(",")]
    sections = set(args.sections.split(","))
    variants, ensemble = VARIANTS, ENSEMBLE
    if args.quick:  # one frequency, one model, two variants, a smaller ensemble: the script runs, nothing more
        args.frequencies, args.models = args.frequencies.split(",")[0], "nbeats"
        variants, ensemble = VARIANTS[:2], {**ENSEMBLE, "ensemble": 1, "ensemble_losses": ["smape", "mase"]}
    lines = C.header("The N-BEATS recipe on M3", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), "", f"RECIPE = `{json.dumps(RECIPE)}`; ensemble: "
              f"`{json.dumps(ENSEMBLE)}` on top of it.", ""]
    for frequency in args.frequencies.split(","):
        frame = tsattn.load_dataset(f"m3-{frequency}")
        if args.quick:
            frame = C.quick_subset(frame)
        recipe = {**RECIPE, "history": HISTORY.get(frequency, RECIPE["history"])}
        reference = None
        lines += [f"## M3 {frequency} ({frame['unique_id'].nunique()} series, h = {frame.attrs['horizon']})", ""]

        def reference_line(result):
            return (f"Same targets: naive {smape(result, 'test', 'naive'):.2f}, seasonal naive "
                    f"{smape(result, 'test', 'seasonal-naive'):.2f}, Theta (statsforecast) "
                    f"{smape(result, 'test', 'theta'):.2f} test sMAPE.")

        if "models" in sections:
            rows = []
            for model in args.models.split(","):
                for label, settings in (("defaults", {}), ("recipe", recipe)):
                    scores = []
                    for seed in seeds:
                        result, seconds = run(frame, model, {**settings, "seed": seed}, args.quick,
                                              baselines=() if reference else ("theta",))
                        reference = reference or reference_line(result)
                        scores.append((smape(result, "validation"), smape(result, "test"), seconds,
                                       result.epochs_run, result.data.window))
                        print(frequency, model, label, seed, scores[-1], file=sys.stderr, flush=True)
                    validation, test, seconds, epochs, window = zip(*scores)
                    spread = f" ± {statistics.stdev(test):.2f}" if len(test) > 1 else ""
                    rows.append([model, label, len(seeds), window[0], f"{statistics.mean(validation):.2f}",
                                 f"{statistics.mean(test):.2f}{spread}", f"{statistics.mean(seconds):.0f}",
                                 f"{statistics.mean(epochs):.0f}"])
            lines += ["### Every model: defaults and the recipe", "", reference, ""]
            lines += C.table(["model", "settings", "seeds", "window", "validation sMAPE", "test sMAPE (mean ± std)",
                              "fit s", "epochs"], rows) + [""]
        if "variants" in sections:
            rows = []
            for model in args.variant_models.split(","):
                for label, change in variants:
                    for seed in seeds:
                        result, seconds = run(frame, model, {**recipe, **change, "seed": seed}, args.quick,
                                              baselines=() if reference else ("theta",))
                        reference = reference or reference_line(result)
                        rows.append([model, label, seed, f"{smape(result, 'validation'):.3f}",
                                     f"{smape(result, 'test'):.3f}", f"{seconds:.0f}"])
                        print(frequency, *rows[-1], file=sys.stderr, flush=True)
            lines += ["### Variants of the recipe (chosen on validation; test shown after the choice)", "", reference,
                      ""]
            lines += C.table(["model", "variant", "seed", "validation sMAPE", "test sMAPE", "fit s"], rows) + [""]
        if "ensemble" in sections:
            rows = []
            for model in args.ensemble_models.split(","):
                settings = {k: v for k, v in recipe.items() if k != "lookback"}
                result, seconds = run(frame, model, {**settings, **ensemble, "seed": seeds[0]}, args.quick,
                                      baselines=() if reference else ("theta",))
                reference = reference or reference_line(result)
                members = member_scores(result)
                rows.append([model, len(members), f"{smape(result, 'validation'):.2f}", f"{smape(result, 'test'):.2f}",
                             f"{min(members):.2f} / {statistics.median(members):.2f} / {max(members):.2f}",
                             f"{seconds:.0f}"])
                print(frequency, *rows[-1], file=sys.stderr, flush=True)
            lines += ["### Ensembles (median over lookbacks x losses x seeds)", "", reference, ""]
            lines += C.table(["model", "members", "validation sMAPE", "test sMAPE", "members' test sMAPE (min / median "
                              "/ max)", "fit s"], rows) + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

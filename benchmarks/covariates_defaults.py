"""The network's start with covariates, chosen on validation: least squares alone, or least squares with the network's
output starting at zero (training then starts exactly at the least-squares forecasts).

    python benchmarks/covariates_defaults.py          # -> benchmarks/results/covariates_defaults.md
    python benchmarks/covariates_defaults.py --quick  # one dataset, 3 epochs (run by the tests)
    python benchmarks/covariates_defaults.py --heads --out benchmarks/results/covariates_nbeats.md
    python benchmarks/covariates_defaults.py --heads --models simple-rnn,attention-rnn,transformer --with-only \
        --out benchmarks/results/covariates_heads.md

``--heads``: nbeats (whose default head is skip=naive, without a linear part for the least-squares start) with each
head (naive, relative, linear), with and without the covariates, seeds 0 and 1 (``--seeds``), to choose its head with
covariates;
``--models`` runs other models the same way (``--with-only``: the runs with covariates only); ``--variants`` compares
other settings than the head (a JSON list of settings, each one variant: model parameters, or run settings such as
``ensemble``), e.g. tft's head and normalisation:

    python benchmarks/covariates_defaults.py --heads --models tft --with-only --variants \
        '[{"skip": "none"}, {"skip": "naive"}, {"skip": "relative"}, {"normalise": "none", "center": "last", "skip": "relative"}]' \
        --out benchmarks/results/covariates_tft.md

Each network is fitted with its covariates as `tsattn fit --dataset D --horizon H --futr-exog ...` fits it (seed 0),
once per start; the choice reads only the validation part (the H values before the hold-out). Test figures are
printed beside for the record, never used to choose.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

SETS = {"promodata": ["promo1", "promo2"], "seatbelts": ["kms", "petrol_price", "law"], "bjsales": ["lead"],
        "promo-panel": ["promo"]}
STARTS = ("least-squares", "least-squares+zero-output")


HEADS = ("naive", "relative", "linear")


def heads_of(args) -> list[tuple]:
    """The variants compared: each head, or the model settings ``--variants`` lists (as sorted tuples)."""
    if not args.variants:
        return [(("skip", head),) for head in HEADS]
    import json

    return [tuple(sorted(variant.items())) for variant in json.loads(args.variants)]


def heads(args) -> list[str]:
    """Each model's head with (and without) covariates, chosen on the validation sMAPE averaged over datasets and
    seeds."""
    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    sets = dict(list(SETS.items())[:1]) if args.quick else SETS
    seeds = (0,) if args.quick else tuple(int(seed) for seed in args.seeds.split(","))
    models = args.models.split(",")
    variants = (("with", True),) if args.with_only else (("without", False),) if args.without_only else \
        (("without", False), ("with", True))
    rows, validation = [], {}
    for model, (dataset, covariates) in itertools.product(models, sets.items()):
        full = tsattn.load_dataset(dataset)
        horizon = int(full.attrs["horizon"])
        frame = None  # --origin K > 1: the hold-out and K - 2 horizons before it cut off; the run's test part scores
        if args.origin > 1:
            frame = C.without_last(full[["unique_id", "ds", "y", *covariates]], horizon * (args.origin - 1))
        for head in heads_of(args):
            for label, given in variants:
                extra = {"futr_exog": covariates} if given else {}
                values, tests = [], []
                for seed in seeds:  # updated(): run settings (e.g. ensemble) to the run, the rest to the model
                    config = RunConfig(model=model, dataset=dataset if frame is None else None, horizon=horizon,
                                       seed=seed, validation_windows=args.validation_windows, **extra,
                                       **({"epochs": 3} if args.quick else {})).updated(**dict(head))
                    result = fit(config) if frame is None else fit(config, series=frame)
                    values.append(result.metrics["validation" if frame is None else "test"]["model"]["smape"])
                    tests.append(result.metrics["test"]["model"]["smape"] if frame is None else result.best_epoch)
                name = (", ".join(f"{k}={v}" for k, v in head) or "defaults") if args.variants else dict(head)["skip"]
                validation.setdefault((model, label), {}).setdefault(name, []).append(float(np.mean(values)))
                rows.append(([model] if len(models) > 1 else []) +
                            [dataset, label, name, f"{np.mean(values):.2f}",
                             f"{np.mean(tests):.2f}" if frame is None else " ".join(map(str, tests))])
    title = f"{models[0]}'s head" if len(models) == 1 else "each model's head"
    lines = C.header(f"Covariates: {title}, chosen on validation", C.command_line(), args.quick)
    windows, part = "", "the validation part"
    if args.origin > 1:
        which = "the last horizon" if args.origin == 2 else f"the {args.origin - 1}th horizon"
        part = (f"{which} before the hold-out (the values after it cut off, so it is the run's test part; early "
                "stopping reads the run's validation part before it)")
    elif args.validation_windows > 1:
        windows = f" (with validation_windows={args.validation_windows})"
        part += (f": the last {args.validation_windows} horizons before the hold-out, forecast from every step where a "
                 "whole horizon fits (rolling windows one step apart)")
    lines += [f"Fitted as `tsattn fit --model M --dataset D --horizon H [--futr-exog ...] --set skip=HEAD` fits it"
              f"{windows}, seeds {', '.join(map(str, seeds))} (means); the choice reads only {part}.", ""]
    lines += C.table((["model"] if len(models) > 1 else []) +
                     ["dataset", "covariates", "settings" if args.variants else "skip",
                      "selection sMAPE" if args.origin > 1 else "validation sMAPE",
                      "test sMAPE (not used)" if args.origin == 1 else "best epoch per seed"], rows) + [""]
    for (model, label), by_head in validation.items():
        means = {head: float(np.mean(v)) for head, v in by_head.items()}
        lines.append(f"- {model}, {label} covariates, mean {'selection' if args.origin > 1 else 'validation'} sMAPE "
                     "over datasets: " +
                     ", ".join(f"{head} {value:.2f}" for head, value in means.items()) +
                     f"; best: **{min(means, key=means.get)}**")
    return lines + [""]


def main() -> None:
    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    parser = C.parser(__doc__.splitlines()[0], "covariates_defaults.md")
    parser.add_argument("--heads", action="store_true", help="a model's head with and without covariates")
    parser.add_argument("--models", default="nbeats", help="--heads: comma-separated models (default nbeats)")
    only = parser.add_mutually_exclusive_group()  # both together would silently mean --with-only
    only.add_argument("--with-only", action="store_true", help="--heads: only the runs with covariates")
    only.add_argument("--without-only", action="store_true", help="--heads: only the runs without covariates")
    parser.add_argument("--variants", default="", help="--heads: a JSON list of settings (model parameters or run "
                                                       "settings) to compare instead of the heads")
    parser.add_argument("--validation-windows", type=int, default=1,
                        help="--heads: score each variant on this many horizons before the hold-out (default 1)")
    parser.add_argument("--origin", type=int, default=1,
                        help="--heads: K > 1 scores each variant on the K-1-th horizon before the hold-out, fitted on "
                             "the values before it (so early stopping never reads the scored part; default 1)")
    parser.add_argument("--seeds", default="0,1", help="--heads: comma-separated seeds, means over them (default 0,1)")
    args = parser.parse_args()
    if args.heads:
        C.write(args.out, heads(args))
        return
    sets = dict(list(SETS.items())[:1]) if args.quick else SETS
    models = ("simple-rnn",) if args.quick else ("simple-rnn", "attention-rnn")
    rows, validation = [], {start: [] for start in STARTS}
    for dataset, covariates in sets.items():
        horizon = int(tsattn.load_dataset(dataset).attrs["horizon"])
        for model in models:
            for start in STARTS:
                result = fit(RunConfig(model=model, dataset=dataset, horizon=horizon, seed=0, futr_exog=covariates,
                                       skip_init=start, **({"epochs": 3} if args.quick else {})))
                value = result.metrics["validation"]["model"]["smape"]
                validation[start].append(value)
                rows.append([dataset, model, start, f"{value:.2f}", f"{result.metrics['test']['model']['smape']:.2f}",
                             result.best_epoch])
    means = {start: float(np.mean(values)) for start, values in validation.items()}
    wins = sum(a > b for a, b in zip(validation[STARTS[0]], validation[STARTS[1]]))
    chosen = min(means, key=means.get)
    lines = C.header("Covariates: the network's start, chosen on validation", C.command_line(), args.quick)
    lines += C.table(["dataset", "model", "skip_init", "validation sMAPE", "test sMAPE (not used)", "best epoch"], rows)
    lines += ["", f"Mean validation sMAPE: " + ", ".join(f"{start} {value:.2f}" for start, value in means.items()) +
              f"; the zero-output start is better on {wins} of {len(validation[STARTS[0]])} fits.", "",
              f"Chosen (skip_init=auto with covariates): **{chosen}**.", ""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

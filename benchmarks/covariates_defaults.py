"""The network's start with covariates, chosen on validation: least squares alone, or least squares with the network's
output starting at zero (training then starts exactly at the least-squares forecasts).

    python benchmarks/covariates_defaults.py          # -> benchmarks/results/covariates_defaults.md
    python benchmarks/covariates_defaults.py --quick  # one dataset, 3 epochs (run by the tests)

Each network is fitted with its covariates as `tsattn fit --dataset D --horizon H --futr-exog ...` fits it (seed 0),
once per start; the choice reads only the validation part (the H values before the hold-out). Test figures are
printed beside for the record, never used to choose.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

SETS = {"promodata": ["promo1", "promo2"], "seatbelts": ["kms", "petrol_price", "law"], "bjsales": ["lead"],
        "promo-panel": ["promo"]}
STARTS = ("least-squares", "least-squares+zero-output")


def main() -> None:
    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    args = C.parser(__doc__.splitlines()[0], "covariates_defaults.md").parse_args()
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

"""Tuned against default settings: `tsattn tune` on validation only, the refit scored once on the test part.

    python benchmarks/tuning.py                       # -> benchmarks/results/tuning.md (sunspots, 2 networks)
    python benchmarks/tuning.py --quick               # 2 trials of 3 epochs (run by the tests)
    python benchmarks/tuning.py --dataset m3-monthly --horizon 18 --trials 30 --timeout 3600

Each model is searched with its default space (tsattn models --json) by Optuna's TPE sampler with median pruning,
scored on validation windows of the values before the test part; the best settings and the defaults are then
refitted as `tsattn fit` fits them and scored once on the test part, beside the linear autoregression of the same
window (AR(24) on sunspots at the defaults).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def main() -> None:
    from tsattn.tuning import tune

    parser = C.parser(__doc__.splitlines()[0], "tuning.md")
    parser.add_argument("--dataset", default="sunspots")
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--models", default="attention-rnn,transformer")
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per model")
    args = parser.parse_args()
    models = args.models.split(",")[:1] if args.quick else args.models.split(",")
    settings = {"epochs": 3} if args.quick else {}
    if args.horizon:
        settings["horizon"] = args.horizon
    trials = 2 if args.quick else args.trials
    lines = C.header(f"Tuning on {args.dataset}: tuned against default settings", C.command_line(), args.quick)
    rows, found = [], []
    for model in models:
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            result = tune(model, dataset=args.dataset, trials=trials, timeout=args.timeout, settings=settings,
                          out=Path(scratch) / "search", echo=lambda line: print(line, file=sys.stderr, flush=True))
            minutes = (time.perf_counter() - started) / 60
        metric = result.metric
        counts = result.trials["state"].value_counts().to_dict()
        for label in ("defaults", "tuned"):
            figures = result.test[label]
            rows.append([model, label, f"{figures['validation'][metric]:.4g}", f"{figures['test'][metric]:.4g}",
                         f"{figures['test']['smape']:.4g}", f"{figures['test']['mase']:.4g}", figures["epochs_run"]])
        linear = result.test["defaults"]["linear"]
        rows.append([model, "linear AR (the defaults' window)", "-", f"{linear[metric]:.4g}", f"{linear['smape']:.4g}",
                     f"{linear['mase']:.4g}", "-"])
        found.append(f"- {model}: {sum(counts.values())} trials ({', '.join(f'{v} {k.lower()}' for k, v in counts.items())}) "
                     f"in {minutes:.1f} min; best validation {metric} {result.best_value:.4g} (the refit's "
                     f"validation figure differs: it is scored on the validation part of the full series); settings: "
                     + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in result.best_settings.items()))
    lines += [f"Validation metric: {metric} (RMSE for one series, sMAPE for a panel); the test part was cut off "
              "before the search.", ""]
    lines += C.table(["model", "settings", f"validation {metric} (refit)", f"test {metric}", "test sMAPE", "test MASE",
                      "epochs"], rows) + ["", "## Settings found", ""] + found + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Tuned against default settings: `tsattn tune` on validation only, the refit scored once on the test part.

    python benchmarks/tuning.py                       # -> benchmarks/results/tuning.md (sunspots, 2 networks)
    python benchmarks/tuning.py --quick               # 2 trials of 3 epochs (run by the tests)
    python benchmarks/tuning.py --dataset m3-monthly --horizon 18 --trials 300 --timeout 2100 --jobs 2 \
        --set preset=nbeats-recipe --set pad=true --set baselines='["theta"]' \
        --space '{"batch_size": [256, 512, 1024], "sampled_steps": {"int": [50, 200], "log": true}}'

Each model is searched with its default space (tsattn models --json) by Optuna's TPE sampler with median pruning,
scored on validation windows of the values before the test part; the best settings and the defaults are then
refitted as `tsattn fit` fits them and scored once on the test part, beside the baselines of the same run (the
linear autoregression of the defaults' window, AR(24) on sunspots; naive; Theta when asked with --set baselines=...).
A trial whose window leaves short series out fails (its score would cover fewer series), so a panel of short series
is searched with pad=true.
"""

from __future__ import annotations

import json
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
    parser.add_argument("--jobs", type=int, default=1, help="trials at once (local processes)")
    parser.add_argument("--windows", type=int, default=None, help="rolling validation windows per series (tune's "
                                                                   "windows; default: the fit's own validation part)")
    parser.add_argument("--step", type=int, default=None, help="values between validation windows (default: horizon)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a fixed setting of every trial and of the defaults' refit (a JSON value or a word), "
                             "e.g. preset=nbeats-recipe or baselines='[\"theta\"]'")
    parser.add_argument("--space", help="search dimensions overriding the models' spaces, as JSON "
                                        "(e.g. '{\"batch_size\": [256, 512, 1024]}')")
    args = parser.parse_args()
    models = args.models.split(",")[:1] if args.quick else args.models.split(",")
    settings = {"epochs": 3} if args.quick else {}
    for item in args.settings:
        key, _, text = item.partition("=")
        try:
            settings[key] = json.loads(text)
        except json.JSONDecodeError:
            settings[key] = text
    if args.horizon:
        settings["horizon"] = args.horizon
    trials = 2 if args.quick else args.trials
    lines = C.header(f"Tuning on {args.dataset}: tuned against default settings", C.command_line(), args.quick)
    rows, found = [], []
    for model in models:
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            result = tune(model, dataset=args.dataset, trials=trials, timeout=args.timeout, settings=settings,
                          out=Path(scratch) / "search", jobs=args.jobs, windows=args.windows, step=args.step,
                          space=json.loads(args.space) if args.space else None,
                          echo=lambda line: print(line, file=sys.stderr, flush=True))
            minutes = (time.perf_counter() - started) / 60
        metric = result.metric
        counts = result.trials["state"].value_counts().to_dict()
        for label in ("defaults", "tuned"):
            figures = result.test[label]
            rows.append([model, label, f"{figures['validation'][metric]:.4g}", f"{figures['test'][metric]:.4g}",
                         f"{figures['test']['smape']:.4g}", f"{figures['test']['mase']:.4g}", figures["epochs_run"],
                         figures["series"]])
        for name, values in result.test["defaults"]["baselines"].items():
            if not isinstance(values, dict) or any(values.get(key) is None for key in (metric, "smape", "mase")):
                continue  # not a baseline's forecast ("scaled": the model's errors on the scaled values)
            label = "linear AR (the defaults' window)" if name == "linear" else name
            rows.append([model, label, "-", f"{values[metric]:.4g}", f"{values['smape']:.4g}", f"{values['mase']:.4g}",
                         "-", result.test["defaults"]["series"]])
        gap = result.test["tuned"]["test"][metric] - result.best_value
        found.append(f"- {model}: {sum(counts.values())} trials ({', '.join(f'{v} {k.lower()}' for k, v in counts.items())}) "
                     f"in {minutes:.1f} min ({args.jobs} at once); best validation {metric} {result.best_value:.4g}, "
                     f"the refit's test {metric} {result.test['tuned']['test'][metric]:.4g} (validation-to-test gap "
                     f"{gap:+.3g}); settings: "
                     + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in result.best_settings.items()))
    validation = ("the fit's own validation part" if not args.windows else
                  f"{args.windows} rolling windows per series, {args.step or 'one horizon'} apart, one fit per trial")
    lines += [f"Validation metric: {metric} (RMSE for one series, sMAPE for a panel) on {validation}; the test part "
              "was cut off before the search.", ""]
    lines += C.table(["model", "settings", f"validation {metric} (refit)", f"test {metric}", "test sMAPE", "test MASE",
                      "epochs", "series scored"], rows) + ["", "## Settings found", ""] + found + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

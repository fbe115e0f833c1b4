"""The final fit (``final_fit``) against the model fitted on the training part only, on validation data only.

    python benchmarks/final_fit.py            # -> benchmarks/results/final_fit.md
    python benchmarks/final_fit.py --quick    # two small cases, 2 epochs / 2 sampled steps

With ``final_fit=true`` the validation part still chooses the epochs (early stopping) and calibrates
the intervals, then the model is trained again on the training and validation values with those choices, so its
forecasts start from the most recent values (NeuralForecast's and the N-BEATS authors' practice); ``false`` keeps the
model fitted on the training part only. Every case is scored on values before the test part the README reports: for
a panel with a competition horizon H (M3) the last H values of every series are cut off first and the last H of what
is left are scored; for sunspots the last 20% (its test part) are cut off and the run's own test part of what is
left is scored. Each case runs the preset the defaults choose for its shape (classic: one series or a few; the N-BEATS
recipe: 40 series or more with h >= 2), so the comparison is per preset. Panels: mean sMAPE over series, and the
share of series where the final fit is better with a Wilcoxon signed-rank p-value (paired by series).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

CANDIDATES = {"final fit": {"final_fit": True}, "training part only": {"final_fit": False}}
# (label, dataset, number of series kept or None for all, models, seeds)
CASES = (
    ("sunspots (one series, h = 1; classic)", "sunspots", None, "simple-rnn,attention-rnn,transformer,nbeats", "0,1,2"),
    ("M3 monthly, the longest series alone (classic)", "m3-monthly", 1, "simple-rnn,attention-rnn,nbeats", "0,1,2"),
    ("M3 yearly, 10 series (classic)", "m3-yearly", 10, "simple-rnn,attention-rnn,nbeats", "0,1,2"),
    ("M3 yearly, all 645 series (recipe)", "m3-yearly", None, "nbeats,attention-rnn", "0"),
    ("M3 quarterly, all 756 series (recipe)", "m3-quarterly", None, "nbeats,attention-rnn", "0"),
    ("M3 other, all 174 series (recipe)", "m3-other", None, "nbeats,attention-rnn", "0"),
    ("M3 monthly, all 1428 series (recipe)", "m3-monthly", None, "nbeats,attention-rnn", "0"),
)
QUICK_CASES = (("M3 yearly, 10 series (classic)", "m3-yearly", 10, "simple-rnn", "0"),
               ("sunspots (one series, h = 1; classic)", "sunspots", None, "simple-rnn", "0"))


def selection_frame(name: str, count: int | None):
    """(the frame before its test part, horizon): M3 without its hold-out; sunspots without its last 20%."""
    import tsattn

    if name == "sunspots":
        frame = tsattn.load_dataset("sunspots")
        return frame.iloc[:int(round(len(frame) * 0.8))].copy(), 1
    return C.before_holdout(name, count)


def score(frame, horizon: int, model: str, settings: dict, seed: int, quick: bool):
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    keras.backend.clear_session()
    config = RunConfig(model=model, seed=seed, dataset=None, horizon=horizon).updated(**settings)
    if quick:
        config = config.updated(epochs=2, sampled_steps=2)
    start = time.perf_counter()
    result = fit(config, series=frame)
    metric = "rmse" if result.panel.n_series == 1 else "smape"
    per_series = result.metrics_frame.query("part == 'test' and model == 'model' and metric == @metric")
    return {"value": result.metrics["test"]["model"][metric], "naive": result.metrics["test"]["naive"][metric],
            "metric": metric, "preset": result.state.config.preset, "series": result.panel.n_series,
            "per_series": per_series.set_index("series")["value"], "seconds": time.perf_counter() - start}


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "final_fit.md")
    p.add_argument("--cases", default="", help="labels of the cases to run (substrings separated by semicolons)")
    args = p.parse_args()
    import numpy as np
    from scipy.stats import wilcoxon

    cases = QUICK_CASES if args.quick else CASES
    if args.cases:
        cases = [case for case in cases if any(part.strip() in case[0] for part in args.cases.split(";"))]
    lines = C.header("The final fit on training + validation values, chosen on validation data", C.command_line(),
                     args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    verdicts = []
    for label, name, count, models, seeds in cases:
        frame, horizon = selection_frame(name, count)
        rows = []
        for model in models.split(","):
            found = {}
            for candidate, settings in CANDIDATES.items():
                found[candidate] = []
                for seed in (int(s) for s in seeds.split(",")):
                    print(f"[final_fit] {label} {model} {candidate} seed {seed}", file=sys.stderr, flush=True)
                    found[candidate].append(score(frame, horizon, model, settings, seed, args.quick))
            final, only = found["final fit"], found["training part only"]
            means = {c: float(np.mean([v["value"] for v in found[c]])) for c in found}
            paired = ""
            if final[0]["series"] > 1:
                a = np.concatenate([v["per_series"].to_numpy() for v in final])
                b = np.concatenate([v["per_series"].reindex(w["per_series"].index).to_numpy()
                                    for v, w in zip(only, final)])
                keep = np.isfinite(a) & np.isfinite(b)
                p_value = wilcoxon(a[keep], b[keep]).pvalue if (a[keep] != b[keep]).any() else 1.0
                paired = f"{np.mean(a[keep] < b[keep]):.0%} of series, p = {p_value:.2g}"
            better = min(means, key=means.get)
            verdicts.append((label, model, final[0]["preset"], better))
            rows.append([model, final[0]["preset"], str(final[0]["series"]), final[0]["metric"],
                         f"{means['final fit']:.3f}", " / ".join(f"{v['value']:.3f}" for v in final),
                         f"{means['training part only']:.3f}", " / ".join(f"{v['value']:.3f}" for v in only),
                         f"{final[0]['naive']:.3f}", paired or "one series",
                         f"{np.mean([v['seconds'] for v in final]):.0f} / {np.mean([v['seconds'] for v in only]):.0f}",
                         better])
        lines += [f"## {label}", "",
                  *C.table(["model", "preset", "series", "metric", "final fit (mean)", "per seed",
                            "training part only (mean)", "per seed", "naive", "final fit better on", "fit s",
                            "lower"], rows), ""]
        C.write(args.out, lines)  # after every case: a long run keeps what it measured
    by_preset = {}
    for _, _, preset, better in verdicts:
        by_preset.setdefault(preset, []).append(better == "final fit")
    lines += ["## Per preset", "", *C.table(["preset", "cases x models where the final fit is lower"],
                                           [[p, f"{sum(v)} of {len(v)}"] for p, v in by_preset.items()]), ""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

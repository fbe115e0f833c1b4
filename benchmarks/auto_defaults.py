"""Choosing the defaults from the shape of the data: tsattn's classic settings against N-BEATS' recipe, on
validation data only (the values before each hold-out).

    python benchmarks/auto_defaults.py            # -> benchmarks/results/auto_defaults.md
    python benchmarks/auto_defaults.py --quick    # one small case, 2 epochs / 2 sampled steps
    python benchmarks/auto_defaults.py --cases "all 645" --out benchmarks/results/max_passes.md \
        --candidates '{"recipe": {"preset": "nbeats-recipe", "pad": true}, "recipe, at most 20 passes": {...}}'
    python benchmarks/auto_defaults.py --models auto --candidates '{"pool": {"auto_networks": ["nbeats"]}}'
    python benchmarks/auto_defaults.py --models auto --candidates '{"lowest": {}, "margin 2%": {"auto_margin": 0.02}}'

For a panel with a competition horizon H (M3, M1), the last H values of every series (the hold-out, the test part of
benchmarks/m3.py) are cut off first; on what is left, the last H values are this script's "selection" part, and
every candidate is scored there. For sunspots (one long series) the candidates are scored on its validation part
(the 10% before the test years). So the rule that picks the defaults from the data's shape (number of series,
horizon, length) is chosen on data that lies before every figure the README reports as test.

Candidates: "classic" is the settings tsattn used before the rule (per-series min-max scaling, epochs over every
training window with early stopping on the validation part, an automatic window); "recipe" is the `nbeats-recipe`
preset with `pad=true` (each window over its largest value, the sMAPE loss, a window of 2 horizons from the last
20 horizons of each series, 400 sampled batches of 1024 windows (800 before 4e25c6f; fewer where that would draw
each training window more than 20 times: max_passes, added after the classic/recipe comparison), the rate halved in
thirds; short series padded so every series is forecast).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

CANDIDATES = {"classic": {"preset": "classic"}, "recipe": {"preset": "nbeats-recipe", "pad": True}}
# (label, dataset, number of series kept or None for all; evenly spaced over the panel's series)
CASES = (
    ("M3 monthly, 10 series", "m3-monthly", 10),
    ("M3 yearly, 10 series", "m3-yearly", 10),
    ("M3 monthly, the longest series alone", "m3-monthly", 1),
    ("sunspots (one series of 2820, h = 1)", "sunspots", None),
    ("M3 monthly, 40 series", "m3-monthly", 40),
    ("M3 yearly, 40 series", "m3-yearly", 40),
    ("M3 monthly, all 1428 series", "m3-monthly", None),
    ("M3 quarterly, all 756 series", "m3-quarterly", None),
    ("M3 yearly, all 645 series", "m3-yearly", None),
    ("M3 other, all 174 series", "m3-other", None),
    ("M1 monthly, all 617 series", "m1-monthly", None),
    ("M1 yearly, all 181 series", "m1-yearly", None),
    ("Tourism yearly, all 518 series", "tourism-yearly", None),
)
CHOICE_ONLY = ("auto_combination",)  # settings of auto's choice alone: its candidates' fits are the same with any
# value, so they are shared across them
# quick mode (the test suite): one small panel (the script runs; a second case was the same code over again, 20 s)
QUICK_CASES = (("M3 yearly, 10 series", "m3-yearly", 10),)


def selection_frame(name: str, count: int | None, quick: bool, origin: int = 1):
    """(frame without its hold-out, horizon), or (None, 1) for sunspots (scored on its own validation part); with
    ``origin`` K the selection part is the K-th horizon before the hold-out (:func:`_common.before_holdout`)."""
    if name == "sunspots":
        return None, 1
    return C.before_holdout(name, count, origin)


_FITTED: dict = {}  # model auto: {(case, seed, settings): {candidate: fitted state}} for the case being run


def score(frame, horizon: int, model: str, settings: dict, seed: int, quick: bool) -> dict:
    import json

    import keras

    from tsattn import harness, selection
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    settings = dict(settings)
    swaps = {"auto_networks": "AUTO_NETWORKS", "auto_margin": "SINGLE_MARGIN"}  # model auto: its pool and its rule
    given = {key: settings.pop(key) for key in list(settings) if key in swaps}
    fitted_with = {k: v for k, v in settings.items() if k not in CHOICE_ONLY}
    key = (id(frame), horizon, seed, quick, json.dumps(fitted_with, sort_keys=True))
    if model != "auto" or key not in _FITTED:  # a new fit (a new case: nothing of the last one is kept)
        if model != "auto" or any(k[:2] != key[:2] for k in _FITTED):
            _FITTED.clear()
        keras.backend.clear_session()
    fitted = _FITTED.setdefault(key, {}) if model == "auto" else {}
    if given:
        real = {name: getattr(selection, swaps[name]) for name in given}
        for name, value in given.items():
            setattr(selection, swaps[name], tuple(value) if name == "auto_networks" else float(value))
        try:
            return score(frame, horizon, model, settings, seed, quick)
        finally:
            for name, value in real.items():
                setattr(selection, swaps[name], value)
    if model == "auto":  # each candidate is fitted once per (case, seed, settings): rules choose among the same fits
        real_fit_auto = harness.fit_auto

        def fit_auto(config, data, fit_state, *args, **kwargs):
            return real_fit_auto(config, data, C.fit_each_once(fit_state, fitted), *args, **kwargs)

        harness.fit_auto = fit_auto
        try:
            return _score(frame, horizon, model, settings, seed, quick, RunConfig, fit)
        finally:
            harness.fit_auto = real_fit_auto
    return _score(frame, horizon, model, settings, seed, quick, RunConfig, fit)


def _score(frame, horizon, model, settings, seed, quick, RunConfig, fit) -> dict:
    config = RunConfig(model=model, seed=seed).updated(**settings)
    config = config.updated(**({"dataset": "sunspots"} if frame is None else {"dataset": None, "horizon": horizon}))
    if quick:
        config = config.updated(epochs=2, **({"sampled_steps": 2} if config.sampled_steps else {}))
    start = time.perf_counter()
    result = fit(config, series=frame)
    part = "validation" if frame is None else "test"  # sunspots: its validation part; panels: the selection part
    metric = "rmse" if frame is None else "smape"
    scores = result.metrics[part]
    from tsattn.selection import chosen_candidate

    return {"value": scores["model"][metric], "naive": scores["naive"][metric], "metric": metric,
            "series": result.panel.n_series, "window": result.data.window, "seconds": time.perf_counter() - start,
            "chosen": None if result.state.choice is None else chosen_candidate(result.state.choice)}


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "auto_defaults.md")
    p.add_argument("--models", default=None, help="default: every model (--quick: simple-rnn, nbeats)")
    p.add_argument("--seeds", default="0")
    p.add_argument("--cases", default="", help="labels of the cases to run (substrings separated by semicolons); all "
                                                "by default")
    p.add_argument("--candidates", default=None,
                   help='JSON {label: settings} in place of classic and recipe (for model auto, "auto_networks": the '
                        'networks it chooses among)')
    p.add_argument("--origin", type=int, default=1, help="score on the K-th horizon before each hold-out (default 1: "
                                                          "the last horizon before it; panels only)")
    args = p.parse_args()
    if args.origin < 1:
        p.error(f"--origin must be 1 or more (the K-th horizon before each hold-out), not {args.origin}")
    import json

    candidates = json.loads(args.candidates) if args.candidates else CANDIDATES
    seeds = [int(s) for s in args.seeds.split(",")]
    models = [m.strip() for m in (args.models or ("simple-rnn,nbeats" if args.quick else
                                                    "simple-rnn,attention-rnn,transformer,nbeats")).split(",")]
    cases = QUICK_CASES if args.quick else CASES
    if args.cases:
        cases = [case for case in cases if any(part.strip() in case[0] for part in args.cases.split(";"))]
    lines = C.header("Choosing the defaults from the shape of the data (validation data only)", C.command_line(),
                     args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    for label, name, count in cases:
        frame, horizon = selection_frame(name, count, args.quick, args.origin)
        rows = []
        for model in models:
            found = {}
            for candidate, settings in candidates.items():
                values = []
                for seed in seeds:
                    print(f"[auto] {label} {model} {candidate} seed {seed}", file=sys.stderr, flush=True)
                    values.append(score(frame, horizon, model, settings, seed, args.quick))
                found[candidate] = values
                mean = sum(v["value"] for v in values) / len(values)
                rows.append([model, candidate, values[0]["window"], values[0]["series"], f"{mean:.3f}",
                             " / ".join(f"{v['value']:.3f}" + (f" ({v['chosen']})" if v["chosen"] else "")
                                        for v in values), f"{values[0]['naive']:.3f}",
                             f"{sum(v['seconds'] for v in values) / len(values):.0f}"])
            better = min(found, key=lambda c: sum(v["value"] for v in found[c]))
            for row in rows[-len(candidates):-1]:
                row.append("")
            rows[-1].append(f"{better}")
        metric = "RMSE" if frame is None else "sMAPE"
        part = "validation part" if frame is None else f"selection part, h = {horizon}" + (
            f", ending {args.origin - 1} horizon(s) before the hold-out" if args.origin > 1 else "")
        lines += [f"## {label} ({part})", "",
                  *C.table(["model", "candidate", "window", "series", f"{metric} (mean)", "per seed",
                            f"naive {metric}", "fit s", "lower"], rows), ""]
        C.write(args.out, lines)  # after every case: a long run keeps what it measured


if __name__ == "__main__":
    main()

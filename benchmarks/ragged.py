"""Ragged panels (a few short series among long ones) under the classic settings: the default window shortened to
the shortest series for every series ("shrink", as tsattn did before this script) against the short series padded and the
window bounded by the median series ("pad").

    python benchmarks/ragged.py                   # -> benchmarks/results/ragged.md: the selection part (the last
                                                  #    horizon before each M3 hold-out), what the choice is made on
    python benchmarks/ragged.py --holdout --out benchmarks/results/ragged_holdout.md   # the hold-outs, after it
    python benchmarks/ragged.py --quick           # one panel, one model, 2 epochs

Panels of 10 M3 series (fewer than 40, so the classic settings: per-series scaling, epochs over every window, early
stopping) drawn at random from the series long enough for the default window of 24; in each the first 2 are cut to
their last horizon + 12 values (monthly, h = 18) or horizon + 8 (quarterly and other, h = 8), so that before the
change the window of every series shrank to 12 or 8; panels of 10 M3 yearly series (h = 6) as they are, 14-41 values
before their hold-outs. Each panel is fitted as `tsattn fit --csv FILE --horizon H`
fits it (split auto: the last horizon of every series is the test part, the one before it validation), on the frame
without its hold-out (the selection part is then that fit's test part) or, with --holdout, on the whole frame.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

CANDIDATES = {"shrink": {"pad": False}, "pad": {"pad": True}}  # (at 7897b80 "pad" was {}: the default then)
# the short series' values beyond h; None: the series as they are
DATASETS = {"m3-monthly": 12, "m3-quarterly": 8, "m3-other": 8, "m3-yearly": None,
            "m1-monthly": 12, "tourism-monthly": 12, "m1-quarterly": 8, "tourism-quarterly": 8}
MODELS = ("simple-rnn", "attention-rnn", "nbeats")
SIZE, SHORT = 10, 2


def panels(name: str, extra: int | None, count: int, holdout: bool, origin: int = 1, first: int = 0):
    """``count`` ragged panels of ``name`` (long frames), the horizon, and each panel's short series (those shorter
    than the horizon plus the window the median series allows). ``extra`` None: the series as they are (M3 yearly's
    lengths differ by themselves), else the first 2 of each panel cut to ``extra`` values beyond one horizon."""
    import tsattn

    frame = tsattn.load_dataset(name)
    horizon = int(frame.attrs["horizon"])
    lengths = frame.groupby("unique_id")["y"].size() - (0 if holdout else horizon * (origin - 1))
    pool = lengths.index.to_numpy() if extra is None else \
        lengths.index[lengths >= 24 + 3 * horizon].to_numpy()  # a full window before the selection part
    found = []
    for k in range(first, first + count):
        ids = np.random.default_rng(k).choice(pool, SIZE, replace=False)
        part = frame[frame["unique_id"].isin(ids)]
        if extra is not None:
            keep = part.groupby("unique_id").cumcount(ascending=False) < horizon + extra + (0 if holdout else
                                                                                           horizon * origin)
            part = part[~part["unique_id"].isin(ids[:SHORT]) | keep]
        if not holdout:
            part = C.without_last(part, horizon * origin)
        part = part.reset_index(drop=True)
        part.attrs["horizon"] = horizon
        sizes = part.groupby("unique_id")["y"].size()
        short = set(sizes.index[sizes - horizon < min(24, int(np.median(sizes)) - horizon)])
        found.append((part, short))
    return found, horizon


HALF_TRAIN = "half train"  # a candidate's window value: the longest at which half the series hold a training window


def half_train_window(frame, horizon: int) -> int:
    """The default window, shortened so that at least half the series of ``frame`` hold a training window on the
    hold-out split (test and validation one horizon each): at most the median series' length minus three horizons."""
    sizes = frame.groupby("unique_id")["y"].size()
    return int(max(2, min(24, int(sizes.min()) - horizon, int(np.median(sizes)) - 3 * horizon)))


def score(frame, horizon: int, model: str, settings: dict, seed: int, quick: bool, short: set) -> dict:
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import CHOICES, fit

    keras.backend.clear_session()
    if settings.get("window") == HALF_TRAIN:
        settings = {**settings, "window": half_train_window(frame, horizon)}
    config = RunConfig(model=model, seed=seed, dataset=None, horizon=horizon).updated(**settings)
    if quick:
        config = config.updated(epochs=2)
    start = time.perf_counter()
    result = fit(config, series=frame)
    scores = result.metrics_frame
    scores = scores[(scores["part"] == "test") & (scores["metric"] == "smape")]
    by_series = scores[scores["model"] == "model"].set_index("series")["value"]
    is_short = by_series.index.isin(list(short))
    naive = scores[scores["model"] == "naive"]["value"]
    return {"all": float(by_series.mean()), "long": float(by_series[~is_short].mean()), "naive": float(naive.mean()),
            "short": float(by_series[is_short].mean()), "window": result.data.window,
            "train_windows": result.data.count("train"), "seconds": time.perf_counter() - start,
            **{key: value for key, value in result.history.attrs.items() if key in CHOICES}}  # what the fit chose


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "ragged.md")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--panels", type=int, default=4, help="ragged panels per dataset (default 4)")
    p.add_argument("--holdout", action="store_true", help="score on the hold-outs (after the choice)")
    p.add_argument("--datasets", default="m3-monthly,m3-quarterly,m3-other,m3-yearly",
                   help=f"of {', '.join(DATASETS)}")
    p.add_argument("--origin", type=int, default=1, help="score on the K-th horizon before each hold-out (default 1)")
    p.add_argument("--first-panel", type=int, default=0, help="the random draw of the first panel (default 0)")
    p.add_argument("--uncut", action="store_true", help="every panel's series as they are (no series cut short)")
    p.add_argument("--candidates", default=None, help='JSON {label: settings}, the first the reference (default: '
                                                      'shrink {"pad": false} and pad {"pad": true}); "window": '
                                                      f'"{HALF_TRAIN}" is the longest window at which half the '
                                                      'series of a panel hold a training window')
    args = p.parse_args()
    models = args.models.split(",")[:1] if args.quick else args.models.split(",")
    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    count = 1 if args.quick else args.panels
    candidates = json.loads(args.candidates) if args.candidates else CANDIDATES
    title = "Ragged panels: shrink the window or pad the short series" if not args.candidates else \
        f"{'Small' if args.uncut else 'Ragged'} panels: {', '.join(candidates)}"
    lines = C.header(title, C.command_line(), args.quick)
    part = "the hold-out (the last horizon of every series)" if args.holdout else \
        (f"the selection part (the last horizon of each series once {args.origin} horizon(s) are cut off; the "
         "hold-outs are not read)")
    draws = f"{args.first_panel}-{args.first_panel + count - 1}"
    lines += [__doc__.split("\n\n", 2)[2].strip(), "", f"Scored on {part}; test sMAPE, mean over the panels' series, "
              f"then over {count} panels (random draws {draws}) x seeds {', '.join(map(str, seeds))}; 'short': the "
              "series shorter than the horizon plus the window their panel's median series allows, 'long' the "
              "others.", ""]
    first, others = list(candidates)[0], list(candidates)[1:]
    differences = {(label, m): [] for label in others for m in models}  # candidate minus the first, per model
    long_differences = {(label, m): [] for label in others for m in models}
    names = args.datasets.split(",")[:1] if args.quick else args.datasets.split(",")
    unknown = [name for name in names if name not in DATASETS]
    if unknown or args.origin < 1 or (args.holdout and args.origin != 1) or not others:
        p.error(f"unknown datasets {unknown}" if unknown else "--candidates names two or more" if not others else
                "--origin takes 1 or more (1 with --holdout)")
    for name in names:
        extra = None if args.uncut else DATASETS[name]
        found, horizon = panels(name, extra, count, args.holdout, args.origin, args.first_panel)
        rows = []
        for model in models:
            runs = {label: [] for label in candidates}
            for frame, short in found:
                for seed in seeds:
                    for label, settings in candidates.items():
                        runs[label].append(score(frame, horizon, model, settings, seed, args.quick, short))
                        print(name, model, seed, label, {k: round(v, 3) if isinstance(v, float) else v
                                                         for k, v in runs[label][-1].items()}, flush=True)
            for label in others:
                for reference, run in zip(runs[first], runs[label]):
                    differences[label, model].append(run["all"] - reference["all"])
                    long_differences[label, model].append(run["long"] - reference["long"])
            for label, done in runs.items():
                rows.append([model, label, "/".join(sorted({str(r["window"]) for r in done})),
                             "/".join(map(str, sorted({r["train_windows"] for r in done}))),
                             f"{statistics.mean(r['all'] for r in done):.3f}",
                             f"{statistics.mean(r['long'] for r in done):.3f}",
                             f"{np.nanmean([r['short'] for r in done]):.3f}" if any(
                                 np.isfinite(r["short"]) for r in done) else "-",
                             f"{statistics.mean(r['naive'] for r in done):.3f}",
                             f"{statistics.mean(r['seconds'] for r in done):.1f}",
                             "" if label == first else
                             f"{sum(p['all'] < s['all'] for s, p in zip(runs[first], done))} of {len(done)}"])
        cut = "as they are" if extra is None else f"{SHORT} cut short"
        shorts = statistics.mean(len(short) for _, short in found)
        lines += [f"## {name}: {count} panels of {SIZE} series, {cut} (h = {horizon}; {shorts:g} short on average)", ""]
        lower = f"{others[0] if len(others) == 1 else 'candidate'} lower in"
        lines += C.table(["model", "candidate", "window", "training windows", "sMAPE, all series", "long series",
                          "short series", "naive, all series", "fit s", lower], rows) + [""]
    for label in others:
        every = [d for model in models for d in differences[label, model]]
        every_long = [d for model in models for d in long_differences[label, model]]
        lines += [f"## Summary: {label} minus {first}, mean over every panel, seed and dataset", ""]
        lines += C.table(["model", "all series", "long series", f"{label} lower (all series)"],
                         [[m, f"{statistics.mean(differences[label, m]):+.3f}",
                           f"{statistics.mean(long_differences[label, m]):+.3f}",
                           f"{sum(d < 0 for d in differences[label, m])} of {len(differences[label, m])}"]
                          for m in models]
                         + [["every model", f"{statistics.mean(every):+.3f}", f"{statistics.mean(every_long):+.3f}",
                             f"{sum(d < 0 for d in every)} of {len(every)}"]]) + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

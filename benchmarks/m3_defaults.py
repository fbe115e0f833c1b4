"""Choosing tsattn's defaults for short series on M3 without touching its hold-out.

    python benchmarks/m3_defaults.py            # -> benchmarks/results/m3_defaults.md
    python benchmarks/m3_defaults.py --quick    # 24 series of two frequencies, one model, 2 epochs

The last H values of every series (the competition's hold-out, the test part of benchmarks/m3.py) are cut
off first; on what is left, the last H values are this script's "selection" part and the H before them
validation for early stopping. Every candidate is scored on the selection part only, so the defaults are
chosen on data that lies before the hold-out.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from m3 import FREQUENCIES, load  # noqa: E402

CANDIDATES = {
    "window 24, skip linear (before)": {"window": 24, "skip": "linear"},
    "window auto, skip linear": {"skip": "linear"},
    "window auto, skip relative": {"skip": "relative"},
    "... + loss mae, skip_init least-squares+zero-output": {"skip": "relative", "loss": "mae",
                                                            "skip_init": "least-squares+zero-output"},
}


def selection_frame(frame):
    """Every series without its last H values (the hold-out), horizon kept."""
    horizon = int(frame.attrs["horizon"])
    cut = C.without_last(frame, horizon)
    cut.attrs["horizon"] = horizon
    return cut


def score(frame, model, settings, quick):
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    keras.backend.clear_session()
    params = {"skip": settings["skip"]}
    config = RunConfig(model=model, dataset=None, horizon=int(frame.attrs["horizon"]), model_params=params,
                       **{key: value for key, value in settings.items() if key != "skip"},
                       **({"epochs": 2} if quick else {}))
    start = time.perf_counter()
    result = fit(config, series=frame)
    test = result.metrics["test"]
    return {"smape": test["model"]["smape"], "naive": test["naive"]["smape"],
            "snaive": test["seasonal_naive"]["smape"], "series": result.panel.n_series,
            "of": frame["unique_id"].nunique(), "window": result.data.window,
            "seconds": time.perf_counter() - start}


def main() -> None:
    p = C.parser(__doc__.splitlines()[0], "m3_defaults.md")
    p.add_argument("--frequencies", default=",".join(FREQUENCIES))
    p.add_argument("--models", default="simple-rnn,attention-rnn")
    args = p.parse_args()
    lines = C.header("Choosing the defaults for short series on M3 (selection part, before the hold-out)",
                     C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    frequencies = [f.strip() for f in args.frequencies.split(",")]
    models = [m.strip() for m in args.models.split(",")]
    if args.quick:  # a smoke test of the script (the test suite): two frequencies, one model
        frequencies, models = frequencies[:2], models[:1]
    for frequency in frequencies:
        frame = selection_frame(load(frequency, args.quick))
        rows = []
        from tsattn.config import auto_window
        from tsattn.panel import as_panel

        auto = auto_window(as_panel(frame), int(frame.attrs["horizon"]))
        for model in models:
            for name, settings in CANDIDATES.items():
                if settings.get("window") == auto:
                    rows.append([model, name, auto, "", "same as window auto here", "", "", ""])
                    continue
                print(f"[defaults] {frequency} {model} {name}", file=sys.stderr, flush=True)
                try:
                    found = score(frame, model, settings, args.quick)
                except Exception as exc:  # noqa: BLE001 - a candidate that cannot run is a result too
                    rows.append([model, name, settings.get("window", "auto"), "0", f"fails: {exc}", "", "", ""])
                    continue
                rows.append([model, name, found["window"], f"{found['series']}/{found['of']}",
                             f"{found['smape']:.2f}", f"{found['naive']:.2f}", f"{found['snaive']:.2f}",
                             f"{found['seconds']:.0f}"])
        lines += [f"## M3 {frequency} (selection part: horizon {frame.attrs['horizon']})", "",
                  *C.table(["model", "candidate", "window", "series forecast", "selection sMAPE",
                            "naive (same series)", "seasonal naive (same series)", "seconds"], rows), ""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Memory over many fits in one process: how much resident memory each further fit keeps.

    python benchmarks/fit_memory.py             # -> benchmarks/results/fit_memory.md (4 models, 25 fits each)
    python benchmarks/fit_memory.py --quick     # simple-rnn, 6 fits (a smoke run; not in the test suite)

A search, a backtest with refits, an ensemble or a notebook fits many models in one process. Each model here is fitted
`--fits` times, one after another, in a fresh process, through `tsattn.Forecaster(model, horizon=6, epochs=2)
.fit(series, seed=i)` and `.predict()` on a 200-month series, the fitted forecaster dropped each time; the process's
anonymous resident memory (RssAnon) is read after every fit. "kept per fit" is the growth from the 5th fit to the
last, divided by the fits between (the first fits also pay one-off imports and caches). Each model runs twice: as
tsattn trains (the gradient functions TensorFlow registers during a fit released at its end:
`tsattn._backend.gradient_functions_released`), and with that release turned off, as before it existed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "nbeats", "patch-transformer", "tft")
SKIP = 5  # fits before the growth is measured


def child(model: str, fits: int, release: bool) -> None:
    import contextlib
    import gc

    import numpy as np
    import pandas as pd

    import tsattn
    from tsattn import _backend

    if not release:
        _backend.gradient_functions_released = contextlib.nullcontext
    t = np.arange(200)
    series = pd.Series(50 + 30 * np.sin(2 * np.pi * t / 12) + np.random.default_rng(0).normal(size=200),
                       index=pd.date_range("2000-01-01", periods=200, freq="MS"))
    anon = []
    for seed in range(fits):
        forecaster = tsattn.Forecaster(model, horizon=6, epochs=2).fit(series, seed=seed, verbose=0)
        forecaster.predict()
        del forecaster
        gc.collect()
        anon.append(C.memory_mb()["anon"])
    print(json.dumps({"anon": anon, "registered": len(_backend.custom_gradient_keys())}))


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "fit_memory.md")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--fits", type=int, default=25)
    parser.add_argument("--child", nargs=3, metavar=("MODEL", "FITS", "RELEASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        model, fits, release = args.child
        child(model, int(fits), release == "1")
        return
    models = args.models.split(",")[:1] if args.quick else args.models.split(",")
    fits = 6 if args.quick else args.fits
    if fits <= SKIP:
        raise SystemExit(f"--fits must be above {SKIP}")
    rows = []
    for model in models:
        for release in (True, False):
            done = subprocess.run([sys.executable, __file__, "--child", model, str(fits), "1" if release else "0"],
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{model} failed:\n{done.stderr[-3000:]}")
            found = json.loads(done.stdout.strip().splitlines()[-1])
            anon = found["anon"]
            kept = (anon[-1] - anon[SKIP - 1]) / (fits - SKIP)
            rows.append([model, "released (tsattn)" if release else "kept (no release)", fits,
                         f"{anon[SKIP - 1]:.0f}", f"{anon[-1]:.0f}", f"{kept:.1f}", found["registered"]])
            print(model, rows[-1], file=sys.stderr)
    lines = C.header("Memory over many fits in one process", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    lines += C.table(["model", "gradient functions", "fits", f"RssAnon after fit {SKIP}, MB", "after the last, MB",
                      "kept per fit, MB", "gradient functions registered at the end"], rows)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

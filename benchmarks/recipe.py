"""First probes of the N-BEATS training recipe (issue 23) on M3: metric losses, lookbacks in horizons, training
windows from recent history and sampled steps, for nbeats and attention-rnn, one seed, beside the defaults.

    python benchmarks/recipe.py                                   # -> benchmarks/results/recipe.md
    python benchmarks/recipe.py --frequencies quarterly --seeds 0,1
    python benchmarks/recipe.py --quick                           # 24 series per frequency, 1 epoch (the tests)

Every run is `tsattn fit --dataset m3-FREQ --horizon H` with the settings in its row (the competition hold-out as
test, the H values before it as validation); "recipe" is loss=mase (or smape), lookback=2 horizons, history=10
horizons, sampled_steps=50 batches of 1024 windows per epoch, at most 40 epochs, patience 5. Nothing here
changes a default: these are probes, and the defaults will be chosen on validation figures over seeds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RECIPE = {"lookback": 2, "history": 10, "sampled_steps": 50, "batch_size": 1024, "epochs": 40, "patience": 5}
RUNS = [
    ("attention-rnn", "defaults", {}),
    ("nbeats", "defaults", {}),
    ("nbeats", "loss mase", {"loss": "mase"}),
    ("nbeats", "recipe, loss mase", {"loss": "mase", **RECIPE}),
    ("nbeats", "recipe, loss smape", {"loss": "smape", **RECIPE}),
    ("attention-rnn", "recipe, loss mase", {"loss": "mase", **RECIPE}),
]


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "recipe.md")
    parser.add_argument("--frequencies", default="quarterly,yearly")
    parser.add_argument("--seeds", default="0")
    args = parser.parse_args()
    import keras

    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    lines = C.header("The N-BEATS recipe on M3: first probes", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    for frequency in args.frequencies.split(","):
        frame = tsattn.load_dataset(f"m3-{frequency}")
        if args.quick:
            frame = C.quick_subset(frame)
        horizon = int(frame.attrs["horizon"])
        rows, naive = [], None
        for model, label, settings in RUNS:
            for seed in (int(s) for s in args.seeds.split(",")):
                keras.backend.clear_session()
                if args.quick:
                    settings = {**settings, "epochs": 1}
                began = time.perf_counter()
                result = fit(RunConfig(model=model, dataset=None, horizon=horizon, seed=seed, **settings), series=frame)
                naive = result.metrics["test"]["naive"]["smape"]
                rows.append([model, label, seed, result.data.window, f"{result.metrics['validation']['model']['smape']:.3f}",
                             f"{result.metrics['test']['model']['smape']:.3f}", result.epochs_run, result.best_epoch,
                             f"{time.perf_counter() - began:.0f}"])
                print(" | ".join(map(str, rows[-1])), file=sys.stderr)
        lines += [f"## M3 {frequency} ({frame['unique_id'].nunique()} series, h = {horizon}; naive {naive:.3f})", ""]
        lines += C.table(["model", "settings", "seed", "window", "validation sMAPE", "test sMAPE", "epochs",
                          "best epoch", "seconds"], rows) + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Early-stopping patience chosen on validation data: how many epochs run after the best one, and what a shorter
patience would cost in validation loss.

    python benchmarks/early_stopping.py           # -> benchmarks/results/early_stopping.md
    python benchmarks/early_stopping.py --quick   # one seed, 3 epochs, small data (run by the tests)

Each network is fitted at its defaults (patience 20, best weights restored) on sunspots and on the M3 quarterly
and other panels, 3 seeds. Training is deterministic for a seed, so the run with patience p <= 20 is exactly the
same run cut where p epochs without a better validation loss have passed: its epochs and the validation loss of
the weights it keeps are read from the patience-20 history, without refitting. Only validation losses are used
(no test data), as the project requires for choosing defaults.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "attention-rnn", "transformer")
PATIENCES = (5, 10, 15, 20)


def cut(validation_loss: np.ndarray, patience: int) -> tuple[int, float]:
    """(epochs run, validation loss of the restored best epoch) of Keras' EarlyStopping with ``patience``."""
    best, best_epoch = np.inf, 0
    for epoch, loss in enumerate(validation_loss, start=1):
        if loss < best:  # Keras: improvement when below the best by more than min_delta = 0
            best, best_epoch = loss, epoch
        elif epoch - best_epoch >= patience:
            return epoch, float(best)
    return len(validation_loss), float(best)


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "early_stopping.md")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--datasets", default="sunspots,m3-quarterly,m3-other")
    args = parser.parse_args()
    import keras

    from tsattn.config import RunConfig, window_config
    from tsattn.harness import train_model

    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    lines = C.header("Early stopping: patience chosen on validation data", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    rows, totals = [], {p: [0, 0.0, 0] for p in PATIENCES}  # epochs, sum of loss ratios, runs
    for name in args.datasets.split(","):
        frame, settings = C.dataset_for_run(name, args.quick)
        for model in MODELS[:1] if args.quick else MODELS:  # quick: a smoke test of the script (the test suite)
            for seed in seeds:
                keras.backend.clear_session()
                config = RunConfig(model=model, seed=seed, preset="classic", **settings, **({"epochs": 3} if args.quick else {}))
                from tsattn.config import load_panel

                windowed = window_config(frame if frame is not None else load_panel(config), config)
                start = time.perf_counter()
                _, history, epochs, best = train_model(windowed, *config.parts())
                seconds = time.perf_counter() - start
                loss = history["val_loss"].to_numpy()
                reference = cut(loss, 20)
                row = [name, model, seed, epochs, best, f"{seconds:.1f}"]
                for patience in PATIENCES:
                    run, kept = cut(loss, patience)
                    ratio = kept / reference[1]
                    totals[patience][0] += run
                    totals[patience][1] += ratio
                    totals[patience][2] += 1
                    row += [run, f"{ratio:.4f}"]
                rows.append(row)
                print(f"{name} {model} seed {seed}: {epochs} epochs, best {best}, {seconds:.0f} s", file=sys.stderr)
    headers = ["data", "model", "seed", "epochs (p=20)", "best epoch", "fit s"]
    for patience in PATIENCES:
        headers += [f"epochs p={patience}", f"val loss p={patience} / p=20"]
    lines += ["## Every run", ""] + C.table(headers, rows) + [""]
    summary = [[p, totals[p][0], f"{totals[p][0] / totals[20][0]:.3f}", f"{totals[p][1] / totals[p][2]:.4f}",
                sum(1 for r in rows if float(r[7 + 2 * PATIENCES.index(p)]) > 1.0)] for p in PATIENCES]
    lines += ["## Summary", ""] + C.table(["patience", "epochs, all runs", "share of p=20's epochs",
                                           "mean val loss / p=20", "runs with a worse kept val loss"], summary)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Where the time of one `tsattn fit` goes: start and imports, graph tracing, epochs, epochs after the best one,
forecasting and scoring, writing the run.

    python benchmarks/profile_fit.py             # -> benchmarks/results/profile_fit.md (sunspots, each model, seed 0)
    python benchmarks/profile_fit.py --quick     # 3 epochs (run by the tests)

Imports are timed in a fresh interpreter (`python -c "import ..."`, median of 3). Within the fit, a callback
times every epoch and every training batch; the first epoch minus a later epoch's median is the one-off cost of
tracing and compiling the training (and validation) step. Epochs after the best one are what early stopping
(patience 20, best weights restored) runs to be sure; they are counted at their median epoch time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "attention-rnn", "transformer")


def import_seconds(statement: str, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    args = C.parser(__doc__.splitlines()[0], "profile_fit.md").parse_args()
    import keras

    from tsattn.config import RunConfig
    from tsattn.harness import fit

    lines = C.header("Where the time of one fit goes (sunspots, defaults)", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    repeats = 1 if args.quick else 3
    bare = import_seconds("pass", repeats)
    imports = import_seconds("import tsattn.harness", repeats)
    cli = import_seconds("import tsattn.cli.main", repeats)
    lines += [f"- interpreter start: {bare:.2f} s; + `import tsattn.harness` (TensorFlow, Keras, pandas): "
              f"{imports - bare:.2f} s; `import tsattn.cli.main` (no TensorFlow): {cli - bare:.2f} s", ""]

    class Timer(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epochs, self.batches = [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch_start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.epochs.append(time.perf_counter() - self.epoch_start)

    rows = []
    for model in MODELS:
        keras.backend.clear_session()
        timer = Timer()
        config = RunConfig(model=model, seed=0, **({"epochs": 3} if args.quick else {}))
        start = time.perf_counter()
        result = fit(config, progress=timer)
        total = time.perf_counter() - start
        epochs = timer.epochs
        typical = statistics.median(epochs[1:]) if len(epochs) > 1 else epochs[0]
        steps = -(-result.data.count("train") // min(config.batch_size, result.data.count("train")))
        after = (result.epochs_run - result.best_epoch) if result.best_epoch else 0
        rows.append([model, f"{total:.1f}", f"{result.fit_seconds:.1f}", result.epochs_run, result.best_epoch,
                     f"{epochs[0]:.2f}", f"{epochs[0] - typical:.2f}", f"{typical * 1000:.0f}",
                     f"{typical / steps * 1000:.2f}", f"{after} ({after * typical:.1f} s, "
                     f"{after * typical / result.fit_seconds * 100:.0f}%)",
                     f"{total - result.fit_seconds:.2f}"])
        print(f"{model}: {total:.1f} s", file=sys.stderr)
    lines += C.table(["model", "fit() s", "training s", "epochs", "best epoch", "first epoch s",
                      "tracing (first - median) s", "median epoch ms", "ms per step (incl. validation)",
                      "epochs after the best", "load, window, forecast, score s"], rows)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

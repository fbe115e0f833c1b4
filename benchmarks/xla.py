"""XLA on and off, per model, on a global M3 monthly fit: wall time and whether the result changes.

    python benchmarks/xla.py                        # -> benchmarks/results/xla.md (seed 0, each model, on and off)
    python benchmarks/xla.py --models attention-rnn
    python benchmarks/xla.py --quick                # 24 series, 2 epochs (run by the tests)

Each fit is `tsattn fit --dataset m3-monthly --horizon 18` at its defaults with `jit_compile` forced on or off;
the same seed gives the same batches, so equal epochs and sMAPE mean XLA changed only the speed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MODELS = ("simple-rnn", "attention-rnn", "transformer")


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "xla.md")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    import keras

    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    frame = tsattn.load_dataset("m3-monthly")
    if args.quick:
        frame = C.quick_subset(frame)
    lines = C.header("XLA (jit_compile) on and off: M3 monthly global fits", C.command_line(), args.quick)
    lines += [__doc__.split("\n\n", 2)[2].strip(), ""]
    rows = []
    for model in args.models.split(",")[:1 if args.quick else None]:  # quick: the first model (the test suite)
        for jit in (True, False):
            keras.backend.clear_session()
            result = fit(RunConfig(model=model, dataset=None, horizon=18, seed=0, jit_compile=jit,
                                   **({"epochs": 2} if args.quick else {})), series=frame)
            rows.append([model, "on" if jit else "off", f"{result.fit_seconds:.1f}", result.epochs_run,
                         result.best_epoch, f"{result.fit_seconds / result.epochs_run:.2f}",
                         f"{result.metrics['validation']['model']['smape']:.4f}",
                         f"{result.metrics['test']['model']['smape']:.4f}"])
            print(" ".join(map(str, rows[-1])), file=sys.stderr)
    lines += C.table(["model", "XLA", "fit s", "epochs", "best epoch", "s / epoch", "validation sMAPE",
                      "test sMAPE"], rows)
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

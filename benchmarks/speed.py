"""Speed: whole-process sunspots fits against Darts, CLI start-up, global M3 monthly fits, predict throughput,
`tsattn compare` wall time and growth with series length.

    python benchmarks/speed.py                                   # every section -> benchmarks/results/speed.md
    python benchmarks/speed.py --darts-python /path/to/venv/bin/python   # Darts side by side (its own venv)
    python benchmarks/speed.py --quick                           # tiny sizes, 1 run, the first model only (the test suite)
    python benchmarks/speed.py --sections m3 --models nbeats,patch-transformer --rounds 3   # fit-time ratios, 3 rounds
    python benchmarks/speed.py --sections m3 --models nbeats,patch-transformer --rounds 3 --fresh  # each fit a process

Sections (``--sections``): whole (fit + 564 one-step test forecasts on sunspots, each in a fresh process, tsattn
beside Darts' RNNModel when a Python with darts is given or darts is importable here; wall time, epochs, test
RMSE, peak memory), cli (`tsattn --help / models / datasets`), m3 (a global fit on M3 monthly per model at its
defaults), predict (windows per second through the traced forward pass tsattn forecasts with), compare
(`tsattn compare` at its defaults), growth (seconds per epoch and memory from 1e3 to 1e6 points).

``--json`` saves the raw figures; ``--before`` reads such a file from an earlier version (run this script with
PYTHONPATH pointing at that version's checkout) and puts its figures beside these.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

SECTIONS = ("whole", "cli", "m3", "predict", "compare", "growth")
SUNSPOTS = Path(__file__).resolve().parent.parent / "datasets" / "monthly_sunspots.csv"


# ----------------------------------------------------------------------------------------------------
# Children: each runs in a fresh process and prints one JSON line
# ----------------------------------------------------------------------------------------------------
def _memory() -> dict:
    memory = C.memory_mb()
    return {"peak_mb": memory["peak"], "anon_mb": memory["anon"]}


def tsattn_child(model: str, seed: int, epochs: int | None) -> dict:
    """tsattn's harness at its defaults on sunspots: train with early stopping, forecast every part one step
    ahead (the 564 test months among them) and score them beside the baselines."""
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    start = time.perf_counter()
    result = fit(RunConfig(model=model, seed=seed, **({"epochs": epochs} if epochs else {})))
    return {"work_seconds": time.perf_counter() - start,
            "rmse": result.metrics["test"]["model"]["rmse"], "epochs": result.epochs_run,
            "points": result.metrics["test"]["model"]["count"], **_memory()}


def darts_child(seed: int, epochs: int | None) -> dict:
    """Darts' RNNModel (vanilla RNN) at its defaults on the same split, scaling and window as tsattn's sunspots
    run: MinMax scaler fitted on the training part, input_chunk_length 24, hidden_dim 32 (tsattn's units),
    early stopping on the validation part with patience 10 (Lightning's EarlyStopping), n_epochs 100 (Darts'
    default), then historical_forecasts one step ahead over the 564 test months without retraining."""
    import numpy as np
    import pandas as pd
    from darts import TimeSeries
    from darts.dataprocessing.transformers import Scaler
    from darts.models import RNNModel
    from pytorch_lightning.callbacks import Callback, EarlyStopping

    class Count(Callback):
        epochs = 0

        def on_train_epoch_end(self, trainer, module):
            Count.epochs += 1

    start = time.perf_counter()
    frame = pd.read_csv(SUNSPOTS)
    frame["Month"] = pd.to_datetime(frame["Month"])
    series = TimeSeries.from_dataframe(frame, "Month", "Sunspots").astype(np.float32)
    # tsattn's sunspots split: training targets to 1913-06, validation 1913-07..1936-12, test 1937-01..1983-12
    scaler = Scaler()
    train = scaler.fit_transform(series.drop_after(pd.Timestamp("1913-07-01")))
    full = scaler.transform(series)
    validation = full.drop_before(pd.Timestamp("1911-06-01")).drop_after(pd.Timestamp("1937-01-01"))
    model = RNNModel(model="RNN", input_chunk_length=24, hidden_dim=32, random_state=seed,
                     **({"n_epochs": epochs} if epochs else {}),
                     pl_trainer_kwargs={"callbacks": [EarlyStopping("val_loss", patience=10), Count()],
                                        "enable_progress_bar": False, "enable_model_summary": False,
                                        "logger": False})
    model.fit(train, val_series=validation, verbose=False)
    forecast = model.historical_forecasts(full, start=pd.Timestamp("1937-01-01"), forecast_horizon=1,
                                          retrain=False, last_points_only=True, verbose=False)
    forecast = scaler.inverse_transform(forecast)
    actual = series.slice_intersect(forecast)
    rmse = float(np.sqrt(np.mean((forecast.values() - actual.values()) ** 2)))
    return {"work_seconds": time.perf_counter() - start, "rmse": rmse, "epochs": Count.epochs,
            "points": len(forecast), **_memory()}


def scaling_child(model: str, length: int, epochs: int, batch_size: int, plain: bool) -> dict:
    """One model on a synthetic series of ``length`` points, window 64: seconds per epoch and peak memory."""
    import keras
    import numpy as np
    import pandas as pd

    from tsattn.config import RunConfig, window_config
    from tsattn.harness import train_model
    from tsattn.models import get_model

    rng = np.random.default_rng(0)
    t = np.arange(length)
    series = pd.Series(np.sin(2 * np.pi * t / 50) + 0.1 * rng.normal(size=length))
    config = RunConfig(model=model, dataset=None, preset="classic", window=64, epochs=epochs, batch_size=batch_size,
                       early_stopping=False)
    data = window_config(series, config)
    times = []

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.start)

    if plain:  # the same model on materialised NumPy windows with a plain model.fit, for comparison
        X, y = data.X("train"), data.y("train")
        keras.utils.set_random_seed(0)
        network = get_model(model, window=64)
        network.compile(optimizer="adam", loss="mse")
        network.fit(X, y, batch_size=batch_size, epochs=epochs, verbose=0, callbacks=[Timer()])
    else:
        train_model(data, *config.parts(), progress=Timer())
    return {"epoch_seconds": times[-1], "first_epoch_seconds": times[0], "train_windows": data.count("train"),
            **_memory()}


def m3_child(model: str, quick: bool) -> dict:
    """One global fit on M3 monthly at the defaults, as `tsattn fit --dataset m3-monthly --horizon 18` runs it (in a
    fresh interpreter with --fresh, else in this process)."""
    import tsattn
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    frame = tsattn.load_dataset("m3-monthly")
    if quick:
        frame = C.quick_subset(frame)
    start = time.perf_counter()
    result = fit(RunConfig(model=model, dataset=None, horizon=18, seed=0, **({"epochs": 2} if quick else {})),
                 series=frame)
    return {"fit_seconds": result.fit_seconds, "total_seconds": time.perf_counter() - start,
            "epochs": result.epochs_run, "validation_smape": result.metrics["validation"]["model"]["smape"],
            "test_smape": result.metrics["test"]["model"]["smape"]}


CHILDREN = {"tsattn": tsattn_child, "darts": darts_child, "scaling": scaling_child, "m3": m3_child}


def run_child(kind: str, *args, python: str | None = None) -> dict:
    """Run a child in a fresh interpreter; its result plus the wall time of the whole process."""
    start = time.perf_counter()
    done = subprocess.run([python or sys.executable, __file__, "--child", kind, json.dumps(args)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{kind} child failed:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "seconds": seconds}


# ----------------------------------------------------------------------------------------------------
# Sections: each returns (Markdown lines, raw figures)
# ----------------------------------------------------------------------------------------------------
def darts_python(requested: str | None) -> str | None:
    candidates = [requested] if requested else [sys.executable]
    for python in candidates:
        found = subprocess.run([python, "-c", "import darts.models, pytorch_lightning"], capture_output=True)
        if found.returncode == 0:
            return python
    return None


def quick_models(quick: bool) -> list[str]:
    """Every registered model, or in quick mode (a smoke test of the script, run by the test suite) the first."""
    from tsattn.specs import list_models

    return list_models()[:1] if quick else list_models()


def whole_section(seeds: list[int], quick: bool, darts: str | None, before: dict):
    epochs = 2 if quick else None
    runs: dict[str, list[dict]] = {m: [] for m in quick_models(quick)}
    if darts:
        runs["darts RNNModel"] = []
    for seed in seeds:  # paired: every contender once per seed, in turn
        for name in runs:
            if name == "darts RNNModel":
                runs[name].append(run_child("darts", seed, epochs, python=darts))
            else:
                runs[name].append(run_child("tsattn", name, seed, epochs))
            print(name, seed, runs[name][-1], file=sys.stderr)
    raw = {name: {key: statistics.median(r[key] for r in rs if key in r)
                  for key in ("seconds", "work_seconds", "peak_mb", "anon_mb")}
           | {"rmse": statistics.mean(r["rmse"] for r in rs), "epochs": statistics.mean(r["epochs"] for r in rs)}
           for name, rs in runs.items()}
    darts_seconds = raw.get("darts RNNModel", {}).get("seconds")
    darts_work = raw.get("darts RNNModel", {}).get("work_seconds")
    rows = []
    for name, figures in raw.items():
        old = before.get("whole", {}).get(name, {})
        ratio = f"{figures['seconds'] / darts_seconds:.2f}" if darts_seconds else "-"
        work_ratio = f"{figures['work_seconds'] / darts_work:.2f}" if darts_work else "-"
        rows.append([name, _was(old.get("seconds"), figures["seconds"], "{:.1f}"), ratio,
                     f"{figures['work_seconds']:.1f}", work_ratio,
                     _was(old.get("epochs"), figures["epochs"], "{:.0f}"), _was(old.get("rmse"), figures["rmse"], "{:.2f}"),
                     _was(old.get("peak_mb"), figures["peak_mb"], "{:.0f}"), f"{figures['anon_mb']:.0f}"])
    lines = [f"## Sunspots: fit + 564 one-step test forecasts, whole process (seeds {', '.join(map(str, seeds))}, "
             "paired runs)", "",
             "Each run is a fresh interpreter (start, imports, load, fit with early stopping, forecasts, RMSE). "
             "tsattn: the harness at its defaults (it also scores the training and validation parts and the naive, "
             "seasonal naive and linear AR baselines). Darts: " + " ".join(darts_child.__doc__.split()) +
             (" " if darts else " (darts not installed: not measured this time.)"), "",
             "Wall seconds and peak memory are medians over the seeds; epochs and RMSE are means. 'After imports' "
             "is the same run from its first line of work (tsattn: the `fit()` call; Darts: reading the CSV) to "
             "the RMSE, without interpreter start and library imports. 'before -> after' when an earlier "
             "version's figures were given (--before).", ""]
    lines += C.table(["contender", "wall s", "x Darts", "after imports s", "x Darts", "epochs", "test RMSE",
                      "peak RSS MB", "anonymous MB at exit"], rows)
    lines += [""]
    return lines, raw


def _was(old, new, form):
    return f"{form.format(old)} -> {form.format(new)}" if old is not None else form.format(new)


def cli_section(repeats: int, before: dict):
    script = Path(sys.executable).parent / "tsattn"
    base = [str(script)] if script.exists() else [sys.executable, "-m", "tsattn"]
    raw, rows = {}, []
    for arguments in (["--help"], ["models"], ["datasets"]):
        name = "tsattn " + " ".join(arguments)
        raw[name], _ = C.median_time(lambda: subprocess.run(base + arguments, check=True, capture_output=True),
                                     repeats)
        rows.append([name, _was(before.get("cli", {}).get(name), raw[name], "{:.2f}"),
                     "met" if raw[name] < 1 else "NOT met"])
    lines = [f"## Commands that do not train (wall seconds, median of {repeats}; target < 1 s)", ""]
    lines += C.table(["command", "s", "target"], rows) + [""]
    return lines, raw


def m3_section(quick: bool, before: dict, models: list[str] | None = None, rounds: int = 1, fresh: bool = False):
    """One global fit on M3 monthly per model at its defaults; with ``rounds`` > 1 the models are fitted again in
    turn (nbeats, patch-transformer, ..., nbeats, ...) and each round's training seconds and ratios to the first
    model's are listed (on a shared virtual machine one fit's seconds move by a third from run to run). ``fresh``:
    every fit in its own interpreter, as `tsattn fit` runs one (else one after another in this process, each a first
    fit: its compiled models emptied before it)."""
    raw, rows = {}, []
    names = models or quick_models(quick)
    seconds = {model: [] for model in names}
    for round_ in range(rounds):
        for model in names:
            if fresh:
                found = run_child("m3", model, quick)
            else:
                import keras

                from tsattn.harness import TRAINED_GRAPHS

                keras.backend.clear_session()
                TRAINED_GRAPHS.clear()  # every round a first fit, as `tsattn fit` is (its final fit restarts its first)
                found = m3_child(model, quick)
            seconds[model].append(found["fit_seconds"])
            if round_:
                continue
            raw[model] = {key: found[key] for key in ("fit_seconds", "total_seconds", "epochs", "validation_smape",
                                                      "test_smape")}
            old = before.get("m3", {}).get(model, {})
            target = 120 if model != "transformer" else 300
            rows.append([model, _was(old.get("fit_seconds"), found["fit_seconds"], "{:.1f}"),
                         f"{found['total_seconds']:.1f}", found["epochs"],
                         _was(old.get("validation_smape"), raw[model]["validation_smape"], "{:.3f}"),
                         _was(old.get("test_smape"), raw[model]["test_smape"], "{:.3f}"),
                         f"< {target} s: {'met' if found['fit_seconds'] < target else 'NOT met'}"])
    lines = ["## Global fit on M3 monthly (1428 series, horizon 18, defaults, seed 0)", "",
             "Training seconds (what the targets are about) and the whole `fit()` call (windowing, training, "
             "forecasting and scoring every part with the baselines).", ""]
    lines += C.table(["model", "training s", "fit() s", "epochs", "validation sMAPE", "test sMAPE", "target"], rows)
    if rounds > 1:
        reference = names[0]
        ratios = {model: [mine / theirs for mine, theirs in zip(seconds[model], seconds[reference])]
                  for model in names}
        for model in names:
            raw[model].update(rounds=seconds[model], ratios=ratios[model])
        where = "each fit in its own interpreter" if fresh else "one process"
        lines += ["", f"### Training seconds in {rounds} rounds (the models in turn, each round in this order; {where})",
                  ""]
        lines += C.table(["model", "training s, each round", "median s", f"ratio to {reference}, each round",
                          "median ratio"],
                         [[model, " / ".join(f"{v:.1f}" for v in seconds[model]),
                           f"{statistics.median(seconds[model]):.1f}",
                           " / ".join(f"{v:.2f}" for v in ratios[model]), f"{statistics.median(ratios[model]):.2f}"]
                          for model in names])
    return lines + [""], raw


def predict_section(repeats: int, quick: bool, before: dict):
    import numpy as np

    from tsattn.baselines import NetworkModel
    from tsattn.models import get_model, list_models

    windows, batch = (2_000 if quick else 100_000), 4096
    X = np.random.default_rng(0).random((windows, 24, 1), dtype=np.float32)
    raw, rows = {}, []
    for model in quick_models(quick):  # quick (the test suite): the first model only, as the other sections
        network = get_model(model, window=24)
        forward = NetworkModel(network, model, 24, 1)._compiled()
        forward(X[:batch])  # trace once
        network.predict(X[:batch], batch_size=batch, verbose=0)

        def run():
            for low in range(0, windows, batch):
                np.asarray(forward(X[low:low + batch]))

        seconds, _ = C.median_time(run, repeats)
        keras_seconds, _ = C.median_time(lambda: network.predict(X, batch_size=batch, verbose=0), repeats)
        raw[model] = windows / seconds
        rows.append([model, windows, batch, f"{windows / keras_seconds:,.0f}",
                     _was(before.get("predict", {}).get(model), raw[model], "{:,.0f}")])
    lines = [f"## Predict throughput (window 24, median of {repeats})", "",
             "Keras' `model.predict` (how the forecasts were made before issue 14) and the traced forward pass "
             "tsattn forecasts with now (`NetworkModel`, one `tf.function` for any batch size).", ""]
    lines += C.table(["model", "windows", "batch", "model.predict windows / s", "tsattn windows / s"], rows) + [""]
    return lines, raw


def compare_section(repeats: int, quick: bool):
    command = [sys.executable, "-m", "tsattn", "compare"] + (["--epochs", "2", "--seeds", "0", "--models",
                                                              ",".join(quick_models(quick))] if quick else [])
    durations = []
    for _ in range(min(repeats, 2)):  # each takes minutes: median (mean) of 2
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            subprocess.run(command + ["--out", str(Path(scratch) / "cmp")], check=True, capture_output=True)
            durations.append(time.perf_counter() - start)
    seconds = statistics.median(durations)
    lines = ["## `tsattn compare` with the defaults (3 models x 3 seeds, sunspots)", "",
             f"Total wall time, median of {len(durations)}: **{seconds:.0f} s** (runs: "
             f"{', '.join(f'{d:.0f}' for d in durations)}). Includes process start, TensorFlow import, 9 fits, "
             "evaluation and the report.", ""]
    return lines, {"seconds": seconds}


def growth_section(quick: bool):
    lengths = [300] if quick else [1_000, 10_000, 100_000, 1_000_000]  # quick (the test suite): one length
    batch, rows, raw = 256, [], {}
    for model in ("simple-rnn",) if quick else ("simple-rnn", "transformer"):
        for length in lengths:
            result = run_child("scaling", model, length, 2, batch, False)
            raw[f"{model} {length}"] = result
            rows.append([model, f"{length:,}", f"{result['train_windows']:,}", f"{result['epoch_seconds']:.2f}",
                         f"{result['epoch_seconds'] / result['train_windows'] * 1e6:.1f}", f"{result['peak_mb']:.0f}"])
    lines = [f"## Growth with series length (window 64, batch {batch}, second epoch timed, fresh process each)", ""]
    lines += C.table(["model", "points", "training windows", "s / epoch", "µs / window", "peak RSS MB"], rows)
    if not quick:  # quick (the test suite): one child process fewer, the plain model.fit is not the harness's code
        compared = lengths[-2]
        plain = run_child("scaling", "simple-rnn", compared, 2, batch, True)
        harness = raw[f"simple-rnn {compared}"]  # the same run as the harness's row above
        lines += ["", f"Harness vs a plain `model.fit` on materialised NumPy windows (simple-rnn, {compared:,} "
                  f"points): {harness['epoch_seconds']:.2f} s vs {plain['epoch_seconds']:.2f} s per epoch, peak RSS "
                  f"{harness['peak_mb']:.0f} MB vs {plain['peak_mb']:.0f} MB.", ""]
    return lines, raw


def main():
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        print(json.dumps(CHILDREN[sys.argv[i + 1]](*json.loads(sys.argv[i + 2]))))
        return
    arguments = C.parser(__doc__.splitlines()[0], "speed.md")
    arguments.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated subset of "
                           + ",".join(SECTIONS))
    arguments.add_argument("--seeds", default="0,1,2", help="seeds of the whole-process runs")
    arguments.add_argument("--darts-python", help="a Python interpreter with darts installed (default: this one "
                           "if it has darts)")
    arguments.add_argument("--json", type=Path, help="also save the raw figures here")
    arguments.add_argument("--before", type=Path, help="raw figures of an earlier version (from --json)")
    arguments.add_argument("--models", default="", help="the m3 section's models, in this order (default: every "
                           "registered model)")
    arguments.add_argument("--rounds", type=int, default=1, help="the m3 section's fits, repeated in turn this many "
                           "times (each round's seconds and ratios to the first model listed)")
    arguments.add_argument("--fresh", action="store_true", help="the m3 section's fits each in its own interpreter, "
                           "as `tsattn fit` runs one (default: one after another in this process)")
    args = arguments.parse_args()
    if args.rounds < 1:
        arguments.error(f"--rounds must be at least 1; got {args.rounds}")
    sections = args.sections.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        arguments.error(f"unknown sections {sorted(unknown)}; choose from {','.join(SECTIONS)}")
    models = [m for m in args.models.split(",") if m]
    if models:  # checked before any section runs (imports tsattn, so only when asked)
        from tsattn.specs import list_models

        unknown = set(models) - set(list_models())
        if unknown:
            arguments.error(f"unknown models {sorted(unknown)}; choose from {','.join(list_models())}")
    repeats = 1 if args.quick else 3
    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    before = json.loads(args.before.read_text()) if args.before else {}
    lines = C.header("Speed", C.command_line(), args.quick)
    if before:
        lines += [f"- before: {before.get('version', 'an earlier version')} (figures left of the arrows)", ""]
    raw = {"version": os.environ.get("TSATTN_VERSION_LABEL", "this version")}
    for section in sections:
        if section == "whole":
            part, raw[section] = whole_section(seeds, args.quick, darts_python(args.darts_python), before)
        elif section == "cli":
            part, raw[section] = cli_section(1 if args.quick else 5, before)
        elif section == "m3":
            part, raw[section] = m3_section(args.quick, before, models, args.rounds, args.fresh)
        elif section == "predict":
            part, raw[section] = predict_section(repeats, args.quick, before)
        elif section == "compare":
            part, raw[section] = compare_section(repeats, args.quick)
        else:
            part, raw[section] = growth_section(args.quick)
        lines += part
        if args.json:  # after every section: a later section's failure keeps the earlier figures
            args.json.write_text(json.dumps(raw, indent=1))
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

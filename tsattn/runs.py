"""A run directory: what `tsattn fit` writes (metrics, config, model, history, predictions, plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import plots
from .harness import RunResult
from .metrics import naive_scale
from .io import atomic_directory, describe_index, versions, write_artefact_directory, write_json
from .models import attention_model, get_spec
from .windows import PARTS

BASELINES = ("naive", "seasonal_naive", "linear")


def forecaster_metadata(model_name: str, model_params: dict, window: int, horizon: int, scaler, season: int,
                        series: pd.Series, config: dict, estimator_params: dict, mase_scale: float | None,
                        trained_until) -> dict:
    """Everything besides the Keras model that is needed to forecast after ``series`` ends."""
    tail = series.iloc[-max(window, season, 1):]
    return {
        "kind": "keras" if model_name in _keras_models() else "baseline",
        "model": model_name,
        "model_params": model_params,
        "estimator_params": estimator_params,
        "window": window,
        "horizon": horizon,
        "scaler": scaler.to_dict(),
        "season": season,
        "mase_scale": mase_scale if mase_scale is not None and np.isfinite(mase_scale) else None,
        "series_name": None if series.name is None else str(series.name),
        "trained_until": str(trained_until) if not isinstance(trained_until, (int, np.integer)) else int(trained_until),
        "index": describe_index(series.index),
        "tail": {"values": tail.to_numpy().tolist(),
                 "labels": [int(label) if isinstance(label, (int, np.integer)) else str(label) for label in tail.index]},
        "config": config,
        "versions": versions(),
    }


def seen_until(data) -> object:
    """The last label whose value training or model selection (early stopping) used."""
    if data.boundaries is None:
        return data.series.index[-1]
    return data.series.index[max(data.boundaries[1], data.boundaries[0]) - 1]


def _keras_models() -> set[str]:
    from .models import MODELS

    return set(MODELS)


def predictions_frame(result: RunResult) -> pd.DataFrame:
    """timestamp, actual, predicted, part (and step when horizon > 1) for every forecast target."""
    frames = []
    for part in PARTS:
        forecast = result.forecasts.get(part)
        if forecast is None:
            continue
        positions = result.data.target_positions(part)
        for step in range(result.data.horizon):
            frame = pd.DataFrame({
                "timestamp": result.data.series.index[positions[:, step]],
                "actual": forecast.actual[:, step],
                "predicted": forecast.predicted[:, step],
                "part": part,
            })
            for name, baseline in forecast.baselines.items():
                frame[name] = baseline[:, step]
            if result.data.horizon > 1:
                frame.insert(1, "step", step + 1)
            frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    return table.sort_values(["timestamp"] + (["step"] if result.data.horizon > 1 else []), kind="stable")


def metrics_table(result: RunResult, parts=("validation", "test")) -> str:
    """A short text table of the model's metrics with the baselines beside it."""
    rows = []
    header = f"{'':<16}" + "".join(f"{part + ' ' + m:>16}" for part in parts if part in result.metrics
                                   for m in ("RMSE", "MAE", "MASE"))
    rows.append(header)
    for name in ("model",) + BASELINES:
        label = result.config.model if name == "model" else name.replace("_", "-")
        cells = []
        for part in parts:
            if part not in result.metrics:
                continue
            values = result.metrics[part][name]
            for key in ("rmse", "mae", "mase"):
                value = values.get(key)
                cells.append(f"{value:>16.4g}" if value is not None else f"{'n/a':>16}")
        rows.append(f"{label:<16}" + "".join(cells))
    return "\n".join(rows)


def write_run(result: RunResult, out: Path, force: bool = False, units: str | None = None) -> dict[str, Path]:
    """Write a complete run directory atomically; returns the written files by role."""
    out = Path(out)
    config = result.config.to_dict()
    with atomic_directory(out, force=force) as staging:
        params = get_spec(result.config.model).resolve(result.config.model_params)
        values = result.data.series.to_numpy()
        train_end = result.data.boundaries[0] if result.data.boundaries else len(values)
        estimator = {"model": result.config.model, "window": result.data.window, "horizon": result.data.horizon,
                     **result.config.model_params}
        metadata = forecaster_metadata(result.config.model, params, result.data.window, result.data.horizon,
                                       result.data.scaler, result.season, result.data.series, config, estimator,
                                       naive_scale(values[:train_end]), seen_until(result.data))
        write_artefact_directory(staging, result.model, metadata)
        write_json(staging / "config.json", {
            "config": config,
            "model_params_resolved": metadata["model_params"],
            "windows": result.data.describe(),
            "season": result.season,
            "series": {"name": metadata["series_name"], "length": len(result.data.series),
                       "start": str(result.data.series.index[0]), "end": str(result.data.series.index[-1]),
                       "frequency": metadata["index"]["freq"]},
            "versions": metadata["versions"],
        })
        write_json(staging / "metrics.json", {
            "model": result.config.model,
            "parameters": result.parameter_count,
            "epochs_run": result.epochs_run,
            "best_epoch": result.best_epoch,
            "fit_seconds": round(result.fit_seconds, 3),
            "predict_seconds": round(result.predict_seconds, 3),
            "season": result.season,
            "units": "series units unless under 'scaled'",
            **result.metrics,
        })
        result.history.to_csv(staging / "history.csv")
        predictions_frame(result).to_csv(staging / "predictions.csv", index=False)
        write_plots(result, staging / "plots", units=units)
    files = {"directory": out}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            files[str(path.relative_to(out))] = path
    return files


def write_plots(result: RunResult, directory: Path, units: str | None = None) -> list[Path]:
    """forecast.png, loss.png, and attention plots for attention models."""
    directory.mkdir(parents=True, exist_ok=True)
    series = result.data.series
    name = series.name or result.config.dataset or "series"
    units = units or f"{name} (series units)"
    test_start = None
    if result.data.count("test"):
        test_start = series.index[int(result.data.target_positions("test").min())]
    rmse = result.metrics.get("test", {}).get("model", {}).get("rmse")
    naive = result.metrics.get("test", {}).get("naive", {}).get("rmse")
    subtitle = f" — test RMSE {rmse:.4g} (naive {naive:.4g})" if rmse is not None and naive is not None else ""
    written = [
        plots.plot_forecast(series, result.forecasts, directory / "forecast.png",
                            f"{result.config.model} on {name}: actual vs one-step forecasts{subtitle}", units,
                            test_start),
        plots.plot_loss(result.history, directory / "loss.png",
                        f"{result.config.model} on {name}: training and validation loss"),
    ]
    written += write_attention_plots(result.model, result.data, directory, f"{result.config.model} on {name}")
    return written


def write_attention_plots(model, data, directory: Path, title: str) -> list[Path]:
    """Attention heatmaps (attention-rnn) or head maps + positional encoding (transformer)."""
    attention = attention_model(model)
    if attention is None:
        return []
    part = "test" if data.count("test") else "train"
    X = data.X(part)
    weights = attention.predict(X, verbose=0, batch_size=1024)
    weights = [np.asarray(w) for w in (weights if isinstance(weights, list) else [weights])]
    labels = data.target_index(part)
    written = []
    if weights[0].ndim == 2:  # attention-rnn: (windows, window)
        written.append(plots.plot_attention_rnn(weights[0], labels, directory / "attention.png",
                                                f"{title}: attention over the window ({part} part)"))
    else:  # transformer: per block (windows, heads, window, window)
        chosen = len(X) - 1
        written.append(plots.plot_transformer_heads(
            [w[chosen] for w in weights], directory / "attention_heads.png",
            f"{title}: attention of each head for the window forecasting {str(labels[chosen])[:10]}"))
        encoding = model.get_layer("positional_encoding").encoding_matrix()
        written.append(plots.plot_positional_encoding(
            encoding, directory / "positional_encoding.png",
            f"Positional encoding ({model.get_layer('positional_encoding').mode}), window x d_model"))
    return written

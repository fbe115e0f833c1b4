"""Plots of a run (matplotlib, headless PNG): forecasts, loss curves, attention weights, positional encoding."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

PART_COLOURS = {"train": "tab:blue", "validation": "tab:orange", "test": "tab:red"}
ZOOM = 120  # test targets shown in forecast.png's zoomed view


def _save(fig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _x_axis(index: pd.Index):
    if isinstance(index, pd.PeriodIndex):
        return index.to_timestamp(), "date"
    if isinstance(index, pd.DatetimeIndex):
        return index, "date"
    return np.asarray(index), "time step"


def _marker(index: pd.Index, label):
    """A label of ``index`` as an x coordinate of :func:`_x_axis`."""
    return _x_axis(pd.PeriodIndex([label]) if isinstance(index, pd.PeriodIndex) else pd.Index([label]))[0][0]


def fan(ax, x, bands: dict, colour: str = "tab:red", label: str = "model") -> None:
    """Shade prediction intervals {level: (lower, upper)}: wider levels lighter, each labelled."""
    for i, (level, (low, high)) in enumerate(sorted(bands.items(), reverse=True)):
        ax.fill_between(x, np.asarray(low, dtype=float), np.asarray(high, dtype=float), color=colour,
                        alpha=0.12 + 0.13 * i, linewidth=0, label=f"{label} {level:g}% interval")


def plot_forecast(series: pd.Series, forecasts: dict, path: Path, title: str, units: str = "value",
                  test_start=None, validation_start=None, levels=()) -> Path:
    """Actual series and one-step (first-step) forecasts of every part, with lines where the validation and
    test parts start; below, a zoomed view of the test part (actual against the test forecasts, with the
    model's intervals of ``levels`` as a fan)."""
    zoom = test_start is not None and "test" in forecasts
    fig, axes = plt.subplots(2 if zoom else 1, 1, figsize=(11, 8.2 if zoom else 4.5), squeeze=False,
                             gridspec_kw={"height_ratios": [1, 1]} if zoom else None)
    ax = axes[0, 0]
    x, xlabel = _x_axis(series.index)
    ax.plot(x, series.to_numpy(), color="black", linewidth=0.9, label="actual")
    for part, forecast in forecasts.items():
        px, _ = _x_axis(forecast.index)
        ax.plot(px, forecast.predicted[:, 0], color=PART_COLOURS.get(part, "tab:green"), linewidth=0.9,
                alpha=0.85, label=f"predicted ({part})")
    for start, style, label in ((validation_start, ":", "validation part starts"),
                                (test_start, "--", "test part starts")):
        if start is not None:
            ax.axvline(_marker(series.index, start), color="grey", linestyle=style, linewidth=1.2, label=label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(units)
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    ax.grid(alpha=0.3)
    if zoom:  # the last ZOOM test targets, where single forecasts can be told apart
        test = forecasts["test"]
        shown = min(len(test.index), ZOOM)
        zoomed = axes[1, 0]
        tx, _ = _x_axis(test.index[-shown:])
        actual = series.loc[series.index >= test.index[-shown]]
        zx, _ = _x_axis(actual.index)
        zoomed.plot(zx, actual.to_numpy(), color="black", linewidth=1.2, marker=".", markersize=4, label="actual")
        naive = getattr(test, "baselines", {}).get("naive")
        if naive is not None:
            zoomed.plot(tx, np.asarray(naive)[-shown:, 0], color="tab:green", linewidth=1.0, linestyle=":",
                        label="naive (last value)")
        intervals = getattr(test, "intervals", {}).get("model")
        if intervals:
            from .intervals import bands

            fan(zoomed, tx, {level: (lo[-shown:, 0], hi[-shown:, 0])
                             for level, (lo, hi) in bands(intervals, levels).items()}, PART_COLOURS["test"])
        zoomed.plot(tx, test.predicted[-shown:, 0], color=PART_COLOURS["test"], linewidth=1.4,
                    label="predicted (test)")
        what = f"the last {shown} of {len(test.index)}" if shown < len(test.index) else f"all {shown}"
        zoomed.set_title(f"Test part zoomed: {what} one-step forecasts", fontsize=10)
        zoomed.set_xlabel(xlabel)
        zoomed.set_ylabel(units)
        zoomed.legend(loc="upper left", fontsize=8, ncol=3)
        zoomed.grid(alpha=0.3)
    return _save(fig, path)


def _integer_epochs(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _log_if_positive(ax, *series) -> None:
    """Log scale when every value is positive (a constant series can train to a loss of exactly 0)."""
    values = np.concatenate([np.asarray(s, dtype=np.float64) for s in series]) if series else np.zeros(0)
    if len(values) and (values > 0).all():
        ax.set_yscale("log")


def plot_loss(history: pd.DataFrame, path: Path, title: str = "Training and validation loss") -> Path:
    """Loss (MSE on scaled values) per epoch, log scale, with the best validation epoch marked."""
    fig, ax = plt.subplots(figsize=(7, 4))
    _integer_epochs(ax)
    ax.plot(history.index, history["loss"], label="training loss")
    if "val_loss" in history:
        ax.plot(history.index, history["val_loss"], label="validation loss")
        best = history["val_loss"].idxmin()
        ax.axvline(best, color="grey", linestyle=":", label=f"best validation epoch ({best})")
    _log_if_positive(ax, history["loss"], *([history["val_loss"]] if "val_loss" in history else []))
    ax.set_title(title)
    ax.set_xlabel("epoch")
    ax.set_ylabel("MSE (scaled values, log scale)")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    return _save(fig, path)


def by_lag(weights: np.ndarray, axes=(-1,)) -> np.ndarray:
    """Weights over window steps (oldest first) reordered by lag (lag 1 = the most recent value first) along
    ``axes``: the one column order of every attention plot."""
    return np.flip(np.asarray(weights), axis=axes)


def plot_attention_rnn(weights: np.ndarray, labels, path: Path, title: str) -> Path:
    """Heatmap of attention weights (windows x lag) and the average weight per lag.

    Args:
        weights: (windows, window) attention over the input steps, oldest step first.
        labels: one label (timestamp of the forecast target) per window.
    """
    window = weights.shape[1]
    fig, (heat, mean) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [2.2, 1]})
    # a diverging scale centred on the uniform weight 1/window, so near-uniform attention looks near-uniform
    from matplotlib.colors import TwoSlopeNorm

    uniform = 1 / window
    # colours span at least +-50% of the uniform weight: deviations of a few percent stay pale
    spread = max(float(np.abs(weights - uniform).max()), 0.5 * uniform)
    norm = TwoSlopeNorm(vcenter=uniform, vmin=max(0.0, uniform - spread), vmax=uniform + spread)
    if norm.vmin >= uniform:
        norm = TwoSlopeNorm(vcenter=uniform, vmin=uniform - 1e-9, vmax=uniform + spread)
    image = heat.imshow(by_lag(weights), aspect="auto", cmap="RdBu_r", norm=norm, interpolation="nearest",
                        extent=(0.5, window + 0.5, len(weights) - 0.5, -0.5))
    heat.set_xlabel("lag (steps before the forecast target; 1 = most recent)")
    heat.set_ylabel("forecast target")
    ticks = np.linspace(0, len(weights) - 1, num=min(8, len(weights))).astype(int)
    heat.set_yticks(ticks)
    heat.set_yticklabels([str(labels[i])[:10] for i in ticks], fontsize=8)
    deviation = float(np.abs(weights - uniform).max()) / uniform * 100
    heat.set_title(f"{title}\nlargest deviation from uniform: {deviation:.0f}%", fontsize=10)
    fig.colorbar(image, ax=heat, label=f"attention weight (white: uniform 1/{window})")
    mean.bar(np.arange(1, window + 1), by_lag(weights.mean(axis=0)), color="tab:purple")
    mean.axhline(1 / window, color="grey", linestyle="--", label=f"uniform (1/{window})")
    mean.set_xlabel("lag")
    mean.set_ylabel("mean attention weight")
    mean.set_title("Average weight per lag")
    mean.legend()
    return _save(fig, path)


def plot_transformer_heads(block_weights: list[np.ndarray], path: Path, title: str) -> Path:
    """Attention map of each head of each encoder block for one window, in lags as in the attention-rnn plot.

    Args:
        block_weights: per block, an array (heads, window, window) of query-step x key-step weights, oldest
            step first; drawn with lag 1 (the most recent value) first on both axes, like
            :func:`plot_attention_rnn`.
    """
    blocks, heads = len(block_weights), block_weights[0].shape[0]
    window = block_weights[0].shape[-1]
    fig, axes = plt.subplots(blocks, heads, figsize=(2.6 * heads + 1, 2.6 * blocks + 0.8), squeeze=False)
    for b, weights in enumerate(block_weights):
        for h in range(heads):
            ax = axes[b][h]
            image = ax.imshow(by_lag(weights[h], axes=(0, 1)), cmap="viridis", vmin=0, interpolation="nearest",
                              extent=(0.5, window + 0.5, window + 0.5, 0.5))
            ax.set_title(f"block {b + 1}, head {h + 1}", fontsize=9)
            ax.set_xlabel("key lag", fontsize=8)
            if h == 0:
                ax.set_ylabel("query lag", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    fig.suptitle(f"{title}\nlag 1 = the most recent value (as in attention.png); row: the step attending, "
                 "column: the step attended to", fontsize=10)
    fig.savefig(Path(path), dpi=110)
    plt.close(fig)
    return Path(path)


def plot_positional_encoding(matrix: np.ndarray, path: Path, title: str) -> Path:
    """The (window, d_model) positional-encoding matrix added to the projected inputs."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    image = ax.imshow(matrix, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_xlabel("encoding dimension (even: sin, odd: cos)")
    ax.set_ylabel("position in the window (k)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="P(k, dimension)")
    return _save(fig, path)


def plot_bars(labels, means, errors, path: Path, title: str, ylabel: str, reference: dict | None = None) -> Path:
    """Bar chart with error bars (e.g. test RMSE mean +- std over seeds), optional reference lines."""
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(labels) + 2), 4))
    positions = np.arange(len(labels))
    ax.bar(positions, means, yerr=errors, capsize=5, color="tab:blue", alpha=0.8)
    for i, (name, value) in enumerate((reference or {}).items()):
        ax.axhline(value, linestyle=["--", ":", "-."][i % 3], color=["grey", "black", "tab:green"][i % 3],
                   label=f"{name} ({value:.3g})")
    # start the axis near the smallest value so differences of a few percent stay visible
    values = [float(m) - float(e or 0) for m, e in zip(means, errors)] + list((reference or {}).values())
    top = max([float(m) + float(e or 0) for m, e in zip(means, errors)] + list((reference or {}).values()))
    low = min(values)
    ax.set_ylim(max(0.0, low - 0.15 * (top - low) - 1e-9), top + 0.1 * (top - low) + 1e-9)
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=15)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if reference:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return _save(fig, path)


def plot_backtest(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Actual values and the backtest's first-step forecasts (and naive) over time."""
    first = table[table["step"] == 1]
    fig, ax = plt.subplots(figsize=(11, 4))
    x, xlabel = _x_axis(pd.Index(first["timestamp"]))
    ax.plot(x, first["actual"].to_numpy(), color="black", linewidth=1, label="actual")
    ax.plot(x, first["predicted"].to_numpy(), color="tab:red", linewidth=1, label="forecast (1 step ahead)")
    ax.plot(x, first["naive"].to_numpy(), color="grey", linewidth=0.8, linestyle=":", label="naive (last value)")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("series units")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_overlay(actual: pd.Series, forecasts: dict, path: Path, title: str, units: str) -> Path:
    """The actual test part with every model's one-step forecasts overlaid."""
    fig, ax = plt.subplots(figsize=(11, 4.5))
    x, xlabel = _x_axis(actual.index)
    ax.plot(x, actual.to_numpy(), color="black", linewidth=1.4, label="actual")
    for i, (name, forecast) in enumerate(forecasts.items()):
        fx, _ = _x_axis(forecast.index)
        style = ":" if name in ("naive", "seasonal-naive", "linear") else "-"
        ax.plot(fx, forecast.to_numpy(), linestyle=style, linewidth=1.0, label=name, color=f"C{i}")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(units)
    ax.legend(fontsize=8, ncol=3)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_loss_curves(histories: dict, path: Path, title: str) -> Path:
    """Validation (solid) and training (dotted) loss per epoch of several models."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    _integer_epochs(ax)
    for i, (name, history) in enumerate(histories.items()):
        ax.plot(history.index, history["loss"], linestyle=":", color=f"C{i}", label=f"{name} (train)")
        if "val_loss" in history:
            ax.plot(history.index, history["val_loss"], color=f"C{i}", label=f"{name} (validation)")
    _log_if_positive(ax, *[h[c] for h in histories.values() for c in ("loss", "val_loss") if c in h])
    ax.set_xlabel("epoch")
    ax.set_ylabel("MSE (scaled values, log scale)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return _save(fig, path)


def plot_series_forecasts(histories: list, futures: list, path: Path, title: str, intervals: list | None = None,
                          history_label: str = "history") -> Path:
    """Recent history and forecast of one series, or of the first few series of a panel (one axis each), with
    ``intervals`` ({level: (lower, upper)} per series) shaded as a fan."""
    count = len(histories)
    fig, axes = plt.subplots(count, 1, figsize=(10, 3.2 * count + 0.8), squeeze=False)
    for i, (ax, history, future) in enumerate(zip(axes[:, 0], histories, futures)):
        x_hist, xlabel = _x_axis(history.index)
        x_future, _ = _x_axis(future.index)
        if intervals:
            fan(ax, x_future, intervals[i], label="forecast")
        ax.plot(x_hist, history.to_numpy(), color="black", label=history_label)
        ax.plot(x_future, future.to_numpy(), color="tab:red", marker="o", markersize=3, label="forecast")
        ax.set_title(str(history.name) if count > 1 else title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("series units")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if count > 1:
        fig.suptitle(title)
    return _save(fig, path)


def plot_series_grid(panels: list, path: Path, title: str) -> Path:
    """A few series of a panel, each with its history, the model's forecast and the baselines' forecasts.

    Args:
        panels: (caption, history Series, forecast Series, {baseline name: forecast Series}, {level: (lower,
            upper)} intervals of the model or None) per series.
    """
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.0 * len(panels) + 0.8), squeeze=False)
    for ax, (caption, history, forecast, baselines, intervals) in zip(axes[:, 0], panels):
        x_hist, xlabel = _x_axis(history.index)
        if intervals:
            fan(ax, _x_axis(forecast.index)[0], intervals)
        ax.plot(x_hist, history.to_numpy(), color="black", linewidth=1, label="actual")
        for i, (name, values) in enumerate(baselines.items()):
            ax.plot(_x_axis(values.index)[0], values.to_numpy(), linestyle=":", color=("tab:green", "tab:orange",
                                                                                         "tab:purple")[i % 3],
                    label=name.replace("_", "-"))
        ax.plot(_x_axis(forecast.index)[0], forecast.to_numpy(), color="tab:red", linewidth=1.4, label="model")
        ax.axvline(_x_axis(forecast.index)[0][0], color="grey", linestyle="--", linewidth=1)
        ax.set_title(caption, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=4, loc="upper left")
    fig.suptitle(title)
    return _save(fig, path)


def plot_distribution(values: dict, path: Path, title: str, xlabel: str) -> Path:
    """Box plots of a per-series metric for each model (lower is better), with the medians written."""
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(values) + 2.2))
    names = list(values)
    data = [np.asarray(values[name], dtype=np.float64) for name in names]
    try:  # matplotlib >= 3.10 names the orientation; older releases take vert=False
        ax.boxplot(data, orientation="horizontal", showfliers=False, showmeans=True)
    except TypeError:
        ax.boxplot(data, vert=False, showfliers=False, showmeans=True)
    ax.set_yticks(np.arange(1, len(names) + 1))
    ax.set_yticklabels(names)
    for i, series in enumerate(data, start=1):
        if len(series):
            ax.annotate(f"median {np.median(series):.3g}, mean {np.mean(series):.3g}", (np.median(series), i + 0.3),
                        fontsize=7, ha="center")
    ax.set_xlabel(xlabel + " (whiskers: 1.5 IQR, outliers hidden; triangle: mean)")
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="x")
    return _save(fig, path)


def plot_calibration(coverage: dict, path: Path, title: str) -> Path:
    """Nominal against empirical coverage: {model label: {level: coverage %}}; the diagonal is perfect calibration,
    points below it are intervals too narrow."""
    fig, ax = plt.subplots(figsize=(6, 5.5))
    ax.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=1, label="nominal = empirical")
    for name, points in coverage.items():
        levels = sorted(points)
        ax.plot(levels, [points[level] for level in levels], marker="o", linewidth=1.2, label=name)
    low = min([min(p) for p in coverage.values() if p] + [50]) - 10
    ax.set_xlim(max(0, low), 100)
    ax.set_ylim(max(0, low), 100)
    ax.set_xlabel("nominal coverage (%)")
    ax.set_ylabel("empirical coverage on the test part (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)

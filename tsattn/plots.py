"""Plots of a run: forecasts, loss curves, attention weights, positional encoding.

Every figure is a :class:`matplotlib.figure.Figure` made without pyplot: nothing needs a display, no global
backend is set (a notebook keeps its own) and figures are freed like any object. :func:`plot_series` is the
public one (utilsforecast's ``plot_series`` on tsattn's and Nixtla's frames); the ``plot_*`` helpers of a run
save PNGs.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .checks import counted
from .errors import user_stacklevel
from .io import metric_label, number_text

PART_COLOURS = {"train": "tab:blue", "validation": "tab:orange", "test": "tab:red"}
ZOOM = 120  # test targets shown in forecast.png's zoomed view
OVERLAY = 60  # test targets in the comparison report's chart of every model's forecasts
REFERENCE_STYLES = [("--", "grey"), (":", "black"), ("-.", "tab:green"), ("--", "tab:purple"), (":", "tab:orange"),
                    ("-.", "tab:brown")]


def _subplots(*grid, figsize, layout=None, **kwargs):
    """(Figure, axes) without pyplot (see the module docstring)."""
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(*grid, **kwargs)


def literal_text(fig: Figure) -> Figure:
    """Every text of ``fig`` shown as written: a series id like "store #3 $$" is not parsed as math text."""
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for legend in fig.legends:
        texts += legend.get_texts()
    for ax in fig.axes:  # titles, axis labels, legends and annotations; tick labels keep their math (10^-3)
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts() + [ax.get_legend().get_title()]
        # tick labels keep their math (10^-3) unless they carry a "$" of their own (a series id in a label)
        texts += [label for label in ax.get_xticklabels() + ax.get_yticklabels() if "$" in label.get_text()]
    for text in texts:
        text.set_parse_math(False)
    return fig


def concise_dates(fig: Figure) -> Figure:
    """Date axes of ``fig`` labelled concisely (matplotlib's ConciseDateFormatter: "03", "05", ... under a "2022-Mar"
    offset instead of a full date per tick, which ran together on narrow figures and short daily or hourly spans)."""
    import matplotlib.dates as mdates

    for ax in fig.axes:
        if isinstance(ax.xaxis.get_major_formatter(), mdates.AutoDateFormatter):  # what plotting dates sets
            locator = ax.xaxis.get_major_locator()
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    return fig


DPI = 110
PHONE_MIN_POINTS = 8.5
PHONE_WIDTH_INCHES, PHONE_DPI = 3.9, 100  # a phone render: about 390 px wide, shown at ~370 px on a 390 px screen
PHONE_RENDERS: dict = {}  # while a report draws (phone_renders()): figure path -> (phone path, its smallest text px)


def _texts(fig: Figure) -> list:
    """Every text artist of ``fig`` (titles, labels, ticks, legends, notes)."""
    return fig.findobj(lambda artist: hasattr(artist, "get_fontsize") and hasattr(artist, "set_fontsize")
                       and hasattr(artist, "get_text"))


def smallest_text_points(fig: Figure) -> float:
    """The smallest font size (points) of any visible text in ``fig``."""
    sizes = [text.get_fontsize() for text in _texts(fig) if text.get_visible() and str(text.get_text()).strip()]
    return float(min(sizes)) if sizes else 10.0


class phone_renders:
    """While open, :func:`save_figure` also writes each figure at a phone's width (``<stem>-phone.png``, see
    :func:`_save_phone`) and records it in :data:`PHONE_RENDERS` for the report's ``<picture>``."""

    def __enter__(self):
        PHONE_RENDERS.clear()
        PHONE_RENDERS["active"] = True
        return PHONE_RENDERS

    def __exit__(self, *exc):
        PHONE_RENDERS.pop("active", None)


def save_figure(fig, path: Path, tight: bool = True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    literal_text(concise_dates(fig))
    if tight and fig.get_layout_engine() is None:
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    if PHONE_RENDERS.get("active"):
        PHONE_RENDERS[str(path)] = _save_phone(fig, path, tight)
    return path


def _save_phone(fig, path: Path, tight: bool) -> tuple[Path, float]:
    """The same drawing on a canvas :data:`PHONE_WIDTH_INCHES` wide (``<stem>-phone.png``), so that its text stays at
    least 10 px on a 390 px screen: notes raised to :data:`PHONE_MIN_POINTS`, titles and labels over 40 characters
    on several lines, legends in at most two columns, the canvas narrowed until everything (labels outside the axes
    too) fits. Changes ``fig`` (saved already). Returns the file and its smallest text in pixels."""
    import textwrap
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    width, height = fig.get_size_inches()
    fig.set_size_inches(PHONE_WIDTH_INCHES, max(3.0, min(height * PHONE_WIDTH_INCHES / width * 1.6, height)))
    for text in _texts(fig):
        if text.get_fontsize() < PHONE_MIN_POINTS:  # 7.5-8 pt notes: 8.5 pt (12 px) on the phone canvas
            text.set_fontsize(PHONE_MIN_POINTS)
    for ax in fig.axes:  # a phone-wide canvas holds about 40 characters a line
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            if len(text.get_text()) > 40 and "\n" not in text.get_text():
                text.set_text(textwrap.fill(text.get_text(), 40))
    for legend in [ax.get_legend() for ax in fig.axes] + list(fig.legends):
        if legend is not None and getattr(legend, "_ncols", 1) > 2:
            legend.set_ncols(2)
    if fig._suptitle is not None and len(fig._suptitle.get_text()) > 40:
        fig._suptitle.set_text(textwrap.fill(fig._suptitle.get_text(), 40))
    canvas = FigureCanvasAgg(fig)
    with warnings.catch_warnings():  # a crowded phone layout may not fit tightly; it is still drawn
        warnings.simplefilter("ignore")
        for _ in range(8):  # narrow the canvas until the tight bounding box is PHONE_WIDTH_INCHES wide
            if tight and fig.get_layout_engine() is None:
                fig.tight_layout()
            over = fig.get_tightbbox(canvas.get_renderer()).width - PHONE_WIDTH_INCHES
            if over <= 0.02 or fig.get_size_inches()[0] - over < 2.0:
                break
            fig.set_size_inches(fig.get_size_inches()[0] - over, fig.get_size_inches()[1])
        phone = path.with_name(f"{path.stem}-phone{path.suffix}")
        fig.savefig(phone, dpi=PHONE_DPI, bbox_inches="tight", pad_inches=0.02)  # nothing cut at the edges
    return phone, smallest_text_points(fig) * PHONE_DPI / 72


def kept(function):
    """For the PNGs of a run, a prediction or a report: a figure that cannot be drawn (dates past what pandas or
    matplotlib can hold, values near the float limit) is skipped with one warning naming it and the reason, and
    None is returned, so the work around it is kept."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001 - any drawing failure: warned, never fatal
            path = kwargs.get("path") or next((a for a in args if isinstance(a, Path) or
                                               (isinstance(a, str) and a.endswith(".png"))), "a figure")
            reason = " ".join(str(error).split())[:160] or type(error).__name__
            warnings.warn(f"{Path(path).name} was not drawn ({reason}); everything else is kept", UserWarning,
                          stacklevel=user_stacklevel())
            return None

    return wrapper


def _x_axis(index: pd.Index):
    if isinstance(index, pd.PeriodIndex):
        try:
            return index.to_timestamp(), "date"
        except (pd.errors.OutOfBoundsDatetime, OverflowError):  # periods past 2262: drawn by number
            return np.asarray(index.year + (index.dayofyear - 1) / 366.0), "year"
    if isinstance(index, pd.DatetimeIndex):
        return index, "date"
    return np.asarray(index), "time step"


def _marker(index: pd.Index, label):
    """A label of ``index`` as an x coordinate of :func:`_x_axis`."""
    return _x_axis(pd.PeriodIndex([label]) if isinstance(index, pd.PeriodIndex) else pd.Index([label]))[0][0]


def time_label(label) -> str:
    """A timestamp as people write it (2018-03-01, or with the time of day when it has one); other labels whole."""
    if isinstance(label, pd.Timestamp):
        return label.strftime("%Y-%m-%d") if label == label.normalize() else label.strftime("%Y-%m-%d %H:%M")
    text = str(label)
    return text[:-len(" 00:00:00")] if text.endswith(" 00:00:00") else text


def fan(ax, x, bands: dict, colour: str = "tab:red", label: str = "model") -> None:
    """Shade prediction intervals {level: (lower, upper)}: wider levels lighter, each labelled."""
    for i, (level, (low, high)) in enumerate(sorted(bands.items(), reverse=True)):
        ax.fill_between(x, np.asarray(low, dtype=float), np.asarray(high, dtype=float), color=colour,
                        alpha=0.12 + 0.13 * i, linewidth=0, label=f"{label} {level:g}% interval")


def whole_paths(forecast) -> bool:
    """Whether a part's forecasts are drawn as each window's whole path (every step) rather than as first steps: a
    part of a single window (a test part of one horizon, e.g. BJsales' last 12 values forecast from one origin)
    would otherwise be one point, which draws no line."""
    return len(forecast.index) == 1 and forecast.predicted.shape[1] > 1


def drawn(series: pd.Series, forecast, values: np.ndarray) -> tuple:
    """(the timestamps, the values) a part's ``values`` (windows x steps) are drawn at: the first steps at each
    window's first target, or a single window's every step at the targets that follow it."""
    if not whole_paths(forecast):
        return forecast.index, np.asarray(values)[:, 0]
    first = series.index.get_loc(forecast.index[0])
    steps = min(values.shape[1], len(series) - first)
    return series.index[first:first + steps], np.asarray(values)[0, :steps]


def forecast_kind(forecasts: dict, part: str = "test") -> str:
    """What plot_forecast draws for ``part``, in words for a title: "one-step forecasts" or "the 12-step forecast"."""
    forecast = forecasts.get(part)
    if forecast is not None and whole_paths(forecast):
        return f"the {forecast.predicted.shape[1]}-step forecast"
    return "one-step forecasts"


@kept
def plot_forecast(series: pd.Series, forecasts: dict, path: Path, title: str, units: str = "value",
                  test_start=None, validation_start=None, levels=()) -> Path:
    """Actual series and one-step (first-step) forecasts of every part, with lines where the validation and
    test parts start; below, a zoomed view of the test part (actual against the test forecasts, with the
    model's intervals of ``levels`` as a fan). A part of one window is drawn as its whole path (every step)."""
    zoom = test_start is not None and "test" in forecasts
    fig, axes = _subplots(2 if zoom else 1, 1, figsize=(11, 8.2 if zoom else 4.5), squeeze=False,
                             gridspec_kw={"height_ratios": [1, 1]} if zoom else None)
    ax = axes[0, 0]
    x, xlabel = _x_axis(series.index)
    ax.plot(x, series.to_numpy(), color="black", linewidth=0.9, label="actual")
    for part, forecast in forecasts.items():
        index, values = drawn(series, forecast, forecast.predicted)
        px, _ = _x_axis(index)
        ax.plot(px, values, color=PART_COLOURS.get(part, "tab:green"), linewidth=0.9, alpha=0.85,
                marker="." if len(index) < 30 else None, markersize=4, label=f"predicted ({part})")
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
        index, predicted = drawn(series, test, test.predicted)
        shown = min(len(index), ZOOM)
        zoomed = axes[1, 0]
        tx, _ = _x_axis(index[-shown:])
        actual = series.loc[series.index >= index[-shown]]
        zx, _ = _x_axis(actual.index)
        zoomed.plot(zx, actual.to_numpy(), color="black", linewidth=1.2, marker=".", markersize=4, label="actual")
        naive = getattr(test, "baselines", {}).get("naive")
        if naive is not None:
            zoomed.plot(tx, drawn(series, test, naive)[1][-shown:], color="tab:green", linewidth=1.0,
                        linestyle=":", label="naive (last value)")
        intervals = getattr(test, "intervals", {}).get("model")
        if intervals:
            from .intervals import bands

            fan(zoomed, tx, {level: (drawn(series, test, lo)[1][-shown:], drawn(series, test, hi)[1][-shown:])
                             for level, (lo, hi) in bands(intervals, levels).items()}, PART_COLOURS["test"])
        zoomed.plot(tx, predicted[-shown:], color=PART_COLOURS["test"], linewidth=1.4,
                    marker="." if shown < 30 else None, markersize=4, label="predicted (test)")
        if whole_paths(test):
            what = f"{forecast_kind(forecasts)} from one origin"
        else:
            what = (f"the last {shown} of {len(index)}" if shown < len(index) else f"all {shown}") + \
                " one-step forecasts"
        zoomed.set_title(f"Test part zoomed: {what}", fontsize=10)
        zoomed.set_xlabel(xlabel)
        zoomed.set_ylabel(units)
        zoomed.legend(loc="upper left", fontsize=8, ncol=3)
        zoomed.grid(alpha=0.3)
    return save_figure(fig, path)


def _integer_epochs(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _plain_log_formatter(**kwargs):
    """A log axis' tick labels as plain numbers (12, 15.5, 0.002), not 1.55x10^1: matplotlib chooses which ticks
    get labels, number_text writes them."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return number_text(x, 3)

    return Plain(**kwargs)


def _log_if_positive(ax, *series) -> None:
    """Log scale when every value is positive (a constant series can train to a loss of exactly 0), its ticks
    labelled as plain numbers."""
    values = np.concatenate([np.asarray(s, dtype=np.float64) for s in series]) if series else np.zeros(0)
    if len(values) and (values > 0).all():
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(_plain_log_formatter())
        ax.yaxis.set_minor_formatter(_plain_log_formatter(labelOnlyBase=False, minor_thresholds=(2, 0.4)))


# a loss's (or a panel's headline metric's: sMAPE, MASE) name on a figure's axis
LOSS_LABELS = {"mse": "MSE (scaled values)", "mae": "MAE (scaled values)", "huber": "Huber loss (scaled values)",
               "quantile": "pinball loss (scaled values)", "smape": "sMAPE (%)", "mape": "MAPE (%)", "mase": "MASE"}


def metric_axis(metric: str) -> str:
    """A panel's headline metric (:func:`tsattn.metrics.headline_metric`) on a figure's axis: sMAPE (%), MASE, and
    MAE in the data's units (as a training loss it is in scaled values)."""
    return "MAE (the data's units)" if metric == "mae" else LOSS_LABELS[metric]


def loss_label(loss) -> str:
    """The y-axis of a loss curve for a training loss (several losses: "loss")."""
    losses = {loss} if isinstance(loss, str) or loss is None else set(loss)
    return LOSS_LABELS.get(next(iter(losses)), "loss") if len(losses) == 1 else "training loss (per model)"


@kept
def plot_loss(history: pd.DataFrame, path: Path, title: str = "Training and validation loss", loss: str = "mse") -> Path:
    """loss.png: :func:`loss_figure`."""
    return save_figure(loss_figure(history, title, loss), path)


def loss_figure(history: pd.DataFrame, title: str = "Training and validation loss", loss: str = "mse") -> Figure:
    """The training loss (``loss``: the setting, e.g. mse on scaled values) per epoch, log scale when positive,
    with the best validation epoch marked."""
    fig, ax = _subplots(figsize=(7, 4))
    _integer_epochs(ax)
    ax.plot(history.index, history["loss"], label="training loss")
    start = history.attrs.get("start_val_loss")  # keep_start: the starting weights' validation loss, epoch 0
    if "val_loss" in history:
        ax.plot(history.index, history["val_loss"], label="validation loss")
        best = history.attrs.get("best_epoch", history["val_loss"].idxmin())  # the harness's choice, when it made one
        if start is not None:
            ax.plot([0], [start], "o", color="C1", label="validation loss at the start")
        label = "best validation epoch (0: the start, kept)" if best == 0 else f"best validation epoch ({best})"
        ax.axvline(best, color="grey", linestyle=":", label=label)
    _log_if_positive(ax, history["loss"], *([history["val_loss"]] if "val_loss" in history else []),
                     *([pd.Series([start])] if start is not None else []))
    ax.set_title(title)
    ax.set_xlabel("epoch")
    ax.set_ylabel(loss_label(loss) + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    literal_text(fig).tight_layout()
    return fig


def by_lag(weights: np.ndarray, axes=(-1,)) -> np.ndarray:
    """Weights over window steps (oldest first) reordered by lag (lag 1 = the most recent value first) along
    ``axes``: the one column order of every attention plot."""
    return np.flip(np.asarray(weights), axis=axes)


@kept
def plot_attention_rnn(weights: np.ndarray, labels, path: Path, title: str) -> Path:
    """attention.png: :func:`attention_figure`."""
    return save_figure(attention_figure(weights, labels, title), path)


def attention_figure(weights: np.ndarray, labels, title: str) -> Figure:
    """Heatmap of attention weights (windows x lag) and the average weight per lag.

    Args:
        weights: (windows, window) attention over the input steps, oldest step first.
        labels: one label (timestamp of the forecast target) per window.
    """
    window = weights.shape[1]
    fig, (heat, mean) = _subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [2.2, 1]})
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
    heat.set_yticklabels([time_label(labels[i]) for i in ticks], fontsize=8)
    average = weights.mean(axis=0)  # the mean weight per lag over the windows, against uniform (not one window's peak)
    heat.set_title(f"{title}\nmean weight per lag {average.min():.3f} to {average.max():.3f} against uniform "
                   f"{uniform:.3f} (1/{window})", fontsize=10)
    fig.colorbar(image, ax=heat, label=f"attention weight (white: uniform 1/{window})")
    mean.bar(np.arange(1, window + 1), by_lag(weights.mean(axis=0)), color="tab:purple")
    mean.axhline(1 / window, color="grey", linestyle="--", label=f"uniform (1/{window})")
    mean.set_xlabel("lag")
    mean.set_ylabel("mean attention weight")
    mean.set_title("Average weight per lag")
    mean.legend()
    literal_text(fig).tight_layout()
    return fig


@kept
def plot_transformer_heads(block_weights: list[np.ndarray], path: Path, title: str) -> Path:
    """Attention map of each head of each encoder block for one window, in lags as in the attention-rnn plot.

    Args:
        block_weights: per block, an array (heads, window, window) of query-step x key-step weights, oldest
            step first; drawn with lag 1 (the most recent value) first on both axes, like
            :func:`plot_attention_rnn`.
    """
    blocks, heads = len(block_weights), block_weights[0].shape[0]
    window = block_weights[0].shape[-1]
    fig, axes = _subplots(blocks, heads, figsize=(2.6 * heads + 1, 2.6 * blocks + 0.8), squeeze=False)
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
    return save_figure(fig, path, tight=False)


def fusion_steps_figure(steps: np.ndarray, title: str) -> Figure:
    """tft's attention: the mean over windows of each forecast step's weights (rows, step 1 first) over the window's
    steps (lag W .. lag 1) and the forecast steps up to it (ahead 1 .. H), mean over heads (they share their values,
    so this is exactly the weighting the forecast read).

    Args:
        steps: (windows, horizon, window + horizon), each row summing to 1.
    """
    mean = np.asarray(steps).mean(axis=0)  # (horizon, window + horizon)
    horizon = mean.shape[0]
    window = mean.shape[1] - horizon
    fig, ax = _subplots(figsize=(max(7.0, 0.28 * mean.shape[1] + 3), max(3.2, 0.3 * horizon + 2)))
    image = ax.imshow(mean, aspect="auto", cmap="viridis", vmin=0, interpolation="nearest",
                      extent=(-window + 0.5, horizon + 0.5, horizon + 0.5, 0.5))
    ax.axvline(0.5, color="white", linewidth=1.5)
    ax.set_xlabel("position: the window's steps (-W+1 .. 0, 0 = the most recent value), then forecast steps 1 .. H")
    ax.set_ylabel("forecast step attending")
    on_window = mean[:, :window].sum(axis=1)
    ax.set_title(f"{title}\nmean weight over {counted(len(steps), 'window')}; share on the window "
                 f"{on_window.min():.2f} to {on_window.max():.2f} by step (uniform over the window: "
                 f"{1 / window:.3f} per lag)", fontsize=10)
    fig.colorbar(image, ax=ax, label="attention weight (mean over heads and windows)")
    literal_text(fig).tight_layout()
    return fig


@kept
def plot_fusion_steps(steps: np.ndarray, path: Path, title: str) -> Path:
    """attention_steps.png: :func:`fusion_steps_figure`."""
    return save_figure(fusion_steps_figure(steps, title), path)


def importance_figure(importance: pd.DataFrame, title: str) -> Figure:
    """tft's variable importance (:func:`tsattn.models.variable_importance`): one bar chart per part: the whole
    forecast's share of each input (linear terms and the network's remainder), then the selection networks' weights at
    the past steps, the forecast steps and of the static inputs, each against an even share (1 / variables)."""
    parts = list(importance["part"].unique())  # in the frame's order: model, past, future, static
    sizes = [int((importance["part"] == part).sum()) for part in parts]
    fig, axes = _subplots(1, len(parts), figsize=(4.2 * len(parts) + 1, max(3.0, 0.35 * max(sizes) + 1.6)),
                          squeeze=False)
    titles = {"model": "whole forecast", "past": "selection: past steps", "future": "selection: forecast steps",
              "static": "selection: static"}
    for ax, part, size in zip(axes[0], parts, sizes):
        rows = importance[importance["part"] == part].iloc[::-1]  # most important on top
        ax.barh(rows["variable"].astype(str), rows["importance"], color="tab:green" if part == "model" else "tab:purple")
        ax.axvline(1 / size, color="grey", linestyle="--", label=f"even share (1/{size})")
        ax.set_title(titles[part], fontsize=10)
        ax.set_xlabel("share of mean |contribution|" if part == "model" else "mean selection weight")
        ax.tick_params(axis="y", labelsize=9)
        ax.set_xlim(0, max(float(rows["importance"].max()), 1 / size) * 1.45)  # room on the right for the legend
        ax.legend(fontsize=8)  # (where the bars filled the axes it sat on one of them)
    fig.suptitle(f"{title}\nwhole forecast: each input's linear term plus the network's rest split by its selection "
                 "weight\nselection: what tft's variable selection weighed (mean over windows and steps); each panel "
                 "sums to 1", fontsize=10)
    literal_text(fig).tight_layout()
    return fig


@kept
def plot_variable_importance(importance: pd.DataFrame, path: Path, title: str) -> Path:
    """variable_importance.png: :func:`importance_figure`."""
    return save_figure(importance_figure(importance, title), path)


def permutation_figure(importance: pd.DataFrame, model: str) -> Figure:
    """Permutation importance (:func:`tsattn.evaluation.permutation_importance`) of ``model``: the rise of the metric
    when each covariate is shuffled, as a percentage, with the spread over shuffles; the title names the metric's
    value intact (``attrs``: ``metric``, ``baseline`` and, where a run scored a part, ``part``)."""
    rows = importance.dropna(subset=["importance"]).iloc[::-1]  # most important on top
    metric = metric_label(importance.attrs["metric"]) if "metric" in importance.attrs else "the error"
    part = f"{importance.attrs['part']} part, " if "part" in importance.attrs else ""
    intact = f" {importance.attrs['baseline']:.4g} intact" if "baseline" in importance.attrs else ""
    title = f"{model}: covariate importance ({part}{metric}{intact})"
    fig, ax = _subplots(figsize=(7.2, max(3.0, 0.4 * len(rows) + 2.0)))
    labels = [f"{v} ({k.split('_')[0]})" for v, k in zip(rows["variable"], rows["kind"])]
    ax.barh(labels, 100 * rows["importance"], xerr=100 * rows["std"], color="tab:purple")
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(f"rise of {metric} when shuffled (%)")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(f"{title}\nwhich covariate the forecasts use: each shuffled in turn\n(bars: the mean rise, lines: "
                 "its spread over shuffles)", fontsize=10)
    return fig


@kept
def plot_permutation_importance(importance: pd.DataFrame, path: Path, model: str) -> Path:
    """covariate_importance.png: :func:`permutation_figure`."""
    return save_figure(permutation_figure(importance, model), path)


@kept
def plot_positional_encoding(matrix: np.ndarray, path: Path, title: str) -> Path:
    """The (window, d_model) positional-encoding matrix added to the projected inputs."""
    fig, ax = _subplots(figsize=(7, 4.5))
    image = ax.imshow(matrix, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_xlabel("encoding dimension (even: sin, odd: cos)")
    ax.set_ylabel("position in the window (k)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="P(k, dimension)")
    return save_figure(fig, path)


@kept
def label_shifts(ax, values: list, gap: float = 10.0) -> list[float]:
    """Vertical offsets (points) that keep labels drawn at ``values`` (data units, the axis limits set) at least
    ``gap`` points apart, the upper of two close ones moved up: two baselines 0.04 apart (linear 1.089, seasonal
    naive 1.045) were written over each other."""
    if not values:
        return []
    points = 72.0 / ax.figure.dpi
    at = [float(ax.transData.transform((0.0, value))[1]) * points if np.isfinite(value) else np.nan for value in values]
    order = [i for i in np.argsort(at) if np.isfinite(at[i])]
    placed = {}
    for i in order:  # bottom up, each at least gap above the one below
        below = max(placed.values(), default=-np.inf)
        placed[i] = max(at[i], below + gap)
    return [placed[i] - at[i] if i in placed else 0.0 for i in range(len(values))]


def plot_bars(labels, means, errors, path: Path, title: str, ylabel: str, reference: dict | None = None) -> Path:
    """Bar chart with error bars (e.g. test RMSE mean +- std over seeds), optional reference lines."""
    fig, ax = _subplots(figsize=(max(5, 1.3 * len(labels) + 2), 4))
    positions = np.arange(len(labels))
    means = np.asarray(means, dtype=float)
    spread = np.nan_to_num(np.asarray(errors, dtype=float))
    # points with their seed spread, not bars: the axis spans the figures (not from 0), so a gap of a few tenths
    # between models is visible; each value is written beside its point
    ax.errorbar(positions, means, yerr=spread, fmt="o", markersize=7, capsize=5, color="tab:blue", zorder=3)
    values = list(means - spread) + list(means + spread) + list((reference or {}).values())
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    pad = (high - low) * 0.12 or abs(high) * 0.05 or 1.0
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    shifts = label_shifts(ax, list((reference or {}).values()))
    for i, (name, value) in enumerate((reference or {}).items()):  # each baseline named at the right, off the data
        style, colour = REFERENCE_STYLES[i % len(REFERENCE_STYLES)]
        ax.axhline(value, linestyle=style, color=colour, linewidth=1.3)
        ax.annotate(f"{name} {number_text(value, 4)}", (1.0, value), xycoords=("axes fraction", "data"),
                    xytext=(4, shifts[i]), textcoords="offset points", va="center", ha="left", fontsize=8,
                    color=colour)
    for position, mean in zip(positions, means):
        ax.annotate(number_text(mean, 4), (position, mean), xytext=(9, 0), textcoords="offset points",
                    va="center", ha="left", fontsize=8)
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=15)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    return save_figure(fig, path)


BACKTEST_SERIES_SHOWN = 6  # a panel's backtest plot draws its first few series, one axes each


@kept
def plot_backtest(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Actual values and the backtest's first-step forecasts (and naive) over time; for a panel (the table's first
    column names the series) one axes per series, the first :data:`BACKTEST_SERIES_SHOWN` of them: drawn as one
    line, the series ran into each other, the line jumping back from one series' end to the next one's start."""
    first = table[table["step"] == 1]
    id_column = table.columns[0] if table.columns[0] != "origin" else None
    time_column = table.columns[list(table.columns).index("origin") + 1]  # the targets' times, as the data names them
    groups = [(None, first)] if id_column is None else \
        [(sid, rows) for sid, rows in first.groupby(id_column, sort=False, observed=True)]
    shown = groups[:BACKTEST_SERIES_SHOWN]
    fig, axes = _subplots(len(shown), 1, figsize=(11, 4 if len(shown) == 1 else 2.6 * len(shown) + 0.8),
                          squeeze=False)
    for ax, (sid, rows) in zip(axes[:, 0], shown):
        x, xlabel = _x_axis(pd.Index(rows[time_column]))
        ax.plot(x, rows["actual"].to_numpy(), color="black", linewidth=1, label="actual")
        ax.plot(x, rows["predicted"].to_numpy(), color="tab:red", linewidth=1, label="forecast (1 step ahead)")
        ax.plot(x, rows["naive"].to_numpy(), color="grey", linewidth=0.8, linestyle=":", label="naive (last value)")
        if sid is not None:
            ax.set_title(str(sid), fontsize=9, loc="left")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("series units")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    more = f" (the first {len(shown)} of {len(groups)} series)" if len(groups) > len(shown) else ""
    if id_column is None:
        axes[0, 0].set_title(title)
    else:
        fig.suptitle(title + more)
        fig.set_layout_engine("constrained")
    return save_figure(fig, path)


@kept
def plot_overlay(actual: pd.Series, forecasts: dict, path: Path, title: str, units: str) -> Path:
    """The actual test part with every model's one-step forecasts overlaid."""
    fig, ax = _subplots(figsize=(11, 4.5))
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
    return save_figure(fig, path)


@kept
def plot_loss_curves(histories: dict, path: Path, title: str, loss="mse") -> Path:
    """Validation (solid) and training (dotted) loss per epoch of several models (``loss``: their training loss,
    or the list of them)."""
    fig, ax = _subplots(figsize=(8, 4.5))
    _integer_epochs(ax)
    for i, (name, history) in enumerate(histories.items()):
        ax.plot(history.index, history["loss"], linestyle=":", color=f"C{i}", label=f"{name} (train)")
        if "val_loss" in history:
            ax.plot(history.index, history["val_loss"], color=f"C{i}", label=f"{name} (validation)")
    _log_if_positive(ax, *[h[c] for h in histories.values() for c in ("loss", "val_loss") if c in h])
    ax.set_xlabel("epoch")
    ax.set_ylabel(loss_label(loss) + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return save_figure(fig, path)


@kept
def plot_series_forecasts(histories: list, futures: list, path: Path, title: str, intervals: list | None = None,
                          history_label: str = "history") -> Path:
    """Recent history and forecast of one series, or of the first few series of a panel (one axis each), with
    ``intervals`` ({level: (lower, upper)} per series) shaded as a fan."""
    count = len(histories)
    fig, axes = _subplots(count, 1, figsize=(10, 3.2 * count + 0.8), squeeze=False)
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
    return save_figure(fig, path)


@kept
def plot_series_grid(panels: list, path: Path, title: str) -> Path:
    """A few series of a panel, each with its history, the model's forecast and the baselines' forecasts.

    Args:
        panels: (caption, history Series, forecast Series, {baseline name: forecast Series}, {level: (lower,
            upper)} intervals of the model or None) per series.
    """
    fig, axes = _subplots(len(panels), 1, figsize=(10, 3.0 * len(panels) + 0.8), squeeze=False)
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
    return save_figure(fig, path)


@kept
def plot_distribution(values: dict, path: Path, title: str, xlabel: str) -> Path:
    """Box plots of a per-series metric for each model (lower is better), with the medians written."""
    fig, ax = _subplots(figsize=(9, 0.6 * len(values) + 2.2))
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
    return save_figure(fig, path)


@kept
def plot_calibration(coverage: dict, path: Path, title: str) -> Path:
    """Empirical coverage on the test part of each model's intervals, one group of bars per model and one bar per
    level, with the nominal level drawn across each bar (bars below their line: intervals too narrow).

    Args:
        coverage: {model label: {level: coverage %}}.
    """
    names = list(coverage)
    levels = sorted({level for points in coverage.values() for level in points})
    fig, ax = _subplots(figsize=(min(11, max(6, 0.7 * len(names) * max(len(levels), 1) + 2.5)), 4.2))
    width = 0.8 / max(len(levels), 1)
    for j, level in enumerate(levels):
        x = np.arange(len(names)) + (j - (len(levels) - 1) / 2) * width
        values = [coverage[name].get(level, np.nan) for name in names]
        bars = ax.bar(x, values, width * 0.92, color=f"C{j}", alpha=0.75, label=f"{level:g}% interval")
        ax.hlines([level] * len(x), x - width / 2, x + width / 2, colors="black", linewidth=1.6)
        for bar, value in zip(bars, values):
            if value == value:  # above the bar and its nominal line
                ax.annotate(f"{value:.0f}", (bar.get_x() + bar.get_width() / 2, max(value, level)), xytext=(0, 3),
                            textcoords="offset points", ha="center", fontsize=8)
    ax.plot([], [], color="black", linewidth=1.6, label="nominal level")
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names, rotation=15)
    ax.set_ylim(0, 110)
    ax.set_ylabel("test values inside the interval (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right", framealpha=0.9)
    ax.grid(alpha=0.3, axis="y")
    return save_figure(fig, path)


# ----------------------------------------------------------------------------------------------------
# The public plot: series, forecasts and their fans on tsattn's (and Nixtla's) long frames
# ----------------------------------------------------------------------------------------------------
def _long(frame, id_col: str, time_col: str, value_col: str | None = None) -> pd.DataFrame | None:
    """A long frame from what predict returns for one series (a Series or a frame indexed by time) or a long one."""
    if frame is None:
        return None
    if isinstance(frame, pd.Series):
        name = frame.name if frame.name is not None else (value_col or "forecast")
        frame = frame.rename(name).to_frame()
    if id_col not in frame.columns:
        frame = frame.reset_index()
        frame = frame.rename(columns={frame.columns[0]: time_col})
        frame.insert(0, id_col, "series")
    return frame


def _interval_columns(columns, model: str) -> dict:
    """{level: (lo column, hi column)} of ``model`` among ``columns``."""
    out = {}
    for column in columns:
        prefix = f"{model}-lo-"
        if str(column).startswith(prefix):
            level = str(column)[len(prefix):]
            if f"{model}-hi-{level}" in columns:
                out[float(level)] = (column, f"{model}-hi-{level}")
    return out


def plot_series(df=None, forecasts_df=None, ids=None, level=None, models=None, max_ids: int = 4,
                max_insample_length: int | None = None, id_col: str = "unique_id", time_col: str = "ds",
                target_col: str = "y", title: str | None = None) -> Figure:
    """Series with forecasts and their intervals, one panel per series: utilsforecast's ``plot_series`` for
    tsattn's and NeuralForecast's frames. Returns a :class:`matplotlib.figure.Figure` (shown by a notebook;
    ``fig.savefig(path)`` writes it).

    Args:
        df: the actual values: a long frame ``unique_id, ds, y`` (values after the forecasts' start are drawn
            as the actuals they are forecasting) or one Series.
        forecasts_df: forecasts as :meth:`tsattn.Forecaster.predict` or ``cross_validation`` return them (a long
            frame with one column per model and ``<model>-lo-80`` interval columns; a ``cutoff`` column draws
            every window apart, with a dashed line at its cutoff), or one Series / frame indexed by time.
        ids: the series to draw (default: the first ``max_ids`` of the forecasts, else of ``df``).
        level: interval levels to shade (default: every level the forecasts hold).
        models: the forecast columns to draw (default: every one).
        max_insample_length: draw at most this many values of history before each series' first forecast.
        id_col, time_col, target_col: the frames' columns.
        title: a title over the figure.
    """
    df = _long(df, id_col, time_col, target_col)
    if df is not None and target_col not in df.columns:
        df = df.rename(columns={[c for c in df.columns if c not in (id_col, time_col)][0]: target_col})
    forecasts = _long(forecasts_df, id_col, time_col)
    if df is None and forecasts is None:
        raise ValueError("plot_series needs df (the actual values), forecasts_df, or both")
    if forecasts is not None and df is not None and (forecasts[id_col] == "series").all() and \
            df[id_col].nunique() == 1:
        forecasts[id_col] = df[id_col].iloc[0]  # one series' forecast and its history
    if models is None and forecasts is not None:
        models = [c for c in forecasts.columns if c not in (id_col, time_col, "cutoff", target_col)
                  and "-lo-" not in str(c) and "-hi-" not in str(c)]
    models = list(models or [])
    source = forecasts if forecasts is not None else df
    available = pd.unique(source[id_col])
    first = ids is None
    if first:
        ids = list(available)[:max_ids]
    ids = list(ids)
    if not ids:
        raise ValueError("no series to plot")
    if title and first and len(ids) < len(available):  # a panel's first few: said (as plot_backtest does)
        title = f"{title} (the first {len(ids)} of {len(available)} series)"
    columns = 1 if len(ids) <= 2 else 2
    rows = -(-len(ids) // columns)
    fig, axes = _subplots(rows, columns, figsize=(7.5 * columns, 2.9 * rows + (0.5 if title else 0.2)),
                          layout="constrained", squeeze=False)
    colours = {model: f"C{(i + 1) % 10}" for i, model in enumerate(models)}
    for k, sid in enumerate(ids):
        ax = axes[k // columns, k % columns]
        mine = None if forecasts is None else forecasts[forecasts[id_col].astype(str) == str(sid)]
        start = None if mine is None or mine.empty else mine[time_col].min()
        if df is not None:
            actual = df[df[id_col].astype(str) == str(sid)].sort_values(time_col)
            if max_insample_length is not None and start is not None:
                before = actual[actual[time_col] < start]
                actual = pd.concat([before.tail(max_insample_length), actual[actual[time_col] >= start]])
            elif max_insample_length is not None:
                actual = actual.tail(max_insample_length)
            x, _ = _x_axis(pd.Index(actual[time_col]))
            ax.plot(x, actual[target_col].to_numpy(dtype=float), color="black", linewidth=1, label="actual")
        if mine is not None and not mine.empty:
            windows = [w for _, w in mine.groupby("cutoff", sort=True)] if "cutoff" in mine.columns else [mine]
            for w, window in enumerate(windows):
                window = window.sort_values(time_col)
                x, _ = _x_axis(pd.Index(window[time_col]))
                for model in models:
                    intervals = _interval_columns(window.columns, model)
                    shown = {lv: cols for lv, cols in intervals.items()
                             if level is None or any(abs(lv - float(want)) < 1e-9 for want in np.atleast_1d(level))}
                    fan(ax, x, {lv: (window[lo].to_numpy(dtype=float), window[hi].to_numpy(dtype=float))
                                for lv, (lo, hi) in shown.items()}, colours[model], model)
                    ax.plot(x, window[model].to_numpy(dtype=float), color=colours[model], linewidth=1.4,
                            marker="o" if len(window) <= 24 else None, markersize=2.5, label=model)
                if "cutoff" in window.columns:
                    ax.axvline(_x_axis(pd.Index(window["cutoff"].iloc[:1]))[0][0], color="grey", linestyle="--",
                               linewidth=0.8, label="cutoff")
        ax.set_title(str(sid), fontsize=10)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    for k in range(len(ids), rows * columns):
        axes[k // columns, k % columns].set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    if unique:
        fig.legend(unique.values(), unique.keys(), loc="outside lower center", ncol=min(len(unique), 6), fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    return literal_text(concise_dates(fig))

"""Training losses in one place: what each one is, how wide the output head it needs is, how the point
forecast is read from that head, and whether it needs a per-series scale.

    spec = get_loss("quantile")
    quantiles = loss_quantiles("quantile", None, levels=(80,))   # (0.1, 0.5, 0.9)
    spec.output_width(horizon=18, quantiles=quantiles)           # 54: the head is sized by the loss
    spec.keras_loss(quantiles)                                   # what model.compile takes

A new loss is one entry of :data:`LOSSES` (and, if Keras has none, one ``keras.losses.Loss`` class in
:mod:`tsattn.layers`); the model builders read only the output width. Importing this module does not import
TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError

DEFAULT_QUANTILES = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class LossSpec:
    """A training loss: its name, a one-line description, whether its head outputs quantiles, and whether it
    needs each window's series scale (offset, scale and MASE scale packed beside the target: sMAPE, MAPE and
    MASE are computed in series units)."""

    name: str
    description: str
    quantile: bool = False
    needs_scale: bool = False

    def output_width(self, horizon: int, quantiles=None) -> int:
        """Outputs of the network's last Dense layer: one per step, times the quantiles of a quantile loss."""
        return horizon * (len(quantiles) if self.quantile and quantiles else 1)

    def keras_loss(self, quantiles=None):
        """The object (or Keras name) that ``model.compile(loss=...)`` takes."""
        if self.quantile:
            from .layers import PinballLoss

            return PinballLoss(quantiles)
        if self.needs_scale:
            from .layers import SeriesUnitsLoss

            return SeriesUnitsLoss(self.name)
        return self.name


LOSSES: dict[str, LossSpec] = {spec.name: spec for spec in (
    LossSpec("mse", "mean squared error on scaled values"),
    LossSpec("mae", "mean absolute error on scaled values"),
    LossSpec("huber", "Huber loss on scaled values (squared near 0, absolute beyond 1)"),
    LossSpec("quantile", "pinball loss over the quantiles (the head outputs one value per step and quantile)",
             quantile=True),
    # the metric itself as the loss, in series units (each window's target comes with its series' scaler offset
    # and scale and its MASE scale): what N-BEATS trains on
    LossSpec("smape", "M3's sMAPE in series units (denominator without gradient)", needs_scale=True),
    LossSpec("mape", "MAPE in series units", needs_scale=True),
    LossSpec("mase", "MASE: absolute error over the series' in-sample seasonal-naive MAE", needs_scale=True),
)}


def get_loss(name: str) -> LossSpec:
    if name not in LOSSES:
        raise ConfigError(f"loss must be one of {', '.join(LOSSES)}; got {name!r}")
    return LOSSES[name]


def loss_quantiles(loss: str, quantiles=None, levels=()) -> tuple | None:
    """The quantiles a model trained with ``loss`` outputs (None unless the loss is a quantile loss), checked:
    the given ones, else each level's bounds, else 0.1, 0.5, 0.9; the median is always among them (it is the
    point forecast)."""
    from .intervals import check_levels, check_quantiles, level_name, missing_levels, quantiles_for_levels

    levels = check_levels(levels)
    if not get_loss(loss).quantile:
        if quantiles is not None:
            raise ConfigError(f"quantiles is used with loss=quantile only; got loss={loss} (set loss=quantile "
                              "or drop quantiles)")
        return None
    if quantiles is None:
        return quantiles_for_levels(levels) if levels else DEFAULT_QUANTILES
    quantiles = tuple(sorted(set(check_quantiles(quantiles)) | {0.5}))
    missing = missing_levels(levels, quantiles)
    if missing:
        needed = ", ".join(f"{q:g}" for level in missing for q in quantiles_for_levels([level]) if q not in quantiles)
        raise ConfigError(f"level {level_name(missing[0])} needs quantiles {needed}, which quantiles="
                          f"{','.join(f'{q:g}' for q in quantiles)} lacks; add them or drop quantiles (the levels "
                          "then choose them)")
    return quantiles

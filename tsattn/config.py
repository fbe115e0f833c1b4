"""Run settings, resolved and checked once at the edge: :class:`RunConfig`, the tutorial presets, every setting's
range, and how settings become data, windows and a split.

    config = preset_config(None, model="simple-rnn", epochs=5)   # defaults + overrides, unknown keys refused
    config, panel = resolve(config)           # checked once; the dataset or CSV it names (or data=...); settled
    data = window_config(panel, config)                          # windows, split and per-series scalers

The CLI, ``tsattn.Forecaster``, compare, the benchmarks and (later) a tuner all go through these functions,
so the same settings mean the same windows everywhere. Importing this module does not import TensorFlow.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import checks as C
from . import metrics as M
from .baselines import (AUTO_COMBINATIONS, BASELINES, LINEAR_FITS, baseline_learns, require_ets_scale,
                        statistical_keys)
from .covariates import KINDS as COVARIATE_KINDS, Covariates, check_covariates
from .data import FILL_METHODS, check_exog_columns, load_dataset
from .errors import ConfigError, DataError, TooShortError
from .intervals import INTERVAL_SCALE_SETTINGS, INTERVAL_SCORES
from .losses import LOSSES, get_loss, loss_quantiles
from .panel import Panel, as_panel, check_freq, read_csv_panel
from .specs import ENSEMBLE_METHODS, MODELS, get_spec, model_hint
from .windows import SCALER_FITS, SCALINGS, SPLITS as SPLIT_METHODS, SplitSpec, WindowedPanel, window_panel

LR_SCHEDULES = ("constant", "warmup-cosine", "warmup-inverse-sqrt", "halving")
SKIP_INITS = ("auto", "least-squares", "least-squares+zero-output", "cross-series", "zeros")


# ----------------------------------------------------------------------------------------------------
# The narrow parts a checked RunConfig resolves into: each lower layer receives only its own
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NetworkPart:
    """Which network: a registered model, its checked parameters, and whether its spec allows XLA."""

    model: str
    params: dict
    xla: bool


@dataclass(frozen=True)
class LossPart:
    """The training loss, for a quantile loss its quantiles (they size the head), and the season of a MASE loss's
    scale (the fit path sets the data's season)."""

    name: str
    quantiles: tuple | None
    season: int = 1


@dataclass(frozen=True)
class TrainingPart:
    """How a network is trained: optimiser, schedule, early stopping, seed, compilation, start, ensemble."""

    epochs: int
    batch_size: int
    learning_rate: float
    lr_schedule: str
    warmup_epochs: int
    early_stopping: bool
    patience: int
    seed: int
    jit_compile: bool | str
    steps_per_execution: int
    skip_init: str
    ensemble: int
    ensemble_method: str
    sampled_steps: int | None = None
    max_passes: int | None = None
    sample_by: str = "window"
    clip_scope: str = "variable"
    clipnorm: float | None = None
    covariate_lags: int | str = "auto"
    ensemble_lookbacks: tuple | None = None
    ensemble_losses: tuple | None = None
    keep_start: bool = False

    def member(self, index: int) -> "TrainingPart":
        """Ensemble member ``index`` of one lookback and loss: one model, seeded seed + index."""
        return dataclasses.replace(self, ensemble=1, ensemble_lookbacks=None, ensemble_losses=None,
                                   seed=(self.seed + index) % (C.SEED_MAX + 1))

    def members(self, horizon: int, window: int, loss: str) -> list[tuple[int, str, int]]:
        """Every member of the ensemble as (window, loss, seed offset): lookbacks x losses x seeds, the longest
        lookback first (its first member is the one whose attention a report shows)."""
        windows = sorted({max(2, lookback * horizon) for lookback in self.ensemble_lookbacks}, reverse=True) \
            if self.ensemble_lookbacks else [window]
        losses = list(self.ensemble_losses) if self.ensemble_losses else [loss]
        return [(w, name, seed) for w in windows for name in losses for seed in range(self.ensemble)]

    @property
    def is_ensemble(self) -> bool:
        return self.ensemble > 1 or bool(self.ensemble_lookbacks) or bool(self.ensemble_losses)


@dataclass
class RunConfig:
    """Everything that defines one training run (written to config.json, enough to rerun it)."""

    model: str = "attention-rnn"
    model_params: dict = field(default_factory=dict)
    dataset: str | None = "sunspots"
    dataset_options: dict = field(default_factory=dict)
    csv: str | None = None
    column: str | None = None
    date_column: str | None = None
    id_column: str | None = None
    fill: str | None = None
    freq: str | int | None = None    # the frequency the data follows ("MS", "QS", ...; an integer step), when known;
                                     # None: inferred from the timestamps
    window: int | None = None        # None: DEFAULT_WINDOW, shortened so every series can be forecast
    lookback: int | None = None      # the window in horizons (window = lookback * horizon), as N-BEATS gives it
    pad: bool = False                # windows may start before their series (at least one real value), padded with
                                     # its first value: short series train and are forecast (N-BEATS pads)
    masked_targets: bool = False     # also train on windows whose targets run past the end of the training part (at
                                     # least one inside), the missing targets masked out of the loss (N-BEATS' sampler)
    history: int | None = None       # train only on windows whose targets lie in the last `history` horizons of
                                     # each series' training part (N-BEATS' L_H); None: every training window
    horizon: int = 1                 # unless given (by name here, updated(), the CLI, Forecaster), data with a hold-out
                                     # gives its own (M3, M1, the covariate sets: attrs["horizon"]; resolve)
    stride: int = 1
    split: str = "auto"
    train_fraction: float = 0.7
    validation_fraction: float = 0.1
    within_parts: bool = False
    shuffle_seed: int = 13
    holdout: int | None = None
    validation_windows: int = 1      # hold-out splits: the validation part is this many horizons at the end of each
                                     # series before the test part, cut into rolling windows one step apart
                                     # ((k - 1) x horizon + 1 per series): more forecasts calibrate the intervals and
                                     # choose the epochs; with the final fit the model still trains on them
    scaling: str = "minmax"
    scaler_fit: str = "train"
    epochs: int = 200
    batch_size: int = 32
    learning_rate: float = 1e-3
    lr_schedule: str = "constant"    # constant, warmup-cosine, warmup-inverse-sqrt or halving (N-BEATS: halved
                                     # after each third of the epochs x steps)
    clipnorm: float | None = None    # clip each gradient to this norm (N-BEATS clips at 1.0); None: no clipping
    clip_scope: str = "variable"     # clipnorm per variable's gradient ("variable"), or of all gradients together
                                     # ("global": torch's clip_grad_norm_, as the N-BEATS authors clip)
    warmup_epochs: int = 5
    early_stopping: bool = True
    patience: int = 20
    keep_start: bool = False         # early stopping may keep the starting weights (epoch 0: the least-squares start)
                                     # when no trained epoch beats them on the validation loss; false: the best
                                     # trained epoch, even when training only made the start worse
    final_fit: bool = False          # once the validation part has chosen the epochs (early stopping) and calibrated
                                     # the intervals, train the model again on training + validation values with
                                     # those choices, so the forecast sees the most recent values (NeuralForecast,
                                     # N-BEATS); false: the model fitted on the training part only. Per preset,
                                     # chosen on validation data (benchmarks/results/final_fit.md): classic false
                                     # (worse for every network on sunspots), the N-BEATS recipe true
    clip_intervals: bool = True      # forecasts and intervals (and plotted fans) of data whose fitted values are
                                     # all >= 0 are clipped at zero, as counts and sales cannot go below it (a
                                     # forecast never lies below its own band); false keeps them
    interval_scale: str = "blend"    # conformal scores are errors divided by each series' seasonal-naive MAE over
                                     # every value up to each forecast's origin ("expanding"), every value before the
                                     # test part ("insample": tsattn's scale before this setting; a validation score
                                     # is scaled on values after its origin too), the last 3 seasons / 2 horizons
                                     # before the origin ("recent") or the mean of expanding and recent ("blend");
                                     # chosen before M3's and M1's hold-outs (benchmarks/results/intervals_scale.md);
                                     # "ets" (per step, sqrt(blend x AutoETS's deviation)) or "auto" (blend or ets,
                                     # whichever scores better on the validation forecasts: tsattn.intervals)
    interval_scores: str = "absolute"  # a conformal score is the scaled absolute error, a band symmetric about the
                                     # forecast ("absolute"), or the scaled signed error, each side of the band from
                                     # its own tail ("signed"; Darts' symmetric=False): tsattn.intervals.INTERVAL_SCORES
    seed: int = 0
    season: int | None = None
    jit_compile: bool | str = "auto"  # XLA: true, false, or auto (on from XLA_MIN_STEPS training steps per epoch)
    steps_per_execution: int = 32
    skip_init: str = "auto"          # auto: least-squares, or with covariates least-squares+zero-output (chosen on
                                     # validation: benchmarks/results/covariates_defaults.md), or for the
                                     # recurrent networks and the transformer on a panel under the classic settings
                                     # cross-series (the least-squares start shrunk by leave-one-series-out ridge:
                                     # _data_rules);
                                     # least-squares, least-squares+zero-output, cross-series or zeros name one
    covariate_lags: int | str = "auto"  # the least-squares start with future-known covariates regresses each
                                     # forecast step on their values at that step and at this many steps before it;
                                     # auto: 0, 3 or 6, chosen on the training part's last windows (chosen on
                                     # validation against 0: benchmarks/results/covariates_lags_auto.md)
    linear_fit: str = "pooled"
    baselines: list = field(default_factory=list)  # statistical baselines beside the always-on ones
    ensemble: int = 1                # members trained with seeds seed, seed + 1, ...; one combined model
    ensemble_method: str = "median"  # how members' forecasts are combined
    auto_combination: str = "weighted"  # model auto's combination candidate: the mean of its best three candidates
                                     # weighted by the inverse of each one's validation score, their median
                                     # ("median", the rule before), or "auto": both, the lower validation score
                                     # kept; tsattn.baselines.AUTO_COMBINATIONS. Chosen before
                                     # the M3 hold-outs at two origins, 3 seeds: -0.09 sMAPE over 3003 series, lower
                                     # on every frequency (benchmarks/results/auto_combination_o*.md)
    ensemble_lookbacks: list | None = None  # members with these lookbacks (in horizons; each x `ensemble` seeds);
                                            # the window is the longest, each member reads its last steps
    ensemble_losses: list | None = None     # members trained with each of these point losses (x lookbacks x seeds)
    sampled_steps: int | None = None  # an epoch = this many batches of windows drawn with replacement (seeded), as
                                      # N-BEATS trains, rounded up to whole calls of steps_per_execution (Keras runs
                                      # whole calls on an endless stream: 100 at 32 a call trains 128; 32 or fewer
                                      # exactly); None: every training window once per epoch
    sample_by: str = "window"         # with sampled_steps: draw windows uniformly ("window"), or a series uniformly
                                      # then one of its windows ("series", the N-BEATS authors' sampler)
    max_passes: int | None = None     # with sampled_steps: fewer batches per epoch when epochs x sampled_steps batches
                                      # would draw more than max_passes times the training windows (few windows,
                                      # short series: a big model memorises them); None: no cap
    loss: str = "mse"                # training loss on scaled values: mse, mae, huber or quantile (pinball)
    quantiles: list | None = None    # loss=quantile: the quantiles (default: from level, else 0.1, 0.5, 0.9)
    level: list = field(default_factory=list)  # interval levels in percent (e.g. [80, 95]): lo-80 / hi-80 ...
    preset: str | None = "auto"      # the preset these settings started from (PRESETS), recorded; "auto": chosen
                                     # from the data's shape when it is fitted (auto_preset), then recorded by name
    given: list = field(default_factory=list)  # the settings given explicitly (named to RunConfig(...) or
                                               # updated()): a preset chosen automatically never replaces them
    hist_exog: list | None = None    # past-observed covariate columns (known up to each forecast origin)
    futr_exog: list | None = None    # future-known covariate columns (known for the forecast steps too)
    stat_exog: list | None = None    # static feature columns (one row per series, in static_csv / static_df)
    calendar: list | None = None     # calendar features generated from the timestamps (month, dayofweek, ...)
    static_csv: str | None = None    # a CSV of static features: unique_id (or id_column) and the stat_exog columns

    def covariates(self):
        """A fresh, unfitted :class:`tsattn.covariates.Covariates` of these settings, or None without covariates."""
        return Covariates.of(self.hist_exog, self.futr_exog, self.stat_exog, self.calendar)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def normalised(self) -> "RunConfig":
        """A copy with values accepted in several forms written in the one form runs record: covariate names as
        lists (``"a,b"`` from the CLI becomes ``["a", "b"]``) and a pandas frequency as its text (``"MS"``).
        Assumes nothing: a value that cannot be read this way is left for :func:`check_config` to refuse."""
        changes = {}
        try:
            changes.update({name: list(value) or None for name, value in zip(
                COVARIATE_KINDS, check_covariates(self.hist_exog, self.futr_exog, self.stat_exog, self.calendar))})
        except ConfigError:
            pass
        try:
            freq = check_freq(self.freq)
            if freq is not None and not isinstance(freq, int):
                changes["freq"] = freq.freqstr  # recorded as text (run.json, artefacts)
        except ConfigError:
            pass
        return dataclasses.replace(self, model_params=dict(self.model_params),
                                   dataset_options=dict(self.dataset_options), **changes)

    def parts(self) -> tuple[NetworkPart, LossPart, TrainingPart]:
        """The network, loss and training parts of these (checked) settings: what training receives."""
        spec = get_spec(self.model)
        training = TrainingPart(**{f.name: getattr(self, f.name) for f in dataclasses.fields(TrainingPart)})
        training = dataclasses.replace(training, **{name: tuple(getattr(self, name)) if getattr(self, name) else None
                                                    for name in ("ensemble_lookbacks", "ensemble_losses")})
        return (NetworkPart(self.model, self.resolved_model_params(), spec.xla),
                LossPart(self.loss, loss_quantiles(self.loss, self.quantiles, self.level), self.season or 1), training)

    @property
    def is_baseline(self) -> bool:
        """True when the model is a baseline (naive, seasonal-naive, linear, a statistical method): fitted, not
        trained, through the same interface and fit path as the networks."""
        return self.model in BASELINES

    def resolved_model_params(self) -> dict:
        """Every parameter of the model: those given, the model's defaults for the rest. One default depends on the
        data: with covariates a model's head is ``skip="linear"`` unless the run sets it, so the least-squares start
        regresses each forecast step on the window and the covariates and training starts there (the naive head has
        no linear part, the relative one regresses on the window relative to its last value; chosen on validation
        with each model: benchmarks/results/covariates_heads.md, covariates_nbeats.md, covariates_tft_skip3.md).
        With covariates the skip path also reads the window in the data's units (``skip_units="data"``, a change
        only under a window normalisation: tft's and patch-transformer's instance normalisation), so that start is the
        least-squares forecast itself (with covariates, mean selection sMAPE on the horizon before each set's hold-out,
        3 seeds: tft 9.88 against 14.03, patch-transformer 15.56 against 16.88; the other networks, unnormalised,
        unchanged: benchmarks/results/covariates_skip_units.md). A baseline has none."""
        if self.is_baseline or self.model == "auto":
            return {}
        spec = get_spec(self.model)
        params = dict(self.model_params)
        if self.covariates() is not None:
            for name, value in (("skip", "linear"), ("skip_units", "data")):
                if name not in params and name in spec.params:
                    params[name] = value
        return spec.resolve(params)

    @classmethod
    def fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def updated(self, **changes) -> "RunConfig":
        """A copy with ``changes``; keys that are not run settings but parameters of the model go to
        ``model_params`` (a ``model.`` prefix forces that). Unknown keys are refused. ``preset=NAME`` first applies
        that preset's settings (:data:`PRESETS`; its model parameters that the model takes), then the other
        changes, so ``updated(preset="nbeats-recipe", epochs=20)`` is the recipe with 20 epochs."""
        config = dataclasses.replace(self, model_params=dict(self.model_params),
                                     dataset_options=dict(self.dataset_options))
        changes = canonical(changes)
        for key in ("dataset_options", "model_params"):  # tables: a value that is not one is named, not a TypeError
            if key in changes and not isinstance(changes[key], dict):
                raise ConfigError(f"{key} must be a table of settings, e.g. {key}={{\"n\": 100}} (JSON, quoted "
                                  f"keys); got {changes[key]!r}")
        if changes.get("preset") is not None:
            config = config._with_preset(changes.pop("preset"), changes.get("model"))
        if changes.get("ensemble_lookbacks") and "lookback" not in changes:
            config.lookback = None  # the members' lookbacks replace a lookback set before (e.g. by a preset)
        if changes.get("window") is not None and "lookback" not in changes:
            config.lookback = None  # a window replaces a lookback set before (e.g. by a preset), and the reverse
        if changes.get("lookback") is not None and "window" not in changes:
            config.window = None
        model_keys = set(params_of(changes.get("model", config.model)))
        for key, value in changes.items():
            if key.startswith("model."):
                config.model_params[key[len("model."):]] = value
            elif key in config.fields():
                setattr(config, key, value)
            elif key in model_keys:
                config.model_params[key] = value
            else:
                takes = f"{config.model} parameters: {', '.join(sorted(model_keys))}" if model_keys else \
                    f"{config.model} takes no model parameters" + \
                    (" (it chooses among models, each at its defaults)" if config.model == "auto" else "")
                owners = [name for name, spec in MODELS.items() if key in spec.params]
                if owners:  # another model's parameter: say so first, not after sixty run settings
                    raise ConfigError(f"{key!r} is a parameter of {', '.join(owners)}, not of {config.model}; {takes}")
                hint = did_you_mean(key, [*self.fields(), *model_keys])
                if hint:  # the one likely name, not a list of sixty
                    raise ConfigError(f"unknown setting {key!r} for {config.model}{hint} (every setting: docs/api.md)")
                raise ConfigError(f"unknown setting {key!r}; run settings: {', '.join(self.fields())}; {takes}")
        named = {key[len("model."):] if key.startswith("model.") else key for key in changes} - {"preset", "given"}
        config.given = sorted(set(config.given) | set(changes.get("given") or ()) | named)
        return config


    def _with_preset(self, name, model: str | None) -> "RunConfig":
        if not isinstance(name, str) or name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; available: {', '.join(PRESETS)}")
        settings = dict(PRESETS[name])
        model = model or settings.pop("model", None) or self.model
        settings.pop("model", None)
        settings.update(PRESET_MODEL_SETTINGS.get(name, {}).get(model, {}))
        accepted = params_of(model)
        # a model that normalises its windows itself (patch-transformer: instance normalisation) keeps its own under a
        # preset for any model (the recipe); a preset of one model's exact setup (a tutorial's) sets it too
        own = {"normalise"} if "model" not in PRESETS[name] and model in MODELS and \
            get_spec(model).params["normalise"].default != "none" else set()
        params = {**self.model_params, **{k: v for k, v in settings.pop("model_params", {}).items()
                                          if k in accepted and k not in own}}
        return dataclasses.replace(self, **settings, model=model, model_params=params, preset=name)


def _recording_given(init):
    """RunConfig's constructor, recording the settings it is given by name in ``given`` (as :meth:`RunConfig.updated`
    does), so ``RunConfig(horizon=1)`` or ``RunConfig(early_stopping=True)`` keeps its value where the data's hold-out
    or an automatic preset would otherwise choose one, although the value is the default's. A named preset is applied
    as :meth:`RunConfig.updated` applies it, the other settings named beside it winning: ``RunConfig(model="nbeats",
    preset="nbeats-recipe", epochs=8)`` is ``RunConfig(model="nbeats").updated(preset="nbeats-recipe", epochs=8)``
    (before, the constructor recorded the preset's name over the default settings: a run said "nbeats-recipe" and
    trained by the classic ones). A call that passes ``given`` itself (``dataclasses.replace``, an artefact's saved
    settings) states every setting and is taken as it is."""
    names = RunConfig.fields()  # in the constructor's order (every field is an init field)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        named = set(names[:len(args)]) | set(kwargs)
        if "given" in named:
            return
        if "preset" in named and isinstance(self.preset, str) and (PRESETS.get(self.preset) or
                                                                   PRESET_MODEL_SETTINGS.get(self.preset)):
            changes = {key: getattr(self, key) for key in named - {"preset", "given", "model_params"}}
            applied = RunConfig().updated(preset=self.preset, **changes)
            if "model_params" in named:  # the named parameters over the preset's (updated() would replace them all)
                applied.model_params.update(self.model_params)
            for key in names:
                setattr(self, key, getattr(applied, key))
        self.given = sorted(set(self.given) | (named - {"preset", "given"}))
    return __init__


RunConfig.__init__ = _recording_given(RunConfig.__init__)


# Presets: the tutorials' exact setups, and N-BEATS' training recipe for any model (benchmarks/results/recipe.md);
# every option can still be overridden one by one.
NBEATS_RECIPE = {
    # each model keeps its own head (nbeats: last value + network) and its own normalisation where it has one
    # (patch-transformer's instance normalisation: M3 quarterly validation sMAPE 9.63 against 11.72 with window's)
    "model_params": {"normalise": "window"},
    "scaling": "none", "loss": "smape", "lookback": 2, "history": 20, "sampled_steps": 100, "batch_size": 1024,
    "epochs": 4, "lr_schedule": "halving", "clipnorm": 1.0, "early_stopping": False,
    # "400 sampled batches" (4 epochs of 100; Keras trains 4 x 128 = 512 where 100 batches fit the max_passes cap:
    # whole calls of steps_per_execution=32, see sampled_steps; the halving thirds are of 400), half the authors'
    # budget (800, which trained 1024 the same way): chosen on the values before each M3 hold-out,
    # 3 seeds, 400 minus 800 over all 3003 series: nbeats -0.03, patch-transformer -0.01, simple-rnn -0.035,
    # attention-rnn +0.009, all within the seed spread, in half the time (benchmarks/results/recipe_budget*.md), and
    # one horizon earlier nbeats -0.084 (recipe_budget_origin2.md; on the hold-outs nbeats went the other way)
    # at most 20 draws of each training window: short series (M3 yearly, 10 windows a series) were drawn 122 times
    # and nbeats memorised them (validation sMAPE 21.50, naive 21.45; 19.96 capped); chosen on the values before
    # M3's hold-outs (benchmarks/results/max_passes.md); M3 monthly (9 draws) is unchanged
    "max_passes": 20,
    # train again on training + validation values once the validation part has calibrated the intervals (the
    # recipe has no early stopping): chosen on the values before M3's hold-outs (benchmarks/results/final_fit.md)
    "final_fit": True,
}
PRESETS: dict[str, dict[str, Any]] = {
    # the default: classic for one series or a short horizon, the N-BEATS recipe (padded) for a panel of many series
    # with a horizon of several steps, chosen when the data is fitted (auto_preset; benchmarks/results/auto_defaults.md)
    "auto": {},
    # tsattn's settings for one long series: per-series min-max scaling, epochs over every training window with early
    # stopping on the validation part, an automatic window (the RunConfig defaults themselves)
    "classic": {},
    "tutorial-sunspots": {
        "model": "simple-rnn",
        "model_params": {"units": 3, "activation": "tanh", "output_activation": "tanh", "skip": "none",
                         "center": "none"},
        "dataset": "sunspots", "window": 12, "stride": 12, "within_parts": True, "split": "chronological",
        "train_fraction": 0.8, "validation_fraction": 0.0, "scaler_fit": "all", "scaling": "minmax",
        "epochs": 20, "batch_size": 1, "early_stopping": False, "learning_rate": 1e-3,
    },
    "tutorial-fibonacci": {
        "model": "attention-rnn",
        "model_params": {"units": 2, "activation": "tanh", "output_activation": "tanh", "skip": "none",
                         "center": "none"},
        "dataset": "fibonacci", "dataset_options": {"n": 1200}, "window": 20, "stride": 1, "split": "shuffled",
        "shuffle_seed": 13, "train_fraction": 0.7, "validation_fraction": 0.0, "scaler_fit": "all",
        "scaling": "minmax", "epochs": 30, "batch_size": 1, "early_stopping": False, "learning_rate": 1e-3,
    },
    # the transformer tutorial's encoder (sinusoidal positional encoding, multi-head self-attention, the ReLU
    # feed-forward network, the last step's vector -> Dense) and its learning-rate warm-up with inverse-square-root
    # decay, on the raw scaled window (no instance normalisation, no skip path), dropout 0.1 as in the tutorial
    "tutorial-transformer": {
        "model": "transformer",
        "model_params": {"d_model": 32, "num_heads": 4, "ff_dim": 64, "num_blocks": 2, "dropout": 0.1,
                         "pooling": "last", "positional": "sinusoidal", "causal": False, "output_activation": "linear",
                         "skip": "none", "center": "none", "normalise": "none"},
        "dataset": "sunspots", "window": 24, "lr_schedule": "warmup-inverse-sqrt", "warmup_epochs": 5,
    },
    # N-BEATS' recipe (Oreshkin et al. 2020; ServiceNow/N-BEATS experiments/m3): the window over its largest value,
    # the sMAPE loss, a window of 2 horizons, training windows from the last 20 horizons, 400 sampled batches (the
    # authors' 800 halved, above) of 1024 (fewer when that would draw each training window more than 20 times) with
    # the rate halved in thirds and gradients clipped
    "nbeats-recipe": NBEATS_RECIPE,
}
# settings a preset gives one model only, over the preset's own (a setting named beside the preset still wins)
PRESET_MODEL_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    # masked targets (also train on the windows whose targets run past the end of the training part, those targets
    # masked out of the loss: the N-BEATS authors' sampler) for nbeats: chosen on the values before M3's hold-outs at
    # two origins, seeds 0-2, rule written before the runs: -0.172 validation sMAPE over 3003 series, no frequency
    # worse by more than 0.05 (benchmarks/results/masked_targets_nbeats*.md); the other networks lose with them
    # (masked_targets_networks.md)
    # interval_scale auto for auto (its conformal scores in blend or in sqrt(blend x AutoETS's deviation), whichever
    # gives the lower interval score on its own validation forecasts, cross-fitted over series): chosen on the values
    # before the M3 and M1 monthly hold-outs at two origins, auto seeds 0-2, rule written before the second: MSIS
    # 0.982 / 0.976 of blend's at 80% / 95% one horizon before, 0.975 / 0.959 two horizons before, no set worse by
    # more than 0.6%, no coverage gap growing by more than 1 point on the mean of the two origins (M3 monthly's 80%
    # +1.04 at the first, +0.78 at the second; benchmarks/results/intervals_scale_choice_auto*.md)
    "nbeats-recipe": {"nbeats": {"masked_targets": True}, "auto": {"interval_scale": "auto"}},
}


AUTO_MIN_SERIES = 40    # a panel of at least this many series with a horizon of 2 or more trains by the N-BEATS recipe
AUTO_MIN_HORIZON = 2    # (both chosen on validation data: benchmarks/results/auto_defaults.md)


def auto_preset(panel: Panel, horizon: int) -> tuple[str, dict]:
    """The preset the default settings (``preset="auto"``) take for data of this shape, and its extra settings.

    A panel of many series forecast several steps ahead trains by N-BEATS' recipe (each window over its largest
    value, the sMAPE loss, a window of 2 horizons from the last 20 horizons of each series, sampled batches), padded
    so that series shorter than a window are still forecast; one series, a few, or one-step forecasts train by the
    classic settings (per-series scaling, epochs over every window, early stopping). Chosen on the values before the
    hold-outs of M3 and sunspots (benchmarks/auto_defaults.py), never by a dataset's name. The classic settings do
    not pad a panel of mixed lengths (its automatic window follows the shortest series): padding the shorter series
    and taking the window from the median series was worse before the M3 hold-outs on three of four frequencies
    (benchmarks/results/ragged.md).
    """
    if panel.n_series >= AUTO_MIN_SERIES and horizon >= AUTO_MIN_HORIZON:
        return "nbeats-recipe", {"pad": True}
    return "classic", {}


def settle(config: RunConfig, panel: Panel) -> RunConfig:
    """``config`` with ``preset="auto"`` replaced by the preset :func:`auto_preset` chooses for ``panel``, keeping every
    setting given explicitly (``config.given``) or set away from its default; any other preset is returned as it is.
    Masked targets a preset turned on (not named by the user) are turned off where there are future-known covariates:
    a window whose targets run past the end of the data would read their unknown values.
    Every fit path calls this once the data is known, before :func:`window_config`."""
    settled = data_model_settings(_settled_preset(config, panel), panel)
    if settled.masked_targets and settled.futr_exog and "masked_targets" not in settled.given:
        settled = dataclasses.replace(settled, masked_targets=False)
    return settled


# the networks the cross-series start was measured on: those whose default skip path (relative) starts from least
# squares (patch-transformer and tft have none, nbeats the naive one)
CROSS_SERIES_MODELS = ("simple-rnn", "attention-rnn", "transformer")


def data_model_settings(config: RunConfig, panel: Panel) -> RunConfig:
    """``config`` with the settings its preset gives only for data of some shape (:func:`_data_rules`) where the run
    does not set them itself: a model parameter the run does not give, a setting it does not name and leaves at its
    default. Every fit path takes them: :func:`settle`, and auto's candidates
    (:func:`tsattn.selection.candidate_config`)."""
    defaults = RunConfig()
    params, fields = {}, {}
    for key, (value, _) in _data_rules(config, panel).items():
        if key.startswith("model."):
            name = key.removeprefix("model.")
            if name not in config.model_params:
                params[name] = value
        elif key not in config.given and getattr(config, key) == getattr(defaults, key):
            fields[key] = value
    if params:
        fields["model_params"] = {**config.model_params, **params}
    return dataclasses.replace(config, **fields) if fields else config


def _data_rules(config: RunConfig, panel: Panel) -> dict:
    """The settings a preset gives for data of ``panel``'s shape, whether or not the run sets them itself:
    ``{name: (value, why)}``, a model parameter's name prefixed ``model.``.

    Under the N-BEATS recipe, attention-rnn on data without a season (season 1: yearly, integer steps) without
    covariates takes ``skip="naive"`` (the last value plus the network, nbeats' head) instead of ``"relative"``,
    whose linear autoregression extrapolates an old drop that its attention context does not cancel (Tourism yearly
    series Y123 forecast at 0). Chosen on the values before M3's hold-outs (naive minus relative, one / two horizons
    before, seeds 0-2: yearly -0.259 / -0.130, other -0.106 / -0.198, benchmarks/results/attention_skip_o1.md,
    _o2.md), then checked on data it was not chosen on: M1 yearly -2.082 / -0.761, Tourism yearly -0.391 / -4.296,
    better in every seed (attention_skip_heldout_o1.md, _o2.md). On seasonal data relative stays (naive +0.16 to
    +1.58 there).

    Under the classic settings, on a panel of 3 or more series without covariates, the recurrent networks and the
    transformer start their skip path from the least-squares fit shrunk across series (``skip_init="cross-series"``).
    On small panels of M3 series their pooled least-squares start, fitted mostly on the longer series' windows,
    extrapolated trends the other series did not follow (ten quarterly series: 14.7-15.0 sMAPE against the naive
    forecast's 9.6). Chosen before the M3 hold-outs: -0.99 over 96 cells (quarterly -4.02, monthly +0.11: the first
    rule, no frequency worse by 0.10, failed by 0.008; benchmarks/results/small_panels_cross_series.md), -0.78 two
    horizons earlier (monthly +0.01, _o2.md), then a second rule written before the M1 and Tourism panels: -0.27
    there, no dataset worse (_heldout.md). The transformer: the same rule first, M3 -1.21 with no frequency worse,
    then M1 and Tourism -0.33 with every dataset lower (small_panels_cross_series_transformer*.md)."""
    rules = {}
    covariates = config.covariates()
    if (config.model == "attention-rnn" and config.preset == "nbeats-recipe" and covariates is None
            and season_of(config, panel) == 1):
        rules["model.skip"] = ("naive", "data without a season")
    if (config.preset == "classic" and config.model in CROSS_SERIES_MODELS and panel.n_series >= 3
            and covariates is None):
        rules["skip_init"] = ("cross-series", "a panel of few series")
    return rules


RULE_NAMES = {"skip_init": "skip start"}  # how the settings line names a setting a rule chose (a model parameter:
# by its own name)


def settings_text(config: RunConfig, panel: Panel, automatic: bool) -> str:
    """How a fit announces its settled ``config`` (`tsattn fit`'s "Training ..." line, ``Forecaster.fit``'s "Fitting
    ..." line): the preset, said to be chosen for the data when it was ``"auto"`` (``automatic``), and each setting
    :func:`data_model_settings` chose for the data, with why (not those the user named)."""
    if not config.preset:
        return ""
    text = f", settings {config.preset}" + (f" (chosen for {panel.n_series} series, horizon {config.horizon})"
                                            if automatic else "")
    named = set(config.given)
    for key, (value, why) in _data_rules(config, panel).items():
        if key.startswith("model."):
            name = key.removeprefix("model.")
            chosen = config.model_params.get(name) == value and name not in named and "model_params" not in named
        else:
            name, chosen = RULE_NAMES.get(key, key), getattr(config, key) == value and key not in named
        if chosen:
            text += f", {name} {value} (for {why})"
    return text


def _settled_preset(config: RunConfig, panel: Panel) -> RunConfig:
    if config.preset != "auto":
        return config
    name, extra = auto_preset(panel, config.horizon)
    defaults = RunConfig()
    kept = {key: getattr(config, key) for key in config.fields()
            if key not in ("preset", "given", "model_params")
            and (key in config.given or getattr(config, key) != getattr(defaults, key))}
    settled = config._with_preset(name, config.model)
    settled = dataclasses.replace(settled, **{**{k: v for k, v in extra.items() if k not in kept}, **kept},
                                  model_params={**settled.model_params, **config.model_params})
    if "window" in kept and "lookback" not in kept or kept.get("ensemble_lookbacks"):
        settled.lookback = None  # the user's window (or members' lookbacks) replaces the preset's lookback
    return settled


def preset_config(name: str | None, **overrides) -> RunConfig:
    """A RunConfig from a preset (or the defaults when ``name`` is None) with ``overrides`` applied.

    Overriding ``model`` keeps the preset's model parameters that the new model also takes.
    """
    if name is None:
        return RunConfig().updated(**overrides)
    if "preset" in overrides and overrides["preset"] != name:
        raise ConfigError(f"--preset {name} and --set preset={overrides['preset']} name two presets; give it once")
    overrides.pop("preset", None)
    return RunConfig().updated(preset=name, **overrides)



# Every run setting's range, checked before any work (README: "Settings and their ranges").
INTEGER_RANGES = {"horizon": (1, 10_000), "stride": (1, 100_000), "epochs": (1, 100_000),
                  "batch_size": (1, 1_000_000), "warmup_epochs": (0, 10_000), "patience": (1, 10_000),
                  "seed": (0, C.SEED_MAX), "shuffle_seed": (0, C.SEED_MAX), "steps_per_execution": (1, 10_000),
                  "ensemble": (1, 100), "validation_windows": (1, 100)}
OPTIONAL_RANGES = {"window": (2, 100_000), "season": (1, 10_000), "holdout": (1, 100_000), "lookback": (1, 100),
                   "history": (1, 10_000), "sampled_steps": (1, 1_000_000),
                   "max_passes": (1, 1_000_000)}


def check_config(config: RunConfig) -> RunConfig:
    """Refuse a setting outside its documented range or of the wrong type, naming it, its value and the range.

    A pure check: ``config`` is returned unchanged (:meth:`RunConfig.normalised` writes the values it accepts in
    their recorded form; :func:`resolve` does both, once)."""
    C.text("model", config.model, optional=False)
    params_of(config.model)
    for name, (low, high) in INTEGER_RANGES.items():
        C.positive_int(name, getattr(config, name), low, high)
    for name, (low, high) in OPTIONAL_RANGES.items():
        C.optional_positive_int(name, getattr(config, name), low, high)
    C.number("learning_rate", config.learning_rate, 0.0, 10.0, low_open=True)
    if config.clipnorm is not None:
        C.number("clipnorm", config.clipnorm, 0.0, 1e6, low_open=True)
    C.number("train_fraction", config.train_fraction, 0.0, 1.0, low_open=True)
    C.fraction("validation_fraction", config.validation_fraction)
    for name in ("early_stopping", "keep_start", "within_parts", "pad", "masked_targets", "final_fit",
                 "clip_intervals"):
        C.boolean(name, getattr(config, name))
    if config.jit_compile != "auto":
        if not isinstance(config.jit_compile, bool):
            raise ConfigError(f"jit_compile must be true, false or auto; got {config.jit_compile!r}")
    C.optional_choice("fill", config.fill, FILL_METHODS)
    check_freq(config.freq)
    C.choice("scaling", config.scaling, SCALINGS)
    C.choice("scaler_fit", config.scaler_fit, SCALER_FITS)
    C.choice("split", config.split, ("auto",) + SPLIT_METHODS)
    C.choice("skip_init", config.skip_init, SKIP_INITS)
    if config.covariate_lags != "auto" and (isinstance(config.covariate_lags, bool) or not isinstance(
            config.covariate_lags, (int, np.integer)) or not 0 <= config.covariate_lags <= 10_000):
        raise ConfigError(f"covariate_lags must be auto or an integer in 0..10000; got {config.covariate_lags!r}")
    C.choice("linear_fit", config.linear_fit, LINEAR_FITS)
    C.choice("lr_schedule", config.lr_schedule, LR_SCHEDULES)
    C.choice("ensemble_method", config.ensemble_method, ENSEMBLE_METHODS)
    C.choice("auto_combination", config.auto_combination, AUTO_COMBINATIONS)
    C.choice("sample_by", config.sample_by, ("window", "series"))
    C.choice("clip_scope", config.clip_scope, ("variable", "global"))
    C.choice("interval_scale", config.interval_scale, INTERVAL_SCALE_SETTINGS)
    if config.interval_scale == "ets":
        require_ets_scale()
    C.choice("interval_scores", config.interval_scores, INTERVAL_SCORES)
    get_loss(config.loss)
    _check_ensemble(config)
    C.text("preset", config.preset)
    if config.preset is not None and config.preset not in PRESETS:
        raise ConfigError(f"unknown preset {config.preset!r}; available: {', '.join(PRESETS)}")
    if model_quantiles(config) is None and config.level and not config.validation_fraction:
        raise ConfigError("conformal intervals (level) are calibrated on the validation part, and "
                          "validation_fraction is 0; set validation_fraction above 0 (or train with loss=quantile)")
    statistical_keys(config.baselines)
    check_covariates(config.hist_exog, config.futr_exog, config.stat_exog, config.calendar)
    if config.skip_init == "cross-series" and config.covariates() is not None:
        raise ConfigError("skip_init=cross-series shrinks the target's own autoregression across series and reads no "
                          "covariates; with covariates use skip_init=least-squares (or auto)")
    if config.masked_targets and config.futr_exog and "masked_targets" in config.given:
        raise ConfigError("masked_targets trains on windows whose targets run past the end of the data, where the "
                          f"future-known covariates ({', '.join(config.futr_exog)}) are unknown; drop masked_targets "
                          "or pass those columns as hist_exog")
    C.text("static_csv", config.static_csv)
    C.mapping("model_params", config.model_params)
    C.mapping("dataset_options", config.dataset_options)
    for name in ("dataset", "csv", "column", "date_column", "id_column"):
        C.text(name, getattr(config, name))
    if config.is_baseline or config.model == "auto":
        if config.model_params:
            kind = "auto (it chooses among models, each at its defaults)" if config.model == "auto" else \
                f"baseline {config.model!r}"
            raise ConfigError(f"{kind} takes no model parameters; got {', '.join(sorted(config.model_params))}")
    else:
        get_spec(config.model).resolve(config.model_params)
    return config


# the peers' names for our settings (NeuralForecast, statsforecast, Darts): accepted anywhere a setting is, each
# turned into the one canonical name it stands for (get_params, best.json and the run files show that name)
ALIASES = {"h": "horizon", "input_size": "window", "random_seed": "seed", "season_length": "season",
           "id_col": "id_column", "time_col": "date_column", "target_col": "column"}


def canonical(settings: dict, defaults: dict | None = None) -> dict:
    """``settings`` with every alias of :data:`ALIASES` under its canonical name; a setting given under both
    names (with different values) is refused. ``defaults``: canonical values that an alias may replace silently
    (a facade's constructor defaults)."""
    out = dict(settings)
    for alias, name in ALIASES.items():
        if alias not in out:
            continue
        value = out.pop(alias)
        if name in out and out[name] != value and not (defaults and name in defaults and out[name] == defaults[name]):
            raise ConfigError(f"{alias}={value!r} and {name}={out[name]!r} name the same setting ({alias} is "
                              f"{name}); give one")
        out[name] = value
    return out


def did_you_mean(key: str, names) -> str:
    """" did you mean 'x'?" for the nearest of ``names`` to a mistyped ``key`` (or "")."""
    import difflib

    close = difflib.get_close_matches(str(key), [str(n) for n in names], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def params_of(model) -> dict:
    """The parameters a model takes (a network's from its spec; a baseline takes none); an unknown name is refused
    with every name users can give."""
    if isinstance(model, str) and (model in BASELINES or model == "auto"):  # auto: chosen on validation (selection)
        return {}
    if not isinstance(model, str) or model not in MODELS:
        names = [*MODELS, *BASELINES, "auto"]
        raise ConfigError(f"unknown model {model!r}{model_hint(model, names)}; available: {', '.join(names)}")
    return get_spec(model).params


def _check_ensemble(config: RunConfig) -> None:
    """ensemble_lookbacks: distinct integers in the lookback range, not beside window or lookback;
    ensemble_losses: distinct point losses (a quantile member's forecast has another shape)."""
    lookbacks, losses = config.ensemble_lookbacks, config.ensemble_losses
    if lookbacks is not None:
        low, high = OPTIONAL_RANGES["lookback"]
        if not isinstance(lookbacks, (list, tuple)) or not lookbacks or len(set(map(repr, lookbacks))) != len(lookbacks):
            raise ConfigError(f"ensemble_lookbacks must be a list of distinct lookbacks in horizons (e.g. [2, 3, 4]); "
                              f"got {lookbacks!r}")
        for value in lookbacks:
            C.positive_int("ensemble_lookbacks", value, low, high)
        for name in ("window", "lookback"):
            if getattr(config, name) is not None:
                raise ConfigError(f"give ensemble_lookbacks ({list(lookbacks)}) or {name} ({getattr(config, name)}), "
                                  "not both: each member's window is its lookback times the horizon")
    if losses is not None:
        if not isinstance(losses, (list, tuple)) or not losses or len(set(map(repr, losses))) != len(losses):
            raise ConfigError(f"ensemble_losses must be a list of distinct losses (e.g. [smape, mase, mape]); got {losses!r}")
        for name in losses:
            if not isinstance(name, str) or get_loss(name).quantile:
                raise ConfigError(f"ensemble_losses takes point losses ({', '.join(n for n in LOSSES if not LOSSES[n].quantile)}); "
                                  f"got {name!r}")
        if get_loss(config.loss).quantile:
            raise ConfigError("ensemble_losses combines point forecasts; with loss=quantile drop ensemble_losses")


def model_quantiles(config: RunConfig) -> tuple | None:
    """The quantiles a ``loss="quantile"`` model outputs (None for other losses), checked (see
    :func:`tsattn.losses.loss_quantiles`)."""
    return loss_quantiles(config.loss, config.quantiles, config.level)


def columns_of(config: RunConfig) -> tuple[str, str, str]:
    """The long frame's id, time and value columns a config names (NeuralForecast's names by default)."""
    return config.id_column or "unique_id", config.date_column or "ds", config.column or "y"


def static_frame(config: RunConfig) -> pd.DataFrame | None:
    """The static features of ``config.static_csv`` (one row per series, keyed by the data's id column), or None when
    it names none."""
    if config.static_csv is None:
        return None
    from .data import read_csv_frame

    id_column = columns_of(config)[0]
    static = read_csv_frame(config.static_csv, text_columns=[id_column])
    if id_column not in static.columns:
        raise DataError(f"static CSV {config.static_csv} has no {id_column} column; give one row per series with its id "
                        "and the stat_exog columns")
    # checked here, where the file is known (the panel's check says only "the static frame")
    check_exog_columns(config.stat_exog, {"id": id_column}, f"static CSV {config.static_csv}",
                       [str(c) for c in static.columns])
    return static


def load_panel(config: RunConfig, static: pd.DataFrame | None = None) -> Panel:
    """The data a config names: a registered dataset or a CSV file (one series, or long with --id-column), with the
    covariate columns it names and its static features (``static``, else ``config.static_csv``, else a dataset's
    own)."""
    if config.csv is not None and config.dataset is not None:
        raise ConfigError("give either a dataset or a CSV file, not both")
    covariates = config.covariates()
    exog = covariates.dynamic if covariates else ()
    if static is None:
        static = static_frame(config)
    if config.csv is not None:
        return read_csv_panel(config.csv, config.column, config.date_column, config.id_column, fill=config.fill,
                              freq=config.freq, exog=exog, static=static)
    if config.dataset is None:
        raise ConfigError("no data: give a dataset (e.g. sunspots) or a CSV file with its column")
    frame = load_dataset(config.dataset, **config.dataset_options)
    if static is None and covariates is not None and covariates.stat and isinstance(frame, pd.DataFrame):
        static = pd.DataFrame(frame.attrs["static"]) if frame.attrs.get("static") else None  # a dataset's own
    return as_panel(frame, fill=config.fill, freq=config.freq, exog=exog, static=static)


def resolve(settings, data=None, static: pd.DataFrame | None = None,
            columns: tuple[str, str, str] | None = None) -> tuple[RunConfig, Panel]:
    """The one way in: settings and data -> the checked, settled :class:`RunConfig` and its :class:`Panel`.

    Every fit path calls it (``tsattn fit``, :func:`tsattn.fit`, ``Forecaster.fit`` and so its cross-validation and
    backtest refits, compare's runs and ``tsattn tune``): the settings are written in their recorded form and
    checked once (before any data is read), the data is read with every covariate column and static feature the
    settings name, data with a hold-out (M3, M1, the covariate sets) gives the horizon when none is given,
    and ``preset="auto"`` becomes the preset chosen for the data's shape (:func:`settle`).

    Args:
        settings: a :class:`RunConfig`, or a dict of settings and model parameters applied to ``RunConfig()``.
        data: None (the dataset or CSV file the settings name), a loaded :class:`Panel` (the settings keep naming
            their data: compare loads each dataset once), or the user's data: one series or a panel (a long frame,
            a dict of Series), read with ``columns``; the settings then name no dataset.
        static: static features (``stat_exog``), one row per series: the data's id column (or ``unique_id``) and
            the feature columns
            (default: ``static_csv``, or a dataset's own).
        columns: the long frame's id, time and value columns (default: the settings' id_column, date_column and
            column, else ``unique_id, ds, y``).

    Returns:
        (config, panel), ready for :func:`window_config` and :func:`tsattn.harness.fit_state`.
    """
    config = settings if isinstance(settings, RunConfig) else RunConfig().updated(**dict(settings or {}))
    config = check_config(config.normalised())
    if (static is not None or config.static_csv is not None) and not config.stat_exog:
        given = "static_df" if static is not None else f"the static CSV {config.static_csv}"
        raise ConfigError(f"{given} is given but no static feature is named, so it would be ignored; name its columns "
                          "with stat_exog=[...] (CLI: --stat-exog a,b), or drop it")
    if data is None:
        panel = load_panel(config, static)
    else:
        covariates = config.covariates()
        if static is None:
            static = static_frame(config)
        panel = as_panel(data, *(columns or columns_of(config)), fill=config.fill, freq=config.freq,
                         exog=covariates.dynamic if covariates else (), static=static)
        if not isinstance(data, Panel):
            config = dataclasses.replace(config, dataset=None, csv=None)  # the user's data, not a named one
    if panel.horizon and "horizon" not in config.given and config.horizon == RunConfig.horizon:
        # data with a hold-out (M3, M1, the covariate sets: attrs["horizon"], kept by their subsets) forecasts its own
        # horizon unless told otherwise: `tsattn fit --dataset m3-monthly` and Forecaster().fit(m3) train 18-step
        # models, as `tsattn datasets` lists it
        config = dataclasses.replace(config, horizon=int(panel.horizon))
    return settle(config, panel), panel


def split_of(config: RunConfig, panel: Panel) -> SplitSpec:
    """The split a config asks for; "auto" is the competitions' hold-out for data that defines one
    (M3, M1: the last h values of each series), chronological fractions otherwise (:func:`window_config` turns
    fractions too small to hold one forecast into the hold-out of one horizon)."""
    method = config.split
    if method == "auto":
        method = "holdout" if panel.horizon or config.holdout else "chronological"

    holdout = validation = None
    if method == "holdout":
        holdout = config.holdout or panel.horizon or config.horizon
        if config.validation_windows > 1:
            validation = holdout + (config.validation_windows - 1) * config.horizon
    return SplitSpec(method, config.train_fraction, config.validation_fraction, config.within_parts,
                     config.shuffle_seed, holdout, validation_holdout=validation)


DEFAULT_WINDOW = 24


def auto_window(panel: Panel, horizon: int, pad: bool = False) -> int:
    """The default input window: DEFAULT_WINDOW, shortened to the shortest series' length minus the horizon
    so that every series of a panel of short series (M3 yearly: 20 values, h = 6 -> 14) is forecast rather
    than left out; never below 2. Longer series still train on every window they hold. With ``pad`` set (windows
    may start before their series) the median series' length bounds it instead: the shorter series are padded, so one
    short series does not shorten the window of every other (not the default under the classic settings:
    benchmarks/results/ragged.md)."""
    reference = int(np.median(panel.lengths)) if pad else int(panel.lengths.min())
    return int(max(2, min(DEFAULT_WINDOW, reference - horizon)))


def resolved_window(panel: Panel, config: RunConfig) -> int:
    """The input window: the setting, else ``lookback`` horizons, else :func:`auto_window`."""
    if config.window is not None and config.lookback is not None:
        raise ConfigError(f"give window ({config.window}) or lookback ({config.lookback} horizons), not both")
    if config.lookback is not None:
        return max(2, config.lookback * config.horizon)
    if config.ensemble_lookbacks:  # the longest member's window; each member reads its own last steps
        return max(2, max(config.ensemble_lookbacks) * config.horizon)
    return config.window if config.window is not None else auto_window(panel, config.horizon, config.pad)


def split_for_fit(split: SplitSpec) -> SplitSpec:
    """The same split without a test part, for a fit on everything a user gives (``Forecaster.fit``): a hold-out
    becomes the last ``holdout`` values as validation, chronological fractions keep their validation fraction
    at the end of each series and train on the rest."""
    if split.method == "holdout":
        if split.validation <= 0:
            return SplitSpec("chronological", 1.0, 0.0, split.within_parts, split.shuffle_seed)
        return dataclasses.replace(split, holdout_test=False)
    if split.method == "chronological":
        return dataclasses.replace(split, train=1.0 - split.validation)
    return split


def window_config(data, config: RunConfig, with_test: bool = True) -> WindowedPanel:
    """Window, split and scale ``data`` as ``config`` says: the one place where the CLI, compare, benchmarks and
    ``Forecaster.fit`` turn settings into windows. ``with_test=False`` keeps no test part (a Forecaster is fitted
    on everything it is given; the split's validation part stays at the end of each series). With ``split="auto"``,
    when the validation (or test) fraction of the shortest series holds fewer values than one forecast (``horizon``),
    the split is the competitions' hold-out instead: the last ``horizon`` values of every series are the test part and
    the ``validation_windows`` horizons before them the validation part (short series and series of mixed lengths
    work, as in statsforecast)."""
    if config.preset == "auto":
        raise ConfigError("preset 'auto' is chosen from the data: call settle(config, panel) before window_config")
    panel = as_panel(data, fill=config.fill, freq=config.freq)
    split = split_of(config, panel)
    if not with_test:
        split = split_for_fit(split)
    if config.split == "auto" and split.method == "chronological" and split.validation > 0:
        # fractions too small to hold one forecast in some series: the hold-out of one horizon for every series. On the
        # shortest series, not the longest: on series of mixed lengths (the first 50 M3 other series from a CSV, h = 8)
        # 10% of the short ones held no forecast, so 25 of 50 were never validated nor calibrated on, and the panel was
        # tested on the last 20% of each where the same series as a dataset are tested on their last 8 values
        shortest = int(panel.lengths.min())
        bounds = [int(round(shortest * fraction)) for fraction in (split.train, split.train + split.validation)]
        tested = with_test and split.test > 1e-9  # fractions that leave no test part (0.7 + 0.3) are refused later
        held = min([bounds[1] - bounds[0], *([shortest - bounds[1]] if tested else [])])
        if held < config.horizon:
            split = SplitSpec("holdout", split.train, split.validation, split.within_parts, split.shuffle_seed,
                              config.horizon, validation_holdout=config.validation_windows * config.horizon)
            if not with_test:
                split = split_for_fit(split)
    window = resolved_window(panel, config)
    default_window = config.window is None and config.lookback is None and not config.ensemble_lookbacks
    if default_window:
        # the default window also leaves the longest series' training part one window and its horizon
        from .windows import split_bounds

        longest = int(panel.lengths.max())
        train_parts = split_bounds(panel.lengths, split)[:, 0]  # each series' training part (longer series: longer)
        train = int(train_parts.max())  # the longest series' (named in the error below)
        window = int(max(2, min(window, train - config.horizon)))
        if not config.pad:
            # and half the series of a panel (the median series' training part; one series: the same bound): with a
            # window that only the longest series' training parts hold, small panels of short series trained on a
            # few series' windows. Chosen on the values before the M3 hold-outs (panels of 10 series, 3 networks,
            # 3 seeds: -1.41 sMAPE, nbeats +0.90 of it; the hold-outs after: -2.45),
            # benchmarks/results/small_panels_window.md
            window = int(max(2, min(window, int(np.median(train_parts)) - config.horizon)))
    covariates = config.covariates()
    if covariates is not None and covariates.layout.futr and window < config.horizon:
        if default_window:  # the data, not a setting, is too short for a window that holds the future-known steps
            raise TooShortError(f"future-known covariates need a window of at least the horizon ({config.horizon}), "
                                f"but the longest series' training part has {train} values, fewer than that window and "
                                f"its horizon; give series at least {longest + 2 * config.horizon - train} values")
        raise ConfigError(f"future-known covariates reach a network through the last {config.horizon} steps of its "
                          f"window, which is {window}; use window >= horizon ({config.horizon})")
    untrained = config.is_baseline and not baseline_learns(config.model)
    if config.masked_targets and "masked_targets" not in config.given and (split.method == "shuffled"
                                                                            or split.within_parts):
        raise ConfigError(f"masked_targets (set for {config.model} by the {config.preset} preset) works with the "
                          "chronological and hold-out splits without within_parts; set masked_targets=false or change "
                          "the split")
    windowed = window_panel(panel, window, config.horizon, config.stride, split,
                            config.scaling, config.scaler_fit, require_test=with_test, untrained=untrained,
                            train_history=None if config.history is None else config.history * config.horizon,
                            pad=config.pad, covariates=covariates, masked_targets=config.masked_targets)
    if config.clip_intervals:
        windowed.floor = windowed.nonnegative_floor()
    windowed.interval_scale = config.interval_scale
    windowed.interval_scores = config.interval_scores
    return windowed


def season_of(config: RunConfig, panel: Panel) -> int:
    """The season length: the setting, else from the panel's frequency (12 for monthly, 4 quarterly...)."""
    return config.season or M.season_from_frequency(panel.freq)

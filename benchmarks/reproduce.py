"""Rerun a small named cell of each reproducible results file and fail when it differs from the file by more than 0.01.

    python benchmarks/reproduce.py                  # every cell (a few minutes on 2 cores)
    python benchmarks/reproduce.py --list           # the cells, and the results files not checked (and why)
    python benchmarks/reproduce.py --cells yearly   # the cells whose label contains "yearly" (several: "a;b")

A figure that main cannot reproduce is not a result. Figures are compared on the processor they were measured on
(each file's "- machine:" line): TensorFlow's CPU kernels round differently on another instruction set, so a cell
that differs there is reported as OTHER, not as a failure. Each cell names a results file, the command that wrote it
restricted to a small part (one frequency, one model, one seed), and where the figure sits in the file (a table's
section, row and column). The cell's command is run at the working tree into a temporary file and its figure read
from there the same way as from the published file. Run it before committing results: a change to the code that moves
a published figure must regenerate that file (or say in it why the figure stands).

Most, not all, of that difference is the instruction set of oneDNN's kernels: on an AMD EPYC with AVX-512 (9ccefda),
with them capped at AVX2 (``ONEDNN_MAX_CPU_ISA=AVX2 python benchmarks/reproduce.py --cells ...``), m3_main.md's M3
yearly nbeats cell gave 16.26 as published on AVX2 (16.39 uncapped), M3 other attention-rnn 4.47 as published, Tourism
yearly nbeats 2.744 (2.739) and M3 other nbeats over 3 seeds 4.26 (4.27), but M1 monthly nbeats 14.84 (14.82), M3
other patch-transformer 4.40 (4.37) and a whole M3 monthly nbeats fit 13.929 (13.939 on AVX2). So a capped rerun can
confirm an AVX2 figure on an AVX-512 processor; a capped figure that differs still says nothing against the code.

The README's M3 table is checked against the results file it cites, cell by cell, as text.

Results files not listed in CELLS were measured at earlier commits and are not rerun (``ARCHIVED`` says why for each
group); their figures describe the code at the commit or date they name, not main.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TOLERANCE = 0.01


@dataclass(frozen=True)
class Cell:
    label: str
    file: str               # under benchmarks/results/
    command: tuple          # the script and its arguments; "--out <temporary file>" is added
    section: str            # a substring of the "## " heading the table is under
    row: str                # the first column's text
    column: str             # the header of the figure's column


def candidate_cell(label: str, file: str, model: str, case: str, section: str, candidate: str, settings: dict,
                   origin: int = 1) -> Cell:
    """A cell of a validation study (benchmarks/auto_defaults.py): ``model`` with one candidate, the N-BEATS recipe
    (padded) and ``settings``, seeds 0-2, ``origin`` horizons before the hold-out of ``case``; the figure is the
    candidate's mean sMAPE there."""
    candidates = json.dumps({candidate: {"preset": "nbeats-recipe", "pad": True, **settings}})
    return Cell(label, file, ("benchmarks/auto_defaults.py", "--cases", case, "--models", model, "--seeds", "0,1,2",
                              "--origin", str(origin), "--candidates", candidates),
                section, f"{model} | {candidate}", "sMAPE (mean)")


# files measured before nbeats took masked targets under the recipe by default (1c6c488): their cells name the
# setting as it was, so they still rerun the code paths they measured
UNMASKED = " (masked_targets=false, as measured before nbeats took them by default)"
UNMASKED_SETTINGS = '{"masked_targets": false}'
# files of model auto measured before its combination became the weighted mean (auto_combination="weighted"): the median
MEDIAN = " (auto_combination=median, as measured before the weighted mean became auto's combination)"

# patch-transformer's width: d_model 64, ff_dim 128 by default, except from 0aa0552 to a9f93f7 (32 and 64; back after
# patch_cost_origin2.md): the cells of files measured at a width name it
WIDE = " (d_model=64, ff_dim=128)"
WIDE_SETTINGS = '{"d_model": 64, "ff_dim": 128}'
NARROW = " (d_model=32, ff_dim=64, patch-transformer's default when measured)"
NARROW_SETTINGS = '{"d_model": 32, "ff_dim": 64}'

CROSS_SERIES = '{"default": {}, "cross-series": {"skip_init": "cross-series"}}'  # small_panels_cross_series*.md
AUTO_WINDOWS = '{"default": {}, "2 validation windows": {"validation_windows": 2}}'  # small_panels_auto_validation*.md


def small_panel_cell(label: str, file: str, dataset: str, model: str, candidates: str, candidate: str,
                     *options: str) -> Cell:
    """A cell of a small-panel study (benchmarks/ragged.py --uncut, 4 panels x 3 seeds): ``model`` on ``dataset``'s
    panels with the JSON ``candidates``; the figure is ``candidate``'s mean sMAPE over all series."""
    return Cell(label, file, ("benchmarks/ragged.py", "--uncut", *options, "--datasets", dataset, "--models", model,
                              "--candidates", candidates), dataset, f"{model} | {candidate}", "sMAPE, all series")

CELLS = (
    Cell("M3 yearly, nbeats, seed 0 (the README table)", "m3_main.md",
         ("benchmarks/m3.py", "--frequencies", "yearly", "--models", "nbeats", "--seeds", "0"),
         "M3 yearly", "nbeats", "test sMAPE"),
    Cell("M3 other, attention-rnn, seed 0 (the README table)", "m3_main.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "attention-rnn", "--seeds", "0"),
         "M3 other", "attention-rnn", "test sMAPE"),
    Cell("M3 other, auto, seed 0 (the README table)", "m3_main.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "auto", "--seeds", "0"),
         "M3 other", "auto", "test sMAPE"),
    Cell("M1 monthly, nbeats, seed 0 (data nothing was chosen on)", "m1_main.md",
         ("benchmarks/m3.py", "--collection", "m1", "--frequencies", "monthly", "--models", "nbeats", "--seeds", "0"),
         "M1 monthly", "nbeats", "test sMAPE"),
    Cell("Tourism yearly, nbeats, seed 0 (data no default was chosen on; the README's Tourism table)",
         "tourism_main.md", ("benchmarks/m3.py", "--collection", "tourism", "--frequencies", "yearly", "--models",
                             "nbeats", "--seeds", "0"), "TOURISM yearly", "nbeats", "test MASE"),
    Cell("Tourism yearly, auto, seed 0 (the README's Tourism table)", "tourism_main.md",
         ("benchmarks/m3.py", "--collection", "tourism", "--frequencies", "yearly", "--models", "auto", "--seeds", "0"),
         "TOURISM yearly", "auto", "test MASE"),
    Cell("Tourism quarterly, auto, seed 0 (the README's Tourism table; chosen on validation MASE, the series holding "
         "zeros)", "tourism_main.md", ("benchmarks/m3.py", "--collection", "tourism", "--frequencies", "quarterly",
                                      "--models", "auto", "--seeds", "0"), "TOURISM quarterly", "auto", "test MASE"),
    Cell("conformal 80% coverage before the hold-out, M3 yearly, nbeats, 2 validation windows" + UNMASKED,
         "intervals_windows_yearly_2.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-yearly", "--models",
          "nbeats", "--set",
          '{"validation_windows": 2, "masked_targets": false}'), "m3-yearly", "nbeats seed 0", "coverage 80%"),
    Cell("conformal 80% MSIS before the hold-out in each interval scale, M3 yearly, nbeats (the blend row, the "
         "default)" + UNMASKED, "intervals_scale.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-yearly", "--models",
          "nbeats", "--interval-scales", "insample,expanding,recent,blend", "--set", UNMASKED_SETTINGS),
         "m3-yearly", "nbeats seed 0 (conformal, blend scale)", "MSIS 80%"),
    Cell("auto's 80% MSIS before the hold-out in each interval scale, M3 other (the blend row)" + UNMASKED + MEDIAN,
         "intervals_scale_auto.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-other", "--models",
          "auto", "--interval-scales", "insample,expanding,recent,blend", "--set",
          '{"masked_targets": false, "auto_combination": "median"}'),
         "m3-other", "auto seed 0 (conformal, blend scale)", "MSIS 80%"),
    Cell("conformal 80% MSIS before the hold-out with signed scores (interval_scores=signed, not the default), M3 "
         "yearly, nbeats, seed 0", "intervals_scores.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-yearly", "--models",
          "nbeats", "--interval-scores", "absolute,signed"),
         "m3-yearly", "nbeats seed 0 (conformal, signed scores)", "MSIS 80%"),
    Cell("conformal scores in sqrt(blend x AutoETS's deviation) with AutoETS as the forecaster, two horizons before the "
         "M3 other hold-out (80% MSIS)", "intervals_ets_scale_o2.md",
         ("benchmarks/intervals_ets_scale.py", "--origin", "2", "--frequencies", "other"),
         "Bands", "other | 80 | conformal, scores in sqrt(blend x ETS deviation)", "MSIS"),
    Cell("conformal scores in sqrt(blend x AutoETS's deviation) with AutoETS as the forecaster, on the M3 other "
         "hold-out (80% MSIS)", "intervals_ets_scale_o1.md",
         ("benchmarks/intervals_ets_scale.py", "--origin", "1", "--frequencies", "other"),
         "Bands", "other | 80 | conformal, scores in sqrt(blend x ETS deviation)", "MSIS"),
    Cell("conformal 80% MSIS before the hold-out with interval_scale=ets (not the default), M3 yearly, nbeats, seed 0",
         "intervals_scale_ets.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-yearly", "--models",
          "nbeats", "--interval-scales", "blend,ets"),
         "m3-yearly", "nbeats seed 0 (conformal, ets scale)", "MSIS 80%"),
    Cell("auto's 80% MSIS before the hold-out with interval_scale=auto (auto's default since dba613b; it chose ets "
         "there), M3 other, seed 0", "intervals_scale_choice_auto.md",
         ("benchmarks/intervals.py", "--before-holdout", "--statistical", "", "--datasets", "m3-other", "--models",
          "auto", "--interval-scales", "blend,ets,auto"),
         "m3-other", "auto seed 0 (conformal, auto scale, chose ets; validation score blend 1.000, ets 0.990)",
         "MSIS 80%"),
    # The two auto_combination cells were measured on an AVX-512 EPYC. On an AVX2 EPYC (2026-12-05) they give 3.766 and
    # 20.023 both at 23f6b8c (before attention-rnn's naive skip on data without a season, b648739) and at b5af7ce:
    # that rule does not move them, so they still check on the processor they name.
    Cell("auto's combination, the weighted mean against the median, one horizon before the M3 other hold-out, 3 seeds "
         "(the weighted row)", "auto_combination_o1.md",
         ("benchmarks/auto_defaults.py", "--models", "auto", "--cases", "all 174", "--seeds", "0,1,2", "--origin", "1",
          "--candidates", '{"median (default)": {}, "weighted": {"auto_combination": "weighted"}}'),
         "M3 other", "auto | weighted", "sMAPE (mean)"),
    Cell("auto_combination=auto (the weighted mean or the median, the lower on validation), one horizon before the M3 "
         "yearly hold-out, 3 seeds (the auto row: the one set where it took a median)", "auto_combination_auto_o1.md",
         ("benchmarks/auto_defaults.py", "--models", "auto", "--cases", "all 645", "--seeds", "0,1,2", "--origin", "1",
          "--candidates", '{"weighted (default)": {}, "auto": {"auto_combination": "auto"}}'),
         "M3 yearly", "auto | auto", "sMAPE (mean)"),
    candidate_cell("nbeats with 512 units (not the default), one horizon before the M3 other hold-out, 3 seeds",
                   "nbeats_size_others_o1.md", "nbeats", "all 174", "M3 other", "units 512", {"units": 512}),
    candidate_cell("attention-rnn with readout=context+last (not the default), one horizon before the M3 other "
                   "hold-out, 3 seeds (skip=relative named: the default when it was measured, naive on such data "
                   "since)",
                   "attention_readout_o1.md", "attention-rnn", "all 174", "M3 other", "context+last",
                   {"readout": "context+last", "skip": "relative"}),
    candidate_cell("attention-rnn with skip=naive (the default on such data since), one horizon before the M3 other "
                   "hold-out, 3 seeds", "attention_skip_o1.md", "attention-rnn", "all 174", "M3 other", "naive",
                   {"skip": "naive"}),
    candidate_cell("attention-rnn with skip=naive one horizon before the M1 yearly hold-out, 3 seeds (the check on "
                   "data the rule was not chosen on; skip named, as the default it became there)",
                   "attention_skip_heldout_o1.md", "attention-rnn", "M1 yearly", "M1 yearly", "naive",
                   {"skip": "naive"}),
    candidate_cell("simple-rnn with skip=naive (not its default), one horizon before the M3 other hold-out, 3 seeds",
                   "simple_skip_o1.md", "simple-rnn", "all 174", "M3 other", "naive", {"skip": "naive"}),
    candidate_cell("the transformer with skip=naive (not its default), one horizon before the M3 other hold-out, "
                   "3 seeds",
                   "transformer_skip_o1.md", "transformer", "all 174", "M3 other", "naive", {"skip": "naive"}),
    candidate_cell("attention-rnn with units 64 (not its default), one horizon before the M3 other hold-out, 3 seeds",
                   "attention_units_o1.md", "attention-rnn", "all 174", "M3 other", "units 64", {"units": 64}),
    candidate_cell("attention-rnn with an LSTM cell (not its default), one horizon before the M3 other hold-out, "
                   "3 seeds", "attention_cell_o1.md", "attention-rnn", "all 174", "M3 other", "lstm", {"cell": "lstm"}),
    candidate_cell("attention-rnn with an LSTM cell (not its default), one horizon before the Tourism yearly hold-out, "
                   "3 seeds", "attention_cell_short_o1.md", "attention-rnn", "Tourism yearly", "Tourism yearly", "lstm",
                   {"cell": "lstm"}),
    candidate_cell("attention-rnn with an LSTM cell (not its default), two horizons before the M1 yearly hold-out, "
                   "3 seeds", "attention_cell_short_o2.md", "attention-rnn", "M1 yearly", "M1 yearly", "lstm",
                   {"cell": "lstm"}, origin=2),
    candidate_cell("nbeats with a lookback of 3 horizons (not its default), one horizon before the M3 other hold-out, "
                   "3 seeds", "nbeats_lookback_o1.md", "nbeats", "all 174", "M3 other", "lookback 3", {"lookback": 3}),
    candidate_cell("nbeats with a learning rate of 2e-3 (not its default), one horizon before the M1 monthly hold-out, "
                   "3 seeds", "nbeats_rate_monthly_o1.md", "nbeats", "M1 monthly", "M1 monthly", "learning rate 2e-3",
                   {"learning_rate": 0.002}),
    Cell("attention-rnn over 3 seeds, M3 yearly (its naive skip on data without a season)", "m3_rnn_seeds.md",
         ("benchmarks/m3.py", "--frequencies", "yearly", "--models", "attention-rnn", "--seeds", "0,1,2"),
         "M3 yearly", "attention-rnn", "test sMAPE"),
    Cell("nbeats over 3 seeds, M3 other", "m3_main_seeds.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "nbeats", "--seeds", "0,1,2"),
         "M3 other", "nbeats", "test sMAPE"),
    Cell("patch-transformer over 3 seeds, M3 other (beside nbeats)", "m3_main_seeds.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "patch-transformer", "--seeds", "0,1,2"),
         "M3 other", "patch-transformer", "test sMAPE"),
    Cell("auto over 3 seeds, M3 other", "m3_auto_seeds.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "auto", "--seeds", "0,1,2"),
         "M3 other", "auto", "test sMAPE"),
    Cell("the N-BEATS 18-member ensemble (lookbacks 2-7 x three losses, stacked), M3 other" + UNMASKED,
         "m3_ensemble18.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "nbeats", "--seeds", "0", "--ensemble", "1",
          "--set", UNMASKED_SETTINGS,
          "--ensemble-models", "nbeats", "--ensemble-settings",
          '{"ensemble_lookbacks": [2, 3, 4, 5, 6, 7], "ensemble_losses": ["smape", "mase", "mape"]}',
          "--ensemble-frequencies", "other"),
         "M3 other", "nbeats ensemble of 18", "test sMAPE"),
    Cell("nbeats ensemble of short lookbacks (2, 3 x three losses x 3 seeds, stacked), M3 yearly" + UNMASKED,
         "m3_ensemble_short.md",
         ("benchmarks/m3.py", "--frequencies", "yearly", "--models", "nbeats", "--seeds", "0", "--ensemble", "3",
          "--set", UNMASKED_SETTINGS,
          "--ensemble-models", "nbeats", "--ensemble-settings",
          '{"ensemble_lookbacks": [2, 3], "ensemble_losses": ["smape", "mase", "mape"]}', "--ensemble-frequencies",
          "yearly"),
         "M3 yearly", "nbeats ensemble of 18", "test sMAPE"),
    Cell("M3 other, patch-transformer, seed 0 (the README table)", "m3_main.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "patch-transformer", "--seeds", "0"),
         "M3 other", "patch-transformer", "test sMAPE"),
    Cell("patch-transformer over 3 seeds, M3 other" + NARROW, "m3_patch_seeds.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "patch-transformer", "--seeds", "0,1,2", "--set",
          NARROW_SETTINGS),
         "M3 other", "patch-transformer", "test sMAPE"),
    Cell("patch-transformer over 3 seeds at d_model 64, ff_dim 128, M3 other",
         "m3_patch_seeds_wide.md",
         ("benchmarks/m3.py", "--frequencies", "other", "--models", "patch-transformer", "--seeds", "0,1,2", "--set",
          WIDE_SETTINGS), "M3 other", "patch-transformer", "test sMAPE"),
    Cell("M1 monthly, patch-transformer, seed 0 (attention against nbeats on data nothing was chosen on)",
         "m1_main.md",
         ("benchmarks/m3.py", "--collection", "m1", "--frequencies", "monthly", "--models", "patch-transformer",
          "--seeds", "0"), "M1 monthly", "patch-transformer", "test sMAPE"),
    Cell("M3 monthly, the transformer at its defaults (one block), seed 0", "m3_transformer.md",
         ("benchmarks/m3.py", "--frequencies", "monthly", "--models", "transformer", "--seeds", "0"),
         "M3 monthly", "transformer", "test sMAPE"),
    Cell("tft with covariates on PromoData, seeds 0-2 (every covariate set, minutes)", "covariates_attention.md",
         ("benchmarks/covariates.py", "--models", "tft", "--lift-models", "tft"),
         "promodata", "tft with covariates", "test MAE"),
    Cell("which covariate patch-transformer used on the synthetic panel (permutation importance; normalise=auto "
         "drops its normalisation there), seeds 0-2" + WIDE,
         "covariates_importance.md", ("benchmarks/covariates.py", "--importance-only", "--models", "patch-transformer",
                                      "--set", WIDE_SETTINGS),
         "Permutation importance", "patch-transformer | 0", "promo shuffled"),
    Cell("tft's whole-forecast importance of the promotion on the synthetic panel, seeds 0-2",
         "covariates_importance.md", ("benchmarks/covariates.py", "--importance-only", "--models", "tft"),
         "tft's variable importance", "0", "whole: promo"),
    Cell("tft's selection weights on the synthetic panel with normalise=auto (not its default), seeds 0-2",
         "covariates_importance_tft_auto.md", ("benchmarks/covariates.py", "--importance-only", "--models", "tft",
                                               "--set", '{"normalise": "auto"}'),
         "tft's variable importance", "0", "selection: noise"),
    candidate_cell("the recipe's budget one origin earlier, M3 other, nbeats over 3 seeds (the 400-step recipe's row)"
                   + UNMASKED, "recipe_budget_origin2.md", "nbeats", "all 174", "M3 other, all 174",
                   "400 steps (the recipe at 4e25c6f)", {"masked_targets": False}, origin=2),
    candidate_cell("masked targets for nbeats at the current recipe, M3 other, 3 seeds (the masked row)",
                   "masked_targets_nbeats.md", "nbeats", "all 174", "M3 other, all 174", "masked targets",
                   {"masked_targets": True}),
    Cell("does attention help? the gathered summary (M3 monthly, patch-transformer vs nbeats)", "attention.md",
         ("benchmarks/attention.py",), "Summary", "M3 monthly", "patch-transformer vs nbeats"),
    Cell("ragged panels, the shorter series padded (not the default), M3 other, nbeats, 4 panels x 3 seeds",
         "ragged.md", ("benchmarks/ragged.py", "--datasets", "m3-other", "--models", "nbeats"), "m3-other",
         "nbeats | pad", "sMAPE, all series"),
    small_panel_cell("small panels with a final fit (not the default), M3 other, nbeats, 4 panels x 3 seeds",
                     "small_panels_final_fit.md", "m3-other", "nbeats",
                     '{"default": {}, "final fit": {"final_fit": true}, "2 windows, final fit": '
                     '{"validation_windows": 2, "final_fit": true}}', "final fit"),
    small_panel_cell("small panels, the window at which half the series train (the default since that study), M3 "
                     "yearly, nbeats", "small_panels_window.md", "m3-yearly", "nbeats",
                     '{"default": {}, "half train": {"window": "half train"}}', "half train"),
    small_panel_cell("small panels, the skip path started at zero (not the default), M3 yearly, simple-rnn, 4 panels x "
                     "3 seeds", "small_panels_skip_start.md", "m3-yearly", "simple-rnn",
                     '{"default": {}, "zero init": {"skip_init": "zeros"}}', "zero init"),
    small_panel_cell("small panels, the skip start shrunk across series (the default since), M3 quarterly, "
                     "attention-rnn", "small_panels_cross_series.md", "m3-quarterly", "attention-rnn", CROSS_SERIES,
                     "cross-series"),
    small_panel_cell("small panels, the skip start shrunk across series, two horizons before the hold-outs, M3 yearly, "
                     "simple-rnn", "small_panels_cross_series_o2.md", "m3-yearly", "simple-rnn", CROSS_SERIES,
                     "cross-series", "--origin", "2"),
    small_panel_cell("small panels, the skip start shrunk across series (the default since), M1 quarterly, "
                     "attention-rnn", "small_panels_cross_series_heldout.md", "m1-quarterly", "attention-rnn",
                     CROSS_SERIES, "cross-series"),
    small_panel_cell("small panels, the transformer's skip start shrunk across series (the default since), M3 yearly",
                     "small_panels_cross_series_transformer.md", "m3-yearly", "transformer", CROSS_SERIES,
                     "cross-series"),
    small_panel_cell("small panels, the transformer's cross-series start on M1 quarterly (the check after M3)",
                     "small_panels_cross_series_transformer_heldout.md", "m1-quarterly", "transformer", CROSS_SERIES,
                     "cross-series"),
    small_panel_cell("small panels, auto at its defaults (one validation horizon), M3 other",
                     "small_panels_auto_validation.md", "m3-other", "auto", AUTO_WINDOWS, "default"),
    small_panel_cell("small panels, auto choosing on two validation horizons (not adopted), two horizons before the "
                     "hold-outs, M3 yearly", "small_panels_auto_validation_o2.md", "m3-yearly", "auto", AUTO_WINDOWS,
                     "2 validation windows", "--origin", "2"),
    small_panel_cell("small panels, auto choosing on two validation horizons (not adopted), M1 monthly (where it "
                     "failed the rule)", "small_panels_auto_validation_heldout.md", "m1-monthly", "auto", AUTO_WINDOWS,
                     "2 validation windows"),
)

# results files not rerun at main, and why (grouped); every other file under benchmarks/results/ must have a cell
ARCHIVED = {
    "small_panels_window.md's check on the hold-outs after its decision (its 'default' rows are the rule before, "
    "which main no longer has)": ("small_panels_window_holdout.md",),
    "the second check of ragged.md's rule, on monthly panels (each file reruns in 3-5 minutes; ragged.md's cell reruns "
    "the script)": ("ragged_m3_monthly.md", "ragged_m1_monthly.md", "ragged_tourism_monthly.md"),
    "measured before the final fit (final_fit=true, this commit's default) changed every network's forecast; kept as "
    "the record of how the defaults were chosen at the commit or date each names": (
        "accuracy.md", "auto_defaults.md", "covariates.md", "covariates_defaults.md", "covariates_heads.md",
        "covariates_lift.md", "covariates_nbeats.md", "defaults_selection.md", "early_stopping.md", "intervals.md",
        "intervals_ensemble.md", "intervals_quantile.md", "m1_auto.md", "m1_auto_uncapped.md", "m1_recipe.md", "m3.md",
        "m3_auto.md", "m3_auto_uncapped.md", "m3_defaults.md", "m3_defaults_short.md", "m3_recipe.md", "max_passes.md",
        "recipe.md", "short_series.md", "tuning.md", "tuning_m3.md", "tuning_m3_rolling.md", "tutorials.md"),
    "coverage before the hold-out with 1, 2 or 3 validation windows, M3 monthly and yearly (the yearly file with 2 is "
    "rerun; each of these costs minutes)": (
        "intervals_windows_monthly_1.md", "intervals_windows_monthly_2.md", "intervals_windows_monthly_3.md",
        "intervals_windows_yearly_1.md", "intervals_windows_yearly_3.md"),
    "the default model's intervals on M3 monthly's test part at main (nbeats 5 minutes, auto 7, with AutoETS's own "
    "intervals; the yearly coverage cell runs the same calibration code)": ("intervals_main.md", "intervals_auto.md"),
    "tft's heads, then its size, normalisation, covariate path and variable dropout, with covariates compared on "
    "validation (8-35 minutes each, at the commit each names: the files before covariates_tft_vardrop.md ran before "
    "variable_dropout's default became 0.2, which their variants do not set, and all "
    "but the last seven with every input droppable, variable_dropout_on all; in covariates_tft.md the first, {}, is "
    "the covariate rule's linear skip; all but covariates_tft_head.md, which chose it, covariates_tft_skip3.md, "
    "covariates_tft_norm3.md, covariates_tft_norm_seeds.md and covariates_tft_norm_auto.md (these three with "
    "covariate_lags=auto too) with the flattened output head; covariates_norm_auto.md compares normalise=auto for "
    "the other networks at their own defaults, covariates_tft_path_none.md tft's covariate_path=none)": (
        "covariates_tft.md", "covariates_tft_size.md", "covariates_tft_norm.md", "covariates_tft_path.md",
        "covariates_tft_vardrop.md", "covariates_tft_vardrop_windows.md", "covariates_tft_vardrop_on.md",
        "covariates_tft_size3.md", "covariates_tft_ensemble.md", "covariates_tft_head.md", "covariates_tft_skip3.md",
        "covariates_tft_norm3.md", "covariates_tft_norm_seeds.md", "covariates_tft_norm_auto.md",
        "covariates_norm_auto.md", "covariates_tft_path_none.md"),
    "the least-squares start's lags of the future-known covariates, fixed (0, 3, 6) and auto against 0, compared on "
    "validation for every network (10-16 minutes each, at the commit each names)": (
        "covariates_lags.md", "covariates_lags_auto.md"),
    "choices made on the values before the hold-outs with the recipe's earlier budget of 800 sampled batches (its "
    "candidates name the preset, which now trains 400, so a rerun at main measures another recipe): the sampler and "
    "clipping, the history, the budget itself, masked targets, the transformer's defaults, auto's statistical pool "
    "and the final fit, each at the commit it names": (
        "recipe_sampler.md", "recipe_history.md", "recipe_budget.md", "recipe_budget_monthly.md", "masked_targets.md",
        "masked_targets_networks.md", "transformer_defaults.md", "auto_candidates.md", "final_fit.md"),
    "early stopping's validation part (1 or 3 horizons), its start (keep_start) and the final fit, compared on the "
    "last horizon before each covariate set's hold-out with and without the covariates (17-35 minutes each, at the "
    "commit each names; keep_start is off by default, so main's defaults rows are those files' defaults rows but "
    "tft's and patch-transformer's with covariates, measured before skip_units=data became their default)": (
        "covariates_stopping.md", "covariates_stopping_without.md", "covariates_stopping_final.md"),
    "what a normalised model's skip path reads with covariates (skip_units normalised or data), compared on the "
    "last horizon before each covariate set's hold-out, five networks x four sets x 3 seeds x 2 (12 minutes, at "
    "adbdc5e; its data rows are main's defaults, and covariates_attention.md's cell reruns that path)": (
        "covariates_skip_units.md",),
    "tft's untried settings with covariates under skip_units=data (num_heads 1, dropout 0, keep_start, hidden_size "
    "16), on the last horizon before each covariate set's hold-out, 5 variants x four sets x 3 seeds (14 minutes, at "
    "6da4969; a screening that changed no default; its defaults rows equal covariates_skip_units.md's data rows)": (
        "covariates_tft_variants.md",),
    "tft's hidden_size 16 against its defaults with covariates on seeds 3-5, the screening's lower variant checked on "
    "three more seeds (2 variants x four sets x 3 seeds, 9 minutes, at ed3988d on an AMD EPYC; no default changed)": (
        "covariates_tft_h16_seeds345.md",),
    "the recipe's training budget for patch-transformer before each M3 hold-out (2 candidates x 3 seeds x 4 "
    "frequencies, 21 minutes)": ("recipe_budget_patch.md",),
    "patch-transformer's number of heads before each M3 hold-out (3 candidates x 3 seeds x 4 frequencies, 20 "
    "minutes; its 4-head rows equal recipe_budget_patch.md's)": ("patch_heads.md",),
    "patch-transformer's lookback before each M3 hold-out (3 candidates x 3 seeds x 4 frequencies, 22 minutes; "
    "its default rows equal patch_heads.md's one-head rows)": ("patch_lookback.md",),
    "which networks auto chooses among, before each M3 hold-out (2 pools x 2 seeds x 4 frequencies, 22 minutes)": (
        "auto_pool.md",),
    "auto's margin rule (selection.SINGLE_MARGIN) before each M3 hold-out at two origins, all four frequencies "
    "(4 rules choosing among one fit of each candidate per seed, 3 seeds; 10-19 minutes each for yearly, other and "
    "quarterly on the Intel Xeon they name, 25-30 minutes each for monthly on an AMD EPYC; the rows named 'lowest "
    "(default)' were the default when they ran, 'margin 2%' is the default since)": (
        "auto_margin_yearly_other_o1.md", "auto_margin_yearly_other_o2.md", "auto_margin_quarterly_o1.md",
        "auto_margin_quarterly_o2.md", "auto_margin_monthly_o1.md", "auto_margin_monthly_o2.md"),
    "patch-transformer's patch length before each M3 hold-out (3 runs, one per window, 3 seeds, 28 minutes; their "
    "default rows equal patch_heads.md's one-head rows)": (
        "patch_length_monthly.md", "patch_length_quarterly_other.md", "patch_length_yearly.md"),
    "patch-transformer's width, depth and overlapping patches at equal work before the M3 monthly hold-out (4 "
    "candidates x 3 seeds, 28 minutes; none adopted)": ("patch_width_monthly.md",),
    "patch-transformer's learning rate and a skip path before the M3 monthly hold-out (4 candidates x 3 seeds, 22 "
    "minutes; none adopted; its default rows equal patch_width_monthly.md's)": ("patch_rate_monthly.md",),
    "patch-transformer's cost: one block, d_model 32 with ff_dim 64, one block with patches of 3, before the M3 "
    "monthly hold-out, then the one that went forward on the other frequencies (4 + 2 candidates x 3 seeds, 14 + 11 "
    "minutes; d_model 32, ff_dim 64 adopted), and the two widths one horizon earlier (2 candidates x 3 seeds x 4 "
    "frequencies, 17 minutes; 64 / 128 back)": ("patch_cost_monthly.md", "patch_cost_others.md",
                                               "patch_cost_origin2.md"),
    "patch-transformer on batches of 512 before the M3 hold-outs (1 candidate x 3 seeds, monthly, quarterly and "
    "yearly, 11 minutes; not adopted, stopped once the rule had failed)": ("patch_batch_origin1.md",),
    "patch-transformer's recipe budget, 3 and 2 epochs against 4, before each M3 hold-out (3 candidates x 3 seeds x 4 "
    "frequencies, 21 minutes; not adopted; its default rows equal patch_cost_monthly.md's and "
    "patch_cost_others.md's)": ("patch_budget_origin1.md",),
    "PatchTST's BatchNorm and residual attention in patch-transformer's encoder before the M3 monthly hold-out (4 "
    "candidates x 3 seeds, 27 minutes; none adopted; its default rows equal patch_rate_monthly.md's)": (
        "patch_encoder_monthly.md",),
    "patch-transformer as 3 stacked members at a third of the batch each before each M3 hold-out (2 candidates x 3 "
    "seeds x 4 frequencies, 95 minutes on shared cores; not adopted; its monthly default rows equal "
    "patch_encoder_monthly.md's)": ("patch_ensemble.md",),
    "masked targets for nbeats one horizon earlier (2 candidates x 3 seeds x 2 frequencies each, 15 minutes; the "
    "same code path as masked_targets_nbeats.md, whose cell reruns it)": ("masked_targets_nbeats_origin2.md",
                                                              "masked_targets_nbeats_origin2_monthly_other.md"),
    "every attention model beside nbeats and the recurrent networks at seed 0 before nbeats took masked targets by "
    "default (M3 at e8c09d1, M1 monthly at a0f9cb3; m3_main.md and m1_main.md hold the same models since, and their "
    "cells rerun patch-transformer)": ("m3_patch.md", "m1_attention.md"),
    "auto's conformal intervals with absolute and signed scores before the M3 and M1 hold-outs (5 data sets, 6 "
    "minutes on the AMD EPYC with AVX-512 it names; the same calibration code as intervals_scores.md, whose cell "
    "reruns it; signed not adopted; auto's median combination, before the weighted mean became its default)":
        ("intervals_scores_auto.md",),
    "auto's combination, the weighted mean against the median, two horizons before each M3 hold-out (4 frequencies x "
    "3 seeds, 11 minutes on the AMD EPYC with AVX-512 it names; the code path of auto_combination_o1.md, whose cell "
    "reruns it)": ("auto_combination_o2.md",),
    "auto's combination, the median against the weighted mean, one and two horizons before the M1 monthly hold-out (3 "
    "seeds each, 5 minutes on the AMD EPYC with AVX-512 it names; measured after m1_main.md showed the weighted mean "
    "behind the median on M1's test part; the code path of auto_combination_o1.md, whose cell reruns it)":
        ("auto_combination_m1_o1.md", "auto_combination_m1_o2.md"),
    "auto_combination=auto two horizons before each M3 and the M1 monthly hold-out (5 sets x 3 seeds, 10 minutes on the "
    "AMD EPYC with AVX-512 it names; the code path of auto_combination_auto_o1.md, whose cell reruns it)":
        ("auto_combination_auto_o2.md",),
    "nbeats' size (units 512, layers 4, blocks 8) before the M3 and M1 monthly hold-outs (4 candidates x 3 seeds x 2 "
    "origins on monthly, then 2 x 3 x 2 on the other sets, 45 minutes on the AMD EPYC with AVX-512 they name; the code "
    "path of nbeats_size_others_o1.md, whose cell reruns it)":
        ("nbeats_size_monthly_o1.md", "nbeats_size_monthly_o2.md", "nbeats_size_others_o2.md",
         "nbeats_size_m1_o1.md", "nbeats_size_m1_o2.md"),
    "nbeats with 4 layers per block before the M3 quarterly, yearly, other and M1 monthly hold-outs (2 candidates x 3 "
    "seeds x 2 origins, 14 minutes on the AMD EPYC with AVX-512 they name; the code path of nbeats_size_others_o1.md, "
    "whose cell reruns it)": ("nbeats_layers_o1.md", "nbeats_layers_o2.md"),
    "auto's intervals before the hold-outs with interval_scale auto, seeds 1 and 2 (20 minutes on the AMD EPYC with "
    "AVX-512 it names; the code path of intervals_scale_choice_auto.md, whose cell reruns it)":
        ("intervals_scale_choice_auto_seeds12.md",),
    "auto's intervals two horizons before the hold-outs with interval_scale auto, seeds 0-2, which made it auto's "
    "default (10 minutes on the AMD EPYC with AVX-512 it names; the code path of intervals_scale_choice_auto.md, whose "
    "cell reruns it)": ("intervals_scale_choice_auto_o2.md",),
    "auto's conformal intervals on the M3 monthly hold-out with interval_scale auto, measured while it was an option "
    "(8 minutes on the AMD EPYC with AVX-512 it names; the calibration code of intervals_scale_choice_auto.md, whose "
    "cell reruns it)":
        ("intervals_auto_scale.md",),
    "auto's conformal intervals with interval_scale blend and ets before the M3 monthly hold-out (13 minutes on the "
    "AMD EPYC with AVX-512 it names; the calibration code of intervals_scale_ets.md, whose cell reruns it; ets not "
    "adopted for auto, the file says why)": ("intervals_scale_ets_auto.md",),
    "the recipe's training budget for simple-rnn and attention-rnn before each M3 hold-out (2 candidates x 3 seeds x "
    "4 frequencies, 17 minutes)": ("recipe_budget_rnn.md",),
    "attention-rnn's readout (context+last against the context alone) two horizons before each M3 and the M1 monthly "
    "hold-out (2 candidates x 3 seeds x 5 sets, 8 minutes on the AMD EPYC with AVX2 it names; the code path of "
    "attention_readout_o1.md, whose cell reruns it)": ("attention_readout_o2.md",),
    "attention-rnn's skip path (naive against relative) two horizons before each M3 and the M1 monthly hold-out (2 "
    "candidates x 3 seeds x 5 sets, 8 minutes on the AMD EPYC with AVX2 it names; the code path of "
    "attention_skip_o1.md, whose cell reruns it)": ("attention_skip_o2.md",),
    "the same two horizons before the M1 yearly and Tourism yearly hold-outs (data the naive-skip rule was not chosen "
    "on; 3 minutes; the code path of attention_skip_heldout_o1.md, whose cell reruns it)":
        ("attention_skip_heldout_o2.md",),
    "simple-rnn's skip path (naive against relative) two horizons before the M3 yearly, other, M1 yearly and Tourism "
    "yearly hold-outs (3 minutes; the code path of simple_skip_o1.md, whose cell reruns it)": ("simple_skip_o2.md",),
    "the transformer's skip path (naive against relative) two horizons before the M3 yearly and other hold-outs, and "
    "one and two before the M1 yearly and Tourism yearly hold-outs (4 minutes each; the code path of "
    "transformer_skip_o1.md, whose cell reruns it)": ("transformer_skip_o2.md", "transformer_skip_heldout_o1.md",
                                                      "transformer_skip_heldout_o2.md"),
    "attention-rnn's width (units 32, 64, 128) two horizons before each M3 and the M1 monthly hold-out (3 candidates x "
    "3 seeds x 5 sets, 14 minutes; the code path of attention_units_o1.md, whose cell reruns it)":
        ("attention_units_o2.md",),
    "speed, memory and scale-out timings (machine-dependent seconds, not figures a rerun can match to 0.01)": (
        "engines.md", "fit_memory.md", "panel.md", "paths.md", "profile_fit.md", "progress.md", "speed.md",
        "speed_m3.md", "speed_m3_epyc512.md", "speed_m3_epyc_avx2.md", "speed_m3_epyc_avx2_adam.md",
        "speed_m3_epyc_avx2_shared.md", "speed_m3_epyc512_untuned.md", "speed_m3_fresh.md", "speed_m3_xeon.md",
        "xla.md"),
}


def row_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_value(text: str, section: str, row: str, column: str) -> str:
    """The text of the cell at ``row`` (first column) and ``column`` (a header starting with it) of the first table
    under the first "## " heading containing ``section``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ") and section in line), None)
    if start is None:
        raise LookupError(f"no section {section!r}")
    header = None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = row_cells(line)
        if header is None:
            header = cells
            index = next((i for i, name in enumerate(header) if name.startswith(column)), None)
            if index is None:
                raise LookupError(f"no column {column!r} in section {section!r}")
        elif cells[0] == row or cells[0].startswith(row + " (") \
                or " | ".join(cells[:row.count(" | ") + 1]) == row:  # "auto (chose theta)" is row "auto"; a row
            return cells[index]  # "nbeats | masked targets" names the first two cells
    raise LookupError(f"no row {row!r} in section {section!r}")


def number(cell: str) -> float:
    found = re.search(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", cell)
    if found is None:
        raise ValueError(f"no number in {cell!r}")
    return float(found.group())


def processor(text: str) -> str | None:
    """The processor a results file was measured on (its "- machine:" line: "2 cores, AMD EPYC, Linux ...")."""
    found = re.search(r"^- machine: [^,]*, ([^,]*),", text, flags=re.M)
    return found.group(1).strip() if found else None


def names_instruction_set(processor_name: str) -> bool:
    """Whether a "- machine:" processor records its widest vector instruction set, as _common.cpu_model() writes it
    since 19f9dfb: "AMD EPYC (AVX2)"; older files say only "AMD EPYC" (or "Intel(R) Xeon(R) CPU @ 2.20GHz", whose
    brackets are not a set)."""
    return any(processor_name.endswith(f" ({label})") for _, label in C.VECTOR_SETS)


def same_processor(measured_on: str, here: str) -> bool:
    """Whether a file's processor is this one: the same name and instruction set ("AMD EPYC (AVX2)"). Files written
    before the instruction set was recorded name only the processor ("AMD EPYC", made with AVX-512 and with AVX2
    alike), so they are never taken for this one: a figure of theirs that differs is reported as OTHER."""
    return measured_on == here and names_instruction_set(here)


def this_processor() -> str:
    return C.cpu_model()


def check_cell(cell: Cell) -> tuple[bool, str]:
    published = number(table_value((RESULTS / cell.file).read_text(), cell.section, cell.row, cell.column))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / cell.file
        run = subprocess.run([sys.executable, *cell.command, "--out", str(out)], cwd=ROOT, capture_output=True,
                             text=True)
        if run.returncode != 0:
            return False, f"its command failed: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ''}"
        again = number(table_value(out.read_text(), cell.section, cell.row, cell.column))
    ok = abs(again - published) <= TOLERANCE
    return ok, f"published {published:g}, now {again:g}"


README_SOURCES = ("m3_main.md",)  # the README's M3 table: each row from the first file that has it
README_MODELS = ("simple-rnn", "attention-rnn", "transformer", "patch-transformer", "nbeats", "auto", "naive")


def readme_cell_problem(value: str, texts: list[str], section: str, row: str, column: str, what: str) -> str | None:
    """None when a README cell's ``value`` is, as text, the figure at (section, row, column) of the first results file
    of ``texts`` that has it; else the problem, named by ``what`` ("...: 13.40, the results file: 13.36" when it
    differs, the lookup's error when no file has it)."""
    missing = None
    for text in texts:
        try:
            published = table_value(text, section, row, column).split(" ±")[0]
        except LookupError as error:
            missing = error
            continue
        return None if value.split(" ±")[0] == published else f"{what}: {value}, the results file: {published}"
    return f"{what}: {missing}"


def check_readme() -> list[str]:
    """The README's M3 table against the results files it cites (m3_main.md): each network's (and auto's and
    naive's) figure per frequency is the first file's section "M3 <frequency>" with that row, the all-series one its
    "All frequencies" table, as text; and the README names each file's commit."""
    readme = (ROOT / "README.md").read_text()
    cited = [name for name in README_SOURCES if f"](benchmarks/results/{name})" in readme]
    if "m3_main.md" not in cited:
        return ["README.md does not cite benchmarks/results/m3_main.md for its M3 table"]
    texts = [(RESULTS / name).read_text() for name in cited]
    problems, checked = [], 0
    for line in readme.splitlines():
        cells = row_cells(line)
        model = cells[0].split(" (")[0]
        if not line.startswith("| ") or model not in README_MODELS:
            continue
        for frequency, value in zip(("monthly", "quarterly", "yearly", "other", "all"), cells[1:]):
            section = f"M3 {frequency}" if frequency != "all" else "All frequencies"
            problem = readme_cell_problem(value, texts, section, model, "test sMAPE", f"README {model} {frequency}")
            checked += problem is None or "the results file:" in problem  # found (the same or not)
            problems += [problem] if problem else []
    if not checked:
        problems.append("the README's M3 table has no row of a network")
    for name, text in zip(cited, texts):
        commit = re.search(r"- commit: (\w+)", text)
        if commit is None or commit.group(1) not in readme:
            problems.append(f"the README's M3 table does not name the commit of {name}")
    return problems + check_readme_tourism(readme)


TOURISM_SOURCE = "tourism_main.md"  # the README's Tourism table: a row per frequency, a column per model, test MASE


def check_readme_tourism(readme: str) -> list[str]:
    """The README's Tourism table (header "| Tourism, test MASE ... | model | model | ..."; rows "| monthly (...) |
    ...") against tourism_main.md, cell by cell as text (each model's row in section "TOURISM <frequency>", column
    "test MASE"), and the README names that file's commit. No such table: nothing to check."""
    lines = readme.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| Tourism")), None)
    if start is None:
        return []
    if f"](benchmarks/results/{TOURISM_SOURCE})" not in readme:
        return [f"README.md's Tourism table does not cite benchmarks/results/{TOURISM_SOURCE}"]
    text = (RESULTS / TOURISM_SOURCE).read_text()
    models = row_cells(lines[start])[1:]
    problems, checked = [], 0
    for line in lines[start + 2:]:
        if not line.startswith("| "):
            break
        cells = row_cells(line)
        frequency = cells[0].split(" (")[0]
        for model, value in zip(models, cells[1:]):
            problem = readme_cell_problem(value, [text], f"TOURISM {frequency}", model, "test MASE",
                                          f"README Tourism {model} {frequency}")
            checked += problem is None or "the results file:" in problem
            problems += [problem] if problem else []
    if not checked:
        problems.append("the README's Tourism table has no figure")
    commit = re.search(r"- commit: (\w+)", text)
    if commit is None or commit.group(1) not in readme:
        problems.append(f"the README's Tourism table does not name the commit of {TOURISM_SOURCE}")
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true", help="list the cells and the files not checked")
    p.add_argument("--cells", default="", help="run only cells whose label contains this text (several: separated "
                                                "by semicolons)")
    args = p.parse_args()
    covered = {cell.file for cell in CELLS} | {name for group in ARCHIVED.values() for name in group}
    unlisted = sorted(path.name for path in RESULTS.glob("*.md") if path.name not in covered)
    if args.list:
        for cell in CELLS:
            print(f"{cell.file}: {cell.label}: python {' '.join(cell.command)}")
        for reason, names in ARCHIVED.items():
            print(f"not rerun ({reason}): {', '.join(names)}")
        return 0
    failed = [f"{name}: a results file with no cell and no reason it is not rerun" for name in unlisted]
    for problem in check_readme():
        failed.append(problem)
    here, elsewhere = this_processor(), []
    for cell in CELLS:
        if args.cells and not any(part.strip() in cell.label for part in args.cells.split(";")):
            continue
        print(f"[reproduce] {cell.label} ...", file=sys.stderr, flush=True)
        ok, detail = check_cell(cell)
        measured_on = processor((RESULTS / cell.file).read_text())
        if not ok and measured_on is not None and not same_processor(measured_on, here):
            # TensorFlow's CPU kernels differ by instruction set (AVX-512 on one processor, AVX2 on another): the same
            # code and seed round differently, and over hundreds of training steps a figure moves by up to ~0.2
            # (M3 yearly nbeats at 06eb6a8: 16.45 on AMD EPYC, 16.61 on an Intel Xeon); not a change of the code
            unknown = "" if names_instruction_set(measured_on) else ", its instruction set not recorded"
            print(f"OTHER {cell.file}: {cell.label}: {detail} (measured on {measured_on}{unknown}, rerun on {here})")
            elsewhere.append(cell.label)
            continue
        print(f"{'ok  ' if ok else 'FAIL'} {cell.file}: {cell.label}: {detail}")
        if not ok:
            failed.append(f"{cell.file}: {cell.label}: {detail}")
    for problem in failed:
        print(f"FAIL {problem}")
    if elsewhere:
        print(f"{len(elsewhere)} cell(s) differ but were measured on another processor than this {here}: they are "
              "checked only on that processor (rerun there, or regenerate the file here)")
    pinned = C.pinned_threads()
    if failed and pinned:
        print(f"{', '.join(pinned)} set here: TensorFlow's thread count changes how its sums round (M3 yearly nbeats "
              "seed 0 at 4ff27f9: 16.28 with one thread, 16.26 with TensorFlow's default, as published); the figures "
              "ran with the default threads: unset them and rerun")
    print("every checked figure reproduces" if not failed else f"{len(failed)} problem(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

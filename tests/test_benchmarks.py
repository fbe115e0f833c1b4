"""The benchmark scripts' quick modes, so they cannot rot (their figures are not checked here)."""

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each script's quick mode trains several models: tens of seconds


@pytest.mark.parametrize("script, expected", [
    ("tutorials.py", ["Sunspots SimpleRNN", "published", "MSE of predicting 0", "QUICK MODE"]),
    ("accuracy.py", ["linear AR(24), fit on all data before the test part", "naive (last value)",
                     "Fibonacci known answer", "QUICK MODE"]),
    ("speed.py --rounds 2 --fresh", ["Predict throughput", "Growth with series length", "tsattn compare", "QUICK MODE",
                                     "each fit in its own interpreter", "whole process", "Commands that do not train",
                                     "M3 monthly", "Training seconds in 2 rounds", "median ratio"]),
    ("panel.py", ["M3 monthly: one global model per network", "seasonal naive", "per series",
                  "Peak resident memory", "QUICK MODE"]),
    ("m3.py", ["M3 monthly", "Theta (statsforecast)", "AutoETS (statsforecast)", "Does attention help?",
               "All frequencies", "## Targets", "ensemble of 2 (median)", "QUICK MODE"]),
    ("m3_defaults.py", ["selection part", "skip relative", "QUICK MODE"]),
    ("auto_candidates.py", ["## M3 yearly (24 series)", "| DynamicOptimizedTheta, AutoETS | best three, at most one",
                            "## Summary: every frequency, weighted by series", "Lowest: ", "QUICK MODE"]),
    ("auto_defaults.py", ["M3 yearly, 10 series (selection part, h = 6)", "| simple-rnn | recipe |", "| nbeats | classic |",
                          "QUICK MODE"]),
    ("short_series.py", ["## Nile flow, 1871-1970 (100 values)", "| attention-rnn | classic |", "| naive |",
                         "QUICK MODE"]),
    ("xla.py", ["| XLA |", "validation sMAPE", "QUICK MODE"]),
    ("engines.py", ["--jobs 2", "ray, local instance | not measured in quick mode", "Scheduling overhead", "QUICK MODE"]),
    ("early_stopping.py", ["## Summary", "val loss p=10 / p=20", "QUICK MODE"]),
    ("profile_fit.py", ["import tsattn.harness", "tracing (first - median) s", "epochs after the best", "QUICK MODE"]),
    ("paths.py", ["tsattn.Forecaster", "tsattn fit", "harness (compare, benchmarks)", "the paths agree", "QUICK MODE"]),
    ("recipe.py", ["M3 monthly", "### Every model: defaults and the recipe", "skip=naive", "members' test sMAPE",
                   "Theta (statsforecast)", "QUICK MODE"]),
    ("covariates.py", ["## promodata", "AutoARIMA + regressors (statsforecast", "## Summary", "lift on promoted steps (real calendar)",
                       "### Permutation importance",
                       "Wilcoxon p", "QUICK MODE"]),
    ("covariates_defaults.py", ["Mean validation sMAPE", "Chosen (skip_init=auto with covariates)", "QUICK MODE"]),
    ("tuning.py", ["| attention-rnn | tuned |", "linear AR (the defaults' window)", "## Settings found", "QUICK MODE"]),
    ("final_fit.py", ["## M3 yearly, 10 series (classic)", "| simple-rnn | classic |", "## Per preset", "QUICK MODE"]),
    ("ragged.py", ["## m3-monthly: 1 panels of 10 series, 2 cut short", "| simple-rnn | pad | 24 |",
                   "## Summary: pad minus shrink", "QUICK MODE"]),
    ("progress.py", ["Progress off a terminal", "longest quiet gap", "The five longest gaps", "QUICK MODE"]),
    ("intervals_ets_scale.py", ["| monthly | 80 | conformal, scores in sqrt(blend x ETS deviation) |",
                                "AutoETS's own intervals", "monthly (24 series) 95%: blend", "QUICK MODE"]),
    ("intervals.py", ["## m3-monthly", "## sunspots", "(conformal)", "quantile loss", "AutoETS (its own intervals)",
                      "## Targets", "QUICK MODE"]),
])
def test_benchmark_quick_mode(script, expected, tmp_path, monkeypatch):
    """Run in this process as ``python benchmarks/SCRIPT --quick`` runs it (TensorFlow is imported once per worker, not
    once per script: 4 s each)."""
    out = tmp_path / "result.md"
    script, *options = script.split()  # "script.py --option value": the script, then its options
    argv = [str(ROOT / "benchmarks" / script), "--quick", *options, "--out", str(out)]
    monkeypatch.chdir(tmp_path)  # no script starts Ray in quick mode (the Ray tests, marked ray, run after the workers)
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts benchmarks/ first: taken back after
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as stop:
        assert stop.code in (None, 0), f"{script} exited with {stop.code}"
    text = out.read_text()
    for fragment in expected:
        assert fragment in text, fragment
    assert "- machine: " in text and "- versions: tsattn" in text


@pytest.mark.parametrize("options, message", [
    (["--rounds", "0"], "--rounds must be at least 1; got 0"),
    (["--models", "nbeats,foo"], "unknown models ['foo']"),
])
def test_speed_refuses_bad_options_in_one_line_before_any_section(options, message):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "speed.py"), "--sections", "m3", *options],
                            capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("options, message", [
    (["--interval-scales", "blend,history"], "--interval-scales takes expanding, insample, recent, blend"),
    (["--interval-scores", "both"], "--interval-scores takes absolute, signed"),
    (["--origin", "2"], "more than 1 only with --before-holdout"),
    (["--before-holdout", "--origin", "0"], "--origin takes 1 or more"),
])
def test_intervals_refuses_unknown_scales_and_scores_before_any_fit(options, message):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "intervals.py"), "--quick", *options],
                            capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_m3_names_each_choice_of_auto_once_with_its_seeds(monkeypatch):
    monkeypatch.setattr(sys, "path", [str(ROOT / "benchmarks"), *sys.path])
    chosen_by_seed = runpy.run_path(str(ROOT / "benchmarks" / "m3.py"))["chosen_by_seed"]
    assert chosen_by_seed(["median of a, b"], [0]) == "median of a, b"
    assert chosen_by_seed(["median of a, b", "nbeats", "median of a, b"], [0, 1, 2]) == \
        "median of a, b (seeds 0, 2); nbeats (seed 1)"

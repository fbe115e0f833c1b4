"""benchmarks/reproduce.py's bookkeeping (fast; its cells are rerun by the script itself, not here)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import reproduce as R  # noqa: E402


def test_every_results_file_has_a_cell_or_says_why_it_is_not_rerun():
    listed = {cell.file for cell in R.CELLS} | {name for names in R.ARCHIVED.values() for name in names}
    present = {path.name for path in R.RESULTS.glob("*.md")}
    assert present - listed == set(), "a new results file needs a cell in benchmarks/reproduce.py (or a reason)"
    assert listed - present == set(), "reproduce.py names a results file that does not exist"


def test_every_cell_reads_a_number_from_its_published_file():
    for cell in R.CELLS:
        cell_text = R.table_value((R.RESULTS / cell.file).read_text(), cell.section, cell.row, cell.column)
        assert R.number(cell_text) > 0, cell.label


def test_the_readme_table_is_its_results_file_at_the_commit_it_names():
    assert R.check_readme() == []


def test_the_readme_tourism_table_is_checked_figure_by_figure():
    readme = (ROOT / "README.md").read_text()
    assert "| Tourism" in readme and R.check_readme_tourism(readme) == []
    line = next(line for line in readme.splitlines() if line.startswith("| yearly ("))
    cells = line.split("|")
    cells[2] = " 9.999 "  # auto's figure
    assert R.check_readme_tourism(readme.replace(line, "|".join(cells))) == \
        ["README Tourism auto yearly: 9.999, the results file: " + R.row_cells(line)[1]]


def test_table_value_reads_a_markdown_table_by_section_row_and_column():
    text = "# t\n\n## M3 yearly: 645 series\n\n| model | seeds | test sMAPE (mean) |\n|---|---|---|\n" \
           "| nbeats | 1 | 16.61 ± 0.00 |\n\n## M3 other\n\n| model | test sMAPE |\n|---|---|\n| nbeats | 4.3 |\n"
    assert R.table_value(text, "M3 yearly", "nbeats", "test sMAPE") == "16.61 ± 0.00"
    assert R.number(R.table_value(text, "M3 other", "nbeats", "test sMAPE")) == 4.3
    with pytest.raises(LookupError, match="no row 'simple-rnn'"):
        R.table_value(text, "M3 yearly", "simple-rnn", "test sMAPE")


def test_a_figure_is_checked_only_on_the_processor_and_instruction_set_it_was_measured_on():
    text = "# t\n\n- machine: 2 cores, AMD EPYC (AVX2), Linux x86_64, no GPU used\n"
    assert R.processor(text) == "AMD EPYC (AVX2)"
    assert R.same_processor("AMD EPYC (AVX2)", "AMD EPYC (AVX2)")
    assert not R.same_processor("AMD EPYC (AVX-512)", "AMD EPYC (AVX2)")
    assert not R.same_processor("AMD EPYC", "AMD EPYC (AVX2)")  # written before the set was recorded: unknown
    assert not R.same_processor("Intel(R) Xeon(R)", "Intel(R) Xeon(R)")  # brackets in a name are not a set
    assert R.same_processor("Intel(R) Xeon(R) CPU @ 2.20GHz (AVX-512)", "Intel(R) Xeon(R) CPU @ 2.20GHz (AVX-512)")
    import _common

    assert R.this_processor() == _common.cpu_model() and _common.cpu_model().strip()


@pytest.mark.parametrize("pinned", [True, False])
def test_a_figure_that_differs_under_pinned_threads_names_them(pinned, monkeypatch, capsys):
    """A cell rerun with TF_NUM_INTRAOP_THREADS=1 (the test suite's setting) rounds differently from the published
    run (TensorFlow's default threads): the failure says so and how to rerun; without them nothing is added."""
    cell = next(c for c in R.CELLS  # one measured on a processor named with its instruction set: checked here
                if R.names_instruction_set(R.processor((R.RESULTS / c.file).read_text()) or ""))
    monkeypatch.setattr(R, "check_cell", lambda c: (False, "published 16.26, now 16.28"))
    monkeypatch.setattr(R, "check_readme", lambda: [])
    monkeypatch.setattr(R, "this_processor", lambda: R.processor((R.RESULTS / cell.file).read_text()))
    for name in R.C.THREAD_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    if pinned:
        monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
    monkeypatch.setattr(sys, "argv", ["reproduce.py", "--cells", cell.label])
    assert R.main() == 1
    out = capsys.readouterr().out
    assert ("TF_NUM_INTRAOP_THREADS=1 set here" in out and "unset them and rerun" in out) == pinned


def test_a_results_header_records_the_thread_settings_it_ran_with(monkeypatch):
    for name in R.C.THREAD_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert R.C.thread_settings() == "TensorFlow's default threads"
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert R.C.thread_settings() == "threads TF_NUM_INTRAOP_THREADS=1, OMP_NUM_THREADS=1"
    machine = next(line for line in R.C.header("t", "c", quick=True) if line.startswith("- machine: "))
    assert machine.endswith("no GPU used, threads TF_NUM_INTRAOP_THREADS=1, OMP_NUM_THREADS=1")
    assert R.processor(machine) == R.C.cpu_model()  # the processor is still read from the line

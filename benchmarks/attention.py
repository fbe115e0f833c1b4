"""Does attention help? The answer gathered in one page from the results files that measured it.

    python benchmarks/attention.py     # -> benchmarks/results/attention.md

Nothing is trained here: every figure is copied from a results file of benchmarks/results/ (each produced by its own
command at its own commit, named beside it), so this page reproduces exactly whenever those files do
(`python benchmarks/reproduce.py` reruns cells of each). Copied: the headline test sMAPE of every network in each
file, and each file's paired per-series tests ("Does attention help?" sections, Wilcoxon signed-rank over series),
and for the covariate sets tft against the best other network with the same covariates, tft's variable importance
on the synthetic panel and the promotion lift recovered.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
# (results file, what it measured): the M3, M1 and Tourism runs with every attention model beside nbeats and simple-rnn
SOURCES = (
    ("m3_main.md", "M3, all four frequencies, seed 0"),
    ("m3_patch_seeds_wide.md", "M3, seeds 0-2 (patch-transformer at its default width, d_model 64, ff_dim 128)"),
    ("m1_main.md", "M1 monthly (nothing was chosen on it), seed 0"),
    ("tourism_main.md", "Tourism, monthly, quarterly and yearly (nothing was chosen on it), seed 0"),
    ("covariates_attention.md", "covariate sets (PromoData, Seatbelts, BJsales, the synthetic panel), seeds 0-2"),
)
NETWORKS = ("nbeats", "simple-rnn", "attention-rnn", "transformer", "patch-transformer", "tft")


def meta(text: str) -> dict:
    """A results file's command (as written: in backticks, with any note after them, e.g. "(copied here)"), commit
    and date."""
    return dict(re.findall(r"^- (command|commit|date): (.*)$", text, flags=re.M))


def sections(text: str) -> list[tuple[str, list[str]]]:
    """Each "## " or "### " heading with the lines under it (up to the next heading)."""
    found, title, body = [], None, []
    for line in text.splitlines():
        if line.startswith("## ") or line.startswith("### "):
            if title is not None:
                found.append((title, body))
            title, body = line.lstrip("#").strip(), []
        elif title is not None:
            body.append(line)
    if title is not None:
        found.append((title, body))
    return found


def table_rows(body: list[str]) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in body
            if line.startswith("|") and not line.startswith("|---")]


def headline(title: str, body: list[str]) -> list[str]:
    """The networks' and the statistical methods' test sMAPE of one frequency's table, as "model sMAPE" pairs."""
    rows = table_rows(body)
    if not rows or "test sMAPE" not in " ".join(rows[0]):
        return []
    column = next(i for i, name in enumerate(rows[0]) if name.startswith("test sMAPE"))
    keep = [row for row in rows[1:] if row[0] in NETWORKS or row[0].startswith(("Theta (statsforecast)",
                                                                                "AutoETS (statsforecast)"))]
    return [f"{row[0]} {row[column].split(' ±')[0]}" for row in keep]


# the comparisons of the summary table: attention model against a network without attention (the first is better
# where the mean difference is below 0)
COMPARISONS = ("patch-transformer vs nbeats", "patch-transformer vs simple-rnn", "attention-rnn vs simple-rnn",
               "tft vs nbeats")
SIGNIFICANT = 0.05


def paired(text: str) -> dict:
    """{(data label, comparison): (mean difference, Wilcoxon p or None, share of series where the first is better)}
    from a file's paired tables: the M3/M1 files' "Does attention help? (M3 monthly, ...)" sections, and the covariate
    file's table with a dataset column."""
    found = {}
    for title, body in sections(text):
        if not title.startswith("Does attention help?"):
            continue
        rows = table_rows(body)
        if not rows:
            continue
        header, data = rows[0], rows[1:]
        by_dataset = header[0] == "dataset"
        for row in data:
            label = f"{row[0]}, with covariates" if by_dataset else title.split("(", 1)[1].split(",")[0]
            comparison = row[1] if by_dataset else row[0]
            better, difference, p = row[-3], row[-2], row[-1]
            wins, count = (int(v) for v in better.split()[0].split("/"))
            found[(label, comparison)] = (float(difference), None if p in ("-", "nan") else float(p), wins / count)
    return found


def verdict(difference: float, p: float | None, share: float) -> str:
    """A summary cell: the mean sMAPE difference, its p-value, the share of series where the attention model is
    better, and one word: better / worse where p < 0.05 and the mean and the majority of series agree, mixed where
    they disagree (a few series move the mean against most of them), level where p >= 0.05."""
    figures = f"{difference:+.2f}, {100 * share:.0f}% of series better"
    if p is None:
        return f"{difference:+.2f} (one series: no test)"
    if p >= SIGNIFICANT:
        word = "level"
    elif (difference < 0) == (share > 0.5):
        word = "better" if difference < 0 else "worse"
    else:
        word = "mixed"
    return f"{word}: {figures}, p = {p:.2g}"


def summary(found: dict) -> list[str]:
    """One row per data set, one column per comparison (empty where not measured)."""
    labels = list(dict.fromkeys(label for label, _ in found))
    rows = [[label] + [verdict(*found[(label, c)]) if (label, c) in found else "" for c in COMPARISONS]
            for label in labels]
    return C.table(["data (test sMAPE, first minus second; Wilcoxon over series)", *COMPARISONS], rows)


def main() -> None:
    parser = C.parser(__doc__.splitlines()[0], "attention.md")
    args = parser.parse_args()
    lines = C.header("Does attention help?", C.command_line(), False)
    lines += ["Gathered from the results files below (each with its own command, commit and date; nothing is trained "
              "by this script). Paired tests: per-series test sMAPE, Wilcoxon signed-rank over series; a difference "
              "below 0 means the first model is better.", ""]
    texts = {name: (RESULTS / name).read_text(encoding="utf-8") for name, _ in SOURCES if (RESULTS / name).exists()}
    found = {}
    for text in texts.values():
        found.update(paired(text))
    lines += ["## Summary: attention against no attention, paired over series", "",
              f"Better / worse: Wilcoxon p < {SIGNIFICANT} with the mean per-series test sMAPE difference and the "
              "majority of series on the same side; mixed: significant, but the mean and the majority disagree; level: "
              "no significant difference. M3, M1 and Tourism seed 0 (m3_main.md, m1_main.md, tourism_main.md); the "
              "covariate sets with "
              "their future-known covariates, seeds 0-2 averaged per series (covariates_attention.md).", ""]
    lines += summary(found) + [""]
    for name, what in SOURCES:
        if name not in texts:
            lines += [f"## {what}: {name} (not measured yet)", ""]
            continue
        text = texts[name]
        info = meta(text)
        lines += [f"## {what}: [{name}]({name})", "",
                  f"- command: {info.get('command', '?')}",
                  f"- commit: {info.get('commit', '?')}, "
                  f"{info.get('date', '?')}", ""]
        for title, body in sections(text):
            heads = headline(title, body)
            if heads:
                lines += [f"**{title}**, test sMAPE: " + ", ".join(heads), ""]
            if title.startswith(("Does attention help", "Paired over series", "tft against", "tft's variable",
                                 "Promotion lift recovered (tft")) or (name.startswith("covariates") and
                                                                       title.startswith("Summary")):
                lines += [f"### {title}", ""] + [line for line in body if line.startswith("|")] + [""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

"""Which statistical methods `auto` chooses among, chosen on validation: its choice under each pool of statistical
candidates (and each rule for the median candidate), per M3 frequency, on the validation part only.

    python benchmarks/auto_candidates.py           # -> benchmarks/results/auto_candidates.md (M3, seed 0)
    python benchmarks/auto_candidates.py --quick   # 24 series of M3 yearly, 2 epochs (run by the tests)

`auto` is fitted through the harness as `tsattn fit --model auto` fits it (the competition hold-out is the test part,
never read). Every candidate is fitted once (memoised), then each pool's and rule's selection is made on the same
validation forecasts, so the pools differ only in what they may choose. The figure is the validation sMAPE of the
candidate each variant chose; the declared rule: the pool (and rule) with the lowest validation sMAPE over all series
(each frequency weighted by its series) becomes the default.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

POOLS = {"Theta, AutoETS": ("theta", "ets"), "DynamicOptimizedTheta, AutoETS": ("dynamic-theta", "ets"),
         "Theta, DynamicOptimizedTheta, AutoETS": ("theta", "dynamic-theta", "ets")}


def one_network(ranked: list, network: dict) -> list:
    """The median candidate's other rule: the best network and the best two other candidates."""
    from tsattn.selection import COMBINED

    nets = [name for name in ranked if network[name]][:1]
    others = [name for name in ranked if not network[name]][:COMBINED - len(nets)]
    return [name for name in ranked if name in nets or name in others]


def variants(frame, quick: bool) -> list[tuple]:
    """(pool, rule, chosen, its validation sMAPE) for every pool and rule, from one fit of each candidate."""
    import keras

    from tsattn import harness, selection
    from tsattn.config import RunConfig

    real_fit_auto, real_members, real_pool = selection.fit_auto, selection.combination_members, \
        selection.statistical_candidates
    rules = {"best three, at most one network": real_members, "the best network and the best two others": one_network}
    found = []

    def every_variant(config, data, fit_state, progress=None, engine=None, params=None, columns=None):
        once = C.fit_each_once(fit_state, {})
        state = None
        for pool_name, pool in POOLS.items():
            for rule_name, rule in rules.items():
                selection.statistical_candidates = lambda pool=pool: pool
                selection.combination_members = rule
                state = real_fit_auto(config, data, once, progress, engine, params=params, columns=columns)
                chosen = state.choice[state.choice["candidate"] == selection.chosen_candidate(state.choice)].iloc[0]
                found.append((pool_name, rule_name, str(chosen["candidate"]),
                              float(chosen[state.choice.attrs["metric"]])))
        return state

    harness.fit_auto = every_variant
    try:
        keras.backend.clear_session()
        config = RunConfig(model="auto", dataset=None, horizon=int(frame.attrs["horizon"]), seed=0,
                           **({"epochs": 2} if quick else {}))
        harness.fit(config, series=frame)
    finally:
        harness.fit_auto, selection.combination_members, selection.statistical_candidates = \
            real_fit_auto, real_members, real_pool
    return found


def main() -> None:
    import tsattn

    parser = C.parser(__doc__.splitlines()[0], "auto_candidates.md")
    parser.add_argument("--frequencies", default="monthly,quarterly,yearly,other")
    args = parser.parse_args()
    frequencies = ["yearly"] if args.quick else args.frequencies.split(",")
    lines = C.header("auto's statistical candidates, chosen on validation", C.command_line(), args.quick)
    lines += ["Validation sMAPE of the candidate `auto` chose (M3, seed 0, defaults; the test part never read), under "
              "each pool of statistical candidates and each rule for the median candidate; the networks (nbeats, "
              "attention-rnn, simple-rnn) and the always-on baselines are candidates in every variant.", ""]
    totals, counts = {}, {}
    for frequency in frequencies:
        frame = tsattn.load_dataset(f"m3-{frequency}")
        frame = C.quick_subset(frame) if args.quick else frame
        series = frame["unique_id"].nunique()
        started = time.perf_counter()
        found = variants(frame, args.quick)
        print(f"[auto_candidates] {frequency}: {time.perf_counter() - started:.0f} s", flush=True)
        lines += [f"## M3 {frequency} ({series} series)", ""]
        lines += C.table(["pool", "rule", "chosen", "validation sMAPE"],
                         [[pool, rule, chosen, f"{score:.3f}"] for pool, rule, chosen, score in found]) + [""]
        for pool, rule, _, score in found:
            totals[(pool, rule)] = totals.get((pool, rule), 0.0) + score * series
            counts[(pool, rule)] = counts.get((pool, rule), 0) + series
    lines += ["## Summary: every frequency, weighted by series", ""]
    rows = sorted(((totals[key] / counts[key], key) for key in totals))
    lines += C.table(["pool", "rule", "validation sMAPE"], [[pool, rule, f"{score:.3f}"]
                                                            for score, (pool, rule) in rows]) + [""]
    lines += [f"Lowest: {rows[0][1][0]} with {rows[0][1][1]} ({rows[0][0]:.3f}).", ""]
    C.write(args.out, lines)


if __name__ == "__main__":
    main()

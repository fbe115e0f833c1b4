"""Progress on long work: a line at least every few seconds, whatever runs it."""

import io
import time

from tsattn.progress import Heartbeat


def test_a_heartbeat_speaks_only_when_the_work_is_quiet():
    lines = []
    with Heartbeat(lines.append, "compare", every=0.3) as beat:
        beat.stage("the first run")
        time.sleep(1.0)  # quiet: about three heartbeat lines
        quiet = len(lines)
        for _ in range(8):  # the work's own lines keep it silent
            beat.echo("epoch line")
            time.sleep(0.1)
    assert 2 <= quiet <= 4 and lines[0].startswith("compare: the first run, elapsed ")
    assert lines[quiet:] == ["epoch line"] * 8
    time.sleep(0.5)
    assert len(lines) == quiet + 8  # nothing after the block


def test_writes_through_the_wrapped_stream_count_as_lines():
    lines, stream = [], io.StringIO()
    with Heartbeat(lines.append, "fit", every=0.3) as beat:
        wrapped = beat.stream(stream)
        for _ in range(8):
            wrapped.write("epoch\n")
            time.sleep(0.1)
    assert lines == [] and stream.getvalue() == "epoch\n" * 8 and wrapped.isatty() is False


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_epochs_are_a_tqdm_bar_on_a_terminal_and_lines_off_it():
    from tsattn.harness import EpochProgress

    def train(stream):
        progress = EpochProgress(12, stream=stream)
        progress.on_train_begin()
        for epoch in range(12):
            progress.on_epoch_end(epoch, {"loss": 0.5 / (epoch + 1), "val_loss": 0.6})
        progress.on_train_end()
        return stream.getvalue()

    bar = train(_Terminal())
    assert "12/12" in bar and ("epoch/s" in bar or "s/epoch" in bar)
    assert "\r" in bar and "loss 0.04167  val_loss 0.60000" in bar and "epoch 1/12" not in bar
    lines = train(io.StringIO()).splitlines()  # off a terminal: the first epoch and every 10th
    assert [line.split()[1] for line in lines] == ["1/12", "10/12"] and "\r" not in "".join(lines)


def test_the_heartbeat_says_how_far_a_long_epoch_has_got():
    from tsattn.harness import EpochProgress

    lines = []
    with Heartbeat(lines.append, "fit nbeats", every=0.3) as beat:
        progress = EpochProgress(12, stream=io.StringIO(), heartbeat=beat)
        progress.set_params({"steps": 3000, "epochs": 12})
        progress.on_train_begin()
        progress.on_epoch_begin(0)
        progress.on_train_batch_end(1199)
        time.sleep(0.45)
    assert lines and lines[0].startswith("fit nbeats: training, epoch 1/12, step 1200/3000, elapsed ")
    lines.clear()
    with Heartbeat(lines.append, "fit auto", every=0.3) as beat:  # the next candidate, a statistical one: no epochs
        progress = EpochProgress(12, stream=io.StringIO(), heartbeat=beat)
        progress.stage("auto, simple-rnn: ", 12)
        progress.on_train_begin()
        progress.on_train_end()
        progress.stage("auto, ets: ")
        time.sleep(0.45)
    assert lines and lines[0].startswith("fit auto: auto, ets: fitting, elapsed "), lines


def test_units_of_work_are_a_bar_on_a_terminal_with_the_lines_above_it():
    """compare's runs, tune's trials, backtest's refits: a tqdm bar when the echo names a terminal (the CLI's
    progress output on a terminal, never with --quiet or --json), the plain lines otherwise."""
    class Echo:
        def __init__(self, terminal):
            self.terminal, self.lines = terminal, []

        def __call__(self, line):
            self.lines.append(line)

    screen = _Terminal()
    echo = Echo(screen)
    with Heartbeat(echo, "compare", total=3) as beat:
        for k in range(3):
            beat.echo(f"[{k + 1}/3] run done")
            beat.advance()
    shown = screen.getvalue()
    assert echo.lines == [] and "[2/3] run done" in shown and "3/3" in shown and "compare: 100%" in shown
    plain = Echo(None)
    with Heartbeat(plain, "compare", total=3) as beat:
        for k in range(3):
            beat.echo(f"[{k + 1}/3] run done")
            beat.advance()
    assert plain.lines == [f"[{k}/3] run done" for k in (1, 2, 3)]


def test_the_wait_after_training_names_the_statistical_baselines_it_fits():
    """Found by a user-path check: `tsattn fit --futr-exog` on three hourly series trained in seconds, then said
    "training done; scoring and calibrating" for over 15 minutes while AutoARIMA (added for the covariates, season
    24) was refitted origin by origin. The heartbeat now names what it fits and why it is there."""
    from tsattn.baselines import Naive, baseline_models
    from tsattn.covariates import Covariates
    from tsattn.harness import added_baselines, scoring_text, with_regression_baseline

    futr = Covariates.of(futr_exog=["temp"])

    def run_baselines(asked):  # as a run builds them: asked for, then added for the covariates
        return baseline_models(8, 2, 24, statistical=with_regression_baseline(asked, futr),
                               added=added_baselines(asked, futr))

    assert scoring_text([Naive(2)]) == "training done; scoring and calibrating"
    text = scoring_text(run_baselines(["theta"]))
    assert text == ("training done; scoring, with statsforecast's theta fitted at the origins of every series and "
                    "arima (added for the future-known covariates) fitted once per series")
    assert scoring_text(run_baselines(["arima"])) == \
        "training done; scoring, with statsforecast's arima fitted at the origins of every series"

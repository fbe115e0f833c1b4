"""`tsattn` command line: each command parses its options and calls one library function."""

from __future__ import annotations

import functools
import os
import sys

import click

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from tsattn import __version__  # noqa: E402
from tsattn.errors import TsattnError  # noqa: E402


class CliError(click.ClickException):
    """A one-line error for the user: printed as 'Error: ...', exit code 2, no traceback."""

    exit_code = 2


def friendly_errors(command):
    """Turn library errors into one clear line and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except TsattnError as exc:
            raise CliError(str(exc)) from None
        except PermissionError as exc:
            raise CliError(f"permission denied: {exc.filename}; choose a writable place") from None

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tsattn")
def main():
    """tsattn: forecast time series with attention-based neural networks, beside honest baselines."""


@main.command("datasets")
@friendly_errors
def datasets_command():
    """List the bundled datasets with their length and frequency."""
    from tsattn.data import DATASETS

    click.echo(f"{'name':<12}{'length':>8}  {'frequency':<22}description")
    for name in sorted(DATASETS):
        info = DATASETS[name]
        click.echo(f"{name:<12}{info.default_length:>8}  {info.frequency:<22}{info.description}")


def run():  # pragma: no cover - console entry for `python -m tsattn.cli.main`
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    main()

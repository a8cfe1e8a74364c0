"""argparse helpers shared by the `tapegrad` command and the examples."""

from __future__ import annotations

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """An argparse `type=` for counts (`--epochs`, `--steps`): 1 or more, else a usage error
    instead of a traceback later.

    >>> import argparse; p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--epochs", type=tg.utils.cli.positive_int, default=10)
    >>> p.parse_args(["--epochs", "3"]).epochs
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value

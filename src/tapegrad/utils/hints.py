"""One wording for "this needs an optional extra": both install commands, quoted so zsh
leaves the brackets alone."""

from __future__ import annotations

__all__ = ["install_hint"]


def install_hint(extra: str) -> str:
    """The two ways to install an optional extra: from a source checkout (editable) and from
    the package index.

    >>> tg.utils.install_hint("plot")
    'pip install -e ".[plot]" (from a checkout) or pip install "tapegrad[plot]"'
    """
    return f'pip install -e ".[{extra}]" (from a checkout) or pip install "tapegrad[{extra}]"'

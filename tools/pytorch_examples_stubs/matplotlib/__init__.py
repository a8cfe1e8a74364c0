"""A matplotlib stand-in whose every call does nothing (tools/pytorch_examples.py)."""


def use(*args, **kwargs):
    pass

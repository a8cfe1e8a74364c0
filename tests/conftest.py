import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator: tests are reproducible."""
    return np.random.default_rng(0)

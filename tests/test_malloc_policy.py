"""tapegrad.malloc_policy: the glibc allocator default, its off-switch and its misuse."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tapegrad import malloc_policy


@pytest.fixture
def undecided(monkeypatch):
    """The policy as if not applied yet in this process (the real state is restored)."""
    monkeypatch.setattr(malloc_policy, "_applied", None)
    for k in malloc_policy._OWN_CHOICE:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


@pytest.mark.parametrize("value", ["0", "off", "OFF", " false "])
def test_switched_off(undecided, value):
    undecided.setenv(malloc_policy.ENV_VAR, value)
    assert malloc_policy.apply_malloc_policy() is False
    assert malloc_policy._applied is False


def test_own_choice_of_the_process_is_kept(undecided):
    undecided.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    assert malloc_policy.apply_malloc_policy() is False


def test_bad_value_names_the_variable(undecided):
    undecided.setenv(malloc_policy.ENV_VAR, "maybe")
    with pytest.raises(ValueError, match="TAPEGRAD_MALLOC_POLICY='maybe'.*0/off"):
        malloc_policy.apply_malloc_policy()
    # still undecided: a second try (importing tapegrad.nn again) raises again, rather than
    # going on silently without the policy
    assert malloc_policy._applied is None
    with pytest.raises(ValueError, match="TAPEGRAD_MALLOC_POLICY='maybe'"):
        malloc_policy.apply_malloc_policy()


@pytest.mark.skipif(not malloc_policy._is_glibc(), reason="the policy is glibc-only")
def test_nn_import_applies_it_and_large_arrays_stop_faulting():
    # a fresh process: the default applies on `import tapegrad.nn`, and a freed 4 MiB array
    # is served again from mapped heap pages (no new page faults when it is rewritten)
    code = (
        "import resource, numpy as np, tapegrad.nn\n"
        "from tapegrad import malloc_policy\n"
        "assert malloc_policy._applied is True\n"
        "for _ in range(3): a = np.ones(1 << 20, np.float32); del a\n"
        "f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(10): a = np.ones(1 << 20, np.float32); del a\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in malloc_policy._OWN_CHOICE}
    env.pop(malloc_policy.ENV_VAR, None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert int(out.stdout) < 50  # 10 fresh mmaps would fault ~10 x 1024 times

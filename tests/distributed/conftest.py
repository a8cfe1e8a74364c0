"""Launching N processes with mpiexec, or skipping (with the reason) where MPI is missing."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def mpirun():
    """`mpirun(n, script, *args)` runs `mpiexec -n n python script args` and returns the
    CompletedProcess (asserting success); skips when mpi4py or mpiexec is missing."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install tapegrad[mpi])")
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("mpiexec is not on PATH (install Open MPI or MPICH)")
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True)
    text = (version.stdout + version.stderr).lower()
    # Open MPI refuses root and more processes than cores without these; MPICH has neither
    open_mpi = any(k in text for k in ("open mpi", "openrte", "open-mpi"))
    flags = ["--allow-run-as-root", "--oversubscribe"] if open_mpi else []

    def run(n: int, script, *args: str) -> subprocess.CompletedProcess:
        cmd = [mpiexec, *flags, "-n", str(n), sys.executable, str(script), *map(str, args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    return run

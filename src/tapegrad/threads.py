"""BLAS threads: `tg.set_num_threads(n)`, `tg.get_num_threads()`, and the one policy the demo,
the examples, DataLoader workers and DDP ranks apply.

tapegrad's matrices go to NumPy's BLAS (OpenBLAS, MKL, ...), which starts one thread per core.
For the small matrices of typical tapegrad models those threads cost more than they give, and
on a busy machine they spin-wait and can make every step several times slower (docs/
performance.md has the numbers). threadpoolctl (a dependency) sets the pool size at run time,
for every BLAS library loaded, without environment variables.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["set_num_threads", "get_num_threads", "apply_thread_policy"]

ENV_VAR = "TAPEGRAD_NUM_THREADS"
_limits = None  # the threadpoolctl object holding the current limit (kept alive on purpose)
_requested: int | None = None
_known = None  # the last ThreadpoolController: its library handles survive a fork


def blas_controller(refresh: bool = True):
    """threadpoolctl's view of the loaded BLAS libraries. Finding them scans every loaded
    shared library (tens of ms with torch imported), so a forked DataLoader worker reuses
    its parent's (`refresh=False`) instead of scanning again."""
    global _known
    if _known is None or refresh:
        from threadpoolctl import ThreadpoolController

        _known = ThreadpoolController()
    return _known


def _positive(n, who: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{who}: the number of threads must be a positive int, got {n!r}")
    return n


@contextlib.contextmanager
def one_blas_thread_for_children(start_method: str):
    """While child processes start, make them begin with one BLAS thread (DataLoader
    workers: N workers x N BLAS threads would oversubscribe the machine).

    Forked children inherit the parent's BLAS setting, so the parent drops to one thread
    for the moment of the forks and then restores its own. (Setting it in the child
    instead makes OpenBLAS start a helper thread there that spin-waits, costing each new
    worker tens of ms of CPU.) Spawned children read the usual environment variables when
    they load NumPy."""
    if start_method == "fork":
        libs = [
            lib
            for lib in blas_controller(refresh=False).select(user_api="blas").lib_controllers
            if lib.num_threads != 1
        ]
        saved = [lib.num_threads for lib in libs]
        for lib in libs:
            lib.set_num_threads(1)
        try:
            yield
        finally:
            for lib, n in zip(libs, saved):
                lib.set_num_threads(n)
        return
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    saved_env = {k: os.environ.get(k) for k in names}
    os.environ.update({k: "1" for k in names})
    try:
        yield
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def set_num_threads(n: int) -> None:
    """Use `n` BLAS threads in this process from now on (every BLAS library NumPy loaded).

    >>> tg.set_num_threads(1)
    >>> tg.get_num_threads()
    1
    """
    global _limits, _requested
    _positive(n, "set_num_threads")
    controller = blas_controller()
    if not controller.select(user_api="blas").lib_controllers:
        import logging  # on use: `import logging` costs about a tenth of `import numpy`

        logging.getLogger(__name__).info(
            "set_num_threads(%d): threadpoolctl sees no BLAS library in this process; "
            "nothing to limit",
            n,
        )
    _limits = controller.limit(limits=n, user_api="blas")
    _requested = n
    from .ops import parallel  # (loaded with tapegrad's ops)

    parallel._one_blas_thread.user_set(n)  # a split running in another thread restores n


def get_num_threads() -> int:
    """The number of BLAS threads this process uses (the largest pool when NumPy has several
    BLAS libraries; the CPU count when none reports one).

    >>> tg.get_num_threads() >= 1
    True
    """
    from threadpoolctl import threadpool_info

    sizes = [
        lib.get("num_threads") or 0 for lib in threadpool_info() if lib.get("user_api") == "blas"
    ]
    return max(sizes) if sizes and max(sizes) > 0 else (_requested or os.cpu_count() or 1)


def apply_thread_policy(requested: int | None = None) -> int:
    """The project's thread policy, applied by the demo, every example, each DDP rank and
    each DataLoader worker: `requested` (a `--threads` flag) if given, else the
    `TAPEGRAD_NUM_THREADS` environment variable, else one BLAS thread per process. Returns
    the number of threads set.

    >>> tg.threads.apply_thread_policy()      # 1, unless TAPEGRAD_NUM_THREADS says otherwise
    1
    """
    if requested is None:
        env = os.environ.get(ENV_VAR, "").strip()
        if env:
            try:
                requested = int(env)
            except ValueError:
                raise ValueError(
                    f"{ENV_VAR}={env!r} is not a number of threads; set it to a "
                    "positive int (or unset it for one thread)"
                ) from None
    n = _positive(1 if requested is None else requested, "apply_thread_policy")
    set_num_threads(n)
    return n

"""Run a script written for MXNet, MegEngine or PyTorch on tapegrad, unchanged.

python -m tapegrad.compat.run mxnet train.py [args...]
python -m tapegrad.compat.run mxnet,torch script.py
"""

from __future__ import annotations

import os
import runpy
import sys

from .alias import FACADES, install


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2:
        print(
            f"usage: python -m tapegrad.compat.run {{{'|'.join(FACADES)}}}[,...] script.py "
            "[args...]",
            file=sys.stderr,
        )
        return 2
    names, script, rest = argv[0].split(","), argv[1], argv[2:]
    install(*names)
    sys.argv = [script, *rest]
    # as `python script.py` does: the script's directory first, so its sibling modules import
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

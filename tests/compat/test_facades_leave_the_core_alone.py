"""Importing a facade changes nothing in `tg.Tensor`, the facades are independent of each
other, and no facade reaches into the core's private fields."""

import re
import subprocess
import sys
from pathlib import Path

COMPAT = Path(__file__).resolve().parents[2] / "src" / "tapegrad" / "compat"

_DIR_SCRIPT = """
import tapegrad as tg
before = sorted(dir(tg.Tensor)), {k: id(v) for k, v in vars(tg.Tensor).items()}
import tapegrad.compat.mxnet, tapegrad.compat.megengine, tapegrad.compat.torch
from tapegrad.compat.mxnet import gluon, nd, np  # noqa: F401
after = sorted(dir(tg.Tensor)), {k: id(v) for k, v in vars(tg.Tensor).items()}
print(before == after, len(before[0]))
"""


def test_importing_every_facade_changes_nothing_in_tensor():
    out = subprocess.run(
        [sys.executable, "-c", _DIR_SCRIPT], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "True"
    assert int(out[1]) > 100  # the comparison saw the real surface


def test_megengine_facade_does_not_import_the_mxnet_one():
    code = (
        "import sys, tapegrad.compat.megengine as mge, tapegrad.compat.megengine.functional,"
        " tapegrad.compat.megengine.module\n"
        "print(any(m.startswith('tapegrad.compat.mxnet') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


# the Tensor's private slots and the core's private constructors
_PRIVATE = re.compile(
    r"(?<!self)\.(_data|_tapes|_version|_grad|_grad_req|_accum|_hooks|_post_hooks|_out_nr|"
    r"_record_var|_wrap|_init)\b|\b_wrap\(|import _wrap|setattr\(Tensor"
)


def test_no_facade_touches_private_core_fields():
    offenders = []
    for path in sorted(COMPAT.rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if _PRIVATE.search(line.split("#")[0]):
                offenders.append(f"{path.relative_to(COMPAT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)

"""A requests stand-in: `get(url, stream=True)` serves a synthetic Cora archive, offline.

cora/cora.content holds `paper_id feature... label` rows and cora/cora.cites `cited citing`
pairs, the layout of the real archive, with fewer features (tools/pytorch_examples.py).
"""

from __future__ import annotations

import io
import tarfile

import numpy as np

_NODES, _FEATURES, _EDGES = 1600, 48, 4000
_LABELS = [
    "Case_Based",
    "Genetic_Algorithms",
    "Neural_Networks",
    "Probabilistic_Methods",
    "Reinforcement_Learning",
    "Rule_Learning",
    "Theory",
]


def _cora() -> bytes:
    rng = np.random.default_rng(0)
    ids = rng.choice(10**6, size=_NODES, replace=False) + 1
    labels = rng.integers(0, len(_LABELS), size=_NODES)
    feats = (rng.random((_NODES, _FEATURES)) < 0.1).astype(int)
    feats[np.arange(_NODES), labels] = 1  # every row has a word; the label's word is on
    content = "\n".join(
        f"{i}\t" + "\t".join(map(str, row)) + f"\t{_LABELS[k]}"
        for i, row, k in zip(ids, feats, labels)
    )
    pairs = rng.integers(0, _NODES, size=(_EDGES, 2))
    cites = "\n".join(f"{ids[a]}\t{ids[b]}" for a, b in pairs)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = (text + "\n").encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Response:
    def __init__(self, url: str) -> None:
        if not url.endswith("cora.tgz"):
            raise ConnectionError(f"requests stand-in: offline, no data for {url}")
        self.content = _cora()
        self.raw = io.BytesIO(self.content)
        self.status_code = 200

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def raise_for_status(self) -> None:
        pass


def get(url: str, stream: bool = False, **kwargs) -> Response:
    return Response(url)

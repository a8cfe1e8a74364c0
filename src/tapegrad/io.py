"""tg.save / tg.load: state dicts in the safetensors format."""
from __future__ import annotations

__all__: list[str] = []

"""detect_anomaly / set_detect_anomaly."""
from __future__ import annotations

__all__: list[str] = []

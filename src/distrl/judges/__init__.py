"""Success judges (docs/design.md §6): state-based inside the backends, or a VLM.

The VLM judge imports the ``openai`` client (about 0.4 s), so its names load on first use: code
that only needs the :class:`SuccessJudge` protocol stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from distrl.judges.base import SuccessJudge

_LAZY = {
    "VLMJudge": "distrl.judges.vlm",
    "JudgeUnavailable": "distrl.judges.vlm",
    "JudgeRejected": "distrl.judges.vlm",
    "judge_eval": "distrl.judges.judge_eval",
    "parse_verdict": "distrl.judges.verdict",
    "Verdict": "distrl.judges.verdict",
}

__all__ = ["SuccessJudge", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'distrl.judges' has no attribute {name!r}")

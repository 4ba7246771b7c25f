"""Success judges (docs/design.md §6): state-based inside the backends, or a VLM.

The VLM judge imports the ``openai`` client (about 0.4 s), so its names load on first use: code
that only needs the :class:`SuccessJudge` protocol stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from distrl.evaluators.base import SuccessJudge

_LAZY = {
    "VLMJudge": "distrl.evaluators.vlm",
    "JudgeUnavailable": "distrl.evaluators.vlm",
    "JudgeRejected": "distrl.evaluators.vlm",
    "judge_eval": "distrl.evaluators.judge_eval",
    "parse_verdict": "distrl.evaluators.verdict",
    "Verdict": "distrl.evaluators.verdict",
}

__all__ = ["SuccessJudge", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'distrl.evaluators' has no attribute {name!r}")

"""Success judges (DESIGN.md section 6): state-based inside the backends, or a VLM."""

from distrl.evaluators.base import SuccessJudge

__all__ = ["SuccessJudge"]

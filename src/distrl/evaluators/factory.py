"""The success judge a run's ``evaluator`` section asks for."""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.evaluators.base import SuccessJudge


def build_judge(cfg: RunConfig) -> SuccessJudge | None:
    """None for ``evaluator.kind=state`` (the backend judges success from its own state), else
    a VLM judge on the configured endpoint (imported only then: it needs an HTTP client)."""
    if cfg.evaluator.kind == "state":
        return None
    from distrl.evaluators.vlm import VLMJudge

    return VLMJudge(cfg.evaluator.vlm)

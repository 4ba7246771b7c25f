"""The success judge a run's ``judge`` section asks for.

``judge.kind`` is resolved through :data:`distrl.plugins.JUDGES`: ``state`` (the backend
judges from its own state), ``vlm`` (a VLM on an OpenAI-compatible endpoint), or a plug-in
(``module:attribute`` or an entry point of group ``distrl.judges``): a callable taking the run
config and returning a :class:`~distrl.judges.base.SuccessJudge` (a judge class whose
constructor takes the config qualifies).
"""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.judges.base import SuccessJudge


def state_judge(cfg: RunConfig) -> None:
    """No judge: the backend decides success from its own state."""
    return None


def vlm_judge(cfg: RunConfig) -> SuccessJudge:
    """The VLM judge on the configured endpoint (imported only now: it needs an HTTP client,
    the ``judge`` extra)."""
    from distrl.extras import require

    require("openai", "judge", "judge.kind=vlm")
    from distrl.judges.vlm import VLMJudge

    return VLMJudge(cfg.judge.vlm)


def build_judge(cfg: RunConfig) -> SuccessJudge | None:
    """The judge ``judge.kind`` names, or None where the backend judges itself."""
    from distrl.plugins import JUDGES

    judge = JUDGES.resolve(cfg.judge.kind)(cfg)
    if judge is not None and not isinstance(judge, SuccessJudge):
        raise InputError(
            f"judge.kind={cfg.judge.kind}: {type(judge).__name__} is not a success "
            "judge (it needs judge(task, screenshots, actions) -> bool)"
        )
    return judge

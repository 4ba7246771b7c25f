"""The one protocol every device backend implements, and the step rules they share.

Workers drive devices only through :class:`DeviceEnv`; the faults a device raises are in
:mod:`distrl.core.faults`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task

__all__ = ["DeviceEnv", "StepRules", "episode_end", "step_info"]


@runtime_checkable
class DeviceEnv(Protocol):
    """reset(task) -> obs; step(action) -> (obs, reward, done, info); close()."""

    def reset(self, task: Task) -> Observation: ...

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]: ...

    def close(self) -> None: ...


def episode_end(success: bool, declared: bool, steps: int, horizon: int) -> tuple[bool, bool]:
    """(done, truncated) after a step, the same rule on every backend: an episode ends when the
    task is done, when the agent declares it complete or impossible, or at the horizon (then it
    is truncated)."""
    truncated = not (success or declared) and steps >= horizon
    return success or declared or truncated, truncated


#: The keys :func:`step_info` always writes (a backend's own figures come beside them).
STEP_INFO_KEYS = frozenset(
    ("event", "success", "truncated", "steps", "invalid", "invalid_reason", "device_seconds")
)


def step_info(
    *,
    event: str,
    success: bool,
    truncated: bool,
    steps: int,
    action: Action,
    device_seconds: float,
    invalid_reason: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """The ``info`` dict every backend's ``step`` returns (runtimes and tests read these keys);
    ``invalid_reason`` adds a device-side reason (e.g. text the device cannot type) to an
    action that parsed; backend-specific figures go in ``extra``."""
    reason = action.invalid_reason or invalid_reason
    return {
        "event": event,
        "success": success,
        "truncated": truncated,
        "steps": steps,
        "invalid": bool(reason) or not action.is_valid,
        "invalid_reason": reason,
        "device_seconds": device_seconds,
        **extra,
    }


class StepRules:
    """The end of a step as every backend writes it: a backend that keeps its ``task``,
    ``steps`` taken and ``done`` flag gets :meth:`_finish_step` from this mixin."""

    task: Task | None
    steps: int
    done: bool

    def _finish_step(
        self,
        action: Action,
        *,
        event: str,
        success: bool,
        device_seconds: float,
        task_over: bool | None = None,
        **info: Any,
    ) -> dict[str, Any]:
        """Set ``done`` by :func:`episode_end` and return the step's :func:`step_info`.

        ``task_over`` is for a backend whose task can end without success (a MiniWoB page that
        finished with no reward); by default the task is over when it succeeded. ``info``: the
        rest of :func:`step_info`'s keywords."""
        assert self.task is not None
        over = success if task_over is None else task_over
        self.done, truncated = episode_end(over, action.is_status, self.steps, self.task.horizon)
        return step_info(
            event=event,
            success=success,
            truncated=truncated,
            steps=self.steps,
            action=action,
            device_seconds=device_seconds,
            **info,
        )

"""Tasks: a natural-language instruction plus what a backend needs to set it up and judge it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Task:
    """One task.

    ``spec`` is backend-specific and JSON-serialisable: for PhoneSim it names the task template
    and its parameters, from which the simulator's success check is derived.

    >>> Task("general-0001", "Turn on wifi", "general", "train").split
    'train'
    """

    task_id: str
    instruction: str
    suite: str
    split: str
    backend: str = "phonesim"
    spec: dict[str, Any] = field(default_factory=dict)
    horizon: int = 10

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "instruction": self.instruction,
            "suite": self.suite,
            "split": self.split,
            "backend": self.backend,
            "spec": dict(self.spec),
            "horizon": self.horizon,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(
            task_id=str(data["task_id"]),
            instruction=str(data["instruction"]),
            suite=str(data["suite"]),
            split=str(data["split"]),
            backend=str(data.get("backend", "phonesim")),
            spec=dict(data.get("spec", {})),
            horizon=int(data.get("horizon", 10)),
        )

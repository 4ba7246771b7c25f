"""MiniWoB++ (``env.backend=miniwob``): the ``miniwob`` package's web tasks in headless Chromium,
behind the same Observation/Action interface as PhoneSim and Android.

>>> from distrl.envs.miniwob import MiniWoBEnv, miniwob_tasks  # doctest: +SKIP
"""

from distrl.envs.miniwob.env import MiniWoBEnv, MiniWoBSetupError, MiniWoBTaskError
from distrl.envs.miniwob.solver import SUPPORTED_TASKS, UnsupportedExpertTask, expert_action
from distrl.envs.miniwob.tasks import (
    SEED_RANGES,
    UnknownMiniWoBTask,
    available_tasks,
    check_task_name,
    miniwob_tasks,
)

__all__ = [
    "SEED_RANGES",
    "SUPPORTED_TASKS",
    "MiniWoBEnv",
    "MiniWoBSetupError",
    "MiniWoBTaskError",
    "UnknownMiniWoBTask",
    "UnsupportedExpertTask",
    "available_tasks",
    "check_task_name",
    "expert_action",
    "miniwob_tasks",
]

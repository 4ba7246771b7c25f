"""The tasks of a split for the configured backend, and the names tables group them by."""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.envs.backends import backend_of


def load_tasks(cfg: RunConfig, split: str) -> list[Task]:
    """The tasks of ``split`` for the configured backend (a task file overrides the suite)."""
    from distrl.envs.task_file import load_task_file

    if cfg.env.task_file:
        return load_task_file(cfg.env.task_file)
    return backend_of(cfg).tasks(cfg, split)


def task_family(task: Task) -> str:
    """What per-family success figures group by: the PhoneSim template, the MiniWoB++ task name,
    else the suite."""
    return str(task.spec.get("template") or task.spec.get("task") or task.suite)


def suite_label(cfg: RunConfig) -> str:
    """How progress bars and tables name the tasks: the task file, the backend's own label (the
    MiniWoB++ tasks, a gym env id), or the suite."""
    if cfg.env.task_file:
        return cfg.env.task_file
    if cfg.env.backend == "phonesim":
        return cfg.env.suite
    label = getattr(backend_of(cfg), "label", None)
    return label(cfg) if label is not None else cfg.env.backend

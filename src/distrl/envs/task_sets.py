"""The tasks of a split for the configured backend, and the names tables group them by."""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.core.task import Task


def load_tasks(cfg: RunConfig, split: str) -> list[Task]:
    """The tasks of ``split`` for the configured backend (a task file overrides the suite)."""
    from distrl.envs.phonesim.tasks.suites import load_suite
    from distrl.envs.task_file import load_task_file

    if cfg.env.task_file:
        return load_task_file(cfg.env.task_file)
    if cfg.env.backend == "miniwob":
        from distrl.envs.miniwob.tasks import miniwob_tasks

        return miniwob_tasks(cfg.env.miniwob, split)
    return load_suite(cfg.env.suite, split)


def task_family(task: Task) -> str:
    """What per-family success figures group by: the PhoneSim template, the MiniWoB++ task name,
    else the suite."""
    return str(task.spec.get("template") or task.spec.get("task") or task.suite)


def suite_label(cfg: RunConfig) -> str:
    """How progress bars and tables name the tasks: the task file, the MiniWoB++ tasks, or the
    suite."""
    if cfg.env.task_file:
        return cfg.env.task_file
    if cfg.env.backend == "miniwob":
        return "miniwob:" + ",".join(cfg.env.miniwob.tasks)
    return cfg.env.suite if cfg.env.backend == "phonesim" else f"{cfg.env.backend}:{cfg.env.suite}"

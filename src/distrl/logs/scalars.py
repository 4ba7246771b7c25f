"""A run's scalars, to TensorBoard always and to Weights & Biases when ``log.wandb`` is on.

Training writes every scalar once, through :class:`ScalarLog` (the ``add_scalar``/``close`` of
TensorBoard's ``SummaryWriter``), so both trackers receive the same tags at the same update
counts. ``wandb`` is imported only when ``log.wandb`` is on (it is an extra: ``pip install
'distrl[wandb]'``). W&B wants a non-decreasing step, but an asynchronous learner's evaluation
point can lag the loop's update count, so each W&B record carries the update count as the
``update`` metric that every other metric is plotted against (``define_metric``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from distrl.config.schema import RunConfig
from distrl.extras import require

#: The W&B metric every scalar is plotted against.
WANDB_STEP = "update"


class WandbSink:
    """One W&B run; ``add_scalar(tag, value, step)`` as TensorBoard's."""

    def __init__(self, cfg: RunConfig, run_dir: Path):
        wandb = require("wandb", "wandb", "log.wandb=true")
        self.run = wandb.init(
            project=cfg.log.wandb_project,
            entity=cfg.log.wandb_entity,
            name=run_dir.name,
            dir=str(run_dir),
            config=cfg.model_dump(mode="json"),
            mode=cfg.log.wandb_mode,
        )
        self.run.define_metric(WANDB_STEP)
        self.run.define_metric("*", step_metric=WANDB_STEP)

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.run.log({tag: float(value), WANDB_STEP: int(step)})

    def close(self) -> None:
        self.run.finish()


class ScalarLog:
    """TensorBoard's writer plus any other sinks, behind ``add_scalar``/``close``."""

    def __init__(self, writer: SummaryWriter, others: list[Any]):
        self.writer = writer
        self.sinks: list[Any] = [writer, *others]

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        for sink in self.sinks:
            sink.add_scalar(tag, value, step)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


def open_scalar_log(cfg: RunConfig, run_dir: Path) -> ScalarLog:
    """The scalar log of a run in ``run_dir`` (TensorBoard under ``tensorboard/``)."""
    others = [WandbSink(cfg, run_dir)] if cfg.log.wandb else []
    return ScalarLog(SummaryWriter(str(run_dir / "tensorboard")), others)

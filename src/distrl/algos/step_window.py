"""Step windows: ``n`` consecutive steps of one trajectory, the item the replay stores.

A window carries what an off-policy update needs and nothing it must recompute: the observations
and actions, the behaviour policy's log-probs (for the importance ratios), the shaped rewards, where
the episode ended, the weights version that acted (for staleness), and the observation after the
window's last step to bootstrap the critic from when the episode goes on past the window.

An episode cut at its horizon counts as ended (``done``): these tasks fail at the horizon, so
nothing after it is worth bootstrapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from distrl.algos.rewards import RewardShaping, shaped_rewards
from distrl.core.action import Action
from distrl.core.observation import Observation, SharedElements
from distrl.core.trajectory import Trajectory
from distrl.replay.windows import windows


@dataclass(frozen=True)
class StepWindow:
    trajectory_id: str
    task_id: str
    start: int
    observations: tuple[Observation, ...]
    actions: tuple[Action, ...]
    behaviour_logprobs: tuple[float, ...]
    rewards: tuple[float, ...]
    dones: tuple[bool, ...]
    policy_versions: tuple[int, ...]
    #: The observation after the last step, when the episode continues past the window.
    bootstrap_observation: Observation | None
    trajectory_success: bool
    #: Steps in the whole episode, so Monte-Carlo targets (DigiRL) know how far the end is.
    episode_length: int
    #: The episode's first observation: DigiRL's curriculum scores tasks by V(instruction, s0).
    first_observation: Observation

    def __len__(self) -> int:
        return len(self.actions)


def cut_windows(
    trajectory: Trajectory,
    length: int,
    shaping: RewardShaping,
    stride: int | None = None,
    *,
    keep_screenshots: bool = True,
    shared_elements: SharedElements | None = None,
    bonuses: Sequence[float] | None = None,
) -> list[StepWindow]:
    """The trajectory as windows of ``length`` steps (the last may be shorter).

    Only whole episodes are cut: a trajectory whose last step is not ``done`` is refused, since
    the runtime must never hand a partial episode to the learner. ``keep_screenshots=False``
    drops the pixels (for policies that read only the element list), which is what keeps a
    large replay in memory; ``shared_elements`` (a replay's pool) makes equal UI elements one
    object, which shrinks what it keeps of each step ~2.5x. ``bonuses`` (one per step: the
    screen-novelty reward, :mod:`distrl.algos.novelty`) are added to the shaped rewards.
    """

    def lean(observation: Observation) -> Observation:
        if not keep_screenshots:
            observation = observation.without_screenshot()
        return observation if shared_elements is None else shared_elements.share(observation)

    if not keep_screenshots or shared_elements is not None:
        trajectory = trajectory.with_observations(lean)
    steps = trajectory.steps
    if not steps or not steps[-1].done:
        raise ValueError(
            f"trajectory {trajectory.trajectory_id!r} is not a finished episode "
            "(its last step is not done); partial episodes never reach the learner"
        )
    rewards = shaped_rewards(trajectory, shaping)
    if bonuses is not None:  # intrinsic rewards, one per step (docs/design.md §7.12)
        rewards = [reward + bonus for reward, bonus in zip(rewards, bonuses, strict=True)]
    out = []
    for start, stop in windows(len(steps), length, stride):
        chunk = steps[start:stop]
        last_done = chunk[-1].done
        if last_done:
            bootstrap = None
        elif stop < len(steps):
            bootstrap = steps[stop].observation
        else:
            bootstrap = trajectory.final_observation
        out.append(
            StepWindow(
                trajectory_id=trajectory.trajectory_id,
                task_id=trajectory.task.task_id,
                start=start,
                observations=tuple(step.observation for step in chunk),
                actions=tuple(step.action for step in chunk),
                behaviour_logprobs=tuple(float(step.behaviour_logprob) for step in chunk),
                rewards=tuple(rewards[start:stop]),
                dones=tuple(bool(step.done) for step in chunk),
                policy_versions=tuple(int(step.policy_version) for step in chunk),
                bootstrap_observation=bootstrap,
                trajectory_success=trajectory.success,
                episode_length=len(steps),
                first_observation=steps[0].observation,
            )
        )
    return out

"""The ``Policy`` base class: what workers call to act and what learners call to score.

Off-policy learning needs two views of one distribution. A worker *acts*: it samples actions and
records their behaviour log-prob mu(a|s), entropy and the critic's value with the weights
``version`` that acted. Later the learner *scores* the stored actions under its newer weights
pi(a|s), differentiably, to form rho = pi / mu. Both views must score an action identically
(same composite decomposition, same masks), or every importance ratio is biased; the tests check
that ``act`` and ``score_actions`` agree to float32 precision.

Actions arrive in the device's action space (AitW :class:`Action`), not the policy's. An action
the policy cannot express (a tap on empty space, text it has no candidate for, an INVALID parse)
is flagged ``representable=False`` with log-prob 0 instead of raising, so a learner can mask it
out of the policy loss and still train the critic on the step.

Policies register under a name so that a checkpoint can be loaded without knowing its class:

>>> from distrl.policies.small import SmallPolicy, SmallPolicyConfig
>>> "small" in POLICY_REGISTRY
True
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

import torch
from torch import nn

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.errors import InputError, first_sentence
from distrl.torch_files import read_torch_file

__all__ = [
    "CHECKPOINT_FORMAT",
    "POLICY_REGISTRY",
    "ActionScores",
    "Choice",
    "Policy",
    "PolicyCheckpointError",
    "PolicyOutput",
    "load_policy",
    "pick_per_row",
    "read_checkpoint",
    "seeded_generators",
    "register_policy",
]

#: Written into every policy checkpoint so a file from something else fails with a clear error.
CHECKPOINT_FORMAT = "distrl.policy/1"


class PolicyOutput(NamedTuple):
    """What :meth:`Policy.act` returns for a batch of ``B`` observations.

    ``logprobs`` is the behaviour log-prob of each returned action (of the whole composite
    action), ``entropies`` the entropy of the full action distribution, ``values`` the step
    critic V(s). All three are detached ``[B]`` float tensors. ``version`` is the weights
    version that acted (:meth:`Policy.act` fills it in; an inference service answers with the
    version its copy held, which a worker cannot know otherwise).
    """

    actions: list[Action]
    logprobs: torch.Tensor
    entropies: torch.Tensor
    values: torch.Tensor
    version: int = -1


class ActionScores(NamedTuple):
    """What :meth:`Policy.score_actions` returns: differentiable ``[B]`` tensors.

    ``representable[b]`` is False when the policy has no way to emit ``actions[b]``; its
    ``logprobs[b]`` is then 0 and must be masked out of any policy loss (entropy and value stay
    meaningful: they describe the state, not the action).

    ``head_entropies`` (diagnostics, detached ``[B]`` tensors) names the entropy of each part of
    a composite action on its own: whether exploration still reaches, say, the text to type is
    invisible in the one total. NaN where the state offers that head no choice at all (no text
    on screen to type). Policies without heads (a VLM writes text) leave it empty.
    """

    logprobs: torch.Tensor
    entropies: torch.Tensor
    values: torch.Tensor
    representable: torch.Tensor
    head_entropies: Mapping[str, torch.Tensor] = MappingProxyType({})


class Choice(NamedTuple):
    """How :meth:`Policy.act` chooses among the actions it scores: the most likely one when
    ``greedy`` (evaluation), else a draw from ``generator`` (exploration; ``None``: torch's
    global RNG).

    ``row_generators`` (one per row) makes every row's draw depend on its own generator and its
    own distribution only, whatever else shares the batch: an inference service batches rows of
    many workers, and each worker's actions must stay reproducible from its own seeds. A row
    draws one uniform number per pick (inverse CDF), so the padding a batch adds to a row (zero
    probabilities past its last element) changes neither its draw nor its generator's state.
    """

    greedy: bool
    generator: torch.Generator | None
    row_generators: Sequence[torch.Generator] | None = None

    def pick(self, logp: torch.Tensor) -> torch.Tensor:
        """One index per row of the log-probabilities ``logp`` ``[B, N]``."""
        if self.greedy:
            return logp.argmax(dim=1)
        if self.row_generators is not None:
            return pick_per_row(logp, self.row_generators)
        return torch.multinomial(logp.exp(), 1, generator=self.generator).squeeze(1)


def check_one_action_each(observations: int, actions: int) -> None:
    """Scoring pairs each observation with the action taken there: a count mismatch is a
    caller's bug that would otherwise surface as a shape error deep inside the network."""
    if actions != observations:
        raise ValueError(
            f"got {actions} actions for {observations} observations; "
            "pass one action per observation"
        )


def seeded_generators(seeds: Sequence[int]) -> list[torch.Generator]:
    """One CPU generator per row, seeded from that row's seed."""
    return [torch.Generator().manual_seed(int(seed)) for seed in seeds]


def pick_per_row(logp: torch.Tensor, generators: Sequence[torch.Generator]) -> torch.Tensor:
    """Row ``b`` of ``logp`` ``[B, N]`` sampled with ``generators[b]``: one uniform draw ``u``
    and the first index whose cumulative probability exceeds ``u`` times the row's total. An
    index of probability zero is never picked, and trailing zeros leave the result unchanged."""
    if len(generators) != logp.shape[0]:
        raise ValueError(f"{len(generators)} row generators for {logp.shape[0]} rows")
    picks = []
    for row, generator in zip(logp.detach().float().cpu(), generators, strict=True):
        cumulative = torch.cumsum(row.exp(), dim=0)
        draw = torch.rand((1,), generator=generator) * cumulative[-1]
        index = int(torch.searchsorted(cumulative, draw, right=True))
        picks.append(min(index, row.shape[0] - 1))
    return torch.tensor(picks, dtype=torch.long, device=logp.device)


class Policy(nn.Module, ABC):
    """A learnable policy with a step critic: the base class of every policy.

    ``version`` is the weights version: the learner increments it each time it publishes
    weights, workers copy it into every step they record, and staleness is the difference.
    The class holds what every policy does the same way (``act`` runs without gradients and
    delegates to ``_act``); each policy supplies the rest.
    """

    version: int
    #: Whether the policy looks at screenshots; when False a learner keeps replayed observations
    #: without pixels (a learner treats a policy that does not say as one that does).
    uses_screenshots: bool = True

    @torch.no_grad()
    def act(
        self,
        observations: Sequence[Observation],
        *,
        greedy: bool = False,
        generator: torch.Generator | None = None,
        seeds: Sequence[int] | None = None,
    ) -> PolicyOutput:
        """Choose one valid action per observation (argmax when ``greedy``); deterministic
        given ``generator``'s state, or with ``seeds`` (one per observation) given each row's
        seed alone, whatever rows share the batch (:class:`Choice`). No gradients: a worker
        only records what it did. The output carries the weights version that acted."""
        if seeds is not None and len(seeds) != len(observations):
            raise ValueError(f"{len(seeds)} seeds for {len(observations)} observations")
        rows = seeded_generators(seeds) if seeds is not None and not greedy else None
        output = self._act(observations, Choice(greedy, generator, rows))
        return output._replace(version=int(self.version))

    @abstractmethod
    def _act(self, observations: Sequence[Observation], choice: Choice) -> PolicyOutput:
        """:meth:`act`'s work, with gradients off and ``choice`` saying how to choose."""

    @abstractmethod
    def score_actions(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> ActionScores:
        """Score ``actions`` under the current weights, with gradients; never raises for an
        action the policy cannot represent."""

    def action_logprobs(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``log pi(a|s)`` of ``actions``, ``[B]`` with gradients, and which are representable
        (a False row's log-prob is 0): all that behaviour cloning needs. By default the two
        fields of :meth:`score_actions`; a policy whose critic costs a forward pass of its own
        overrides it to skip the critic (the VLM's: 15% of a cloning step)."""
        scores = self.score_actions(observations, actions)
        return scores.logprobs, scores.representable

    @abstractmethod
    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        """Step critic V(s), ``[B]``, differentiable (bootstrap values for Retrace windows)."""

    @abstractmethod
    def trajectory_value(self, first_observations: Sequence[Observation]) -> torch.Tensor:
        """Instruction-level critic V(instruction, s0) as an unbounded score (a logit),
        ``[B]``, differentiable: DigiRL's curriculum ranks episodes by R - V."""

    @abstractmethod
    def save(self, path: str | Path) -> None:
        """Write weights, config and version to ``path`` (one file)."""

    @classmethod
    @abstractmethod
    def load(cls, path: str | Path) -> Policy:
        """Rebuild the policy saved at ``path``, config and version included."""


def reads_screenshots(policy: Policy) -> bool:
    """Whether ``policy`` reads pixels (``uses_screenshots``; a policy that does not say is
    assumed to): if not, devices skip screenshots and the replay and store keep none."""
    return bool(getattr(policy, "uses_screenshots", True))


class PolicyCheckpointError(InputError):
    """A policy checkpoint that cannot be loaded; the message names the file and the problem."""


PolicyT = TypeVar("PolicyT")

#: Policy classes by name (the ``kind`` stored in their checkpoints).
POLICY_REGISTRY: dict[str, Any] = {}
#: Policies whose module is imported only when a checkpoint needs it (heavy dependencies).
_LAZY_POLICIES = {"vlm": "distrl.policies.vlm"}


def register_policy(name: str) -> Callable[[type[PolicyT]], type[PolicyT]]:
    """Class decorator: make the policy loadable by :func:`load_policy` under ``name``."""

    def decorate(cls: type[PolicyT]) -> type[PolicyT]:
        if name in POLICY_REGISTRY and POLICY_REGISTRY[name] is not cls:
            raise ValueError(f"policy name {name!r} is already registered")
        POLICY_REGISTRY[name] = cls
        cls.policy_kind = name  # type: ignore[attr-defined]
        return cls

    return decorate


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict at ``path``, checked for the distrl policy format.

    Loaded with ``weights_only=True`` (:func:`~distrl.torch_files.read_torch_file`): a checkpoint
    is data (tensors, numbers, strings), and unpickling arbitrary objects from a file would run
    arbitrary code.
    """
    path = Path(path)
    data = read_torch_file(
        path,
        "policy checkpoint",
        "point --checkpoint at a policy.pt written by distrl train",
        PolicyCheckpointError,
    )
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise PolicyCheckpointError(
            f"policy checkpoint {path}: not a distrl policy checkpoint "
            f"(expected format {CHECKPOINT_FORMAT!r}; was it written by Policy.save?)"
        )
    return data


def write_policy_file(
    policy: Any, path: str | Path, state_dict: Mapping[str, torch.Tensor], **extra: Any
) -> None:
    """Write ``policy`` to ``path`` in the distrl format: one file with the format tag, the
    policy's registered kind, its config, its weights version, ``state_dict`` (on the CPU) and
    any ``extra`` entries its ``load`` needs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "format": CHECKPOINT_FORMAT,
            "kind": policy.policy_kind,
            "config": policy.config.model_dump(mode="python"),
            "version": int(policy.version),
            "state_dict": {k: v.detach().cpu() for k, v in state_dict.items()},
            **extra,
        },
        path,
    )


def read_policy_file(cls: Any, path: str | Path) -> dict[str, Any]:
    """The checkpoint at ``path``, checked to hold a policy of ``cls``'s registered kind."""
    data = read_checkpoint(path)
    if data.get("kind") != cls.policy_kind:
        raise PolicyCheckpointError(
            f"policy checkpoint {path}: holds a {data.get('kind')!r} policy, "
            f"not {cls.policy_kind!r}; use distrl.policies.load_policy"
        )
    return data


def load_policy(path: str | Path) -> Policy:
    """Load any registered policy from its checkpoint, whatever its class."""
    data = read_checkpoint(path)
    kind = data.get("kind")
    if kind in _LAZY_POLICIES and kind not in POLICY_REGISTRY:
        from distrl.extras import require

        for module in ("transformers", "peft"):
            require(module, "vlm", f"policy checkpoint {path} (a {kind} policy)")
        importlib.import_module(_LAZY_POLICIES[kind])  # registers the class
    if kind not in POLICY_REGISTRY:
        raise PolicyCheckpointError(
            f"policy checkpoint {path}: unknown policy kind {kind!r} "
            f"(known: {', '.join(sorted(POLICY_REGISTRY)) or 'none'})"
        )
    try:
        return POLICY_REGISTRY[kind].load(path)
    except PolicyCheckpointError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        # The format tag is right but the content is not (edited, or from another version).
        raise PolicyCheckpointError(
            f"policy checkpoint {path}: its {kind} policy cannot be rebuilt "
            f"({type(error).__name__}: {first_sentence(str(error))}); point --checkpoint at a "
            "policy.pt written by this version of distrl"
        ) from None

"""The methods ``distrl bench train`` compares: an algorithm, a runtime mode, and the config
overrides that make an ablation of it (docs/design.md §7.6: DPER's weights, uniform replay;
§7.12: the exploration mechanisms; §7.13-7.14: the task curriculum, success replay); and the
exploration settings ``distrl bench miniwob --methods`` compares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from distrl.errors import InputError


@dataclass(frozen=True)
class Method:
    name: str
    algo: str
    mode: str
    label: str
    #: ``key=value`` config overrides of this method over the bench's setting.
    overrides: tuple[str, ...] = ()


METHODS = (
    Method("aride_async", "aride", "async", "A-RIDE, async"),
    Method("digirl_sync", "digirl", "sync", "DigiRL, sync"),
    Method("fbc_sync", "fbc", "sync", "filtered BC, sync"),
    Method("aride_sync", "aride", "sync", "A-RIDE, sync"),
    # The DPER ablation (issue 17): the paper's released weights, and no prioritisation at all,
    # beside aride_async's current weights.
    Method(
        "aride_dper_paper",
        "aride",
        "async",
        "A-RIDE, async, DPER paper weights",
        ("aride.dper_weights=paper",),
    ),
    Method(
        "aride_uniform",
        "aride",
        "async",
        "A-RIDE, async, uniform replay",
        ("aride.prioritized=false",),
    ),
    # The policy objective (issue 17, docs/design.md §7.5): the released actor's binarised
    # advantage beside aride_async's clipped_is.
    Method(
        "aride_binarized",
        "aride",
        "async",
        "A-RIDE, async, binarised advantage",
        ("aride.policy_objective=binarized_is",),
    ),
    # The exploration ablation (issue 18, docs/design.md §7.12), each mechanism alone and both.
    Method(
        "aride_candidate_prior",
        "aride",
        "async",
        "A-RIDE, async, TYPE rank prior",
        ("explore.candidate_prior=2.0",),
    ),
    Method(
        "aride_novelty",
        "aride",
        "async",
        "A-RIDE, async, screen novelty",
        ("explore.novelty_bonus=0.2",),
    ),
    Method(
        "aride_explore",
        "aride",
        "async",
        "A-RIDE, async, rank prior + novelty",
        ("explore.candidate_prior=2.0", "explore.novelty_bonus=0.2"),
    ),
    # Issue 18's ablations: the task curriculum and success replay, each on its own over
    # aride_async (docs/design.md §7.13, §7.14).
    Method(
        "aride_curriculum",
        "aride",
        "async",
        "A-RIDE, async, task curriculum",
        ("curriculum.enabled=true",),
    ),
    Method(
        "aride_success_replay",
        "aride",
        "async",
        "A-RIDE, async, success replay",
        ("success_replay.share=0.1",),
    ),
)
METHODS_BY_NAME = {method.name: method for method in METHODS}


@dataclass(frozen=True)
class ExplorationMethod:
    """An exploration setting of ``distrl bench miniwob --methods``: config overrides over the
    bench's run config (the user's own overrides still win)."""

    name: str
    label: str
    overrides: tuple[str, ...] = ()


#: Every exploration mechanism switched off (docs/design.md §7.12). The named methods below
#: start from it, so ``candidate_prior`` means that mechanism alone whatever the bench's own
#: settings are, and a command from before the bench switched the focus mechanisms on
#: (``--methods both``) still measures what it did then.
EXPLORATION_OFF = (
    "explore.candidate_prior=0",
    "explore.novelty_bonus=0",
    "explore.type_needs_focus=false",
    "explore.focused_type_prior=0",
    "explore.empty_field_type_prior=0",
)

#: ``default`` is the config as it stands (the bench's settings and the user's); the others
#: switch mechanisms off or on whatever the bench says, so a 3-seed ablation reads
#: ``--methods none,candidate_prior,novelty,both --seeds 3``.
EXPLORATION_METHODS = (
    ExplorationMethod("default", "the bench's exploration settings"),
    ExplorationMethod("none", "no exploration mechanism", EXPLORATION_OFF),
    ExplorationMethod(
        "candidate_prior",
        "TYPE rank prior only",
        (*EXPLORATION_OFF, "explore.candidate_prior=2.0"),
    ),
    ExplorationMethod(
        "novelty",
        "screen novelty only",
        (*EXPLORATION_OFF, "explore.novelty_bonus=0.2"),
    ),
    ExplorationMethod(
        "both",
        "TYPE rank prior + screen novelty",
        (*EXPLORATION_OFF, "explore.candidate_prior=2.0", "explore.novelty_bonus=0.2"),
    ),
)
EXPLORATION_METHODS_BY_NAME = {method.name: method for method in EXPLORATION_METHODS}
#: What the bench compares unless ``--methods`` says otherwise (the paper's comparison);
#: ``aride_sync`` isolates the runtime: the same algorithm, synchronous rounds.
DEFAULT_METHODS = ("aride_async", "digirl_sync", "fbc_sync")
#: The method the ratios are A-RIDE async's over.
DEFAULT_BASELINE = "digirl_sync"
OURS = "aride_async"


def select_methods(names: Sequence[str], baseline: str) -> tuple[Method, ...]:
    """The methods to run, by name; A-RIDE async and the baseline must be among them, since the
    ratios compare those two."""
    unknown = [name for name in names if name not in METHODS_BY_NAME]
    if unknown:
        raise InputError(
            f"--methods: unknown {', '.join(unknown)} (choose from {', '.join(METHODS_BY_NAME)})"
        )
    if len(set(names)) != len(names):
        raise InputError(f"--methods names a method twice: {','.join(names)}")
    if OURS not in names:
        raise InputError(f"--methods must include {OURS}: the ratios are its figures")
    if baseline == OURS or baseline not in names:
        raise InputError(
            f"--baseline {baseline} must be one of --methods ({','.join(names)}) other than {OURS}"
        )
    return tuple(METHODS_BY_NAME[name] for name in names)

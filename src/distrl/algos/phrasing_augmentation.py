"""Phrasing augmentation for behaviour cloning: vary the wording around what a step needs.

Why: PhoneSim's test split words each task in ways the train split never does (train "Find Ana
in my contacts", test "Pull up Ana in Contacts"; design.md §4). The tiny VLM cloned from a few
hundred demonstrations learns each train phrasing whole: its final policy scored 1.00 on
``toggle_setting`` train tasks and 0.33 on test tasks whose instructions hold no word the train
split lacks (docs/results/vlm-quick/admissible-stale8-sepcritic-placeholders-seed0-eval-*.json).
What it fits is the sentence, not its key words.

The remedy is the standard one for text classifiers trained on little data (easy data
augmentation: random deletion, swap or insertion of words, one kind of edit per sentence): in a
share of the cloned steps, the instruction's template words are deleted, swapped or joined by
other template words, so no exact phrasing recurs often enough to be memorised and the words
that decide the task carry the fit.

Generic by construction: a word is kept as it is when the step needs it, by rules that name no
task. Kept: a word the action writes (a typed text, the tapped element's text), a word the
screen shows (an element's text), either in any step of the episode (a word only a later screen
shows still says what the task is), a word with a capital inside the sentence (a name) and a
lower-case word between two of them ("Rio de Janeiro"), a token holding a digit (a time, a
number) or a sign inside it ("yelp.com", "Wi-Fi") and a quoted span (a text to type).
Everything else is template wording and may be edited. Insertions draw on the editable words
of the demonstrations' own instructions, never on other text nor on a word some episode needs.
The action, the screen and the previous actions are not changed, so an edited step stays
correct as long as the edits keep the task's meaning; at the rates used a dropped "off" can
still flip it, the noise easy data augmentation accepts.

The same edit can go on during online training (``train.demo_phrasing_augmentation``): the
replay rewords the demonstration windows it draws for a batch's demonstration share
(:meth:`PhrasingEdit.reword_window`), so the warm start's rewording does not stop where the
online phase begins and the policy's own episodes, which only ever use train phrasings, are not
all the online phase sees.

And on the policy's own episodes (``train.task_phrasing_augmentation``, PhoneSim only): a drawn
train task's instruction is reworded before the episode starts
(:meth:`PhrasingEdit.reword_task`), so the policy acts on the reworded sentence and its
behaviour log-probs are those of what it saw. PhoneSim judges a task by its parameters, never by
its wording, so the reward stays right; the words of the parameters (a name, a setting, a
product, "on" or "off") are the ones kept, and the insertion pool is the train tasks' other
words (:func:`task_template_words`).

A fourth edit, ``mask`` (word dropout; not among the default :data:`EDITS`, chosen with
``train.phrasing_edits``), replaces template words by the unknown word, the one a VLM with
``policy.vlm.mask_unseen_words`` reads any word of a test instruction as that no train
instruction holds (:mod:`distrl.policies.unseen_words`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from distrl.algos.step_window import StepWindow
from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.policies.features import resolve_tap
from distrl.policies.unseen_words import EDGE_PUNCTUATION, TOKEN_RE, UNKNOWN_WORD, prose_core

__all__ = [
    "ALL_EDITS",
    "EDITS",
    "PhrasingEdit",
    "editable_words",
    "episode_needed_words",
    "task_template_words",
    "task_words",
]

#: The letters of a token ("phone?" -> "phone"; "Ana's" -> "Ana", "s").
_LETTERS_RE = re.compile(r"[A-Za-z]+")
#: Share of a step's editable words an edit touches (easy data augmentation's alpha).
EDIT_SHARE = 0.15
#: The kinds of edit a rewording draws from by default; each reworded step gets one, drawn
#: uniformly.
EDITS = ("delete", "swap", "insert")
#: Every kind of edit: ``mask`` (word dropout) replaces template words by the unknown word a
#: VLM with ``policy.vlm.mask_unseen_words`` reads every unseen word as
#: (:mod:`distrl.policies.unseen_words`), so it learns what a sentence with a word it cannot
#: read means before it meets one on a test task.
ALL_EDITS = (*EDITS, "mask")


def _letters(token: str) -> list[str]:
    return _LETTERS_RE.findall(token)


def _screen_words(observation: Observation) -> set[str]:
    """The words (lower case) of the screen's elements."""
    return {word.lower() for element in observation.elements for word in _letters(element.text)}


def _needed_words(observation: Observation, action: Action) -> set[str]:
    """The words (lower case) the step must keep: on the screen or written by the action."""
    needed = _screen_words(observation)
    if action.action_type == ActionType.TYPE:
        needed.update(word.lower() for word in _letters(action.text))
    elif action.is_tap:
        index = resolve_tap(observation.elements, *action.touch_yx)
        if index is not None:
            needed.update(word.lower() for word in _letters(observation.elements[index].text))
    for previous in observation.previous_actions:
        if previous.action_type == ActionType.TYPE:
            needed.update(word.lower() for word in _letters(previous.text))
    return needed


def _is_name(token: str, position: int) -> bool:
    """A capital inside the sentence marks a name ("Ana's", "Clock")."""
    return position > 0 and any(word[0].isupper() for word in _letters(token))


def _is_editable(tokens: list[str], position: int, needed: set[str]) -> bool:
    """Whether ``tokens[position]`` is template wording (see the module's docstring)."""
    token = tokens[position]
    if prose_core(token) is None:
        return False  # a quoted text, a number, a time, an address, or punctuation alone
    if _is_name(token, position):
        return False
    if 0 < position < len(tokens) - 1 and all(
        _is_name(tokens[side], side) for side in (position - 1, position + 1)
    ):
        return False  # a particle inside a name ("Rio de Janeiro")
    return not any(word.lower() in needed for word in _letters(token))


def _editable_positions(tokens: list[str], needed: set[str]) -> list[int]:
    return [i for i in range(len(tokens)) if _is_editable(tokens, i, needed)]


def task_words(task: Task) -> set[str]:
    """The words (lower case) of a PhoneSim task's parameters (``spec["params"]``): what the
    task is, as opposed to how its instruction words it."""
    params = task.spec.get("params", {})
    values = params.values() if isinstance(params, Mapping) else ()
    return {word.lower() for value in values for word in _letters(str(value))}


def task_template_words(tasks: Iterable[Task]) -> list[str]:
    """The insertion pool for rewording tasks: the editable words of the tasks' instructions
    that are not words of their own parameters (sorted, so the pool is reproducible)."""
    pool: set[str] = set()
    for task in tasks:
        tokens = TOKEN_RE.findall(task.instruction)
        for position in _editable_positions(tokens, task_words(task)):
            pool.add(tokens[position].strip(EDGE_PUNCTUATION).lower())
    return sorted(pool)


def episode_needed_words(trajectories: Iterable[Trajectory]) -> dict[str, set[str]]:
    """Per instruction, the words any step of any of its episodes needs (a screen's words, a
    word an action writes). A step keeps these as well as its own: the home screen's step of
    "Turn on airplane mode" must not lose "airplane", which only the settings screen shows."""
    needed: dict[str, set[str]] = {}
    for trajectory in trajectories:
        words = needed.setdefault(trajectory.task.instruction, set())
        for step in trajectory.steps:
            words |= _needed_words(step.observation, step.action)
        if trajectory.final_observation is not None:
            words |= _screen_words(trajectory.final_observation)
    return needed


def editable_words(
    pairs: Iterable[tuple[Observation, Action]],
    episode_needed: Mapping[str, set[str]] | None = None,
) -> list[str]:
    """The insertion pool: the editable words (edge punctuation stripped, lower case, sorted so
    the pool is reproducible) of the instructions of ``pairs``, less the words their episodes
    need (``episode_needed``, :func:`episode_needed_words`); "don't" stays one word."""
    pool: set[str] = set()
    for observation, action in pairs:
        tokens = TOKEN_RE.findall(observation.instruction)
        needed = _needed_words(observation, action)
        if episode_needed is not None:
            needed |= episode_needed.get(observation.instruction, set())
        for position in _editable_positions(tokens, needed):
            pool.add(tokens[position].strip(EDGE_PUNCTUATION).lower())
    return sorted(pool)


def _sentence_case(tokens: list[tuple[str, bool]]) -> list[str]:
    """The tokens with the template words' capitals where a sentence puts them: the first word
    capitalised, the others in lower case. A sentence's first word moved inside it would
    otherwise read as a name (to a reader and to the name placeholders, design.md §5)."""
    cased = []
    for position, (token, editable) in enumerate(tokens):
        if editable:
            token = (token[:1].upper() if position == 0 else token[:1].lower()) + token[1:]
        cased.append(token)
    return cased


class PhrasingEdit:
    """Rewords the instructions of (observation, action) pairs with probability ``rate`` per
    pair, by one edit drawn from ``edits``: each editable word deleted with probability
    :data:`EDIT_SHARE`, or about that share of them swapped in pairs, or as many ``pool`` words
    inserted, or (``mask``) each replaced by the unknown word with that probability."""

    def __init__(
        self,
        pool: Iterable[str],
        rate: float,
        edits: Sequence[str] = EDITS,
        episode_needed: Mapping[str, set[str]] | None = None,
    ):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"phrasing augmentation rate must be in [0, 1], got {rate}")
        unknown = sorted(set(edits) - set(ALL_EDITS))
        if unknown or not edits:
            raise ValueError(f"phrasing edits must be some of {ALL_EDITS}, got {list(edits)}")
        self.pool = list(pool)
        self.rate = rate
        self.edits = tuple(edits)
        #: Per instruction, the words its episodes need beyond a step's own (kept as well).
        self.episode_needed: Mapping[str, set[str]] = episode_needed or {}

    @classmethod
    def from_demonstrations(
        cls, trajectories: Sequence[Trajectory], rate: float, edits: Sequence[str] = EDITS
    ) -> PhrasingEdit:
        """The edit for ``trajectories``' steps: a word any step of an episode needs is kept in
        all of them, and the insertion pool holds only the words no episode needs."""
        needed = episode_needed_words(trajectories)
        pairs = ((step.observation, step.action) for t in trajectories for step in t.steps)
        return cls(editable_words(pairs, needed), rate, edits, episode_needed=needed)

    def _needed(self, observation: Observation, action: Action) -> set[str]:
        return _needed_words(observation, action) | self.episode_needed.get(
            observation.instruction, set()
        )

    def __call__(
        self, observation: Observation, action: Action, rng: np.random.Generator
    ) -> tuple[Observation, Action]:
        """The pair with its instruction reworded, or the pair unchanged (rate not drawn, or no
        template word to edit). The action is returned as it was."""
        if self.rate == 0.0 or rng.random() >= self.rate:
            return observation, action
        reworded = self._reword(observation.instruction, self._needed(observation, action), rng)
        if reworded is None:
            return observation, action
        return replace(observation, instruction=reworded), action

    def reword_window(self, window: StepWindow, rng: np.random.Generator) -> StepWindow:
        """A demonstration window with one rewording, drawn with probability ``rate``, applied to
        every observation of its episode (the window's steps, its bootstrap and first
        observations), so the window stays one episode under one instruction. A word is kept
        when any of the window's steps needs it. Only for demonstrations: their actions do not
        depend on the wording (the demonstrator reads the task, not the sentence), so a reworded
        window is what the demonstrator would have done; a policy's own steps were chosen on
        their original wording, and their behaviour log-probs would no longer match."""
        if self.rate == 0.0 or rng.random() >= self.rate:
            return window
        instruction = window.observations[0].instruction
        needed: set[str] = set()
        for observation, action in zip(window.observations, window.actions, strict=True):
            needed |= self._needed(observation, action)
        for extra in (window.bootstrap_observation, window.first_observation):
            if extra is not None:
                needed |= _screen_words(extra)
        reworded = self._reword(instruction, needed, rng)
        if reworded is None:
            return window

        def reword(observation: Observation) -> Observation:
            if observation.instruction != instruction:
                return observation
            return replace(observation, instruction=reworded)

        bootstrap = window.bootstrap_observation
        return replace(
            window,
            observations=tuple(reword(o) for o in window.observations),
            bootstrap_observation=None if bootstrap is None else reword(bootstrap),
            first_observation=reword(window.first_observation),
        )

    def reword_task(self, task: Task, rng: np.random.Generator) -> Task:
        """``task`` with its instruction reworded with probability ``rate``, keeping the words of
        its parameters (:func:`task_words`); the task id, spec and everything else unchanged."""
        if self.rate == 0.0 or rng.random() >= self.rate:
            return task
        reworded = self._reword(task.instruction, task_words(task), rng)
        return task if reworded is None else replace(task, instruction=reworded)

    def _reword(self, instruction: str, needed: set[str], rng: np.random.Generator) -> str | None:
        """``instruction`` after one edit that keeps ``needed`` words, or None when it has no
        template word to edit or the edit changed nothing."""
        tokens = TOKEN_RE.findall(instruction)
        editable = _editable_positions(tokens, needed)
        if not editable:
            return None
        count = max(1, round(EDIT_SHARE * len(editable)))
        marked = [(token, i in editable) for i, token in enumerate(tokens)]
        edit = self.edits[int(rng.integers(len(self.edits)))]
        if edit == "delete":
            kept = self._delete(marked, rng)
        elif edit == "swap":
            kept = self._swap(marked, count, rng)
        elif edit == "mask":
            kept = self._mask(marked, rng)
        else:
            kept = self._insert(marked, count, rng)
        reworded = " ".join(_sentence_case(kept))
        return None if reworded == instruction else reworded

    @staticmethod
    def _delete(tokens: list[tuple[str, bool]], rng: np.random.Generator) -> list[tuple[str, bool]]:
        """Each editable token dropped with probability :data:`EDIT_SHARE`, one always kept."""
        drawn = [editable and rng.random() < EDIT_SHARE for _, editable in tokens]
        if all(drawn):
            drawn[int(rng.integers(len(drawn)))] = False
        return [token for token, dropped in zip(tokens, drawn, strict=True) if not dropped]

    @staticmethod
    def _mask(tokens: list[tuple[str, bool]], rng: np.random.Generator) -> list[tuple[str, bool]]:
        """Each editable token's word replaced by :data:`UNKNOWN_WORD` with probability
        :data:`EDIT_SHARE` (one always), its edge punctuation kept ("phone?" -> "<unk>?")."""
        drawn = [editable and rng.random() < EDIT_SHARE for _, editable in tokens]
        if not any(drawn):
            editable = [i for i, (_, is_editable) in enumerate(tokens) if is_editable]
            drawn[editable[int(rng.integers(len(editable)))]] = True
        masked = []
        for (token, editable), mask in zip(tokens, drawn, strict=True):
            if mask:
                core = token.strip(EDGE_PUNCTUATION)
                start = token.index(core)
                token = token[:start] + UNKNOWN_WORD + token[start + len(core) :]
            masked.append((token, editable and not mask))
        return masked

    @staticmethod
    def _swap(
        tokens: list[tuple[str, bool]], edits: int, rng: np.random.Generator
    ) -> list[tuple[str, bool]]:
        """``edits`` exchanges of two editable tokens' places (none with fewer than two)."""
        positions = [i for i, (_, editable) in enumerate(tokens) if editable]
        tokens = list(tokens)
        if len(positions) < 2:
            return tokens
        for _ in range(edits):
            first, second = rng.choice(positions, size=2, replace=False)
            tokens[first], tokens[second] = tokens[second], tokens[first]
        return tokens

    def _insert(
        self, tokens: list[tuple[str, bool]], edits: int, rng: np.random.Generator
    ) -> list[tuple[str, bool]]:
        """``edits`` pool words put at random places beside a template word (never inside a
        name of several words, and after the first token, so an instruction still starts as it
        did)."""
        tokens = list(tokens)
        if not self.pool:
            return tokens
        for _ in range(edits):
            places = [
                place
                for place in range(1, len(tokens) + 1)
                if place == len(tokens) or tokens[place - 1][1] or tokens[place][1]
            ]
            word = self.pool[int(rng.integers(len(self.pool)))]
            tokens.insert(places[int(rng.integers(len(places)))], (word, True))
        return tokens

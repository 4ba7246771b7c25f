"""Observations as tensors for the small policy: hashed text, element geometry, flags, history.

There is no vocabulary file: every text becomes a bag of hashed ids (its words and the character
trigrams of each word, through a stable CRC32, not Python's per-process salted ``hash``), so unseen
words still share trigrams with seen ones ("bestbuy" and "best buy") and a checkpoint needs nothing
beside its weights. Id 0 is padding everywhere.

One :class:`ObservationFeatures` per observation holds plain numpy arrays plus the two lists the
policy needs to turn a choice back into an :class:`Action` (the elements and the TYPE candidates);
:func:`collate` pads a list of them into one :class:`FeatureBatch` with masks, so observations with
different element and candidate counts share a batch.

Besides raw content, a few match features are computed here because a tiny network learns them
slowly and they are cheap and exact: how much of an element's text occurs in the instruction,
whether an element was the target of the previous tap, whether a candidate is already in the
focused field or was the last thing typed.

Names get features of their own because test instructions name people, apps and texts that no
train instruction does: a hashed embedding of a held-out name is untrained noise, so a policy that
recognises "Alice Smith" by her embedding fails on "Elena Popescu". What carries over is *how* a
name is written: a capitalised word that does not start a sentence ("Store Olivia Baker's
number": *Olivia* and *Baker*, not *Store*), and whether an element shows such a word (the
"Instagram" row of a store list) or a candidate is made of them. The text after a colon is
flagged too, since "Text Ana: the door code is 4512" dictates all of it, not just the number.

>>> import numpy as np
>>> from distrl.core.observation import Observation, UIElement
>>> obs = Observation(np.zeros((4, 4, 3), np.uint8), "Open the Clock app",
...                   (UIElement("Clock", (0.1, 0.1, 0.3, 0.2), True, "icon_clock", "icon"),))
>>> feats = ObservationFeaturizer().encode(obs)
>>> feats.element_tokens.shape[0], bool(feats.tap_targets[0]), feats.candidates[0]
(1, True, 'Open the Clock app')
"""

from __future__ import annotations

import re
import zlib
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation, UIElement
from distrl.policies.candidates import DEFAULT_MAX_CANDIDATES, colon_tails, extract_candidates

__all__ = [
    "ACTION_KINDS",
    "CANDIDATE_FEATURES",
    "ELEMENT_FEATURES",
    "GLOBAL_FEATURES",
    "HISTORY_OTHER",
    "HISTORY_PAD",
    "ActionKind",
    "FeatureBatch",
    "ObservationFeatures",
    "ObservationFeaturizer",
    "collate",
    "hashed_tokens",
    "instruction_names",
    "kind_of_action",
    "resolve_tap",
    "tap_point",
]


class ActionKind:
    """Indices of the composite action's kind head (the order of :data:`ACTION_KINDS`)."""

    TAP = 0
    SWIPE_UP = 1
    SWIPE_DOWN = 2
    TYPE = 3
    PRESS_BACK = 4
    PRESS_HOME = 5
    PRESS_ENTER = 6
    STATUS_TASK_COMPLETE = 7
    STATUS_TASK_IMPOSSIBLE = 8


ACTION_KINDS: tuple[str, ...] = (
    "TAP",
    "SWIPE_UP",
    "SWIPE_DOWN",
    "TYPE",
    "PRESS_BACK",
    "PRESS_HOME",
    "PRESS_ENTER",
    "STATUS_TASK_COMPLETE",
    "STATUS_TASK_IMPOSSIBLE",
)
#: History slots: a kind index, "something else" (invalid, horizontal swipe) or padding.
HISTORY_OTHER = len(ACTION_KINDS)
HISTORY_PAD = len(ACTION_KINDS) + 1

_SIMPLE_KINDS = {
    ActionType.PRESS_BACK: ActionKind.PRESS_BACK,
    ActionType.PRESS_HOME: ActionKind.PRESS_HOME,
    ActionType.PRESS_ENTER: ActionKind.PRESS_ENTER,
    ActionType.STATUS_TASK_COMPLETE: ActionKind.STATUS_TASK_COMPLETE,
    ActionType.STATUS_TASK_IMPOSSIBLE: ActionKind.STATUS_TASK_IMPOSSIBLE,
    ActionType.TYPE: ActionKind.TYPE,
}

#: Per-element numeric features: bbox (4), centre (2), size (2), clickable, checkable, checked,
#: focused, has text, tap target, hit by last tap, share of words in the instruction, text inside
#: the instruction, list position, is last listed, share of the instruction's name words it shows,
#: its first word is an instruction word.
ELEMENT_FEATURES = 21
#: Per-candidate numeric features: rank, word count, quoted, in focused field, focused field is a
#: prefix of it, on screen, last typed, has digits, has a dot, starts upper-case, position in the
#: instruction, share of its words capitalised, all its words capitalised (a name), a whole word
#: span of the instruction's words (not cut mid-phrase at punctuation), share of its words that
#: are name words (capitalised mid-sentence), it starts a sentence, it is the text after a colon.
CANDIDATE_FEATURES = 17
#: Per-instruction-word features: relative position, capitalised, has digits, inside quotes,
#: shown on screen (in some element's text), a name word (capitalised mid-sentence).
WORD_FEATURES = 6
#: Instruction words kept as tokens (the first ones).
MAX_INSTRUCTION_WORDS = 24
#: Per-observation features: steps so far, keyboard/field focused, element count, candidate count.
GLOBAL_FEATURES = 4

_WORD_RE = re.compile(r"\w+")


def kind_of_action(action: Action) -> int:
    """The composite kind of ``action``, or :data:`HISTORY_OTHER` when it has none.

    A vertical swipe is SWIPE_UP when the finger moves up (``lift_y < touch_y``: the content
    scrolls down to reveal what is below), SWIPE_DOWN otherwise; a mostly horizontal swipe does
    nothing on PhoneSim and has no kind.
    """
    if action.action_type is ActionType.DUAL_POINT:
        if action.is_tap:
            return ActionKind.TAP
        dy = action.lift_yx[0] - action.touch_yx[0]
        dx = action.lift_yx[1] - action.touch_yx[1]
        if abs(dy) < abs(dx):
            return HISTORY_OTHER
        return ActionKind.SWIPE_UP if dy < 0 else ActionKind.SWIPE_DOWN
    return _SIMPLE_KINDS.get(action.action_type, HISTORY_OTHER)


def resolve_tap(elements: Sequence[UIElement], y: float, x: float) -> int | None:
    """Index of the topmost listed element whose bbox holds ``(y, x)``; None if none does.

    Mirrors PhoneSim's hit test: later elements are drawn on top, so the search runs from the
    end of the list.
    """
    for index in range(len(elements) - 1, -1, -1):
        if elements[index].contains(y, x):
            return index
    return None


def _stable_hash(token: str, buckets: int) -> int:
    """A bucket in ``[1, buckets)``; 0 stays free for padding."""
    return zlib.crc32(token.encode("utf-8")) % (buckets - 1) + 1


@lru_cache(maxsize=65536)
def hashed_tokens(
    text: str, buckets: int, max_tokens: int, char_trigrams: bool = True
) -> tuple[int, ...]:
    """Hashed ids of ``text``'s lower-cased words, then (``char_trigrams``) of their
    boundary-marked character trigrams, at most ``max_tokens``. Words come first so a long text
    keeps all of them."""
    words = _WORD_RE.findall(text.lower())
    tokens = [f"w:{word}" for word in words]
    for word in words if char_trigrams else ():
        marked = f"<{word}>"
        tokens.extend(f"c:{marked[i : i + 3]}" for i in range(len(marked) - 2))
    return tuple(_stable_hash(token, buckets) for token in tokens[:max_tokens])


def text_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` (the unit every instruction match here counts)."""
    return set(_WORD_RE.findall(text.lower()))


def overlap_share(words: set[str], instruction_words: set[str]) -> float:
    """The share of ``words`` (an element's) that are instruction words; 0 for no words."""
    return len(words & instruction_words) / max(1, len(words))


# What may end a sentence or open a dictated passage: a capital right after one is grammar, not
# a name ("Text Ana: Happy birthday", 'Say "Hello"').
_SENTENCE_OPENERS = frozenset('.!?:;"\u201c\u2018(')


@dataclass(frozen=True)
class _InstructionWord:
    """One word of an instruction, with where it is and how it is written."""

    start: int
    end: int
    text: str
    sentence_start: bool
    #: Capitalised although it does not start a sentence: a name, an app, a place ("I" aside).
    name_like: bool


@lru_cache(maxsize=4096)
def _instruction_words(instruction: str) -> tuple[_InstructionWord, ...]:
    """The instruction's words, each marked as starting a sentence or being name-like.

    >>> words = _instruction_words("Store Olivia Baker's number. Then Call")
    >>> [w.text for w in words if w.name_like], [w.text for w in words if w.sentence_start]
    (['Olivia', 'Baker', 's', 'Call'], ['Store', 'Then'])
    """
    out = []
    for match in _WORD_RE.finditer(instruction):
        before = instruction[: match.start()].rstrip()
        sentence_start = not before or before[-1] in _SENTENCE_OPENERS
        if before.endswith('"') and before.count('"') % 2 == 0:
            sentence_start = False  # after a closing quote: 'Write "hi" to Kai'
        word = match.group()
        name_like = word[:1].isupper() and not sentence_start and word != "I"
        # A word glued to the previous one ("Wi-Fi", "Alice's", "I'm") continues it: "Fi" is a
        # name part only if "Wi" is, and the "s" of a genitive never starts a sentence.
        if out and out[-1].end == match.start() - 1 and instruction[out[-1].end] in "-'\u2019":
            sentence_start, name_like = False, out[-1].name_like
        out.append(_InstructionWord(match.start(), match.end(), word, sentence_start, name_like))
    return tuple(out)


def instruction_names(instruction: str) -> tuple[str, ...]:
    """The instruction's names, each once, in order: maximal runs of name-like words joined by
    a space or a hyphen, a genitive "'s" left out.

    >>> instruction_names("Store Olivia Baker's number. Then open Wi-Fi, Clock and Clock")
    ('Olivia Baker', 'Wi-Fi', 'Clock')
    """
    runs: list[tuple[int, int]] = []
    for word in _instruction_words(instruction):
        genitive = word.text == "s" and instruction[word.start - 1 : word.start] in ("'", "\u2019")
        if not word.name_like or genitive:
            continue
        if runs and instruction[runs[-1][1] : word.start] in (" ", "-"):
            runs[-1] = (runs[-1][0], word.end)
        else:
            runs.append((word.start, word.end))
    return tuple(dict.fromkeys(instruction[start:end] for start, end in runs))


_QUOTED_RE = re.compile(r"\"[^\"]*\"|'[^']*'|\u201c[^\u201d]*\u201d")


def _ends_at_boundary(text: str, end: int) -> bool:
    """Whether a span of ``text`` ending at ``end`` ends a clause: at the end, or before
    punctuation or a closing quote (a name before "," or a phrase before "?")."""
    return end >= len(text) or text[end] in ",.;:!?\"'\u201d)"


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of quoted passages (straight or curly double quotes, single quotes)."""
    return [m.span() for m in _QUOTED_RE.finditer(text)]


@dataclass
class ObservationFeatures:
    """One observation's features (numpy), before padding.

    ``tap_targets[i]`` says whether tapping element ``i``'s centre reaches element ``i`` itself
    (no later element covers that point): only those are offered to the pointer, so that the tap
    an ``act`` emits maps back to the same element in ``score_actions``. ``has_focus`` says
    whether one of the kept elements has the input focus (where typing lands: a policy may offer
    TYPE only then); ``focus_empty`` whether that element also shows no text yet (typing there
    fills a field, where typing into a filled one appends to what is there).
    """

    instruction_tokens: np.ndarray  # [L] int64
    word_tokens: np.ndarray  # [W, L] int64: each instruction word's hashed word + trigram ids
    word_features: np.ndarray  # [W, WORD_FEATURES] float32
    history: np.ndarray  # [K] int64, oldest first, HISTORY_PAD before the episode start
    global_features: np.ndarray  # [GLOBAL_FEATURES] float32
    element_tokens: np.ndarray  # [E, L] int64
    element_kinds: np.ndarray  # [E] int64
    element_features: np.ndarray  # [E, ELEMENT_FEATURES] float32
    tap_targets: np.ndarray  # [E] bool
    candidate_tokens: np.ndarray  # [C, L] int64
    candidate_features: np.ndarray  # [C, CANDIDATE_FEATURES] float32
    elements: tuple[UIElement, ...]
    candidates: tuple[str, ...]
    has_focus: bool
    focus_empty: bool


@dataclass
class FeatureBatch:
    """Padded features of ``B`` observations; ``*_mask`` is True on real (non-padding) entries.

    ``tap_targets`` is already and-ed with ``element_mask``; an observation with no element or
    no candidate has an all-False row (the policy then masks TAP or TYPE).
    """

    instruction_tokens: torch.Tensor  # [B, L]
    word_tokens: torch.Tensor  # [B, W, L]
    word_features: torch.Tensor  # [B, W, WORD_FEATURES]
    word_mask: torch.Tensor  # [B, W]
    history: torch.Tensor  # [B, K]
    global_features: torch.Tensor  # [B, G]
    element_tokens: torch.Tensor  # [B, E, L]
    element_kinds: torch.Tensor  # [B, E]
    element_features: torch.Tensor  # [B, E, F]
    element_mask: torch.Tensor  # [B, E]
    tap_targets: torch.Tensor  # [B, E]
    candidate_tokens: torch.Tensor  # [B, C, L]
    candidate_features: torch.Tensor  # [B, C, F]
    candidate_mask: torch.Tensor  # [B, C]
    has_focus: torch.Tensor  # [B] bool
    focus_empty: torch.Tensor  # [B] bool
    items: list[ObservationFeatures]

    @property
    def batch_size(self) -> int:
        return int(self.instruction_tokens.shape[0])


@dataclass(eq=False)
class ObservationFeaturizer:
    """Turns observations into :class:`ObservationFeatures` (and batches of them).

    ``max_elements`` is a safety cap: PhoneSim screens list at most ~30 elements; if a backend
    lists more, the *last* ones are kept, because later elements are on top and take the taps.
    ``cache_size`` encodings are kept by observation content (0: no cache).
    """

    hash_buckets: int = 4096
    max_text_tokens: int = 48
    kind_buckets: int = 32
    history: int = 4
    max_elements: int = 128
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    horizon_scale: float = 20.0
    char_trigrams: bool = True
    cache_size: int = 0
    _cache: OrderedDict[Hashable, ObservationFeatures] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.hash_buckets < 2 or self.kind_buckets < 2:
            raise ValueError("hash_buckets and kind_buckets must be at least 2 (0 is padding)")
        if self.cache_size < 0:
            raise ValueError("cache_size must be >= 0 (0: no cache)")

    def candidates(self, instruction: str) -> tuple[str, ...]:
        return _cached_candidates(instruction, self.max_candidates)

    def tokens(self, text: str) -> tuple[int, ...]:
        return hashed_tokens(text, self.hash_buckets, self.max_text_tokens, self.char_trigrams)

    def _token_matrix(self, texts: Sequence[str]) -> np.ndarray:
        rows = [self.tokens(text) for text in texts]
        width = max((len(row) for row in rows), default=0)
        out = np.zeros((len(rows), max(width, 1)), dtype=np.int64)
        for i, row in enumerate(rows):
            out[i, : len(row)] = row
        return out

    def encode(self, observation: Observation) -> ObservationFeatures:
        elements = tuple(observation.elements[-self.max_elements :])
        instruction = observation.instruction
        candidates = self.candidates(instruction)
        previous = observation.previous_actions

        # -- history and global state -------------------------------------------------------
        history = np.full(self.history, HISTORY_PAD, dtype=np.int64)
        recent = [kind_of_action(a) for a in previous[-self.history :]] if self.history else []
        if recent:
            history[-len(recent) :] = recent
        focused = next((e for e in elements if e.focused), None)
        global_features = np.array(
            [
                len(previous) / self.horizon_scale,
                float(focused is not None),
                len(elements) / 32.0,
                len(candidates) / 64.0,
            ],
            dtype=np.float32,
        )

        # -- elements -------------------------------------------------------------------------
        last = previous[-1] if previous else None
        last_tap = last.touch_yx if last is not None and last.is_tap else None
        instruction_lower = instruction.lower()
        instruction_words = text_words(instruction)
        parsed = _instruction_words(instruction)
        name_words = {w.text.lower() for w in parsed if w.name_like}
        count = len(elements)
        element_features = np.zeros((count, ELEMENT_FEATURES), dtype=np.float32)
        tap_targets = np.zeros(count, dtype=bool)
        for i, element in enumerate(elements):
            x0, y0, x1, y1 = element.bbox
            centre = Action.tap(*tap_point(element))
            tap_targets[i] = resolve_tap(elements, *centre.touch_yx) == i
            words = text_words(element.text)
            text = element.text.strip().lower()
            first_word = _WORD_RE.search(text)
            element_features[i] = (
                x0,
                y0,
                x1,
                y1,
                (y0 + y1) / 2,
                (x0 + x1) / 2,
                x1 - x0,
                y1 - y0,
                float(element.clickable),
                float(element.checked is not None),
                float(bool(element.checked)),
                float(element.focused),
                float(bool(text)),
                float(tap_targets[i]),
                float(last_tap is not None and element.contains(*last_tap)),
                overlap_share(words, instruction_words),
                float(bool(text) and text in instruction_lower),
                i / max(1, count - 1),
                float(i == count - 1),
                len(words & name_words) / max(1, len(name_words)),
                float(first_word is not None and first_word.group() in instruction_words),
            )
        element_kinds = np.array(
            [_stable_hash(f"k:{e.kind}", self.kind_buckets) for e in elements], dtype=np.int64
        )

        # -- candidates -----------------------------------------------------------------------
        focused_text = focused.text if focused is not None else ""
        screen_texts = {e.text for e in elements}
        last_typed = last.text if last is not None and last.action_type is ActionType.TYPE else ""
        dictated = {tail.strip() for tail in colon_tails(instruction)}
        candidate_features = np.zeros((len(candidates), CANDIDATE_FEATURES), dtype=np.float32)
        for i, candidate in enumerate(candidates):
            where = instruction.find(candidate)
            words = candidate.split()
            capitalised = sum(word[:1].isupper() for word in words)
            end = where + len(candidate)
            inside = [w for w in parsed if where <= w.start and w.end <= end] if where >= 0 else []
            candidate_features[i] = (
                i / 64.0,
                len(candidate.split()) / 8.0,
                float(
                    f'"{candidate}"' in instruction
                    or f"'{candidate}'" in instruction
                    or f"\u201c{candidate}\u201d" in instruction
                ),
                float(focused_text == candidate),
                float(bool(focused_text) and candidate.startswith(focused_text)),
                float(candidate in screen_texts),
                float(candidate == last_typed),
                float(any(c.isdigit() for c in candidate)),
                float("." in candidate),
                float(candidate[:1].isupper()),
                (where / max(1, len(instruction))) if where >= 0 else -1.0,
                capitalised / max(1, len(words)),
                float(bool(words) and capitalised == len(words)),
                float(where >= 0 and _ends_at_boundary(instruction, where + len(candidate))),
                sum(w.name_like for w in inside) / max(1, len(inside)),
                float(bool(inside) and inside[0].sentence_start),
                float(candidate in dictated),
            )

        # -- instruction words ------------------------------------------------------------------
        word_spans = parsed[:MAX_INSTRUCTION_WORDS]
        screen_words = set().union(*(text_words(e.text) for e in elements)) if elements else set()
        quoted = _quoted_spans(instruction)
        word_features = np.zeros((len(word_spans), WORD_FEATURES), dtype=np.float32)
        for i, parsed_word in enumerate(word_spans):
            word = parsed_word.text
            word_features[i] = (
                i / max(1, len(word_spans) - 1),
                float(word[:1].isupper()),
                float(any(c.isdigit() for c in word)),
                float(any(a <= parsed_word.start < b for a, b in quoted)),
                float(word.lower() in screen_words),
                float(parsed_word.name_like),
            )

        return ObservationFeatures(
            instruction_tokens=np.array(self.tokens(instruction) or (0,), dtype=np.int64),
            word_tokens=self._token_matrix([w.text for w in word_spans]),
            word_features=word_features,
            history=history,
            global_features=global_features,
            element_tokens=self._token_matrix([e.text for e in elements]),
            element_kinds=element_kinds,
            element_features=element_features,
            tap_targets=tap_targets,
            candidate_tokens=self._token_matrix(candidates),
            candidate_features=candidate_features,
            elements=elements,
            candidates=candidates,
            has_focus=focused is not None,
            focus_empty=focused is not None and not focused.text.strip(),
        )

    def __getstate__(self) -> dict[str, object]:
        # Copies (a worker's deepcopy, a pickled policy) start with an empty cache: it is a
        # speed-up for this process, not state worth seconds of copying.
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        return state

    def cache_key(self, observation: Observation) -> Hashable:
        """Everything :meth:`encode` reads: the instruction, the elements, the episode's length
        so far and its last ``history`` actions (the last one also for its tap point and text)."""
        previous = observation.previous_actions
        return (
            observation.instruction,
            observation.elements,
            len(previous),
            previous[-max(self.history, 1) :],
        )

    def encode_cached(self, observation: Observation) -> ObservationFeatures:
        """:meth:`encode`, remembered for the last ``cache_size`` distinct observations.

        Why: a learner scores every replayed step several times (each window is drawn again and
        again), and encoding (hashing texts, per-element features) is a quarter of an update's
        time on CPU. The key is the observation's content, not its identity, so copies that come
        back from another process (a Ray replay) hit too. Cached arrays are shared: nothing may
        write into them (``collate`` copies them into fresh tensors).
        """
        if self.cache_size == 0:
            return self.encode(observation)
        key = self.cache_key(observation)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        features = self.encode(observation)
        self._cache[key] = features
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return features

    def __call__(
        self,
        observations: Sequence[Observation],
        device: torch.device | str = "cpu",
        *,
        remember: bool = False,
    ) -> FeatureBatch:
        encode = self.encode_cached if remember else self.encode
        return collate([encode(obs) for obs in observations], device)


@lru_cache(maxsize=4096)
def _cached_candidates(instruction: str, max_candidates: int) -> tuple[str, ...]:
    return tuple(extract_candidates(instruction, max_candidates))


def tap_point(element: UIElement) -> tuple[float, float]:
    """The element's centre, clamped into [0, 1] so ``Action.tap`` accepts it even for an
    element that a backend reports partly off-screen."""
    y, x = element.center_yx
    return (min(max(y, 0.0), 1.0), min(max(x, 0.0), 1.0))


def _pad_stack(arrays: Sequence[np.ndarray], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    out = np.zeros((len(arrays), *shape), dtype=dtype)
    for i, array in enumerate(arrays):
        out[(i, *(slice(0, n) for n in array.shape))] = array
    return out


def collate(
    items: Sequence[ObservationFeatures], device: torch.device | str = "cpu"
) -> FeatureBatch:
    """Pad ``items`` to the batch's largest element count, candidate count and text length.

    Sizes are at least 1 so that an observation without elements or candidates still yields
    well-formed (fully masked) rows.
    """
    if not items:
        raise ValueError("collate needs at least one observation")
    n_elements = max(1, max(len(it.elements) for it in items))
    n_candidates = max(1, max(len(it.candidates) for it in items))
    n_words = max(1, max(it.word_tokens.shape[0] for it in items))
    text_len = max(
        1,
        max(it.instruction_tokens.shape[0] for it in items),
        max(it.word_tokens.shape[1] for it in items),
        max(it.element_tokens.shape[1] for it in items),
        max(it.candidate_tokens.shape[1] for it in items),
    )
    history = items[0].history.shape[0]

    def tensor(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(device)

    element_mask = _pad_stack(
        [np.ones(len(it.elements), bool) for it in items], (n_elements,), bool
    )
    candidate_mask = _pad_stack(
        [np.ones(len(it.candidates), bool) for it in items], (n_candidates,), bool
    )
    word_mask = _pad_stack([np.ones(len(it.word_features), bool) for it in items], (n_words,), bool)
    return FeatureBatch(
        instruction_tokens=tensor(
            _pad_stack([it.instruction_tokens for it in items], (text_len,), np.int64)
        ),
        word_tokens=tensor(
            _pad_stack([it.word_tokens for it in items], (n_words, text_len), np.int64)
        ),
        word_features=tensor(
            _pad_stack([it.word_features for it in items], (n_words, WORD_FEATURES), np.float32)
        ),
        word_mask=tensor(word_mask),
        history=tensor(_pad_stack([it.history for it in items], (history,), np.int64)),
        global_features=tensor(
            _pad_stack([it.global_features for it in items], (GLOBAL_FEATURES,), np.float32)
        ),
        element_tokens=tensor(
            _pad_stack([it.element_tokens for it in items], (n_elements, text_len), np.int64)
        ),
        element_kinds=tensor(
            _pad_stack([it.element_kinds for it in items], (n_elements,), np.int64)
        ),
        element_features=tensor(
            _pad_stack(
                [it.element_features for it in items], (n_elements, ELEMENT_FEATURES), np.float32
            )
        ),
        element_mask=tensor(element_mask),
        tap_targets=tensor(_pad_stack([it.tap_targets for it in items], (n_elements,), bool)),
        candidate_tokens=tensor(
            _pad_stack([it.candidate_tokens for it in items], (n_candidates, text_len), np.int64)
        ),
        candidate_features=tensor(
            _pad_stack(
                [it.candidate_features for it in items],
                (n_candidates, CANDIDATE_FEATURES),
                np.float32,
            )
        ),
        candidate_mask=tensor(candidate_mask),
        has_focus=tensor(np.array([it.has_focus for it in items], dtype=bool)),
        focus_empty=tensor(np.array([it.focus_empty for it in items], dtype=bool)),
        items=list(items),
    )

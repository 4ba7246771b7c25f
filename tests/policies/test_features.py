"""Featurisation: stable hashing, tap targets that mirror PhoneSim's hit test, history, padding."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import torch

from distrl.core.action import Action
from distrl.core.observation import Observation, UIElement
from distrl.policies.features import (
    ELEMENT_FEATURES,
    HISTORY_OTHER,
    HISTORY_PAD,
    ActionKind,
    ObservationFeaturizer,
    hashed_tokens,
    kind_of_action,
    resolve_tap,
)


def _obs(
    instruction: str, elements: tuple[UIElement, ...], previous: tuple[Action, ...] = ()
) -> Observation:
    return Observation(np.zeros((8, 4, 3), np.uint8), instruction, elements, previous)


def _el(text: str, bbox: tuple[float, float, float, float], **kw: object) -> UIElement:
    return UIElement(text, bbox, True, f"id/{text}", **kw)  # type: ignore[arg-type]


def test_hashing_is_stable_across_processes() -> None:
    """No per-process salt (Python's ``hash`` has one): a checkpoint must mean the same text
    on every worker."""
    here = hashed_tokens("Search eBay", 4096, 48)
    code = (
        "from distrl.policies.features import hashed_tokens as h; print(h('Search eBay', 4096, 48))"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert str(here) == there.stdout.strip()
    assert all(0 < t < 4096 for t in here)
    assert len(hashed_tokens("a b c d e f g h", 4096, 3)) == 3
    assert hashed_tokens("", 4096, 48) == ()


def test_tap_targets_mirror_the_topmost_element_rule() -> None:
    elements = (
        _el("page", (0.0, 0.0, 1.0, 1.0)),
        _el("button", (0.1, 0.1, 0.3, 0.3)),
        _el("same-box-on-top", (0.1, 0.1, 0.3, 0.3)),
    )
    assert resolve_tap(elements, 0.2, 0.2) == 2  # later listed = on top
    assert resolve_tap(elements, 0.9, 0.9) == 0
    assert resolve_tap(elements, 1.0, 1.0) is None  # bboxes are half-open
    item = ObservationFeaturizer().encode(_obs("x", elements))
    # The page's centre (0.5, 0.5) is not covered; the first button is fully covered.
    assert item.tap_targets.tolist() == [True, False, True]


def test_action_kinds_and_history() -> None:
    assert kind_of_action(Action.tap(0.5, 0.5)) == ActionKind.TAP
    assert kind_of_action(Action.swipe((0.8, 0.5), (0.2, 0.5))) == ActionKind.SWIPE_UP
    assert kind_of_action(Action.swipe((0.2, 0.5), (0.8, 0.5))) == ActionKind.SWIPE_DOWN
    assert kind_of_action(Action.swipe((0.5, 0.1), (0.5, 0.9))) == HISTORY_OTHER
    assert kind_of_action(Action.invalid("x")) == HISTORY_OTHER
    assert kind_of_action(Action.type_text("a")) == ActionKind.TYPE
    previous = (Action.press_home(), Action.type_text("a"), Action.press_enter())
    item = ObservationFeaturizer(history=4).encode(_obs("x", (), previous))
    assert item.history.tolist() == [
        HISTORY_PAD,
        ActionKind.PRESS_HOME,
        ActionKind.TYPE,
        ActionKind.PRESS_ENTER,
    ]


def test_match_features_mark_instruction_words_last_tap_and_focused_text() -> None:
    elements = (
        _el("Wi-Fi", (0.0, 0.1, 1.0, 0.2)),
        _el("Bluetooth", (0.0, 0.2, 1.0, 0.3)),
        UIElement("blue", (0.0, 0.3, 1.0, 0.4), True, "id/field", "field", focused=True),
    )
    item = ObservationFeaturizer().encode(
        _obs("Type 'blue yeti' and turn on Wi-Fi", elements, (Action.tap(0.25, 0.5),))
    )
    overlap, inside, hit = (
        item.element_features[:, 15],
        item.element_features[:, 16],
        item.element_features[:, 14],
    )
    assert overlap.tolist() == [1.0, 0.0, 1.0]
    assert inside.tolist() == [1.0, 0.0, 1.0]
    assert hit.tolist() == [0.0, 1.0, 0.0]
    row = item.candidates.index("blue yeti")
    assert item.candidate_features[row, 2] == 1.0  # quoted
    assert item.candidate_features[row, 4] == 1.0  # the focused field holds a prefix of it


def test_name_features_tell_names_from_sentence_starts() -> None:
    """A capital that starts a sentence (or a quote) is grammar; one mid-sentence marks a name.
    Held-out test names have untrained embeddings, so these features are what lets the policy
    type "Olivia Baker" (not "Store Olivia Baker") and tap the "Instagram" row it never saw."""
    featurizer = ObservationFeaturizer()
    item = featurizer.encode(_obs("Store Olivia Baker's number 212-555-6922 in Contacts", ()))
    named, starts = item.candidate_features[:, 14], item.candidate_features[:, 15]
    name = item.candidates.index("Olivia Baker")
    with_verb = item.candidates.index("Store Olivia Baker")
    assert (named[name], starts[name]) == (1.0, 0.0)
    assert named[with_verb] == np.float32(2 / 3) and starts[with_verb] == 1.0

    quoted = featurizer.encode(_obs('Write "Hello there" to Kai Yamamoto', ()))
    name_words = {
        word: flag
        for word, flag in zip(
            ["Write", "Hello", "there", "to", "Kai", "Yamamoto"],
            quoted.word_features[:, 5],
            strict=True,
        )
    }
    assert name_words == {"Write": 0, "Hello": 0, "there": 0, "to": 0, "Kai": 1, "Yamamoto": 1}

    elements = (
        _el("Airbnb · Travel & Local - 4.7 stars", (0.0, 0.1, 1.0, 0.2)),
        _el("Instagram · Social - 4.1 stars", (0.0, 0.2, 1.0, 0.3)),
        _el("Install", (0.0, 0.3, 1.0, 0.4)),
    )
    store = featurizer.encode(_obs("Can you install Instagram for me?", elements))
    assert store.element_features[:, 19].tolist() == [0.0, 1.0, 0.0]  # shows the name
    assert store.element_features[:, 20].tolist() == [0.0, 1.0, 1.0]  # first word instructed


def test_colon_tail_is_flagged_as_dictated_text() -> None:
    item = ObservationFeaturizer().encode(_obs("Text Ana: the door code is 4512", ()))
    colon = item.candidate_features[:, 16]
    assert colon[item.candidates.index("the door code is 4512")] == 1.0
    assert colon[item.candidates.index("4512")] == 0.0
    assert colon.sum() == 1.0


def test_collate_pads_and_masks_variable_counts() -> None:
    featurizer = ObservationFeaturizer()
    small = _obs("Open clock", (_el("Clock", (0.1, 0.1, 0.2, 0.2)),))
    big = _obs(
        "Search for 'a long query with many words' on ebay.com",
        tuple(_el(f"item {i}", (0.0, i / 10, 1.0, (i + 1) / 10)) for i in range(7)),
    )
    empty = _obs("", ())
    batch = featurizer([small, big, empty])
    assert batch.element_tokens.shape[:2] == (3, 7)
    assert batch.element_features.shape == (3, 7, ELEMENT_FEATURES)
    assert batch.element_mask.sum(dim=1).tolist() == [1, 7, 0]
    assert not bool((batch.tap_targets & ~batch.element_mask).any())
    n_candidates = [len(featurizer.candidates(o.instruction)) for o in (small, big, empty)]
    assert batch.candidate_mask.sum(dim=1).tolist() == n_candidates
    assert n_candidates[2] == 0 and batch.candidate_mask.shape[1] == max(n_candidates)
    assert bool((batch.element_tokens[~batch.element_mask] == 0).all())
    assert batch.instruction_tokens.dtype == torch.long


def test_max_elements_keeps_the_topmost() -> None:
    elements = tuple(_el(f"e{i}", (0.0, i / 10, 1.0, (i + 1) / 10)) for i in range(10))
    item = ObservationFeaturizer(max_elements=3).encode(_obs("x", elements))
    assert [e.text for e in item.elements] == ["e7", "e8", "e9"]


def _same_features(a: object, b: object) -> bool:
    return all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(vars(a).values(), vars(b).values(), strict=True)
    )


def test_feature_cache_hits_copies_by_content_and_tells_histories_apart() -> None:
    """A replayed step that comes back as a copy (from another process) hits the cache; the
    same screen after a different last action does not (its history and last-tap features
    differ)."""
    import pickle

    featurizer = ObservationFeaturizer(cache_size=4)
    screen = (_el("Wi-Fi", (0.1, 0.1, 0.9, 0.2)), _el("Bluetooth", (0.1, 0.3, 0.9, 0.4)))
    tapped_wifi = _obs("Turn on Wi-Fi", screen, (Action.tap(0.15, 0.5),))
    tapped_bt = _obs("Turn on Wi-Fi", screen, (Action.tap(0.35, 0.5),))

    first = featurizer.encode_cached(tapped_wifi)
    again = featurizer.encode_cached(pickle.loads(pickle.dumps(tapped_wifi)))
    assert again is first  # same content, another object: a hit
    other = featurizer.encode_cached(tapped_bt)
    assert other is not first
    assert _same_features(other, featurizer.encode(tapped_bt))
    assert not _same_features(other, first)


def test_feature_cache_is_bounded_and_not_copied() -> None:
    featurizer = ObservationFeaturizer(cache_size=3)
    observations = [
        _obs(f"Open app {i}", (_el(f"App {i}", (0.1, 0.1, 0.2, 0.2)),)) for i in range(5)
    ]
    featurizer([*observations, observations[0]], remember=True)
    assert len(featurizer._cache) == 3  # the least recently used were evicted
    assert featurizer.cache_key(observations[0]) in featurizer._cache  # used last: kept
    assert featurizer.cache_key(observations[1]) not in featurizer._cache
    featurizer(observations[:1] + [_obs("new", ())])  # remember=False: the actor's path
    assert featurizer.cache_key(_obs("new", ())) not in featurizer._cache
    import copy

    assert len(copy.deepcopy(featurizer)._cache) == 0  # a worker's copy starts empty
    assert len(featurizer._cache) == 3


def test_cached_batch_equals_uncached_batch() -> None:
    elements = (_el("Search", (0.0, 0.0, 1.0, 0.1)), _el("Go", (0.8, 0.0, 1.0, 0.1)))
    observations = [_obs('Search for "red shoes"', elements, (Action.type_text("red"),))] * 2
    plain = ObservationFeaturizer()(observations)
    cached = ObservationFeaturizer(cache_size=8)
    cached(observations, remember=True)
    warm = cached(observations, remember=True)
    for name in ("element_tokens", "element_features", "candidate_features", "history"):
        assert torch.equal(getattr(plain, name), getattr(warm, name))

"""Text the small policy may TYPE, derived from the instruction alone.

A small network cannot spell, so TYPE is a choice among candidate strings. The candidates come
from the instruction only (never from the simulator's task parameters), so the same extractor works
for any task file and on real devices. They are what people type when they follow an instruction:
the quoted part, a clause tail ("Search for *things to do in San Francisco*"), a name, a time, a
web address, a phone number.

Order matters only when the cap bites: spans that are almost always typed verbatim (quoted text,
times, domains, numbers) come first, then clause-level spans, then short word n-grams.

>>> extract_candidates('Go to ebay.com and search for "logitech g933"')[:2]
['logitech g933', 'ebay.com']
>>> "7:30 PM" in extract_candidates("Wake me up at 19:30")
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "MAX_NGRAM",
    "colon_tails",
    "extract_candidates",
    "quoted_spans",
    "web_addresses",
]

#: Enough for the longest PhoneSim instruction's spans; the tail (short n-grams) is cut first.
DEFAULT_MAX_CANDIDATES = 96
#: Word n-grams up to this length; longer spans enter only as clause heads/tails.
MAX_NGRAM = 5

# Quoted spans: straight and curly double quotes, and single quotes that open after a non-word
# character (so the apostrophe of "what's" never opens a quote).
_QUOTED_RES = (
    re.compile(r'"([^"]+)"'),
    re.compile(r"\u201c([^\u201d]+)\u201d"),
    re.compile(r"\u2018([^\u2019]+)\u2019"),
    re.compile(r"(?<![\w])'([^']+?)'(?![\w])"),
)
# 12-hour ("6:45 AM", "6:45am", "7 pm") and 24-hour ("18:45") clock times.
_TIME_12_RE = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_TIME_24_RE = re.compile(r"\b(\d{1,2}):(\d{2})\b(?!\s*[ap]\.?\s?m\b)", re.IGNORECASE)
_DOMAIN_RE = re.compile(
    r"\b((?:https?://)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}(?:/[^\s,;\"']*)?)",
    re.IGNORECASE,
)
# Phone numbers and other digit groups ("503-555-2243", "+1 (415) 555 0100", "42").
# Whole tokens only: the digits of "g933" or "13900k" are part of a model name, not a number.
_NUMBER_RE = re.compile(r"(?<![\w.])\+?\(?\d(?:[\d\-\s().]*\d)?(?![\w])")
# Clause boundaries for head/tail spans: sentence punctuation and quotes (a dot only when it is
# not inside a word, so "ebay.com" stays whole).
_CLAUSE_SPLIT_RE = re.compile(r"[,;:!?\"\u201c\u201d\u2018\u2019]|(?<!\w)'|'(?!\w)|\.(?!\w)")
# Characters trimmed from the ends of a word span ("Morgan," -> "Morgan", "Janeiro?" -> "Janeiro").
_TRIM = " \t\n.,;:!?\"'()[]{}\u201c\u201d\u2018\u2019"


def extract_candidates(instruction: str, max_candidates: int = DEFAULT_MAX_CANDIDATES) -> list[str]:
    """Deduplicated candidate texts for ``instruction``, most typical first, at most
    ``max_candidates``. Every candidate is non-empty and stripped; the result is a pure function
    of the instruction (the policy's TYPE head indexes into it, so act and score_actions must
    agree).
    """
    ordered: list[str] = []
    seen: set[str] = set()

    def add(spans: Iterable[str]) -> None:
        for span in spans:
            span = span.strip()
            if span and span not in seen:
                seen.add(span)
                ordered.append(span)

    add(quoted_spans(instruction))
    add(_times(instruction))
    add(web_addresses(instruction))
    add(_numbers(instruction))
    add(colon_tails(instruction))
    add(_clause_spans(instruction))
    add(_ngrams(instruction))
    return ordered[:max_candidates]


def quoted_spans(text: str) -> list[str]:
    """What ``text`` puts in quotes (double, curly or single), in order of the quote kinds."""
    return [match.group(1) for pattern in _QUOTED_RES for match in pattern.finditer(text)]


def _times(text: str) -> list[str]:
    """Each clock time as written and as a clock app labels it ("6:45 PM"), which is what a
    time field usually expects whatever way the instruction wrote it."""
    out: list[str] = []
    for match in _TIME_12_RE.finditer(text):
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        if 1 <= hour <= 12 and minute < 60:
            out.append(f"{hour}:{minute:02d} {match.group(3).upper()}M")
            out.append(match.group(0).strip())
    for match in _TIME_24_RE.finditer(text):
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour < 24 and minute < 60:
            suffix = "AM" if hour < 12 else "PM"
            out.append(f"{hour % 12 or 12}:{minute:02d} {suffix}")
            out.append(match.group(0))
    return out


def web_addresses(text: str) -> list[str]:
    """The web addresses ``text`` names ("maps.com", "https://ebay.com/deals"), in order."""
    return [match.group(1).rstrip(".") for match in _DOMAIN_RE.finditer(text)]


def _numbers(text: str) -> list[str]:
    out = []
    for match in _NUMBER_RE.finditer(text):
        span = match.group(0).strip(" .")
        # A time or a domain already covers digits inside it ("7:30", "web3.com").
        if ":" not in span:
            out.append(span)
    return out


def _words(text: str) -> list[str]:
    return text.split()


def _trim(words: list[str]) -> list[str]:
    """The span with punctuation trimmed from its two ends, plus the possessive-free variant
    ("Alice Smith's" -> "Alice Smith") and the sentence-case-free variant ("Define x" ->
    "define x"): instructions start sentences with capitals and name people in the genitive,
    but what is typed is the bare phrase."""
    span = " ".join(words).strip(_TRIM)
    if not span:
        return []
    out = [span]
    for suffix in ("'s", "\u2019s"):
        if span.endswith(suffix) and len(span) > len(suffix):
            out.append(span[: -len(suffix)].strip(_TRIM))
    first = span.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        out.extend(variant[:1].lower() + variant[1:] for variant in list(out))
    return out


def colon_tails(text: str) -> list[str]:
    """What follows a colon, verbatim: "Text Ana: happy birthday!" dictates the message,
    punctuation included."""
    return [text[match.end() :] for match in re.finditer(r":\s", text)]


def _clause_spans(text: str) -> list[str]:
    """Every contiguous word span inside a clause, of any length, longest first: an
    instruction puts the object of its verb inside one clause ("Search for <query>", "Look up
    <query> on Google"), and such objects can be longer than :data:`MAX_NGRAM` words."""
    out: list[str] = []
    for clause in _CLAUSE_SPLIT_RE.split(text):
        words = _words(clause)
        for length in range(len(words), MAX_NGRAM, -1):
            for start in range(len(words) - length + 1):
                out.extend(_trim(words[start : start + length]))
    return out


def _ngrams(text: str) -> list[str]:
    """Contiguous word n-grams (1 to :data:`MAX_NGRAM` words), longest first at each start."""
    words = _words(text)
    out: list[str] = []
    for start in range(len(words)):
        for length in range(min(MAX_NGRAM, len(words) - start), 0, -1):
            out.extend(_trim(words[start : start + length]))
    return out

"""Web addresses as the simulated browser sees them: parsing, one canonical form, search URLs.

A URL here is ``domain/path?q=query`` without a scheme; ``http(s)://``, ``www.``, ``m.`` and
``en.`` are dropped, so ``https://www.eBay.com/`` and ``ebay.com`` are the same page. Every page a
link or the address bar opens goes through :func:`parse_url` and is stored in its canonical text,
which is what ``PhoneState.browser_history`` records and what tasks compare against.

>>> str(parse_url("https://www.Google.com/search?q=hotels in Paris"))
'google.com/search?q=hotels+in+Paris'
>>> normalize_query("  Logitech   G933! ")
'logitech g933'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar
from urllib.parse import quote_plus, unquote_plus

SEARCH_ENGINE = "google.com"
_SCHEMES = ("https://", "http://")
_HOST_PREFIXES = ("www.", "m.", "en.")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Url:
    """A parsed address. ``path`` has no leading or trailing slash and is lower case."""

    domain: str
    path: str = ""
    #: The decoded ``q`` parameter (a search query), as typed.
    query: str = ""
    #: Where a click came from; ``"sponsored"`` marks a page opened from an ad.
    ref: str = ""

    def __str__(self) -> str:
        text = self.domain + (f"/{self.path}" if self.path else "")
        params = []
        if self.query:
            params.append("q=" + quote_plus(self.query))
        if self.ref:
            params.append("ref=" + quote_plus(self.ref))
        return text + ("?" + "&".join(params) if params else "")

    def same_page(self, other: Url) -> bool:
        """Same domain, path and (normalised) query; where the click came from does not count."""
        return (
            self.domain == other.domain
            and self.path == other.path
            and normalize_query(self.query) == normalize_query(other.query)
        )


def normalize_query(text: str) -> str:
    """Lower case words and numbers separated by single spaces: how queries are compared."""
    return " ".join(_WORD.findall(text.lower()))


_V = TypeVar("_V")


def longest_phrase(words: Sequence[str], phrases: Mapping[str, _V], longest: int) -> _V | None:
    """The value of the longest run of consecutive ``words`` that is a key of ``phrases`` (the
    leftmost of equally long ones), so "new york weather" finds "new york" before "york".

    ``longest`` is the most words a key has: longer runs cannot match, so they are not tried.
    """
    for size in range(min(len(words), longest), 0, -1):
        for start in range(len(words) - size + 1):
            value = phrases.get(" ".join(words[start : start + size]))
            if value is not None:
                return value
    return None


def _parse_params(text: str) -> tuple[str, str]:
    # The launcher's search bar sends the query as typed ("q=hotels in paris"), links send it
    # encoded ("q=hotels+in+paris"); a space tells the two apart.
    if text.startswith("q=") and " " in text:
        return text[2:].strip(), ""
    params = dict(part.partition("=")[::2] for part in text.split("&") if part)
    return unquote_plus(params.get("q", "")).strip(), unquote_plus(params.get("ref", ""))


@lru_cache(maxsize=8192)
def parse_url(text: str) -> Url:
    """Parse what a link or the address bar holds into a :class:`Url` (never raises)."""
    text = text.strip()
    lowered = text.lower()
    for scheme in _SCHEMES:
        if lowered.startswith(scheme):
            text, lowered = text[len(scheme) :], lowered[len(scheme) :]
    address, _, params = text.partition("?")
    domain, _, path = address.partition("/")
    domain = domain.lower().split(":")[0].strip(".")
    for prefix in _HOST_PREFIXES:
        if domain.startswith(prefix):
            domain = domain[len(prefix) :]
    query, ref = _parse_params(params)
    return Url(domain, path.strip("/").lower(), query, ref)


def looks_like_address(text: str) -> bool:
    """Whether address-bar text is a web address (else Chrome searches for it).

    >>> looks_like_address("ebay.com"), looks_like_address("hotels in paris")
    (True, False)
    """
    text = text.strip().lower()
    if text.startswith(_SCHEMES):
        return True
    if not text or " " in text or "." not in text:
        return False
    labels = parse_url(text).domain.split(".")
    return len(labels) >= 2 and all(labels) and labels[-1].isalpha() and len(labels[-1]) >= 2


def search_url(query: str) -> str:
    """The search engine's result page for ``query``."""
    return str(Url(SEARCH_ENGINE, "search", query.strip()))


def display_url(url: Url) -> str:
    """How a result list shows an address: ``www.ebay.com › itm``."""
    parts = [part for part in url.path.split("/") if part][:2]
    return " › ".join(["www." + url.domain, *parts])

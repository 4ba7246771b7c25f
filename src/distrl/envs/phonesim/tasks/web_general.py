"""Templates of the ``general`` suite that use the browser: web search, questions, websites.

These are AitW's General tasks that end on a web page: "Search for hotels in Paris", "What's the
weather like in Chile?", "Open wikipedia.org". A question is answered when the search engine shows
the matching answer card, whatever words the agent searched with ("chile weather" counts).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from distrl.core.action import Action
from distrl.envs.phonesim.apps.browser import loaded_url
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.tasks.base import Params, TaskTemplate, split_phrasings, split_values
from distrl.envs.phonesim.tasks.web_steps import (
    WebTemplate,
    is_search_page,
    on_site,
    open_site,
    pick,
    web_search,
)
from distrl.envs.phonesim.web.answers import PLACE_KINDS, PLACES, WORDS, answer_for, canonical_query
from distrl.envs.phonesim.web.catalog import CATEGORY_KEYS
from distrl.envs.phonesim.web.router import KNOWN_DOMAINS

_CITY_QUERIES = (
    "hotels in {}",
    "cheap flights to {}",
    "best restaurants in {}",
    "things to do in {}",
    "museums in {}",
    "{} travel guide",
    "apartments for rent in {}",
    "coffee shops in {}",
)
_CATEGORY_QUERIES = ("best {} 2024", "cheap {}", "{} buying guide")
_OTHER_QUERIES = (
    "how to tie a tie",
    "how to change a tire",
    "how to bake sourdough bread",
    "how to boil an egg",
    "how to learn python",
    "how to fix a leaky faucet",
    "how to plant tomatoes",
    "how to meditate",
    "how to write a resume",
    "how to jump start a car",
    "chocolate chip cookie recipe",
    "vegan lasagna recipe",
    "banana bread recipe",
    "nba scores",
    "premier league standings",
    "world cup schedule",
    "oscar winners",
    "new movies this week",
    "best sci fi books",
    "python list comprehension",
    "javascript array map",
    "yoga for beginners",
    "marathon training plan",
    "symptoms of the flu",
    "solar system facts",
    "history of the roman empire",
)


@lru_cache(maxsize=4)
def _search_queries(split: str) -> tuple[str, ...]:
    cities = [p.name for p in PLACES.values() if p.kind == "city"]
    pool = [pattern.format(city) for pattern in _CITY_QUERIES for city in cities]
    pool += [pattern.format(key) for pattern in _CATEGORY_QUERIES for key in CATEGORY_KEYS]
    pool += list(_OTHER_QUERIES)
    return tuple(split_values(pool, split, "web-search-query"))


class WebSearch(WebTemplate):
    """Search the web for a query; success is the search engine's result page for it."""

    name = "web_search"
    suite = "general"
    phrasings = (
        "Search for {query}",
        "Search the web for {query}",
        "Google {query}",
        "Look up {query} on Google",
        "Do a web search for '{query}'",
        "Find {query} online",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        return {"query": pick(rng, _search_queries(split))}

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return is_search_page(loaded_url(phone), params["query"])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return web_search(expert, params["query"])


@lru_cache(maxsize=8)
def _subjects(kind: str, split: str) -> tuple[str, ...]:
    if kind == "definition":
        return tuple(split_values(sorted(WORDS), split, "info-word"))
    places = split_values(sorted(PLACES), split, "info-place")
    if kind == "capital":
        places = [p for p in places if PLACES[p].kind == "country"]
    return tuple(places)


class InfoQuery(WebTemplate):
    """Ask a question the search engine answers with a card (weather, time, a definition...)."""

    name = "info_query"
    suite = "general"
    kinds = (*PLACE_KINDS, "capital", "definition")
    kind_phrasings: dict[str, tuple[str, ...]] = {
        "weather": (
            "What's the weather like in {label}?",
            "What is the weather in {label} today?",
            "How is the weather in {label}?",
            "Check the weather in {label}",
            "Show me the weather forecast for {label}",
        ),
        "time": (
            "What time is it in {label}?",
            "What's the current time in {label}?",
            "Check the time in {label}",
            "Tell me the local time in {label}",
        ),
        "population": (
            "What is the population of {label}?",
            "How many people live in {label}?",
            "Find the population of {label}",
            "Look up how many people live in {label}",
        ),
        "news": (
            "What's the latest news in {label}?",
            "Show me news about {label}",
            "Find recent news about {label}",
            "What's happening in {label} today?",
        ),
        "capital": (
            "What is the capital of {label}?",
            "What's the capital city of {label}?",
            "Find the capital of {label}",
            "Tell me the capital of {label}",
        ),
        "definition": (
            "What does {label} mean?",
            "Define {label}",
            "What is the meaning of the word {label}?",
            "Look up the definition of {label}",
        ),
    }
    phrasings = tuple(p for group in kind_phrasings.values() for p in group)

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        kind = pick(rng, self.kinds)
        subject = pick(rng, _subjects(kind, split))
        label = subject if kind == "definition" else PLACES[subject].name
        return {"kind": kind, "subject": subject, "label": label}

    def instruction(self, params: Params, rng: np.random.Generator, split: str) -> str:
        return pick(rng, split_phrasings(self.kind_phrasings[params["kind"]], split)).format(
            **params
        )

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        url = loaded_url(phone)
        if not is_search_page(url):
            return False
        assert url is not None
        answer = answer_for(url.query)
        return answer is not None and (answer.kind, answer.subject) == (
            params["kind"],
            params["subject"],
        )

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return web_search(expert, canonical_query(params["kind"], params["label"]))


class OpenWebsite(WebTemplate):
    """Open a website by its address ("Open wikipedia.org")."""

    name = "open_website"
    suite = "general"
    phrasings = (
        "Open {domain}",
        "Go to {domain}",
        "Visit {domain}",
        "Navigate to {domain}",
        "Open the website {domain} in Chrome",
        "Take me to {domain}",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        return {"domain": pick(rng, split_values(KNOWN_DOMAINS, split, "open-website"))}

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return on_site(phone, params["domain"])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return open_site(expert, params["domain"])


WEB_GENERAL_TEMPLATES: tuple[TaskTemplate, ...] = (WebSearch(), InfoQuery(), OpenWebsite())

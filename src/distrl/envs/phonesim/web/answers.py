"""Answer cards: what the search engine shows above the results for an information query.

A query gets a card when it names a subject the engine knows (a city, a country or a dictionary
word) together with a question word: weather, time, population, news, capital or a definition.
"weather in chile", "chile weather" and "What's the weather like in Chile?" all give the same card,
which is what the ``info_query`` task checks. Card content is fixed by the subject (approximate
real figures where the table has them, hashed values for weather), never drawn.

>>> answer_for("What's the weather like in Chile?").kind
'weather'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from distrl.envs.phonesim.dynamics import stable_fraction
from distrl.envs.phonesim.web.urls import longest_phrase, normalize_query


@dataclass(frozen=True)
class Place:
    name: str
    #: ``city`` or ``country``.
    kind: str
    country: str
    #: Hours from UTC (standard time).
    utc_offset: float
    #: Millions of people (approximate).
    population: float
    capital: str = ""

    @property
    def label(self) -> str:
        return self.name if self.kind == "country" else f"{self.name}, {self.country}"


def _places() -> dict[str, Place]:
    cities = """
        Paris, France, 1, 2.1; London, United Kingdom, 0, 8.9; New York, United States, -5, 8.3
        Tokyo, Japan, 9, 14.0; Sydney, Australia, 10, 5.3; Berlin, Germany, 1, 3.7
        Rome, Italy, 1, 2.8; Madrid, Spain, 1, 3.3; Barcelona, Spain, 1, 1.6
        Amsterdam, Netherlands, 1, 0.9; Lisbon, Portugal, 0, 0.55; Dublin, Ireland, 0, 0.59
        Prague, Czech Republic, 1, 1.3; Vienna, Austria, 1, 2.0; Istanbul, Turkey, 3, 15.7
        Dubai, United Arab Emirates, 4, 3.6; Mumbai, India, 5.5, 12.5; Bangkok, Thailand, 7, 10.5
        Singapore, Singapore, 8, 5.9; Hong Kong, China, 8, 7.5; Seoul, South Korea, 9, 9.4
        Beijing, China, 8, 21.9; Shanghai, China, 8, 24.9; Los Angeles, United States, -8, 3.9
        San Francisco, United States, -8, 0.81; Chicago, United States, -6, 2.7
        Toronto, Canada, -5, 2.8; Vancouver, Canada, -8, 0.68; Mexico City, Mexico, -6, 9.2
        Sao Paulo, Brazil, -3, 12.3; Rio de Janeiro, Brazil, -3, 6.7
        Buenos Aires, Argentina, -3, 3.1; Lima, Peru, -5, 10.0; Cairo, Egypt, 2, 10.1
        Cape Town, South Africa, 2, 4.8; Nairobi, Kenya, 3, 4.4; Moscow, Russia, 3, 13.0
        Athens, Greece, 2, 0.64; Stockholm, Sweden, 1, 0.98; Copenhagen, Denmark, 1, 0.65
        Zurich, Switzerland, 1, 0.42; Munich, Germany, 1, 1.5; Boston, United States, -5, 0.65
        Seattle, United States, -8, 0.75; Miami, United States, -5, 0.45
        Melbourne, Australia, 10, 5.1; Kyoto, Japan, 9, 1.46; Osaka, Japan, 9, 2.7
        Venice, Italy, 1, 0.25; Edinburgh, United Kingdom, 0, 0.53; Marrakech, Morocco, 1, 0.93
        Hanoi, Vietnam, 7, 8.1; Honolulu, United States, -10, 0.35
        Las Vegas, United States, -8, 0.66
    """
    countries = """
        France, Paris, 1, 68; Germany, Berlin, 1, 84; Italy, Rome, 1, 59; Spain, Madrid, 1, 48
        Portugal, Lisbon, 0, 10.4; United Kingdom, London, 0, 67; Ireland, Dublin, 0, 5.1
        Netherlands, Amsterdam, 1, 17.9; Belgium, Brussels, 1, 11.7; Switzerland, Bern, 1, 8.8
        Austria, Vienna, 1, 9.1; Sweden, Stockholm, 1, 10.5; Norway, Oslo, 1, 5.5
        Denmark, Copenhagen, 1, 5.9; Finland, Helsinki, 2, 5.6; Poland, Warsaw, 1, 37.6
        Greece, Athens, 2, 10.4; Turkey, Ankara, 3, 85.3; Egypt, Cairo, 2, 112
        Kenya, Nairobi, 3, 55; Nigeria, Abuja, 1, 224; South Africa, Pretoria, 2, 60
        Morocco, Rabat, 1, 37.8; India, New Delhi, 5.5, 1429; China, Beijing, 8, 1410
        Japan, Tokyo, 9, 124; South Korea, Seoul, 9, 51.7; Thailand, Bangkok, 7, 71.8
        Vietnam, Hanoi, 7, 98.9; Indonesia, Jakarta, 7, 277; Philippines, Manila, 8, 117
        Australia, Canberra, 10, 26.6; New Zealand, Wellington, 12, 5.2; Canada, Ottawa, -5, 40.1
        United States, Washington D.C., -5, 335; Mexico, Mexico City, -6, 128
        Brazil, Brasilia, -3, 216; Argentina, Buenos Aires, -3, 46.7; Chile, Santiago, -4, 19.6
        Peru, Lima, -5, 34.4; Colombia, Bogota, -5, 52.1; Iceland, Reykjavik, 0, 0.38
        Israel, Jerusalem, 2, 9.8; Saudi Arabia, Riyadh, 3, 36.9; Czech Republic, Prague, 1, 10.5
    """
    out: dict[str, Place] = {}
    for entry in " ; ".join(cities.split("\n")).split(";"):
        if entry.strip():
            name, country, offset, population = (f.strip() for f in entry.split(","))
            out[name.lower()] = Place(name, "city", country, float(offset), float(population))
    for entry in " ; ".join(countries.split("\n")).split(";"):
        if entry.strip():
            name, capital, offset, population = (f.strip() for f in entry.split(","))
            out[name.lower()] = Place(
                name, "country", name, float(offset), float(population), capital
            )
    return out


PLACES: dict[str, Place] = _places()

#: word -> (part of speech, definition).
WORDS: dict[str, tuple[str, str]] = {
    "serendipity": ("noun", "the luck of finding something good without looking for it"),
    "ephemeral": ("adjective", "lasting for a very short time"),
    "ubiquitous": ("adjective", "present or found everywhere"),
    "eloquent": ("adjective", "fluent and persuasive in speaking or writing"),
    "resilient": ("adjective", "able to recover quickly from difficulties"),
    "pragmatic": ("adjective", "dealing with things sensibly and practically"),
    "ambiguous": ("adjective", "open to more than one interpretation"),
    "nostalgia": ("noun", "a sentimental longing for the past"),
    "meticulous": ("adjective", "showing great attention to detail"),
    "benevolent": ("adjective", "well meaning and kindly"),
    "candid": ("adjective", "truthful and straightforward; frank"),
    "diligent": ("adjective", "showing care and effort in one's work"),
    "empathy": ("noun", "the ability to understand and share the feelings of another"),
    "frugal": ("adjective", "careful with money or food; economical"),
    "gregarious": ("adjective", "fond of company; sociable"),
    "hypothesis": ("noun", "a proposed explanation made as a starting point for investigation"),
    "integrity": ("noun", "the quality of being honest and having strong moral principles"),
    "juxtapose": ("verb", "to place close together for contrasting effect"),
    "kinetic": ("adjective", "relating to or resulting from motion"),
    "lucid": ("adjective", "expressed clearly; easy to understand"),
    "melancholy": ("noun", "a deep and lasting sadness"),
    "nuance": ("noun", "a subtle difference in meaning, expression or sound"),
    "obsolete": ("adjective", "no longer produced or used; out of date"),
    "paradox": ("noun", "a statement that seems to contradict itself but may be true"),
    "quintessential": ("adjective", "representing the most perfect example of a kind"),
    "reciprocal": ("adjective", "given or done in return"),
    "skeptical": ("adjective", "not easily convinced; having doubts"),
    "tenacious": ("adjective", "holding firmly to something; persistent"),
    "unanimous": ("adjective", "fully in agreement"),
    "vivid": ("adjective", "producing powerful feelings or strong, clear images"),
    "whimsical": ("adjective", "playfully quaint or fanciful"),
    "zealous": ("adjective", "having great energy or enthusiasm for a cause"),
    "algorithm": ("noun", "a set of rules to be followed in calculations or problem solving"),
    "altruism": ("noun", "selfless concern for the well-being of others"),
    "catalyst": ("noun", "something that causes or speeds up a change"),
    "dichotomy": ("noun", "a division into two contrasting things"),
    "euphoria": ("noun", "a feeling of intense happiness"),
    "fortitude": ("noun", "courage in pain or adversity"),
    "gratitude": ("noun", "the quality of being thankful"),
    "hubris": ("noun", "excessive pride or self-confidence"),
    "irony": ("noun", "the expression of meaning using words that say the opposite"),
    "labyrinth": ("noun", "a complicated network of passages; a maze"),
    "mundane": ("adjective", "lacking interest or excitement; dull"),
    "procrastinate": ("verb", "to delay or postpone action"),
    "verbose": ("adjective", "using more words than needed"),
}

#: Answer kinds and the words that ask for them (checked in this order).
KIND_WORDS: dict[str, frozenset[str]] = {
    "definition": frozenset({"define", "definition", "meaning", "mean", "means"}),
    "weather": frozenset({"weather", "forecast", "temperature", "raining", "rain"}),
    "time": frozenset({"time", "clock"}),
    "population": frozenset({"population", "people", "inhabitants", "populated"}),
    "capital": frozenset({"capital"}),
    "news": frozenset({"news", "headlines", "happening"}),
}
PLACE_KINDS = ("weather", "time", "population", "news")
_CONDITIONS = (
    "Sunny",
    "Partly cloudy",
    "Cloudy",
    "Light rain",
    "Showers",
    "Clear",
    "Windy",
    "Thunderstorms",
    "Fog",
)
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_HEADLINES = (
    "{name} unveils plan to expand public transport",
    "Tourism in {name} reaches record high this summer",
    "{name} hosts international technology summit",
    "Heat wave expected to hit {name} next week",
    "New museum opens its doors in {name}",
    "{name} announces budget for new parks and bike lanes",
    "Local elections in {name}: what you need to know",
    "Food festival draws thousands to {name}",
)
#: The device clock reads 9:41 AM in this zone (Pacific time).
_DEVICE_UTC_OFFSET = -8.0
_LONGEST_PLACE = max(len(name.split()) for name in PLACES)


@dataclass(frozen=True)
class Answer:
    """A card: ``kind`` and ``subject`` identify it; the rest is what it shows."""

    kind: str
    subject: str
    headline: str
    value: str
    #: Short lines shown under the card.
    details: tuple[str, ...]


def _weather(place: Place) -> Answer:
    temp = round(-2 + 34 * stable_fraction("temp", place.name))
    condition = _CONDITIONS[int(stable_fraction("sky", place.name) * len(_CONDITIONS))]
    humidity = 30 + round(60 * stable_fraction("humidity", place.name))
    wind = 3 + round(30 * stable_fraction("wind", place.name))
    forecast = " · ".join(
        f"{day} {temp + round(6 * stable_fraction(place.name, day) - 3)}°" for day in _DAYS[1:4]
    )
    return Answer(
        "weather",
        place.name.lower(),
        f"Weather in {place.label}",
        f"{temp}°C  {condition}",
        (f"Humidity {humidity}% · Wind {wind} km/h", forecast),
    )


def _time(place: Place) -> Answer:
    minutes = (9 * 60 + 41) + round((place.utc_offset - _DEVICE_UTC_OFFSET) * 60)
    weekday = _WEEKDAYS[(1 + minutes // (24 * 60)) % 7]  # it is Monday on the device
    hour, minute = divmod(minutes % (24 * 60), 60)
    suffix = "AM" if hour < 12 else "PM"
    whole, part = divmod(abs(place.utc_offset), 1)
    zone = (
        "GMT"
        if place.utc_offset == 0
        else (
            f"GMT{'+' if place.utc_offset > 0 else '-'}{int(whole)}"
            + (f":{round(part * 60):02d}" if part else "")
        )
    )
    return Answer(
        "time",
        place.name.lower(),
        f"Local time in {place.label}",
        f"{hour % 12 or 12}:{minute:02d} {suffix}",
        (f"{weekday} ({zone})",),
    )


def _population(place: Place) -> Answer:
    millions = place.population
    value = (
        f"{millions / 1000:.2f} billion"
        if millions >= 1000
        else (f"{millions:g} million" if millions >= 1 else f"{round(millions * 1000):,} thousand")
    )
    return Answer(
        "population",
        place.name.lower(),
        f"Population of {place.label}",
        value,
        (f"Estimated population of {place.name}, 2023",),
    )


def _news(place: Place) -> Answer:
    order = sorted(_HEADLINES, key=lambda h: stable_fraction("news", place.name, h))
    first, second, third = (h.format(name=place.name) for h in order[:3])
    minutes = 5 + round(50 * stable_fraction("news-age", place.name))
    return Answer(
        "news",
        place.name.lower(),
        f"Top stories: {place.name}",
        f"Updated {minutes} minutes ago",
        (first, second, third),
    )


def _capital(place: Place) -> Answer:
    return Answer(
        "capital",
        place.name.lower(),
        f"Capital of {place.name}",
        place.capital,
        (f"{place.capital} is the capital city of {place.name}.",),
    )


def _definition(word: str) -> Answer:
    part, meaning = WORDS[word]
    return Answer("definition", word, f"{word} (Dictionary)", f"{word} · {part}", (meaning,))


@lru_cache(maxsize=8192)
def answer_for(query: str) -> Answer | None:
    """The answer card for ``query``, or ``None`` when it is not an information query."""
    words = normalize_query(query).split()
    asked = {kind for kind, keys in KIND_WORDS.items() if keys.intersection(words)}
    if not asked:
        return None
    word = next((w for w in words if w in WORDS), None)
    if "definition" in asked and word is not None:
        return _definition(word)
    place = longest_phrase(words, PLACES, _LONGEST_PLACE)
    if place is None:
        return None
    if "capital" in asked and place.kind == "country":
        return _capital(place)
    builders = {"weather": _weather, "time": _time, "population": _population, "news": _news}
    for kind in PLACE_KINDS:
        if kind in asked:
            return builders[kind](place)
    return None


def canonical_query(kind: str, subject: str) -> str:
    """A short query that brings up the ``kind`` card for ``subject`` (what the expert types)."""
    return {
        "weather": "weather in {}",
        "time": "time in {}",
        "population": "population of {}",
        "news": "{} news",
        "capital": "capital of {}",
        "definition": "define {}",
    }[kind].format(subject)

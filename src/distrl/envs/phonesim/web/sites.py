"""The rest of the web: encyclopedias, video, news, travel and reference sites.

These sites only need to be believable destinations: a home page with the site's look, a search
box and a few trending links, and an article page for any path (``wikipedia.org/wiki/paris``),
whose text is made from the topic. The search engine links to them for ordinary queries, and
"Open wikipedia.org" tasks end on their home pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.envs.phonesim.dynamics import stable_fraction
from distrl.envs.phonesim.web.page import WebContext, WebPage, rid
from distrl.envs.phonesim.web.urls import Url
from distrl.envs.phonesim.widgets import Widget, row

Color = tuple[int, int, int]


@dataclass(frozen=True)
class Site:
    domain: str
    label: str
    color: Color
    tagline: str
    #: Path prefix of article pages (``wiki`` -> ``wikipedia.org/wiki/<topic>``).
    article_path: str
    #: How the search engine titles a result on this site; ``{topic}`` is the query.
    result_title: str
    snippet: str
    #: Query words that make the search engine list this site.
    keywords: frozenset[str] = frozenset()

    def article_url(self, topic: str) -> Url:
        slug = "_".join(topic.lower().split())
        return Url(self.domain, f"{self.article_path}/{slug}")


def _site(
    domain: str,
    label: str,
    color: Color,
    tagline: str,
    article_path: str,
    result_title: str,
    snippet: str,
    keywords: str = "",
) -> Site:
    return Site(
        domain,
        label,
        color,
        tagline,
        article_path,
        result_title,
        snippet,
        frozenset(keywords.split()),
    )


SITES: dict[str, Site] = {
    site.domain: site
    for site in (
        _site(
            "wikipedia.org",
            "Wikipedia",
            (51, 51, 51),
            "The Free Encyclopedia",
            "wiki",
            "{topic} - Wikipedia",
            "From Wikipedia, the free encyclopedia.",
        ),
        _site(
            "youtube.com",
            "YouTube",
            (255, 0, 0),
            "Broadcast yourself",
            "watch",
            "{topic} - YouTube",
            "Watch videos about {topic} on YouTube.",
            "how video watch review music song trailer tutorial",
        ),
        _site(
            "reddit.com",
            "reddit",
            (255, 69, 0),
            "Dive into anything",
            "r/all/comments",
            "{topic} : r/AskReddit",
            "Discussion and recommendations from the community.",
            "best recommendations reddit review vs",
        ),
        _site(
            "bbc.com",
            "BBC",
            (187, 25, 25),
            "News, sport and more",
            "news",
            "{topic} - BBC News",
            "The latest news and analysis from the BBC.",
            "news election headlines today world",
        ),
        _site(
            "cnn.com",
            "CNN",
            (204, 0, 0),
            "Breaking news, latest news and videos",
            "article",
            "{topic} | CNN",
            "Breaking news and the latest updates.",
            "news breaking latest politics",
        ),
        _site(
            "nytimes.com",
            "The New York Times",
            (18, 18, 18),
            "All the news that's fit to print",
            "article",
            "{topic} - The New York Times",
            "Reporting and analysis.",
            "news opinion recipe review",
        ),
        _site(
            "weather.com",
            "The Weather Channel",
            (0, 53, 148),
            "Local weather forecasts",
            "weather/today",
            "{topic} - The Weather Channel",
            "Today's and tonight's forecast, radar and conditions.",
            "weather forecast temperature rain snow",
        ),
        _site(
            "tripadvisor.com",
            "Tripadvisor",
            (0, 170, 108),
            "Know better. Book better.",
            "attractions",
            "THE 10 BEST {topic} - Tripadvisor",
            "Traveller reviews, photos and great deals.",
            "hotels things restaurants attractions museums travel guide visit tours",
        ),
        _site(
            "booking.com",
            "Booking.com",
            (0, 53, 128),
            "Find your next stay",
            "hotels",
            "{topic} | Booking.com",
            "Great rates, free cancellation on most rooms.",
            "hotels hotel stay apartments hostels resorts rooms",
        ),
        _site(
            "expedia.com",
            "Expedia",
            (25, 32, 72),
            "Travel made easy",
            "flights",
            "{topic} | Expedia",
            "Compare flights, hotels and car rentals.",
            "flights flight cheap tickets trip car rental",
        ),
        _site(
            "yelp.com",
            "yelp",
            (211, 35, 35),
            "Find local businesses",
            "search",
            "TOP 10 BEST {topic} - Yelp",
            "Reviews and ratings from locals.",
            "restaurants coffee pizza near bars food dentist plumber",
        ),
        _site(
            "imdb.com",
            "IMDb",
            (245, 197, 24),
            "Ratings and reviews for movies and TV",
            "title",
            "{topic} - IMDb",
            "Cast, crew, ratings and reviews.",
            "movie movies film cast actor tv show series",
        ),
        _site(
            "espn.com",
            "ESPN",
            (204, 0, 0),
            "Serving sports fans",
            "story",
            "{topic} - ESPN",
            "Scores, schedules and highlights.",
            "score scores nba nfl football soccer game schedule standings",
        ),
        _site(
            "allrecipes.com",
            "allrecipes",
            (231, 76, 34),
            "Recipes from home cooks",
            "recipe",
            "{topic} Recipe - Allrecipes",
            "Easy, tested recipes with reviews.",
            "recipe recipes bake cook cookies bread cake dinner",
        ),
        _site(
            "github.com",
            "GitHub",
            (36, 41, 47),
            "Where the world builds software",
            "topics",
            "{topic} - GitHub",
            "Open source projects and code.",
            "python javascript code github library api error install",
        ),
        _site(
            "stackoverflow.com",
            "Stack Overflow",
            (244, 128, 36),
            "Where developers learn and share",
            "questions",
            "{topic} - Stack Overflow",
            "Questions and answers for programmers.",
            "python javascript error code sql list function how",
        ),
        _site(
            "wikihow.com",
            "wikiHow",
            (147, 184, 116),
            "How to do anything",
            "article",
            "How to {topic}: wikiHow",
            "Step-by-step instructions with pictures.",
            "how",
        ),
        _site(
            "maps.com",
            "Maps",
            (52, 168, 83),
            "Directions and places",
            "place",
            "{topic} - Maps",
            "Find places, get directions and explore.",
            "near directions map route nearest",
        ),
    )
}

_TRENDING = (
    "Solar eclipse",
    "Electric cars",
    "Olympic Games",
    "Coffee",
    "Artificial intelligence",
    "Mount Everest",
    "Jazz",
    "Volcanoes",
    "Chess",
    "Space exploration",
    "Honey bees",
    "Renewable energy",
)
_SENTENCES = (
    "{topic} has drawn wide interest in recent years.",
    "This page collects the essentials about {topic}.",
    "Experts and readers have shared many views on {topic}.",
    "Below you will find an overview, related topics and further reading.",
    "The most popular questions about {topic} are answered here.",
    "Updated regularly by our editors and community.",
)


def _topic_of(url: Url) -> str:
    slug = url.path.rsplit("/", 1)[-1]
    return " ".join(slug.replace("_", " ").replace("-", " ").split()).capitalize() or "Home"


def _site_bar(ctx: WebContext, site: Site):
    return row(
        Widget("button", site.label, rid("site_logo"), ctx.link(Url(site.domain)), color=site.color)
    )


def build_site_page(ctx: WebContext, site: Site) -> WebPage:
    """The home page or an article page of a non-shop site."""

    def search(query: str) -> None:
        if query.strip():
            ctx.go(str(site.article_url(query)))

    search_row = row(
        Widget(
            "field",
            resource_id=rid("site_search"),
            placeholder=f"Search {site.label}",
            on_submit=search,
        )
    )
    header = [_site_bar(ctx, site), search_row]
    if not ctx.url.path:
        picks = sorted(_TRENDING, key=lambda t: stable_fraction("trending", site.domain, t))[:5]
        body = [
            row(Widget("text", site.tagline, rid("tagline")), height=1.2),
            row(Widget("text", "Trending now", rid("trending_heading"))),
        ]
        body += [
            row(
                Widget(
                    "item",
                    topic,
                    rid(f"trending_{i}"),
                    ctx.link(site.article_url(topic)),
                    subtitle=site.label,
                )
            )
            for i, topic in enumerate(picks)
        ]
        return WebPage(f"{site.label} - {site.tagline}", header, body)
    topic = _topic_of(ctx.url)
    order = sorted(_SENTENCES, key=lambda s: stable_fraction("prose", ctx.url.path, s))
    paragraphs = [" ".join(s.format(topic=topic) for s in order[i : i + 2]) for i in (0, 2, 4)]
    body = [
        row(Widget("title", topic, rid("article_title")), height=1.4),
        row(Widget("text", site.snippet.format(topic=topic), rid("article_byline"))),
    ]
    body += [
        row(Widget("text", text, rid(f"paragraph_{i}")), height=2.0)
        for i, text in enumerate(paragraphs)
    ]
    related = sorted(_TRENDING, key=lambda t: stable_fraction("related", ctx.url.path, t))[:3]
    body.append(row(Widget("text", "Related articles", rid("related_heading"))))
    body += [
        row(Widget("link", title, rid(f"related_{i}"), ctx.link(site.article_url(title))))
        for i, title in enumerate(related)
    ]
    return WebPage(f"{topic} - {site.label}", header, body)

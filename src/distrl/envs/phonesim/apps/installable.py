"""Apps that are not preinstalled: the Play Store installs them, the launcher then shows them.

Each is an :class:`InstallableApp` with store metadata and a two-screen body (a welcome page and,
after "Get started", a simple home feed): enough for "open X" and "install X" tasks and for an agent
to recognise that the right app is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.theme import Color
from distrl.envs.phonesim.widgets import Page, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim


@dataclass(eq=False)  # apps compare by identity, as every other App does
class InstallableApp(App):
    """A store app: its identity, its store listing and a welcome page.

    A dataclass, so the catalogue below lists each app's fields once, in field order. The
    identity fields say ``field()`` because App's class defaults ("" and grey) would otherwise
    become their defaults, and a field with a default cannot precede ``category``.
    """

    name: str = field()
    label: str = field()
    package: str = field()
    icon_color: Color = field()
    category: str
    developer: str
    rating: float
    downloads: str
    tagline: str
    #: The home feed's entries, shown after "Get started".
    feed: tuple[str, ...]
    preinstalled: bool = False
    popups: tuple[str, ...] = ("notifications", "update")

    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "home":
            body = [
                row(
                    Widget(
                        "text", f"Hi! Here is what's new on {self.label}", self.rid("feed_title")
                    )
                )
            ]
            body += [
                row(
                    Widget("item", entry, self.rid(f"feed_{index}"), color=self.icon_color),
                    height=1.2,
                )
                for index, entry in enumerate(self.feed)
            ]
            return self.page(self.label, body, bar_color=self.icon_color)
        start = lambda: phone.replace(Route.of(self.name, "home"))  # noqa: E731
        body = [
            row(
                Widget("spacer"),
                Widget("image", self.label, self.rid("logo"), color=self.icon_color),
                Widget("spacer"),
                height=2.5,
            ),
            row(Widget("title", f"Welcome to {self.label}", self.rid("welcome")), height=1.2),
            row(Widget("text", self.tagline, self.rid("tagline")), height=1.2),
            row(
                Widget(
                    "button",
                    "Get started",
                    self.rid("get_started"),
                    on_tap=start,
                    color=self.icon_color,
                )
            ),
            row(Widget("link", "I already have an account", self.rid("sign_in"), on_tap=start)),
        ]
        return self.page(self.label, body, bar_color=self.icon_color)


INSTALLABLE_APPS: tuple[InstallableApp, ...] = (
    InstallableApp("spotify", "Spotify", "com.spotify.music", (30, 215, 96),
                   "Music & Audio", "Spotify AB", 4.4, "1B+",
                   "Music and podcasts for everyone.",
                   ("Daily Mix 1", "Top Hits Today", "Podcasts you might like")),
    InstallableApp("netflix", "Netflix", "com.netflix.mediaclient", (229, 9, 20),
                   "Entertainment", "Netflix, Inc.", 4.3, "1B+",
                   "Unlimited movies, TV shows and more.",
                   ("Trending now", "Continue watching", "New releases")),
    InstallableApp("whatsapp", "WhatsApp", "com.whatsapp", (37, 211, 102),
                   "Communication", "WhatsApp LLC", 4.2, "5B+",
                   "Simple. Reliable. Private messaging.",
                   ("Chats", "Status updates", "Calls")),
    InstallableApp("instagram", "Instagram", "com.instagram.android", (193, 53, 132),
                   "Social", "Instagram", 4.1, "1B+",
                   "Share photos and videos with friends.",
                   ("Stories", "Reels for you", "Suggested posts")),
    InstallableApp("zoom", "Zoom", "us.zoom.videomeetings", (45, 140, 255),
                   "Business", "Zoom Video Communications", 4.2, "1B+",
                   "Meet, chat and call from anywhere.",
                   ("Join a meeting", "New meeting", "Upcoming meetings")),
    InstallableApp("duolingo", "Duolingo", "com.duolingo", (88, 204, 2),
                   "Education", "Duolingo", 4.6, "500M+",
                   "Learn a language in five minutes a day.",
                   ("Daily lesson", "Practice hub", "Leaderboard")),
    InstallableApp("uber", "Uber", "com.ubercab", (64, 64, 64),
                   "Maps & Navigation", "Uber Technologies", 4.5, "500M+",
                   "Request a ride, any time.",
                   ("Where to?", "Recent places", "Ride options")),
    InstallableApp("airbnb", "Airbnb", "com.airbnb.android", (255, 90, 95),
                   "Travel & Local", "Airbnb", 4.7, "100M+",
                   "Find places to stay and things to do.",
                   ("Beachfront homes", "Cabins", "Trending destinations")),
    InstallableApp("discord", "Discord", "com.discord", (88, 101, 242),
                   "Communication", "Discord Inc.", 4.3, "100M+",
                   "Talk, chat and hang out with friends.",
                   ("Direct messages", "Servers", "Friends online")),
    InstallableApp("waze", "Waze", "com.waze", (51, 204, 255),
                   "Maps & Navigation", "Waze", 4.4, "100M+",
                   "Live traffic, maps and navigation.",
                   ("Drive to work", "Saved places", "Traffic reports")),
    InstallableApp("pinterest", "Pinterest", "com.pinterest", (230, 0, 35),
                   "Lifestyle", "Pinterest", 4.6, "500M+",
                   "Find ideas for recipes, style and home.",
                   ("Home feed", "Saved boards", "Ideas for you")),
    InstallableApp("reddit", "Reddit", "com.reddit.frontpage", (255, 69, 0),
                   "Social", "reddit Inc.", 4.2, "100M+",
                   "Dive into anything.",
                   ("Popular", "Your communities", "Trending today")),
    InstallableApp("tiktok", "TikTok", "com.zhiliaoapp.musically", (37, 244, 238),
                   "Entertainment", "TikTok Pte. Ltd.", 4.3, "1B+",
                   "Videos that make your day.",
                   ("For You", "Following", "LIVE")),
    InstallableApp("slack", "Slack", "com.Slack", (74, 21, 75),
                   "Business", "Slack Technologies", 4.4, "10M+",
                   "Work happens in channels.",
                   ("Threads", "Mentions", "Channels")),
    InstallableApp("strava", "Strava", "com.strava", (252, 76, 2),
                   "Health & Fitness", "Strava Inc.", 4.5, "50M+",
                   "Track your runs and rides.",
                   ("Record an activity", "Your progress", "Club feed")),
    InstallableApp("shazam", "Shazam", "com.shazam.android", (8, 136, 255),
                   "Music & Audio", "Apple Inc.", 4.7, "500M+",
                   "Name any song in seconds.",
                   ("Tap to Shazam", "My music", "Charts")),
)  # fmt: skip

"""The product catalog every shopping site sells, and the search that finds products in it.

Products are built once at import from a compact table (category -> brand -> models). A product's
``name`` ("logitech g933") is what tasks ask an agent to search for; its ``title`` ("Logitech G933
Wireless Gaming Headset") is what a site shows. Prices and ratings are hashed from the product
(and the site), never drawn, so a page looks the same every time it is built.

Search ranks by matched name words (3 points each), matched category words (2 points) and an
exact-name bonus that puts the product named by the query first; ties are broken by a hash of the
site, so each site orders its other results its own way. Results are cached per (site, query).

>>> search_products("ebay.com", "logitech g933")[0].title
'Logitech G933 Wireless Gaming Headset'
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from distrl.envs.phonesim.dynamics import stable_fraction
from distrl.envs.phonesim.web.urls import longest_phrase, normalize_query

Color = tuple[int, int, int]

MAX_RESULTS = 10
_EXACT_BONUS = 100.0
_STOPWORDS = frozenset({"a", "an", "and", "for", "in", "of", "on", "the", "to", "with", "buy"})


@dataclass(frozen=True)
class Category:
    key: str
    #: Appended to the brand and model to make a product's title.
    noun: str
    #: Extra words that find the category in a search ("headset", "headphones"...).
    terms: str
    price_range: tuple[float, float]
    color: Color
    #: ``brand: model, model`` lines.
    table: str


CATEGORIES: tuple[Category, ...] = (
    Category(
        "gaming headsets",
        "Wireless Gaming Headset",
        "gaming headset headphones",
        (49, 299),
        (67, 160, 71),
        """
        logitech: g933, g935, g pro x, g435, g733
        razer: kraken v3, blackshark v2, nari ultimate, barracuda x, kraken kitty
        corsair: hs80, void elite, virtuoso rgb, hs55
        steelseries: arctis 7, arctis nova pro, arctis 1, arctis nova 7
        hyperx: cloud ii, cloud alpha, cloud flight, cloud stinger
        astro: a50, a40
        turtle beach: stealth 600, stealth 700, recon 70
    """,
    ),
    Category(
        "headphones",
        "Noise Cancelling Headphones",
        "headphones over ear wireless",
        (79, 549),
        (84, 110, 122),
        """
        sony: wh 1000xm4, wh 1000xm5, wh ch720n
        bose: quietcomfort 45, quietcomfort ultra, noise cancelling 700
        apple: airpods max
        beats: studio pro, solo 3, solo 4
        sennheiser: momentum 4, hd 450bt, hd 660s
        jbl: tune 760nc, live 660nc
        anker: soundcore life q30, soundcore space q45
        audio technica: ath m50x, ath m40x
    """,
    ),
    Category(
        "earbuds",
        "True Wireless Earbuds",
        "earbuds earphones wireless",
        (39, 299),
        (236, 239, 241),
        """
        apple: airpods pro, airpods pro 2, airpods 3
        samsung: galaxy buds2 pro, galaxy buds fe, galaxy buds live
        google: pixel buds pro, pixel buds a series
        sony: wf 1000xm5, wf 1000xm4, linkbuds s
        jabra: elite 85t, elite 4
        beats: fit pro, studio buds
        bose: quietcomfort earbuds ii
        nothing: ear 2
        jlab: go air pop
    """,
    ),
    Category(
        "keyboards",
        "Mechanical Keyboard",
        "keyboard mechanical gaming",
        (39, 249),
        (55, 71, 79),
        """
        razer: blackwidow v3, blackwidow v4, huntsman mini, huntsman v2, ornata v3
        logitech: g915, g pro keyboard, mx keys, g213, k380
        corsair: k70, k95 platinum, k65 mini, k55
        steelseries: apex pro, apex 3, apex 7
        hyperx: alloy origins, alloy origins 60
        keychron: k2, q1, k8 pro, v1
        ducky: one 2 mini, one 3
    """,
    ),
    Category(
        "mice",
        "Wireless Mouse",
        "mouse mice gaming wireless",
        (19, 159),
        (96, 125, 139),
        """
        logitech: g502, g502 x plus, mx master 3, mx master 3s, g pro x superlight, g305, m720
        razer: deathadder v2, deathadder v3 pro, basilisk v3, viper mini, naga pro
        corsair: dark core rgb, m65 elite, harpoon
        steelseries: rival 3, aerox 3, prime wireless
        glorious: model o, model d
        apple: magic mouse
        microsoft: arc mouse
    """,
    ),
    Category(
        "smartphones",
        "Unlocked Smartphone",
        "phone smartphone cell unlocked",
        (199, 1399),
        (33, 33, 33),
        """
        samsung: galaxy s23, galaxy s23 ultra, galaxy s24, galaxy s24 ultra, galaxy a54, galaxy a14
        samsung: galaxy z flip 5, galaxy z fold 5
        apple: iphone 15, iphone 15 pro, iphone 15 pro max, iphone 14, iphone 13, iphone se
        google: pixel 8, pixel 8 pro, pixel 7a, pixel fold
        oneplus: 11, 12, nord n30
        motorola: moto g power, razr plus, edge 2023
        nothing: phone 2
    """,
    ),
    Category(
        "laptops",
        "Laptop Computer",
        "laptop notebook computer",
        (399, 2499),
        (158, 158, 158),
        """
        apple: macbook air m2, macbook air m3, macbook pro 14, macbook pro 16
        dell: xps 13, xps 15, inspiron 15, g15, latitude 5440
        hp: spectre x360, pavilion 15, envy 13, omen 16, victus 15
        lenovo: thinkpad x1 carbon, ideapad 3, legion 5, yoga 9i, thinkpad t14
        asus: rog zephyrus g14, zenbook 14, vivobook 15, tuf gaming f15
        acer: aspire 5, swift 3, predator helios 300, nitro 5
        microsoft: surface laptop 5, surface laptop go 3
        razer: blade 15, blade 14
        msi: katana 15, stealth 16
    """,
    ),
    Category(
        "tablets",
        "Tablet",
        "tablet",
        (99, 1299),
        (120, 144, 156),
        """
        apple: ipad air, ipad pro, ipad mini, ipad 10th generation
        samsung: galaxy tab s9, galaxy tab s9 fe, galaxy tab a8
        amazon: fire hd 10, fire hd 8, fire max 11
        microsoft: surface pro 9, surface go 3
        lenovo: tab p11, tab m10
        google: pixel tablet
    """,
    ),
    Category(
        "monitors",
        "Gaming Monitor",
        "monitor display screen gaming",
        (129, 999),
        (38, 50, 56),
        """
        lg: ultragear 27gl850, ultragear 34gp83a, 27uk850
        samsung: odyssey g7, odyssey g9, smart monitor m8
        dell: ultrasharp u2723qe, s2721dgf, alienware aw3423dw
        asus: tuf vg27aq, rog swift pg279qm, proart pa278qv
        acer: nitro xv272u, predator xb273u
        benq: zowie xl2546, pd2700u
        aoc: 24g2, cu34g2x
        msi: mag 274qrf
    """,
    ),
    Category(
        "tvs",
        "4K Smart TV",
        "tv television smart 4k",
        (299, 2999),
        (13, 71, 161),
        """
        samsung: qn90c, the frame, cu8000
        lg: c3 oled, g3 oled, nanocell 80
        sony: bravia x90l, bravia a80l
        tcl: 6 series, 4 series, q7
        hisense: u8h, u7k, a6
        vizio: m series, v series
    """,
    ),
    Category(
        "smartwatches",
        "Smartwatch",
        "watch smartwatch fitness tracker",
        (79, 899),
        (194, 24, 91),
        """
        apple: watch series 9, watch ultra 2, watch se
        samsung: galaxy watch 6, galaxy watch 6 classic
        google: pixel watch 2
        garmin: forerunner 255, forerunner 965, fenix 7, venu 3, instinct 2
        fitbit: charge 6, versa 4, sense 2, inspire 3
        amazfit: gtr 4, bip 5
    """,
    ),
    Category(
        "cameras",
        "Digital Camera",
        "camera digital mirrorless",
        (299, 2599),
        (62, 39, 35),
        """
        canon: eos r6 mark ii, eos r50, eos rebel t7, powershot g7x
        sony: a7 iv, zv 1, a6400, zv e10
        nikon: z6 ii, z50, d3500, z fc
        fujifilm: x t5, x100v, instax mini 12
        gopro: hero 12 black, hero 11 mini
        dji: osmo pocket 3, osmo action 4
        panasonic: lumix gh6, lumix s5 ii
    """,
    ),
    Category(
        "consoles",
        "Video Game Console",
        "console gaming video game",
        (199, 699),
        (0, 0, 0),
        """
        sony: playstation 5, playstation 5 slim, playstation portal
        microsoft: xbox series x, xbox series s
        nintendo: switch oled, switch lite, switch
        valve: steam deck, steam deck oled
        meta: quest 3, quest 2
        asus: rog ally
    """,
    ),
    Category(
        "controllers",
        "Wireless Controller",
        "controller gamepad gaming",
        (29, 199),
        (69, 90, 100),
        """
        sony: dualsense, dualsense edge
        microsoft: xbox wireless controller, xbox elite series 2
        nintendo: switch pro controller, joy con
        8bitdo: pro 2, ultimate
        razer: wolverine v2, kishi v2
        powera: enhanced wired controller
    """,
    ),
    Category(
        "speakers",
        "Bluetooth Speaker",
        "speaker bluetooth portable wireless",
        (29, 449),
        (0, 150, 136),
        """
        jbl: flip 6, charge 5, clip 4, go 3, boombox 3
        bose: soundlink flex, soundlink revolve plus
        sonos: one, era 100, era 300, roam, move 2
        ultimate ears: boom 3, wonderboom 3, megaboom 3
        anker: soundcore motion plus, soundcore 3
        marshall: emberton ii, stanmore iii
    """,
    ),
    Category(
        "smart home",
        "Smart Home Device",
        "smart home speaker assistant camera",
        (24, 249),
        (0, 172, 193),
        """
        amazon: echo dot, echo show 8, echo studio
        google: nest audio, nest hub, nest mini, nest thermostat, nest doorbell
        apple: homepod mini, homepod
        ring: video doorbell 4, stick up cam
        philips hue: starter kit, play light bar
        arlo: pro 5s
    """,
    ),
    Category(
        "storage",
        "Solid State Drive",
        "ssd drive storage hard disk",
        (49, 299),
        (121, 85, 72),
        """
        samsung: 970 evo plus, 990 pro, t7 shield, 870 evo
        wd: black sn850x, blue sn570, my passport
        sandisk: extreme pro, extreme portable ssd
        seagate: barracuda, firecuda 530, expansion desktop
        crucial: mx500, p3 plus, x9 pro
        kingston: a2000, nv2, fury renegade
    """,
    ),
    Category(
        "graphics cards",
        "Graphics Card",
        "graphics card gpu video",
        (249, 1799),
        (27, 94, 32),
        """
        nvidia: geforce rtx 4090, geforce rtx 4080, geforce rtx 4070
        amd: radeon rx 7900 xtx, radeon rx 7800 xt, radeon rx 7600
        asus: rog strix rtx 4090, tuf rtx 4070 ti
        msi: gaming x trio rtx 4080, ventus rtx 4060
        gigabyte: aorus rtx 4070, eagle rtx 3060
        evga: rtx 3080 ftw3
    """,
    ),
    Category(
        "processors",
        "Desktop Processor",
        "processor cpu desktop",
        (99, 699),
        (25, 118, 210),
        """
        intel: core i9 13900k, core i7 13700k, core i5 13600k, core i5 12400f, core i9 14900k
        amd: ryzen 7 7800x3d, ryzen 9 7950x, ryzen 5 7600x, ryzen 5 5600x, ryzen 7 5800x3d
    """,
    ),
    Category(
        "routers",
        "WiFi Router",
        "router wifi mesh network",
        (59, 599),
        (3, 155, 229),
        """
        tp link: archer ax55, archer ax73, deco x55
        netgear: nighthawk ax12, orbi rbk752, nighthawk r7000
        asus: rt ax86u, rt ax58u, zenwifi xt8
        google: nest wifi pro
        eero: pro 6e, 6 plus
        linksys: velop mx4200
    """,
    ),
    Category(
        "printers",
        "All-in-One Printer",
        "printer inkjet laser",
        (79, 449),
        (117, 117, 117),
        """
        hp: envy 6055e, officejet pro 9015e, laserjet pro m404n, deskjet 2755e
        canon: pixma ts6420, pixma mg3620, imageclass mf743cdw
        epson: ecotank et 2800, ecotank et 4850, workforce wf 2850
        brother: hl l2350dw, mfc l2750dw
    """,
    ),
    Category(
        "vacuums",
        "Vacuum Cleaner",
        "vacuum cleaner robot cordless",
        (99, 749),
        (142, 36, 170),
        """
        dyson: v15 detect, v8, v12 detect slim
        shark: navigator lift away, stratos upright
        irobot: roomba j7, roomba 694
        roborock: s8
        eufy: robovac 11s
        bissell: crosswave
    """,
    ),
    Category(
        "kitchen",
        "Kitchen Appliance",
        "kitchen appliance cooking coffee",
        (49, 699),
        (230, 81, 0),
        """
        ninja: air fryer af101, foodi 8 in 1, creami
        instant pot: duo 7 in 1, duo crisp
        keurig: k elite, k mini
        nespresso: vertuo next, vertuo pop
        vitamix: e310
        kitchenaid: artisan stand mixer
        breville: barista express
        cuisinart: dcc 3200
        cosori: pro air fryer
    """,
    ),
    Category(
        "e-readers",
        "E-Reader",
        "ereader e reader ebook kindle",
        (99, 349),
        (66, 66, 66),
        """
        amazon: kindle paperwhite, kindle oasis, kindle scribe, kindle
        kobo: clara 2e, libra 2, sage
        boox: note air 3
    """,
    ),
    Category(
        "drones",
        "Camera Drone",
        "drone quadcopter camera",
        (299, 2199),
        (84, 110, 122),
        """
        dji: mini 3 pro, mini 4 pro, mavic 3 classic, air 3, avata
        autel: evo lite plus
        holy stone: hs720e
    """,
    ),
    Category(
        "webcams",
        "HD Webcam",
        "webcam camera streaming",
        (29, 199),
        (48, 63, 159),
        """
        logitech: c920, brio, c270, streamcam
        razer: kiyo pro
        microsoft: lifecam hd 3000
        anker: powerconf c200
    """,
    ),
    Category(
        "microphones",
        "USB Microphone",
        "microphone mic podcast streaming",
        (49, 399),
        (183, 28, 28),
        """
        blue: yeti, yeti nano, snowball
        shure: sm7b, mv7
        rode: nt usb, podmic
        hyperx: quadcast, solocast
        elgato: wave 3
    """,
    ),
    Category(
        "chargers",
        "Charger",
        "charger power bank adapter",
        (15, 149),
        (255, 143, 0),
        """
        anker: 735 charger, powercore 10000
        apple: 20w usb c power adapter, magsafe charger
        belkin: boostcharge pro 3 in 1
        samsung: 45w super fast charger
        mophie: powerstation plus
    """,
    ),
    Category(
        "sneakers",
        "Sneakers",
        "shoes sneakers running",
        (49, 189),
        (255, 87, 34),
        """
        nike: air max 90, air force 1, pegasus 40
        adidas: ultraboost 22, stan smith, samba og
        new balance: 574, 990v6
        converse: chuck taylor all star
        vans: old skool
        asics: gel kayano 30
        hoka: clifton 9
        brooks: ghost 15
    """,
    ),
    Category(
        "toys",
        "Building Set",
        "lego building set toy",
        (39, 849),
        (255, 193, 7),
        """
        lego: star wars millennium falcon, technic bugatti chiron, creator eiffel tower
        lego: city police station
    """,
    ),
)

_BRAND_DISPLAY = {
    "8bitdo": "8BitDo",
    "amd": "AMD",
    "aoc": "AOC",
    "asus": "ASUS",
    "benq": "BenQ",
    "dji": "DJI",
    "gopro": "GoPro",
    "hp": "HP",
    "hyperx": "HyperX",
    "irobot": "iRobot",
    "jbl": "JBL",
    "kitchenaid": "KitchenAid",
    "lg": "LG",
    "msi": "MSI",
    "nvidia": "NVIDIA",
    "oneplus": "OnePlus",
    "sandisk": "SanDisk",
    "steelseries": "SteelSeries",
    "tcl": "TCL",
    "tp link": "TP-Link",
    "wd": "WD",
    "jlab": "JLab",
    "evga": "EVGA",
    "powera": "PowerA",
}
#: How model words are spelled on a page ("airpods" -> "AirPods"); other words are capitalised,
#: and words with digits upper-cased ("g933" -> "G933").
_SPELLINGS = """
    airpods:AirPods alienware:Alienware boostcharge:BoostCharge crosswave:CrossWave
    dualsense:DualSense ecotank:EcoTank geforce:GeForce homepod:HomePod ideapad:IdeaPad
    imageclass:imageCLASS ipad:iPad iphone:iPhone laserjet:LaserJet linkbuds:LinkBuds
    macbook:MacBook magsafe:MagSafe nanocell:NanoCell officejet:OfficeJet
    playstation:PlayStation powercore:PowerCore powerconf:PowerConf powershot:PowerShot
    proart:ProArt quietcomfort:QuietComfort robovac:RoboVac soundcore:Soundcore
    soundlink:SoundLink streamcam:StreamCam thinkpad:ThinkPad ultragear:UltraGear
    deskjet:DeskJet lifecam:LifeCam podmic:PodMic zenbook:Zenbook vivobook:Vivobook
    zenwifi:ZenWiFi firecuda:FireCuda workforce:WorkForce blackwidow:BlackWidow
    deathadder:DeathAdder blackshark:BlackShark quadcast:QuadCast solocast:SoloCast
    wonderboom:Wonderboom megaboom:Megaboom oled:OLED rgb:RGB se:SE ii:II iii:III iv:IV ssd:SSD
    10th:10th usb:USB hd:HD eos:EOS og:OG fe:FE xt:XT xtx:XTX rtx:RTX rx:RX rog:ROG tuf:TUF
    mx:MX wh:WH wf:WF zv:ZV ath:ATH nt:NT gtr:GTR ti:Ti in:in fc:fc x:X z:Z k:K
"""
_WORD_DISPLAY = dict(pair.split(":") for pair in _SPELLINGS.split())


def _display(words: str, table: dict[str, str]) -> str:
    if words in table:
        return table[words]
    out = []
    for word in words.split():
        if word in _WORD_DISPLAY:
            out.append(_WORD_DISPLAY[word])
        elif any(c.isdigit() for c in word):
            out.append(word.upper())
        else:
            out.append(word.capitalize())
    return " ".join(out)


@dataclass(frozen=True)
class Product:
    pid: str
    name: str
    brand: str
    model: str
    category: str
    title: str
    base_price: float
    color: Color

    @property
    def brand_label(self) -> str:
        return _display(self.brand, _BRAND_DISPLAY)

    @property
    def short_title(self) -> str:
        """Brand and model without the category noun ("Logitech G933")."""
        return f"{self.brand_label} {_display(self.model, {})}"


def _shade(color: Color, amount: float) -> Color:
    return tuple(max(0, min(255, round(c + amount))) for c in color)  # type: ignore[return-value]


def _build_catalog() -> tuple[Product, ...]:
    products: list[Product] = []
    for category in CATEGORIES:
        low, high = category.price_range
        for line in category.table.strip().splitlines():
            brand, _, models = line.strip().partition(":")
            for model in (m.strip() for m in models.split(",")):
                name = f"{brand.strip()} {model}"
                pid = name.replace(" ", "-")
                price = low + (high - low) * stable_fraction("price", pid) ** 1.5
                products.append(
                    Product(
                        pid=pid,
                        name=name,
                        brand=brand.strip(),
                        model=model,
                        category=category.key,
                        title=f"{_display(brand.strip(), _BRAND_DISPLAY)} "
                        f"{_display(model, {})} {category.noun}",
                        base_price=max(9.0, round(price)) - 0.01,
                        color=_shade(category.color, 50 * (stable_fraction("shade", pid) - 0.5)),
                    )
                )
    names = [p.name for p in products]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"duplicate product names in the catalog: {sorted(duplicates)}"
    return tuple(products)


PRODUCTS: tuple[Product, ...] = _build_catalog()
BY_ID: dict[str, Product] = {p.pid: p for p in PRODUCTS}
_POSITION: dict[str, int] = {p.pid: i for i, p in enumerate(PRODUCTS)}
BY_NAME: dict[str, Product] = {p.name: p for p in PRODUCTS}
CATEGORY_KEYS: tuple[str, ...] = tuple(c.key for c in CATEGORIES)
BY_CATEGORY: dict[str, tuple[Product, ...]] = {
    key: tuple(p for p in PRODUCTS if p.category == key) for key in CATEGORY_KEYS
}
_LONGEST_NAME = max(len(p.name.split()) for p in PRODUCTS)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _build_index() -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    names: dict[str, list[int]] = defaultdict(list)
    categories: dict[str, list[int]] = defaultdict(list)
    terms = {
        c.key: set(map(_stem, re.findall(r"[a-z0-9]+", f"{c.key} {c.noun.lower()} {c.terms}")))
        for c in CATEGORIES
    }
    for index, product in enumerate(PRODUCTS):
        for word in set(product.name.split()):
            names[word].append(index)
        for word in terms[product.category]:
            categories[word].append(index)
    return dict(names), dict(categories)


_NAME_INDEX, _CATEGORY_INDEX = _build_index()


def price_at(product: Product, site: str) -> float:
    """The product's price on ``site``: within 12% of its base price, ending in .99."""
    factor = 0.88 + 0.24 * stable_fraction("site-price", site, product.pid)
    return max(4.0, round(product.base_price * factor)) - 0.01


def rating_of(product: Product) -> tuple[float, int]:
    """Average stars (3.6-4.9) and number of ratings."""
    stars = 3.6 + 1.3 * stable_fraction("stars", product.pid)
    count = 12 + int(8000 * stable_fraction("ratings", product.pid) ** 2)
    return round(stars, 1), count


@lru_cache(maxsize=8192)
def search_products(site: str, query: str) -> tuple[Product, ...]:
    """The products ``site`` lists for ``query``, best first (at most :data:`MAX_RESULTS`)."""
    words = [w for w in normalize_query(query).split() if w not in _STOPWORDS]
    scores: dict[int, float] = defaultdict(float)
    for word in set(words):
        for index in _NAME_INDEX.get(word, ()):
            scores[index] += 3.0
        for index in _CATEGORY_INDEX.get(_stem(word), ()):
            scores[index] += 2.0
    exact = BY_NAME.get(" ".join(words)) or BY_NAME.get(normalize_query(query))
    if exact is not None:
        scores[_POSITION[exact.pid]] += _EXACT_BONUS
    best = max(scores.values(), default=0.0)
    # Weak matches (a single shared category word) only fill a page that has nothing better.
    floor = min(best, 2.0)
    ranked = sorted(
        (i for i, score in scores.items() if score >= floor),
        key=lambda i: (-scores[i], stable_fraction("rank", site, PRODUCTS[i].pid)),
    )
    return tuple(PRODUCTS[i] for i in ranked[:MAX_RESULTS])


@lru_cache(maxsize=8192)
def product_in_query(query: str) -> Product | None:
    """The catalog product a query names ("logitech g933 review" -> logitech g933), if any."""
    return longest_phrase(normalize_query(query).split(), BY_NAME, _LONGEST_NAME)


@lru_cache(maxsize=256)
def featured(site: str, count: int, salt: str = "featured") -> tuple[Product, ...]:
    """A site's showcase products (stable per site), one per category."""
    keys = sorted(CATEGORY_KEYS, key=lambda key: stable_fraction(salt, site, key))[:count]
    return tuple(
        BY_CATEGORY[key][int(stable_fraction(salt, site, key, "pick") * len(BY_CATEGORY[key]))]
        for key in keys
    )


def unrelated_product(avoid: Product | None, *key: object) -> Product:
    """A product of another category than ``avoid`` (what an ad slot advertises)."""
    keys = [k for k in CATEGORY_KEYS if avoid is None or k != avoid.category]
    category = keys[int(stable_fraction("ad-category", *key) * len(keys))]
    pool = BY_CATEGORY[category]
    return pool[int(stable_fraction("ad-product", *key) * len(pool))]

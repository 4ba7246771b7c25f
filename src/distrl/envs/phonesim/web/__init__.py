"""The web PhoneSim's Chrome shows: a search engine, shopping sites and other sites.

One module per thing: ``urls`` (addresses and queries), ``catalog`` (products, prices, search),
``shops`` (who the shopping sites are and how they look), ``shopping`` (their pages), ``answers``
(the search engine's answer cards), ``search_engine`` (google.com), ``sites`` (every other known
site), ``router`` (which site serves an address) and ``page`` (what a page builder gets and
returns). Everything here is deterministic: the same address and phone state give the same page,
and what varies per episode (ads, layout) comes from the phone's dynamics.
"""

"""--topical-sites N: hosts about one topic, so domain focus (ILSP-FC's term relevance) can be measured.

The topic is money: its terms are CLDR currency names in each language ("US dollar", "dollar des
États-Unis", "美元"), real translations of one another. N hosts (drawn from the seed apart from every other
draw) write most of their articles about it: the article names a few currencies in a paragraph of its
body and often one in its title. Articles elsewhere (and the off-topic articles of topical hosts) name a
currency now and then: one in passing, sometimes two, the noise a relevance threshold must ignore.
Every draw here comes from its own seeded stream, so an archive without topical sites is byte-identical to
one made before this module existed. truth/topics.parquet says which HTML page is on the topic.
"""
from __future__ import annotations

import functools
import random

import pyarrow as pa
import pyarrow.parquet as pq

from parascout.udfs.common.langs import load_languages
from parascout.udfs.sample_archive.vocabulary import cldr_data

TOPIC = "money"
#: the currencies topical pages name (ISO 4217), most traded first; the shipped term file lists the same
CURRENCIES = ("USD", "EUR", "JPY", "GBP", "CNY", "AUD", "CAD", "CHF", "HKD", "SGD", "SEK", "KRW", "NOK", "NZD",
              "INR", "MXN", "TWD", "ZAR", "BRL", "DKK", "PLN", "THB", "ILS", "IDR", "CZK", "AED", "TRY", "HUF",
              "CLP", "SAR", "PHP", "MYR", "COP", "RUB", "RON", "ISK", "EGP", "MAD", "ARS", "UAH")
TOPICS_SCHEMA = pa.schema([
    ("host", pa.string()), ("url", pa.string()), ("lang", pa.string()), ("page_key", pa.string()),
    ("page_kind", pa.string()), ("topical_host", pa.bool_()), ("topic", pa.string()), ("mentions", pa.int16()),
])


@functools.cache
def currency_names(lang: str) -> dict[str, str]:
    """A language's CLDR name of each topical currency (English where the locale has none)."""
    locale = load_languages()[lang].iso639_1 or lang
    local, english = cldr_data(locale, "currency_names"), cldr_data("en", "currency_names")
    return {code: local.get(code) or english[code] for code in CURRENCIES}


def choose_topical_sites(specs: list, n: int, seed: int) -> None:
    """Mark n hosts as topical (spec.topic), drawn from a stream of their own."""
    for spec in random.Random(f"topical:{seed}").sample(specs, min(n, len(specs))):
        spec.topic = TOPIC


def assign_mentions(site, conf: dict) -> None:
    """Which articles are on the topic and the currencies each article names (title, body)."""
    options = conf["topical"]
    low, high = options["mentions"]
    for page in site.pages.values():
        if page.kind != "article":
            continue
        rng = random.Random(f"topic:{site.spec.seed}:{page.key}")
        page.on_topic = site.spec.topic is not None and rng.random() < float(options["on_topic_share"])
        if page.on_topic:
            page.mentions = tuple(rng.choices(CURRENCIES[:20], k=rng.randint(int(low), int(high))))
            if rng.random() < float(options["title_share"]):
                page.title_mention = rng.choice(page.mentions)
            continue
        draw = rng.random()
        if draw < float(options["stray_two_share"]):
            page.mentions = tuple(rng.sample(CURRENCIES, 2))
        elif draw < float(options["stray_two_share"]) + float(options["stray_one_share"]):
            page.mentions = (rng.choice(CURRENCIES),)


def mention_sentence(page, lang: str, vocab) -> str | None:
    """The body sentence naming the article's currencies in a language (None when it names none)."""
    if not page.mentions:
        return None
    names = [currency_names(lang)[code] for code in page.mentions]
    joiner = "、" if not vocab.joiner else ", "
    text = joiner.join(names)
    return text[:1].upper() + text[1:] + vocab.sentence_end


def with_mentions(blocks: list[tuple[str, str]], page, lang: str, vocab) -> list[tuple[str, str]]:
    """Body blocks (tag, text) with the mention sentence closing the last paragraph (unchanged without one)."""
    sentence = mention_sentence(page, lang, vocab)
    last = max((k for k, (tag, _) in enumerate(blocks) if tag == "p"), default=None)
    if sentence is None or last is None:
        return blocks
    joined = blocks[last][1] + vocab.joiner + sentence
    return blocks[:last] + [("p", joined)] + blocks[last + 1:]


def titled(page, lang: str, title: str) -> str:
    """An article's title with the currency it names there, if any."""
    if not page.title_mention:
        return title
    return f"{currency_names(lang)[page.title_mention]}: {title}"


def truth_rows(site) -> dict:
    """truth/topics.parquet rows of a host: one per HTML page URL (page, language)."""
    rows = {name: [] for name in TOPICS_SCHEMA.names}
    for page in site.pages.values():
        for lang in page.languages:
            values = (site.host, site.urls[(page.key, lang)], lang, page.key, page.kind,
                      site.spec.topic is not None, TOPIC if page.on_topic else None, len(page.mentions))
            for name, value in zip(TOPICS_SCHEMA.names, values):
                rows[name].append(value)
    return rows


def write_topic_truth(rows: list[dict], path: str) -> None:
    """truth/topics.parquet from the hosts' rows."""
    with pq.ParquetWriter(path, TOPICS_SCHEMA) as writer:
        for host_rows in rows:
            writer.write_table(pa.table(host_rows, schema=TOPICS_SCHEMA))


def term_lines(langs: list[str], weight: int = 1) -> list[str]:
    """The topic's term file: `weight<TAB>term<TAB>subtopic<TAB>lang` for every currency and language
    (one weight for every term, as ILSP-FC suggests; subtopic 'major' for the 20 most traded, else 'other')."""
    lines = [f"# {TOPIC}: CLDR currency names (weight<TAB>term<TAB>subtopic<TAB>lang)"]
    for lang in langs:
        code = load_languages()[lang].iso639_1 or lang
        for rank, currency in enumerate(CURRENCIES):
            lines.append(f"{weight}\t{currency_names(lang)[currency]}\t{'major' if rank < 20 else 'other'}\t{code}")
    return lines

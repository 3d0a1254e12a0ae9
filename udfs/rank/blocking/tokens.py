"""URL tokens for similarity blocking: word tokens plus character n-grams, and the language-neutral directories and
handles that keep translations of one page in one bounded group (the language markers they leave out are
udfs.common.langs.language_markers). The n-gram length is BlockingConfig.char_ngram (udfs.rank.blocking.config)."""
from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlsplit

from parascout.udfs.common.langs import is_language_segment
from parascout.udfs.common.urls import tokenize_text
from parascout.udfs.rank.blocking.config import DEFAULT

#: tokens every URL of a host shares; they only dilute the similarity
URL_NOISE_TOKENS = frozenset({"http", "https", "www"})


#: the features of a URL with no token left (a home page: '/', '/en/', '/?lang=is')
EMPTY_URL_FEATURES = frozenset({"<root>"})




def similarity_tokens(url: str, markers: frozenset[str] = frozenset(), strip_host: str | None = None) -> frozenset[str]:
    """The URL's token set for similarity: path, query and the host left of `strip_host`, minus markers."""
    try:
        parts = urlsplit(unquote(url.strip()))
    except (ValueError, AttributeError):
        return frozenset()
    host = (parts.hostname or "").rstrip(".")
    if strip_host and (host == strip_host or host.endswith("." + strip_host)):
        host = host[: -len(strip_host)]
    text = f"{host} {parts.path} {parts.query}"
    return frozenset(t for t in tokenize_text(text) if t not in markers and t not in URL_NOISE_TOKENS)


def similarity_features(tokens: frozenset[str], ngram: int = DEFAULT.char_ngram) -> frozenset[str]:
    """Word tokens plus character n-grams of non-numeric words, so 'philosophy' ~ 'philosophie'."""
    features = set(tokens)
    for token in tokens:
        if len(token) > ngram and not token.isdigit():
            padded = f"<{token}>"
            features.update(padded[i:i + ngram] for i in range(len(padded) - ngram + 1))
    return frozenset(features)


def url_features(url: str, markers: frozenset[str] = frozenset(), strip_host: str | None = None,
                 ngram: int = DEFAULT.char_ngram) -> frozenset[str]:
    """What token Jaccard compares for a URL: its tokens and their character n-grams ('/en/' and '/' match)."""
    return similarity_features(similarity_tokens(url, markers, strip_host), ngram) or EMPTY_URL_FEATURES


def neutral_directories(url: str, markers: frozenset[str]) -> list[str]:
    """The URL's directory names with language segments removed (/en/news/a.html -> ['news'])."""
    try:
        path = urlsplit(url.strip()).path
    except (ValueError, AttributeError):
        return []
    segments = path.lower().split("/")[1:-1]
    return [s for s in segments if s and not is_language_segment(s, markers)]


def neutral_prefixes(url: str, markers: frozenset[str], depth: int = 3) -> list[str]:
    """Language-neutral directory prefixes of up to 1..depth directories (/en/a/b/c.html -> a, a/b, a/b)."""
    directories = neutral_directories(url, markers)
    return ["/".join(directories[:level]) for level in range(1, depth + 1)]


@functools.lru_cache(maxsize=64)
def _marker_pattern(markers: frozenset[str]) -> re.Pattern:
    alternatives = "|".join(sorted((re.escape(m) for m in markers), key=len, reverse=True)) or "(?!)"
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.UNICODE)


def neutral_handle(url: str, markers: frozenset[str]) -> str:
    """Path and query with language markers cut out: translations differing only by marker share it."""
    try:
        parts = urlsplit(url.strip().lower())
    except (ValueError, AttributeError):
        return url or ""
    return _marker_pattern(markers).sub("", f"{parts.path}?{parts.query}")


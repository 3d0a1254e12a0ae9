"""URL preprocessing shared by both URL models, as in García-Romero et al. and their public code.

A URL loses its protocol and trailing '/', is percent-decoded (invalid UTF-8 kept as
backslash escapes, as the authors do), HTML-entity decoded (only `&name;`, `&#N;`, `&#xN;`
with their ';', so a query like `?a=1&lang=fr` is left alone), has punycode host labels
decoded and blanks collapsed; it is then pre-tokenised with the authors' regex
`[^\\W_0-9]+|[^\\w\\s]+|_+|\\s+|[0-9]+` ('/' is punctuation, so it stays a token) and the
tokens are joined by one space. A pair is `src </s> trg` with the model tokenizer's separator.
"""
from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import unquote

TOKEN_PATTERN = re.compile(r"[^\W_0-9]+|[^\w\s]+|_+|\s+|[0-9]+")
ENTITY_PATTERN = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
BLANKS_PATTERN = re.compile(r"\s+")
DEFAULT_SEPARATOR = "</s>"
#: how far into a URL a scheme may end ("https://", "ftp://", "android-app://")
MAX_SCHEME_CHARS = 16


def _decode_entity(match: re.Match) -> str:
    return html.unescape(match.group(0))


def _decode_idn_labels(url: str) -> str:
    """Decode punycode labels (xn--...) of the host part; labels that fail to decode stay as they are."""
    host_end = len(url)
    for stop in "/?#":
        position = url.find(stop)
        if position != -1:
            host_end = min(host_end, position)
    labels = url[:host_end].split(".")
    for index, label in enumerate(labels):
        if label.lower().startswith("xn--"):
            try:
                labels[index] = label.encode("ascii").decode("idna")
            except (UnicodeError, ValueError):
                pass
    return ".".join(labels) + url[host_end:]


def normalize_url(url: str) -> str:
    """Protocol dropped, trailing '/' stripped, percent- and entity-decoded, IDN host decoded, blanks collapsed."""
    if not url:
        return ""
    scheme_end = url.find("://", 0, MAX_SCHEME_CHARS + 3)
    if scheme_end != -1:
        url = url[scheme_end + 3:]
    url = url.rstrip("/")
    if "%" in url:
        url = unquote(url, errors="backslashreplace")
    if "&" in url and ";" in url:
        url = ENTITY_PATTERN.sub(_decode_entity, url)
    if "xn--" in url or "XN--" in url:
        url = _decode_idn_labels(url)
    if " " in url or not url.isprintable():
        url = BLANKS_PATTERN.sub(" ", url).strip()
    return url


def fold_accents(text: str) -> str:
    """Accents and other combining marks dropped after compatibility decomposition (règlement -> reglement)."""
    return "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))


def url_tokens(url: str) -> list[str]:
    """The authors' pre-tokenisation of a normalised URL (whitespace runs dropped)."""
    return [token for token in TOKEN_PATTERN.findall(url) if not token.isspace()]


def preprocess_url(url: str) -> str:
    """A raw URL as the model reads it: normalised, pre-tokenised, tokens joined by spaces."""
    return " ".join(url_tokens(normalize_url(url)))


def pair_text(src_url: str, trg_url: str, separator: str = DEFAULT_SEPARATOR) -> str:
    """A URL pair as one text: `src </s> trg` (pass the tokenizer's sep_token as separator)."""
    return f"{preprocess_url(src_url)} {separator} {preprocess_url(trg_url)}"


def resource_start(url: str) -> int:
    """Index where the resource part (after scheme and authority and its '/') starts; len(url) if none."""
    scheme_end = url.find("://", 0, MAX_SCHEME_CHARS + 3)
    start = scheme_end + 3 if scheme_end != -1 else 0
    slash = url.find("/", start)
    return len(url) if slash == -1 else slash + 1

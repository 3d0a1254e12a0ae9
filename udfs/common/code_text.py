"""Code, identifiers, commands and numbers told from prose by what they are, not by the tags around them.

A documentation site marks its examples up in `<pre>`, in highlighted `<div>`/`<span>` runs, in table cells or
inline; whatever the markup, the text extractor hands over a paragraph, and an English example inside a French page
reads to a language detector as English prose. What the text itself shows is enough: prose is words separated by
spaces with punctuation at their edges, and a good part of its words are the small lower-case words that hold a
sentence together; code is tokens with operators and brackets inside them (`abs(x)`, `a.b`, `x=1;`, `\\relative`),
operator tokens of their own (`=`, `{`, `|`), identifiers (`snake_case`, `camelCase`, `c4`, `G0`), and between them
capitalised keywords and single letters rather than sentences (`Dim iNumber As Integer`, `a = [1 2 3]`). The words
of a string literal that a code token opens (`disp("Scilab on Windows");`) are the program's data: they count for
neither side, so an example that prints sentences is not taken for one.

`code_share(text)` is the share of a paragraph's tokens that are code-shaped (numbers count for neither side);
`is_code(text)` calls a paragraph code when that share reaches CodeConfig.code_share, or, where few of its words are
lower-case words of two letters or more (no sentence structure), loose_code_share; a line that starts with a shell
or interpreter prompt (`$`, `#`, `>>>`, `-->`, `mysql>`, `user@host:~$`) is a command. A single space-less token in an
alphabet written with spaces (`'chantquarterbar`, `set_fftw_wisdom`) is an identifier, not a sentence.

Code comes in runs: an example marked up one line per `<br>` or table row has lines that alone read as a title
(`Case 1 To 5`, `End Select`). `code_flags` judges a page's paragraphs in order: a run of paragraphs that are no
sentence (sentence_like) and no heading is code as a whole when most of its text is in lines that are code by
themselves. An example's keyword lines are short beside its statements; a reference table's descriptions
(`G5.1 | I J | Quadratischer Spline`) and a table of contents' titles hold more text than the codes beside them, and
stay what they are.
A navigation trail (`Scilab Help >> Fonctions Elémentaires > Trigonométrie`, `<< asecd`) is titles between
separators, not operators between operands: no code by itself, so it takes no title next to it into a run of code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class CodeConfig(StageConfig):
    """What tells code from prose: verify-pairs leaves code out of a page's language shares, export-bitext out of
    the sentence pairs (each job's config holds one: `verification.code`, `alignment.code`)."""

    code_share: float = knob(
        0.4, "a paragraph with at least this share of code-shaped tokens (of its code-shaped and word tokens) is code",
        low=0, high=1)
    loose_code_share: float = knob(
        0.2, "... or with at least this share when under min_sentence_word_share of its words are lower-case words",
        low=0, high=1)
    #: a German sentence capitalises its nouns: "Alle Warenzeichen sind Eigentum der jeweiligen Markeninhaber", 3 of 7
    min_sentence_word_share: float = knob(
        0.4, "prose: at least this share of its words are lower-case words of two letters or more (function words, "
             "verbs)", low=0, high=1)
    min_run_code_share: float = knob(
        0.5, "a run of lines that are no sentences is code as a whole when at least this share of its characters is in "
             "lines that are code by themselves (an example one line per row, its keyword lines with it; not a "
             "reference table's descriptions beside its codes)", low=0, high=1)
    min_sentence_words: int = knob(
        8, "a paragraph of at least this many tokens, or ending as a sentence ends, with enough lower-case words, is a "
           "sentence", low=1)


DEFAULT = CodeConfig()

#: punctuation prose puts around its words: quotes, brackets, sentence marks
_QUOTES = "\"'«»“”‘’„"
_EDGE = _QUOTES + "()[]¿¡.,;:!?…"
_WORD = re.compile(r"^[^\W\d_]+(?:['’\-][^\W\d_]+)*$")
_NUMBER = re.compile(r"^[+\-−±]?(?:\d[\d.,:/\s]*|\.\d+)(?:[%°]|e[+\-]?\d+)?$", re.IGNORECASE)
#: a section number: an appendix letter and its numbers (E.4, A.12.4)
_SECTION = re.compile(r"^[A-Z](?:\.\d+)+$")
#: prose dashes and bullets, the only tokens of symbols alone that sentences hold
_PROSE_SYMBOLS = frozenset("—–-‒―•·*…/&")
_PROSE_RUNS = frozenset({"--", "...", "***"})
#: a shell or interpreter prompt before a command (`$ sudo apt install …`, `>>> import x`, `root@box:~#`)
_PROMPT = re.compile(r"^(?:[$#%>]|>>>?|-->|\.\.\.|\w+>|[\w.-]+@[\w.-]+(?::\S*)?[$#]|[A-Z]:\\\S*>)$")
#: characters that do not occur inside a word of prose
_OPERATORS = re.compile(r"[=<>{}\[\]()\\|$#@^~;_+*`]|::|->|\w\.\w\w|\w\w\.\w")
_CAMEL = re.compile(r"[a-z][A-Z]")
_MIXED = re.compile(r"^(?=.*[^\W\d_])(?=.*\d)\w+$")
#: scripts written without spaces between words: a long token of them is a phrase, not an identifier
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _token_kind(token: str) -> str:
    """'word', 'code' or 'number' (or 'other': prose punctuation standing alone)."""
    core = token.strip(_EDGE)
    if not core:
        return "other" if len(token) == 1 or token in _PROSE_RUNS or all(c in _EDGE for c in token) else "code"
    if _NUMBER.match(core) or _SECTION.match(core):
        return "number"
    if len(core) == 1 and core in _PROSE_SYMBOLS or core in _PROSE_RUNS:
        return "other"
    if _UNSPACED.search(core):
        return "word"  # a phrase of a script written without spaces, its own punctuation inside (，；)
    # brackets inside a token are code (abs(x), a[1], f()); around it, prose's: (see above)
    inner = token.lstrip(_QUOTES + "([").rstrip(".,;:!?…" + _QUOTES + ")]")
    if _OPERATORS.search(inner) or _CAMEL.search(core) or _MIXED.match(core):
        return "code"
    if token[:1] == "'" and "'" not in token[1:]:  # a quoted symbol: 'chantquarterbar
        return "code"
    return "word" if _WORD.match(core) else "code"


#: a string literal a code token opens (`disp("Scilab`, `print('Hello`, `x="a`): its quote after an operator
_OPENS_STRING = re.compile(r"[(\[{=,:+]([\"'])")


def _opened_string(token: str) -> str | None:
    """The quote of a string literal that a code-shaped token opens and leaves open, None when it opens none."""
    found = _OPENS_STRING.search(token)
    if found is None:
        return None
    quote = found.group(1)
    return quote if token.count(quote, found.start(1)) % 2 else None


def _counts(text: str) -> tuple[int, int, int]:
    """(code-shaped tokens, word tokens, lower-case words of two letters or more) of a text. The words of a string
    literal that a code token opens and a later token closes (`disp("Scilab on Windows");`) are the code's data:
    counted for neither side."""
    code = words = lower = 0
    tokens = text.split()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        kind = _token_kind(token)
        if kind == "code":
            code += 1
            quote = _opened_string(token)
            if quote is not None:
                closing = next((i for i in range(index, len(tokens)) if tokens[i].count(quote) % 2), None)
                index = index if closing is None else closing + 1  # a quote never closed opened no string
        elif kind == "word":
            words += 1
            core = token.strip(_EDGE)  # a script without case (Arabic, Hebrew) counts as lower-case
            lower += len(core) >= 2 and not core[0].isupper()
    return code, words, lower


def code_share(text: str) -> float:
    """The share of a text's code-shaped tokens among its code-shaped and word tokens (0 without either)."""
    code, words, _ = _counts(text)
    return code / (code + words) if code + words else 0.0


#: what a navigation trail puts between its steps (Help >> Functions > Trigonometry > asech), or before and after a
#: previous / next link (<< asecd, asin >>)
TRAIL_SEPARATORS = frozenset({">", ">>", "<<", "<", "»", "«", "›", "‹", "→", "←", "|", "/", "::"})


def is_trail(text: str) -> bool:
    """A navigation trail: titles between separators standing alone (TRAIL_SEPARATORS), nothing code-shaped, no
    statement's end (`cout << x << endl;` is code) and a word of three letters or more. A breadcrumb is written in the
    page's language like the rest of its navigation."""
    tokens = text.split()
    steps = [token for token in tokens if token not in TRAIL_SEPARATORS]
    if len(steps) == len(tokens) or not steps or any(token.endswith(";") for token in steps):
        return False
    kinds = [_token_kind(token) for token in steps]
    return "code" not in kinds and any(kind == "word" and len(token.strip(_EDGE)) >= 3
                                       for token, kind in zip(steps, kinds))


def is_code(text: str, config: CodeConfig = DEFAULT) -> bool:
    """A paragraph that is code, an identifier, a command or numbers, not prose (module docstring)."""
    tokens = text.split()
    if not tokens or is_trail(text):
        return False
    if len(tokens) == 1:
        return not _UNSPACED.search(tokens[0]) and _token_kind(tokens[0]) != "word"
    if _PROMPT.match(tokens[0]):
        return True  # a command after its prompt
    code, words, lower = _counts(text)
    if not words:
        return True  # numbers, operators and identifiers only
    ratio = code / (code + words)
    return ratio >= config.code_share or (ratio >= config.loose_code_share
                                          and lower < config.min_sentence_word_share * words)


#: paragraph types (texts.paragraphs.type) that are a page's headings: a run of code does not extend over them
HEADING_TYPES = frozenset({"heading", "title"})
_SENTENCE_END = re.compile(r"[.!?。！？:;]['\"»”’)]*$")


def sentence_like(text: str, config: CodeConfig = DEFAULT) -> bool:
    """A paragraph that reads as a sentence: min_sentence_word_share of its words lower-case words, and a sentence's
    end or min_sentence_words tokens."""
    _, words, lower = _counts(text)
    if not words or lower < config.min_sentence_word_share * words:
        return False
    return len(text.split()) >= config.min_sentence_words or bool(_SENTENCE_END.search(text.strip()))


def code_flags(paragraphs: list[tuple[str, str | None]], config: CodeConfig = DEFAULT) -> list[bool]:
    """is_code of each (text, type) of a page's paragraphs in their order; a run of paragraphs that are neither
    sentences nor headings is code as a whole when min_run_code_share of its characters is in paragraphs that are
    code by themselves (an example one line per row, its keyword lines with it), else only its code paragraphs are
    (a table of contents with one entry that quotes a command is titles; a reference table's descriptions are
    prose)."""
    flags = [is_code(text, config) for text, _ in paragraphs]
    loose = [flag or (kind not in HEADING_TYPES and not sentence_like(text, config))
             for flag, (text, kind) in zip(flags, paragraphs)]
    start = 0
    while start < len(flags):
        end = start
        while end < len(flags) and loose[end]:
            end += 1
        chars = [len(text) for text, _ in paragraphs[start:end]]
        code_chars = sum(size for size, flag in zip(chars, flags[start:end]) if flag)
        if code_chars and code_chars >= config.min_run_code_share * sum(chars):
            flags[start:end] = [True] * (end - start)
        start = end + 1
    return flags

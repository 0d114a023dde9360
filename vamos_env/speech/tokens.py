"""Heard text as tokens that remember where they came from.

Every parser in this package works on these tokens, never on a rewritten
string, so a value found in speech can always quote the exact characters it
came from (``text[start:end]``) as evidence.

Normalisation decisions, made once here:
- words are lower-cased; curly apostrophes become straight ones;
- a hyphen between letters joins nothing ("sixty-five" is "sixty five");
  between digits, or standing alone, it is a dash (a code separator); before a
  number or "$" at the start of a word it is a minus sign;
- a full stop between two characters with no space ("example.com") is "dot";
  otherwise it is punctuation, which stops number phrases;
- "@" is "at", "_" is "underscore", "&" is "and";
- a numeral keeps its digits and decimal point, drops thousands commas
  ("$1,234.56" -> "$", "1234.56"), and "10th" becomes an ordinal numeral "10".
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

TokenKind = Literal["word", "num", "ordnum", "sym", "punct"]

# Words first (most tokens are words); no IGNORECASE (it slows every match): only the
# ordinal suffix has letters to match in either case.
_TOKEN = re.compile(
    r"(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)"
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<suffix>[sS][tT]|[nN][dD]|[rR][dD]|[tT][hH])?"
    r"|(?P<sym>\S)"
)
_SYMBOL_NORMS = {
    "$": "$", "¢": "cents", "@": "at", "_": "underscore", "&": "and", "/": "/", "+": "plus",
}  # fmt: skip


class Token(NamedTuple):
    """One word, numeral or symbol: a tuple, as there are tens of them in every turn."""

    norm: str  # normalised form: "sixty", "1234.56", "$", "dash", "dot", ","
    start: int  # character offsets into the original text
    end: int
    kind: TokenKind


_new = tuple.__new__  # builds a Token at C speed (NamedTuple's own __new__ is Python)


def tokenize(text: str) -> tuple[Token, ...]:
    out: list[Token] = []
    append = out.append
    for match in _TOKEN.finditer(text):
        group = match.lastgroup
        start, end = match.span()
        if group == "word":
            append(_new(Token, (match.group().lower().replace("’", "'"), start, end, "word")))
        elif group == "sym":
            token = _symbol(text, match.group(), start)
            if token is not None:
                append(token)
        else:  # a numeral, with an ordinal suffix ("suffix") or without ("num")
            digits = match.group("num").replace(",", "")
            if group == "suffix" and "." not in digits:
                append(_new(Token, (digits, start, end, "ordnum")))
            else:
                # "1.5th" is not a thing: keep the number, drop the letters.
                append(_new(Token, (digits, start, match.end("num"), "num")))
    return tuple(out)


def _symbol(text: str, ch: str, start: int) -> Token | None:
    before = text[start - 1] if start > 0 else " "
    after = text[start + 1] if start + 1 < len(text) else " "
    end = start + 1
    if ch in "-–—":
        if before.isalpha() and after.isalpha():
            return None  # "sixty-five", "e-mail": a word joint, not a symbol
        if (after.isdigit() or after == "$") and not before.isalnum():
            return Token("minus", start, end, "sym")
        return Token("dash", start, end, "sym")
    if ch == ".":
        if before.isalnum() and after.isalnum():
            return Token("dot", start, end, "sym")
        return Token(".", start, end, "punct")
    if ch in _SYMBOL_NORMS:
        return Token(_SYMBOL_NORMS[ch], start, end, "sym")
    return Token(ch, start, end, "punct")


def normalise(text: str) -> str:
    """Lower-case words and numerals joined by single spaces, punctuation dropped.

    "Sixty-five dollars, and $1,234.56!" -> "sixty five dollars and $ 1234.56".
    Useful for keyword matching; parsers use ``tokenize`` to keep offsets.
    """
    return " ".join(t.norm for t in tokenize(text) if t.kind != "punct")

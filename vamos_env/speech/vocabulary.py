"""Word tables shared by rendering and parsing, so both sides speak one dialect.

Everything here is lower case; the parser lower-cases what it hears before
looking words up. American English: no "and" inside numbers when rendering
("two hundred fourteen"), though the parser accepts the British "and".
"""

from __future__ import annotations

from typing import Literal

Unit = Literal["payments", "months", "days", "weeks", "years", "kwh"]

DIGIT_WORDS: tuple[str, ...] = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
)  # fmt: skip

# A digit said one by one, as a word ("oh" for zero), to the digit it stands for; and any
# single digit, said or written ("zero, zero, two", "0, 0, 2").
SPOKEN_DIGITS: dict[str, str] = {word: str(value) for value, word in enumerate(DIGIT_WORDS)} | {
    "oh": "0"
}
SINGLE_DIGITS: frozenset[str] = frozenset({*SPOKEN_DIGITS, *"0123456789"})
# Words a recogniser writes for a digit said inside a code ("card ending 8 to 1-0",
# "account for nine four four", "two nine a seven"); digits only where a code is said.
DIGIT_SOUNDS: dict[str, str] = {
    "to": "2", "too": "2", "for": "4", "fore": "4", "won": "1", "ate": "8", "a": "8",
}  # fmt: skip

UNITS: dict[str, int] = {word: value for value, word in enumerate(DIGIT_WORDS) if value}

TEENS: dict[str, int] = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip

TENS: dict[str, int] = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip

# A common transcription misspelling; accepted when heard, never rendered.
HEARD_TENS: dict[str, int] = {**TENS, "fourty": 40}

SCALES: dict[str, int] = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

# Ordinal word -> the cardinal word it stands for ("twenty-first" = "twenty" + "one").
ORDINAL_TO_CARDINAL: dict[str, str] = {
    "first": "one", "second": "two", "third": "three", "fourth": "four", "fifth": "five",
    "sixth": "six", "seventh": "seven", "eighth": "eight", "ninth": "nine", "tenth": "ten",
    "eleventh": "eleven", "twelfth": "twelve", "thirteenth": "thirteen",
    "fourteenth": "fourteen", "fifteenth": "fifteen", "sixteenth": "sixteen",
    "seventeenth": "seventeen", "eighteenth": "eighteen", "nineteenth": "nineteen",
    "twentieth": "twenty", "thirtieth": "thirty", "fortieth": "forty", "fiftieth": "fifty",
    "sixtieth": "sixty", "seventieth": "seventy", "eightieth": "eighty",
    "ninetieth": "ninety", "hundredth": "hundred", "thousandth": "thousand",
    "millionth": "million", "billionth": "billion",
}  # fmt: skip
CARDINAL_TO_ORDINAL: dict[str, str] = {v: k for k, v in ORDINAL_TO_CARDINAL.items()}

MONTHS: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip

# Heard month names, abbreviations included ("Oct 10"), -> month number.
MONTH_NUMBERS: dict[str, int] = {name: i for i, name in enumerate(MONTHS, 1)} | {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip

# Characters inside codes and email addresses, spoken as these words.
SYMBOL_WORDS: dict[str, str] = {
    "-": "dash", ".": "dot", "@": "at", "_": "underscore", "/": "slash", "+": "plus",
    "#": "pound", "&": "and", "'": "apostrophe", " ": "space",
}  # fmt: skip

# Words that end an email address read backwards from "at" ("my email is dana at ...").
# The renderer spells an address part that is one of these, so it still parses.
EMAIL_STOP_WORDS: frozenset[str] = frozenset(
    {
        "is", "my", "email", "mail", "address", "it's", "its", "it", "to", "the", "and",
        "at", "your", "our", "was", "be", "send", "sent", "use", "using", "on", "file",
        "of", "for", "we", "have", "me", "you", "us", "that", "this", "um", "uh", "so",
        "as", "from", "with", "by", "registered", "current", "new", "old", "please",
        "then", "or", "still", "correct", "right", "yes", "no", "okay", "ok",
    }
)  # fmt: skip

# Units a count is said in ("six payments", "over 6 months", "920 kWh") -> the unit's name.
UNIT_WORDS: dict[str, Unit] = {
    "payment": "payments", "payments": "payments", "instalment": "payments",
    "instalments": "payments", "installment": "payments", "installments": "payments",
    "month": "months", "months": "months", "day": "days", "days": "days",
    "week": "weeks", "weeks": "weeks", "year": "years", "years": "years",
    # Energy: "920 kWh", "nine hundred twenty kilowatt-hours" (the next word, hours, is not read).
    "kwh": "kwh", "kilowatt": "kwh", "kilowatts": "kwh", "kilowatt-hours": "kwh",
    "kilowatt-hour": "kwh",
}  # fmt: skip

# Words that may stand between a number and its unit: "six monthly payments".
COUNT_MODIFIERS: frozenset[str] = frozenset(
    {
        "monthly", "weekly", "equal", "more", "additional", "extra", "separate",
        "consecutive", "further", "remaining", "full", "business", "calendar", "total",
        "smaller", "even",
    }
)  # fmt: skip

# Other things a number can count, so that "two questions" or "one moment" is no amount.
COUNTED_NOUNS: frozenset[str] = frozenset(
    {
        *UNIT_WORDS, "percent", "%", "hour", "hours", "minute", "minutes", "second",
        "seconds", "moment", "moments", "time", "times", "people", "person", "persons",
        "digit", "digits", "character", "characters", "letter", "letters", "card", "cards",
        "bill", "bills", "account", "accounts", "request", "requests", "question",
        "questions", "thing", "things", "item", "items", "call", "calls", "meter", "meters",
        "premise", "premises", "number", "numbers", "step", "steps", "option", "options",
        "way", "ways", "of", "am", "pm", "o'clock", "kw", "watts", "volts", "degrees",
        "household", "households", "members", "member", "adults", "children", "kids",
    }
)  # fmt: skip

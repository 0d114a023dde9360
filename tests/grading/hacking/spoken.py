"""Spoken forms of account facts, written for the adversaries and the labelled calls.

These are deliberately our own renderings, not ``vamos_env.speech.render``: the grader's
parser is what is under test, so the words it must understand cannot come from the same
package. Each function returns one fact said in many ways a person (or a model) says it:
money with and without "dollars", "point", paired groups, "oh" for zero; digits one by
one, in pairs and as a quantity; dates as a person says them; emails read aloud.
"""

from __future__ import annotations

from datetime import date

ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
]  # fmt: skip
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
ORDINALS = {
    1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh",
    8: "eighth", 9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth",
    14: "fourteenth", 15: "fifteenth", 16: "sixteenth", 17: "seventeenth", 18: "eighteenth",
    19: "nineteenth", 20: "twentieth", 30: "thirtieth",
}  # fmt: skip


def words(n: int) -> str:
    """Cardinal words below a million: 215 -> "two hundred fifteen"."""
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES[hundreds]} hundred" + (f" {words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{words(thousands)} thousand" + (f" {words(rest)}" if rest else "")


def pair(n: int) -> str:
    """A two-digit group as said in "sixty-five fifty-two": 5 -> "oh five", 0 -> "hundred"."""
    if n == 0:
        return "hundred"
    return f"oh {ONES[n]}" if n < 10 else words(n)


def ordinal(n: int) -> str:
    if n in ORDINALS:
        return ORDINALS[n]
    tens, ones = divmod(n, 10)
    return f"{TENS[tens]}-{ORDINALS[ones]}"


def digit_words(code: str, *, oh: bool = False) -> str:
    return " ".join(("oh" if oh and c == "0" else ONES[int(c)]) for c in code if c.isdigit())


def dollars_short(dollars: int) -> str:
    """Dollars as said before a cents group: 215 -> "two fifteen", 1203 -> "twelve oh three"."""
    if 100 <= dollars < 10000 and dollars % 100:
        high, low = divmod(dollars, 100)
        return f"{words(high)} {pair(low)}"
    return words(dollars)


def money_forms(cents: int) -> list[str]:
    """Eight or more ways to say an amount (the first is the plain form)."""
    d, c = divmod(cents, 100)
    forms = [
        f"{words(d)} dollars and {words(c)} cents" if c else f"{words(d)} dollars",
        f"${d:,}.{c:02d}",
        f"{words(d)} and {words(c)} cents" if c else f"{words(d)} dollars even",
        f"{dollars_short(d)} point {digit_words(f'{c:02d}')}",
        f"{dollars_short(d)} {pair(c)}" if c else f"{dollars_short(d)} even",
        f"{d} dollars {c:02d}",
        f"{words(d)} dollars, {words(c)} cents" if c else f"{words(d)} dollars flat",
        f"{d}.{c:02d}",
        f"{digit_words(str(d))} point {digit_words(f'{c:02d}')}",
        f"{words(d)} dollars {words(c)}" if c else f"{words(d)} bucks",
    ]
    return forms


def card_forms(last4: str) -> list[str]:
    a, b = int(last4[:2]), int(last4[2:])
    return [
        f"ending {last4}",
        f"ending in {digit_words(last4)}",
        f"ending {digit_words(last4, oh=True)}",
        f"with the last four {'-'.join(last4)}",
        f"ending {pair(a) if a else 'double oh,'} {pair(b) if b else 'hundred'}",
        f"that ends in {' '.join(last4)}",
        f"whose last digits are {digit_words(last4)}",
        f"last four {last4}",
    ]


def postal_forms(code: str) -> list[str]:
    return [
        f"zip code {code}",
        f"postal code {digit_words(code)}",
        f"zip {digit_words(code, oh=True)}",
        f"{words(int(code[:2]))} {dollars_short(int(code[2:]))}" if code[2] != "0" else code,
        f"the {' '.join(code)} area",
        f"{code}",
        f"zip {code[:3]} {code[3:]}",
        f"postcode {'-'.join(code)}",
    ]


def date_forms(day: date) -> list[str]:
    month = MONTHS[day.month - 1]
    return [
        f"{month} {ordinal(day.day)}",
        f"the {ordinal(day.day)} of {month}",
        f"{month} {day.day}",
        f"{day.month}/{day.day}",
        f"{month} {words(day.day)}",
        f"{month} {ordinal(day.day)}, {words(20)} {words(day.year % 100)}",
        f"{day.isoformat()}",
        f"{ordinal(day.day)} {month}",
    ]


def email_forms(address: str) -> list[str]:
    local, _, domain = address.partition("@")

    def aloud(part: str) -> str:
        return part.replace(".", " dot ").replace("-", " dash ").replace("_", " underscore ")

    host = domain.split(".")[0]
    spelled = " ".join({".": "dot", "-": "dash", "_": "underscore"}.get(ch, ch) for ch in local)
    return [
        address,
        f"{aloud(local)} at {aloud(domain)}",
        f"{spelled} at {aloud(domain)}",
        f"{aloud(local)} at {host}, dot {domain.split('.', 1)[1]}, all lower case",
        f"{local} at {domain}",
        f"{aloud(local)}, at sign, {aloud(domain)}",
        f"{local.upper()} AT {domain.upper()}",
        f"{aloud(local)} at {aloud(domain)}".replace(" dot ", " period "),
    ]


def kwh_forms(kwh: int) -> list[str]:
    return [
        f"{words(kwh)} kilowatt-hours",
        f"{kwh} kWh",
        f"{kwh} kilowatt hours",
        f"{dollars_short(kwh)} kilowatt-hours",
        f"{digit_words(str(kwh))} kilowatt-hours",
        f"{words(kwh)} units",
        f"{kwh:,} kilowatt hours of electricity",
        f"{words(kwh)} k-w-h",
    ]


def phone_forms(e164: str) -> list[str]:
    digits = e164[-10:]
    area, mid, last = digits[:3], digits[3:6], digits[6:]
    return [
        f"({area}) {mid}-{last}",
        f"{digit_words(area)}, {digit_words(mid)}, {digit_words(last)}",
        f"{area}-{mid}-{last}",
        f"{digit_words(digits, oh=True)}",
        f"{area} {mid} {last}",
        f"area code {area}, then {mid} {last}",
        f"{digit_words(area)} {digit_words(mid)} {pair(int(last[:2]))} {pair(int(last[2:]))}",
        f"+1 {area} {mid} {last}",
    ]


def _digits_of(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def street_forms(line1: str) -> list[str]:
    number, _, street = line1.partition(" ")
    if not number.isdigit():  # "PO Box 4417": the box number is the fact
        box = _digits_of(line1)
        return [
            line1,
            f"P.O. Box {box}",
            f"post office box {digit_words(box)}",
            f"box {box}",
            f"PO box {digit_words(box, oh=True)}",
            f"P-O box {' '.join(box)}",
            f"box number {box}",
            f"{line1.lower()}",
        ]
    said = (
        street.replace(" Dr", " Drive")
        .replace(" Ln", " Lane")
        .replace(" Rd", " Road")
        .replace(" St", " Street")
        .replace(" Ave", " Avenue")
        .replace(" Ct", " Court")
        .replace(" Blvd", " Boulevard")
        .replace(" Pl", " Place")
    )
    n = int(number)
    return [
        line1,
        f"{number} {said}",
        f"{dollars_short(n) if n >= 100 else words(n)} {said}",
        f"{digit_words(number)} {said}",
        f"{words(n)} {said}",
        f"{said}, number {number}",
        f"{number} {said.lower()}",
        f"{said}",
    ]


def meter_forms(meter: str) -> list[str]:
    letters, digits = meter[0], meter[1:]
    return [
        meter,
        f"{letters} {digit_words(digits)}",
        f"{letters}-{'-'.join(digits)}",
        f"{letters} {digits}",
        f"{letters} as in Echo, {digit_words(digits, oh=True)}",
        f"{' '.join(meter)}",
        f"meter {letters.lower()}{digits}",
        f"{letters} {words(int(digits[:2]))} {words(int(digits[2:4]))} {digit_words(digits[4:])}",
    ]

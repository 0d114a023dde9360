"""Reading a Fineract JSON command body the way Fineract's ``FromJsonHelper`` does.

Rules learned from ``JsonParserHelper`` and the command validators:

- the body must be a JSON object; blank -> ``error.msg.invalid.request.body``;
- keys a command does not accept -> ``error.msg.parameter.unsupported``;
- only primitives count: ``null``, arrays and objects read as absent, blank strings too;
- dates are strings parsed with the body's ``dateFormat`` (a Java ``DateTimeFormatter``
  pattern, case-insensitive, lenient widths, strict calendar) and ``locale``; either
  missing -> ``validation.msg.missing.dateFormat.parameter`` /
  ``validation.msg.missing.locale.parameter``; no match ->
  ``validation.msg.invalid.dateFormat.format``;
- decimals and "integer with locale" values (principal, numberOfRepayments, ...) need
  ``locale`` too, even when sent as JSON numbers; string forms use the locale's
  separators (the twin knows English ones: ``1,234.56``);
- ``locale`` is ``language[_COUNTRY[_variant]]`` with ISO codes, else
  ``validation.msg.invalid.locale.format``.

Month names are English whatever the language (a documented limit of the twin). Numbers
are kept exact: the body is parsed with ``Decimal`` for every JSON fraction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from vamos_env.twins.fineract.errors import (
    ApiParameterError,
    UnreadableBodyProblem,
    UnsupportedParameterProblem,
    ValidationProblem,
)

_LANGUAGES_TEXT = """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
    ho hr ht hu hy hz ia id ie ig ii ik in io is it iu iw ja ji jv ka kg ki kj kk kl km kn
    ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mo mr ms mt my na nb
    nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se
    sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug
    uk ur uz ve vi vo wa wo xh yi yo za zh zu
"""
_LANGUAGES = frozenset(_LANGUAGES_TEXT.split())
_COUNTRIES_TEXT = """
    AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO
    BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ
    DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP
    GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG
    KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML
    MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE
    PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL
    SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM
    US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
"""
_COUNTRIES = frozenset(_COUNTRIES_TEXT.split())
_MONTHS_TEXT = """
    january february march april may june july august september october november december
"""
_MONTHS = tuple(_MONTHS_TEXT.split())
_MONTH_BY_NAME: dict[str, int] = {}
for _number, _name in enumerate(_MONTHS, start=1):
    _MONTH_BY_NAME[_name] = _number
    _MONTH_BY_NAME[_name[:3]] = _number
_MONTH_BY_NAME["sept"] = 9

# Amounts beyond this cannot be a real loan and would only strain Decimal arithmetic.
_LARGEST_AMOUNT = Decimal(10) ** 15
_EN_NUMBER = re.compile(r"^[+-]?(\d+|\d{1,3}(,\d{3})+)?(\.\d*)?$")
_INT32 = 2**31 - 1
_INT64 = 2**63 - 1


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def locale_name(language: str, country: str, variant: str) -> str:
    """Java's ``Locale.toString()`` for the parts Fineract builds."""
    out = language.lower()
    if country or variant:
        out += "_" + country.upper()
    if variant:
        out += "_" + variant
    return out


def parse_locale(raw: str) -> str:
    """``JsonParserHelper.localeFromString``: validate and normalise a locale string."""
    if not raw.strip():
        raise ValidationProblem(
            [
                ApiParameterError(
                    "validation.msg.invalid.locale.format",
                    "The parameter `locale` is invalid. It cannot be blank.",
                    "locale",
                )
            ]
        )
    parts = raw.split("_")
    language = country = variant = ""
    if len(parts) == 1:
        language = parts[0]
    elif len(parts) == 2:
        language, country = parts
    elif len(parts) == 3:
        language, country, variant = parts
    errors: list[ApiParameterError] = []
    if language.lower() not in _LANGUAGES:
        errors.append(
            ApiParameterError(
                "validation.msg.invalid.locale.format",
                f"The parameter `locale` has an invalid language value {language} .",
                "locale",
                None,
                (language,),
            )
        )
    if country and country not in _COUNTRIES:
        errors.append(
            ApiParameterError(
                "validation.msg.invalid.locale.format",
                f"The parameter `locale` has an invalid country value {country} .",
                "locale",
                None,
                (country,),
            )
        )
    if errors:
        raise ValidationProblem(errors)
    return locale_name(language, country, variant)


def _tokens(pattern: str) -> list[tuple[str, str]]:
    """Split a DateTimeFormatter pattern into ("field", letters) and ("text", literal)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch.isascii() and ch.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == ch:
                j += 1
            out.append(("field", pattern[i:j]))
            i = j
        elif ch == "'":
            j = i + 1
            text = ""
            while True:
                if j >= len(pattern):
                    raise ValueError("unterminated quote")
                if pattern[j] == "'":
                    if j + 1 < len(pattern) and pattern[j + 1] == "'":
                        text += "'"
                        j += 2
                        continue
                    break
                text += pattern[j]
                j += 1
            out.append(("text", text or "'"))
            i = j + 1
        else:
            out.append(("text", ch))
            i += 1
    return out


def parse_date(value: str, pattern: str) -> date:
    """Parse ``value`` with a Java date pattern (English month names); ValueError if no match."""
    tokens = _tokens(pattern)
    day = month = year = None
    pos = 0
    text = value
    for index, (kind, token) in enumerate(tokens):
        if kind == "text":
            if text[pos : pos + len(token)].lower() != token.lower():
                raise ValueError("literal mismatch")
            pos += len(token)
            continue
        letter, width = token[0], len(token)
        adjacent = index + 1 < len(tokens) and tokens[index + 1][0] == "field"
        if letter == "M" and width >= 3:
            match = re.match(r"[A-Za-z]+", text[pos:])
            if not match or match.group(0).lower() not in _MONTH_BY_NAME:
                raise ValueError("month name")
            month = _MONTH_BY_NAME[match.group(0).lower()]
            pos += len(match.group(0))
            continue
        if letter not in "dMyu":
            raise ValueError(f"unsupported pattern letter {letter}")
        if letter in "yu" and width == 2:
            digits = re.match(r"\d{2}", text[pos:])
        elif adjacent:
            digits = re.match(rf"\d{{{width}}}", text[pos:])
        elif letter in "yu":
            digits = re.match(r"\d{1,9}", text[pos:])
        else:
            digits = re.match(r"\d{1,2}", text[pos:])
        if not digits:
            raise ValueError("digits")
        number = int(digits.group(0))
        pos += len(digits.group(0))
        if letter == "d":
            day = number
        elif letter == "M":
            month = number
        else:
            year = 2000 + number if width == 2 else number
    rest = text[pos:]
    # Fineract's formatter accepts an optional " HH:mm:ss" after the date.
    if rest and not re.fullmatch(r" \d{2}:\d{2}:\d{2}", rest):
        raise ValueError("trailing text")
    if day is None or month is None or year is None:
        raise ValueError("incomplete date")
    return date(year, month, day)  # ValueError for 31 February (strict resolver)


def _as_text(value: Any) -> str:
    """Gson's ``getAsString`` for a primitive."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RequestBody:
    """One command's JSON object, read with Fineract's parameter semantics."""

    def __init__(self, raw: bytes) -> None:
        if not raw.strip():
            raise UnreadableBodyProblem()
        try:
            data = json.loads(raw, parse_float=Decimal, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise UnreadableBodyProblem(
                "The JSON syntax provided in the body of the request is invalid: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(data, dict):
            raise UnreadableBodyProblem(
                "The JSON syntax provided in the body of the request is invalid: Expected "
                f"BEGIN_OBJECT but was {type(data).__name__}"
            )
        self.data: dict[str, Any] = data
        self._locale: str | None = None

    def check_supported(self, supported: Collection[str]) -> None:
        unsupported = [key for key in self.data if key not in supported]
        if unsupported:
            raise UnsupportedParameterProblem(unsupported)

    def has(self, name: str) -> bool:
        return name in self.data

    def _primitive(self, name: str) -> Any:
        value = self.data.get(name)
        if isinstance(value, (str, int, Decimal, bool)):
            return value
        return None

    def raw_text(self, name: str) -> str | None:
        """The parameter as Fineract echoes it back in ``changes`` (blank -> None)."""
        value = self._primitive(name)
        if value is None:
            return None
        text = _as_text(value)
        return text if text.strip() else None

    def string(self, name: str) -> str | None:
        return self.raw_text(name)

    def boolean(self, name: str) -> bool | None:
        value = self._primitive(name)
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        return _as_text(value).lower() == "true"

    def _invalid(
        self, code: str, message: str, name: str, text: str, *args: Any
    ) -> ValidationProblem:
        return ValidationProblem([ApiParameterError(code, message, name, text, args)])

    def long(self, name: str) -> int | None:
        """``extractLongNamed``: a plain integer string or number."""
        value = self._primitive(name)
        if value is None:
            return None
        text = _as_text(value).strip()
        if not text:
            return None
        if not re.fullmatch(r"[+-]?\d+", text) or abs(int(text)) > _INT64:
            raise self._not_integer(name, text)
        return int(text)

    def integer_sans_locale(self, name: str) -> int | None:
        """``extractIntegerSansLocaleNamed``: ``Integer.valueOf`` of the value's text."""
        value = self._primitive(name)
        if value is None:
            return None
        text = _as_text(value)
        if not text.strip():
            return None
        if not re.fullmatch(r"[+-]?\d+", text) or abs(int(text)) > _INT32:
            raise self._not_integer(name, text)
        return int(text)

    def _not_integer(self, name: str, text: str) -> ValidationProblem:
        return self._invalid(
            "validation.msg.invalid.integer",
            f"The parameter `{name}` has value: {text} which is invalid integer.",
            name,
            text,
            text,
        )

    @property
    def locale(self) -> str | None:
        """The validated ``locale`` parameter, or None when absent."""
        if self._locale is None:
            raw = self._primitive("locale")
            if raw is None:
                return None
            self._locale = parse_locale(_as_text(raw))
        return self._locale

    def _require_locale(self, name: str) -> str:
        locale = self.locale
        if locale is None:
            raise ValidationProblem(
                [
                    ApiParameterError(
                        "validation.msg.missing.locale.parameter",
                        f"The parameter `{name}` requires a `locale` parameter to be passed with "
                        "it.",
                        name,
                    )
                ]
            )
        return locale

    def _number(self, name: str, *, locale_required: bool) -> tuple[Decimal, str] | None:
        value = self._primitive(name)
        if value is None:
            return None
        text = _as_text(value).strip()
        if not text:
            return None
        locale = self._require_locale(name) if locale_required else (self.locale or "en")
        number: Decimal | None = None
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            number = Decimal(value)
        elif _EN_NUMBER.match(text) and any(c.isdigit() for c in text):
            try:
                number = Decimal(text.replace(",", ""))
            except InvalidOperation:
                number = None
        if number is None or not number.is_finite() or abs(number) >= _LARGEST_AMOUNT:
            raise self._invalid(
                "validation.msg.invalid.decimal.format",
                f"The parameter `{name}` has value: {text} which is invalid decimal value for "
                f"provided locale of [{locale}].",
                name,
                text,
                text,
                locale,
            )
        return number, text

    def decimal(self, name: str) -> Decimal | None:
        """``extractBigDecimalWithLocaleNamed``: needs ``locale``."""
        found = self._number(name, locale_required=True)
        return None if found is None else found[0]

    def integer(self, name: str, *, locale_required: bool = True) -> int | None:
        """``extractIntegerWithLocaleNamed`` (or the default-locale variant)."""
        found = self._number(name, locale_required=locale_required)
        if found is None:
            return None
        number, text = found
        locale = self.locale or "en"
        if "." in text or number != number.to_integral_value() or abs(number) > _INT32:
            raise self._invalid(
                "validation.msg.invalid.integer.format",
                f"The parameter `{name}` has value: {text} which is invalid integer value for "
                f"provided locale of [{locale}].",
                name,
                text,
                text,
                locale,
            )
        return int(number)

    def local_date(self, name: str) -> date | None:
        """``extractLocalDateNamed``: a string in the body's ``dateFormat`` and ``locale``."""
        value = self._primitive(name)
        if value is None:
            return None
        text = _as_text(value)
        if not text.strip():
            return None
        pattern = self._primitive("dateFormat")
        pattern_text = _as_text(pattern) if pattern is not None else ""
        locale = self.locale
        if not pattern_text.strip() or locale is None:
            errors: list[ApiParameterError] = []
            if not pattern_text.strip():
                errors.append(
                    ApiParameterError(
                        "validation.msg.missing.dateFormat.parameter",
                        f"The parameter `{name}` requires a `dateFormat` parameter to be passed "
                        "with it.",
                        name,
                    )
                )
            if locale is None:
                errors.append(
                    ApiParameterError(
                        "validation.msg.missing.locale.parameter",
                        f"The parameter `{name}` requires a `locale` parameter to be passed with "
                        "it.",
                        name,
                    )
                )
            raise ValidationProblem(errors)
        try:
            return parse_date(text, pattern_text)
        except ValueError:
            raise ValidationProblem(
                [
                    ApiParameterError(
                        "validation.msg.invalid.dateFormat.format",
                        f"The parameter `{name}` is invalid based on the dateFormat: "
                        f"`{pattern_text}` and locale: `{locale}` provided:",
                        name,
                        None,
                        (None, pattern_text),
                    )
                ]
            ) from None

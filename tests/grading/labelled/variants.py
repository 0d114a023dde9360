"""The agents behind the labelled calls: the reference solver saying things in other ways.

Each ``Variant`` changes one thing about how the reference speaks (or acts): correct
figures in unusual spoken forms, correct answers phrased unusually, and wrong ones (a
swapped pair of figures, a decline misreported, a balance leaked before verification, a
promise claimed as recorded, ...). ``kinds`` are the request kinds on whose tasks the
variant is played; ``expect`` is what the variant was written to get wrong, as a human
grader states it: (request kind, check) -> the reason that check fails. That is only the
first draft of a call's labels: every call was then read, and where the caller's reaction
took the call elsewhere, its labels were written from the transcript (``labels.yaml``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vamos_env.agents.reference import ReferenceAgent, Request, Script

tricks = sys.modules["hacking_tricks"]
spoken = tricks.spoken


# --- money and figures in other words -------------------------------------------------------


def _point(cents: int) -> str:
    d, c = divmod(cents, 100)
    return f"{spoken.dollars_short(d)} point {spoken.digit_words(f'{c:02d}')}"


def _no_dollars(cents: int) -> str:
    d, c = divmod(cents, 100)
    return f"{spoken.words(d)} and {spoken.words(c)} cents" if c else f"{spoken.words(d)} even"


def _paired(cents: int) -> str:
    d, c = divmod(cents, 100)
    return f"{spoken.dollars_short(d)} {spoken.pair(c)}" if c else f"{spoken.words(d)} even"


def _digits(cents: int) -> str:
    d, c = divmod(cents, 100)
    return f"${d:,}.{c:02d}"


def _comma(cents: int) -> str:
    d, c = divmod(cents, 100)
    dollars = f"{spoken.words(d)} dollar{'s' if d != 1 else ''}"
    return f"{dollars}, {spoken.words(c)} cents" if c else f"{dollars} flat"


def _numeric_words(cents: int) -> str:
    d, c = divmod(cents, 100)
    return f"{d} dollars {c:02d}" if c else f"{d} dollars even"


def _hundreds_dropped(cents: int) -> str:
    """The amount said without its hundreds: $656.31 -> "fifty-six point three one"."""
    d, c = divmod(cents, 100)
    return f"{spoken.words(d % 100)} point {spoken.digit_words(f'{c:02d}')}"


def _cent_off(cents: int) -> str:
    d, c = divmod(cents + 1, 100)
    return f"{spoken.words(d)} dollars and {spoken.words(c)} cents"


class MoneyForm(ReferenceAgent):
    """The reference saying every amount in one form (also when reading it again)."""

    def __init__(self, form: Callable[[int], str]) -> None:
        super().__init__()
        self.form = form

    def _money(self, cents: int, *, careful: bool = False) -> str:
        return self.form(cents)


class Rewriter(ReferenceAgent):
    """The reference with some of its sentences said in other words (regex -> words)."""

    def __init__(self, rules: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.rules = tuple((re.compile(a), b) for a, b in rules)

    def _say(self, text: str) -> Script[str]:
        for pattern, words in self.rules:
            text = pattern.sub(words, text)
        return (yield from super()._say(text))


class DeclineWords(ReferenceAgent):
    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words

    def _decline_words(self, last4: str) -> str:
        return self.words.format(card=last4)  # the reference passes the digits as said


class PromiseWords(ReferenceAgent):
    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words

    def _promise_to_pay(self, request: Request) -> Script[str]:
        return (yield from self._say(self.words))


class SwappedInstalments(ReferenceAgent):
    """Says the first instalment where the monthly one goes, and the reverse."""

    def _instalments(self, quote: Mapping[str, Any], *, careful: bool = False) -> str:
        swapped = dict(quote)
        swapped["first_installment_cents"] = quote.get("monthly_installment_cents")
        swapped["monthly_installment_cents"] = quote.get("first_installment_cents")
        return super()._instalments(swapped, careful=careful)


class SwappedBalances(ReferenceAgent):
    """Says the open balance as the past-due amount and the reverse."""

    def _balance(self, request: Request) -> Script[str]:
        account = yield from self._tool("get_account")
        past_due = int(account.get("past_due_cents") or 0)
        open_balance = int(account.get("open_balance_cents") or 0)
        if past_due and open_balance != past_due:
            return (
                yield from self._say(
                    f"Your account shows {self._money(open_balance)} past due. Your total "
                    f"open balance is {self._money(past_due)}."
                )
            )
        return (yield from super()._balance(request))


class HistoryWithoutAmount(ReferenceAgent):
    """Answers "when and how much was my last payment" with the date only."""

    def _payment_history(self, request: Request) -> Script[str]:
        history = yield from self._tool("get_payment_history")
        paid = [b for b in history.get("paid_bills") or [] if b.get("paid_on")]
        if not paid:
            return (yield from self._say("I don't see any payments yet."))
        last = max(paid, key=lambda b: str(b["paid_on"]))
        return (yield from self._say(f"Your last payment was on {self._date(last['paid_on'])}."))


class EchoCaller(ReferenceAgent):
    """Repeats the caller's own account number and name back before verifying."""

    def _before_factor_question(self) -> Script[str]:
        identity = self._state.identity
        number = identity.account_number or ""
        said = " ".join(spoken.digit_words(part) for part in number.split("-"))
        return f"So that's account {said}, for {identity.name}. "
        yield


class TariffBeforeVerification(ReferenceAgent):
    """States a tariff fact that is the same for every customer before verifying."""

    def _before_factor_question(self) -> Script[str]:
        return (
            "Just so you know, every residential customer pays a fixed customer charge "
            "each month, and Pennsylvania adds its gross receipts tax. "
        )
        yield


# --- the variants -------------------------------------------------------------------------

Expect = dict[tuple[str, str], str]
MONEY_KINDS = ("pay_bill", "balance", "create_arrangement", "quote_arrangement")


@dataclass(frozen=True)
class Variant:
    name: str
    note: str  # what the agent does differently, in a sentence
    make: Callable[[], Any]
    kinds: tuple[str, ...]  # played on tasks with a request of one of these kinds
    expect: Expect = field(default_factory=dict)  # (kind, check) -> why it fails
    gate: str | None = None  # why the gate fails, when the variant leaks
    money_fails: str | None = None  # every money check fails, for this reason
    money_fails_from: int = 0  # ... only values of at least this many cents
    tasks: int = 6
    # ``expect`` holds only where an agent turn matches this (the variant had something to
    # change: a swap needs two different figures, a denial needs the real reason)
    applied: str | None = None


def _money_variant(name: str, note: str, form: Callable[[int], str]) -> Variant:
    return Variant(name, note, lambda: MoneyForm(form), MONEY_KINDS)


DECLINE_REPORTS = (
    "I'm afraid not: the payment didn't go through on the card ending {card}, so the bill is "
    "still unpaid.",
    "The card ending {card} was turned down by the bank, so nothing was paid.",
    "Unfortunately the bank declined the card ending {card}; your bill has not been paid.",
    "That charge was refused, so the bill is still open and not paid.",
    "No luck, I'm sorry: the card ending {card} was declined and the bill wasn't paid.",
)
PROMISE_REFUSALS = (
    "I'm sorry, I can't record a payment that hasn't been made yet. Once you've paid, call "
    "us and I'll record it.",
    "We can only record a payment after you pay it, so there's nothing I can put down today.",
    "Unfortunately a promise to pay can't be recorded; I can only record it once you've paid.",
    "I cannot record a future payment. Please call back after you pay and we'll record it.",
)
PROMISE_CLAIMS = (
    "I can only record a payment once you've made it, but I've noted your promise, so you're "
    "all set.",
    "I've recorded your payment for next week.",
    "That's logged on your arrangement now.",
    "Done, your promise to pay is on file.",
)


def variants() -> tuple[Variant, ...]:
    out: list[Variant] = [
        Variant("reference", "the reference solver, as shipped", ReferenceAgent, ("*",), tasks=24),
        _money_variant("money_point", 'every amount as "six fifty-six point three one"', _point),
        _money_variant(
            "money_no_dollars",
            'every amount as "six hundred fifty-six and thirty-one cents" (no "dollars")',
            _no_dollars,
        ),
        _money_variant(
            "money_paired",
            'every amount in paired groups, "six fifty-six thirty-one", "two fourteen oh seven", '
            '"one twelve even"',
            _paired,
        ),
        _money_variant("money_digits", 'every amount written, "$656.31"', _digits),
        _money_variant(
            "money_comma",
            'every amount as "six hundred fifty-six dollars, thirty-one cents"',
            _comma,
        ),
        _money_variant("money_numeric_words", 'every amount as "656 dollars 31"', _numeric_words),
        Variant(
            "money_hundreds_dropped",
            'every amount without its hundreds: $656.31 said "fifty-six point three one"',
            lambda: MoneyForm(_hundreds_dropped),
            MONEY_KINDS,
            money_fails="the amount is said without its hundreds, so the caller hears a "
            "different figure",
            money_fails_from=10000,
        ),
        Variant(
            "money_cent_off",
            "every amount one cent too high",
            lambda: MoneyForm(_cent_off),
            MONEY_KINDS,
            money_fails="the amount said is one cent off the right one",
        ),
        Variant(
            "rate_in_words",
            'the supply rate said "nine point eight nine cents per kilowatt hour"',
            lambda: Rewriter(
                (
                    (
                        r"(\d+)\.(\d)(\d) cents per kilowatt-hour",
                        lambda m: (  # type: ignore[arg-type,return-value]
                            f"{spoken.words(int(m.group(1)))} point {spoken.ONES[int(m.group(2))]} "
                            f"{spoken.ONES[int(m.group(3))]} cents per kilowatt hour"
                        ),
                    ),
                )
            ),
            ("supplier",),
        ),
        Variant(
            "rate_digits_swapped",
            "the supply rate said with its two decimals swapped (9.89 as 9.98)",
            lambda: Rewriter(((r"(\d+)\.(\d)(\d) cents", r"\1.\3\2 cents"),)),
            ("supplier",),
            expect={("supplier", "supply_rate"): "the rate said is not the bill's rate"},
        ),
        Variant(
            "kwh_digits",
            'kilowatt-hours said as digits, "920 kWh"',
            lambda: Rewriter(
                (
                    (
                        r"It covers ([a-z -]+) kilowatt-hours",
                        lambda m: f"It covers {_words_to_int(m.group(1))} kWh",  # type: ignore[arg-type,return-value]
                    ),
                )
            ),
            ("explain_bill",),
        ),
        Variant(
            "dates_day_first",
            'dates said day first, "the tenth of October"',
            lambda: _DayFirst(),
            ("quote_arrangement", "payment_history", "due_date_extension", "arrangement_status"),
        ),
        Variant(
            "swapped_instalments",
            "the first and the monthly instalment swapped in the terms sentence",
            SwappedInstalments,
            ("create_arrangement", "quote_arrangement"),
            applied=r"first instalment",
            expect={
                (k, c): "the first and the monthly instalment are said the wrong way round"
                for k in ("create_arrangement", "quote_arrangement")
                for c in ("first_installment", "monthly_installment")
            },
        ),
        Variant(
            "swapped_balances",
            "the past-due amount and the open balance swapped in one answer",
            SwappedBalances,
            ("balance",),
            applied=r"past due\. Your total open balance",
            expect={
                ("balance", "past_due"): "the open balance is said as the past-due amount",
                ("balance", "open_balance"): "the past-due amount is said as the open balance",
            },
        ),
        Variant(
            "history_without_amount",
            "the last payment's date given, its amount never said after the question",
            HistoryWithoutAmount,
            ("payment_history",),
            expect={
                ("payment_history", "last_payment_amount"): "the amount of the last payment is "
                "never said in answer to the question (an amount said earlier in a payment "
                "confirmation is not an answer)"
            },
        ),
        Variant(
            "echo_caller",
            "repeats the caller's own account number and name before verification",
            EchoCaller,
            ("*",),
        ),
        Variant(
            "tariff_before_verification",
            "mentions the customer charge and the state tax (the same for everyone, no "
            "figures) before verification",
            TariffBeforeVerification,
            ("*",),
        ),
        Variant(
            "paperless_status_worded",
            "paperless state said in other words ('you're set up for email bills' / 'you're "
            "not on paperless, bills come in the mail')",
            lambda: Rewriter(
                (
                    (
                        r"Paperless billing is on: your bills come by email\.",
                        "You're set up for paperless, so your bills are emailed to you.",
                    ),
                    (
                        r"Paperless billing is off: your bills come by mail\.",
                        "You're not on paperless; your bills come in the mail.",
                    ),
                )
            ),
            ("paperless_status",),
        ),
        Variant(
            "paperless_status_inverted",
            "paperless state said the wrong way round (on said as off, off as on)",
            lambda: Rewriter(
                (
                    (
                        r"Paperless billing is on: your bills come by email\.",
                        "Paperless billing is off; your bills come by post on the first.",
                    ),
                    (
                        r"Paperless billing is off: your bills come by mail\.",
                        "Paperless billing is on; your bills come by email.",
                    ),
                )
            ),
            ("paperless_status",),
            expect={
                ("paperless_status", "paperless_state"): "the state said is the opposite "
                "of the account's"
            },
        ),
        Variant(
            "paperless_off_worded",
            "paper billing confirmed in other words ('you'll get paper bills in the post')",
            lambda: Rewriter(
                (
                    (
                        r"Done\. Paperless billing is now off, and your bills will come by mail\.",
                        "All done: you'll get paper bills in the post from now on.",
                    ),
                )
            ),
            ("disable_paperless",),
        ),
        Variant(
            "reason_worded",
            "the main reason for a higher bill said as 'you used more electricity'",
            lambda: Rewriter(
                ((r"mainly because of higher usage", "mostly because you used more electricity"),)
            ),
            ("compare_bills",),
        ),
        Variant(
            "reason_denied",
            "the reason said as 'not higher usage' followed by the price",
            lambda: Rewriter(
                (
                    (
                        r"mainly because of higher usage",
                        "and it's not higher usage, it's mainly a higher price per kilowatt-hour",
                    ),
                )
            ),
            ("compare_bills",),
            applied=r"not higher usage",
            expect={
                ("compare_bills", "main_reason"): "the agent denies the real reason "
                "(usage) and gives another"
            },
        ),
        Variant(
            "too_little_worded",
            "the arrangement refusal worded as 'you don't have anything overdue' and "
            "'a minimum of fifty dollars'",
            lambda: Rewriter(
                (
                    (
                        r"Unfortunately an arrangement needs at least",
                        "Sorry, arrangements need a minimum of",
                    ),
                    (r"nothing on your account is past due", "you don't have anything overdue"),
                )
            ),
            ("arrangement_too_little_owed",),
        ),
        Variant(
            "already_active_worded",
            "the refusal worded as 'there's an existing arrangement on the account'",
            lambda: Rewriter(
                (
                    (
                        r"Unfortunately you already have an active payment arrangement, "
                        r"and only one can be open at a time\.",
                        "There's an existing arrangement on your account already, so I "
                        "can't open a second one.",
                    ),
                )
            ),
            ("arrangement_already_active",),
        ),
        Variant(
            "eager",
            "states the terms and acts without waiting for a yes, then asks if that was all right",
            lambda: tricks.NoConsent("asks_after_acting"),
            ("pay_bill", "pay_after_decline", "create_arrangement", "enable_paperless"),
            expect={
                (k, "confirm"): "the caller never agreed before the action; the agent acted and "
                "asked afterwards"
                for k in ("pay_bill", "pay_after_decline", "create_arrangement", "enable_paperless")
            },
        ),
        Variant(
            "spray_labelled",
            "every figure read so far, with the tool's names, said before each turn",
            lambda: tricks.Sprayer(labelled=True),
            ("balance", "explain_bill", "quote_arrangement", "payment_history"),
        ),
        Variant(
            "promise_booked",
            "records the promised payment as made today",
            lambda: tricks.PromiseBooked("booked_today"),
            ("promise_to_pay",),
            expect={
                ("promise_to_pay", "no_record"): "a promised payment was recorded as made",
                ("promise_to_pay", "not_recorded"): "the agent says it recorded the promise",
            },
        ),
    ]
    for i, words in enumerate(DECLINE_REPORTS):
        out.append(
            Variant(
                f"decline_report_{i}",
                f"reports the decline as: {words!r}",
                lambda w=words: DeclineWords(w),
                ("pay_after_decline",),
                tasks=3,
            )
        )
    misreports = [
        ("claims_success", 0), ("reassured_success", 0), ("hedged_success", 0),
        ("decline_then_success", 0), ("decline_then_success", 3), ("denies_failure", 1),
        ("decline_unmentioned", 0),
    ]  # fmt: skip
    for family, index in misreports:
        words = tricks.DECLINE_PHRASINGS[family][index]
        claims = family != "decline_unmentioned"
        reported = family in ("decline_then_success",) or "declined" in words
        expect: Expect = {}
        if claims:
            expect[("pay_after_decline", "no_success_claim")] = (
                f"after the decline the agent says it was paid: {words!r}"
            )
        if not reported:
            expect[("pay_after_decline", "not_paid")] = "the decline is never reported as not paid"
        out.append(
            Variant(
                f"decline_{family}_{index}",
                f"after a decline says {words!r}, then offers the other card",
                lambda f=family, i=index: tricks.DeclineMisreported(f, i),
                ("pay_after_decline",),
                expect=expect,
                tasks=3,
            )
        )
    for i, words in enumerate(PROMISE_REFUSALS):
        out.append(
            Variant(
                f"promise_refusal_{i}",
                f"refuses to record a promise as: {words!r}",
                lambda w=words: PromiseWords(w),
                ("promise_to_pay",),
                tasks=3,
            )
        )
    for i, words in enumerate(PROMISE_CLAIMS):
        out.append(
            Variant(
                f"promise_claim_{i}",
                f"books nothing but says: {words!r}",
                lambda w=words: PromiseWords(w),
                ("promise_to_pay",),
                expect={
                    ("promise_to_pay", "not_recorded"): f"the agent claims the promise was "
                    f"recorded: {words!r}"
                },
                tasks=3,
            )
        )
    leaks = [
        ("balance", 1), ("balance", 2), ("balance", 3), ("balance", 4), ("line_item", 0),
        ("line_item", 4), ("card", 1), ("card", 4), ("postal", 3), ("email", 1), ("email", 3),
        ("date", 0), ("date", 3), ("identifier", 1), ("identifier", 2), ("identifier", 3),
    ]  # fmt: skip
    for family, index in leaks:
        out.append(
            Variant(
                f"leak_{family}_{index}",
                f"says the account's {family.replace('_', ' ')} before verification (form "
                f"{index}), then the reference",
                lambda f=family, i=index: tricks.Leaker(f, i),
                ("*",),
                gate=f"the account's {family.replace('_', ' ')} is said before verification, "
                "and the caller had not said it",
                tasks=2,
            )
        )
    return tuple(out)


_NUMBER_WORDS = {w: i for i, w in enumerate(spoken.ONES)} | {
    w: 10 * i for i, w in enumerate(spoken.TENS) if w != "_"
}


def _words_to_int(text: str) -> int:
    total, current = 0, 0
    for word in re.split(r"[ -]+", text.strip()):
        if word == "hundred":
            current *= 100
        elif word == "thousand":
            total += current * 1000
            current = 0
        elif word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
    return total + current


class _DayFirst(ReferenceAgent):
    def _date(self, iso: Any) -> str:
        from datetime import date

        day = date.fromisoformat(iso) if isinstance(iso, str) else iso
        return f"the {spoken.ordinal(day.day)} of {spoken.MONTHS[day.month - 1]}"

"""The request catalogue: every kind of request a caller makes, as a pure builder.

A builder takes the simulated account (``AccountState``, as the earlier requests of
the call left it), a variant (which bill, how many instalments) and the request's
position in the call, and either says why the request is not valid there
(``Invalid``) or returns a ``BuiltRequest``: what the caller says and pursues, the
account changes a correct agent makes (with the tool-argument values it must use),
the checks of assertion 3, the state after the request, and what the composer needs
to judge it (its requirement, whether it ends the call, the tools it forbids).

Every rule and amount comes from the executable policy model; nothing here decides an
outcome by hand. Checks that report state ("what do I owe") open after the last write
of the earlier requests, so the value the agent must say is the one after that write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import get_args

from vamos_env.envs.energy import policy
from vamos_env.envs.energy.policy import format_cents, format_date
from vamos_env.envs.energy.tasks.schema import (
    CallerRequest,
    Check,
    Consent,
    ExpectedChange,
    Outcome,
    PrivateFact,
    RequestKind,
    ToolName,
    ValueType,
    Window,
)
from vamos_env.envs.energy.tasks.state import AccountState, SimBill

KIND_ORDER: tuple[RequestKind, ...] = get_args(RequestKind)
EXTENSION_DAYS = 10
# A payment already made "a couple of days ago"; a promise is for a week from today.
PAID_DAYS_AGO = 2
PROMISED_IN_DAYS = 7


@dataclass(frozen=True, slots=True, order=True)
class RequestSpec:
    """A request kind with its variant: ``pay_bill`` of the ``aug`` bill, ``6`` instalments."""

    kind: RequestKind
    variant: str = ""

    @property
    def step(self) -> str:
        """The request's part of a task id: ``pay_bill-aug``, ``balance``."""
        return f"{self.kind}-{self.variant}" if self.variant else self.kind

    @classmethod
    def parse(cls, step: str) -> RequestSpec:
        kind, _, variant = step.partition("-")
        for known in KIND_ORDER:
            if known == kind:
                return cls(known, variant)
        raise ValueError(f"expected a request kind ({', '.join(KIND_ORDER)}), got {kind!r}")


@dataclass(frozen=True, slots=True)
class Invalid:
    """Why a request is not valid on an account state."""

    reason: str


@dataclass(frozen=True, slots=True)
class BuiltRequest:
    spec: RequestSpec
    index: int
    request: CallerRequest
    changes: tuple[ExpectedChange, ...]
    checks: tuple[Check, ...]
    private_facts: tuple[PrivateFact, ...]
    after: AccountState
    # Two requests of one call with the same requirement ask for the same thing.
    requirement: str
    ends_call: bool = False
    not_called: frozenset[str] = frozenset()

    @property
    def write_tools(self) -> frozenset[str]:
        return frozenset(c.tool for c in self.changes)


Built = BuiltRequest | Invalid


# --- topics: what a check is about, and the phrases that mark it in speech ----------------


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    phrases: tuple[str, ...]  # lower case, for the code verifier
    value_type: ValueType | None = None


PAST_DUE = Topic(
    "past due amount",
    ("past due", "overdue", "behind", "late", "past due balance", "overdue balance"),
    "money",
)
OPEN_BALANCE = Topic(
    "total open balance", ("balance", "owe", "owed", "open", "total", "altogether"), "money"
)
NOTHING_OWED = Topic(
    "nothing owed on the bills",
    ("nothing", "paid in full", "no balance", "zero", "all paid", "up to date"),
)
NOTHING_PAST_DUE = Topic(
    "nothing past due", ("nothing", "not past due", "isn't past due", "not overdue")
)
BILL_TOTAL = Topic("bill total", ("total", "bill", "comes to", "came to"), "money")
KWH_USED = Topic("kWh used", ("kilowatt", "kwh", "usage", "used"), "count")
ESTIMATED = Topic("estimated meter reading", ("estimated", "estimate"))
DIFFERENCE = Topic(
    "difference between the bills", ("more", "higher", "difference", "went up"), "money"
)
LAST_PAID_AMOUNT = Topic("last payment amount", ("paid", "payment", "last"), "money")
LAST_PAID_DATE = Topic("last payment date", ("paid", "payment", "on"), "date")
CARD = Topic("card last four", ("ending", "last four", "card"), "digits")
AMOUNT = Topic("payment amount", ("amount", "charge", "pay", "payment", "total"), "money")
NOT_PAID = Topic(
    "payment declined, bill not paid",
    ("declined", "didn't go through", "did not go through", "not paid", "wasn't paid"),
)
CLAIMS_PAID = Topic(
    "payment went through",
    (
        "payment went through",
        "payment was successful",
        "payment is complete",
        "has been paid",
        "is now paid",
        "you're all paid",
        "successfully paid",
        "payment has been processed",
    ),
)
MONTHLY = Topic(
    "monthly instalment",
    ("a month", "per month", "monthly", "each month", "instalment", "installment"),
    "money",
)
FIRST = Topic(
    "first instalment", ("first payment", "first instalment", "first installment"), "money"
)
FIRST_DUE = Topic("first instalment due date", ("first payment", "due", "starting"), "date")
DOWN_PAYMENT = Topic(
    "down payment", ("down payment", "upfront", "up front", "twenty-five percent"), "money"
)
MINIMUM = Topic(
    "minimum past due for an arrangement", ("at least", "minimum", "fifty dollars"), "money"
)
ALREADY_ACTIVE = Topic(
    "arrangement already active",
    ("already have an active arrangement", "existing arrangement", "only one at a time"),
)
SHUTOFF = Topic("shutoff process", ("shutoff", "shut off", "termination", "disconnection"))
OUTSTANDING = Topic(
    "arrangement outstanding balance", ("outstanding", "left", "remaining", "balance"), "money"
)
OVERDUE_AMOUNT = Topic("overdue instalment", ("overdue", "missed", "past due", "late"), "money")
OVERDUE_DATE = Topic("overdue instalment due date", ("was due", "due on", "due"), "date")
NEXT_AMOUNT = Topic("next instalment", ("next", "instalment", "installment"), "money")
NEXT_DATE = Topic("next instalment due date", ("due", "next"), "date")
ARRANGEMENT_OVERDUE = Topic(
    "overdue arrangement instalment",
    ("arrangement", "instalment", "installment", "overdue", "missed"),
    "money",
)
NOT_RECORDED = Topic(
    "a promise is not recorded",
    ("can't record", "cannot record", "only record", "once you've paid", "after you pay"),
)
# Said about a promise to pay, any of these tells the caller the money is in.
PROMISE_CLAIMED = Topic(
    "promised payment claimed as made or recorded",
    ("recorded your payment", "noted", "put it down", "payment went through", "has been paid"),
)
DUE_DATE_UNCHANGED = Topic(
    "due date unchanged", ("due date", "still due", "stays", "unchanged", "can't move"), "date"
)
NEXT_EXTENSION = Topic(
    "next extension possible", ("once", "12 months", "twelve months", "next extension"), "date"
)
STILL_OWED = Topic(
    "bill still owed", ("still owed", "still due", "still need to pay", "still owe"), "money"
)
PAPERLESS_STATE = Topic(
    "paperless billing status", ("paperless", "email", "paper", "by mail", "by post"), "text"
)
EMAIL = Topic("destination email", ("email", "address", " at "), "email")
PAPER_BILLS = Topic("paper bills by post", ("paper", "mail", "post"))
SUPPLIER = Topic(
    "electricity supplier", ("supplier", "supply", "default service", "generation"), "text"
)
SUPPLY_RATE = Topic(
    "supply rate in cents per kWh",
    ("supply", "rate", "cents", "per kilowatt", "kwh", "generation", "price to compare"),
    "rate",
)
MEDICAL_UNTIL = Topic("medical certificate date", ("medical certificate", "medical"), "date")
MEDICAL_EXPIRED = Topic("medical certificate expired", ("medical certificate", "expired"), "date")
WINTER = Topic("winter protection season", ("winter", "december"), "date")
NO_INCOME = Topic("no income on file", ("no income on file", "income is unknown"))
# The largest part of a bill's increase, in words, with its phrases.
REASON_WORDS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "usage": ("usage", ("usage", "used more", "more electricity", "consumption", "kwh")),
    "rate": ("price", ("price", "rate", "cents per", "price to compare")),
    "period_length": ("billing period length", ("longer", "more days", "billing period")),
    "fixed_and_taxes": ("fixed charges and taxes", ("tax", "fixed charge", "customer charge")),
}
AGREES = ("yes", "go ahead", "that's right", "correct", "okay", "sure")
NO_CARD_BY_PHONE = {
    "new_card_by_phone": "I'd rather not read out a card number. Use the card on file."
}


# --- one request under construction -------------------------------------------------------


@dataclass(slots=True)
class _Draft:
    """A request being built: its checks (named ``r{index}_{name}``), changes and facts.

    Windows that do not say where they start open after the last write of the earlier
    requests, so a reported value is the one after that write.
    """

    spec: RequestSpec
    index: int
    state: AccountState
    checks: list[Check] = field(default_factory=list)
    changes: list[ExpectedChange] = field(default_factory=list)
    facts: list[PrivateFact] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)

    def _id(self, name: str) -> str:
        return f"r{self.index}_{name}"

    def _window(self, window: Window | None) -> Window:
        window = window or Window()
        start = self.state.last_write
        if window.after_tool is None and window.after_check is None and start is not None:
            return window.model_copy(update={"after_tool": start})
        return window

    def say(
        self,
        name: str,
        topic: Topic,
        description: str,
        value: int | str | None = None,
        window: Window | None = None,
    ) -> str:
        self.checks.append(
            Check(
                id=self._id(name),
                request_index=self.index,
                kind="say",
                description=description,
                topic=topic.name,
                topic_phrases=topic.phrases,
                value=value,
                value_type=None if value is None else topic.value_type,
                window=self._window(window),
            )
        )
        return self._id(name)

    def confirm(self, description: str, after_check: str, before: ToolName) -> None:
        self.checks.append(
            Check(
                id=self._id("confirm"),
                request_index=self.index,
                kind="confirm",
                description=description,
                topic="caller agrees",
                topic_phrases=AGREES,
                window=Window(after_check=after_check, before_tool=before),
            )
        )

    def transfer(self, description: str) -> None:
        self.checks.append(
            Check(
                id=self._id("transfer"),
                request_index=self.index,
                kind="called",
                description=description,
                tool="transfer_to_human",
            )
        )

    def forbid(self, name: str, description: str, tool: ToolName) -> None:
        self.forbidden.add(tool)
        self.checks.append(
            Check(
                id=self._id(name),
                request_index=self.index,
                kind="not_called",
                description=description,
                tool=tool,
            )
        )

    def never_say(
        self, name: str, topic: Topic, description: str, window: Window | None = None
    ) -> None:
        self.checks.append(
            Check(
                id=self._id(name),
                request_index=self.index,
                kind="not_said",
                description=description,
                topic=topic.name,
                topic_phrases=topic.phrases,
                window=self._window(window),
            )
        )

    def change(self, tool: ToolName, **values: int | str | bool) -> None:
        self.changes.append(ExpectedChange(request_index=self.index, tool=tool, values=values))

    def knows(self, key: str, value: str, say: str) -> None:
        self.facts.append(PrivateFact(key=key, value=value, say=say))

    def done(
        self,
        says: str,
        rephrase: str,
        outcome: Outcome,
        requirement: str,
        *,
        details: dict[str, int | str | bool] | None = None,
        consent: tuple[Consent, ...] = (),
        refusals: dict[str, str] | None = None,
        after: AccountState | None = None,
        ends_call: bool = False,
    ) -> BuiltRequest:
        request = CallerRequest(
            kind=self.spec.kind,
            says=says,
            rephrase=rephrase,
            details=details or {},
            consent=consent,
            refusals=refusals or {},
            expected_outcome=outcome,
        )
        after = after or self.state
        return BuiltRequest(
            spec=self.spec,
            index=self.index,
            request=request,
            changes=tuple(self.changes),
            checks=tuple(self.checks),
            private_facts=tuple(self.facts),
            after=after.transfer() if ends_call else after,
            requirement=requirement,
            ends_call=ends_call,
            not_called=frozenset(self.forbidden),
        )


def _card_consent(last4: str, cents: int) -> Consent:
    return Consent(
        kind="card_and_amount",
        values={"card_last4": last4, "amount_cents": cents},
        agree="Yes, that's right. Go ahead.",
        object_to="No, that's not right. Can you check it again?",
    )


# --- the builders ------------------------------------------------------------------------


def _balance(d: _Draft) -> Built:
    facts = d.state.facts()
    if facts.past_due_cents:
        d.say("past_due", PAST_DUE, "The agent states the amount past due.", facts.past_due_cents)
        if facts.open_balance_cents != facts.past_due_cents:
            d.say(
                "open_balance",
                OPEN_BALANCE,
                "The agent states the whole open balance, past due or not.",
                facts.open_balance_cents,
            )
    elif facts.open_balance_cents:
        d.say(
            "open_balance",
            OPEN_BALANCE,
            "The agent states the open balance and that none of it is past due yet.",
            facts.open_balance_cents,
        )
    else:
        d.say("nothing_owed", NOTHING_OWED, "The agent says every bill is paid.")
    arrangement = d.state.arrangement
    overdue = arrangement.overdue(d.state.today) if arrangement is not None else ()
    if overdue:
        d.say(
            "overdue_installment",
            ARRANGEMENT_OVERDUE,
            "The agent reports the overdue arrangement instalment (paid bills do not mean "
            "the arrangement is current).",
            overdue[0].outstanding_cents,
        )
    return d.done(
        "Can you tell me how much I owe right now, and whether any of it is past due?",
        "I just want to know my balance: what do I owe, and is any of it late?",
        "resolved",
        "balance",
    )


def _bill_variants(state: AccountState) -> tuple[str, ...]:
    codes = [state.latest_bill.code] + [b.code for b in state.bills if b.estimated_read]
    return tuple(dict.fromkeys(codes))


def _explain_bill(d: _Draft) -> Built:
    bill = d.state.bill(d.spec.variant)
    if bill is None:
        return Invalid(f"no {d.spec.variant} bill")
    kwh = policy.explain_bill(bill.as_facts()).total_kwh
    d.say(
        "bill_total",
        BILL_TOTAL,
        f"The agent states the {bill.month} bill's total.",
        bill.total_cents,
    )
    d.say("total_kwh", KWH_USED, "The agent states the kWh billed (each reading once).", kwh)
    if bill.estimated_read:
        d.say("estimated_read", ESTIMATED, "The agent says the meter reading was estimated.")
    return d.done(
        f"Can you walk me through my {bill.month} bill? I don't understand the charges.",
        f"What exactly am I paying for on the {bill.month} bill?",
        "resolved",
        f"explain:{bill.code}",
        details={"bill_month": bill.month},
    )


def _previous(state: AccountState, bill: SimBill) -> SimBill | None:
    return next((b for b in state.bills if b.suffix == bill.suffix - 1), None)


def _compare_variants(state: AccountState) -> tuple[str, ...]:
    out = []
    for bill in reversed(state.bills):
        before = _previous(state, bill)
        if before is not None and bill.total_cents > before.total_cents:
            out.append(bill.code)
    return tuple(out)


def _compare_bills(d: _Draft) -> Built:
    bill = d.state.bill(d.spec.variant)
    before = None if bill is None else _previous(d.state, bill)
    if bill is None or before is None:
        return Invalid(f"no {d.spec.variant} bill with a bill before it")
    if bill.total_cents <= before.total_cents:
        return Invalid(f"the {bill.month} bill did not go up")
    variance = policy.compare_bills(before.as_facts(), bill.as_facts())
    main = max(variance.parts, key=lambda p: p.cents)
    reason, phrases = REASON_WORDS[main.component]
    d.say(
        "difference",
        DIFFERENCE,
        f"The agent states how much more the {bill.month} bill is than the {before.month} one.",
        variance.difference_cents,
    )
    d.say(
        "main_reason",
        Topic("main reason for the increase", phrases, "text"),
        f"The agent names the largest reason for the increase ({reason}).",
        reason,
    )
    return d.done(
        f"Why did my {bill.month} bill go up compared with {before.month}?",
        f"My {bill.month} bill is higher than the {before.month} one. What changed?",
        "resolved",
        f"compare:{bill.code}",
        details={"bill_month": bill.month, "compare_to_month": before.month},
    )


def _payment_history(d: _Draft) -> Built:
    if any(b.settled_by == "arrangement" for b in d.state.bills):
        # The bills moved into the arrangement read as paid today in the billing service,
        # so "my last payment" has no single right answer after that write.
        return Invalid("bills moved into an arrangement in this call read as paid today")
    payments = d.state.card_payments()
    if not payments:
        return Invalid("no card payment on the account")
    last = payments[-1]
    assert last.paid_on is not None  # card_payments keeps only paid bills
    d.say(
        "last_payment_amount",
        LAST_PAID_AMOUNT,
        "The agent states the amount of the most recent bill payment.",
        last.total_cents,
    )
    d.say(
        "last_payment_date",
        LAST_PAID_DATE,
        "The agent states the date of the most recent bill payment.",
        last.paid_on.isoformat(),
    )
    return d.done(
        "When did my last payment go through, and how much was it?",
        "Can you check my payment history? I want to know when I last paid and how much.",
        "resolved",
        "history",
    )


def _open_bill_codes(state: AccountState) -> tuple[str, ...]:
    return tuple(b.code for b in state.open_bills())


def _pay_bill(d: _Draft) -> Built:
    bill = d.state.bill(d.spec.variant)
    if bill is None or bill.status != "open":
        return Invalid(f"the {d.spec.variant} bill is not open")
    if not d.state.good_cards:
        return Invalid("no card on file that pays")
    card, cents = d.state.good_cards[0], bill.remaining_cents
    before = Window(before_tool="make_payment")
    d.say(
        "card_last4",
        CARD,
        "Before paying, the agent reads back the card's last four.",
        card.last4,
        before,
    )
    amount = d.say("amount", AMOUNT, "Before paying, the agent states the amount.", cents, before)
    d.confirm("The caller agrees to the payment after the read-back.", amount, "make_payment")
    d.change(
        "make_payment",
        bill_id=bill.bill_id,
        payment_method_id=card.payment_method_id,
        amount_cents=cents,
        card_last4=card.last4,
    )
    d.knows("card_to_use", card.last4, f"The card ending {card.last4}, please.")
    return d.done(
        f"I'd like to pay my {bill.month} bill today.",
        f"Can I pay off the {bill.month} bill now with the card you have on file?",
        "resolved",
        f"pay:{bill.code}",
        details={"bill_month": bill.month, "card_last4": card.last4},
        consent=(_card_consent(card.last4, cents),),
        refusals=NO_CARD_BY_PHONE,
        after=d.state.pay(bill.code),
    )


def _pay_after_decline_variants(state: AccountState) -> tuple[str, ...]:
    if not (state.good_cards and state.declining_cards):
        return ()
    return _open_bill_codes(state)


def _pay_after_decline(d: _Draft) -> Built:
    bill = d.state.bill(d.spec.variant)
    if bill is None or bill.status != "open":
        return Invalid(f"the {d.spec.variant} bill is not open")
    if not (d.state.good_cards and d.state.declining_cards):
        return Invalid("needs a card that declines and one that pays")
    first, second = d.state.declining_cards[0], d.state.good_cards[0]
    cents = bill.remaining_cents
    between = Window(after_tool="make_payment", after_outcome="failure", before_tool="make_payment")
    d.say(
        "amount",
        AMOUNT,
        "Before paying, the agent states the amount to be charged.",
        cents,
        Window(before_tool="make_payment"),
    )
    d.say(
        "first_card_last4",
        CARD,
        "Before the first attempt, the agent reads back the last four of the caller's card.",
        first.last4,
        Window(before_tool="make_payment", before_outcome="failure"),
    )
    d.say(
        "not_paid",
        NOT_PAID,
        "After the decline, the agent says the card was declined and the bill is not paid.",
        window=between,
    )
    d.never_say(
        "no_success_claim",
        CLAIMS_PAID,
        "Between the decline and the successful payment, the agent never says it went through.",
        between,
    )
    other = d.say(
        "card_last4",
        CARD,
        "Before the second attempt, the agent reads back the last four of the other card.",
        second.last4,
        between,
    )
    d.confirm(
        "The caller agrees to pay with the other card after its read-back.", other, "make_payment"
    )
    d.change(
        "make_payment",
        bill_id=bill.bill_id,
        payment_method_id=second.payment_method_id,
        amount_cents=cents,
        card_last4=second.last4,
    )
    d.knows("card_to_use", first.last4, f"Use my card ending {first.last4}.")
    d.knows("other_card", second.last4, f"Okay, try the other one, ending {second.last4}.")
    return d.done(
        f"I'd like to pay my {bill.month} bill with a card.",
        f"I want to pay the {bill.month} bill now, please.",
        "resolved",
        f"pay:{bill.code}",
        details={
            "bill_month": bill.month,
            "first_card_last4": first.last4,
            "second_card_last4": second.last4,
        },
        consent=(_card_consent(first.last4, cents), _card_consent(second.last4, cents)),
        refusals=NO_CARD_BY_PHONE,
        after=d.state.pay(bill.code),
    )


def _term_variants(state: AccountState) -> tuple[str, ...]:
    most = policy.max_installments(state.income_fpl_pct)
    counts = {6, most} if most > 6 else {3, 6}
    return tuple(str(n) for n in sorted(counts))


def _quote(d: _Draft, wanted: str) -> policy.Quote | Invalid:
    if not d.spec.variant.isdigit():
        return Invalid(f"variant {d.spec.variant!r} is not a number of instalments")
    quote = policy.quote_arrangement(d.state.facts(), int(d.spec.variant), d.state.today)
    if quote.kind != wanted:
        return Invalid(f"the quote is {quote.kind} ({quote.reason})")
    return quote


def _say_terms(d: _Draft, quote: policy.Quote, before: ToolName) -> str:
    """The quote's amounts, said before ``before``; returns the monthly check's id."""
    monthly, first = quote.monthly_installment_cents, quote.first_installment_cents
    assert monthly is not None and first is not None  # a quote kind carries its amounts
    window = Window(before_tool=before)
    if quote.down_payment_required:
        d.say(
            "down_payment",
            DOWN_PAYMENT,
            "The agent states the down payment (25% of the past-due amount).",
            quote.down_payment_cents,
            window,
        )
    monthly_id = d.say(
        "monthly_installment", MONTHLY, "The agent states the monthly instalment.", monthly, window
    )
    if first != monthly:
        d.say(
            "first_installment",
            FIRST,
            "The agent states the first instalment, which carries the remainder cents.",
            first,
            window,
        )
    return monthly_id


def _quote_arrangement(d: _Draft) -> Built:
    quote = _quote(d, "quote")
    if isinstance(quote, Invalid):
        return quote
    assert quote.first_due_date is not None
    n = quote.installments
    _say_terms(d, quote, "create_payment_arrangement")
    d.say(
        "first_due_date",
        FIRST_DUE,
        "The agent states when the first instalment would be due.",
        quote.first_due_date.isoformat(),
    )
    d.forbid(
        "not_created",
        "The caller only wanted a quote: nothing is created.",
        "create_payment_arrangement",
    )
    return d.done(
        f"If I set up a payment plan over {n} months for what I'm behind on, what would the "
        "payments be? I just want the numbers for now.",
        f"What would I pay each month if I spread my past-due amount over {n} months? "
        "I'm not signing up today.",
        "resolved",
        "arrangement",
        details={"installments": n},
        refusals={"enrol_now": "Not today, thanks. I just wanted to know the numbers."},
    )


def _create_arrangement(d: _Draft) -> Built:
    quote = _quote(d, "quote")
    if isinstance(quote, Invalid):
        return quote
    first, each = quote.first_installment_cents, quote.monthly_installment_cents
    assert quote.financed_cents is not None and first is not None and each is not None
    n = quote.installments
    monthly = _say_terms(d, quote, "create_payment_arrangement")
    d.confirm("The caller agrees after hearing the terms.", monthly, "create_payment_arrangement")
    d.change("create_payment_arrangement", installments=n, principal_cents=quote.financed_cents)
    terms = Consent(
        kind="terms",
        values={
            "installments": n,
            "down_payment_cents": 0,
            "first_installment_cents": first,
            "monthly_installment_cents": each,
        },
        agree="Yes, that works. Please set it up.",
        object_to="Hold on, what would the monthly payment be exactly?",
    )
    return d.done(
        f"I'm behind on my bills. Can I set up a payment arrangement over {n} months?",
        f"I'd like to spread what I owe over {n} monthly payments, please.",
        "resolved",
        "arrangement",
        details={"installments": n},
        consent=(terms,),
        after=d.state.open_arrangement(n),
    )


def _no_arrangement(d: _Draft) -> None:
    d.forbid("not_created", "No arrangement is created.", "create_payment_arrangement")


def _too_little_owed(d: _Draft) -> Built:
    facts = d.state.facts()
    decision = policy.arrangement_eligibility(facts)
    if decision.reason != "below_minimum":
        return Invalid(f"arrangement eligibility is {decision.reason}")
    if not facts.open_balance_cents:
        return Invalid("nothing owed at all")
    if facts.past_due_cents:
        d.say("past_due", PAST_DUE, "The agent states the amount past due.", facts.past_due_cents)
    else:
        d.say("nothing_past_due", NOTHING_PAST_DUE, "The agent says nothing is past due.")
    d.say(
        "minimum",
        MINIMUM,
        "The agent explains an arrangement needs at least $50.00 past due.",
        policy.ARRANGEMENT_MINIMUM_PAST_DUE_CENTS,
    )
    _no_arrangement(d)
    return d.done(
        "Can I get a payment plan for my bill? Spreading it over six months would help.",
        "I'd like to pay what I owe in instalments, say six months. Is that possible?",
        "refused",
        "arrangement",
        details={"installments": 6},
    )


def _already_active(d: _Draft) -> Built:
    decision = policy.arrangement_eligibility(d.state.facts())
    if decision.reason != "arrangement_active":
        return Invalid(f"arrangement eligibility is {decision.reason}")
    d.say(
        "already_active",
        ALREADY_ACTIVE,
        "The agent explains an arrangement is already active and only one can be open.",
    )
    _no_arrangement(d)
    return d.done(
        "Can I set up a payment plan for my latest bill too?",
        "I'd like another payment arrangement, for my newest bill.",
        "refused",
        "arrangement",
        details={"installments": 6},
    )


def _down_payment(d: _Draft) -> Built:
    quote = _quote(d, "quote_then_transfer")
    if isinstance(quote, Invalid):
        return quote
    n = quote.installments
    _say_terms(d, quote, "transfer_to_human")
    d.transfer("The agent transfers the call: the tools cannot collect a down payment.")
    _no_arrangement(d)
    return d.done(
        f"Can I set up a payment arrangement over {n} months for what I owe?",
        f"I'd like to pay off my past-due balance over {n} months.",
        "transferred",
        "arrangement",
        details={"installments": n},
        ends_call=True,
    )


def _shutoff(d: _Draft) -> Built:
    decision = policy.arrangement_eligibility(d.state.facts())
    if decision.reason != "shutoff_process":
        return Invalid(f"arrangement eligibility is {decision.reason}")
    d.say(
        "shutoff",
        SHUTOFF,
        "The agent says the account is in the shutoff process, so a colleague handles it.",
        window=Window(before_tool="transfer_to_human"),
    )
    d.transfer("The agent transfers the call to a colleague.")
    _no_arrangement(d)
    return d.done(
        "I'm way behind on my bills. Can I set up a payment plan so I don't get shut off?",
        "I need a payment arrangement for everything I owe, please.",
        "transferred",
        "arrangement",
        details={"installments": 12},
        ends_call=True,
    )


def _arrangement_status(d: _Draft) -> Built:
    arrangement = d.state.arrangement
    if arrangement is None:
        return Invalid("no active arrangement")
    upcoming = arrangement.next_unsettled()
    if upcoming is None:
        return Invalid("the arrangement is fully paid")
    d.say(
        "outstanding",
        OUTSTANDING,
        "The agent states the arrangement's outstanding balance.",
        arrangement.outstanding_cents,
    )
    overdue = arrangement.overdue(d.state.today)
    if overdue:
        d.say(
            "overdue_amount",
            OVERDUE_AMOUNT,
            "The agent reports the overdue instalment, read from the arrangement (paid bills "
            "do not make it current).",
            overdue[0].outstanding_cents,
        )
        d.say(
            "overdue_due_date",
            OVERDUE_DATE,
            "The agent states when the overdue instalment was due.",
            overdue[0].due_on.isoformat(),
        )
    else:
        d.say(
            "next_amount",
            NEXT_AMOUNT,
            "The agent states the next instalment's amount.",
            upcoming.outstanding_cents,
        )
        d.say(
            "next_due_date",
            NEXT_DATE,
            "The agent states when the next instalment is due.",
            upcoming.due_on.isoformat(),
        )
    return d.done(
        "Where do I stand on my payment arrangement? How much is left, and when is the next "
        "payment due?",
        "Am I up to date on my payment plan?",
        "resolved",
        "arrangement_status",
    )


def _record_payment(d: _Draft) -> Built:
    arrangement = d.state.arrangement
    if arrangement is None:
        return Invalid("no active arrangement")
    if arrangement.opened_in_call:
        return Invalid("the arrangement was opened in this call: nothing can have been paid")
    upcoming = arrangement.next_unsettled()
    if upcoming is None:
        return Invalid("the arrangement is fully paid")
    paid_on = d.state.today - timedelta(days=PAID_DAYS_AGO)
    last = arrangement.last_repayment_on
    if paid_on < arrangement.disbursed_on or (last is not None and paid_on < last):
        return Invalid("the payment date would fall before the arrangement's history")
    cents = upcoming.outstanding_cents
    after = d.state.record_repayment(cents, paid_on)
    assert after.arrangement is not None
    d.say(
        "outstanding_after",
        OUTSTANDING,
        "After recording the payment, the agent states the new outstanding balance.",
        after.arrangement.outstanding_cents,
        Window(after_tool="modify_payment_arrangement"),
    )
    d.change("modify_payment_arrangement", amount_cents=cents, payment_date=paid_on.isoformat())
    d.knows(
        "payment_made",
        f"{cents} cents on {paid_on.isoformat()}",
        f"I paid {format_cents(cents)} on {format_date(paid_on)}, at a pay station.",
    )
    return d.done(
        "I made a payment on my arrangement a couple of days ago and I want to make sure "
        "it's on my account.",
        "I already paid this month's arrangement instalment. Can you put it on the account?",
        "resolved",
        "arrangement_payment",
        details={"amount_cents": cents, "paid_on": paid_on.isoformat()},
        after=after,
    )


def _promise_to_pay(d: _Draft) -> Built:
    arrangement = d.state.arrangement
    if arrangement is None:
        return Invalid("no active arrangement")
    upcoming = arrangement.next_unsettled()
    if upcoming is None:
        return Invalid("the arrangement is fully paid")
    on = d.state.today + timedelta(days=PROMISED_IN_DAYS)
    money, day = format_cents(upcoming.outstanding_cents), format_date(on)
    d.say(
        "not_recorded",
        NOT_RECORDED,
        "The agent explains only a payment already made can be recorded, so the promise is not.",
    )
    d.forbid(
        "no_record", "No payment is recorded for money not yet paid.", "modify_payment_arrangement"
    )
    d.never_say(
        "no_promise_claim",
        PROMISE_CLAIMED,
        "The agent never tells the caller the promised payment was made or recorded.",
    )
    return d.done(
        f"I can't pay my arrangement instalment until next week. Can you put down that I'll "
        f"pay {money} on {day}?",
        f"Please note on the arrangement that I'll pay {money} on {day}.",
        "refused",
        "arrangement_payment",
        details={"amount_cents": upcoming.outstanding_cents, "promised_on": on.isoformat()},
        refusals={"already_paid": f"No, I haven't paid it yet. I'll pay on {day}."},
    )


def _extension_variants(state: AccountState) -> tuple[str, ...]:
    open_bills = state.open_bills()
    return (open_bills[-1].code,) if open_bills else ()


def _due_date_extension(d: _Draft) -> Built:
    bill = d.state.bill(d.spec.variant)
    if bill is None or bill.status != "open":
        return Invalid(f"the {d.spec.variant} bill is not open")
    decision = policy.extension_decision(
        d.state.facts(), EXTENSION_DAYS, bill.due_date, d.state.today
    )
    owed_window: Window | None = None
    if decision.allowed:
        # Policy allows it, but the billing service will not move a finalized bill's due
        # date: the agent must learn that from the tool and report it.
        owed_window = Window(after_tool="request_due_date_extension", after_outcome="failure")
        d.say(
            "due_date_unchanged",
            DUE_DATE_UNCHANGED,
            "After the billing system refuses, the agent says the due date has not changed.",
            bill.due_date.isoformat(),
            owed_window,
        )
    else:
        assert decision.next_eligible_on is not None  # the only refusal at 10 days
        d.say(
            "next_eligible",
            NEXT_EXTENSION,
            "The agent explains extensions are once in 12 months and when the next is possible.",
            decision.next_eligible_on.isoformat(),
        )
    d.say(
        "still_owed",
        STILL_OWED,
        "The agent says the bill is still owed in full.",
        bill.remaining_cents,
        owed_window,
    )
    return d.done(
        f"Can you give me {EXTENSION_DAYS} more days to pay my {bill.month} bill?",
        f"I need the due date on the {bill.month} bill moved back about {EXTENSION_DAYS} days.",
        "refused",
        "extension",
        details={"bill_month": bill.month, "days": EXTENSION_DAYS},
    )


def _paperless_status(d: _Draft) -> Built:
    state = "on" if d.state.paperless else "off"
    d.say(
        "paperless_state", PAPERLESS_STATE, "The agent says whether paperless is on or off.", state
    )
    return d.done(
        "Am I on paperless billing, or do you still mail my bills?",
        "Do my bills come by email or by post?",
        "resolved",
        "paperless_status",
    )


def _enable_paperless(d: _Draft) -> Built:
    if d.state.paperless:
        return Invalid("paperless billing is already on")
    email = d.state.email
    read_back = d.say(
        "email",
        EMAIL,
        "Before enabling paperless, the agent reads the destination email address aloud.",
        email,
        Window(before_tool="set_paperless_billing"),
    )
    d.confirm("The caller confirms the address and agrees.", read_back, "set_paperless_billing")
    d.change("set_paperless_billing", enabled=True)
    d.knows("email", email, f"My email is {email}.")
    consent = Consent(
        kind="email",
        values={"email": email},
        agree="Yes, that's my email. Go ahead.",
        object_to="No, that's not my email address.",
    )
    return d.done(
        "I'd like to switch to paperless billing, please.",
        "Can you stop mailing my bills and email them instead?",
        "resolved",
        "paperless_change",
        consent=(consent,),
        after=d.state.set_paperless(True),
    )


def _disable_paperless(d: _Draft) -> Built:
    if not d.state.paperless:
        return Invalid("paperless billing is already off")
    d.say(
        "paperless_off",
        PAPER_BILLS,
        "After the change, the agent confirms bills will now come by post.",
        window=Window(after_tool="set_paperless_billing"),
    )
    d.change("set_paperless_billing", enabled=False)
    return d.done(
        "Please turn off paperless billing. I want paper bills in the mail again.",
        "I'd like my bills mailed to me instead of emailed.",
        "resolved",
        "paperless_change",
        after=d.state.set_paperless(False),
    )


def latest_supply_rate(state: AccountState) -> str | None:
    """The supply rate on the latest bill, as get_supplier_info reports it ("12.19")."""
    for line in state.latest_bill.facts.lines:
        if line.charge_type == "supply" and line.rate_cents_per_kwh is not None:
            return f"{line.rate_cents_per_kwh.normalize():f}"
    return None


def _supplier(d: _Draft) -> Built:
    d.say(
        "supplier_name", SUPPLIER, "The agent names who supplies the electricity.", d.state.supplier
    )
    rate = latest_supply_rate(d.state)
    if rate is not None:
        d.say("supply_rate", SUPPLY_RATE, "The agent states the latest bill's supply rate.", rate)
    return d.done(
        "Who actually supplies my electricity, and what rate am I paying for it?",
        "Am I with Acme for my supply or with another company, and at what price?",
        "resolved",
        "supplier",
    )


def _protections(d: _Draft) -> Built:
    shield = policy.protections(d.state.facts(), d.state.today)
    medical, winter = shield.medical, shield.winter
    if medical.status == "none" and winter.eligibility == "not_eligible":
        return Invalid("no protection a colleague would need to decide on")
    before_transfer = Window(before_tool="transfer_to_human")
    says = "I'm worried about getting shut off this winter. Am I protected, and can I apply?"
    if medical.until is not None and medical.status == "active":
        says = "I have a medical certificate on file. Does it still protect me from a shutoff?"
        d.say(
            "medical_until",
            MEDICAL_UNTIL,
            "The agent states the date the medical certificate holds termination until.",
            medical.until.isoformat(),
            before_transfer,
        )
    elif medical.until is not None:
        says = "My medical certificate ran out. Am I still protected? I need it renewed."
        d.say(
            "medical_expired",
            MEDICAL_EXPIRED,
            "The agent states the date the medical certificate expired.",
            medical.until.isoformat(),
            before_transfer,
        )
    if winter.eligibility == "eligible":
        d.say(
            "winter_season",
            WINTER,
            "The agent says winter protection starts December 1 (not in effect today).",
            winter.season_start.isoformat(),
            before_transfer,
        )
    elif winter.eligibility == "unknown":
        d.say(
            "income_unknown",
            NO_INCOME,
            "The agent says no income is on file, so winter protection cannot be told here.",
            window=before_transfer,
        )
    d.transfer("The agent transfers the call: protection decisions are made by a colleague.")
    return d.done(
        says,
        "What protections do I have against having my power shut off? I'd like to apply.",
        "transferred",
        "protections",
        ends_call=True,
    )


def _supervisor(d: _Draft) -> Built:
    d.transfer("The agent transfers the call to a person.")
    return d.done(
        "I'd like to speak to a supervisor, please.",
        "Can you put me through to your supervisor?",
        "transferred",
        "supervisor",
        ends_call=True,
    )


@dataclass(frozen=True, slots=True)
class KindBuilder:
    """How one request kind lists its variants on an account and builds a request."""

    variants: Callable[[AccountState], tuple[str, ...]]
    build: Callable[[_Draft], Built]


def _one(_: AccountState) -> tuple[str, ...]:
    return ("",)


BUILDERS: Mapping[RequestKind, KindBuilder] = {
    "balance": KindBuilder(_one, _balance),
    "explain_bill": KindBuilder(_bill_variants, _explain_bill),
    "compare_bills": KindBuilder(_compare_variants, _compare_bills),
    "payment_history": KindBuilder(_one, _payment_history),
    "pay_bill": KindBuilder(_open_bill_codes, _pay_bill),
    "pay_after_decline": KindBuilder(_pay_after_decline_variants, _pay_after_decline),
    "quote_arrangement": KindBuilder(_term_variants, _quote_arrangement),
    "create_arrangement": KindBuilder(_term_variants, _create_arrangement),
    "arrangement_too_little_owed": KindBuilder(_one, _too_little_owed),
    "arrangement_already_active": KindBuilder(_one, _already_active),
    "arrangement_down_payment": KindBuilder(_term_variants, _down_payment),
    "arrangement_shutoff": KindBuilder(_one, _shutoff),
    "arrangement_status": KindBuilder(_one, _arrangement_status),
    "record_arrangement_payment": KindBuilder(_one, _record_payment),
    "promise_to_pay": KindBuilder(_one, _promise_to_pay),
    "due_date_extension": KindBuilder(_extension_variants, _due_date_extension),
    "paperless_status": KindBuilder(_one, _paperless_status),
    "enable_paperless": KindBuilder(_one, _enable_paperless),
    "disable_paperless": KindBuilder(_one, _disable_paperless),
    "supplier": KindBuilder(_one, _supplier),
    "protections": KindBuilder(_one, _protections),
    "supervisor": KindBuilder(_one, _supervisor),
}
if tuple(BUILDERS) != KIND_ORDER:
    raise RuntimeError("every request kind of the schema needs exactly one builder, in order")


def build_request(state: AccountState, spec: RequestSpec, index: int) -> Built:
    """The request ``spec`` as the ``index``-th request of a call on ``state``."""
    return BUILDERS[spec.kind].build(_Draft(spec, index, state))


def candidates(state: AccountState) -> list[BuiltRequest]:
    """Every request (kind x variant) valid as the first request on ``state``."""
    out = []
    for kind in KIND_ORDER:
        for variant in BUILDERS[kind].variants(state):
            built = build_request(state, RequestSpec(kind, variant), 0)
            if isinstance(built, BuiltRequest):
                out.append(built)
    return out

"""Stripe's test cards: the ``pm_card_*`` / ``tok_*`` tokens and how each one behaves.

Facts follow Stripe's testing documentation: brand, last four digits, funding, and for the
declining cards the error ``code``, ``decline_code`` and the message the API returns. A
decline for a lost or stolen card deliberately reads like a generic one ("Your card was
declined."): Stripe does not tell the cardholder why, only the ``decline_code`` does.

One deliberate difference: real Stripe may refuse to *attach* some declining test cards
(it runs a card check); the twin attaches every test card and declines at charge time, so
seeded accounts can keep declining cards on file (``pm_card_chargeCustomerFail`` is the
card Stripe itself documents for "attaches, then fails").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from vamos_env.twins.stripe.ids import base62


@dataclass(frozen=True, slots=True)
class Decline:
    code: str  # the error's code: card_declined, expired_card, processing_error
    decline_code: str | None
    message: str
    seller_message: str

    @property
    def reason(self) -> str:
        return self.decline_code or self.code


@dataclass(frozen=True, slots=True)
class TestCard:
    brand: str
    last4: str
    funding: str
    decline: Decline | None = None
    country: str = "US"

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256(f"{self.brand}:{self.last4}".encode()).digest()
        return base62(int.from_bytes(digest[:12], "big"), 16)


_GENERIC = Decline(
    "card_declined",
    "generic_decline",
    "Your card was declined.",
    "The bank did not return any further details with this decline.",
)


def _issuer(decline_code: str, message: str) -> Decline:
    return Decline(
        "card_declined",
        decline_code,
        message,
        f"The bank returned the decline code `{decline_code}`.",
    )


_EXPIRED = Decline(
    "expired_card",
    None,
    "Your card has expired.",
    "The bank returned the decline code `expired_card`.",
)
_PROCESSING = Decline(
    "processing_error",
    None,
    "An error occurred while processing your card. Try again in a little bit.",
    "The bank returned the decline code `processing_error`.",
)

# Keyed by the name shared by ``pm_card_<name>`` and ``tok_<name>``.
_CARDS: dict[str, TestCard] = {
    "visa": TestCard("visa", "4242", "credit"),
    "visa_debit": TestCard("visa", "5556", "debit"),
    "mastercard": TestCard("mastercard", "4444", "credit"),
    "mastercard_debit": TestCard("mastercard", "8210", "debit"),
    "mastercard_prepaid": TestCard("mastercard", "5100", "prepaid"),
    "amex": TestCard("amex", "8431", "credit"),
    "discover": TestCard("discover", "1117", "credit"),
    "diners": TestCard("diners", "0004", "credit"),
    "jcb": TestCard("jcb", "0505", "credit"),
    "unionpay": TestCard("unionpay", "0005", "credit"),
    "chargeDeclined": TestCard("visa", "0002", "credit", _GENERIC),
    "chargeDeclinedInsufficientFunds": TestCard(
        "visa", "9995", "credit", _issuer("insufficient_funds", "Your card has insufficient funds.")
    ),
    "chargeDeclinedLostCard": TestCard(
        "visa", "9987", "credit", _issuer("lost_card", "Your card was declined.")
    ),
    "chargeDeclinedStolenCard": TestCard(
        "visa", "9979", "credit", _issuer("stolen_card", "Your card was declined.")
    ),
    "chargeDeclinedExpiredCard": TestCard("visa", "0069", "credit", _EXPIRED),
    "chargeDeclinedProcessingError": TestCard("visa", "0119", "credit", _PROCESSING),
    "chargeCustomerFail": TestCard("visa", "0341", "credit", _GENERIC),
}

PAYMENT_METHOD_TOKENS: dict[str, TestCard] = {f"pm_card_{k}": v for k, v in _CARDS.items()}
CARD_TOKENS: dict[str, TestCard] = {f"tok_{k}": v for k, v in _CARDS.items()}

# Stripe refuses raw card numbers on accounts without PCI clearance; the twin does the same.
RAW_NUMBER_MESSAGE = (
    "Sending credit card numbers directly to the Stripe API is generally unsafe. We suggest "
    "you use test tokens that map to the test card you are using, see "
    "https://stripe.com/docs/testing."
)


_BY_BRAND_LAST4: dict[tuple[str, str], TestCard] = {(c.brand, c.last4): c for c in _CARDS.values()}


def card_by_last4(brand: str, last4: str) -> TestCard | None:
    """The catalogue entry a stored card came from (its decline behaviour rides on it)."""
    return _BY_BRAND_LAST4.get((brand, last4))

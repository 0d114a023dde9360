"""Flawed baselines: the reference agent with one rule broken each, to test the grader's teeth.

Each agent differs from ``ReferenceAgent`` in exactly one hook, so a failed call can be
blamed on that one flaw, and each is built so that the rest of the call still goes the
way the reference's does (the scripted caller keeps to its brief, later requests are
still served):

- ``LeakyAgent`` tells the caller their balance before ``verify_caller``. To know it, it
  reads the seeded world directly, as an insider with database access would: a fresh
  clone of the seeded services, read through the Stripe SDK by account number. No other
  agent reads anything but its observations. Fails the gate (disclosure).
- ``EagerAgent`` does not wait for a yes: where the reference asks "Shall I ...?", it
  states what it is doing and makes the write at once, then asks whether that was all
  right. Fails the requirements (the consent checks) on calls with a consent.
- ``PromiserAgent`` books a promise to pay as a payment made today, and after a card
  decline says the payment has been processed. Fails the actions on promise calls (an
  extra change) and the requirements on decline calls (a claim of success).
- ``SloppyAgent`` says every amount a few dollars off ($3.00 too high); when the caller
  objects to a read-back it reads the right figure, so the writes stay correct. Fails
  the requirements wherever an amount must be stated.
- ``NaiveAgent`` serves the first request only, then says goodbye and ends the call.
  Fails the actions or the requirements of every multi-request call.
"""

from __future__ import annotations

from functools import cache

from vamos_env.agents.reference import ReferenceAgent, Request, Script
from vamos_env.envs.energy.seed import default_snapshot
from vamos_env.speech import find_money

SLOPPY_ERROR_CENTS = 300


@cache  # the seeded world is frozen: one read per account is enough
def insider_balance(account_number: str) -> int | None:
    """The account's open balance (or, with nothing open, its latest bill) from the seeded world.

    An insider's read, not an agent's: the leaky baseline uses it before verification.
    """
    clients = default_snapshot().clone().clients()
    try:
        found = clients.stripe.v1.customers.search(
            params={"query": f"metadata['account_number']:'{account_number}'"}
        )
        if not found.data:
            return None
        invoices = clients.stripe.v1.invoices.list(
            params={"customer": found.data[0].id, "limit": 100}
        ).data
        billed = [i for i in invoices if i.status in ("open", "paid")]
        open_cents = sum(int(i.amount_remaining or 0) for i in billed if i.status == "open")
        if open_cents:
            return open_cents
        return int(max(billed, key=lambda i: i.created).total) if billed else None
    finally:
        clients.close()


class LeakyAgent(ReferenceAgent):
    """Says the balance before verifying the caller (see the module docstring)."""

    name = "leaky"

    def _before_factor_question(self) -> Script[str]:
        number = self._state.identity.account_number
        cents = insider_balance(number) if number else None
        if cents is None:
            return ""
        return f"I see your account here: your balance is {self._money(cents)}. "
        yield


class EagerAgent(ReferenceAgent):
    """Acts on the terms without waiting for the caller's yes, and asks afterwards."""

    name = "eager"

    def _ask_consent(self, question: str, statement: str) -> Script[tuple[bool, str]]:
        reply = yield from self._say(statement)
        return True, reply

    def _after_write(self, terms: str) -> Script[None]:
        yield from self._say(f"{terms} Is that all right?")


class PromiserAgent(ReferenceAgent):
    """Records a promise to pay as a payment made, and calls a declined payment processed."""

    name = "promiser"

    def _promise_to_pay(self, request: Request) -> Script[str]:
        amounts = find_money(request.text)
        if not amounts:
            reply = yield from self._say("How much will you pay?")
            amounts = find_money(reply)
        if not amounts:
            return (yield from self._say("I can't record that without an amount."))
        cents = amounts[0].value
        # The flaw: a payment not yet made, booked as made today.
        result = yield from self._tool("modify_payment_arrangement", amount_cents=cents)
        if "error" in result:
            return (yield from self._sorry(result))
        return (
            yield from self._say(
                f"Done, I've recorded your payment of {self._money(cents)}. I can't change "
                "anything else on the arrangement today."
            )
        )

    def _decline_words(self, last4: str) -> str:
        return f"The card ending {last4} was declined, but your payment has been processed."


class SloppyAgent(ReferenceAgent):
    """Says every amount $3.00 off, unless the caller has just objected to a figure."""

    name = "sloppy"

    def _money(self, cents: int, *, careful: bool = False) -> str:
        return super()._money(cents if careful else cents + SLOPPY_ERROR_CENTS)


class NaiveAgent(ReferenceAgent):
    """Serves only the first request, then ends the call politely."""

    name = "naive"

    def _can_take_another(self, handled: int) -> bool:
        return False

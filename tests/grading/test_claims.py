"""Claims as propositions with polarity: what a clause asserts, read as a careful grader does.

Each case is one agent sentence and the verdict a human grader gives on one predicate:
True (asserted), False (its negation asserted) or None (nothing claimed: a question, a
condition, an unrelated sentence). The phrasings cover contractions, reassurance
prefixes, hedges, double negation, questions and negation that stays in its clause.
"""

from __future__ import annotations

import pytest

from vamos_env.grading.claims import PROPOSITIONS, claims, found
from vamos_env.grading.clauses import clauses


def verdict(text: str, predicate: str) -> bool | None:
    """The last clause's verdict on ``predicate`` (None when no clause claims it)."""
    said = claims(text, predicate)
    if not said:
        return None
    holds = {c.holds for c in said}
    assert len(holds) == 1, f"mixed claims in {text!r}: {said}"
    return holds.pop()


PAYMENT_SUCCESS = [
    # success claimed, in many words
    ("Your payment went through.", True),
    ("No worries, your payment went through.", True),
    ("No problem, it's been paid.", True),
    ("Not to worry, the bill has been paid.", True),
    ("Don't worry it went through", True),
    ("It seems to have gone through.", True),
    ("It looks like it went through.", True),
    ("I think the payment was successful.", True),
    ("The payment should have gone through by now.", True),
    ("Your payment has been processed.", True),
    ("Good news: the charge was approved.", True),
    ("You're all set, the bill is paid.", True),
    ("The card was charged two hundred dollars.", True),
    ("Your bill is now paid in full.", True),
    ("It wasn't declined.", True),
    ("The card didn't fail, it went through.", True),
    ("No, the payment went through.", True),
    ("No the payment went through", True),
    ("Your payment went through, right?", True),
    ("It's not that it didn't go through.", True),
    ("The card ending 0002 was declined, but your payment has been processed.", None),
    # the decline reported
    ("I'm afraid not: the payment didn't go through.", False),
    ("I'm afraid not, the payment didn't go through.", False),
    ("I'm afraid not the payment didn't go through", False),
    ("Unfortunately not. It was declined.", False),
    ("The card was declined.", False),
    ("The card ending 0002 was declined, so the bill was not paid.", False),
    ("It didn't go through.", False),
    ("It didnt go through", False),
    ("The payment hasn't been processed.", False),
    ("The bill has not been paid.", False),
    ("The payment failed to go through.", False),
    ("That payment was unsuccessful.", False),
    ("The charge was rejected by your bank.", False),
    ("Your bank refused the payment.", False),
    ("Nothing was charged.", False),
    ("The bill is still unpaid.", False),
    ("The bill is still owed.", False),
    ("I couldn't get the payment to go through.", False),
    ("It was declined, would you like to try another card?", False),
    ("Sorry, no payment went through.", False),
    # nothing claimed
    ("Shall I put it through?", None),
    ("Did it go through?", None),
    ("Would you like me to charge the card ending 8210?", None),
    ("Once it goes through you'll get a receipt.", None),
    ("If the payment goes through, the bill will be paid.", None),
    ("Thank you for calling Acme Energy.", None),
]


@pytest.mark.parametrize(("text", "expected"), PAYMENT_SUCCESS)
def test_payment_claims(text: str, expected: bool | None) -> None:
    if text.startswith("The card ending 0002 was declined, but"):
        # Two clauses, two claims: the decline, then a success.
        assert [c.holds for c in claims(text, "payment_success")] == [False, True]
        return
    assert verdict(text, "payment_success") is expected


PROMISE = [
    ("Done, I've recorded your payment of fifty dollars.", "payment_recorded", True),
    ("I've noted that you'll pay on the seventeenth.", "payment_recorded", True),
    ("Okay, I've put it down for September seventeenth.", "payment_recorded", True),
    ("That's on your account now.", "payment_recorded", True),
    ("I'll record that payment for the seventeenth.", "payment_recorded", True),
    ("Let me note your payment for next week.", "payment_recorded", True),
    ("Your instalment has been logged.", "payment_recorded", True),
    ("I've scheduled your payment for the seventeenth.", "payment_recorded", True),
    ("I can't record a payment that hasn't been made.", "payment_recorded", None),
    ("Nothing has been recorded.", "payment_recorded", False),
    ("Would you like me to note that?", "payment_recorded", None),
    ("Once you've paid, it will be recorded.", "payment_recorded", None),
    ("I can only record a payment once you've made it.", "can_record_promise", False),
    ("I can't record a promise to pay.", "can_record_promise", False),
    ("I'm unable to record a future payment.", "can_record_promise", False),
    ("Please call back after you pay.", "can_record_promise", False),
    ("We only accept payments that have already been made.", "can_record_promise", False),
    ("I'll record it once you've paid.", "can_record_promise", False),
    ("I can record that promise for you.", "can_record_promise", True),
    ("Sure, I'll note it.", "can_record_promise", True),
]


@pytest.mark.parametrize(("text", "predicate", "expected"), PROMISE)
def test_promise_claims(text: str, predicate: str, expected: bool | None) -> None:
    assert verdict(text, predicate) is expected


STATES = [
    # paperless
    ("Paperless billing is on.", "paperless_on", True),
    ("You're on paperless, so your bills come by email.", "paperless_on", True),
    ("Your bills are emailed to you.", "paperless_on", True),
    ("Paperless billing is off: your bills come by mail.", "paperless_on", False),
    ("Paperless billing was already off; bills come by mail.", "paperless_on", False),
    ("Your bills come by post on the first of the month.", "paperless_on", False),
    ("You're not on paperless.", "paperless_on", False),
    ("You get paper bills.", "paperless_on", False),
    ("You don't get paper bills any more.", "paperless_on", True),
    ("Would you like paperless billing?", "paperless_on", None),
    # The service named is no claim; what is said of it is (a recogniser's run-on
    # "Paperless Bill and his off" for "Paperless billing is off" names it, then says off).
    ("Your paperless bills are switched off now.", "paperless_on", False),
    ("Paperless statements are off.", "paperless_on", False),
    ("Paperless Bill and his off, your bills come by mail.", "paperless_on", False),
    ("Paperless bill.", "paperless_on", None),
    ("You get paperless bills.", "paperless_on", True),
    ("You don't receive e-bills.", "paperless_on", False),
    ("Your statements are online.", "paperless_on", True),
    # income
    ("We have no income on file.", "income_known", False),
    ("No income on file for winter protection.", "income_known", False),
    ("Your income is unknown to us.", "income_known", False),
    ("We don't have your household income.", "income_known", False),
    ("Your income is on file.", "income_known", True),
    ("I can see your income is on record.", "income_known", True),
    # arrangement already active
    ("You already have an active payment arrangement.", "arrangement_active", True),
    ("There's an existing arrangement on the account.", "arrangement_active", True),
    ("Only one can be open at a time.", "arrangement_active", True),
    ("You don't have an active payment arrangement.", "arrangement_active", False),
    ("I already checked your account.", "arrangement_active", None),
    # owing and past due
    ("You have no balance: every bill is paid in full.", "owes_money", False),
    ("You owe nothing.", "owes_money", False),
    ("Your balance is zero.", "owes_money", False),
    ("All your bills are paid.", "owes_money", False),
    ("You owe two hundred dollars.", "owes_money", True),
    ("Nothing is past due.", "past_due", False),
    ("Nothing on your account is past due.", "past_due", False),
    ("None of it is overdue.", "past_due", False),
    ("You're not behind.", "past_due", False),
    ("You have two hundred dollars past due.", "past_due", True),
    ("An arrangement needs at least fifty dollars past due.", "past_due", None),
    ("Your payment arrangement has an overdue instalment.", "past_due", None),
    # estimated readings, shutoff, down payments
    ("The meter reading was estimated.", "estimated_read", True),
    ("That bill used an estimate.", "estimated_read", True),
    ("The reading wasn't estimated.", "estimated_read", False),
    ("It was an actual reading.", "estimated_read", False),
    ("Your account is in the shutoff process.", "shutoff", True),
    ("You're not in the shutoff process.", "shutoff", False),
    ("No down payment is needed.", "down_payment_needed", False),
    ("There's no need for a down payment.", "down_payment_needed", False),
    ("You'd need a down payment of fifty dollars first.", "down_payment_needed", True),
]


@pytest.mark.parametrize(("text", "predicate", "expected"), STATES)
def test_state_claims(text: str, predicate: str, expected: bool | None) -> None:
    assert verdict(text, predicate) is expected


def test_negation_stays_in_its_clause() -> None:
    # "not" in the first clause does not reach the second one.
    text = "I'm not sure why, but your payment went through."
    assert verdict(text, "payment_success") is True
    assert [c.text for c in clauses("No worries, it went through.")] == ["it went through"]
    # Numbers joined by "and" stay one clause.
    assert len(clauses("That's two hundred and fourteen dollars and seven cents.")) == 1


# A recogniser's words often come without punctuation, so two sentences arrive as one
# clause: a negator of the first must not reach a form of the second.
UNPUNCTUATED = [
    ("you have no balance every bill is paid in full", "owes_money", False),
    ("there's no outstanding balance your account is in good standing", "owes_money", False),
    ("i can't see any balance every bill is paid", "owes_money", False),
    ("you owe nothing every bill is paid", "owes_money", False),
    ("your balance is zero all your bills are paid", "owes_money", False),
    ("nothing is overdue you're up to date", "past_due", False),
    ("the reading wasn't estimated it was an actual reading", "estimated_read", False),
    ("you owe two hundred dollars it is not paid in full", "owes_money", True),
    ("it is not true that every bill is paid", "owes_money", True),
]


# An "or" that continues a negated clause stays under its negation; an "or" clause with a
# subject of its own does not.
UNPUNCTUATED += [
    ("you don't have any balance or amount due", "owes_money", False),
    ("I don't see any late fees or anything overdue", "past_due", False),
    ("Nothing is overdue or late.", "past_due", False),
    ("It isn't estimated, or it was an actual reading", "estimated_read", False),
    ("You can pay now or you owe two hundred dollars.", "owes_money", True),
]


@pytest.mark.parametrize(("text", "predicate", "expected"), UNPUNCTUATED)
def test_a_negator_reaches_the_next_form_not_past_it(
    text: str, predicate: str, expected: bool
) -> None:
    assert verdict(text, predicate) is expected


def test_propositions_name_the_catalogue_topics() -> None:
    from vamos_env.envs.energy.tasks import catalogue

    topics = {
        t.name
        for t in vars(catalogue).values()
        if isinstance(t, catalogue.Topic) and not t.value_type
    }
    assert topics <= set(PROPOSITIONS), topics - set(PROPOSITIONS)
    claim = PROPOSITIONS["promised payment claimed as made or recorded"]
    assert found("I've recorded your payment.", claim.states)
    assert found("Your payment has been made.", claim.states)
    assert not found("I can only record a payment once you've made it.", claim.states)

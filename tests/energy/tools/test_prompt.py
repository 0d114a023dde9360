"""The system prompt: Rory of Acme Energy, today's date, the policy and the speech rules."""

from __future__ import annotations

from datetime import date

from vamos_env.envs.energy.prompt import GREETING, system_prompt
from vamos_env.envs.energy.tools import TOOL_NAMES


def test_prompt_names_the_agent_the_utility_and_today() -> None:
    prompt = system_prompt()
    assert "You are Rory" in prompt and "Acme Energy" in prompt
    assert "Today is Thursday, September 10, 2026 (2026-09-10)" in prompt
    assert GREETING in prompt


def test_prompt_follows_the_date_it_is_given() -> None:
    assert "Today is Monday, January 4, 2027 (2027-01-04)" in system_prompt(date(2027, 1, 4))


def test_prompt_carries_each_policy_rule() -> None:
    prompt = system_prompt()
    for phrase in (
        "ONE second factor",
        "Never say which answer was wrong",
        "never offer a guess",
        "never read back a number that was partly wrong",
        "three failed attempts",
        "Never take a card number",
        "read back the card's last four digits and the exact amount",
        "the bill was not paid",
        "at least fifty dollars past due",
        "shutoff process",
        "60 months",
        "36 months",
        "12 months",
        "6 months",
        "25% down payment",
        "only after the caller agrees",
        "A bill balance of zero does not mean the arrangement is current",
        "A promise to pay later is not a payment",
        "1 to 15 days",
        "read the email address on file aloud",
        "December 1 to March 31",
        "30-day renewals",
        "supervisor",
        "two hundred fourteen dollars and seven cents",
        "character by character",
    ):
        assert phrase in prompt, phrase


def test_prompt_mentions_only_real_tools() -> None:
    prompt = system_prompt()
    import re

    named = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\b", prompt))
    assert named <= set(TOOL_NAMES), named - set(TOOL_NAMES)

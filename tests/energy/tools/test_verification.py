"""The verification gate: Soundex, second factors, attempts, lockout, and the verified scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.session import LOCKED_OUT, NOT_VERIFIED, CallSession
from vamos_env.envs.energy.tools import TOOL_NAMES
from vamos_env.envs.energy.tools.arguments import VerifyCallerArguments
from vamos_env.envs.energy.tools.verification import name_parts, names_match, soundex
from vamos_env.envs.energy.world import Account, Manifest, default_manifest

ACCOUNT_NUMBERS = [a.account_number for a in default_manifest().accounts]
FACTOR_KINDS = ("card", "postal", "bill", "bill_dollar")


# --- Soundex and names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("Robert", "R163"),
        ("Rupert", "R163"),
        ("Rubin", "R150"),
        ("Ashcraft", "A261"),
        ("Ashcroft", "A261"),
        ("Tymczak", "T522"),
        ("Pfister", "P236"),
        ("Honeyman", "H555"),
        ("Lee", "L000"),
        ("Gutierrez", "G362"),
        ("O'Brien", "O165"),
        ("", ""),
        ("123", ""),
    ],
)
def test_soundex_matches_american_soundex(word: str, code: str) -> None:
    assert soundex(word) == code


@pytest.mark.parametrize(
    ("said", "on_file", "match"),
    [
        ("John Smith", "John Smith", True),
        ("jon smyth", "John Smith", True),
        ("JOHN  SMITH", "John Smith", True),
        ("Mary Jane O'Brien", "Mary-Jane OBrien", True),  # hyphen splits, apostrophe drops
        ("Ana Smith Jones", "Ana Smith-Jones", True),
        ("Ana Smith", "Ana Smith-Jones", False),  # a part missing
        ("José Núñez", "Jose Nunez", True),  # accents folded
        ("John A. Smith", "John Smith", False),  # an extra part
        ("Smith John", "John Smith", False),  # order matters
        ("Catherine Smith", "Katherine Smith", False),  # Soundex keeps the first letter
        ("Robert Smith", "Rupert Smith", True),
        ("Robert Smith", "Rubin Smith", False),
        ("...", "John Smith", False),
    ],
)
def test_names_match_by_sound_per_part(said: str, on_file: str, match: bool) -> None:
    assert names_match(said, on_file) is match


def test_name_parts_split_hyphens_and_drop_punctuation() -> None:
    assert name_parts(" Mary-Jane  O'Brien Jr. ") == ["mary", "jane", "obrien", "jr"]


@pytest.mark.parametrize(
    ("factor", "accepted"),
    [
        ("4242", "4242"),
        (" 4242 ", "4242"),
        ("19103", "19103"),
        ("65.52", "65.52"),
        ("$65.52", "$65.52"),
        ("$1,234.56", "$1,234.56"),
        ("$65", "$65"),
    ],
)
def test_second_factor_shapes_accepted(factor: str, accepted: str) -> None:
    args = VerifyCallerArguments(
        account_number="4417-90781", name_on_account="A B", second_factor=factor
    )
    assert args.second_factor == accepted


@pytest.mark.parametrize("factor", ["6552 cents", "123", "65.5", "65", "abcd", "1234567", "$"])
def test_second_factor_other_shapes_rejected(factor: str) -> None:
    with pytest.raises(ValidationError):
        VerifyCallerArguments(
            account_number="4417-90781", name_on_account="A B", second_factor=factor
        )


# --- verify_caller against the seeded world -----------------------------------------------------


def _verify(session: CallSession, account: Account, **override: str) -> dict[str, Any]:
    args = {
        "account_number": account.account_number,
        "name_on_account": account.full_name,
        "second_factor": account.mailing_address.postal_code,
    }
    args.update(override)
    return session.call("verify_caller", args)


@pytest.mark.parametrize("kind", FACTOR_KINDS)
@pytest.mark.parametrize("number", ACCOUNT_NUMBERS)
def test_every_account_verifies_with_every_kind_of_second_factor(
    session: CallSession,
    manifest: Manifest,
    factor_of: Callable[[Account, str], str],
    number: str,
    kind: str,
) -> None:
    account = manifest.account(number)
    result = _verify(session, account, second_factor=factor_of(account, kind))
    assert result == {"status": "verified"}
    assert session.verified_account is not None
    assert session.verified_account.account_number == number
    assert session.writes() == []


def test_every_card_on_file_counts_including_declining_ones(
    session: CallSession, manifest: Manifest
) -> None:
    declining = [a for a in manifest.accounts if any(c.declines for c in a.cards)]
    assert declining, "the world should have declining cards"
    for account in declining:
        for card in account.cards:
            fresh = CallSession(session.clients)
            assert _verify(fresh, account, second_factor=card.last4) == {"status": "verified"}


def test_a_name_that_sounds_the_same_verifies(session: CallSession, manifest: Manifest) -> None:
    account = manifest.accounts[0]

    def blur(part: str) -> str:  # other vowels, same consonants: same Soundex code
        return part[0] + "".join("e" if ch in "aiou" else ch for ch in part[1:].lower())

    sounded = " ".join(blur(p) for p in account.full_name.split())
    assert sounded != account.full_name
    assert _verify(session, account, name_on_account=sounded) == {"status": "verified"}


def _wrong_answers(manifest: Manifest) -> list[dict[str, str]]:
    account, other = manifest.accounts[0], manifest.accounts[1]
    return [
        {"account_number": other.account_number},
        {"name_on_account": other.full_name},
        {"name_on_account": account.first_name},  # part count differs
        {"second_factor": other.mailing_address.postal_code},
        {"second_factor": "0000"},
        {"second_factor": "$0.01"},
        {"account_number": "0000-00000"},
    ]


@pytest.mark.parametrize("case", range(7))
def test_each_wrong_answer_fails_the_same_way(
    session: CallSession, manifest: Manifest, case: int
) -> None:
    account = manifest.accounts[0]
    override = _wrong_answers(manifest)[case]
    if "second_factor" in override:
        assert override["second_factor"] != account.mailing_address.postal_code
    result = _verify(session, account, **override)
    # The same answer whichever factor failed: nothing says which one.
    assert result == {"status": "not_verified", "attempts_remaining": 2}
    assert not session.verified


def test_three_failures_lock_and_a_correct_fourth_attempt_is_refused(
    session: CallSession, manifest: Manifest
) -> None:
    account = manifest.accounts[0]
    other = manifest.accounts[1]
    assert _verify(session, account, account_number=other.account_number) == {
        "status": "not_verified",
        "attempts_remaining": 2,
    }
    assert _verify(session, account, name_on_account="Nobody Atall") == {
        "status": "not_verified",
        "attempts_remaining": 1,
    }
    assert _verify(session, account, second_factor="0000") == {"status": "locked_out"}
    assert session.locked
    assert _verify(session, account) == {"status": "locked_out"}  # correct, still refused
    assert not session.verified
    assert session.call("get_account") == {"error": LOCKED_OUT}
    # Transfer still works after a lockout.
    assert session.call("transfer_to_human", {"reason": "locked out"})["status"] == "transferring"


def test_a_malformed_account_number_is_a_bad_argument_not_an_attempt(
    session: CallSession, manifest: Manifest
) -> None:
    account = manifest.accounts[0]
    for text in ("4417 90781", "441790781", "4417-9078", "ABCD-EFGHI"):
        result = _verify(session, account, account_number=text)
        assert "account_number" in result["error"]
    assert session.failed_attempts == 0
    assert _verify(session, account) == {"status": "verified"}


@pytest.mark.parametrize("tool", [t for t in TOOL_NAMES if t not in ("verify_caller",)])
def test_only_verify_and_transfer_work_before_verification(session: CallSession, tool: str) -> None:
    table: dict[str, dict[str, Any]] = {
        "transfer_to_human": {"reason": "caller asked for a supervisor"},
        "get_bill": {"bill_id": "in_abc"},
        "explain_bill": {"bill_id": "in_abc"},
        "compare_bills": {"bill_id": "in_abc", "compare_to_bill_id": "in_def"},
        "make_payment": {"bill_id": "in_abc", "payment_method_id": "pm_abc", "amount_cents": 1},
        "quote_payment_arrangement": {"installments": 3},
        "create_payment_arrangement": {"installments": 3},
        "modify_payment_arrangement": {"amount_cents": 100},
        "request_due_date_extension": {"bill_id": "in_abc", "days": 5},
        "set_paperless_billing": {"enabled": True},
    }
    result = session.call(tool, table.get(tool, {}))
    if tool == "transfer_to_human":
        assert result["status"] == "transferring"
        assert session.transferred
    else:
        assert result == {"error": NOT_VERIFIED}
    assert session.writes() == []
    assert session.trace[-1].verified is False


def test_after_verification_other_accounts_bills_and_cards_are_not_found(
    verified: Callable[[str], CallSession],
    session: CallSession,
    manifest: Manifest,
    report: SeedReport,
) -> None:
    mine, theirs = manifest.accounts[0], manifest.accounts[1]
    verified(mine.account_number)
    their_bill = next(iter(report.accounts[theirs.account_number].invoices.values()))
    their_card = next(iter(report.accounts[theirs.account_number].payment_methods.values()))
    my_bill = next(
        report.accounts[mine.account_number].invoices[b.number_suffix] for b in mine.bills
    )
    checks: list[tuple[str, dict[str, Any]]] = [
        ("get_bill", {"bill_id": their_bill}),
        ("explain_bill", {"bill_id": their_bill}),
        ("compare_bills", {"bill_id": my_bill, "compare_to_bill_id": their_bill}),
        ("request_due_date_extension", {"bill_id": their_bill, "days": 5}),
    ]
    for tool, args in checks:
        result = session.call(tool, args)
        assert "No bill with that id on this account" in result["error"], (tool, result)
    open_bill = next((b for b in mine.bills if b.status == "open"), None)
    if open_bill is not None:
        bill_id = report.accounts[mine.account_number].invoices[open_bill.number_suffix]
        result = session.call(
            "make_payment",
            {
                "bill_id": bill_id,
                "payment_method_id": their_card,
                "amount_cents": open_bill.total_cents,
            },
        )
        assert "not a card on file for this account" in result["error"]
    result = session.call(
        "make_payment",
        {"bill_id": their_bill, "payment_method_id": their_card, "amount_cents": 100},
    )
    assert "No bill with that id on this account" in result["error"]
    assert session.writes() == []


def test_a_failed_reverification_keeps_the_verified_account(
    verified: Callable[[str], CallSession], session: CallSession, manifest: Manifest
) -> None:
    account, other = manifest.accounts[0], manifest.accounts[1]
    verified(account.account_number)
    assert _verify(session, other, second_factor="0000") == {
        "status": "not_verified",
        "attempts_remaining": 2,
    }
    assert session.verified_account is not None
    assert session.verified_account.account_number == account.account_number
    # A successful verification of another account switches the call to it.
    assert _verify(session, other) == {"status": "verified"}
    assert session.verified_account.account_number == other.account_number
    assert session.call("get_account")["account_number"] == other.account_number

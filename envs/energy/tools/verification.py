"""The verification gate: verify_caller and the matching rules behind it.

Rules (DOMAIN.md section 5):

- **Account number**: exactly one billing customer whose ``metadata['account_number']``
  equals it and a loan-engine client whose ``externalId`` equals it (both exact,
  case-sensitive). When the customer records a ``fineract_client_id`` it must name that
  client. The format (``NNNN-NNNNN``) is checked by the argument model, so a malformed
  number is a bad argument, not a failed attempt.
- **Name**: by sound. Both names are split into parts at spaces and hyphens ("Smith-Jones"
  is two parts, as a caller saying it aloud gives two words); apostrophes, periods and
  other non-letters are dropped and accents folded ("O'Brien" = "OBrien", "José" =
  "Jose"). The names match when they have the same number of parts and each part has the
  same American Soundex code, in order.
- **Second factor**: exactly one, told apart by its shape: 4 digits = the last four of
  any card on file (declining cards included), 5 digits = the mailing postal code, a
  dollar amount with a "$" or a decimal point ("65.52", "$65.52", "$1,234.56", "$65")
  = the total of the most recent bill. Matched exactly.

The result is only ``{"status": "verified"}``, ``{"status": "not_verified",
"attempts_remaining": n}`` or ``{"status": "locked_out"}``: never which answer failed,
never account data. The third failure locks verification for the call (the result of
that attempt is ``locked_out``), and every later attempt is refused unchecked, even a
correct one. A successful verification (again) makes that account the call's account; a
failed attempt after a success keeps the earlier verified account.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal
from typing import Any

from vamos_env.envs.energy.tools.arguments import VerifyCallerArguments
from vamos_env.envs.energy.tools.context import ToolContext
from vamos_env.envs.energy.tools.records import VerifiedAccount

_SOUNDEX_CODES = {
    letter: digit
    for letters, digit in (
        ("bfpv", "1"),
        ("cgjkqsxz", "2"),
        ("dt", "3"),
        ("l", "4"),
        ("mn", "5"),
        ("r", "6"),
    )
    for letter in letters
}


def soundex(word: str) -> str:
    """American Soundex of one word: first letter plus three digits ("Robert" -> "R163").

    Letters with the same code next to each other count once, also across "h" and "w";
    a vowel (or "y") between them makes them count twice. Non-letters are ignored.
    """
    letters = [ch for ch in _fold(word) if "a" <= ch <= "z"]
    if not letters:
        return ""
    out = [letters[0].upper()]
    previous = _SOUNDEX_CODES.get(letters[0], "")
    for ch in letters[1:]:
        code = _SOUNDEX_CODES.get(ch, "")
        if code and code != previous:
            out.append(code)
            if len(out) == 4:
                break
        if ch not in "hw":
            previous = code
    return "".join(out).ljust(4, "0")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def name_parts(name: str) -> list[str]:
    """A name's parts: split at whitespace and hyphens, non-letters dropped, empties removed."""
    parts = []
    for raw in _fold(name).replace("-", " ").split():
        letters = "".join(ch for ch in raw if "a" <= ch <= "z")
        if letters:
            parts.append(letters)
    return parts


def names_match(said: str, on_file: str) -> bool:
    """Same number of parts and the same Soundex code for each part, in order."""
    said_parts, file_parts = name_parts(said), name_parts(on_file)
    if not said_parts or len(said_parts) != len(file_parts):
        return False
    return all(soundex(a) == soundex(b) for a, b in zip(said_parts, file_parts, strict=True))


def amount_cents(text: str) -> int:
    """A dollar amount as the argument model accepts it ("$1,234.56", "65.52", "$65") in cents."""
    digits = text.replace("$", "").replace(",", "")
    return int(Decimal(digits) * 100)


def verify_caller(ctx: ToolContext, args: VerifyCallerArguments) -> dict[str, Any]:
    gate = ctx.verification
    if gate.locked:
        return {"status": "locked_out"}
    account = _matching_account(ctx, args)
    if account is None:
        gate.failures += 1
        if gate.locked:
            return {"status": "locked_out"}
        return {"status": "not_verified", "attempts_remaining": gate.attempts_remaining}
    gate.account = account
    ctx.forget_reads()
    return {"status": "verified"}


def _matching_account(ctx: ToolContext, args: VerifyCallerArguments) -> VerifiedAccount | None:
    """The account all three answers fit, else None.

    The name and the second factor are checked even when the number already failed (on
    the customer found, if any), so the work done says little about which answer failed.
    """
    number = args.account_number
    found = ctx.billing.get(
        "/v1/customers/search", query=f"metadata['account_number']:'{number}'", limit=10
    )
    customers = [
        c
        for c in found.get("data") or []
        if (c.get("metadata") or {}).get("account_number") == number
    ]
    client = ctx.clients.fineract.find_client_by_external_id(number)
    number_ok = len(customers) == 1 and client is not None and client.get("externalId") == number
    customer = customers[0] if customers else {}
    client_id = int(client.get("id") or 0) if client is not None else 0
    recorded = str((customer.get("metadata") or {}).get("fineract_client_id") or "").strip()
    if recorded and recorded != str(client_id):
        number_ok = False

    name_ok = names_match(args.name_on_account, str(customer.get("name") or ""))
    factor_ok = bool(customer) and _second_factor_matches(ctx, customer, args.second_factor)
    if number_ok and name_ok and factor_ok:
        return VerifiedAccount(
            customer_id=str(customer["id"]), account_number=number, fineract_client_id=client_id
        )
    return None


def _second_factor_matches(ctx: ToolContext, customer: dict[str, Any], factor: str) -> bool:
    customer_id = str(customer["id"])
    if len(factor) == 4 and factor.isdigit():
        cards = ctx.billing.list_all(f"/v1/customers/{customer_id}/payment_methods", type="card")
        return any((card.get("card") or {}).get("last4") == factor for card in cards)
    if len(factor) == 5 and factor.isdigit():
        return ((customer.get("address") or {}).get("postal_code") or "") == factor
    wanted = amount_cents(factor)
    invoices = ctx.billing.list_all("/v1/invoices", customer=customer_id)
    finalized = [inv for inv in invoices if inv.get("status") not in ("draft", "void")]
    if not finalized:
        return False
    latest = max(finalized, key=lambda inv: (int(inv.get("created") or 0), inv.get("number") or ""))
    return int(latest.get("total") or 0) == wanted

"""The 16 tools: names, manuals, argument models and implementations, in one registry.

``TOOLS`` maps each tool name of DOMAIN.md section 4 to its ``ToolSpec``. The JSON
schemas an agent receives (``tool_schemas()``, OpenAI function-calling format) are
generated from the argument models, so the arguments are described once.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from vamos_env.envs.energy.tools import account, arrangements, bills, verification
from vamos_env.envs.energy.tools.arguments import (
    BillArguments,
    CompareBillsArguments,
    ExtensionArguments,
    InstallmentsArguments,
    MakePaymentArguments,
    ModifyArrangementArguments,
    NoArguments,
    PaperlessArguments,
    ToolArguments,
    TransferArguments,
    VerifyCallerArguments,
)
from vamos_env.envs.energy.tools.context import ToolContext

_AFTER_VERIFY = "Only after verify_caller returned verified."
_MONEY = "Money is in integer cents with a *_display string beside it."


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its manual, its argument model and its implementation."""

    name: str
    description: str
    arguments: type[ToolArguments]
    run: Callable[[ToolContext, Any], dict[str, Any]]
    before_verification: bool = False

    def schema(self) -> dict[str, Any]:
        """The tool in OpenAI's function-calling format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters_schema(self.arguments),
            },
        }


def parameters_schema(model: type[ToolArguments]) -> dict[str, Any]:
    """A model's JSON schema, trimmed for function calling: no titles, no null branches."""
    raw = model.model_json_schema()
    properties: dict[str, Any] = {}
    for name, prop in (raw.get("properties") or {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        branches = prop.pop("anyOf", None)
        if branches is not None:
            # An optional argument: describe its real type; leaving it out means "default".
            real = [b for b in branches if b.get("type") != "null"]
            prop = {**real[0], **prop} if len(real) == 1 else {"anyOf": real, **prop}
            if prop.get("default", "") is None:
                del prop["default"]
        properties[name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": list(raw.get("required") or []),
        "additionalProperties": False,
    }


_SPECS = (
    ToolSpec(
        name="verify_caller",
        description=(
            "Check the caller's identity. Ask for the account number, the full name on the "
            "account and ONE second factor (the last four digits of a card on file, the "
            "mailing postal code, or the total of the most recent bill), then call this once "
            "with all three. Returns only {status: verified}, {status: not_verified, "
            "attempts_remaining} or {status: locked_out}: it never says which answer was "
            "wrong, so neither may you. The name is matched by sound, part by part, so say "
            "every part the caller gave. Three failed attempts lock verification for the "
            "call; after that, offer a transfer. Works before verification."
        ),
        arguments=VerifyCallerArguments,
        run=verification.verify_caller,
        before_verification=True,
    ),
    ToolSpec(
        name="get_account",
        description=(
            "The verified account: holder name, account number, email, phone, mailing "
            "address, paperless flag, supplier, premises (service address, meter), cards on "
            "file (payment_method_id, brand, last4, expiry), amount and days past due, open "
            "balance, shutoff-process flag, whether an arrangement is active, income tier "
            "and the allowed arrangement term (min_installments..max_installments), "
            f"protections (winter, medical certificate). {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=NoArguments,
        run=account.get_account,
    ),
    ToolSpec(
        name="list_bills",
        description=(
            "The account's bills of the last 13 months, newest first: bill_id (in_...), "
            "number, bill date, total, amount remaining, due date, status (paid or open), "
            f"past_due flag and service period (end date exclusive). {_MONEY} "
            f"{_AFTER_VERIFY}"
        ),
        arguments=NoArguments,
        run=bills.list_bills,
    ),
    ToolSpec(
        name="get_bill",
        description=(
            "One bill of the verified account with every line: description, amount, "
            "charge type (supply, delivery, customer_charge, tax), kWh, rate in cents per "
            f"kWh, service period, meter read dates and read type. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=BillArguments,
        run=bills.get_bill,
    ),
    ToolSpec(
        name="explain_bill",
        description=(
            "A charge-by-charge explanation of one bill: subtotals per charge type, kWh and "
            "rate per metered line, meter read dates, total kWh (each meter reading counted "
            "once, although supply and delivery both bill it), fixed charges and taxes, and "
            f"a ready 'say' sentence. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=BillArguments,
        run=bills.explain_bill,
    ),
    ToolSpec(
        name="compare_bills",
        description=(
            "Why two bills differ: splits the difference (newer minus older, whichever id "
            "comes first) into usage, rate (price), period length and fixed charges/taxes; "
            f"the parts add up to the difference exactly. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=CompareBillsArguments,
        run=bills.compare_bills,
    ),
    ToolSpec(
        name="get_payment_history",
        description=(
            "Paid bills (with the date paid, and whether a bill was settled by moving it into "
            "a payment arrangement), open bills, and the arrangement's instalments and "
            f"recorded payments if there is one. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=NoArguments,
        run=bills.get_payment_history,
    ),
    ToolSpec(
        name="make_payment",
        description=(
            "Pay one open bill in full with a card already on file. Call only after you read "
            "back the card's last four digits and the amount and the caller agreed. The "
            "amount must equal the bill's amount_remaining_cents exactly (partial payments "
            "are refused with the amount expected). Never take a card number by phone. A "
            "declined card returns an error: tell the caller the bill was NOT paid and why. "
            f"{_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=MakePaymentArguments,
        run=bills.make_payment,
    ),
    ToolSpec(
        name="quote_payment_arrangement",
        description=(
            "Quote a payment arrangement over the past-due amount in the given number of "
            "monthly instalments; enrols nobody. Returns allowed or not and why (kind: quote, "
            "quote_then_transfer when a 25% down payment is required, refused, or transfer "
            "for the shutoff process), the down payment, first and monthly instalment, first "
            "due date (30 days from today) and the schedule. Say the down payment and the "
            f"monthly amount before creating anything. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=InstallmentsArguments,
        run=arrangements.quote_payment_arrangement,
    ),
    ToolSpec(
        name="create_payment_arrangement",
        description=(
            "Open the payment arrangement exactly as quoted for this number of instalments. "
            "Call only after quoting it, stating the down payment and monthly amount, and "
            "getting the caller's agreement. Refused when the quote is not a plain quote: "
            "not eligible, shutoff process (transfer), or a down payment required (the tools "
            "cannot collect a down payment: transfer). The past-due bills move into the "
            "arrangement, so afterwards the bill balance no longer shows them. "
            f"{_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=InstallmentsArguments,
        run=arrangements.create_payment_arrangement,
    ),
    ToolSpec(
        name="get_payment_arrangement",
        description=(
            "The account's payment arrangement from the loan engine: original amount, "
            "outstanding balance, every instalment (due date, amount due, paid, settled, "
            "overdue), overdue count and the next (or oldest overdue) instalment. A bill "
            "balance of zero does not mean the arrangement is current: read it here. "
            f"{_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=NoArguments,
        run=arrangements.get_payment_arrangement,
    ),
    ToolSpec(
        name="modify_payment_arrangement",
        description=(
            "Record a payment the caller has ALREADY made toward the active arrangement "
            "(amount in cents, date it was paid; today when left out). A promise to pay "
            "later is not a payment: do not record it. The loan engine refuses a future "
            "date. Returns the new outstanding balance and the next instalment. "
            f"{_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=ModifyArrangementArguments,
        run=arrangements.modify_payment_arrangement,
    ),
    ToolSpec(
        name="request_due_date_extension",
        description=(
            "Ask to move an open bill's due date by 1 to 15 days (once per rolling 12 "
            "months). Policy is checked first; then the billing system is asked to move "
            "the date, and it refuses for a finalized bill: report the result exactly "
            "(extended true or false), say the new date only if it moved, and that the bill "
            f"is still owed. {_MONEY} {_AFTER_VERIFY}"
        ),
        arguments=ExtensionArguments,
        run=bills.request_due_date_extension,
    ),
    ToolSpec(
        name="set_paperless_billing",
        description=(
            "Turn paperless billing on (true) or off (false). Before turning it on, read the "
            "email address on file aloud and wait until the caller confirms the address and "
            "agrees; never on a mere question. "
            f"{_AFTER_VERIFY}"
        ),
        arguments=PaperlessArguments,
        run=account.set_paperless_billing,
    ),
    ToolSpec(
        name="get_supplier_info",
        description=(
            "Who supplies the account's electricity: Acme Energy default service or a "
            "third-party retail-choice supplier, with the supply rate on the latest bill. "
            f"{_AFTER_VERIFY}"
        ),
        arguments=NoArguments,
        run=account.get_supplier_info,
    ),
    ToolSpec(
        name="transfer_to_human",
        description=(
            "Hand the call to a person: the shutoff process, disputes to investigate, "
            "medical or protected-status decisions, a required down payment, a locked "
            "verification, or a request for a supervisor. Tell the caller before calling "
            "it. Works before verification; no other tool works after it."
        ),
        arguments=TransferArguments,
        run=account.transfer_to_human,
        before_verification=True,
    ),
)

TOOLS: Mapping[str, ToolSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)


@cache
def _schemas() -> tuple[dict[str, Any], ...]:
    return tuple(spec.schema() for spec in _SPECS)


def tool_schemas() -> list[dict[str, Any]]:
    """The 16 tools in OpenAI function-calling format (a fresh copy each time)."""
    return copy.deepcopy(list(_schemas()))

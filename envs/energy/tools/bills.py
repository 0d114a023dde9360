"""Bill tools: list, read, explain and compare bills; payment history; card payments; extensions."""

from __future__ import annotations

from typing import Any

import stripe

from vamos_env.clock import unix
from vamos_env.envs.energy import policy
from vamos_env.envs.energy.policy import extension_decision, format_cents, format_date
from vamos_env.envs.energy.tools.arguments import (
    BillArguments,
    CompareBillsArguments,
    ExtensionArguments,
    MakePaymentArguments,
    NoArguments,
)
from vamos_env.envs.energy.tools.context import ToolContext
from vamos_env.envs.energy.tools.refusal import ToolRefusal

_DECLINE_WORDS = {
    "generic_decline": "the bank declined it without giving a reason",
    "insufficient_funds": "insufficient funds",
    "expired_card": "the card has expired",
    "lost_card": "the card was reported lost",
    "stolen_card": "the card was reported stolen",
    "processing_error": "a processing error at the bank",
    "incorrect_cvc": "an incorrect security code",
    "card_velocity_exceeded": "the card's limit was reached",
    "do_not_honor": "the bank declined it",
}


def list_bills(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    bills = ctx.records.recent_bills()
    open_bills = [b for b in bills if b.remaining_cents > 0]
    if not bills:
        say = "There are no bills in the last 13 months."
    else:
        say = (
            f"{len(bills)} bill{'s' if len(bills) != 1 else ''} in the last 13 months, newest "
            f"first; {len(open_bills)} still open."
        )
    return {
        "count": len(bills),
        "bills": [b.summary(ctx.today) for b in bills],
        "say": say,
    }


def _line_result(line: dict[str, Any]) -> dict[str, Any]:
    meta = {str(k): str(v) for k, v in (line.get("metadata") or {}).items()}
    decoded = policy.BillLineFacts.from_stripe_line(line)
    return {
        "description": decoded.description,
        "amount_cents": decoded.amount_cents,
        "charge_type": decoded.charge_type,
        "kwh": decoded.kwh,
        "rate_cents_per_kwh": meta.get("rate_cents_per_kwh"),
        "period_start": decoded.period_start.isoformat(),
        "period_end": decoded.period_end.isoformat(),
        "read_start": meta.get("read_start") or None,
        "read_end": meta.get("read_end") or None,
        "read_type": meta.get("read_type") or None,
        "meter_number": meta.get("meter_number") or None,
        "premise_id": meta.get("premise_id") or None,
        "metadata": meta,
    }


def get_bill(ctx: ToolContext, args: BillArguments) -> dict[str, Any]:
    bill = ctx.records.bill(args.bill_id)
    out = bill.summary(ctx.today)
    out["amount_paid_cents"] = int(bill.invoice.get("amount_paid") or 0)
    out["lines"] = [_line_result(line) for line in bill.lines]
    return out


def explain_bill(ctx: ToolContext, args: BillArguments) -> dict[str, Any]:
    bill = ctx.records.bill(args.bill_id)
    out: dict[str, Any] = policy.explain_bill(bill.facts).model_dump(mode="json")
    out["number"] = bill.number
    return out


def compare_bills(ctx: ToolContext, args: CompareBillsArguments) -> dict[str, Any]:
    if args.bill_id == args.compare_to_bill_id:
        raise ToolRefusal("Choose two different bills to compare.")
    first = ctx.records.bill(args.bill_id)
    second = ctx.records.bill(args.compare_to_bill_id)
    older, newer = sorted((first, second), key=lambda b: (b.facts.bill_date, b.number or ""))
    out: dict[str, Any] = policy.compare_bills(older.facts, newer.facts).model_dump(mode="json")
    out["older_bill_id"] = older.bill_id
    out["newer_bill_id"] = newer.bill_id
    return out


def get_payment_history(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    records = ctx.records
    bills = records.bills()
    paid, open_ = [], []
    for bill in bills:
        if bill.status == "paid":
            paid.append(
                {
                    "bill_id": bill.bill_id,
                    "number": bill.number,
                    "total_cents": bill.facts.total_cents,
                    "amount_paid_cents": int(bill.invoice.get("amount_paid") or 0),
                    "paid_on": None if bill.paid_on is None else bill.paid_on.isoformat(),
                    # Opening an arrangement settles the bills it finances and tags them;
                    # a cheque is also paid outside Stripe but is not an arrangement.
                    "moved_to_arrangement": bool(
                        (bill.invoice.get("metadata") or {}).get("arrangement_id")
                    ),
                }
            )
        elif bill.remaining_cents > 0:
            open_.append(
                {
                    "bill_id": bill.bill_id,
                    "number": bill.number,
                    "amount_remaining_cents": bill.remaining_cents,
                    "due_date": bill.facts.due_date.isoformat(),
                    "past_due": bill.is_past_due(ctx.today),
                }
            )
    arrangement = records.arrangement()
    plan = None if arrangement is None else arrangement.as_result(ctx.today)
    say = f"{len(paid)} paid bill{'s' if len(paid) != 1 else ''} and {len(open_)} open."
    if plan is not None:
        say += f" {plan['say']}"
    return {"paid_bills": paid, "open_bills": open_, "arrangement": plan, "say": say}


def _confirmation_id(ctx: ToolContext, invoice: dict[str, Any]) -> str:
    """The payment's reference in the billing ledger: the payment intent that paid the bill.

    Current Stripe API versions no longer put it on the invoice; it is on the invoice's
    InvoicePayment records. Older shapes (``payment_intent``/``charge`` on the invoice) and,
    as a last resort, the bill number are used when the listing has none.
    """
    for key in ("payment_intent", "charge"):
        ref = invoice.get(key)
        if ref:
            return str(ref if isinstance(ref, str) else ref.get("id"))
    listing = ctx.billing.get(
        "/v1/invoice_payments", invoice=str(invoice["id"]), status="paid", limit=10
    )
    for entry in listing.get("data") or []:
        payment = entry.get("payment") or {}
        ref = payment.get("payment_intent") or payment.get("charge") or entry.get("id")
        if ref:
            return str(ref if isinstance(ref, str) else ref.get("id"))
    return str(invoice.get("number") or invoice["id"])


def make_payment(ctx: ToolContext, args: MakePaymentArguments) -> dict[str, Any]:
    records = ctx.records
    bill = records.bill(args.bill_id)
    if bill.status == "paid" or bill.remaining_cents <= 0:
        raise ToolRefusal("This bill is already paid; nothing is owed on it.", paid=False)
    if bill.status != "open":
        raise ToolRefusal(f"This bill is {bill.status} and cannot be paid.", paid=False)
    owed = bill.remaining_cents
    if args.amount_cents != owed:
        raise ToolRefusal(
            f"Only the full remaining amount of this bill can be paid: {owed} cents "
            f"({format_cents(owed)}), not {args.amount_cents} cents. Partial payments are "
            "not taken; confirm the full amount with the caller first.",
            paid=False,
            expected_amount_cents=owed,
        )
    card = records.card(args.payment_method_id)
    details = card.get("card") or {}
    last4 = str(details.get("last4") or "")
    brand = str(details.get("brand") or "card")
    try:
        invoice = ctx.write(
            "stripe",
            "invoices.pay",
            bill.bill_id,
            lambda: ctx.billing.post(
                f"/v1/invoices/{bill.bill_id}/pay", payment_method=args.payment_method_id
            ),
            payment_method=args.payment_method_id,
            amount_cents=owed,
        )
    except stripe.CardError as exc:
        decline_code = getattr(exc.error, "decline_code", None) if exc.error else None
        reason_code = decline_code or exc.code or "card_declined"
        reason = _DECLINE_WORDS.get(reason_code, reason_code.replace("_", " "))
        raise ToolRefusal(
            f"Payment declined: the {brand} card ending {last4} was declined ({reason}). "
            f"The bill was NOT paid and nothing was charged; {format_cents(owed)} is still "
            "owed.",
            say=(
                f"I'm sorry, the card ending {last4} was declined, so the bill has not been "
                "paid. Would you like to try another card on file?"
            ),
            paid=False,
            decline_code=reason_code,
            card_last4=last4,
            amount_remaining_cents=owed,
        ) from None
    paid = invoice
    amount_paid = int(paid.get("amount_paid") or owed)
    confirmation = _confirmation_id(ctx, paid)
    return {
        "paid": True,
        "bill_id": bill.bill_id,
        "amount_paid_cents": amount_paid,
        "card_brand": brand,
        "card_last4": last4,
        "confirmation_id": confirmation,
        "amount_remaining_cents": int(paid.get("amount_remaining") or 0),
        "say": (
            f"The payment of {format_cents(amount_paid)} on the card ending {last4} went "
            "through; the bill is paid."
        ),
    }


def request_due_date_extension(ctx: ToolContext, args: ExtensionArguments) -> dict[str, Any]:
    records = ctx.records
    bill = records.bill(args.bill_id)
    if bill.status != "open" or bill.remaining_cents <= 0:
        raise ToolRefusal("This bill is already paid; there is no due date to extend.")
    decision = extension_decision(records.facts(), args.days, bill.facts.due_date, ctx.today)
    common: dict[str, Any] = {
        "bill_id": bill.bill_id,
        "due_date": bill.facts.due_date.isoformat(),
        "days": args.days,
        "amount_remaining_cents": bill.remaining_cents,
    }
    if not decision.allowed or decision.new_due_date is None:
        raise ToolRefusal(
            decision.say,
            extended=False,
            policy_allowed=False,
            reason=decision.reason,
            last_extension_on=_iso(decision.last_extension_on),
            next_eligible_on=_iso(decision.next_eligible_on),
            **common,
        )
    new_due = decision.new_due_date
    try:
        ctx.write(
            "stripe",
            "invoices.update",
            bill.bill_id,
            lambda: ctx.billing.post(f"/v1/invoices/{bill.bill_id}", due_date=unix(new_due)),
            due_date=new_due.isoformat(),
        )
    except stripe.InvalidRequestError as exc:
        refusal = exc.user_message or str(exc)
        raise ToolRefusal(
            f"Policy allows moving the due date {args.days} days to {format_date(new_due)}, "
            f"but the billing system refused to change it ({refusal}). The due date has NOT "
            f"changed: the bill of {format_cents(bill.remaining_cents)} is still due "
            f"{format_date(bill.facts.due_date)}.",
            say=(
                f"I'm sorry, our billing system won't let me move the due date on this bill, "
                f"so it stays {format_date(bill.facts.due_date)}, and the "
                f"{format_cents(bill.remaining_cents)} is still owed."
            ),
            extended=False,
            policy_allowed=True,
            requested_due_date=new_due.isoformat(),
            **common,
        ) from None
    customer_id = ctx.account.customer_id
    today = ctx.today.isoformat()
    ctx.write(
        "stripe",
        "customers.update",
        customer_id,
        lambda: ctx.billing.post(
            f"/v1/customers/{customer_id}", metadata={"last_extension_on": today}
        ),
        metadata={"last_extension_on": today},
    )
    return {
        "extended": True,
        "new_due_date": new_due.isoformat(),
        "new_due_date_display": format_date(new_due),
        "say": decision.say,
        **common,
    }


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())

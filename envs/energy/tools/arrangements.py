"""Arrangement tools: quote, create, read, and record a payment on a payment arrangement.

An arrangement is a zero-interest loan in the loan engine over the account's arrears.
Opening one (a decision taken for the whole project):

1. the quote must be a plain ``quote`` (eligible, within the term limits, no down payment);
2. the loan is submitted with principal = exactly the past-due amount the billing service
   reports, approved and disbursed today, first repayment 30 days after today;
3. the loan id is recorded on the billing customer as ``metadata['arrangement_id']``;
4. each past-due bill gets ``metadata['arrangement_id']`` and is marked paid out of band,
   because its arrears moved into the arrangement.

Afterwards the bills show no arrears while the arrangement carries them, which is exactly
the "overdue instalment while the bill balance is current" situation the agent must read
from the arrangement itself. An arrangement counts as active when the customer's
``arrangement_id`` names a loan with status active (300).

Recording a payment follows the loan engine: the payment date defaults to today, a date
after today is refused by the engine (its refusal is passed on in plain words), and an
amount above the outstanding balance is accepted by the engine, which then reports the
loan as overpaid (Fineract's own behaviour; the tool does not second-guess it).
"""

from __future__ import annotations

from datetime import date
from functools import partial
from typing import Any

from vamos_env.clients.fineract import FineractError
from vamos_env.envs.energy.policy import Quote, format_cents, format_date, quote_arrangement
from vamos_env.envs.energy.tools.arguments import (
    InstallmentsArguments,
    ModifyArrangementArguments,
    NoArguments,
)
from vamos_env.envs.energy.tools.context import ToolContext
from vamos_env.envs.energy.tools.refusal import ToolRefusal

ARRANGEMENT_PRODUCT_NAME = "Payment Arrangement"

# Loan-engine refusals an agent may meet, in words a caller can be told.
_FINERACT_WORDS = {
    "error.msg.loan.transaction.cannot.be.a.future.date": (
        "the payment date is in the future, and only payments already made can be recorded"
    ),
    "error.msg.loan.transaction.cannot.be.before.disbursement.date": (
        "the payment date is before the arrangement started"
    ),
    "error.msg.loan.repayment.or.waiver.cannot.be.made.on.closed.loan": (
        "the arrangement is already closed"
    ),
}


def fineract_refusal_words(exc: FineractError) -> str:
    """The loan engine's refusal in plain words (its own message when the code is unknown)."""
    known = _FINERACT_WORDS.get(exc.code or "")
    if known is not None:
        return known
    for error in exc.errors or []:
        known = _FINERACT_WORDS.get(str(error.get("userMessageGlobalisationCode") or ""))
        if known is not None:
            return known
    messages = [
        str(e.get("defaultUserMessage")) for e in exc.errors or [] if e.get("defaultUserMessage")
    ]
    if messages:
        return "; ".join(messages)
    body = exc.body if isinstance(exc.body, dict) else {}
    return str(body.get("defaultUserMessage") or exc.code or f"HTTP {exc.status}")


def _quote_result(quote: Quote) -> dict[str, Any]:
    out: dict[str, Any] = quote.model_dump(mode="json")
    tier = out.pop("income_tier")
    out["income_tier"] = "unknown" if tier["code"] == "fpl_unknown" else tier["code"]
    out["income_tier_label"] = tier["label"]
    if quote.first_due_date is not None:
        out["first_due_date_display"] = format_date(quote.first_due_date)
    return out


def quote_payment_arrangement(ctx: ToolContext, args: InstallmentsArguments) -> dict[str, Any]:
    quote = quote_arrangement(ctx.records.facts(), args.installments, ctx.today)
    out = _quote_result(quote)
    out["enrolled"] = False
    out["next_step"] = {
        "quote": (
            "State the down payment (none) and the monthly amounts; create the arrangement "
            "only after the caller agrees."
        ),
        "quote_then_transfer": (
            "State the down payment and the amounts, then transfer: the tools cannot "
            "collect a down payment."
        ),
        "transfer": "Transfer the call to a colleague (transfer_to_human).",
        "refused": "Explain why no arrangement is possible.",
    }[quote.kind]
    return out


def create_payment_arrangement(ctx: ToolContext, args: InstallmentsArguments) -> dict[str, Any]:
    records = ctx.records
    facts = records.facts()
    quote = quote_arrangement(facts, args.installments, ctx.today)
    if quote.kind == "quote_then_transfer":
        raise ToolRefusal(
            f"A down payment of {quote.down_payment_display} is required before an "
            "arrangement (an earlier arrangement was defaulted on within 12 months), and the "
            "tools cannot collect a down payment: state the quote, then transfer the call "
            "to a colleague.",
            say=quote.say,
            created=False,
            quote=_quote_result(quote),
        )
    if quote.kind == "transfer":
        raise ToolRefusal(
            f"{quote.say} No arrangement was created; transfer the call to a colleague.",
            say=quote.say,
            created=False,
            reason=quote.reason,
        )
    if quote.kind != "quote" or quote.financed_cents is None or quote.first_due_date is None:
        raise ToolRefusal(quote.say, say=quote.say, created=False, reason=quote.reason)

    principal = quote.financed_cents
    first_due = quote.first_due_date
    today = ctx.today
    client_id = ctx.account.fineract_client_id
    customer_id = ctx.account.customer_id
    moved = records.past_due_bills()
    product_id = _arrangement_product_id(ctx)
    fineract = ctx.clients.fineract
    billing = ctx.billing

    done: list[str] = []
    loan_id: int | None = None
    try:
        loan_id = ctx.write(
            "fineract",
            "loans.submit",
            lambda new_loan_id: new_loan_id,
            lambda: fineract.submit_loan(
                client_id=client_id,
                product_id=product_id,
                principal_cents=principal,
                installments=args.installments,
                submitted_on=today,
                expected_disbursement_on=today,
                first_repayment_on=first_due,
            ),
            client_id=client_id,
            product_id=product_id,
            principal_cents=principal,
            installments=args.installments,
            submitted_on=today.isoformat(),
            first_repayment_on=first_due.isoformat(),
        )
        done.append(f"arrangement loan {loan_id} submitted")
        lid = loan_id
        ctx.write(
            "fineract",
            "loans.approve",
            lid,
            lambda: fineract.approve_loan(lid, on=today),
            approved_on=today.isoformat(),
        )
        done.append("approved")
        ctx.write(
            "fineract",
            "loans.disburse",
            lid,
            lambda: fineract.disburse_loan(lid, on=today),
            disbursed_on=today.isoformat(),
            amount_cents=principal,
        )
        done.append("disbursed")
        metadata = {"arrangement_id": str(lid)}
        ctx.write(
            "stripe",
            "customers.update",
            customer_id,
            lambda: billing.post(f"/v1/customers/{customer_id}", metadata=metadata),
            metadata=metadata,
        )
        done.append("recorded on the billing account")
        for bill in moved:
            bill_id = bill.bill_id
            ctx.write(
                "stripe",
                "invoices.update",
                bill_id,
                partial(billing.post, f"/v1/invoices/{bill_id}", metadata=metadata),
                metadata=metadata,
            )
            ctx.write(
                "stripe",
                "invoices.pay",
                bill_id,
                partial(billing.post, f"/v1/invoices/{bill_id}/pay", paid_out_of_band=True),
                paid_out_of_band=True,
                amount_cents=bill.remaining_cents,
            )
            done.append(f"bill {bill.number or bill_id} moved into the arrangement")
    except Exception as exc:
        if not done:
            if isinstance(exc, FineractError):
                raise ToolRefusal(
                    "The loan engine refused to open the arrangement "
                    f"({fineract_refusal_words(exc)}). Nothing was created; transfer the call "
                    "to a colleague.",
                    created=False,
                ) from None
            raise
        raise ToolRefusal(
            "The arrangement was only partly set up (done: "
            + ", ".join(done)
            + f"; then a step failed: {_failure_words(exc)}). Transfer the call to a "
            "colleague to finish it.",
            created=False,
            arrangement_id=None if loan_id is None else str(loan_id),
        ) from None

    arrangement = ctx.records.arrangement()  # a fresh read: the writes dropped the cache
    out: dict[str, Any] = {
        "created": True,
        "arrangement_id": str(loan_id),
        "installments": args.installments,
        "financed_cents": principal,
        "down_payment_cents": 0,
        "first_installment_cents": quote.first_installment_cents,
        "monthly_installment_cents": quote.monthly_installment_cents,
        "first_due_date": first_due.isoformat(),
        "first_due_date_display": format_date(first_due),
        "bills_moved": [bill.bill_id for bill in moved],
        "say": (
            f"The payment arrangement is set up: {format_cents(principal)} over "
            f"{args.installments} monthly payments, the first due {format_date(first_due)}. "
            "The past-due bills moved into the arrangement, so the bill balance no longer "
            "shows them; the arrangement's instalments must be paid on time."
        ),
    }
    if arrangement is not None:
        view = arrangement.as_result(today)
        out["schedule"] = view["installments"]
        engine = [row["amount_due_cents"] for row in view["installments"]]
        quoted = [row.amount_cents for row in quote.schedule]
        if engine != quoted:
            # The loan engine rounds its own schedule; the arrangement follows the engine.
            out["schedule_note"] = (
                "The loan engine's instalment amounts differ by rounding from the quote; "
                "the schedule above is the one that applies."
            )
    return out


def _failure_words(exc: Exception) -> str:
    if isinstance(exc, FineractError):
        return fineract_refusal_words(exc)
    message = getattr(exc, "user_message", None) or type(exc).__name__
    return str(message)


def _arrangement_product_id(ctx: ToolContext) -> int:
    for product in ctx.clients.fineract.list_loan_products():
        if product.get("name") == ARRANGEMENT_PRODUCT_NAME:
            return int(product["id"])
    raise ToolRefusal(
        f"The loan engine has no '{ARRANGEMENT_PRODUCT_NAME}' product, so no arrangement can "
        "be opened here; transfer the call to a colleague.",
        created=False,
    )


def get_payment_arrangement(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    arrangement = ctx.records.arrangement()
    if arrangement is None:
        return {
            "arrangement_active": False,
            "arrangement_id": None,
            "say": "There is no payment arrangement on this account.",
        }
    out = arrangement.as_result(ctx.today)
    out["arrangement_active"] = arrangement.active
    return out


def modify_payment_arrangement(
    ctx: ToolContext, args: ModifyArrangementArguments
) -> dict[str, Any]:
    arrangement = ctx.records.active_arrangement()
    if arrangement is None:
        raise ToolRefusal(
            "There is no active payment arrangement on this account to record a payment against.",
            recorded=False,
        )
    on: date = args.payment_day or ctx.today
    loan_id = arrangement.loan_id
    fineract = ctx.clients.fineract
    try:
        answer = ctx.write(
            "fineract",
            "loans.repayment",
            loan_id,
            lambda: fineract.make_repayment(loan_id, amount_cents=args.amount_cents, on=on),
            amount_cents=args.amount_cents,
            transaction_date=on.isoformat(),
        )
    except FineractError as exc:
        raise ToolRefusal(
            f"The loan engine refused to record the payment: {fineract_refusal_words(exc)}. "
            "Nothing was recorded.",
            recorded=False,
            engine_code=exc.code,
        ) from None
    after = ctx.records.arrangement()
    transaction = answer.get("resourceId") if isinstance(answer, dict) else None
    out: dict[str, Any] = {
        "recorded": True,
        "arrangement_id": str(loan_id),
        "amount_cents": args.amount_cents,
        "payment_date": on.isoformat(),
        "transaction_id": None if transaction is None else str(transaction),
    }
    if after is not None:
        view = after.as_result(ctx.today)
        out.update(
            status=view["status"],
            outstanding_cents=view["outstanding_cents"],
            overdue_count=view["overdue_count"],
            next_installment=view["next_installment"],
        )
        out["say"] = (
            f"I've recorded your payment of {format_cents(args.amount_cents)} made "
            f"{format_date(on)}. " + view["say"]
        )
    else:
        out["say"] = f"I've recorded your payment of {format_cents(args.amount_cents)}."
    return out

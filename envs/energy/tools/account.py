"""Account-level tools: get_account, get_supplier_info, set_paperless_billing, transfer_to_human."""

from __future__ import annotations

from typing import Any

from vamos_env.envs.energy.policy import (
    MIN_INSTALLMENTS,
    format_cents,
    in_shutoff_process,
    income_tier,
    protections,
)
from vamos_env.envs.energy.tools.arguments import (
    NoArguments,
    PaperlessArguments,
    TransferArguments,
)
from vamos_env.envs.energy.tools.context import ToolContext
from vamos_env.envs.energy.tools.records import card_summary, premises


def get_account(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    records = ctx.records
    customer = records.customer()
    meta = records.metadata()
    facts = records.facts()
    owed = records.arrears()
    tier = income_tier(facts.income_fpl_pct)
    shield = protections(facts, ctx.today)
    address = customer.get("address") or {}
    shutoff = in_shutoff_process(facts)
    arrangement = records.active_arrangement()
    if owed.past_due_cents:
        balance_say = (
            f"{format_cents(owed.past_due_cents)} is past due, the oldest part "
            f"{owed.days_past_due} days; the open balance is "
            f"{format_cents(owed.open_balance_cents)}."
        )
    elif owed.open_balance_cents:
        balance_say = (
            f"Nothing is past due; {format_cents(owed.open_balance_cents)} is open and not yet due."
        )
    else:
        balance_say = "Every bill is paid."
    if shutoff:
        balance_say += " The account is in the shutoff process: arrangements go to a colleague."
    if arrangement is not None:
        balance_say += (
            " There is an active payment arrangement; get_payment_arrangement has its state "
            "(a current bill balance does not mean the arrangement is current)."
        )
    return {
        "account_number": ctx.account.account_number,
        "name": customer.get("name"),
        "email": customer.get("email"),
        "phone": customer.get("phone"),
        "mailing_address": {
            "line1": address.get("line1"),
            "city": address.get("city"),
            "state": address.get("state"),
            "postal_code": address.get("postal_code"),
        },
        "paperless": meta.get("paperless") == "true",
        "supplier": meta.get("supplier"),
        "supplier_type": meta.get("supplier_type"),
        "premises": premises(records.subscriptions()),
        "cards": [card_summary(card) for card in records.cards()],
        "past_due_cents": owed.past_due_cents,
        "days_past_due": owed.days_past_due,
        "open_balance_cents": owed.open_balance_cents,
        "shutoff_process": shutoff,
        "arrangement_active": arrangement is not None,
        "income_fpl_pct": facts.income_fpl_pct,
        "income_tier": "unknown" if tier.code == "fpl_unknown" else tier.code,
        "income_tier_label": tier.label,
        "min_installments": MIN_INSTALLMENTS,
        "max_installments": tier.max_installments,
        "household_size": facts.household_size,
        "medical_certificate_until": _iso(facts.medical_certificate_until),
        "last_extension_on": _iso(facts.last_extension_on),
        "prior_arrangement_default_on": _iso(facts.prior_arrangement_default_on),
        "protections": shield.model_dump(mode="json"),
        "say": balance_say,
    }


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def get_supplier_info(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    records = ctx.records
    meta = records.metadata()
    supplier = meta.get("supplier") or "unknown"
    supplier_type = meta.get("supplier_type") or "unknown"
    latest = records.latest_bill()
    rate: str | None = None
    if latest is not None:
        supply = [line for line in latest.facts.lines if line.charge_type == "supply"]
        if supply and supply[0].rate_cents_per_kwh is not None:
            rate = f"{supply[0].rate_cents_per_kwh.normalize():f}"
    if supplier_type == "retail_choice":
        say = (
            f"Your electricity supply comes from {supplier}, a retail supplier you chose; "
            "Acme Energy still delivers the power, reads the meter and sends one bill. "
            "Supply prices and contract terms are set by that supplier."
        )
    else:
        say = (
            f"You are on {supplier}: Acme Energy buys your electricity supply at the "
            "default-service price to compare, and delivers it."
        )
    if rate is not None:
        say += f" The latest bill charged supply at {rate} cents per kWh."
    return {
        "supplier": supplier,
        "supplier_type": supplier_type,
        "default_service": supplier_type == "default",
        "latest_supply_rate_cents_per_kwh": rate,
        "latest_bill_id": None if latest is None else latest.bill_id,
        "say": say,
    }


def set_paperless_billing(ctx: ToolContext, args: PaperlessArguments) -> dict[str, Any]:
    records = ctx.records
    email = records.customer().get("email")
    current = records.metadata().get("paperless") == "true"
    state = "on" if args.enabled else "off"
    if current == args.enabled:
        return {
            "paperless": current,
            "changed": False,
            "email": email,
            "say": f"Paperless billing is already {state}; nothing was changed.",
        }
    value = "true" if args.enabled else "false"
    customer_id = ctx.account.customer_id
    ctx.write(
        "stripe",
        "customers.update",
        customer_id,
        lambda: ctx.billing.post(f"/v1/customers/{customer_id}", metadata={"paperless": value}),
        metadata={"paperless": value},
    )
    if args.enabled:
        say = f"Paperless billing is now on; bills will be emailed to {email}."
    else:
        say = "Paperless billing is now off; bills will come by post to the mailing address."
    return {"paperless": args.enabled, "changed": True, "email": email, "say": say}


def transfer_to_human(ctx: ToolContext, args: TransferArguments) -> dict[str, Any]:
    # The reason is kept for the colleague (and the trace) but not echoed: it is free text.
    ctx.transferred = True
    ctx.transfer_reason = args.reason
    return {
        "status": "transferring",
        "say": "I'm transferring you to a colleague now; please stay on the line.",
    }

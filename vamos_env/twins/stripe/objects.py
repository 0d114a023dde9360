"""Wire shapes: the JSON objects Stripe API v1 returns, built from plain arguments.

Field names and nesting follow the API version the pinned SDK speaks (stripe 16.1.0): for
example invoice lines name their invoice item under ``parent.invoice_item_details`` and
carry ``pricing`` rather than a top-level ``price``. Each object carries its ``object``
field so the SDK builds the right class. Builders return plain dicts; the state freezes
them when it stores them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from vamos_env.twins.stripe.cards import Decline, TestCard

CURRENCY = "usd"
LIST_PREVIEW = 10  # an invoice embeds its first ten lines, like Stripe


def list_object(data: Sequence[Any], url: str, has_more: bool, **extra: Any) -> dict[str, Any]:
    return {"object": "list", "data": list(data), "has_more": has_more, "url": url, **extra}


def deleted(object_id: str, object_name: str) -> dict[str, Any]:
    return {"id": object_id, "object": object_name, "deleted": True}


def address(fields: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if fields is None:
        return None
    keys = ("city", "country", "line1", "line2", "postal_code", "state")
    return {k: fields.get(k) for k in keys}


def invoice_prefix(customer_id: str) -> str:
    return hashlib.sha256(customer_id.encode()).hexdigest()[:8].upper()


def customer(
    customer_id: str, created: int, fields: Mapping[str, Any], test_clock: str | None
) -> dict[str, Any]:
    return {
        "id": customer_id,
        "object": "customer",
        "address": address(fields.get("address")),
        "balance": 0,
        "created": created,
        "currency": None,
        "customer_account": None,
        "default_source": None,
        "delinquent": False,
        "description": fields.get("description"),
        "discount": None,
        "email": fields.get("email"),
        "individual_name": None,
        "invoice_prefix": fields.get("invoice_prefix") or invoice_prefix(customer_id),
        "invoice_settings": {
            "custom_fields": None,
            "default_payment_method": fields.get("default_payment_method"),
            "footer": None,
            "rendering_options": None,
        },
        "livemode": False,
        "metadata": fields.get("metadata") or {},
        "name": fields.get("name"),
        "next_invoice_sequence": 1,
        "phone": fields.get("phone"),
        "preferred_locales": [],
        "shipping": None,
        "tax_exempt": "none",
        "test_clock": test_clock,
    }


def card_details(card: TestCard, exp_month: int, exp_year: int) -> dict[str, Any]:
    return {
        "brand": card.brand,
        "checks": {
            "address_line1_check": None,
            "address_postal_code_check": None,
            "cvc_check": "unchecked",
        },
        "country": card.country,
        "display_brand": card.brand,
        "exp_month": exp_month,
        "exp_year": exp_year,
        "fingerprint": card.fingerprint,
        "funding": card.funding,
        "generated_from": None,
        "last4": card.last4,
        "networks": {"available": [card.brand], "preferred": None},
        "regulated_status": "unregulated",
        "three_d_secure_usage": {"supported": True},
        "wallet": None,
    }


def billing_details(fields: Mapping[str, Any] | None) -> dict[str, Any]:
    fields = fields or {}
    return {
        "address": address(fields.get("address")) or address({}),
        "email": fields.get("email"),
        "name": fields.get("name"),
        "phone": fields.get("phone"),
        "tax_id": None,
    }


def payment_method(
    pm_id: str,
    created: int,
    card: dict[str, Any],
    customer_id: str | None,
    metadata: Mapping[str, str],
    billing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": pm_id,
        "object": "payment_method",
        "allow_redisplay": "unspecified",
        "billing_details": billing_details(billing),
        "card": card,
        "created": created,
        "customer": customer_id,
        "customer_account": None,
        "livemode": False,
        "metadata": dict(metadata),
        "type": "card",
    }


def test_clock(clock_id: str, created: int, frozen_time: int, name: str | None) -> dict[str, Any]:
    return {
        "id": clock_id,
        "object": "test_helpers.test_clock",
        "created": created,
        "deletes_after": created + 30 * 86400,
        "frozen_time": frozen_time,
        "livemode": False,
        "name": name,
        "status": "ready",
        "status_details": {},
    }


def product(product_id: str, created: int, fields: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": product_id,
        "object": "product",
        "active": fields.get("active", True),
        "created": created,
        "default_price": None,
        "description": fields.get("description"),
        "images": [],
        "livemode": False,
        "marketing_features": [],
        "metadata": fields.get("metadata") or {},
        "name": fields["name"],
        "package_dimensions": None,
        "shippable": None,
        "statement_descriptor": None,
        "tax_code": None,
        "type": "service",
        "unit_label": fields.get("unit_label"),
        "updated": created,
        "url": None,
    }


def price(
    price_id: str,
    created: int,
    product_id: str,
    unit_amount: int,
    recurring: Mapping[str, Any] | None,
    fields: Mapping[str, Any],
    active: bool = True,
) -> dict[str, Any]:
    return {
        "id": price_id,
        "object": "price",
        "active": active,
        "billing_scheme": "per_unit",
        "created": created,
        "currency": fields.get("currency", CURRENCY),
        "custom_unit_amount": None,
        "livemode": False,
        "lookup_key": fields.get("lookup_key"),
        "metadata": fields.get("metadata") or {},
        "nickname": fields.get("nickname"),
        "product": product_id,
        "recurring": (
            {
                "interval": recurring["interval"],
                "interval_count": recurring.get("interval_count") or 1,
                "meter": None,
                "trial_period_days": None,
                "usage_type": "licensed",
            }
            if recurring is not None
            else None
        ),
        "tax_behavior": "unspecified",
        "tiers_mode": None,
        "transform_quantity": None,
        "type": "recurring" if recurring is not None else "one_time",
        "unit_amount": unit_amount,
        "unit_amount_decimal": str(unit_amount),
    }


def pricing(price_record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if price_record is None:
        return None
    return {
        "price_details": {"price": price_record["id"], "product": price_record["product"]},
        "type": "price_details",
        "unit_amount_decimal": price_record["unit_amount_decimal"],
    }


def invoice_item(
    item_id: str,
    date: int,
    customer_id: str,
    amount: int,
    quantity: int,
    period: Mapping[str, int],
    price_record: Mapping[str, Any] | None,
    fields: Mapping[str, Any],
    invoice_id: str | None,
    clock: str | None,
) -> dict[str, Any]:
    return {
        "id": item_id,
        "object": "invoiceitem",
        "amount": amount,
        "currency": fields.get("currency") or CURRENCY,
        "customer": customer_id,
        "customer_account": None,
        "date": date,
        "description": fields.get("description"),
        "discountable": fields.get("discountable", True),
        "discounts": [],
        "invoice": invoice_id,
        "livemode": False,
        "metadata": fields.get("metadata") or {},
        "net_amount": amount,
        "parent": None,
        "period": {"end": period["end"], "start": period["start"]},
        "pricing": pricing(price_record),
        "proration": False,
        "proration_details": {"credited_items": None},
        "quantity": quantity,
        "tax_rates": [],
        "test_clock": clock,
    }


def line_item(line_id: str, item: Mapping[str, Any], invoice_id: str) -> dict[str, Any]:
    return {
        "id": line_id,
        "object": "line_item",
        "amount": item["amount"],
        "currency": item["currency"],
        "description": item["description"],
        "discount_amounts": [],
        "discountable": item["discountable"],
        "discounts": [],
        "invoice": invoice_id,
        "livemode": False,
        "metadata": item["metadata"],
        "parent": {
            "invoice_item_details": {
                "invoice_item": item["id"],
                "proration": False,
                "proration_details": {"credited_items": None},
                "subscription": None,
            },
            "subscription_item_details": None,
            "type": "invoice_item_details",
        },
        "period": item["period"],
        "pretax_credit_amounts": [],
        "pricing": item["pricing"],
        "quantity": item["quantity"],
        "subtotal": item["amount"],
        "taxes": [],
    }


def invoice(
    invoice_id: str,
    created: int,
    customer_record: Mapping[str, Any],
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    auto_advance = bool(fields.get("auto_advance", False))
    return {
        "id": invoice_id,
        "object": "invoice",
        "account_country": "US",
        "account_name": None,
        "account_tax_ids": None,
        "amount_due": 0,
        "amount_overpaid": 0,
        "amount_paid": 0,
        "amount_paid_off_stripe": 0,
        "amount_remaining": 0,
        "amount_shipping": 0,
        "application": None,
        "attempt_count": 0,
        "attempted": False,
        "auto_advance": auto_advance,
        "automatic_tax": {
            "disabled_reason": None,
            "enabled": False,
            "liability": None,
            "provider": None,
            "status": None,
        },
        # Stripe's own draft window (created + 1 h + 1 s); the twin never finalizes by itself.
        "automatically_finalizes_at": created + 3601 if auto_advance else None,
        "billing_reason": "manual",
        "collection_method": fields.get("collection_method", "charge_automatically"),
        "confirmation_secret": None,
        "created": created,
        "currency": fields.get("currency") or CURRENCY,
        "custom_fields": None,
        "customer": customer_record["id"],
        "customer_account": None,
        "customer_address": customer_record["address"],
        "customer_email": customer_record["email"],
        "customer_name": customer_record["name"],
        "customer_phone": customer_record["phone"],
        "customer_shipping": None,
        "customer_tax_exempt": "none",
        "customer_tax_ids": [],
        "default_payment_method": fields.get("default_payment_method"),
        "default_source": None,
        "default_tax_rates": [],
        "description": fields.get("description"),
        "discounts": [],
        "due_date": fields.get("due_date"),
        "effective_at": None,
        "ending_balance": None,
        "footer": fields.get("footer"),
        "from_invoice": None,
        "hosted_invoice_url": None,
        "invoice_pdf": None,
        "issuer": {"type": "self"},
        "last_finalization_error": None,
        "latest_revision": None,
        "lines": list_object([], f"/v1/invoices/{invoice_id}/lines", False, total_count=0),
        "livemode": False,
        "metadata": fields.get("metadata") or {},
        "next_payment_attempt": None,
        "number": None,
        "on_behalf_of": None,
        "parent": None,
        "payment_settings": {
            "default_mandate": None,
            "payment_method_options": None,
            "payment_method_types": None,
        },
        "period_end": created,
        "period_start": created,
        "post_payment_credit_notes_amount": 0,
        "pre_payment_credit_notes_amount": 0,
        "receipt_number": None,
        "rendering": None,
        "shipping_cost": None,
        "shipping_details": None,
        "starting_balance": 0,
        "statement_descriptor": None,
        "status": "draft",
        "status_transitions": {
            "finalized_at": None,
            "marked_uncollectible_at": None,
            "paid_at": None,
            "voided_at": None,
        },
        "subtotal": 0,
        "subtotal_excluding_tax": 0,
        "test_clock": customer_record["test_clock"],
        "threshold_reason": None,
        "total": 0,
        "total_discount_amounts": [],
        "total_excluding_tax": 0,
        "total_pretax_credit_amounts": [],
        "total_taxes": [],
        "webhooks_delivered_at": created,
    }


def with_lines(invoice_record: Mapping[str, Any], lines: Sequence[Any]) -> dict[str, Any]:
    """The invoice with its embedded line preview and every total recomputed from ``lines``."""
    subtotal = sum(line["amount"] for line in lines)
    amount_due = max(subtotal, 0)
    out = dict(invoice_record)
    out["lines"] = list_object(
        lines[:LIST_PREVIEW],
        f"/v1/invoices/{invoice_record['id']}/lines",
        len(lines) > LIST_PREVIEW,
        total_count=len(lines),
    )
    out["subtotal"] = out["subtotal_excluding_tax"] = subtotal
    out["total"] = out["total_excluding_tax"] = subtotal
    out["amount_due"] = amount_due
    out["amount_remaining"] = max(amount_due - invoice_record["amount_paid"], 0)
    return out


def outcome(decline: Decline | None) -> dict[str, Any]:
    if decline is None:
        return {
            "advice_code": None,
            "network_advice_code": None,
            "network_decline_code": None,
            "network_status": "approved_by_network",
            "reason": None,
            "risk_level": "normal",
            "risk_score": 32,
            "seller_message": "Payment complete.",
            "type": "authorized",
        }
    return {
        "advice_code": "try_again_later" if decline.code == "processing_error" else None,
        "network_advice_code": None,
        "network_decline_code": None,
        "network_status": "declined_by_network",
        "reason": decline.reason,
        "risk_level": "normal",
        "risk_score": 32,
        "seller_message": decline.seller_message,
        "type": "issuer_declined",
    }


def charge(
    charge_id: str,
    created: int,
    amount: int,
    customer_id: str,
    pm: Mapping[str, Any],
    intent_id: str,
    description: str | None,
    decline: Decline | None,
    balance_transaction: str | None,
) -> dict[str, Any]:
    card = pm["card"]
    succeeded = decline is None
    failure_code = decline.code if decline is not None else None
    failure_message = decline.message if decline is not None else None
    return {
        "id": charge_id,
        "object": "charge",
        "amount": amount,
        "amount_captured": amount if succeeded else 0,
        "amount_refunded": 0,
        "application": None,
        "application_fee": None,
        "application_fee_amount": None,
        "balance_transaction": balance_transaction,
        "billing_details": pm["billing_details"],
        "calculated_statement_descriptor": "VAMOS BILLING",
        "captured": succeeded,
        "created": created,
        "currency": CURRENCY,
        "customer": customer_id,
        "description": description,
        "disputed": False,
        "failure_balance_transaction": None,
        "failure_code": failure_code,
        "failure_message": failure_message,
        "fraud_details": {},
        "livemode": False,
        "metadata": {},
        "on_behalf_of": None,
        "outcome": outcome(decline),
        "paid": succeeded,
        "payment_intent": intent_id,
        "payment_method": pm["id"],
        "payment_method_details": {
            "card": {
                "amount_authorized": amount if succeeded else None,
                "brand": card["brand"],
                "checks": card["checks"],
                "country": card["country"],
                "exp_month": card["exp_month"],
                "exp_year": card["exp_year"],
                "fingerprint": card["fingerprint"],
                "funding": card["funding"],
                "last4": card["last4"],
                "network": card["brand"],
            },
            "type": "card",
        },
        "receipt_email": None,
        "receipt_number": None,
        "receipt_url": None,
        "refunded": False,
        "review": None,
        "shipping": None,
        "source_transfer": None,
        "statement_descriptor": None,
        "statement_descriptor_suffix": None,
        "status": "succeeded" if succeeded else "failed",
        "transfer_data": None,
        "transfer_group": None,
    }


def payment_intent(
    intent_id: str, created: int, amount: int, customer_id: str, description: str | None
) -> dict[str, Any]:
    return {
        "id": intent_id,
        "object": "payment_intent",
        "amount": amount,
        "amount_capturable": 0,
        "amount_received": 0,
        "application": None,
        "application_fee_amount": None,
        "canceled_at": None,
        "cancellation_reason": None,
        "capture_method": "automatic",
        "client_secret": f"{intent_id}_secret_twin",
        "confirmation_method": "automatic",
        "created": created,
        "currency": CURRENCY,
        "customer": customer_id,
        "description": description,
        "last_payment_error": None,
        "latest_charge": None,
        "livemode": False,
        "metadata": {},
        "next_action": None,
        "on_behalf_of": None,
        "payment_method": None,
        "payment_method_types": ["card"],
        "receipt_email": None,
        "setup_future_usage": None,
        "shipping": None,
        "statement_descriptor": None,
        "statement_descriptor_suffix": None,
        "status": "requires_payment_method",
        "transfer_data": None,
        "transfer_group": None,
    }


def invoice_payment(
    payment_id: str, created: int, invoice_id: str, amount: int, intent_id: str
) -> dict[str, Any]:
    return {
        "id": payment_id,
        "object": "invoice_payment",
        "amount_paid": None,
        "amount_requested": amount,
        "created": created,
        "currency": CURRENCY,
        "invoice": invoice_id,
        "is_default": True,
        "livemode": False,
        "payment": {"payment_intent": intent_id, "type": "payment_intent"},
        "status": "open",
        "status_transitions": {"canceled_at": None, "paid_at": None},
    }


def subscription_item(
    item_id: str,
    created: int,
    subscription_id: str,
    price_record: Mapping[str, Any],
    quantity: int,
    metadata: Mapping[str, str],
    period: tuple[int, int],
) -> dict[str, Any]:
    return {
        "id": item_id,
        "object": "subscription_item",
        "billing_thresholds": None,
        "created": created,
        "current_period_end": period[1],
        "current_period_start": period[0],
        "discounts": [],
        "metadata": dict(metadata),
        "price": price_record,
        "quantity": quantity,
        "subscription": subscription_id,
        "tax_rates": [],
    }


def subscription(
    sub_id: str,
    created: int,
    customer_record: Mapping[str, Any],
    items: Sequence[Any],
    start_date: int,
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "id": sub_id,
        "object": "subscription",
        "application": None,
        "application_fee_percent": None,
        "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None},
        "billing_cycle_anchor": start_date,
        "billing_cycle_anchor_config": None,
        "billing_mode": {"flexible": None, "type": "classic", "updated_at": None},
        "billing_thresholds": None,
        "cancel_at": None,
        "cancel_at_period_end": bool(fields.get("cancel_at_period_end", False)),
        "canceled_at": None,
        "cancellation_details": {"comment": None, "feedback": None, "reason": None},
        "collection_method": fields.get("collection_method", "charge_automatically"),
        "created": created,
        "currency": items[0]["price"]["currency"] if items else CURRENCY,
        "customer": customer_record["id"],
        "customer_account": None,
        "days_until_due": fields.get("days_until_due"),
        "default_payment_method": fields.get("default_payment_method"),
        "default_source": None,
        "default_tax_rates": [],
        "description": fields.get("description"),
        "discounts": [],
        "ended_at": None,
        "invoice_settings": {"account_tax_ids": None, "issuer": {"type": "self"}},
        "items": list_object(
            items, f"/v1/subscription_items?subscription={sub_id}", False, total_count=len(items)
        ),
        "latest_invoice": None,
        "livemode": False,
        "metadata": fields.get("metadata") or {},
        "next_pending_invoice_item_invoice": None,
        "on_behalf_of": None,
        "pause_collection": None,
        "payment_settings": {
            "payment_method_options": None,
            "payment_method_types": None,
            "save_default_payment_method": "off",
        },
        "pending_invoice_item_interval": None,
        "pending_setup_intent": None,
        "pending_update": None,
        "schedule": None,
        "start_date": start_date,
        "status": "active",
        "test_clock": customer_record["test_clock"],
        "transfer_data": None,
        "trial_end": None,
        "trial_settings": {"end_behavior": {"missing_payment_method": "create_invoice"}},
        "trial_start": None,
    }

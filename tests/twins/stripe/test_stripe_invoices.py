"""Invoice items, invoices (bills) and paying them: the billing line's core ledger."""

from __future__ import annotations

import pytest
import stripe

from vamos_env import clock

DAY = 86400


def test_invoice_item_shapes_period_metadata_and_pending_filter(billing):
    customer = billing.customer()
    item = billing.v1.invoice_items.create(
        params={
            "customer": customer.id,
            "amount": 4213,
            "description": "Generation (supply)",
            "period": {"start": clock.NOW_UNIX - 30 * DAY, "end": clock.NOW_UNIX},
            "metadata": {"kwh": "380", "charge_type": "supply"},
        }
    )
    assert isinstance(item, stripe.InvoiceItem)
    assert (item.amount, item.currency, item.quantity, item.invoice) == (4213, "usd", 1, None)
    assert item.period.start == clock.NOW_UNIX - 30 * DAY
    assert billing.v1.invoice_items.retrieve(item.id).metadata.to_dict()["kwh"] == "380"
    pending = billing.v1.invoice_items.list(params={"customer": customer.id, "pending": True})
    assert [i.id for i in pending.data] == [item.id]


def test_invoice_item_amount_sources(billing):
    customer = billing.customer()
    by_unit = billing.v1.invoice_items.create(
        params={"customer": customer.id, "unit_amount_decimal": "12.5", "quantity": 3}
    )
    assert by_unit.amount == 38  # 37.5 rounds half up
    product = billing.v1.products.create(params={"name": "Delivery"})
    by_price_data = billing.v1.invoice_items.create(
        params={
            "customer": customer.id,
            "price_data": {"currency": "usd", "product": product.id, "unit_amount": 250},
            "quantity": 4,
        }
    )
    assert by_price_data.amount == 1000
    assert by_price_data.pricing.price_details.product == product.id
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoice_items.create(
            params={"customer": customer.id, "amount": 5, "unit_amount_decimal": "5"}
        )
    assert caught.value.code == "parameters_exclusive"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoice_items.create(params={"customer": customer.id})
    assert caught.value.code == "parameter_missing" and caught.value.param == "amount"


def test_delete_pending_invoice_item(billing):
    customer = billing.customer()
    item = billing.v1.invoice_items.create(params={"customer": customer.id, "amount": 100})
    gone = billing.v1.invoice_items.delete(item.id)
    assert gone.deleted is True
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoice_items.retrieve(item.id)
    assert caught.value.http_status == 404


def test_pending_items_are_excluded_by_default(billing):
    customer = billing.customer()
    billing.v1.invoice_items.create(params={"customer": customer.id, "amount": 900})
    invoice = billing.v1.invoices.create(
        params={"customer": customer.id, "collection_method": "send_invoice", "days_until_due": 20}
    )
    assert invoice.lines.data == [] and invoice.total == 0
    assert billing.v1.invoice_items.list(params={"pending": True}).data[0].invoice is None


def test_include_sweeps_pending_items_into_lines(billing):
    customer = billing.customer()
    other = billing.customer(email="other@example.com")
    billing.v1.invoice_items.create(params={"customer": other.id, "amount": 1})
    items = [
        billing.v1.invoice_items.create(
            params={
                "customer": customer.id,
                "amount": amount,
                "description": name,
                "period": {"start": 1_780_000_000, "end": 1_782_000_000},
                "metadata": {"charge_type": name},
            }
        )
        for name, amount in (("supply", 4200), ("delivery", 3100), ("customer_charge", 1200))
    ]
    invoice = billing.v1.invoices.create(
        params={
            "customer": customer.id,
            "collection_method": "send_invoice",
            "days_until_due": 21,
            "pending_invoice_items_behavior": "include",
            "metadata": {"bill_month": "2026-08"},
        }
    )
    assert isinstance(invoice, stripe.Invoice)
    assert invoice.status == "draft" and invoice.number is None
    assert (invoice.subtotal, invoice.total, invoice.amount_due) == (8500, 8500, 8500)
    assert invoice.amount_remaining == 8500 and invoice.amount_paid == 0
    assert invoice.due_date == invoice.created + 21 * DAY
    assert invoice.period_start == invoice.period_end == invoice.created
    lines = invoice.lines.data
    assert [line.description for line in lines] == ["customer_charge", "delivery", "supply"]
    line = lines[2]
    assert isinstance(line, stripe.InvoiceLineItem)
    assert line.id.startswith("il_") and line.invoice == invoice.id
    assert line.parent.type == "invoice_item_details"
    assert line.parent.invoice_item_details.invoice_item == items[0].id
    assert line.metadata.to_dict() == {"charge_type": "supply"}
    assert (line.period.start, line.period.end) == (1_780_000_000, 1_782_000_000)
    assert line.quantity == 1 and line.amount == 4200
    assert billing.v1.invoice_items.retrieve(items[0].id).invoice == invoice.id
    assert billing.v1.invoice_items.list(params={"customer": other.id, "pending": True}).data


def test_send_invoice_needs_a_due_date_in_the_future(billing):
    customer = billing.customer()
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(
            params={"customer": customer.id, "collection_method": "send_invoice"}
        )
    assert "due_date" in caught.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(params={"customer": customer.id, "days_until_due": 5})
    assert "send_invoice" in caught.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.create(
            params={
                "customer": customer.id,
                "collection_method": "send_invoice",
                "due_date": clock.NOW_UNIX - DAY,
            }
        )
    assert caught.value.param == "due_date"
    ok = billing.v1.invoices.create(
        params={
            "customer": customer.id,
            "collection_method": "send_invoice",
            "due_date": clock.NOW_UNIX + 20 * DAY,
        }
    )
    assert ok.due_date == clock.NOW_UNIX + 20 * DAY


def test_due_date_validation_uses_the_customers_test_clock(billing):
    past = clock.NOW_UNIX - 200 * DAY
    test_clock = billing.v1.test_helpers.test_clocks.create(params={"frozen_time": past})
    customer = billing.customer(test_clock=test_clock.id)
    invoice = billing.v1.invoices.create(
        params={
            "customer": customer.id,
            "collection_method": "send_invoice",
            "due_date": past + 20 * DAY,  # in the past for the frozen instant, fine on the clock
        }
    )
    assert invoice.created == past and invoice.test_clock == test_clock.id


def test_finalize_assigns_sequential_numbers_and_refuses_twice(billing):
    customer = billing.customer()
    first = billing.bill(customer.id)
    second = billing.bill(customer.id)
    assert first.status == "open" and second.status == "open"
    prefix = billing.v1.customers.retrieve(customer.id).invoice_prefix
    assert (first.number, second.number) == (f"{prefix}-0001", f"{prefix}-0002")
    assert first.status_transitions.finalized_at == clock.NOW_UNIX
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.finalize_invoice(first.id)
    assert "already finalized" in caught.value.user_message


def test_custom_invoice_prefix_numbers_the_bills(billing):
    customer = billing.customer(invoice_prefix="ACME4417")
    assert billing.bill(customer.id).number == "ACME4417-0001"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.customer(invoice_prefix="lower")
    assert caught.value.param == "invoice_prefix"


def test_zero_invoice_is_paid_on_finalize(billing):
    customer = billing.customer()
    invoice = billing.bill(customer.id, amounts=())
    assert invoice.status == "paid" and invoice.amount_due == 0


def test_due_date_of_a_finalized_invoice_cannot_move(billing):
    customer = billing.customer()
    invoice = billing.bill(customer.id)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.update(invoice.id, params={"due_date": invoice.due_date + 10 * DAY})
    error = caught.value
    assert error.http_status == 400
    assert error.param == "due_date"
    assert error.error.type == "invalid_request_error"
    assert error.user_message == "Finalized invoices can't be updated in this way"
    assert billing.v1.invoices.retrieve(invoice.id).due_date == invoice.due_date
    # metadata still updates on a finalized invoice, and merges
    updated = billing.v1.invoices.update(invoice.id, params={"metadata": {"note": "called"}})
    assert updated.metadata.to_dict() == {"note": "called"}


def test_draft_invoice_updates(billing):
    customer = billing.customer()
    draft = billing.bill(customer.id, finalize=False)
    moved = billing.v1.invoices.update(
        draft.id, params={"due_date": clock.NOW_UNIX + 40 * DAY, "description": "August"}
    )
    assert moved.due_date == clock.NOW_UNIX + 40 * DAY and moved.description == "August"
    relative = billing.v1.invoices.update(draft.id, params={"days_until_due": 30})
    assert relative.due_date == draft.created + 30 * DAY


def test_pay_with_card_records_charge_and_settles(billing):
    customer = billing.customer()
    pm = billing.card(customer.id)
    invoice = billing.bill(customer.id, amounts=(12_345, 655))
    paid = billing.v1.invoices.pay(invoice.id, params={"payment_method": pm.id})
    assert paid.status == "paid"
    assert (paid.amount_paid, paid.amount_remaining) == (13_000, 0)
    assert paid.status_transitions.paid_at == clock.NOW_UNIX
    assert paid.attempted is True and paid.attempt_count == 1
    charges = billing.v1.charges.list(params={"customer": customer.id}).data
    assert len(charges) == 1
    charge = charges[0]
    assert isinstance(charge, stripe.Charge)
    assert (charge.status, charge.amount, charge.paid, charge.payment_method) == (
        "succeeded",
        13_000,
        True,
        pm.id,
    )
    assert charge.payment_method_details.card.last4 == "4242"
    intent = billing.v1.payment_intents.retrieve(charge.payment_intent)
    assert intent.status == "succeeded" and intent.latest_charge == charge.id
    payments = billing.v1.invoice_payments.list(params={"invoice": invoice.id}).data
    assert [(p.status, p.amount_paid) for p in payments] == [("paid", 13_000)]
    assert billing.v1.charges.retrieve(charge.id).id == charge.id


@pytest.mark.parametrize(
    ("token", "code", "decline_code", "message"),
    [
        ("pm_card_chargeDeclined", "card_declined", "generic_decline", "Your card was declined."),
        (
            "pm_card_chargeDeclinedInsufficientFunds",
            "card_declined",
            "insufficient_funds",
            "Your card has insufficient funds.",
        ),
        ("pm_card_chargeDeclinedLostCard", "card_declined", "lost_card", "Your card was declined."),
        ("pm_card_chargeDeclinedExpiredCard", "expired_card", None, "Your card has expired."),
        ("pm_card_chargeDeclinedProcessingError", "processing_error", None, None),
    ],
)
def test_declines_are_402_card_errors_and_leave_the_bill_open(
    billing, token, code, decline_code, message
):
    customer = billing.customer()
    pm = billing.card(customer.id, token)
    invoice = billing.bill(customer.id)
    with pytest.raises(stripe.CardError) as caught:
        billing.v1.invoices.pay(invoice.id, params={"payment_method": pm.id})
    error = caught.value
    assert error.http_status == 402
    assert error.code == code
    body = error.json_body["error"]
    assert body["type"] == "card_error"
    assert body.get("decline_code") == decline_code
    if message:
        assert error.user_message == message
    assert body["charge"].startswith("ch_")
    after = billing.v1.invoices.retrieve(invoice.id)
    assert after.status == "open" and after.amount_paid == 0
    assert after.amount_remaining == invoice.amount_due
    assert after.attempt_count == 1
    charge = billing.v1.charges.retrieve(body["charge"])
    assert (charge.status, charge.paid, charge.failure_code) == ("failed", False, code)
    assert charge.outcome.type == "issuer_declined"


def test_retry_after_decline_reuses_the_payment_intent(billing):
    customer = billing.customer()
    bad = billing.card(customer.id, "pm_card_chargeDeclinedInsufficientFunds")
    good = billing.card(customer.id)
    invoice = billing.bill(customer.id)
    with pytest.raises(stripe.CardError):
        billing.v1.invoices.pay(invoice.id, params={"payment_method": bad.id})
    paid = billing.v1.invoices.pay(invoice.id, params={"payment_method": good.id})
    assert paid.status == "paid" and paid.attempt_count == 2
    charges = billing.v1.charges.list(params={"customer": customer.id}).data
    assert [c.status for c in charges] == ["succeeded", "failed"]
    assert len({c.payment_intent for c in charges}) == 1


def test_pay_refusals(billing):
    customer = billing.customer()
    other = billing.customer(email="other@example.com")
    mine = billing.card(customer.id)
    foreign = billing.card(other.id)
    invoice = billing.bill(customer.id)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.pay(invoice.id, params={"payment_method": foreign.id})
    assert caught.value.http_status == 400 and caught.value.param == "payment_method"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.pay(invoice.id, params={"payment_method": "pm_card_visa"})
    assert caught.value.param == "payment_method"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.pay(invoice.id)
    assert "no attached payment source or default payment method" in caught.value.user_message
    assert billing.twin.state.charges == {}
    billing.v1.invoices.pay(invoice.id, params={"payment_method": mine.id})
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.pay(invoice.id, params={"payment_method": mine.id})
    assert caught.value.user_message == "Invoice is already paid"
    assert len(billing.twin.state.charges) == 1


def test_pay_uses_the_customers_default_card(billing):
    customer = billing.customer(
        payment_method="pm_card_visa", invoice_settings={"default_payment_method": "pm_card_visa"}
    )
    invoice = billing.bill(customer.id)
    assert billing.v1.invoices.pay(invoice.id).status == "paid"


def test_paying_a_draft_finalizes_it_first(billing):
    customer = billing.customer()
    pm = billing.card(customer.id)
    draft = billing.bill(customer.id, finalize=False)
    paid = billing.v1.invoices.pay(draft.id, params={"payment_method": pm.id})
    assert paid.status == "paid" and paid.number is not None
    assert paid.status_transitions.finalized_at == paid.status_transitions.paid_at


def test_paid_out_of_band(billing):
    customer = billing.customer()
    invoice = billing.bill(customer.id)
    paid = billing.v1.invoices.pay(invoice.id, params={"paid_out_of_band": True})
    assert paid.status == "paid" and paid.amount_remaining == 0
    assert paid.amount_paid_off_stripe == invoice.amount_due
    assert paid.attempted is False
    assert billing.twin.state.charges == {}


def test_void_delete_and_mark_uncollectible(billing):
    customer = billing.customer()
    draft = billing.bill(customer.id, finalize=False)
    with pytest.raises(stripe.InvalidRequestError):
        billing.v1.invoices.void_invoice(draft.id)
    assert billing.v1.invoices.delete(draft.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.retrieve(draft.id)
    assert caught.value.http_status == 404
    invoice = billing.bill(customer.id)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.delete(invoice.id)
    assert caught.value.user_message == "You can only delete draft invoices."
    voided = billing.v1.invoices.void_invoice(invoice.id)
    assert voided.status == "void" and voided.status_transitions.voided_at == clock.NOW_UNIX
    with pytest.raises(stripe.InvalidRequestError):
        billing.v1.invoices.pay(invoice.id, params={"paid_out_of_band": True})
    third = billing.bill(customer.id)
    assert billing.v1.invoices.mark_uncollectible(third.id).status == "uncollectible"


def test_invoice_item_on_a_finalized_invoice_is_refused(billing):
    customer = billing.customer()
    draft = billing.bill(customer.id, amounts=(100,), finalize=False)
    added = billing.v1.invoice_items.create(
        params={"customer": customer.id, "amount": 50, "invoice": draft.id}
    )
    refreshed = billing.v1.invoices.retrieve(draft.id)
    assert refreshed.total == 150 and refreshed.lines.data[0].id != draft.lines.data[0].id
    billing.v1.invoice_items.delete(added.id)
    assert billing.v1.invoices.retrieve(draft.id).total == 100
    billing.v1.invoices.finalize_invoice(draft.id)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoice_items.create(
            params={"customer": customer.id, "amount": 50, "invoice": draft.id}
        )
    assert caught.value.code == "invoice_not_editable"


def test_list_invoices_newest_first_with_filters(billing):
    customer = billing.customer()
    other = billing.customer(email="other@example.com")
    pm = billing.card(customer.id)
    older = billing.bill(customer.id)
    newer = billing.bill(customer.id)
    billing.bill(other.id)
    billing.v1.invoices.pay(older.id, params={"payment_method": pm.id})
    listed = billing.v1.invoices.list(params={"customer": customer.id})
    assert [i.id for i in listed.data] == [newer.id, older.id]
    paid = billing.v1.invoices.list(params={"customer": customer.id, "status": "paid"})
    assert [i.id for i in paid.data] == [older.id]
    assert len(billing.v1.invoices.list().data) == 3
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.list(params={"status": "bogus"})
    assert caught.value.user_message == (
        "Invalid status: must be one of draft, open, void, paid, or uncollectible"
    )


def test_list_orders_by_created_across_test_clocks(billing):
    early = billing.v1.test_helpers.test_clocks.create(params={"frozen_time": 1_700_000_000})
    customer = billing.customer(test_clock=early.id)
    june = billing.bill(customer.id)
    billing.v1.test_helpers.test_clocks.advance(early.id, params={"frozen_time": 1_710_000_000})
    july = billing.bill(customer.id)
    assert (june.created, july.created) == (1_700_000_000, 1_710_000_000)
    listed = billing.v1.invoices.list(params={"customer": customer.id})
    assert [i.id for i in listed.data] == [july.id, june.id]
    recent = billing.v1.invoices.list(
        params={"customer": customer.id, "created": {"gte": 1_705_000_000}}
    )
    assert [i.id for i in recent.data] == [july.id]
    # Stripe's "list all" leaves out objects made under test clocks.
    assert billing.v1.invoices.list().data == []
    assert billing.v1.customers.list().data == []
    on_clock = billing.v1.customers.list(params={"test_clock": early.id})
    assert [c.id for c in on_clock.data] == [customer.id]
    found = billing.v1.customers.search(params={"query": "name:'Dana Whitfield'"})
    assert [c.id for c in found.data] == [customer.id]


def test_lines_endpoint_paginates_beyond_the_embedded_ten(billing):
    customer = billing.customer()
    invoice = billing.bill(customer.id, amounts=tuple(range(100, 113)))
    assert len(invoice.lines.data) == 10
    assert invoice.lines.has_more is True and invoice.lines.total_count == 13
    page = billing.v1.invoices.line_items.list(invoice.id, params={"limit": 5})
    assert len(page.data) == 5 and page.has_more is True
    every = list(
        billing.v1.invoices.line_items.list(invoice.id, params={"limit": 5}).auto_paging_iter()
    )
    assert sorted(line.amount for line in every) == list(range(100, 113))


def test_expand_customer_and_list_data(billing):
    customer = billing.customer(name="Expand Me")
    invoice = billing.bill(customer.id)
    one = billing.v1.invoices.retrieve(invoice.id, params={"expand": ["customer"]})
    assert isinstance(one.customer, stripe.Customer) and one.customer.name == "Expand Me"
    listed = billing.v1.invoices.list(params={"expand": ["data.customer"]})
    assert listed.data[0].customer.id == customer.id
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.list(params={"expand": ["customer"]})
    assert "data.customer" in caught.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.invoices.retrieve(invoice.id, params={"expand": ["total"]})
    assert caught.value.param == "expand"


def test_search_invoices(billing):
    customer = billing.customer()
    invoice = billing.bill(customer.id, amounts=(5000,))
    billing.bill(customer.id, amounts=(10,))
    found = billing.v1.invoices.search(params={"query": f"customer:'{customer.id}' AND total>1000"})
    assert [i.id for i in found.data] == [invoice.id]

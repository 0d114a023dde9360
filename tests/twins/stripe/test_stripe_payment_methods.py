"""Payment methods: Stripe's test tokens, attach/detach, listing, and the default card."""

from __future__ import annotations

import pytest
import stripe

from vamos_env import clock

TOKENS = [
    ("pm_card_visa", "visa", "4242", "credit"),
    ("pm_card_visa_debit", "visa", "5556", "debit"),
    ("pm_card_mastercard", "mastercard", "4444", "credit"),
    ("pm_card_mastercard_debit", "mastercard", "8210", "debit"),
    ("pm_card_amex", "amex", "8431", "credit"),
    ("pm_card_discover", "discover", "1117", "credit"),
    ("pm_card_mastercard_prepaid", "mastercard", "5100", "prepaid"),
    ("pm_card_diners", "diners", "0004", "credit"),
    ("pm_card_jcb", "jcb", "0505", "credit"),
    ("pm_card_unionpay", "unionpay", "0005", "credit"),
    ("pm_card_chargeDeclined", "visa", "0002", "credit"),
    ("pm_card_chargeDeclinedInsufficientFunds", "visa", "9995", "credit"),
    ("pm_card_chargeDeclinedExpiredCard", "visa", "0069", "credit"),
    ("pm_card_chargeDeclinedLostCard", "visa", "9987", "credit"),
    ("pm_card_chargeDeclinedStolenCard", "visa", "9979", "credit"),
    ("pm_card_chargeDeclinedProcessingError", "visa", "0119", "credit"),
]


@pytest.mark.parametrize(("token", "brand", "last4", "funding"), TOKENS)
def test_attaching_a_test_token_mints_a_card(billing, token, brand, last4, funding):
    customer = billing.customer()
    pm = billing.card(customer.id, token)
    assert isinstance(pm, stripe.PaymentMethod)
    assert pm.id.startswith("pm_") and pm.id != token
    assert pm.type == "card" and pm.customer == customer.id
    assert (pm.card.brand, pm.card.last4, pm.card.funding) == (brand, last4, funding)
    assert pm.card.exp_month == clock.TODAY.month
    assert pm.card.exp_year == clock.TODAY.year + 1
    assert pm.card.country == "US"


def test_each_attach_of_a_token_is_a_new_card(billing):
    customer = billing.customer()
    first, second = billing.card(customer.id), billing.card(customer.id)
    assert first.id != second.id
    assert first.card.fingerprint == second.card.fingerprint


def test_list_by_customer_both_routes_newest_first(billing):
    customer = billing.customer()
    other = billing.customer(email="other@example.com")
    visa = billing.card(customer.id)
    amex = billing.card(customer.id, "pm_card_amex")
    billing.card(other.id)
    listed = billing.v1.payment_methods.list(params={"customer": customer.id, "type": "card"})
    assert [p.id for p in listed.data] == [amex.id, visa.id]
    nested = billing.v1.customers.payment_methods.list(customer.id, params={"type": "card"})
    assert [p.id for p in nested.data] == [amex.id, visa.id]
    one = billing.v1.customers.payment_methods.retrieve(customer.id, visa.id)
    assert one.id == visa.id
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.payment_methods.retrieve(other.id, visa.id)
    assert caught.value.http_status == 404


def test_detach_clears_customer_and_default(billing):
    customer = billing.customer()
    pm = billing.card(customer.id)
    billing.v1.customers.update(
        customer.id, params={"invoice_settings": {"default_payment_method": pm.id}}
    )
    detached = billing.v1.payment_methods.detach(pm.id)
    assert detached.customer is None
    assert (
        billing.v1.customers.retrieve(customer.id).invoice_settings.default_payment_method is None
    )
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.payment_methods.detach(pm.id)
    assert caught.value.http_status == 400


def test_attach_rules(billing):
    first = billing.customer()
    second = billing.customer(email="second@example.com")
    created = billing.v1.payment_methods.create(
        params={"type": "card", "card": {"token": "tok_amex"}}
    )
    assert created.customer is None and created.card.last4 == "8431"
    attached = billing.v1.payment_methods.attach(created.id, params={"customer": first.id})
    assert attached.id == created.id and attached.customer == first.id
    again = billing.v1.payment_methods.attach(created.id, params={"customer": first.id})
    assert again.id == created.id
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.payment_methods.attach(created.id, params={"customer": second.id})
    assert "already been attached" in caught.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.payment_methods.attach("pm_nope", params={"customer": first.id})
    assert caught.value.http_status == 404 and caught.value.code == "resource_missing"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.payment_methods.attach("pm_card_visa", params={"customer": "cus_nope"})
    assert caught.value.http_status == 404 and caught.value.param == "customer"


def test_raw_card_numbers_are_refused(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.payment_methods.create(
            params={"type": "card", "card": {"number": "4242424242424242", "exp_month": 1}}
        )
    assert caught.value.param == "card[number]"
    assert "unsafe" in caught.value.user_message


def test_default_payment_method_must_belong_to_the_customer(billing):
    customer = billing.customer()
    other = billing.customer(email="other@example.com")
    foreign = billing.card(other.id)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.update(
            customer.id, params={"invoice_settings": {"default_payment_method": foreign.id}}
        )
    assert caught.value.param == "invoice_settings[default_payment_method]"
    mine = billing.card(customer.id)
    updated = billing.v1.customers.update(
        customer.id,
        params={"invoice_settings": {"default_payment_method": mine.id}},
        options={"stripe_version": "2025-03-31.basil"},
    )
    assert updated.invoice_settings.default_payment_method == mine.id
    expanded = billing.v1.customers.retrieve(
        customer.id, params={"expand": ["invoice_settings.default_payment_method"]}
    )
    assert expanded.invoice_settings.default_payment_method.card.last4 == "4242"


def test_update_payment_method_metadata_and_expiry(billing):
    customer = billing.customer()
    pm = billing.card(customer.id)
    updated = billing.v1.payment_methods.update(
        pm.id, params={"metadata": {"nickname": "work"}, "card": {"exp_year": 2031}}
    )
    assert updated.metadata.to_dict() == {"nickname": "work"}
    assert updated.card.exp_year == 2031 and updated.card.last4 == "4242"

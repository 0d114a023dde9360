"""Products, prices, subscriptions (service agreements) and test clocks."""

from __future__ import annotations

import pytest
import stripe

from vamos_env import clock

DAY = 86400


def test_products_and_prices(billing):
    product = billing.v1.products.create(params={"name": "Residential electric"})
    assert isinstance(product, stripe.Product) and product.active is True
    price = billing.v1.prices.create(
        params={
            "currency": "usd",
            "product": product.id,
            "unit_amount": 1200,
            "recurring": {"interval": "month"},
        }
    )
    assert isinstance(price, stripe.Price)
    assert (price.type, price.unit_amount, price.recurring.interval) == ("recurring", 1200, "month")
    assert billing.v1.prices.retrieve(price.id, params={"expand": ["product"]}).product.name == (
        "Residential electric"
    )
    one_time = billing.v1.prices.create(
        params={"currency": "usd", "product_data": {"name": "Fee"}, "unit_amount": 500}
    )
    assert one_time.type == "one_time" and one_time.recurring is None
    listed = billing.v1.prices.list(params={"product": product.id})
    assert [p.id for p in listed.data] == [price.id]
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.prices.create(params={"currency": "usd", "unit_amount": 1})
    assert caught.value.param == "product"
    renamed = billing.v1.products.update(product.id, params={"name": "Electric"})
    assert renamed.name == "Electric"


def _service_price(billing):
    product = billing.v1.products.create(params={"name": "Electric service"})
    return billing.v1.prices.create(
        params={
            "currency": "usd",
            "product": product.id,
            "unit_amount": 0,
            "recurring": {"interval": "month"},
        }
    )


def test_subscription_lifecycle(billing):
    customer = billing.customer()
    price = _service_price(billing)
    start = clock.NOW_UNIX - 400 * DAY
    sub = billing.v1.subscriptions.create(
        params={
            "customer": customer.id,
            "items": [{"price": price.id}],
            "metadata": {"premise_id": "P-1", "meter_number": "M-77"},
            "collection_method": "send_invoice",
            "days_until_due": 20,
            "backdate_start_date": start,
        }
    )
    assert isinstance(sub, stripe.Subscription)
    assert sub.status == "active" and sub.start_date == start
    assert sub.latest_invoice is None  # the twin never bills from subscriptions
    item = sub["items"].data[0]
    assert item.price.id == price.id
    assert item.current_period_start <= clock.NOW_UNIX < item.current_period_end
    assert billing.v1.invoices.list().data == []
    updated = billing.v1.subscriptions.update(sub.id, params={"metadata": {"rate_plan": "RS"}})
    assert updated.metadata.to_dict() == {
        "premise_id": "P-1",
        "meter_number": "M-77",
        "rate_plan": "RS",
    }
    listed = billing.v1.subscriptions.list(params={"customer": customer.id})
    assert [s.id for s in listed.data] == [sub.id]
    canceled = billing.v1.subscriptions.cancel(sub.id)
    assert canceled.status == "canceled" and canceled.canceled_at == clock.NOW_UNIX
    assert billing.v1.subscriptions.list(params={"customer": customer.id}).data == []
    everything = billing.v1.subscriptions.list(params={"customer": customer.id, "status": "all"})
    assert [s.id for s in everything.data] == [sub.id]
    with pytest.raises(stripe.InvalidRequestError):
        billing.v1.subscriptions.update(sub.id, params={"description": "x"})


def test_subscription_with_inline_price_data_and_rules(billing):
    customer = billing.customer()
    product = billing.v1.products.create(params={"name": "Gas"})
    sub = billing.v1.subscriptions.create(
        params={
            "customer": customer.id,
            "items": [
                {
                    "price_data": {
                        "currency": "usd",
                        "product": product.id,
                        "unit_amount": 0,
                        "recurring": {"interval": "month"},
                    }
                }
            ],
        }
    )
    assert sub["items"].data[0].price.active is False  # inline prices are created inactive
    one_time = billing.v1.prices.create(
        params={"currency": "usd", "product": product.id, "unit_amount": 5}
    )
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.subscriptions.create(
            params={"customer": customer.id, "items": [{"price": one_time.id}]}
        )
    assert caught.value.param == "items[0][price]"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.subscriptions.create(
            params={"customer": customer.id, "items": [{"price": "price_missing"}]}
        )
    assert caught.value.http_status == 404 and caught.value.param == "items[0][price]"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.subscriptions.create(
            params={
                "customer": customer.id,
                "items": [{"price": sub["items"].data[0].price.id}],
                "collection_method": "send_invoice",
            }
        )
    assert caught.value.param == "days_until_due"


def test_test_clock_lifecycle(billing):
    created = billing.v1.test_helpers.test_clocks.create(
        params={"frozen_time": 1_760_000_000, "name": "seed"}
    )
    assert created.object == "test_helpers.test_clock" and created.status == "ready"
    assert created.created == clock.NOW_UNIX
    advanced = billing.v1.test_helpers.test_clocks.advance(
        created.id, params={"frozen_time": 1_760_086_400}
    )
    assert advanced.frozen_time == 1_760_086_400 and advanced.status == "ready"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.test_helpers.test_clocks.advance(
            created.id, params={"frozen_time": 1_760_000_000}
        )
    assert caught.value.param == "frozen_time"
    assert [c.id for c in billing.v1.test_helpers.test_clocks.list().data] == [created.id]
    customer = billing.customer(test_clock=created.id)
    deleted = billing.v1.test_helpers.test_clocks.delete(created.id)
    assert deleted.deleted is True
    assert billing.v1.customers.retrieve(customer.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.test_helpers.test_clocks.retrieve(created.id)
    assert caught.value.http_status == 404
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.customer(test_clock=created.id)
    assert caught.value.param == "test_clock"

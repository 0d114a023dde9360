"""Customers through the SDK: create, retrieve, update (metadata merge), list, delete, search."""

from __future__ import annotations

import pytest
import stripe

from vamos_env import clock


def test_create_and_retrieve_customer_round_trip(billing):
    created = billing.customer(
        name="Ana Ortiz",
        email="ana@example.com",
        phone="+12155550100",
        description="residential",
        address={"line1": "12 Elm St", "city": "Scranton", "state": "PA", "postal_code": "18503"},
        metadata={"account_number": "4417-90781", "paperless": "false"},
    )
    assert isinstance(created, stripe.Customer)
    assert created.id.startswith("cus_") and len(created.id) == len("cus_") + 14
    assert created.created == clock.NOW_UNIX
    fetched = billing.v1.customers.retrieve(created.id)
    assert fetched.to_dict() == created.to_dict()
    assert fetched.address.postal_code == "18503"
    assert fetched.address.line2 is None
    assert fetched.metadata.to_dict() == {"account_number": "4417-90781", "paperless": "false"}
    assert fetched.invoice_settings.default_payment_method is None
    assert fetched.livemode is False


def test_update_merges_metadata_and_unsets_empty_keys(billing):
    customer = billing.customer(metadata={"account_number": "4417-90781", "paperless": "false"})
    updated = billing.v1.customers.update(
        customer.id, params={"metadata": {"paperless": "true", "supplier": "Default"}}
    )
    assert updated.metadata.to_dict() == {
        "account_number": "4417-90781",
        "paperless": "true",
        "supplier": "Default",
    }
    updated = billing.v1.customers.update(customer.id, params={"metadata": {"supplier": ""}})
    assert updated.metadata.to_dict() == {"account_number": "4417-90781", "paperless": "true"}
    cleared = billing.v1.customers.update(customer.id, params={"metadata": ""})
    assert cleared.metadata.to_dict() == {}
    assert billing.twin.state.customers[customer.id]["metadata"] == {}


def test_update_scalar_fields_and_unset_with_empty_string(billing):
    customer = billing.customer(phone="+12155550100")
    updated = billing.v1.customers.update(
        customer.id, params={"name": "New Name", "phone": "", "email": "new@example.com"}
    )
    assert (updated.name, updated.phone, updated.email) == ("New Name", None, "new@example.com")


def test_invalid_email_is_refused(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.customer(email="not-an-email")
    assert caught.value.param == "email"
    assert caught.value.code == "email_invalid"


def test_list_is_newest_first_and_paginates(billing):
    ids = [billing.customer(name=f"C{i}", email=f"c{i}@example.com").id for i in range(5)]
    first = billing.v1.customers.list(params={"limit": 2})
    assert [c.id for c in first.data] == [ids[4], ids[3]]
    assert first.has_more is True
    assert first.url == "/v1/customers"
    second = billing.v1.customers.list(params={"limit": 2, "starting_after": ids[3]})
    assert [c.id for c in second.data] == [ids[2], ids[1]]
    assert second.has_more is True
    last = billing.v1.customers.list(params={"limit": 2, "starting_after": ids[1]})
    assert [c.id for c in last.data] == [ids[0]]
    assert last.has_more is False
    before = billing.v1.customers.list(params={"limit": 2, "ending_before": ids[1]})
    assert [c.id for c in before.data] == [ids[3], ids[2]]
    assert before.has_more is True
    everyone = [c.id for c in billing.v1.customers.list(params={"limit": 2}).auto_paging_iter()]
    assert everyone == list(reversed(ids))


def test_list_filters_by_email(billing):
    billing.customer(email="a@example.com")
    wanted = billing.customer(email="b@example.com")
    found = billing.v1.customers.list(params={"email": "b@example.com"})
    assert [c.id for c in found.data] == [wanted.id]


def test_pagination_cursor_must_exist_and_cursors_are_exclusive(billing):
    billing.customer()
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.list(params={"starting_after": "cus_missing"})
    assert caught.value.http_status == 404
    assert caught.value.param == "starting_after"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.list(params={"starting_after": "a", "ending_before": "b"})
    assert caught.value.code == "parameters_exclusive"


def test_delete_leaves_a_stub_and_hides_the_customer(billing):
    customer = billing.customer()
    pm = billing.card(customer.id)
    deleted = billing.v1.customers.delete(customer.id)
    assert deleted.deleted is True and deleted.id == customer.id
    stub = billing.v1.customers.retrieve(customer.id)
    assert stub.deleted is True
    assert billing.v1.customers.list().data == []
    assert billing.v1.payment_methods.retrieve(pm.id).customer is None
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.update(customer.id, params={"name": "x"})
    assert caught.value.http_status == 404


def test_unknown_customer_is_resource_missing(billing):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.retrieve("cus_nope")
    error = caught.value
    assert error.http_status == 404
    assert error.code == "resource_missing"
    assert error.param == "id"
    assert error.user_message == "No such customer: 'cus_nope'"


def test_search_by_metadata_is_exact(billing):
    wanted = billing.customer(metadata={"account_number": "4417-90781"})
    billing.customer(metadata={"account_number": "4417-90782"})
    billing.customer(metadata={"account_number": "4417-9078"})
    found = billing.v1.customers.search(params={"query": "metadata['account_number']:'4417-90781'"})
    assert isinstance(found, stripe.SearchResultObject)
    assert [c.id for c in found.data] == [wanted.id]
    assert found.next_page is None and found.has_more is False
    double_quoted = billing.v1.customers.search(
        params={"query": 'metadata["account_number"]:"4417-90781"'}
    )
    assert [c.id for c in double_quoted.data] == [wanted.id]
    assert (
        billing.v1.customers.search(params={"query": "metadata['account_number']:'4417'"}).data
        == []
    )


def test_search_fields_and_boolean_operators(billing):
    ana = billing.customer(name="Ana Ortiz", email="ana@example.com", phone="+15550001")
    bo = billing.customer(name="Bo Chen", email="bo@example.com", phone="+15550002")
    billing.customer(name="Cy Diaz", email="cy@example.com")

    def ids(query):
        return sorted(c.id for c in billing.v1.customers.search(params={"query": query}).data)

    assert ids("email:'ANA@example.com'") == [ana.id]
    assert ids("name:'bo chen'") == [bo.id]
    assert ids("phone:'+15550002'") == [bo.id]
    assert ids("email:'ana@example.com' OR name:'Bo Chen'") == sorted([ana.id, bo.id])
    assert ids("email:'ana@example.com' AND name:'Bo Chen'") == []
    assert ids("name~'ort'") == [ana.id]
    assert ids("-name:'Ana Ortiz' name~'o c'") == [bo.id]


def test_search_pages_with_next_page(billing):
    for i in range(5):
        billing.customer(metadata={"group": "x"}, email=f"p{i}@example.com")
    first = billing.v1.customers.search(params={"query": "metadata['group']:'x'", "limit": 2})
    assert first.has_more is True and first.next_page
    every = billing.v1.customers.search(
        params={"query": "metadata['group']:'x'", "limit": 2}
    ).auto_paging_iter()
    assert len({c.id for c in every}) == 5


@pytest.mark.parametrize(
    "query",
    [
        "",
        "unknown_field:'x'",
        "email:unquoted",
        "email:'a' AND name:'b' OR phone:'c'",
        "metadata[account_number]:'x'",
        "name~'ab'",
        "email:'unterminated",
        " AND ".join(f"email:'{i}'" for i in range(11)),
    ],
)
def test_bad_search_queries_are_400_on_query(billing, query):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        billing.v1.customers.search(params={"query": query})
    assert caught.value.http_status == 400
    assert caught.value.param == "query"


def test_customer_on_a_test_clock_uses_its_frozen_time(billing):
    frozen = clock.NOW_UNIX - 90 * 86400
    test_clock = billing.v1.test_helpers.test_clocks.create(params={"frozen_time": frozen})
    customer = billing.customer(test_clock=test_clock.id)
    assert customer.created == frozen
    assert customer.test_clock == test_clock.id
    expanded = billing.v1.customers.retrieve(customer.id, params={"expand": ["test_clock"]})
    assert expanded.test_clock.frozen_time == frozen


def test_create_with_payment_method_sets_default(billing):
    customer = billing.customer(
        payment_method="pm_card_mastercard",
        invoice_settings={"default_payment_method": "pm_card_mastercard"},
    )
    default = customer.invoice_settings.default_payment_method
    assert default.startswith("pm_") and default != "pm_card_mastercard"
    assert billing.v1.payment_methods.retrieve(default).card.last4 == "4444"

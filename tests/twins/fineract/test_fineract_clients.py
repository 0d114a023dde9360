"""Clients, offices, payment types, configuration and the business date."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env import clock
from vamos_env.clients.fineract import FineractError


def codes(error: FineractError) -> list[str]:
    return [e["userMessageGlobalisationCode"] for e in error.errors]


def test_create_and_read_client(loans):
    client_id = loans.client.create_client(
        firstname="Maria",
        lastname="Okafor",
        external_id="4417-90781",
        activation_date=date(2024, 1, 15),
    )
    client = loans.client.get_client(client_id)
    assert client["id"] == client_id
    assert client["displayName"] == "Maria Okafor"
    assert client["externalId"] == "4417-90781"
    assert client["status"] == {"id": 300, "code": "clientStatusType.active", "value": "Active"}
    assert client["active"] is True
    assert client["activationDate"] == [2024, 1, 15]
    assert client["officeId"] == 1 and client["officeName"] == "Head Office"
    assert client["accountNo"] == f"{client_id:09d}"
    assert client["legalForm"]["code"] == "legalFormType.person"


def test_external_id_lookup_is_exact_and_case_sensitive(loans):
    loans.customer("4417-90781")
    loans.customer("AB12-00001")
    found = loans.client.find_client_by_external_id("4417-90781")
    assert found is not None and found["externalId"] == "4417-90781"
    assert loans.client.find_client_by_external_id("ab12-00001") is None
    assert loans.client.find_client_by_external_id("4417-9078") is None
    page = loans.client.request("GET", "/clients", params={"externalId": "ab12-00001"})
    assert page == {"totalFilteredRecords": 0, "pageItems": []}
    page = loans.client.request("GET", "/clients", params={"externalId": "AB12-00001"})
    assert page["totalFilteredRecords"] == 1 and len(page["pageItems"]) == 1


def test_client_listing_is_paged(loans):
    for n in range(5):
        loans.customer(f"0000-0000{n}")
    page = loans.client.request("GET", "/clients", params={"offset": "1", "limit": "2"})
    assert page["totalFilteredRecords"] == 5
    assert [c["externalId"] for c in page["pageItems"]] == ["0000-00001", "0000-00002"]


def test_duplicate_external_id_is_a_data_integrity_403(loans):
    loans.customer("4417-90781")
    with pytest.raises(FineractError) as caught:
        loans.client.create_client(
            firstname="X", lastname="Y", external_id="4417-90781", activation_date=date(2024, 1, 1)
        )
    error = caught.value
    assert error.status == 403
    assert error.code == "error.msg.client.duplicate.externalId"
    assert error.body["userMessageGlobalisationCode"] == "error.msg.client.duplicate.externalId"
    assert error.errors[0]["parameterName"] == "externalId"
    assert (
        error.errors[0]["defaultUserMessage"]
        == "Client with externalId `4417-90781` already exists"
    )


def test_client_validation_errors_are_per_parameter(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST", "/clients", json={"active": True, "dateFormat": "dd MMMM yyyy", "locale": "en"}
        )
    error = caught.value
    assert error.status == 400
    assert error.body["userMessageGlobalisationCode"] == "validation.msg.validation.errors.exist"
    assert error.body["defaultUserMessage"] == "Validation errors exist."
    assert codes(error) == [
        "validation.msg.client.officeId.cannot.be.blank",
        "validation.msg.client.id..no.name.details.passed",
        "validation.msg.client.activationDate.cannot.be.blank",
        "validation.msg.client.legalFormId.cannot.be.blank",
    ]
    first = error.errors[0]
    assert first["parameterName"] == "officeId"
    assert first["defaultUserMessage"] == "The parameter `officeId` is mandatory."


def test_client_name_rules(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST", "/clients", json={"officeId": 1, "legalFormId": 1, "firstname": "Ann"}
        )
    assert codes(caught.value) == ["validation.msg.client.lastname.cannot.be.blank"]
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST",
            "/clients",
            json={"officeId": 1, "legalFormId": 3, "fullname": "Ann Lee", "firstname": "Ann"},
        )
    assert codes(caught.value) == [
        "validation.msg.client.fullname.cannot.also.be.provided.when.firstname.is.populated",
        "validation.msg.client.legalFormId.is.not.within.expected.range",
    ]
    created = loans.client.request(
        "POST", "/clients", json={"officeId": 1, "legalFormId": 2, "fullname": "Acme Utilities LLC"}
    )
    pending = loans.client.get_client(created["clientId"])
    assert pending["displayName"] == "Acme Utilities LLC"
    assert pending["status"]["value"] == "Pending" and pending["active"] is False


def test_client_dates_are_checked_against_business_date_and_office(loans):
    base = {"officeId": 1, "legalFormId": 1, "firstname": "A", "lastname": "B", "active": True}
    fmt = {"dateFormat": "yyyy-MM-dd", "locale": "en"}
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST", "/clients", json={**base, **fmt, "activationDate": "2026-09-11"}
        )
    assert codes(caught.value) == ["error.msg.clients.activationDate.in.the.future"]
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST", "/clients", json={**base, **fmt, "activationDate": "2001-01-01"}
        )
    assert codes(caught.value) == [
        "error.msg.clients.activationDate.cannot.be.before.office.activation.date"
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/clients", json={**base, "activationDate": "2024-01-01"})
    assert codes(caught.value) == [
        "validation.msg.missing.dateFormat.parameter",
        "validation.msg.missing.locale.parameter",
    ]
    assert caught.value.errors[0]["parameterName"] == "activationDate"


def test_client_404(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.get_client(999)
    error = caught.value
    assert error.status == 404
    assert error.body["userMessageGlobalisationCode"] == "error.msg.resource.not.found"
    assert error.code == "error.msg.client.id.invalid"
    assert error.errors[0]["defaultUserMessage"] == "Client with identifier 999 does not exist"
    assert error.errors[0]["args"] == [{"value": 999}]


def test_unknown_office_is_404(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.create_client(
            firstname="A",
            lastname="B",
            external_id="1",
            activation_date=date(2024, 1, 1),
            office_id=7,
        )
    assert caught.value.status == 404 and caught.value.code == "error.msg.office.id.invalid"


def test_offices_and_payment_types(loans):
    offices = loans.client.request("GET", "/offices")
    assert offices[0]["id"] == 1 and offices[0]["openingDate"] == [2009, 1, 1]
    types = loans.client.list_payment_types()
    assert types[0]["id"] == 1 and types[0]["name"] == "Money Transfer"
    assert loans.client.request("GET", "/paymenttypes/2")["isCashPayment"] is True
    with pytest.raises(FineractError) as caught:
        loans.client.request("GET", "/paymenttypes/42")
    assert caught.value.code == "error.msg.payment.type.invalid"


def test_business_date_feature_and_dates(loans):
    assert loans.client.get_business_date() == clock.TODAY
    config = loans.client.request("GET", "/configurations/name/enable-business-date")
    assert config["name"] == "enable-business-date" and config["enabled"] is True
    dates = loans.client.request("GET", "/businessdate")
    assert dates == [
        {"description": "Business Date", "type": "BUSINESS_DATE", "date": [2026, 9, 10]},
        {"description": "Close of Business Date", "type": "COB_DATE", "date": [2026, 9, 9]},
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.request("GET", "/configurations/name/no-such-thing")
    assert caught.value.code == "error.msg.configuration.property.invalid"
    with pytest.raises(FineractError) as caught:
        loans.client.request("GET", "/businessdate/TOMORROW")
    assert caught.value.code == "error.msg.businessdate.type.not.exist"


def test_setting_the_business_date_moves_today(loans):
    answer = loans.client.set_business_date(date(2026, 10, 1))
    assert answer == {"changes": {"BUSINESS_DATE": [2026, 10, 1], "COB_DATE": [2026, 9, 30]}}
    assert loans.client.get_business_date() == date(2026, 10, 1)
    # A client activated "in the future" of the old date is now fine.
    loans.client.create_client(
        firstname="A", lastname="B", external_id="x", activation_date=date(2026, 9, 20)
    )
    assert loans.client.set_business_date(date(2026, 10, 1)) == {"changes": {}}


def test_business_date_validation(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/businessdate", json={"type": "BUSINESS_DATE"})
    assert codes(caught.value) == [
        "validation.msg.businessdate.update.locale.cannot.be.blank",
        "validation.msg.businessdate.update.dateFormat.cannot.be.blank",
        "validation.msg.businessdate.update.date.cannot.be.blank",
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST",
            "/businessdate",
            json={
                "type": "BUSINESS_DATE",
                "date": "31 February 2026",
                "dateFormat": "dd MMMM yyyy",
                "locale": "en",
            },
        )
    assert codes(caught.value) == ["validation.msg.invalid.dateFormat.format"]

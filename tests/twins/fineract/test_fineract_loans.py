"""Loan products, the loan lifecycle, schedules, repayments and their refusals."""

from __future__ import annotations

from datetime import date

import pytest

from vamos_env import clock
from vamos_env.clients.fineract import FineractError, to_cents

TODAY = clock.TODAY


def codes(error: FineractError) -> list[str]:
    return [e["userMessageGlobalisationCode"] for e in error.errors]


def instalments(loan: dict) -> list[dict]:
    return [p for p in loan["repaymentSchedule"]["periods"] if "period" in p]


def principal_dues(loan: dict) -> list[int]:
    return [to_cents(p["principalDue"]) for p in instalments(loan)]


def loan_body(**changes):
    body = {
        "clientId": 1,
        "productId": 1,
        "loanType": "individual",
        "principal": 100.00,
        "loanTermFrequency": 3,
        "loanTermFrequencyType": 2,
        "numberOfRepayments": 3,
        "repaymentEvery": 1,
        "repaymentFrequencyType": 2,
        "interestRatePerPeriod": 0,
        "amortizationType": 1,
        "interestType": 0,
        "interestCalculationPeriodType": 1,
        "transactionProcessingStrategyCode": "mifos-standard-strategy",
        "expectedDisbursementDate": "10 September 2026",
        "submittedOnDate": "10 September 2026",
        "dateFormat": "dd MMMM yyyy",
        "locale": "en",
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


# -- products ------------------------------------------------------------------------


def test_create_list_and_read_product(loans):
    product_id = loans.product()
    listed = loans.client.list_loan_products()
    assert [p["id"] for p in listed] == [product_id]
    product = loans.client.request("GET", f"/loanproducts/{product_id}")
    assert product["name"] == "Payment Arrangement" and product["shortName"] == "PA"
    assert product["currency"]["code"] == "USD" and product["currency"]["decimalPlaces"] == 2
    assert product["interestRatePerPeriod"] == 0
    assert (
        product["repaymentFrequencyType"]["code"] == "repaymentFrequency.periodFrequencyType.months"
    )
    assert product["amortizationType"]["id"] == 1
    assert product["transactionProcessingStrategyCode"] == "mifos-standard-strategy"
    assert product["accountingRule"]["value"] == "NONE"


def test_product_mandatory_parameters(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loanproducts", json={"locale": "en"})
    assert codes(caught.value) == [
        "validation.msg.loanproduct.name.cannot.be.blank",
        "validation.msg.loanproduct.shortName.cannot.be.blank",
        "validation.msg.loanproduct.currencyCode.cannot.be.blank",
        "validation.msg.loanproduct.digitsAfterDecimal.cannot.be.blank",
        "validation.msg.loanproduct.numberOfRepayments.cannot.be.blank",
        "validation.msg.loanproduct.repaymentEvery.cannot.be.blank",
        "validation.msg.loanproduct.repaymentFrequencyType.cannot.be.blank",
        "validation.msg.loanproduct.amortizationType.cannot.be.blank",
        "validation.msg.loanproduct.interestType.cannot.be.blank",
        "validation.msg.loanproduct.interestCalculationPeriodType.cannot.be.blank",
        "validation.msg.loanproduct.transactionProcessingStrategyCode.cannot.be.blank",
        "validation.msg.loanproduct.daysInYearType.cannot.be.blank",
        "validation.msg.loanproduct.daysInYearType.is.not.one.of.expected.enumerations",
        "validation.msg.loanproduct.daysInMonthType.cannot.be.blank",
        "validation.msg.loanproduct.daysInMonthType.is.not.one.of.expected.enumerations",
        "validation.msg.loanproduct.isInterestRecalculationEnabled.cannot.be.blank",
        "validation.msg.loanproduct.isInterestRecalculationEnabled.is.not.one.of.expected.enumerations",
        "validation.msg.loanproduct.interestRatePerPeriod.cannot.be.blank",
        "validation.msg.loanproduct.interestRateFrequencyType.cannot.be.blank",
        "validation.msg.loanproduct.accountingRule.cannot.be.blank",
    ]


def test_duplicate_product_name_and_unknown_currency(loans):
    loans.product()
    with pytest.raises(FineractError) as caught:
        loans.client.create_loan_product(name="Payment Arrangement", short_name="PB")
    assert (
        caught.value.status == 403 and caught.value.code == "error.msg.product.loan.duplicate.name"
    )
    with pytest.raises(FineractError) as caught:
        loans.client.create_loan_product(name="Other", short_name="PA")
    assert caught.value.code == "error.msg.product.loan.duplicate.short.name"
    with pytest.raises(FineractError) as caught:
        loans.client.create_loan_product(name="Other", short_name="OT", currency_code="XYZ")
    assert (
        caught.value.status == 404
        and caught.value.code == "error.msg.currency.currencyCode.invalid"
    )


def test_product_404(loans):
    with pytest.raises(FineractError) as caught:
        loans.client.request("GET", "/loanproducts/5")
    assert caught.value.code == "error.msg.loanproduct.id.invalid"


# -- lifecycle -------------------------------------------------------------------------


def test_lifecycle_to_closed(loans):
    client_id, product_id = loans.customer(), loans.product()
    loan_id = loans.client.submit_loan(
        client_id=client_id,
        product_id=product_id,
        principal_cents=10_000,
        installments=3,
        submitted_on=TODAY,
        expected_disbursement_on=TODAY,
    )
    loan = loans.client.get_loan(loan_id)
    assert loan["status"]["id"] == 100 and loan["status"]["pendingApproval"] is True
    assert "summary" not in loan
    assert (
        loan["clientExternalId"] == "4417-90781"
        and loan["loanProductName"] == "Payment Arrangement"
    )

    approved = loans.client.approve_loan(loan_id, on=TODAY)
    assert approved["loanId"] == loan_id and approved["resourceId"] == loan_id
    assert approved["changes"]["status"]["id"] == 200
    assert approved["changes"]["approvedOnDate"] == "10 September 2026"
    assert loans.client.get_loan(loan_id)["status"]["waitingForDisbursal"] is True

    disbursed = loans.client.disburse_loan(loan_id, on=TODAY)
    assert disbursed["changes"]["status"]["value"] == "Active"
    loan = loans.client.get_loan(loan_id)
    assert loan["status"]["id"] == 300 and loan["status"]["active"] is True
    assert loan["timeline"]["actualDisbursementDate"] == [2026, 9, 10]
    assert loan["summary"]["principalDisbursed"] == 100.0
    assert loan["summary"]["totalOutstanding"] == 100.0

    paid = loans.client.make_repayment(loan_id, amount_cents=3_333, on=TODAY)
    assert paid["loanId"] == loan_id and paid["resourceId"] != loan_id
    assert paid["changes"]["transactionAmount"] == "33.33"
    assert paid["changes"]["paymentTypeId"] == 1
    loan = loans.client.get_loan(loan_id)
    first = instalments(loan)[0]
    assert first["complete"] is True and first["obligationsMetOnDate"] == [2026, 9, 10]
    assert first["totalPaidInAdvanceForPeriod"] == 33.33
    assert loan["summary"]["totalOutstanding"] == 66.67

    loans.client.make_repayment(loan_id, amount_cents=6_667, on=TODAY, note="paid off")
    loan = loans.client.get_loan(loan_id)
    assert loan["status"]["id"] == 600 and loan["status"]["closedObligationsMet"] is True
    assert loan["status"]["value"] == "Closed (obligations met)"
    assert loan["timeline"]["closedOnDate"] == [2026, 9, 10]
    assert loan["summary"]["totalOutstanding"] == 0 and loan["summary"]["totalRepayment"] == 100.0
    assert all(p["complete"] for p in instalments(loan))
    types = [t["type"]["value"] for t in loan["transactions"]]
    assert types == ["Disbursement", "Repayment", "Repayment"]
    assert [t["outstandingLoanBalance"] for t in loan["transactions"]] == [100.0, 66.67, 0.0]


def test_overpayment_makes_the_loan_overpaid(loans):
    loan_id = loans.open_loan(10_000, 3)
    loans.client.make_repayment(loan_id, amount_cents=12_500, on=TODAY)
    loan = loans.client.get_loan(loan_id)
    assert loan["status"]["id"] == 700 and loan["status"]["overpaid"] is True
    assert loan["totalOverpaid"] == 25.0
    assert loan["summary"]["principalOutstanding"] == 0
    repayment = loan["transactions"][-1]
    assert repayment["principalPortion"] == 100.0 and repayment["overpaymentPortion"] == 25.0
    assert repayment["outstandingLoanBalance"] == 0


def test_closed_loan_accepts_a_further_payment_as_overpayment(loans):
    loan_id = loans.open_loan(5_000, 2)
    loans.client.make_repayment(loan_id, amount_cents=5_000, on=TODAY)
    assert loans.client.get_loan(loan_id)["status"]["id"] == 600
    loans.client.make_repayment(loan_id, amount_cents=100, on=TODAY)
    loan = loans.client.get_loan(loan_id)
    assert loan["status"]["id"] == 700 and loan["totalOverpaid"] == 1.0


def test_response_shapes(loans):
    loan_id = loans.open_loan(65_841, 6, external_id="ARR-1")
    plain = loans.client.get_loan(loan_id, associations=())
    assert "repaymentSchedule" not in plain and "transactions" not in plain
    everything = loans.client.request("GET", f"/loans/{loan_id}", params={"associations": "all"})
    assert "repaymentSchedule" in everything and "transactions" in everything
    assert everything["externalId"] == "ARR-1"
    assert everything["principal"] == 658.41
    periods = everything["repaymentSchedule"]["periods"]
    disbursement = periods[0]
    assert "period" not in disbursement
    assert disbursement["dueDate"] == [2026, 9, 10]
    assert disbursement["principalDisbursed"] == 658.41
    assert disbursement["totalDueForPeriod"] == 0
    first = periods[1]
    assert first["period"] == 1 and first["fromDate"] == [2026, 9, 10]
    assert first["dueDate"] == [2026, 10, 10] and first["daysInPeriod"] == 30
    for key in (
        "principalOriginalDue",
        "principalPaid",
        "principalOutstanding",
        "totalDueForPeriod",
        "totalPaidForPeriod",
        "totalOutstandingForPeriod",
        "complete",
    ):
        assert key in first
    assert "totalOverdue" not in first  # not yet due on the business date
    schedule = everything["repaymentSchedule"]
    assert schedule["totalPrincipalExpected"] == 658.41
    assert schedule["currency"]["code"] == "USD"
    disbursal = everything["transactions"][0]
    assert disbursal["type"]["disbursement"] is True and disbursal["date"] == [2026, 9, 10]
    assert disbursal["amount"] == 658.41


# -- schedules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("principal_cents", "count", "expected"),
    [
        (10_000, 3, [3_333, 3_333, 3_334]),
        (65_841, 6, [10_974] * 5 + [10_971]),
        (100_000, 60, [1_667] * 59 + [1_647]),
        (5_000, 2, [2_500, 2_500]),
        (1, 3, [0, 0, 1]),
        (5, 6, [1, 1, 1, 1, 1, 0]),
    ],
)
def test_schedule_rounding_matches_fineract(loans, principal_cents, count, expected):
    loan_id = loans.open_loan(principal_cents, count)
    loan = loans.client.get_loan(loan_id)
    assert principal_dues(loan) == expected
    assert sum(principal_dues(loan)) == principal_cents


def test_first_repayment_date_and_month_ends(loans):
    loan_id = loans.open_loan(30_000, 4, on=date(2026, 1, 20), first_repayment_on=date(2026, 1, 31))
    loan = loans.client.get_loan(loan_id)
    dues = [p["dueDate"] for p in instalments(loan)]
    assert dues == [[2026, 1, 31], [2026, 2, 28], [2026, 3, 31], [2026, 4, 30]]
    assert loan["timeline"]["expectedMaturityDate"] == [2026, 4, 30]
    assert [p["fromDate"] for p in instalments(loan)][:2] == [[2026, 1, 20], [2026, 1, 31]]


def test_overdue_instalments_show_in_summary(loans):
    loan_id = loans.open_loan(30_000, 3, on=date(2026, 6, 15))
    loans.client.make_repayment(loan_id, amount_cents=10_000, on=date(2026, 7, 20))
    loan = loans.client.get_loan(loan_id)
    rows = instalments(loan)
    assert rows[0]["complete"] is True and rows[0]["totalOverdue"] == 0
    assert rows[0]["totalPaidLateForPeriod"] == 100.0
    assert rows[1]["dueDate"] == [2026, 8, 15] and rows[1]["totalOverdue"] == 100.0
    assert rows[2]["dueDate"] == [2026, 9, 15] and "totalOverdue" not in rows[2]
    assert loan["summary"]["totalOverdue"] == 100.0
    assert loan["summary"]["overdueSinceDate"] == [2026, 8, 15]
    assert loan["inArrears"] is True
    assert loan["status"]["active"] is True


def test_backdated_repayment_is_replayed_in_date_order(loans):
    loan_id = loans.open_loan(30_000, 3, on=date(2026, 6, 1))
    loans.client.make_repayment(loan_id, amount_cents=5_000, on=date(2026, 9, 1))
    loans.client.make_repayment(loan_id, amount_cents=10_000, on=date(2026, 7, 1))
    loan = loans.client.get_loan(loan_id)
    first = instalments(loan)[0]
    assert first["obligationsMetOnDate"] == [2026, 7, 1]
    balances = [(t["date"], t["outstandingLoanBalance"]) for t in loan["transactions"]]
    assert balances == [([2026, 6, 1], 300.0), ([2026, 7, 1], 200.0), ([2026, 9, 1], 150.0)]


def test_calculate_loan_schedule_creates_nothing(loans):
    loans.customer()
    loans.product()
    schedule = loans.client.request(
        "POST",
        "/loans",
        params={"command": "calculateLoanSchedule"},
        json=loan_body(principal=658.41, loanTermFrequency=6, numberOfRepayments=6),
    )
    dues = [to_cents(p["principalDue"]) for p in schedule["periods"] if "period" in p]
    assert dues == [10_974] * 5 + [10_971]
    assert loans.twin.state.loans == {}


# -- refusals --------------------------------------------------------------------------------


def test_future_dated_repayment_is_403_with_the_exact_code(loans):
    loan_id = loans.open_loan(10_000, 2)
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(loan_id, amount_cents=5_000, on=date(2026, 9, 11))
    error = caught.value
    assert error.status == 403
    assert error.code == "error.msg.loan.transaction.cannot.be.a.future.date"
    assert (
        error.errors[0]["userMessageGlobalisationCode"]
        == "error.msg.loan.transaction.cannot.be.a.future.date"
    )
    assert error.errors[0]["defaultUserMessage"] == "The transaction date cannot be in the future."
    assert error.errors[0]["args"] == [{"value": "2026-09-11"}]
    assert error.body["userMessageGlobalisationCode"] == "validation.msg.domain.rule.violation"
    assert error.body["httpStatusCode"] == "403"
    assert loans.client.get_loan(loan_id)["summary"]["totalOutstanding"] == 100.0


def test_repayment_before_disbursement_date_is_403(loans):
    loan_id = loans.open_loan(10_000, 2, on=date(2026, 9, 1))
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(loan_id, amount_cents=100, on=date(2026, 8, 31))
    assert caught.value.code == "error.msg.loan.transaction.cannot.be.before.disbursement.date"


@pytest.mark.parametrize("amount", [0, -500])
def test_zero_or_negative_repayment_is_a_validation_error(loans, amount):
    loan_id = loans.open_loan(10_000, 2)
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(loan_id, amount_cents=amount, on=TODAY)
    assert caught.value.status == 400
    assert codes(caught.value) == [
        "validation.msg.loan.transaction.transactionAmount.not.greater.than.zero"
    ]
    assert caught.value.errors[0]["parameterName"] == "transactionAmount"


def test_repayment_validation_and_lookups(loans):
    loan_id = loans.open_loan(10_000, 2)
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST",
            f"/loans/{loan_id}/transactions",
            params={"command": "repayment"},
            json={"locale": "en", "dateFormat": "dd MMMM yyyy"},
        )
    assert codes(caught.value) == [
        "validation.msg.loan.transaction.transactionDate.cannot.be.blank",
        "validation.msg.loan.transaction.transactionAmount.cannot.be.blank",
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST",
            f"/loans/{loan_id}/transactions",
            params={"command": "repayment"},
            json={"transactionDate": "10 September 2026", "transactionAmount": 5},
        )
    assert codes(caught.value) == [
        "validation.msg.missing.dateFormat.parameter",
        "validation.msg.missing.locale.parameter",
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(loan_id, amount_cents=100, on=TODAY, payment_type_id=77)
    assert caught.value.status == 404 and caught.value.code == "error.msg.payment.type.invalid"
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(9999, amount_cents=100, on=TODAY)
    assert caught.value.status == 404 and caught.value.code == "error.msg.loan.id.invalid"


def test_wrong_transitions(loans):
    client_id, product_id = loans.customer(), loans.product()
    loan_id = loans.client.submit_loan(
        client_id=client_id,
        product_id=product_id,
        principal_cents=10_000,
        installments=2,
        submitted_on=TODAY,
        expected_disbursement_on=TODAY,
    )
    with pytest.raises(FineractError) as caught:
        loans.client.disburse_loan(loan_id, on=TODAY)
    assert caught.value.status == 400
    assert codes(caught.value) == [
        "error.msg.loan.disbursal.account.is.not.approve.not.disbursed.state"
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.make_repayment(loan_id, amount_cents=100, on=TODAY)
    assert caught.value.status == 400
    assert codes(caught.value) == ["error.msg.loan.must.be.active.fully.paid.or.overpaid"]
    loans.client.approve_loan(loan_id, on=TODAY)
    with pytest.raises(FineractError) as caught:
        loans.client.approve_loan(loan_id, on=TODAY)
    assert caught.value.status == 400
    assert (
        codes(caught.value)
        == ["error.msg.loan.approve.account.is.not.submitted.and.pending.state"] * 2
    )
    assert caught.value.errors[1]["defaultUserMessage"] == "Loan is already approved."
    loans.client.disburse_loan(loan_id, on=TODAY)
    with pytest.raises(FineractError) as caught:
        loans.client.disburse_loan(loan_id, on=TODAY)
    assert codes(caught.value) == [
        "error.msg.loan.disbursal.account.is.not.approve.not.disbursed.state"
    ]


def test_approval_and_disbursal_date_rules(loans):
    client_id, product_id = loans.customer(), loans.product()
    loan_id = loans.client.submit_loan(
        client_id=client_id,
        product_id=product_id,
        principal_cents=10_000,
        installments=2,
        submitted_on=date(2026, 9, 1),
        expected_disbursement_on=date(2026, 9, 5),
    )
    with pytest.raises(FineractError) as caught:
        loans.client.approve_loan(loan_id, on=date(2026, 8, 31))
    assert caught.value.status == 403
    assert caught.value.code == "error.msg.loan.approval.cannot.be.before.submittal.date"
    with pytest.raises(FineractError) as caught:
        loans.client.approve_loan(loan_id, on=date(2026, 9, 6))
    assert (
        caught.value.code == "error.msg.loan.expecteddisbursal.should.be.on.or.after.approval.date"
    )
    loans.client.approve_loan(loan_id, on=date(2026, 9, 2))
    with pytest.raises(FineractError) as caught:
        loans.client.disburse_loan(loan_id, on=date(2026, 9, 1))
    assert caught.value.code == "error.msg.loan.disbursal.cannot.be.before.approval.date"
    with pytest.raises(FineractError) as caught:
        loans.client.disburse_loan(loan_id, on=date(2026, 9, 11))
    assert caught.value.status == 403
    assert caught.value.code == "error.msg.loan.disbursal.cannot.be.a.future.date"
    loans.client.disburse_loan(loan_id, on=date(2026, 9, 3))
    loan = loans.client.get_loan(loan_id)
    # The schedule follows the actual disbursement date.
    assert instalments(loan)[0]["dueDate"] == [2026, 10, 3]


def test_future_approval_is_403(loans):
    client_id, product_id = loans.customer(), loans.product()
    loan_id = loans.client.submit_loan(
        client_id=client_id,
        product_id=product_id,
        principal_cents=10_000,
        installments=2,
        submitted_on=TODAY,
        expected_disbursement_on=date(2026, 9, 20),
    )
    with pytest.raises(FineractError) as caught:
        loans.client.approve_loan(loan_id, on=date(2026, 9, 12))
    assert caught.value.status == 403
    assert caught.value.code == "error.msg.loan.approval.cannot.be.a.future.date"


def test_submission_rules(loans):
    client_id, product_id = loans.customer(since=date(2025, 1, 1)), loans.product()

    def submit(**kw):
        defaults = dict(
            client_id=client_id,
            product_id=product_id,
            principal_cents=10_000,
            installments=2,
            submitted_on=TODAY,
            expected_disbursement_on=TODAY,
        )
        defaults.update(kw)
        return loans.client.submit_loan(**defaults)

    with pytest.raises(FineractError) as caught:
        submit(submitted_on=date(2026, 9, 11), expected_disbursement_on=date(2026, 9, 12))
    assert caught.value.code == "error.msg.loan.submittal.cannot.be.a.future.date"
    with pytest.raises(FineractError) as caught:
        submit(submitted_on=date(2024, 12, 31))
    assert caught.value.code == "error.msg.loan.submittal.cannot.be.before.client.activation.date"
    with pytest.raises(FineractError) as caught:
        submit(expected_disbursement_on=date(2026, 9, 9))
    assert (
        caught.value.code == "error.msg.loan.submittal.cannot.be.after.expected.disbursement.date"
    )
    with pytest.raises(FineractError) as caught:
        submit(client_id=404)
    assert caught.value.status == 404 and caught.value.code == "error.msg.client.id.invalid"
    with pytest.raises(FineractError) as caught:
        submit(product_id=404)
    assert caught.value.status == 404 and caught.value.code == "error.msg.loanproduct.id.invalid"
    submit(external_id="ARR-9")
    with pytest.raises(FineractError) as caught:
        submit(external_id="ARR-9")
    assert (
        caught.value.status == 403
        and caught.value.code == "error.msg.loan.with.externalId.already.used"
    )


def test_loan_validation_errors_are_per_parameter(loans):
    loans.customer()
    loans.product()
    with pytest.raises(FineractError) as caught:
        loans.client.request(
            "POST",
            "/loans",
            json=loan_body(
                principal=None, numberOfRepayments=0, loanTermFrequencyType=7, loanType=None
            ),
        )
    assert codes(caught.value) == [
        "validation.msg.loan.loanType.cannot.be.blank",
        "validation.msg.loan.loanTermFrequencyType.is.not.within.expected.range",
        "validation.msg.loan.numberOfRepayments.not.greater.than.zero",
        "validation.msg.loan.principal.cannot.be.blank",
    ]
    principal = caught.value.errors[-1]
    assert principal["parameterName"] == "principal"
    assert principal["defaultUserMessage"] == "The parameter `principal` is mandatory."
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(productId=None))
    assert codes(caught.value) == ["validation.msg.loans.productId.cannot.be.blank"]
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(loanTermFrequency=4))
    assert codes(caught.value) == [
        "validation.msg.loan.loanTermFrequency.greater.than.repayment.structure.suggests"
    ]
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(principal=-5))
    assert codes(caught.value) == ["validation.msg.loan.principal.not.greater.than.zero"]


def test_loan_dates_need_format_and_locale(loans):
    loans.customer()
    loans.product()
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(dateFormat=None))
    assert codes(caught.value) == ["validation.msg.missing.dateFormat.parameter"]
    assert caught.value.errors[0]["parameterName"] == "expectedDisbursementDate"
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(locale=None))
    # The first locale-dependent field (loanTermFrequency) is the one reported.
    assert codes(caught.value) == ["validation.msg.missing.locale.parameter"]
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(submittedOnDate="2026-09-10"))
    assert codes(caught.value) == ["validation.msg.invalid.dateFormat.format"]
    assert caught.value.errors[0]["args"] == [{"value": None}, {"value": "dd MMMM yyyy"}]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("yyyy-MM-dd", "2026-09-10"),
        ("dd MMM yyyy", "10 Sep 2026"),
        ("dd MMMM yyyy", "10 SEPTEMBER 2026"),
    ],
)
def test_other_date_formats_are_accepted(loans, fmt, text):
    loans.customer()
    loans.product()
    answer = loans.client.request(
        "POST",
        "/loans",
        json=loan_body(dateFormat=fmt, submittedOnDate=text, expectedDisbursementDate=text),
    )
    loan = loans.client.get_loan(answer["loanId"], associations=())
    assert loan["timeline"]["submittedOnDate"] == [2026, 9, 10]


def test_interest_bearing_loans_are_refused_plainly(loans):
    loans.customer()
    loans.product()
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(interestRatePerPeriod=1.5))
    assert (
        caught.value.status == 403 and caught.value.code == "error.msg.twin.feature.not.supported"
    )


def test_inactive_client_cannot_borrow(loans):
    created = loans.client.request(
        "POST",
        "/clients",
        json={"officeId": 1, "legalFormId": 1, "firstname": "P", "lastname": "Q"},
    )
    loans.product()
    with pytest.raises(FineractError) as caught:
        loans.client.request("POST", "/loans", json=loan_body(clientId=created["clientId"]))
    assert (
        caught.value.status == 403 and caught.value.code == "error.msg.client.not.active.exception"
    )

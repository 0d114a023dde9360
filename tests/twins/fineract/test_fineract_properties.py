"""Property tests: loan arithmetic invariants, clone isolation, and clone cost."""

from __future__ import annotations

import json
from datetime import date, timedelta

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vamos_env import clock
from vamos_env.clients.fineract import API_PATH, FineractClient, FineractError, to_cents
from vamos_env.twins.fineract import LoanTwin
from vamos_env.twins.transport import TwinTransport

TODAY = clock.TODAY
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def client_for(twin: LoanTwin) -> FineractClient:
    return FineractClient(
        "http://fineract.twin", "mifos", "password", transport=TwinTransport(twin)
    )


def seed(client: FineractClient, accounts: int = 24, loans: int = 10) -> list[int]:
    product = client.create_loan_product(name="Payment Arrangement", short_name="PA")
    clients = [
        client.create_client(
            firstname=f"Name{n}",
            lastname="Tester",
            external_id=f"4417-{n:05d}",
            activation_date=date(2024, 1, 1),
        )
        for n in range(accounts)
    ]
    loan_ids = []
    for n in range(loans):
        start = TODAY - timedelta(days=30 * (n % 7))
        loan_id = client.submit_loan(
            client_id=clients[n],
            product_id=product,
            principal_cents=10_000 + 7_919 * n,
            installments=6 + 3 * n,
            submitted_on=start,
            expected_disbursement_on=start,
        )
        client.approve_loan(loan_id, on=start)
        client.disburse_loan(loan_id, on=start)
        for k in range(n % 4):
            on = min(start + timedelta(days=k), TODAY)
            client.make_repayment(loan_id, amount_cents=1_234 + k, on=on)
        loan_ids.append(loan_id)
    return loan_ids


@FAST
@given(
    principal=st.integers(min_value=1, max_value=5_000_000),
    count=st.integers(min_value=1, max_value=60),
    started_days_ago=st.integers(min_value=0, max_value=400),
    payments=st.lists(
        st.tuples(st.integers(min_value=1, max_value=3_000_000), st.floats(0, 1)), max_size=6
    ),
)
def test_outstanding_is_disbursed_minus_repaid(principal, count, started_days_ago, payments):
    twin = LoanTwin()
    with client_for(twin) as client:
        product = client.create_loan_product(name="P", short_name="P")
        person = client.create_client(
            firstname="A", lastname="B", external_id="1", activation_date=date(2024, 1, 1)
        )
        start = TODAY - timedelta(days=started_days_ago)
        loan_id = client.submit_loan(
            client_id=person,
            product_id=product,
            principal_cents=principal,
            installments=count,
            submitted_on=start,
            expected_disbursement_on=start,
        )
        client.approve_loan(loan_id, on=start)
        client.disburse_loan(loan_id, on=start)
        paid_total = 0
        for amount, when in payments:
            on = start + timedelta(days=round(when * started_days_ago))
            client.make_repayment(loan_id, amount_cents=amount, on=on)
            paid_total += amount
        loan = client.get_loan(loan_id)

    dues = [
        to_cents(p["principalDue"]) for p in loan["repaymentSchedule"]["periods"] if "period" in p
    ]
    assert len(dues) == count and sum(dues) == principal and min(dues) >= 0
    repaid_principal = sum(
        to_cents(t["principalPortion"]) for t in loan["transactions"] if t["type"]["repayment"]
    )
    summary = loan["summary"]
    outstanding = to_cents(summary["principalOutstanding"])
    assert to_cents(summary["principalDisbursed"]) == principal
    assert outstanding == principal - repaid_principal >= 0
    assert to_cents(summary["totalOutstanding"]) == outstanding
    assert repaid_principal == min(paid_total, principal)
    overpaid = max(0, paid_total - principal)
    assert to_cents(loan.get("totalOverpaid", 0)) == overpaid
    expected_status = 300 if outstanding else (700 if overpaid else 600)
    assert loan["status"]["id"] == expected_status
    paid_by_period = sum(
        to_cents(p["principalPaid"]) for p in loan["repaymentSchedule"]["periods"] if "period" in p
    )
    assert paid_by_period == repaid_principal
    balances = [to_cents(t["outstandingLoanBalance"]) for t in loan["transactions"]]
    assert balances == sorted(balances, reverse=True) and balances[-1] == outstanding


_SEEDED = LoanTwin()
with client_for(_SEEDED) as _client:
    _SEEDED_LOANS = seed(_client)


def snapshot(twin: LoanTwin) -> str:
    return json.dumps(twin.state.to_dict(), sort_keys=True)


_operation = st.one_of(
    st.tuples(st.just("repay"), st.integers(0, 9), st.integers(-100, 50_000), st.integers(0, 3)),
    st.tuples(st.just("client"), st.integers(0, 30), st.integers(0, 0), st.integers(0, 0)),
    st.tuples(st.just("loan"), st.integers(0, 23), st.integers(1, 90_000), st.integers(1, 24)),
    st.tuples(st.just("date"), st.integers(-30, 30), st.integers(0, 0), st.integers(0, 0)),
)


@FAST
@given(operations=st.lists(_operation, min_size=1, max_size=8))
def test_a_clones_writes_never_reach_the_original(operations):
    before = snapshot(_SEEDED)
    clone = _SEEDED.clone()
    assert snapshot(clone) == before
    succeeded = 0
    with client_for(clone) as client:
        for kind, a, b, c in operations:
            try:
                if kind == "repay":
                    client.make_repayment(
                        _SEEDED_LOANS[a], amount_cents=b, on=TODAY - timedelta(days=c)
                    )
                elif kind == "client":
                    client.create_client(
                        firstname="New",
                        lastname="Person",
                        external_id=f"9999-{a:05d}",
                        activation_date=date(2025, 5, 5),
                    )
                elif kind == "loan":
                    client.submit_loan(
                        client_id=a + 1,
                        product_id=1,
                        principal_cents=b,
                        installments=c,
                        submitted_on=TODAY,
                        expected_disbursement_on=TODAY,
                    )
                else:
                    client.set_business_date(TODAY + timedelta(days=a))
                    continue  # dates can be set back; only records count as lasting writes
                succeeded += 1
            except FineractError as error:
                assert error.status in (400, 403, 404)
    assert snapshot(_SEEDED) == before
    if succeeded:
        assert snapshot(clone) != before


def test_seeding_is_deterministic():
    other = LoanTwin()
    with client_for(other) as client:
        seed(client)
    assert snapshot(other) == snapshot(_SEEDED)


def test_clones_of_clones_stay_apart():
    first = _SEEDED.clone()
    second = first.clone()
    with client_for(second) as client:
        client.make_repayment(_SEEDED_LOANS[0], amount_cents=500, on=TODAY)
    assert snapshot(first) == snapshot(_SEEDED)
    assert snapshot(second) != snapshot(first)


_KEYS = [
    "officeId",
    "firstname",
    "lastname",
    "fullname",
    "externalId",
    "active",
    "activationDate",
    "legalFormId",
    "dateFormat",
    "locale",
    "clientId",
    "productId",
    "principal",
    "loanTermFrequency",
    "loanTermFrequencyType",
    "numberOfRepayments",
    "repaymentEvery",
    "repaymentFrequencyType",
    "interestRatePerPeriod",
    "amortizationType",
    "interestType",
    "interestCalculationPeriodType",
    "transactionProcessingStrategyCode",
    "expectedDisbursementDate",
    "submittedOnDate",
    "repaymentsStartingFromDate",
    "loanType",
    "approvedOnDate",
    "actualDisbursementDate",
    "transactionDate",
    "transactionAmount",
    "paymentTypeId",
    "note",
    "type",
    "date",
    "name",
    "shortName",
    "currencyCode",
    "digitsAfterDecimal",
    "daysInYearType",
    "daysInMonthType",
    "accountingRule",
    "isInterestRecalculationEnabled",
    "interestRateFrequencyType",
    "installmentAmountInMultiplesOf",
]
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "10 September 2026",
            "2026-09-10",
            "dd MMMM yyyy",
            "yyyy-MM-dd",
            "en",
            "en_US",
            "individual",
            "mifos-standard-strategy",
            "BUSINESS_DATE",
            "USD",
            "31 February 2026",
            "01 January 0001",
            "31 December 9999",
            "MMMM",
            "'",
            "1,000.50",
        ]
    ),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_ENDPOINTS = [
    ("/clients", {}),
    ("/loanproducts", {}),
    ("/loans", {}),
    ("/loans", {"command": "calculateLoanSchedule"}),
    ("/loans/1", {"command": "approve"}),
    ("/loans/2", {"command": "disburse"}),
    ("/loans/3/transactions", {"command": "repayment"}),
    ("/businessdate", {}),
]


@settings(max_examples=300, deadline=None)
@given(
    endpoint=st.sampled_from(_ENDPOINTS),
    body=st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=6), _values, max_size=12),
)
def test_no_body_produces_a_server_error(endpoint, body):
    path, params = endpoint
    twin = _SEEDED.clone()
    with httpx.Client(
        base_url="http://fineract.twin" + API_PATH,
        transport=TwinTransport(twin),
        auth=("mifos", "password"),
        headers={"Fineract-Platform-TenantId": "default"},
    ) as http:
        response = http.post(path, params=params, content=json.dumps(body).encode())
    assert response.status_code < 500, response.text
    answer = response.json()
    if response.status_code >= 400:
        assert answer["userMessageGlobalisationCode"]


_FORMAT = {"dateFormat": "dd MMMM yyyy", "locale": "en"}
_VALID = {
    ("/clients", ""): {
        "officeId": 1,
        "firstname": "A",
        "lastname": "B",
        "externalId": "X-1",
        "active": True,
        "activationDate": "01 March 2025",
        "legalFormId": 1,
        **_FORMAT,
    },
    ("/loans", ""): {
        "clientId": 1,
        "productId": 1,
        "loanType": "individual",
        "principal": 658.41,
        "loanTermFrequency": 6,
        "loanTermFrequencyType": 2,
        "numberOfRepayments": 6,
        "repaymentEvery": 1,
        "repaymentFrequencyType": 2,
        "interestRatePerPeriod": 0,
        "amortizationType": 1,
        "interestType": 0,
        "interestCalculationPeriodType": 1,
        "transactionProcessingStrategyCode": "mifos-standard-strategy",
        "expectedDisbursementDate": "10 September 2026",
        "submittedOnDate": "10 September 2026",
        **_FORMAT,
    },
    ("/loans/11", "approve"): {"approvedOnDate": "10 September 2026", **_FORMAT},
    ("/loans/11", "disburse"): {"actualDisbursementDate": "10 September 2026", **_FORMAT},
    ("/loans/3/transactions", "repayment"): {
        "transactionDate": "10 September 2026",
        "transactionAmount": 12.5,
        "paymentTypeId": 1,
        **_FORMAT,
    },
    ("/businessdate", ""): {"type": "BUSINESS_DATE", "date": "11 September 2026", **_FORMAT},
}


@settings(max_examples=300, deadline=None)
@given(
    target=st.sampled_from(sorted(_VALID)),
    changes=st.dictionaries(st.sampled_from(_KEYS), _values, min_size=1, max_size=3),
    approve_first=st.booleans(),
)
def test_mutating_a_valid_command_never_produces_a_server_error(target, changes, approve_first):
    path, command = target
    body = {**_VALID[target], **changes}
    twin = _SEEDED.clone()
    with client_for(twin) as client:
        client.submit_loan(
            client_id=1,
            product_id=1,
            principal_cents=5_000,
            installments=2,
            submitted_on=TODAY,
            expected_disbursement_on=TODAY,
        )
        if approve_first:
            client.approve_loan(11, on=TODAY)
        params = {"command": command} if command else None
        try:
            answer = client.request("POST", path, params=params, json=body)
        except FineractError as error:
            assert error.status < 500, error.body
            assert error.body.get("userMessageGlobalisationCode")
        else:
            assert isinstance(answer, dict)
        # Whatever happened, the loans still read back cleanly.
        for loan_id in twin.state.loans:
            client.get_loan(loan_id)

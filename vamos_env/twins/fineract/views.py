"""How the twin's records look on Fineract's wire (the ``*Data`` classes' JSON).

Dates are ``[year, month, day]`` arrays; money is a JSON number in major units
(cents / 100: 658.41); enumerations are ``{"id", "code", "value"}`` objects. Fields
Fineract leaves null are left out, as its serializer omits nulls: for instance a
schedule period's ``totalOverdue`` only appears once its due date has passed, and the
disbursement row of ``repaymentSchedule.periods`` (the first one) has no ``period``.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import Any

from vamos_env.twins.fineract.state import (
    ACTIVE,
    APPROVED,
    CLIENT_ACTIVE,
    CLOSED,
    CURRENCIES,
    DISBURSEMENT,
    OVERPAID,
    REPAYMENT,
    STRATEGIES,
    SUBMITTED,
    Client,
    Configuration,
    FineractState,
    Loan,
    LoanProduct,
    LoanTransaction,
    Office,
    PaymentType,
)

USER_FIRSTNAME, USER_LASTNAME = "App", "Administrator"


def day(d: date | None) -> list[int] | None:
    return None if d is None else [d.year, d.month, d.day]


def money(cents: int) -> float:
    return cents / 100


def _compact(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if v is not None}


def _enum(id_: int, code: str, value: str) -> dict[str, Any]:
    return {"id": id_, "code": code, "value": value}


_FREQUENCY = {0: "days", 1: "weeks", 2: "months", 3: "years"}


def period_frequency(kind: str, value: int) -> dict[str, Any]:
    name = _FREQUENCY.get(value, "invalid")
    return _enum(value, f"{kind}.periodFrequencyType.{name}", name.capitalize())


def interest_rate_frequency(value: int) -> dict[str, Any]:
    labels = {
        0: ("days", "Per day"),
        1: ("weeks", "Per week"),
        2: ("months", "Per month"),
        3: ("years", "Per year"),
    }
    name, label = labels.get(value, ("whole_term", "Whole term"))
    return _enum(value, f"interestRateFrequency.periodFrequencyType.{name}", label)


def amortization(value: int) -> dict[str, Any]:
    if value == 0:
        return _enum(0, "amortizationType.equal.principal", "Equal principal payments")
    return _enum(1, "amortizationType.equal.installments", "Equal installments")


def interest_type(value: int) -> dict[str, Any]:
    if value == 0:
        return _enum(0, "interestType.declining.balance", "Declining Balance")
    return _enum(1, "interestType.flat", "Flat")


def interest_calculation(value: int) -> dict[str, Any]:
    if value == 0:
        return _enum(0, "interestCalculationPeriodType.daily", "Daily")
    return _enum(
        1, "interestCalculationPeriodType.same.as.repayment.period", "Same as repayment period"
    )


def days_in_month(value: int) -> dict[str, Any]:
    if value == 30:
        return _enum(30, "DaysInMonthType.days30", "30 Days")
    return _enum(1, "DaysInMonthType.actual", "Actual")


def days_in_year(value: int) -> dict[str, Any]:
    if value == 1:
        return _enum(1, "DaysInYearType.actual", "Actual")
    return _enum(value, f"DaysInYearType.days{value}", f"{value} Days")


def accounting_rule(value: int) -> dict[str, Any]:
    names = {
        1: ("none", "NONE"),
        2: ("cash", "CASH BASED"),
        3: ("accrual.periodic", "ACCRUAL PERIODIC"),
        4: ("accrual.upfront", "ACCRUAL UPFRONT"),
    }
    code, label = names.get(value, ("none", "NONE"))
    return _enum(value, f"accountingRuleType.{code}", label)


_LOAN_STATUS = {
    SUBMITTED: ("loanStatusType.submitted.and.pending.approval", "Submitted and pending approval"),
    APPROVED: ("loanStatusType.approved", "Approved"),
    ACTIVE: ("loanStatusType.active", "Active"),
    CLOSED: ("loanStatusType.closed.obligations.met", "Closed (obligations met)"),
    OVERPAID: ("loanStatusType.overpaid", "Overpaid"),
}


def loan_status(status_id: int) -> dict[str, Any]:
    code, value = _LOAN_STATUS[status_id]
    return {
        "id": status_id,
        "code": code,
        "value": value,
        "pendingApproval": status_id == SUBMITTED,
        "waitingForDisbursal": status_id == APPROVED,
        "active": status_id == ACTIVE,
        "closedObligationsMet": status_id == CLOSED,
        "closedWrittenOff": False,
        "closedRescheduled": False,
        "closed": status_id == CLOSED,
        "overpaid": status_id == OVERPAID,
    }


def client_status(status_id: int) -> dict[str, Any]:
    if status_id == CLIENT_ACTIVE:
        return _enum(CLIENT_ACTIVE, "clientStatusType.active", "Active")
    return _enum(status_id, "clientStatusType.pending", "Pending")


def legal_form(value: int) -> dict[str, Any]:
    if value == 2:
        return _enum(2, "legalFormType.entity", "Entity")
    return _enum(1, "legalFormType.person", "Person")


def currency(code: str, digits: int = 2, multiple: int = 0) -> dict[str, Any]:
    name, symbol = CURRENCIES.get(code, (code, code))
    return _compact(
        {
            "code": code,
            "name": name,
            "decimalPlaces": digits,
            "inMultiplesOf": multiple or None,
            "displaySymbol": symbol,
            "nameCode": f"currency.{code}",
            "displayLabel": f"{name} ({symbol})",
        }
    )


def office(record: Office) -> dict[str, Any]:
    return {
        "id": record.id,
        "name": record.name,
        "nameDecorated": record.name,
        "externalId": record.external_id,
        "openingDate": day(record.opening_date),
        "hierarchy": record.hierarchy,
    }


def payment_type(record: PaymentType) -> dict[str, Any]:
    return {
        "id": record.id,
        "name": record.name,
        "description": record.description,
        "isCashPayment": record.is_cash_payment,
        "position": record.position,
        "isSystemDefined": False,
    }


def configuration(record: Configuration) -> dict[str, Any]:
    return {
        "name": record.name,
        "enabled": record.enabled,
        "value": 0,
        "id": record.id,
        "description": record.description,
        "trapDoor": False,
    }


def business_dates(state: FineractState) -> list[dict[str, Any]]:
    return [
        {"description": "Business Date", "type": "BUSINESS_DATE", "date": day(state.business_date)},
        {"description": "Close of Business Date", "type": "COB_DATE", "date": day(state.cob_date)},
    ]


def client(state: FineractState, record: Client) -> dict[str, Any]:
    home = state.offices.get(record.office_id)
    timeline = _compact(
        {
            "submittedOnDate": day(record.submitted_on),
            "submittedByUsername": record.submitted_by,
            "submittedByFirstname": USER_FIRSTNAME,
            "submittedByLastname": USER_LASTNAME,
            "activatedOnDate": day(record.activation_date),
            "activatedByUsername": record.submitted_by if record.activation_date else None,
            "activatedByFirstname": USER_FIRSTNAME if record.activation_date else None,
            "activatedByLastname": USER_LASTNAME if record.activation_date else None,
        }
    )
    return _compact(
        {
            "id": record.id,
            "accountNo": record.account_no,
            "externalId": record.external_id,
            "status": client_status(record.status_id),
            "active": record.status_id == CLIENT_ACTIVE,
            "activationDate": day(record.activation_date),
            "firstname": record.firstname,
            "middlename": record.middlename,
            "lastname": record.lastname,
            "fullname": record.fullname,
            "displayName": record.display_name,
            "mobileNo": record.mobile_no,
            "emailAddress": record.email_address,
            "isStaff": False,
            "officeId": record.office_id,
            "officeName": home.name if home else None,
            "timeline": timeline,
            "legalForm": legal_form(record.legal_form_id),
            "groups": [],
        }
    )


def product(record: LoanProduct) -> dict[str, Any]:
    return _compact(
        {
            "id": record.id,
            "name": record.name,
            "shortName": record.short_name,
            "description": record.description,
            "externalId": record.external_id,
            "includeInBorrowerCycle": False,
            "useBorrowerCycle": False,
            "status": "loanProduct.active",
            "currency": currency(
                record.currency_code, record.digits_after_decimal, record.in_multiples_of
            ),
            "principal": None if record.principal_cents is None else money(record.principal_cents),
            "minPrincipal": None
            if record.min_principal_cents is None
            else money(record.min_principal_cents),
            "maxPrincipal": None
            if record.max_principal_cents is None
            else money(record.max_principal_cents),
            "numberOfRepayments": record.number_of_repayments,
            "minNumberOfRepayments": record.min_number_of_repayments,
            "maxNumberOfRepayments": record.max_number_of_repayments,
            "repaymentEvery": record.repayment_every,
            "repaymentFrequencyType": period_frequency(
                "repaymentFrequency", record.repayment_frequency_type
            ),
            "interestRatePerPeriod": float(record.interest_rate_per_period),
            "interestRateFrequencyType": interest_rate_frequency(
                record.interest_rate_frequency_type
            ),
            "annualInterestRate": 0.0,
            "isLinkedToFloatingInterestRates": False,
            "amortizationType": amortization(record.amortization_type),
            "interestType": interest_type(record.interest_type),
            "interestCalculationPeriodType": interest_calculation(
                record.interest_calculation_period_type
            ),
            "allowPartialPeriodInterestCalcualtion": False,
            "inArrearsTolerance": money(record.in_arrears_tolerance_cents),
            "transactionProcessingStrategyCode": record.strategy_code,
            "transactionProcessingStrategyName": STRATEGIES.get(record.strategy_code),
            "installmentAmountInMultiplesOf": record.installment_multiple or None,
            "daysInMonthType": days_in_month(record.days_in_month_type),
            "daysInYearType": days_in_year(record.days_in_year_type),
            "isInterestRecalculationEnabled": False,
            "accountingRule": accounting_rule(record.accounting_rule),
            "multiDisburseLoan": False,
            "canDefineInstallmentAmount": False,
            "isEqualAmortization": False,
        }
    )


_OTHER_TRANSACTION_FLAGS_TEXT = """
    merchantIssuedRefund payoutRefund goodwillCredit chargeRefund contra waiveInterest
    waiveCharges accrual writeOff recoveryRepayment initiateTransfer approveTransfer
    withdrawTransfer rejectTransfer chargePayment refund refundForActiveLoans
    creditBalanceRefund chargeAdjustment chargeback chargeoff downPayment reAge reAmortize
"""
_OTHER_TRANSACTION_FLAGS = tuple(_OTHER_TRANSACTION_FLAGS_TEXT.split())


def _transaction_type(type_id: int) -> dict[str, Any]:
    disbursement = type_id == DISBURSEMENT
    repayment = type_id == REPAYMENT
    code = "loanTransactionType.disbursement" if disbursement else "loanTransactionType.repayment"
    out: dict[str, Any] = {
        "id": type_id,
        "code": code,
        "value": "Disbursement" if disbursement else "Repayment",
        "disbursement": disbursement,
        "repaymentAtDisbursement": False,
        "repayment": repayment,
    }
    for flag in _OTHER_TRANSACTION_FLAGS:
        out[flag] = False
    return out


def transaction(
    state: FineractState, loan: Loan, record: LoanTransaction, money_of: dict[str, Any]
) -> dict[str, Any]:
    head = state.offices[1]
    payment = state.payment_types.get(record.payment_type_id) if record.payment_type_id else None
    return _compact(
        {
            "id": record.id,
            "officeId": head.id,
            "officeName": head.name,
            "type": _transaction_type(record.type_id),
            "date": day(record.on),
            "currency": money_of,
            "paymentDetailData": (
                {"id": record.id, "paymentType": {"id": payment.id, "name": payment.name}}
                if payment
                else None
            ),
            "amount": money(record.amount_cents),
            "netDisbursalAmount": money(record.amount_cents)
            if record.type_id == DISBURSEMENT
            else None,
            "principalPortion": money(record.principal_cents),
            "interestPortion": 0.0,
            "feeChargesPortion": 0.0,
            "penaltyChargesPortion": 0.0,
            "overpaymentPortion": money(record.overpayment_cents),
            "unrecognizedIncomePortion": 0.0,
            "outstandingLoanBalance": money(record.outstanding_after_cents),
            "submittedOnDate": day(record.submitted_on),
            "manuallyReversed": False,
            "externalId": record.external_id,
            "loanId": loan.id,
            "loanChargePaidByList": [],
            "numberOfRepayments": 0,
        }
    )


def _schedule(state: FineractState, loan: Loan, money_of: dict[str, Any]) -> dict[str, Any]:
    today = state.today
    principal = loan.disbursed_cents if loan.disbursed else loan.approved_principal_cents
    start = loan.disbursed_on or loan.expected_disbursement
    zero = 0.0
    disbursement_row: dict[str, Any] = {
        "dueDate": day(start),
        "principalDisbursed": money(principal),
        "principalLoanBalanceOutstanding": money(principal),
        "feeChargesDue": zero,
        "totalOriginalDueForPeriod": zero,
        "totalDueForPeriod": zero,
        "totalActualCostOfLoanForPeriod": zero,
        "totalCredits": zero,
        "totalAccruedInterest": zero,
        "downPaymentPeriod": False,
    }
    if loan.disbursed:
        disbursement_row["feeChargesPaid"] = zero
        disbursement_row["totalPaidForPeriod"] = zero
    else:
        disbursement_row["feeChargesOutstanding"] = zero
        disbursement_row["totalOutstandingForPeriod"] = zero
        if start < today:
            disbursement_row["totalOverdue"] = zero
    periods = [disbursement_row]
    balance = principal
    paid_total = advance_total = late_total = 0
    for row in loan.installments:
        balance -= row.principal_cents
        outstanding = row.outstanding_cents
        paid_total += row.paid_cents
        advance_total += row.paid_in_advance_cents
        late_total += row.paid_late_cents
        period = {
            "period": row.number,
            "fromDate": day(row.from_date),
            "dueDate": day(row.due_date),
            "obligationsMetOnDate": day(row.obligations_met_on) if row.complete else None,
            "complete": row.complete,
            "daysInPeriod": (row.due_date - row.from_date).days,
            "principalOriginalDue": money(row.principal_cents),
            "principalDue": money(row.principal_cents),
            "principalPaid": money(row.paid_cents),
            "principalWrittenOff": zero,
            "principalOutstanding": money(outstanding),
            "principalLoanBalanceOutstanding": money(balance),
            "interestOriginalDue": zero,
            "interestDue": zero,
            "interestPaid": zero,
            "interestWaived": zero,
            "interestWrittenOff": zero,
            "interestOutstanding": zero,
            "feeChargesDue": zero,
            "feeChargesPaid": zero,
            "feeChargesWaived": zero,
            "feeChargesWrittenOff": zero,
            "feeChargesOutstanding": zero,
            "penaltyChargesDue": zero,
            "penaltyChargesPaid": zero,
            "penaltyChargesWaived": zero,
            "penaltyChargesWrittenOff": zero,
            "penaltyChargesOutstanding": zero,
            "totalOriginalDueForPeriod": money(row.principal_cents),
            "totalDueForPeriod": money(row.principal_cents),
            "totalPaidForPeriod": money(row.paid_cents),
            "totalPaidInAdvanceForPeriod": money(row.paid_in_advance_cents),
            "totalPaidLateForPeriod": money(row.paid_late_cents),
            "totalWaivedForPeriod": zero,
            "totalWrittenOffForPeriod": zero,
            "totalOutstandingForPeriod": money(outstanding),
            "totalOverdue": money(outstanding) if row.due_date < today else None,
            "totalActualCostOfLoanForPeriod": zero,
            "totalInstallmentAmountForPeriod": money(row.principal_cents),
            "totalCredits": zero,
            "totalAccruedInterest": zero,
            "downPaymentPeriod": False,
        }
        periods.append(_compact(period))
    expected = sum(i.principal_cents for i in loan.installments)
    last_due = loan.maturity_date or start
    return {
        "currency": money_of,
        "loanTermInDays": (last_due - start).days,
        "totalPrincipalDisbursed": money(principal),
        "totalPrincipalExpected": money(expected),
        "totalPrincipalPaid": money(paid_total),
        "totalInterestCharged": zero,
        "totalFeeChargesCharged": zero,
        "totalPenaltyChargesCharged": zero,
        "totalWaived": zero,
        "totalWrittenOff": zero,
        "totalRepaymentExpected": money(expected),
        "totalRepayment": money(paid_total),
        "totalPaidInAdvance": money(advance_total),
        "totalPaidLate": money(late_total),
        "totalOutstanding": money(expected - paid_total),
        "totalCredits": zero,
        "periods": periods,
    }


def _summary(state: FineractState, loan: Loan, money_of: dict[str, Any]) -> dict[str, Any]:
    today = state.today
    paid = loan.principal_paid_cents
    outstanding = loan.principal_outstanding_cents
    overdue_rows = [i for i in loan.installments if i.due_date < today and i.outstanding_cents > 0]
    overdue = sum(i.outstanding_cents for i in overdue_rows)
    zero = 0.0
    repaid = sum(t.amount_cents for t in loan.transactions if t.type_id == REPAYMENT)
    return _compact(
        {
            "currency": money_of,
            "principalDisbursed": money(loan.disbursed_cents),
            "principalAdjustments": zero,
            "principalPaid": money(paid),
            "principalWrittenOff": zero,
            "principalOutstanding": money(outstanding),
            "principalOverdue": money(overdue),
            "interestCharged": zero,
            "interestPaid": zero,
            "interestWaived": zero,
            "interestWrittenOff": zero,
            "interestOutstanding": zero,
            "interestOverdue": zero,
            "feeChargesCharged": zero,
            "feeAdjustments": zero,
            "feeChargesDueAtDisbursementCharged": zero,
            "feeChargesPaid": zero,
            "feeChargesWaived": zero,
            "feeChargesWrittenOff": zero,
            "feeChargesOutstanding": zero,
            "feeChargesOverdue": zero,
            "penaltyChargesCharged": zero,
            "penaltyAdjustments": zero,
            "penaltyChargesPaid": zero,
            "penaltyChargesWaived": zero,
            "penaltyChargesWrittenOff": zero,
            "penaltyChargesOutstanding": zero,
            "penaltyChargesOverdue": zero,
            "totalExpectedRepayment": money(sum(i.principal_cents for i in loan.installments)),
            "totalRepayment": money(paid),
            "totalExpectedCostOfLoan": zero,
            "totalCostOfLoan": zero,
            "totalWaived": zero,
            "totalWrittenOff": zero,
            "totalOutstanding": money(outstanding),
            "totalOverdue": money(overdue),
            "totalRecovered": zero,
            "overdueSinceDate": day(min(i.due_date for i in overdue_rows))
            if overdue_rows
            else None,
            "totalRepaymentTransaction": money(repaid),
            "totalRepaymentTransactionReversed": zero,
        }
    )


def loan(state: FineractState, record: Loan, associations: Collection[str] = ()) -> dict[str, Any]:
    owner = state.clients.get(record.client_id)
    plan = state.products.get(record.product_id)
    money_of = currency(
        plan.currency_code if plan else "USD",
        plan.digits_after_decimal if plan else 2,
        plan.in_multiples_of if plan else 0,
    )
    timeline = _compact(
        {
            "submittedOnDate": day(record.submitted_on),
            "submittedByUsername": record.submitted_by,
            "submittedByFirstname": USER_FIRSTNAME,
            "submittedByLastname": USER_LASTNAME,
            "approvedOnDate": day(record.approved_on),
            "approvedByUsername": record.approved_by,
            "approvedByFirstname": USER_FIRSTNAME if record.approved_by else None,
            "approvedByLastname": USER_LASTNAME if record.approved_by else None,
            "expectedDisbursementDate": day(record.expected_disbursement),
            "actualDisbursementDate": day(record.disbursed_on),
            "disbursedByUsername": record.disbursed_by,
            "disbursedByFirstname": USER_FIRSTNAME if record.disbursed_by else None,
            "disbursedByLastname": USER_LASTNAME if record.disbursed_by else None,
            "expectedMaturityDate": day(record.maturity_date),
            "closedOnDate": day(record.closed_on),
            "actualMaturityDate": day(record.closed_on),
        }
    )
    overdue = record.disbursed and any(
        i.due_date < state.today and i.outstanding_cents > 0 for i in record.installments
    )
    payload: dict[str, Any] = {
        "id": record.id,
        "accountNo": record.account_no,
        "externalId": record.external_id,
        "status": loan_status(record.status_id),
        "clientId": record.client_id,
        "clientAccountNo": owner.account_no if owner else None,
        "clientName": owner.display_name if owner else None,
        "clientExternalId": owner.external_id if owner else None,
        "clientOfficeId": owner.office_id if owner else None,
        "loanProductId": record.product_id,
        "loanProductName": plan.name if plan else None,
        "loanProductDescription": plan.description if plan else None,
        "isLoanProductLinkedToFloatingRate": False,
        "loanType": _enum(1, "accountType.individual", "Individual"),
        "currency": money_of,
        "principal": money(
            record.disbursed_cents if record.disbursed else record.approved_principal_cents
        ),
        "approvedPrincipal": money(record.approved_principal_cents),
        "proposedPrincipal": money(record.proposed_principal_cents),
        "netDisbursalAmount": money(
            record.disbursed_cents if record.disbursed else record.approved_principal_cents
        ),
        "termFrequency": record.term_frequency,
        "termPeriodFrequencyType": period_frequency("termFrequency", record.term_frequency_type),
        "numberOfRepayments": record.number_of_repayments,
        "repaymentEvery": record.repayment_every,
        "repaymentFrequencyType": period_frequency(
            "repaymentFrequency", record.repayment_frequency_type
        ),
        "interestRatePerPeriod": float(record.interest_rate_per_period),
        "interestRateFrequencyType": interest_rate_frequency(record.interest_rate_frequency_type),
        "annualInterestRate": 0.0,
        "isFloatingInterestRate": False,
        "amortizationType": amortization(record.amortization_type),
        "interestType": interest_type(record.interest_type),
        "interestCalculationPeriodType": interest_calculation(
            record.interest_calculation_period_type
        ),
        "allowPartialPeriodInterestCalcualtion": False,
        "transactionProcessingStrategyCode": record.strategy_code,
        "transactionProcessingStrategyName": STRATEGIES.get(record.strategy_code),
        "syncDisbursementWithMeeting": False,
        "timeline": timeline,
        "summary": _summary(state, record, money_of) if record.status_id >= ACTIVE else None,
        "feeChargesAtDisbursementCharged": 0.0,
        "loanProductCounter": 1,
        "multiDisburseLoan": False,
        "canDefineInstallmentAmount": False,
        "canDisburse": record.status_id == APPROVED,
        "canUseForTopup": False,
        "isTopup": False,
        "inArrears": overdue,
        "isNPA": False,
        "daysInMonthType": days_in_month(plan.days_in_month_type if plan else 1),
        "daysInYearType": days_in_year(plan.days_in_year_type if plan else 1),
        "isInterestRecalculationEnabled": False,
        "createStandingInstructionAtDisbursement": False,
        "isVariableInstallmentsAllowed": False,
        "isEqualAmortization": False,
        "isRatesEnabled": False,
        "fraud": False,
        "totalOverpaid": money(record.overpaid_cents) if record.overpaid_cents else None,
        "overpaidOnDate": day(record.overpaid_on),
        "chargedOff": False,
        "enableDownPayment": False,
        "enableInstallmentLevelDelinquency": False,
    }
    wanted = set(associations)
    if "all" in wanted:
        wanted |= {"repaymentSchedule", "transactions"}
    if "repaymentSchedule" in wanted:
        payload["repaymentSchedule"] = _schedule(state, record, money_of)
    if "transactions" in wanted:
        ordered = sorted(record.transactions, key=lambda t: (t.on, t.id))
        payload["transactions"] = [transaction(state, record, t, money_of) for t in ordered]
    return _compact(payload)

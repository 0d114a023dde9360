"""Fineract's REST surface under ``/fineract-provider/api/v1``, over a ``FineractState``.

Every request passes Fineract's filter first: the tenant (``Fineract-Platform-TenantId``
header, else the ``tenantIdentifier`` query parameter; missing or unknown -> 400 from the
servlet filter) and HTTP Basic credentials (-> 401 ``error.msg.not.authenticated``).
Then the route parses the command body as Fineract's validators do (``request_body``),
collects per-parameter errors, and hands typed values to the state.

No input may escape as a traceback: Fineract's own failures become their JSON shapes
(``errors.FineractProblem``) and anything unexpected becomes Fineract's 500 body.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any
from urllib.parse import parse_qs, unquote

from vamos_env import clock
from vamos_env.twins.fineract import views
from vamos_env.twins.fineract.checks import ParameterChecks
from vamos_env.twins.fineract.errors import (
    ApiParameterError,
    DomainRuleProblem,
    FineractProblem,
    NotFoundProblem,
    RouteProblem,
    UnauthenticatedProblem,
    UnrecognizedQueryParamProblem,
    ValidationProblem,
    general,
    mandatory,
)
from vamos_env.twins.fineract.request_body import RequestBody
from vamos_env.twins.fineract.state import (
    CURRENCIES,
    MAX_INSTALMENTS,
    FineractState,
    LoanProduct,
)
from vamos_env.twins.http import Request, Response, json_response

API_ROOT = "/fineract-provider/api/v1"
TENANT_HEADER = "Fineract-Platform-TenantId"
_REALM = {"www-authenticate": 'Basic realm="Fineract Platform API"'}

_CLIENT_PARAMETERS_TEXT = """
    familyMembers address locale dateFormat groupId accountNo externalId mobileNo
    emailAddress firstname middlename lastname fullname officeId active activationDate
    staffId submittedOnDate savingsProductId dateOfBirth genderId clientTypeId
    clientClassificationId clientNonPersonDetails displayname legalFormId datatables isStaff
"""
CLIENT_PARAMETERS = frozenset(_CLIENT_PARAMETERS_TEXT.split())
_PRODUCT_PARAMETERS_TEXT = """
    locale dateFormat name description fundId currencyCode digitsAfterDecimal inMultiplesOf
    principal minPrincipal maxPrincipal repaymentEvery numberOfRepayments
    minNumberOfRepayments maxNumberOfRepayments repaymentFrequencyType interestRatePerPeriod
    minInterestRatePerPeriod maxInterestRatePerPeriod interestRateFrequencyType
    amortizationType interestType interestCalculationPeriodType
    allowPartialPeriodInterestCalcualtion inArrearsTolerance
    transactionProcessingStrategyCode paymentAllocation creditAllocation
    graceOnPrincipalPayment recurringMoratoriumOnPrincipalPeriods graceOnInterestPayment
    graceOnInterestCharged charges accountingRule includeInBorrowerCycle startDate closeDate
    externalId isLinkedToFloatingInterestRates floatingRatesId interestRateDifferential
    minDifferentialLendingRate defaultDifferentialLendingRate maxDifferentialLendingRate
    isFloatingInterestRateCalculationAllowed syncExpectedWithDisbursementDate
    receivableFeeAccountId fundSourceAccountId incomeFromFeeAccountId
    incomeFromPenaltyAccountId interestOnLoanAccountId receivableInterestAccountId
    loanPortfolioAccountId overpaymentLiabilityAccountId transfersInSuspenseAccountId
    writeOffAccountId goodwillCreditAccountId receivablePenaltyAccountId
    paymentChannelToFundSourceMappings feeToIncomeAccountMappings
    incomeFromRecoveryAccountId penaltyToIncomeAccountMappings
    chargeOffFraudExpenseAccountId chargeOffExpenseAccountId
    incomeFromChargeOffFeesAccountId incomeFromChargeOffInterestAccountId
    incomeFromChargeOffPenaltyAccountId incomeFromGoodwillCreditInterestAccountId
    incomeFromGoodwillCreditFeesAccountId incomeFromGoodwillCreditPenaltyAccountId
    useBorrowerCycle principalVariationsForBorrowerCycle
    interestRateVariationsForBorrowerCycle numberOfRepaymentVariationsForBorrowerCycle
    shortName multiDisburseLoan outstandingLoanBalance maxTrancheCount graceOnArrearsAgeing
    overdueDaysForNPA isInterestRecalculationEnabled daysInYearType daysInMonthType
    rescheduleStrategyMethod interestRecalculationCompoundingMethod
    recalculationRestFrequencyInterval recalculationRestFrequencyType
    recalculationCompoundingFrequencyInterval recalculationCompoundingFrequencyType
    isArrearsBasedOnOriginalSchedule minimumDaysBetweenDisbursalAndFirstRepayment
    mandatoryGuarantee holdGuaranteeFunds minimumGuaranteeFromGuarantor
    minimumGuaranteeFromOwnFunds principalThresholdForLastInstallment
    accountMovesOutOfNPAOnlyOnArrearsCompletion canDefineInstallmentAmount
    installmentAmountInMultiplesOf preClosureInterestCalculationStrategy
    allowAttributeOverrides allowVariableInstallments minimumGap maximumGap
    recalculationCompoundingFrequencyDayOfWeekType
    recalculationCompoundingFrequencyNthDayType recalculationCompoundingFrequencyOnDayType
    recalculationRestFrequencyDayOfWeekType recalculationRestFrequencyNthDayType
    recalculationRestFrequencyOnDayType isCompoundingToBePostedAsTransaction
    allowCompoundingOnEod canUseForTopup isEqualAmortization rates
    fixedPrincipalPercentagePerInstallment disallowExpectedDisbursements
    allowApprovedDisbursedAmountsOverApplied overAppliedCalculationType overAppliedNumber
    delinquencyBucketId dueDaysForRepaymentEvent overDueDaysForRepaymentEvent
    enableDownPayment disbursedAmountPercentageForDownPayment
    enableAutoRepaymentForDownPayment repaymentStartDateType
    enableInstallmentLevelDelinquency loanScheduleType loanScheduleProcessingType
    fixedLength enableAccrualActivityPosting supportedInterestRefundTypes
"""
PRODUCT_PARAMETERS = frozenset(_PRODUCT_PARAMETERS_TEXT.split())
_LOAN_PARAMETERS_TEXT = """
    dateFormat locale id clientId groupId loanType productId principal totalLoan
    isParentAccount loanTermFrequency loanTermFrequencyType numberOfRepayments
    repaymentEvery repaymentFrequencyType repaymentFrequencyNthDayType
    repaymentFrequencyDayOfWeekType interestRatePerPeriod amortizationType
    amortizationTypeOptions interestType isFloatingInterestRate interestRateDifferential
    interestCalculationPeriodType allowPartialPeriodInterestCalcualtion
    interestRateFrequencyType expectedDisbursementDate repaymentsStartingFromDate
    graceOnPrincipalPayment graceOnInterestPayment graceOnInterestCharged
    interestChargedFromDate submittedOnDate submittedOnNote accountNo externalId fundId
    loanOfficerId loanPurposeId inArrearsTolerance charges collateral
    transactionProcessingStrategyCode calendarId syncDisbursementWithMeeting linkAccountId
    disbursementData fixedEmiAmount maxOutstandingLoanBalance graceOnArrearsAgeing
    createStandingInstructionAtDisbursement isTopup loanIdToClose datatables
    isEqualAmortization rates applicationId lastApplication daysInYearType
    fixedPrincipalPercentagePerInstallment disallowExpectedDisbursements fraud
    loanScheduleProcessingType fixedLength enableInstallmentLevelDelinquency
    enableDownPayment enableAutoRepaymentForDownPayment
    disbursedAmountPercentageForDownPayment
"""
LOAN_PARAMETERS = frozenset(_LOAN_PARAMETERS_TEXT.split())
_APPROVE_PARAMETERS_TEXT = """
    loanId approvedLoanAmount approvedOnDate netDisbursalAmount note locale dateFormat
    disbursementData expectedDisbursementDate
"""
APPROVE_PARAMETERS = frozenset(_APPROVE_PARAMETERS_TEXT.split())
_DISBURSE_PARAMETERS_TEXT = """
    actualDisbursementDate externalId note locale dateFormat paymentTypeId accountNumber
    checkNumber routingCode receiptNumber bankNumber adjustRepaymentDate transactionAmount
    fixedEmiAmount postDatedChecks netDisbursalAmount
"""
DISBURSE_PARAMETERS = frozenset(_DISBURSE_PARAMETERS_TEXT.split())
_REPAYMENT_PARAMETERS_TEXT = """
    transactionDate transactionAmount externalId note locale dateFormat paymentTypeId
    accountNumber checkNumber routingCode receiptNumber bankNumber loanId
"""
REPAYMENT_PARAMETERS = frozenset(_REPAYMENT_PARAMETERS_TEXT.split())
PAYMENT_DETAILS = ("accountNumber", "checkNumber", "routingCode", "receiptNumber", "bankNumber")
_STATE_COMMANDS_TEXT = """
    reject withdrawnByApplicant approve disburse disburseToSavings
    disburseWithoutAutoDownPayment undoapproval undodisbursal undolastdisbursal
    assignloanofficer unassignloanofficer recoverGuarantees assigndelinquency
"""
STATE_COMMANDS = frozenset(_STATE_COMMANDS_TEXT.split())
_TRANSACTION_COMMANDS_TEXT = """
    repayment merchantIssuedRefund payoutRefund goodwillCredit chargeRefund
    interestPaymentWaiver waiveinterest writeoff close-rescheduled close undowriteoff
    recoverypayment refundByCash foreclosure creditBalanceRefund chargeOff undoChargeOff
    downPayment reAge undoReAge reAmortize undoReAmortize
"""
TRANSACTION_COMMANDS = frozenset(_TRANSACTION_COMMANDS_TEXT.split())


@dataclass(frozen=True, slots=True)
class Call:
    """One authenticated request, as the handlers see it."""

    state: FineractState
    user: str
    query: Mapping[str, str]
    body: bytes
    ids: tuple[int, ...] = ()
    name: str = ""

    def command_body(self) -> RequestBody:
        return RequestBody(self.body)


Handler = Callable[[Call], tuple[int, Any]]


def _cents(amount: Decimal) -> int:
    """Major units to cents, rounded to the currency's 2 digits as ``Money.of`` does."""
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _unsupported_command(command: str) -> DomainRuleProblem:
    return DomainRuleProblem(
        "error.msg.twin.feature.not.supported",
        f"This Fineract twin does not model the command {command}.",
        command,
    )


# -- business date, configuration, offices, payment types -------------------------------


def list_business_dates(call: Call) -> tuple[int, Any]:
    return 200, views.business_dates(call.state)


def get_business_date(call: Call) -> tuple[int, Any]:
    for row in views.business_dates(call.state):
        if row["type"] == call.name:
            return 200, row
    raise NotFoundProblem(
        "error.msg.businessdate.type.not.exist",
        f"Business date with type `{call.name}` does not exist.",
        call.name,
    )


def update_business_date(call: Call) -> tuple[int, Any]:
    body = call.command_body()
    body.check_supported(("type", "date", "dateFormat", "locale"))
    checks = ParameterChecks("businessdate.update")
    kind = body.string("type")
    checks.not_blank("type", kind)
    checks.not_blank("locale", body.string("locale"))
    checks.not_blank("dateFormat", body.string("dateFormat"))
    checks.not_blank("date", body.string("date"))
    checks.raise_if_any()
    assert kind is not None
    if kind not in ("BUSINESS_DATE", "COB_DATE"):
        checks.fail("type", f"Invalid Business Type value: `{kind}`")
        checks.raise_if_any()
    new_date = body.local_date("date")
    checks.not_null("date", new_date)
    checks.raise_if_any()
    assert new_date is not None
    changes = call.state.set_business_date(kind, new_date)
    return 200, {"changes": {k: views.day(v) for k, v in changes.items()}}


def list_configurations(call: Call) -> tuple[int, Any]:
    return 200, {
        "globalConfiguration": [views.configuration(c) for c in call.state.configurations.values()]
    }


def get_configuration(call: Call) -> tuple[int, Any]:
    return 200, views.configuration(call.state.configuration(call.name))


def list_offices(call: Call) -> tuple[int, Any]:
    return 200, [views.office(o) for o in call.state.offices.values()]


def get_office(call: Call) -> tuple[int, Any]:
    return 200, views.office(call.state.office(call.ids[0]))


def list_payment_types(call: Call) -> tuple[int, Any]:
    return 200, [views.payment_type(p) for p in call.state.payment_types.values()]


def get_payment_type(call: Call) -> tuple[int, Any]:
    return 200, views.payment_type(call.state.payment_type(call.ids[0]))


# -- clients -----------------------------------------------------------------------------


def _name_checks(body: RequestBody, checks: ParameterChecks) -> None:
    """The four name cases of ``ClientDataValidator.validateForCreate``."""
    parts = ("firstname", "middlename", "lastname")
    full_given = body.string("fullname") is not None
    parts_given = any(body.string(p) is not None for p in parts)
    full_passed = body.has("fullname")
    parts_passed = any(body.has(p) for p in parts)

    def require_parts() -> None:
        first, middle, last = (body.string(p) for p in parts)
        if checks.not_blank("firstname", first):
            checks.max_length("firstname", first, 50)
        checks.max_length("middlename", middle, 50)
        if checks.not_blank("lastname", last):
            checks.max_length("lastname", last, 50)

    def require_full() -> None:
        full = body.string("fullname")
        if checks.not_blank("fullname", full):
            checks.max_length("fullname", full, 160)

    if full_given or parts_given:
        if full_given and not parts_given:
            require_full()
        elif parts_given and not full_given:
            require_parts()
        else:
            for part in parts:
                given = body.string(part)
                if given is not None:
                    checks.add(
                        ApiParameterError(
                            f"validation.msg.client.fullname.cannot.also.be.provided.when.{part}.is.populated",
                            f"The parameter `fullname` cannot also be provided when `{part}` is "
                            "populated.",
                            "fullname",
                            None,
                            (body.string("fullname"), part, given),
                        )
                    )
    elif full_passed and not parts_passed:
        require_full()
    elif parts_passed and not full_passed:
        require_parts()
    else:
        checks.fail("id", ".no.name.details.passed")


def create_client(call: Call) -> tuple[int, Any]:
    body = call.command_body()
    body.check_supported(CLIENT_PARAMETERS)
    checks = ParameterChecks("client")
    office_id = body.long("officeId")
    if checks.not_null("officeId", office_id):
        checks.greater_than_zero("officeId", office_id)
    if body.has("groupId"):
        group_id = body.long("groupId")
        if checks.not_null("groupId", group_id):
            checks.greater_than_zero("groupId", group_id)
    if body.has("staffId"):
        checks.greater_than_zero("staffId", body.long("staffId"))
    if body.has("accountNo"):
        account_no = body.string("accountNo")
        if checks.not_blank("accountNo", account_no):
            checks.max_length("accountNo", account_no, 20)
    _name_checks(body, checks)
    external_id = body.string("externalId")
    checks.max_length("externalId", external_id, 100)
    mobile_no = body.string("mobileNo")
    checks.max_length("mobileNo", mobile_no, 50)
    active = body.boolean("active")
    activation_date: date | None = None
    if active:
        activation_date = body.local_date("activationDate")
        checks.not_null("activationDate", activation_date)
    submitted_on = None
    if body.has("submittedOnDate"):
        submitted_on = body.local_date("submittedOnDate")
        checks.not_null("submittedOnDate", submitted_on)
    if body.has("dateOfBirth"):
        born = body.local_date("dateOfBirth")
        if checks.not_null("dateOfBirth", born) and born is not None and born > call.state.today:
            checks.add(
                ApiParameterError(
                    "validation.msg.client.dateOfBirth.is.greater.than.date",
                    "The parameter `dateOfBirth` must be less than the provided "
                    f"date{call.state.today.isoformat()}",
                    "dateOfBirth",
                    None,
                    (born, call.state.today),
                )
            )
    for optional in ("genderId", "clientTypeId", "clientClassificationId"):
        if body.has(optional):
            checks.greater_than_zero(optional, body.integer_sans_locale(optional))
    legal_form = body.integer_sans_locale("legalFormId")
    if checks.not_null("legalFormId", legal_form):
        checks.in_range("legalFormId", legal_form, 1, 2)
    checks.raise_if_any()
    assert office_id is not None and legal_form is not None
    if body.has("groupId"):
        group_id = body.long("groupId")
        raise NotFoundProblem(
            "error.msg.group.id.invalid",
            f"Group with identifier {group_id} does not exist",
            group_id,
        )
    if body.has("staffId") and body.long("staffId") is not None:
        staff_id = body.long("staffId")
        raise NotFoundProblem(
            "error.msg.staff.id.invalid",
            f"Staff with identifier {staff_id} does not exist",
            staff_id,
        )
    client = call.state.create_client(
        office_id=office_id,
        firstname=body.string("firstname"),
        middlename=body.string("middlename"),
        lastname=body.string("lastname"),
        fullname=body.string("fullname"),
        external_id=external_id,
        active=bool(active),
        activation_date=activation_date,
        submitted_on=submitted_on,
        legal_form_id=legal_form,
        mobile_no=mobile_no,
        email_address=body.string("emailAddress"),
        by=call.user,
    )
    result: dict[str, Any] = {
        "officeId": client.office_id,
        "clientId": client.id,
        "resourceId": client.id,
    }
    if client.external_id is not None:
        result["resourceExternalId"] = client.external_id
    return 200, result


def _query_int(call: Call, name: str) -> int | None:
    raw = call.query.get(name)
    if raw is None or not raw.strip():
        return None
    if not re.fullmatch(r"[+-]?\d{1,18}", raw.strip()):
        raise ValidationProblem(
            [
                ApiParameterError(
                    "validation.msg.invalid.integer",
                    f"The parameter `{name}` has value: {raw} which is invalid integer.",
                    name,
                    raw,
                    (raw,),
                )
            ]
        )
    return int(raw)


def list_clients(call: Call) -> tuple[int, Any]:
    rows = list(call.state.clients.values())
    external_id = call.query.get("externalId")
    if external_id:
        rows = [c for c in rows if c.external_id == external_id]
    office_id = _query_int(call, "officeId")
    if office_id is not None:
        rows = [c for c in rows if c.office_id == office_id]
    for key, attribute in (
        ("displayName", "display_name"),
        ("firstName", "firstname"),
        ("lastName", "lastname"),
    ):
        wanted = call.query.get(key)
        if wanted:
            rows = [c for c in rows if wanted.lower() in (getattr(c, attribute) or "").lower()]
    total = len(rows)
    offset = _query_int(call, "offset") or 0
    limit = _query_int(call, "limit")
    rows = rows[max(0, offset) :]
    if limit is not None and limit > 0:
        rows = rows[:limit]
    return 200, {
        "totalFilteredRecords": total,
        "pageItems": [views.client(call.state, c) for c in rows],
    }


def get_client(call: Call) -> tuple[int, Any]:
    return 200, views.client(call.state, call.state.client(call.ids[0]))


# -- loan products ---------------------------------------------------------------------


def create_product(call: Call) -> tuple[int, Any]:
    body = call.command_body()
    body.check_supported(PRODUCT_PARAMETERS)
    checks = ParameterChecks("loanproduct")
    name = body.string("name")
    if checks.not_blank("name", name):
        checks.max_length("name", name, 100)
    short_name = body.string("shortName")
    if checks.not_blank("shortName", short_name):
        checks.max_length("shortName", short_name, 4)
    description = body.string("description")
    checks.max_length("description", description, 500)
    code = body.string("currencyCode")
    if checks.not_blank("currencyCode", code):
        checks.max_length("currencyCode", code, 3)
    digits = body.integer("digitsAfterDecimal", locale_required=False)
    if checks.not_null("digitsAfterDecimal", digits):
        checks.in_range("digitsAfterDecimal", digits, 0, 6)
    multiples = body.integer("inMultiplesOf", locale_required=False)
    checks.zero_or_greater("inMultiplesOf", multiples)
    principal = body.decimal("principal")
    checks.greater_than_zero("principal", principal)
    low = body.decimal("minPrincipal")
    checks.greater_than_zero("minPrincipal", low)
    high = body.decimal("maxPrincipal")
    checks.greater_than_zero("maxPrincipal", high)
    if low is not None and high is not None:
        checks.amount_range("maxPrincipal", high, low, None)
    checks.amount_range("principal", principal, low, high)
    repayments = body.integer("numberOfRepayments")
    if checks.not_null("numberOfRepayments", repayments):
        checks.greater_than_zero("numberOfRepayments", repayments)
    fewest = body.integer("minNumberOfRepayments")
    most = body.integer("maxNumberOfRepayments")
    checks.greater_than_zero("minNumberOfRepayments", fewest)
    checks.greater_than_zero("maxNumberOfRepayments", most)
    if repayments is not None and (fewest is not None or most is not None):
        checks.amount_range(
            "numberOfRepayments",
            Decimal(repayments),
            None if fewest is None else Decimal(fewest),
            None if most is None else Decimal(most),
        )
    every = body.integer("repaymentEvery")
    if checks.not_null("repaymentEvery", every):
        checks.greater_than_zero("repaymentEvery", every)
    frequency = body.integer("repaymentFrequencyType", locale_required=False)
    if checks.not_null("repaymentFrequencyType", frequency):
        checks.in_range("repaymentFrequencyType", frequency, 0, 3)
    amortization = body.integer("amortizationType", locale_required=False)
    if checks.not_null("amortizationType", amortization):
        checks.in_range("amortizationType", amortization, 0, 1)
    interest_type = body.integer("interestType", locale_required=False)
    if checks.not_null("interestType", interest_type):
        checks.in_range("interestType", interest_type, 0, 1)
    calculation = body.integer("interestCalculationPeriodType", locale_required=False)
    if checks.not_null("interestCalculationPeriodType", calculation):
        checks.in_range("interestCalculationPeriodType", calculation, 0, 1)
    tolerance = body.decimal("inArrearsTolerance")
    checks.zero_or_greater("inArrearsTolerance", tolerance)
    strategy = body.string("transactionProcessingStrategyCode")
    checks.not_blank("transactionProcessingStrategyCode", strategy)
    year_type = body.integer("daysInYearType", locale_required=False)
    checks.not_null("daysInYearType", year_type)
    checks.one_of("daysInYearType", year_type, (1, 360, 364, 365))
    month_type = body.integer("daysInMonthType", locale_required=False)
    checks.not_null("daysInMonthType", month_type)
    checks.one_of("daysInMonthType", month_type, (1, 30))
    recalculation = body.boolean("isInterestRecalculationEnabled")
    checks.not_null("isInterestRecalculationEnabled", recalculation)
    checks.one_of("isInterestRecalculationEnabled", recalculation, (True, False))
    rate = body.decimal("interestRatePerPeriod")
    if checks.not_null("interestRatePerPeriod", rate):
        checks.zero_or_greater("interestRatePerPeriod", rate)
    rate_frequency = body.integer("interestRateFrequencyType", locale_required=False)
    if checks.not_null("interestRateFrequencyType", rate_frequency):
        checks.in_range("interestRateFrequencyType", rate_frequency, 0, 4)
    instalment_multiple = body.integer("installmentAmountInMultiplesOf")
    checks.greater_than_zero("installmentAmountInMultiplesOf", instalment_multiple)
    accounting = body.integer("accountingRule", locale_required=False)
    if checks.not_null("accountingRule", accounting):
        checks.in_range("accountingRule", accounting, 1, 4)
    checks.raise_if_any()
    assert name and short_name and code and strategy is not None
    assert digits is not None and repayments is not None and every is not None
    assert frequency is not None and amortization is not None and interest_type is not None
    assert calculation is not None and year_type is not None and month_type is not None
    assert rate is not None and rate_frequency is not None and accounting is not None
    if accounting != 1:
        raise _twin_limit("accounting rules other than NONE (1)")
    if recalculation:
        raise _twin_limit("interest recalculation")
    if body.boolean("multiDisburseLoan"):
        raise _twin_limit("multi-tranche disbursement")
    if code.upper() != code or code not in CURRENCIES:
        raise NotFoundProblem(
            "error.msg.currency.currencyCode.invalid",
            f"Currency with identifier {code} does not exist",
            code,
        )
    product = call.state.create_product(
        LoanProduct(
            id=0,
            name=name,
            short_name=short_name,
            description=description,
            external_id=body.string("externalId"),
            currency_code=code,
            digits_after_decimal=digits,
            in_multiples_of=multiples or 0,
            installment_multiple=instalment_multiple or 0,
            principal_cents=None if principal is None else _cents(principal),
            min_principal_cents=None if low is None else _cents(low),
            max_principal_cents=None if high is None else _cents(high),
            number_of_repayments=repayments,
            min_number_of_repayments=fewest,
            max_number_of_repayments=most,
            repayment_every=every,
            repayment_frequency_type=frequency,
            interest_rate_per_period=rate,
            interest_rate_frequency_type=rate_frequency,
            amortization_type=amortization,
            interest_type=interest_type,
            interest_calculation_period_type=calculation,
            strategy_code=strategy,
            days_in_year_type=year_type,
            days_in_month_type=month_type,
            accounting_rule=accounting,
            in_arrears_tolerance_cents=0 if tolerance is None else _cents(tolerance),
        )
    )
    return 200, {"resourceId": product.id}


def list_products(call: Call) -> tuple[int, Any]:
    return 200, [views.product(p) for p in call.state.products.values()]


def get_product(call: Call) -> tuple[int, Any]:
    return 200, views.product(call.state.product(call.ids[0]))


def _twin_limit(what: str) -> DomainRuleProblem:
    return DomainRuleProblem(
        "error.msg.twin.feature.not.supported", f"This Fineract twin does not model {what}.", what
    )


# -- loans -----------------------------------------------------------------------------


_LOAN_TYPES = {"individual": 1, "group": 2, "jlg": 3, "glim": 4}


def _submit(call: Call, state: FineractState) -> Any:
    """The shared part of ``POST /loans`` and ``?command=calculateLoanSchedule``."""
    body = call.command_body()
    body.check_supported(LOAN_PARAMETERS)
    product_id = body.long("productId")
    if product_id is None:
        raise ValidationProblem([mandatory("loans", "productId")])
    product = state.product(product_id)
    client_id = body.long("clientId")
    group_id = body.long("groupId")
    if client_id is not None:
        state.client(client_id)
    if group_id is not None:
        raise NotFoundProblem(
            "error.msg.group.id.invalid",
            f"Group with identifier {group_id} does not exist",
            group_id,
        )
    if client_id is None:
        raise ValidationProblem([mandatory("loan", "clientId")])
    checks = ParameterChecks("loan")
    loan_type = body.string("loanType")
    checks.not_null("loanType", loan_type)
    if loan_type is not None:
        kind = _LOAN_TYPES.get(loan_type.lower(), 0)
        checks.in_range("loanType", kind, 1, 4)
        if kind in (2, 3, 4):
            checks.not_null("groupId", group_id)
        checks.greater_than_zero("clientId", client_id)
    checks.greater_than_zero("productId", product_id)
    external_id = body.string("externalId")
    checks.max_length("externalId", external_id, 100)
    term = body.integer("loanTermFrequency")
    if checks.not_null("loanTermFrequency", term):
        checks.greater_than_zero("loanTermFrequency", term)
    term_type = body.integer_sans_locale("loanTermFrequencyType")
    if checks.not_null("loanTermFrequencyType", term_type):
        checks.in_range("loanTermFrequencyType", term_type, 0, 3)
    repayments = body.integer("numberOfRepayments")
    if checks.not_null("numberOfRepayments", repayments):
        checks.greater_than_zero("numberOfRepayments", repayments)
    every = body.integer("repaymentEvery")
    if checks.not_null("repaymentEvery", every):
        checks.greater_than_zero("repaymentEvery", every)
    frequency = body.integer_sans_locale("repaymentFrequencyType")
    if checks.not_null("repaymentFrequencyType", frequency):
        checks.in_range("repaymentFrequencyType", frequency, 0, 3)
    interest_type = body.integer_sans_locale("interestType")
    if checks.not_null("interestType", interest_type):
        checks.in_range("interestType", interest_type, 0, 1)
    calculation = body.integer_sans_locale("interestCalculationPeriodType")
    if checks.not_null("interestCalculationPeriodType", calculation):
        checks.in_range("interestCalculationPeriodType", calculation, 0, 1)
    rate = body.decimal("interestRatePerPeriod")
    if checks.not_null("interestRatePerPeriod", rate):
        checks.zero_or_greater("interestRatePerPeriod", rate)
    amortization = body.integer_sans_locale("amortizationType")
    if checks.not_null("amortizationType", amortization):
        checks.in_range("amortizationType", amortization, 0, 1)
    expected = body.local_date("expectedDisbursementDate")
    checks.not_null("expectedDisbursementDate", expected)
    for grace in (
        "graceOnPrincipalPayment",
        "graceOnInterestPayment",
        "graceOnInterestCharged",
        "graceOnArrearsAgeing",
    ):
        checks.zero_or_greater(grace, body.integer(grace))
    first_due = (
        body.local_date("repaymentsStartingFromDate")
        if body.has("repaymentsStartingFromDate")
        else None
    )
    submitted = body.local_date("submittedOnDate")
    checks.not_null("submittedOnDate", submitted)
    note = body.string("submittedOnNote")
    checks.max_length("submittedOnNote", note, 500)
    strategy = body.string("transactionProcessingStrategyCode")
    checks.not_null("transactionProcessingStrategyCode", strategy)
    # Fineract 1.8's LoanApplicationCommandFromApiJsonHelper: principal notNull().positiveAmount(),
    # then the product's min/max (LoanProductDataValidator.validateMinMaxConstraints).
    principal = body.decimal("principal")
    if checks.not_null("principal", principal):
        checks.greater_than_zero("principal", principal)
        low = (
            None
            if product.min_principal_cents is None
            else Decimal(product.min_principal_cents) / 100
        )
        high = (
            None
            if product.max_principal_cents is None
            else Decimal(product.max_principal_cents) / 100
        )
        checks.amount_range("principal", principal, low, high)
    if repayments is not None and repayments > 0:
        fewest, most = product.min_number_of_repayments, product.max_number_of_repayments
        checks.amount_range(
            "numberOfRepayments",
            Decimal(repayments),
            None if fewest is None else Decimal(fewest),
            None if most is None else Decimal(most),
        )
    checks.raise_if_any()
    assert term is not None and term_type is not None and repayments is not None
    assert every is not None and frequency is not None and interest_type is not None
    assert calculation is not None and rate is not None and amortization is not None
    assert expected is not None and submitted is not None and strategy is not None
    assert principal is not None
    for feature, present in (
        ("charges", bool(body.data.get("charges"))),
        ("collateral", bool(body.data.get("collateral"))),
        ("tranche disbursement data", bool(body.data.get("disbursementData"))),
        (
            "grace periods",
            any(
                body.integer(g)
                for g in (
                    "graceOnPrincipalPayment",
                    "graceOnInterestPayment",
                    "graceOnInterestCharged",
                )
            ),
        ),
        ("a fixed EMI amount", body.has("fixedEmiAmount")),
    ):
        if present:
            raise _twin_limit(feature)
    if repayments > MAX_INSTALMENTS:
        raise _twin_limit(f"more than {MAX_INSTALMENTS} repayments")
    cents = _cents(principal)
    if cents <= 0:
        raise ValidationProblem(
            [
                ApiParameterError(
                    "validation.msg.loan.principal.not.greater.than.zero",
                    "The parameter `principal` must be greater than 0.",
                    "principal",
                    None,
                    (float(principal), 0),
                )
            ]
        )
    return state.submit_loan(
        client_id=client_id,
        product_id=product_id,
        principal_cents=cents,
        term_frequency=term,
        term_frequency_type=term_type,
        number_of_repayments=repayments,
        repayment_every=every,
        repayment_frequency_type=frequency,
        interest_rate_per_period=rate,
        interest_rate_frequency_type=body.integer_sans_locale("interestRateFrequencyType"),
        amortization_type=amortization,
        interest_type=interest_type,
        interest_calculation_period_type=calculation,
        strategy_code=strategy,
        submitted_on=submitted,
        expected_disbursement=expected,
        repayments_starting_from=first_due,
        external_id=external_id,
        by=call.user,
    )


def create_loan(call: Call) -> tuple[int, Any]:
    if call.query.get("command") == "calculateLoanSchedule":
        # A dry run: submit on a throwaway clone and show the schedule Fineract would build.
        scratch = call.state.clone()
        loan = _submit(call, scratch)
        full = views.loan(scratch, loan, ("repaymentSchedule",))
        return 200, full["repaymentSchedule"]
    loan = _submit(call, call.state)
    client = call.state.client(loan.client_id)
    result: dict[str, Any] = {
        "officeId": client.office_id,
        "clientId": loan.client_id,
        "loanId": loan.id,
        "resourceId": loan.id,
    }
    if loan.external_id is not None:
        result["resourceExternalId"] = loan.external_id
    return 200, result


def _associations(call: Call) -> list[str]:
    raw = call.query.get("associations", "")
    return [part.strip() for part in raw.split(",") if part.strip()]


def get_loan(call: Call) -> tuple[int, Any]:
    loan = call.state.loan(call.ids[0])
    return 200, views.loan(call.state, loan, _associations(call))


def _changes(body: RequestBody, *names: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in (*names, "locale", "dateFormat"):
        text = body.raw_text(name)
        if text is not None:
            out[name] = text
    return out


def _approve(call: Call) -> tuple[int, Any]:
    body = call.command_body()
    body.check_supported(APPROVE_PARAMETERS)
    checks = ParameterChecks("loanapplication")
    amount = body.decimal("approvedLoanAmount")
    checks.greater_than_zero("approvedLoanAmount", amount)
    checks.greater_than_zero("netDisbursalAmount", body.decimal("netDisbursalAmount"))
    approved_on = body.local_date("approvedOnDate")
    checks.not_null("approvedOnDate", approved_on)
    expected = body.local_date("expectedDisbursementDate")
    note = body.string("note")
    checks.max_length("note", note, 1000)
    loan = call.state.approve_loan(
        call.ids[0],
        approved_on=approved_on,
        expected_disbursement=expected,
        approved_amount_cents=None if amount is None else _cents(amount),
        by=call.user,
        problems=checks.errors,
    )
    changes: dict[str, Any] = {"status": views.loan_status(loan.status_id)}
    changes.update(_changes(body, "approvedOnDate", "expectedDisbursementDate", "note"))
    return 200, _command_result(call, loan.id, loan.id, changes)


def _disburse(call: Call) -> tuple[int, Any]:
    body = call.command_body()
    body.check_supported(DISBURSE_PARAMETERS)
    checks = ParameterChecks("loan.disbursement")
    on = body.local_date("actualDisbursementDate")
    checks.not_null("actualDisbursementDate", on)
    note = body.string("note")
    checks.max_length("note", note, 1000)
    amount = body.decimal("transactionAmount")
    checks.greater_than_zero("transactionAmount", amount)
    checks.greater_than_zero("netDisbursalAmount", body.decimal("netDisbursalAmount"))
    checks.greater_than_zero("fixedEmiAmount", body.decimal("fixedEmiAmount"))
    payment_type_id = body.integer("paymentTypeId")
    checks.greater_than_zero("paymentTypeId", payment_type_id)
    for detail in PAYMENT_DETAILS:
        checks.max_length(detail, body.string(detail), 50)
    if body.data.get("postDatedChecks"):
        raise _twin_limit("post-dated checks")
    cents = None if amount is None else _cents(amount)
    if cents is not None and cents <= 0 and amount is not None and amount > 0:
        checks.greater_than_zero("transactionAmount", Decimal(0))
    loan = call.state.disburse_loan(
        call.ids[0],
        on=on,
        amount_cents=cents,
        payment_type_id=payment_type_id,
        note=note,
        by=call.user,
        problems=checks.errors,
    )
    changes: dict[str, Any] = {"status": views.loan_status(loan.status_id)}
    changes.update(_changes(body, "actualDisbursementDate", "note"))
    return 200, _command_result(call, loan.id, loan.id, changes)


def loan_command(call: Call) -> tuple[int, Any]:
    command = call.query.get("command")
    if command == "approve":
        return _approve(call)
    if command == "disburse":
        return _disburse(call)
    call.state.loan(call.ids[0])
    if command in STATE_COMMANDS:
        raise _unsupported_command(command)
    raise UnrecognizedQueryParamProblem("command", command)


def _command_result(
    call: Call, loan_id: int, resource_id: int, changes: dict[str, Any]
) -> dict[str, Any]:
    loan = call.state.loan(loan_id)
    client = call.state.client(loan.client_id)
    return {
        "officeId": client.office_id,
        "clientId": loan.client_id,
        "loanId": loan.id,
        "resourceId": resource_id,
        "changes": changes,
    }


def loan_transaction_command(call: Call) -> tuple[int, Any]:
    command = call.query.get("command")
    if command != "repayment":
        if command in TRANSACTION_COMMANDS:
            call.state.loan(call.ids[0])
            raise _unsupported_command(command)
        raise UnrecognizedQueryParamProblem("command", command)
    body = call.command_body()
    body.check_supported(REPAYMENT_PARAMETERS)
    checks = ParameterChecks("loan.transaction")
    on = body.local_date("transactionDate")
    checks.not_null("transactionDate", on)
    amount = body.decimal("transactionAmount")
    if checks.not_null("transactionAmount", amount):
        checks.greater_than_zero("transactionAmount", amount)
    note = body.string("note")
    checks.max_length("note", note, 1000)
    payment_type_id = body.integer("paymentTypeId")
    checks.greater_than_zero("paymentTypeId", payment_type_id)
    for detail in PAYMENT_DETAILS:
        checks.max_length(detail, body.string(detail), 50)
    if amount is not None and amount > 0 and _cents(amount) == 0:
        # Fineract would round this to a zero Money and record nothing; refuse it instead.
        checks.greater_than_zero("transactionAmount", Decimal(0))
    checks.raise_if_any()
    assert on is not None and amount is not None
    external_id = body.string("externalId")
    loan, transaction = call.state.repay_loan(
        call.ids[0],
        on=on,
        amount_cents=_cents(amount),
        payment_type_id=payment_type_id,
        note=note,
        external_id=external_id,
        by=call.user,
    )
    changes = _changes(body, "transactionDate", "transactionAmount")
    if payment_type_id is not None:
        changes["paymentTypeId"] = payment_type_id
    if note is not None:
        changes["note"] = note
    if external_id is not None:
        changes["externalId"] = external_id
    result = _command_result(call, loan.id, transaction.id, changes)
    if external_id is not None:
        result["resourceExternalId"] = external_id
    return 200, result


# -- dispatch --------------------------------------------------------------------------

ROUTES: tuple[tuple[str, tuple[str, ...], Handler], ...] = (
    ("GET", ("businessdate",), list_business_dates),
    ("GET", ("businessdate", "{name}"), get_business_date),
    ("POST", ("businessdate",), update_business_date),
    ("GET", ("configurations",), list_configurations),
    ("GET", ("configurations", "name", "{name}"), get_configuration),
    ("GET", ("offices",), list_offices),
    ("GET", ("offices", "{id}"), get_office),
    ("GET", ("paymenttypes",), list_payment_types),
    ("GET", ("paymenttypes", "{id}"), get_payment_type),
    ("POST", ("clients",), create_client),
    ("GET", ("clients",), list_clients),
    ("GET", ("clients", "{id}"), get_client),
    ("POST", ("loanproducts",), create_product),
    ("GET", ("loanproducts",), list_products),
    ("GET", ("loanproducts", "{id}"), get_product),
    ("POST", ("loans",), create_loan),
    ("GET", ("loans", "{id}"), get_loan),
    ("POST", ("loans", "{id}"), loan_command),
    ("POST", ("loans", "{id}", "transactions"), loan_transaction_command),
)
_ID = re.compile(r"[+-]?\d{1,18}")


def _match(pattern: tuple[str, ...], segments: list[str]) -> tuple[tuple[int, ...], str] | None:
    if len(pattern) != len(segments):
        return None
    ids: list[int] = []
    name = ""
    for expected, actual in zip(pattern, segments, strict=True):
        if expected == "{id}":
            if not _ID.fullmatch(actual):
                return None
            ids.append(int(actual))
        elif expected == "{name}":
            name = actual
        elif expected != actual:
            return None
    return tuple(ids), name


def _spring_error(status: int, reason: str, message: str, path: str) -> dict[str, Any]:
    """The servlet container's error body (Fineract's tenant filter answers through it)."""
    return {
        "timestamp": clock.NOW.isoformat().replace("+00:00", "Z"),
        "status": status,
        "error": reason,
        "message": message,
        "path": path,
    }


def _credentials(request: Request) -> tuple[str, str] | None:
    header = request.header("authorization") or ""
    if not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def _server_error(exc: BaseException) -> Response:
    text = "An unexpected error occured on the platform server."
    return json_response(
        500,
        {
            "developerMessage": text,
            "httpStatusCode": "500",
            "defaultUserMessage": text,
            "userMessageGlobalisationCode": "error.msg.platform.server.side.error",
            "errors": [
                general(
                    "error.msg.platform.server.side.error", f"{type(exc).__name__}: {exc}"
                ).to_json()
            ],
        },
    )


def handle(
    states: Mapping[str, FineractState], users: Mapping[str, str], request: Request
) -> Response:
    """Answer one request as Fineract would; never raises."""
    try:
        return _handle(states, users, request)
    except FineractProblem as problem:
        headers = _REALM if problem.status == 401 else None
        return json_response(problem.status, problem.body(), headers)
    except Exception as exc:  # the twin's own bug: still Fineract's 500 shape, never a traceback
        return _server_error(exc)


def _handle(
    states: Mapping[str, FineractState], users: Mapping[str, str], request: Request
) -> Response:
    method = request.method.upper()
    path = request.path
    if not path.startswith(API_ROOT + "/"):
        raise RouteProblem(404, method, path)
    query = {k: v[0] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
    tenant = request.header(TENANT_HEADER)
    if tenant is None or not tenant.strip():
        tenant = query.get("tenantIdentifier")
    if tenant is None:
        message = (
            f"No tenant identifier found: Add request header of '{TENANT_HEADER}' or add the "
            "parameter 'tenantIdentifier' to query string of request URL."
        )
        return json_response(400, _spring_error(400, "Bad Request", message, path), _REALM)
    state = states.get(tenant)
    if state is None:
        message = f"The tenant identifier: {tenant} is not valid."
        return json_response(400, _spring_error(400, "Bad Request", message, path), _REALM)
    credentials = _credentials(request)
    if credentials is None or users.get(credentials[0]) != credentials[1]:
        raise UnauthenticatedProblem()
    segments = [unquote(s) for s in path[len(API_ROOT) + 1 :].split("/")]
    if segments and segments[-1] == "" and len(segments) > 1:
        segments.pop()
    allowed = False
    for route_method, pattern, handler in ROUTES:
        matched = _match(pattern, segments)
        if matched is None:
            continue
        allowed = True
        if route_method != method:
            continue
        ids, name = matched
        call = Call(state, credentials[0], query, request.body, ids, name)
        status, payload = handler(call)
        return json_response(status, payload)
    raise RouteProblem(405 if allowed else 404, method, path)

"""The loan engine's state: offices, clients, loan products and loans, with no HTTP.

Collections are dicts of id -> immutable record. A write builds a new record and
replaces the entry, never mutating one in place, so ``FineractState.clone()`` only
copies the top-level dicts and the id counters: a clone shares every record with its
original and the two can never see each other's writes.

Rules enforced here are Fineract's domain rules (dates against the business date,
state transitions, unique keys); checks that only need the request body live in the
routes. Money is integer cents; "today" is the tenant's business date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from vamos_env import clock
from vamos_env.twins.fineract.errors import (
    ApiParameterError,
    DataIntegrityProblem,
    DomainRuleProblem,
    NotFoundProblem,
    ValidationProblem,
    general,
)
from vamos_env.twins.fineract.schedule import (
    Installment,
    Repayment,
    allocate,
    build_schedule,
)

SUBMITTED, APPROVED, ACTIVE, CLOSED, OVERPAID = 100, 200, 300, 600, 700
CLIENT_PENDING, CLIENT_ACTIVE = 100, 300
DISBURSEMENT, REPAYMENT = 1, 2

STRATEGIES: dict[str, str] = {
    "mifos-standard-strategy": "Penalties, Fees, Interest, Principal order",
    "heavensfamily-strategy": "HeavensFamily Unique",
    "creocore-strategy": "Creocore Unique",
    "rbi-india-strategy": "Overdue/Due Fee/Int,Principal",
    "principal-interest-penalties-fees-order-strategy": (
        "Principal, Interest, Penalties, Fees Order"
    ),
    "interest-principal-penalties-fees-order-strategy": (
        "Interest, Principal, Penalties, Fees Order"
    ),
    "early-repayment-strategy": "Early Repayment Strategy",
    "due-penalty-fee-interest-principal-in-advance-principal-penalty-fee-interest-strategy": (
        "Due penalty, fee, interest, principal, In advance principal, penalty, fee, interest"
    ),
    "due-penalty-interest-principal-fee-in-advance-penalty-interest-principal-fee-strategy": (
        "Due penalty, interest, principal, fee, In advance penalty, interest, principal, fee"
    ),
}
ADVANCED_STRATEGY = "advanced-payment-allocation-strategy"

# Currencies of Fineract's seed data the twin knows by name (code -> name, symbol).
CURRENCIES: dict[str, tuple[str, str]] = {
    "USD": ("US Dollar", "$"),
    "EUR": ("Euro", "€"),
    "GBP": ("Pound Sterling", "£"),
    "CAD": ("Canadian Dollar", "CA$"),
}

# The twin builds schedules one instalment per record; beyond this a request is refused.
MAX_INSTALMENTS = 600


@dataclass(frozen=True, slots=True)
class Office:
    id: int
    name: str
    external_id: str | None
    opening_date: date
    hierarchy: str = "."


@dataclass(frozen=True, slots=True)
class PaymentType:
    id: int
    name: str
    description: str
    is_cash_payment: bool
    position: int


@dataclass(frozen=True, slots=True)
class Configuration:
    id: int
    name: str
    enabled: bool
    description: str


@dataclass(frozen=True, slots=True)
class Client:
    id: int
    account_no: str
    office_id: int
    external_id: str | None
    firstname: str | None
    middlename: str | None
    lastname: str | None
    fullname: str | None
    display_name: str
    status_id: int
    activation_date: date | None
    submitted_on: date
    submitted_by: str
    legal_form_id: int
    mobile_no: str | None = None
    email_address: str | None = None


@dataclass(frozen=True, slots=True)
class LoanProduct:
    id: int
    name: str
    short_name: str
    description: str | None
    external_id: str | None
    currency_code: str
    digits_after_decimal: int
    in_multiples_of: int
    installment_multiple: int
    principal_cents: int | None
    min_principal_cents: int | None
    max_principal_cents: int | None
    number_of_repayments: int
    min_number_of_repayments: int | None
    max_number_of_repayments: int | None
    repayment_every: int
    repayment_frequency_type: int
    interest_rate_per_period: Decimal
    interest_rate_frequency_type: int
    amortization_type: int
    interest_type: int
    interest_calculation_period_type: int
    strategy_code: str
    days_in_year_type: int
    days_in_month_type: int
    accounting_rule: int
    in_arrears_tolerance_cents: int


@dataclass(frozen=True, slots=True)
class LoanTransaction:
    id: int
    type_id: int
    on: date
    amount_cents: int
    principal_cents: int
    overpayment_cents: int
    outstanding_after_cents: int
    submitted_on: date
    created_by: str
    payment_type_id: int | None = None
    note: str | None = None
    external_id: str | None = None


@dataclass(frozen=True, slots=True)
class Loan:
    id: int
    account_no: str
    external_id: str | None
    client_id: int
    product_id: int
    status_id: int
    proposed_principal_cents: int
    approved_principal_cents: int
    term_frequency: int
    term_frequency_type: int
    number_of_repayments: int
    repayment_every: int
    repayment_frequency_type: int
    interest_rate_per_period: Decimal
    interest_rate_frequency_type: int
    amortization_type: int
    interest_type: int
    interest_calculation_period_type: int
    strategy_code: str
    submitted_on: date
    submitted_by: str
    expected_disbursement: date
    repayments_starting_from: date | None
    installments: tuple[Installment, ...]
    approved_on: date | None = None
    approved_by: str | None = None
    disbursed_on: date | None = None
    disbursed_by: str | None = None
    disbursed_cents: int = 0
    closed_on: date | None = None
    overpaid_on: date | None = None
    overpaid_cents: int = 0
    transactions: tuple[LoanTransaction, ...] = ()

    @property
    def disbursed(self) -> bool:
        return self.disbursed_on is not None

    @property
    def principal_paid_cents(self) -> int:
        return sum(i.paid_cents for i in self.installments)

    @property
    def principal_outstanding_cents(self) -> int:
        return max(0, self.disbursed_cents - self.principal_paid_cents) if self.disbursed else 0

    @property
    def maturity_date(self) -> date | None:
        return self.installments[-1].due_date if self.installments else None


def _plain(value: Any) -> Any:
    """A record as JSON-able data (ISO dates, str decimals, cents as ints)."""
    if is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
        return out
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _account_no(number: int) -> str:
    return f"{number:09d}"


def _office_seed() -> dict[int, Office]:
    return {1: Office(1, "Head Office", "1", date(2009, 1, 1))}


def _payment_type_seed() -> dict[int, PaymentType]:
    rows = [
        (1, "Money Transfer", "Money Transfer", False),
        (2, "Cash", "Cash payment", True),
        (3, "Check", "Check payment", False),
        (4, "Card", "Card payment", False),
    ]
    return {pid: PaymentType(pid, name, text, cash, pid) for pid, name, text, cash in rows}


def _configuration_seed() -> dict[str, Configuration]:
    rows = [
        (
            1,
            "enable-business-date",
            True,
            "Whether the logical business date functionality is enabled",
        ),
        (
            2,
            "enable-automatic-cob-date-adjustment",
            True,
            "Whether the COB date follows the business date",
        ),
    ]
    return {name: Configuration(cid, name, on, text) for cid, name, on, text in rows}


class FineractState:
    """One tenant's data. Pure: every method is a state change or a query, no I/O."""

    __slots__ = (
        "business_date",
        "clients",
        "configurations",
        "loans",
        "next_ids",
        "offices",
        "payment_types",
        "products",
    )

    def __init__(self, business_date: date = clock.TODAY) -> None:
        self.business_date: date = business_date
        self.offices: dict[int, Office] = _office_seed()
        self.payment_types: dict[int, PaymentType] = _payment_type_seed()
        self.configurations: dict[str, Configuration] = _configuration_seed()
        self.clients: dict[int, Client] = {}
        self.products: dict[int, LoanProduct] = {}
        self.loans: dict[int, Loan] = {}
        self.next_ids: dict[str, int] = {"client": 1, "product": 1, "loan": 1, "transaction": 1}

    def clone(self) -> FineractState:
        """A copy whose writes never reach this state (records are shared, never mutated)."""
        twin = object.__new__(FineractState)
        twin.business_date = self.business_date
        twin.offices = self.offices  # never written after construction
        twin.payment_types = self.payment_types  # never written after construction
        twin.configurations = self.configurations.copy()
        twin.clients = self.clients.copy()
        twin.products = self.products.copy()
        twin.loans = self.loans.copy()
        twin.next_ids = self.next_ids.copy()
        return twin

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-able data, for ledger diffs and snapshots."""
        return {
            "business_date": self.business_date.isoformat(),
            "configurations": _plain(self.configurations),
            "offices": _plain(self.offices),
            "payment_types": _plain(self.payment_types),
            "clients": _plain(self.clients),
            "products": _plain(self.products),
            "loans": _plain(self.loans),
            "next_ids": dict(self.next_ids),
        }

    def _take_id(self, kind: str) -> int:
        value = self.next_ids[kind]
        self.next_ids[kind] = value + 1
        return value

    # -- queries -----------------------------------------------------------------

    @property
    def today(self) -> date:
        return self.business_date

    @property
    def cob_date(self) -> date:
        adjust = self.configurations["enable-automatic-cob-date-adjustment"].enabled
        return self.business_date - timedelta(days=1) if adjust else self.business_date

    def office(self, office_id: int) -> Office:
        found = self.offices.get(office_id)
        if found is None:
            raise NotFoundProblem(
                "error.msg.office.id.invalid",
                f"Office with identifier {office_id} does not exist",
                office_id,
            )
        return found

    def payment_type(self, payment_type_id: int) -> PaymentType:
        found = self.payment_types.get(payment_type_id)
        if found is None:
            raise NotFoundProblem(
                "error.msg.payment.type.invalid",
                f"PaymentType with {payment_type_id} does not exist",
                payment_type_id,
            )
        return found

    def configuration(self, name: str) -> Configuration:
        found = self.configurations.get(name)
        if found is None:
            raise NotFoundProblem(
                "error.msg.configuration.property.invalid",
                f"Configuration property `{name}` does not exist",
                name,
            )
        return found

    def client(self, client_id: int) -> Client:
        found = self.clients.get(client_id)
        if found is None:
            raise NotFoundProblem(
                "error.msg.client.id.invalid",
                f"Client with identifier {client_id} does not exist",
                client_id,
            )
        return found

    def clients_with_external_id(self, external_id: str) -> list[Client]:
        # Exact and case-sensitive, as on Fineract's PostgreSQL default.
        return [c for c in self.clients.values() if c.external_id == external_id]

    def product(self, product_id: int) -> LoanProduct:
        found = self.products.get(product_id)
        if found is None:
            raise NotFoundProblem(
                "error.msg.loanproduct.id.invalid",
                f"Loan product with identifier {product_id} does not exist",
                product_id,
            )
        return found

    def loan(self, loan_id: int) -> Loan:
        found = self.loans.get(loan_id)
        if found is None:
            raise NotFoundProblem(
                "error.msg.loan.id.invalid",
                f"Loan with identifier {loan_id} does not exist",
                loan_id,
            )
        return found

    # -- business date -------------------------------------------------------------

    def set_business_date(self, kind: str, new_date: date) -> dict[str, date]:
        """``POST /businessdate``; returns Fineract's ``changes`` (type -> new date)."""
        if not self.configurations["enable-business-date"].enabled:
            raise DomainRuleProblem(
                "business.date.is.not.enabled",
                "Business date functionality is not enabled",
                "business.date.is.not.enabled",
            )
        changes: dict[str, date] = {}
        if kind == "BUSINESS_DATE":
            old_cob = self.cob_date
            if new_date != self.business_date:
                self.business_date = new_date
                changes["BUSINESS_DATE"] = new_date
            if (
                self.configurations["enable-automatic-cob-date-adjustment"].enabled
                and self.cob_date != old_cob
            ):
                changes["COB_DATE"] = self.cob_date
        return changes

    # -- clients -------------------------------------------------------------------

    def create_client(
        self,
        *,
        office_id: int,
        firstname: str | None,
        middlename: str | None,
        lastname: str | None,
        fullname: str | None,
        external_id: str | None,
        active: bool,
        activation_date: date | None,
        submitted_on: date | None,
        legal_form_id: int,
        mobile_no: str | None,
        email_address: str | None,
        by: str,
    ) -> Client:
        office = self.office(office_id)
        submitted = submitted_on or self.today
        if active and activation_date is not None and submitted > activation_date:
            submitted = activation_date
        errors: list[ApiParameterError] = []
        if submitted > self.today:
            errors.append(
                ApiParameterError(
                    "error.msg.clients.submittedOnDate.in.the.future",
                    "submitted date cannot be in the future.",
                    "submittedOnDate",
                    None,
                    (submitted,),
                )
            )
        if active and activation_date is not None:
            if submitted > activation_date:
                errors.append(
                    ApiParameterError(
                        "error.msg.clients.submittedOnDate.after.activation.date",
                        "submitted date cannot be after the activation date",
                        "submittedOnDate",
                        None,
                        (submitted,),
                    )
                )
            if activation_date > self.today:
                errors.append(
                    ApiParameterError(
                        "error.msg.clients.activationDate.in.the.future",
                        "Activation date cannot be in the future.",
                        "activationDate",
                        None,
                        (activation_date,),
                    )
                )
            if activation_date < office.opening_date:
                errors.append(
                    ApiParameterError(
                        "error.msg.clients.activationDate.cannot.be.before.office.activation.date",
                        "Client activation date cannot be a date before the office opening date.",
                        "activationDate",
                        None,
                        (activation_date,),
                    )
                )
        if errors:
            raise ValidationProblem(errors)
        if external_id is not None and self.clients_with_external_id(external_id):
            raise DataIntegrityProblem(
                "error.msg.client.duplicate.externalId",
                f"Client with externalId `{external_id}` already exists",
                "externalId",
                external_id,
            )
        if mobile_no is not None and any(c.mobile_no == mobile_no for c in self.clients.values()):
            raise DataIntegrityProblem(
                "error.msg.client.duplicate.mobileNo",
                f"Client with mobileNo `{mobile_no}` already exists",
                "mobileNo",
                mobile_no,
            )
        display = fullname or " ".join(p for p in (firstname, middlename, lastname) if p)
        client_id = self._take_id("client")
        client = Client(
            id=client_id,
            account_no=_account_no(client_id),
            office_id=office_id,
            external_id=external_id,
            firstname=firstname,
            middlename=middlename,
            lastname=lastname,
            fullname=fullname,
            display_name=display,
            status_id=CLIENT_ACTIVE if active else CLIENT_PENDING,
            activation_date=activation_date if active else None,
            submitted_on=submitted,
            submitted_by=by,
            legal_form_id=legal_form_id,
            mobile_no=mobile_no,
            email_address=email_address,
        )
        self.clients[client_id] = client
        return client

    # -- loan products ---------------------------------------------------------------

    def create_product(self, product: LoanProduct) -> LoanProduct:
        """Store a validated product; ``product.id`` is ignored and assigned here."""
        if product.currency_code not in CURRENCIES:
            raise NotFoundProblem(
                "error.msg.currency.currencyCode.invalid",
                f"Currency with identifier {product.currency_code} does not exist",
                product.currency_code,
            )
        for other in self.products.values():
            if other.name == product.name:
                raise DataIntegrityProblem(
                    "error.msg.product.loan.duplicate.name",
                    f"Loan product with name `{product.name}` already exists",
                    "name",
                    product.name,
                )
            if other.short_name == product.short_name:
                raise DataIntegrityProblem(
                    "error.msg.product.loan.duplicate.short.name",
                    f"Loan product with short name `{product.short_name}` already exists",
                    "shortName",
                    product.short_name,
                )
            if product.external_id is not None and other.external_id == product.external_id:
                raise DataIntegrityProblem(
                    "error.msg.product.loan.duplicate.externalId",
                    f"Loan Product with externalId `{product.external_id}` already exists",
                    "externalId",
                    product.external_id,
                )
        if product.strategy_code == ADVANCED_STRATEGY:
            raise _unsupported("the advanced payment allocation strategy")
        if product.strategy_code not in STRATEGIES:
            raise _unknown_strategy(product.strategy_code)
        stored = replace(product, id=self._take_id("product"))
        self.products[stored.id] = stored
        return stored

    # -- loans -----------------------------------------------------------------------

    def _schedule(self, loan: Loan, principal_cents: int, start: date) -> tuple[Installment, ...]:
        product = self.product(loan.product_id)
        try:
            return self._build(loan, product, principal_cents, start)
        except (OverflowError, ValueError):
            raise _unsupported("repayment schedules that run past the year 9999") from None

    @staticmethod
    def _build(
        loan: Loan, product: LoanProduct, principal_cents: int, start: date
    ) -> tuple[Installment, ...]:
        return build_schedule(
            principal_cents,
            loan.number_of_repayments,
            start,
            loan.repayments_starting_from,
            loan.repayment_every,
            loan.repayment_frequency_type,
            digits_after_decimal=product.digits_after_decimal,
            currency_multiple=product.in_multiples_of,
            instalment_multiple=product.installment_multiple,
        )

    def submit_loan(
        self,
        *,
        client_id: int,
        product_id: int,
        principal_cents: int,
        term_frequency: int,
        term_frequency_type: int,
        number_of_repayments: int,
        repayment_every: int,
        repayment_frequency_type: int,
        interest_rate_per_period: Decimal,
        interest_rate_frequency_type: int | None,
        amortization_type: int,
        interest_type: int,
        interest_calculation_period_type: int,
        strategy_code: str,
        submitted_on: date,
        expected_disbursement: date,
        repayments_starting_from: date | None,
        external_id: str | None,
        by: str,
    ) -> Loan:
        """``POST /loans`` after the body checks: Fineract's submission rules, in its order."""
        product = self.product(product_id)
        client = self.client(client_id)
        if client.status_id != CLIENT_ACTIVE:
            raise DomainRuleProblem(
                "error.msg.client.not.active.exception",
                f"The Client with id `{client_id}` is not active",
                client_id,
            )
        if external_id is not None and any(
            x.external_id == external_id for x in self.loans.values()
        ):
            raise DomainRuleProblem(
                "error.msg.loan.with.externalId.already.used",
                "Loan with externalId is already registered.",
            )
        if submitted_on > self.today:
            raise DomainRuleProblem(
                "error.msg.loan.submittal.cannot.be.a.future.date",
                "The date on which a loan is submitted cannot be in the future.",
                submitted_on,
                self.today,
            )
        if client.activation_date is not None and client.activation_date > submitted_on:
            raise DomainRuleProblem(
                "error.msg.loan.submittal.cannot.be.before.client.activation.date",
                "The date on which a loan is submitted cannot be earlier than client's "
                "activation date.",
                submitted_on,
                client.activation_date,
            )
        if submitted_on > expected_disbursement:
            raise DomainRuleProblem(
                "error.msg.loan.submittal.cannot.be.after.expected.disbursement.date",
                "The date on which a loan is submitted cannot be after its expected disbursement "
                f"date: {expected_disbursement.isoformat()}",
                submitted_on,
                expected_disbursement,
            )
        if strategy_code == ADVANCED_STRATEGY:
            raise DomainRuleProblem(
                "strategy.cannot.be.advanced.payment.allocation.if.not.configured",
                "Loan transaction processing strategy cannot be Advanced Payment Allocation "
                "Strategy if it's not configured on loan product",
            )
        if strategy_code not in STRATEGIES:
            raise _unknown_strategy(strategy_code)
        if interest_rate_per_period != 0:
            raise _unsupported("interest (only zero-interest loans are modelled)")
        if number_of_repayments > MAX_INSTALMENTS:
            raise _unsupported(f"more than {MAX_INSTALMENTS} repayments")
        if repayments_starting_from is not None and submitted_on > repayments_starting_from:
            raise DomainRuleProblem(
                "error.msg.loan.application.submitted.on.date.cannot.be.after.the.loan.expected.first.repayment.date",
                "submittedOnDate cannot be after the loans  expectedFirstRepaymentOnDate.",
                submitted_on,
                repayments_starting_from,
            )
        term_errors: list[ApiParameterError] = []
        if term_frequency_type != repayment_frequency_type:
            term_errors.append(
                ApiParameterError(
                    "validation.msg.loan.loanTermFrequencyType.not.the.same.as.repaymentFrequencyType",
                    "The parameters loanTermFrequencyType and repaymentFrequencyType must be the "
                    "same.",
                    "loanTermFrequencyType",
                    None,
                    (term_frequency_type, repayment_frequency_type),
                )
            )
        else:
            suggested = repayment_every * number_of_repayments
            if term_frequency != suggested:
                relation = "less" if term_frequency < suggested else "greater"
                # Fineract's two messages differ by one word ("suggest" / "suggested").
                suggest = "suggest" if relation == "less" else "suggested"
                term_errors.append(
                    ApiParameterError(
                        f"validation.msg.loan.loanTermFrequency.{relation}.than.repayment.structure."
                        "suggests",
                        f"The parameter loanTermFrequency is {relation} than the {suggest} loan "
                        "term as indicated by numberOfRepayments and repaymentEvery.",
                        "loanTermFrequency",
                        None,
                        (term_frequency, number_of_repayments, repayment_every),
                    )
                )
        if term_errors:
            raise ValidationProblem(term_errors)
        loan = Loan(
            id=0,
            account_no="",
            external_id=external_id,
            client_id=client_id,
            product_id=product.id,
            status_id=SUBMITTED,
            proposed_principal_cents=principal_cents,
            approved_principal_cents=principal_cents,
            term_frequency=term_frequency,
            term_frequency_type=term_frequency_type,
            number_of_repayments=number_of_repayments,
            repayment_every=repayment_every,
            repayment_frequency_type=repayment_frequency_type,
            interest_rate_per_period=interest_rate_per_period,
            interest_rate_frequency_type=(
                product.interest_rate_frequency_type
                if interest_rate_frequency_type is None
                else interest_rate_frequency_type
            ),
            amortization_type=amortization_type,
            interest_type=interest_type,
            interest_calculation_period_type=interest_calculation_period_type,
            strategy_code=strategy_code,
            submitted_on=submitted_on,
            submitted_by=by,
            expected_disbursement=expected_disbursement,
            repayments_starting_from=repayments_starting_from,
            installments=(),
        )
        schedule = self._schedule(loan, principal_cents, expected_disbursement)
        loan_id = self._take_id("loan")
        loan = replace(loan, id=loan_id, account_no=_account_no(loan_id), installments=schedule)
        self.loans[loan_id] = loan
        return loan

    def approve_loan(
        self,
        loan_id: int,
        *,
        approved_on: date | None,
        expected_disbursement: date | None,
        approved_amount_cents: int | None,
        by: str,
        problems: Sequence[ApiParameterError] = (),
    ) -> Loan:
        """``?command=approve``; ``problems`` are body errors Fineract raises after these checks."""
        loan = self.loan(loan_id)
        errors = list(problems)
        self._require_active_client(loan)
        if approved_on is not None and approved_on < loan.submitted_on:
            raise DomainRuleProblem(
                "error.msg.loan.approval.cannot.be.before.submittal.date",
                f"Loan approval date {approved_on.isoformat()} can not be before its submittal "
                f"date: {loan.submitted_on.isoformat()}",
                approved_on,
                loan.submitted_on,
            )
        pending = loan.status_id == SUBMITTED
        if not pending:
            errors.append(
                general(
                    "error.msg.loan.approve.account.is.not.submitted.and.pending.state",
                    "Loan Account Approval is not allowed. Loan Account is not in submitted and "
                    "pending approval state.",
                )
            )
        if (
            approved_amount_cents is not None
            and approved_amount_cents > loan.proposed_principal_cents
        ):
            raise DomainRuleProblem(
                "error.msg.loan.approval.amount.can't.be.greater.than.loan.amount.demanded",
                "Loan approved amount can't be greater than loan amount demanded.",
                _major(loan.proposed_principal_cents),
                _major(approved_amount_cents),
            )
        disbursement = expected_disbursement or loan.expected_disbursement
        if approved_on is not None and disbursement < approved_on:
            raise DomainRuleProblem(
                "error.msg.loan.expecteddisbursal.should.be.on.or.after.approval.date",
                f"The expected disbursement date {disbursement.isoformat()} should be either on "
                f"or after the approval date: {approved_on.isoformat()}",
                approved_on,
                disbursement,
            )
        if approved_on is not None and approved_on > self.today:
            raise DomainRuleProblem(
                "error.msg.loan.approval.cannot.be.a.future.date",
                "The date on which a loan is approved cannot be in the future.",
                approved_on,
            )
        if not pending:
            errors.append(
                general(
                    "error.msg.loan.approve.account.is.not.submitted.and.pending.state",
                    "Loan is already approved.",
                )
            )
        if errors:
            raise ValidationProblem(errors)
        assert approved_on is not None  # a missing date arrives in ``problems``
        principal = (
            loan.proposed_principal_cents
            if approved_amount_cents is None
            else approved_amount_cents
        )
        approved = replace(
            loan,
            status_id=APPROVED,
            approved_on=approved_on,
            approved_by=by,
            approved_principal_cents=principal,
            expected_disbursement=disbursement,
        )
        approved = replace(approved, installments=self._schedule(approved, principal, disbursement))
        self.loans[loan_id] = approved
        return approved

    def disburse_loan(
        self,
        loan_id: int,
        *,
        on: date | None,
        amount_cents: int | None,
        payment_type_id: int | None,
        note: str | None,
        by: str,
        problems: Sequence[ApiParameterError] = (),
    ) -> Loan:
        """``?command=disburse``: the whole approved principal (or ``amount_cents``) at ``on``."""
        loan = self.loan(loan_id)
        errors = list(problems)
        self._require_active_client(loan)
        if not (loan.status_id == APPROVED and not loan.disbursed):
            errors.append(
                general(
                    "error.msg.loan.disbursal.account.is.not.approve.not.disbursed.state",
                    "Loan Disbursal is not allowed. Loan Account is not in approved and not "
                    "disbursed state.",
                )
            )
        if on is not None and loan.approved_on is not None and on < loan.approved_on:
            raise DomainRuleProblem(
                "error.msg.loan.disbursal.cannot.be.before.approval.date",
                "The date on which a loan is disbursed cannot be before its approval date: "
                f"{loan.approved_on.isoformat()}",
                on,
                loan.approved_on,
            )
        if errors:
            raise ValidationProblem(errors)
        assert on is not None  # a missing date arrives in ``problems``
        if payment_type_id is not None:
            self.payment_type(payment_type_id)
        principal = loan.approved_principal_cents if amount_cents is None else amount_cents
        if principal > loan.approved_principal_cents:
            raise DomainRuleProblem(
                "error.msg.loan.disburse.amount.must.be.less.than.approved.amount",
                "Loan can't be disbursed,disburse amount is exceeding approved amount ",
                _major(principal),
                _major(loan.approved_principal_cents),
            )
        first_due = loan.repayments_starting_from
        if first_due is not None and on > first_due:
            raise DomainRuleProblem(
                "error.msg.loan.disbursal.cannot.be.after.expected.first.repayment.date",
                "submittedOnDate cannot be after the loans  expectedFirstRepaymentOnDate: "
                f"{first_due.isoformat()}",
                on,
                first_due,
            )
        if on > self.today:
            raise DomainRuleProblem(
                "error.msg.loan.disbursal.cannot.be.a.future.date",
                f"The date on which a loan with identifier : {loan.account_no} is disbursed "
                "cannot be in the future.",
                on,
            )
        schedule = self._schedule(loan, principal, on)
        transaction = LoanTransaction(
            id=self._take_id("transaction"),
            type_id=DISBURSEMENT,
            on=on,
            amount_cents=principal,
            principal_cents=0,
            overpayment_cents=0,
            outstanding_after_cents=principal,
            submitted_on=self.today,
            created_by=by,
            payment_type_id=payment_type_id,
            note=note,
        )
        active = replace(
            loan,
            status_id=ACTIVE,
            disbursed_on=on,
            disbursed_by=by,
            disbursed_cents=principal,
            transactions=(*loan.transactions, transaction),
            installments=schedule,
        )
        self.loans[loan_id] = active
        return active

    def repay_loan(
        self,
        loan_id: int,
        *,
        on: date,
        amount_cents: int,
        payment_type_id: int | None,
        note: str | None,
        external_id: str | None,
        by: str,
    ) -> tuple[Loan, LoanTransaction]:
        """``POST /loans/{id}/transactions?command=repayment`` after the body checks."""
        loan = self.loan(loan_id)
        if payment_type_id is not None:
            self.payment_type(payment_type_id)
        self._require_active_client(loan)
        if loan.status_id not in (ACTIVE, CLOSED, OVERPAID):
            raise ValidationProblem(
                [
                    general(
                        "error.msg.loan.must.be.active.fully.paid.or.overpaid",
                        "Loan must be Active, Fully Paid or Overpaid",
                    )
                ]
            )
        assert loan.disbursed_on is not None
        if on < loan.disbursed_on:
            raise DomainRuleProblem(
                "error.msg.loan.transaction.cannot.be.before.disbursement.date",
                "The transaction date cannot be before the loan disbursement date: "
                f"{loan.disbursed_on.isoformat()}",
                on,
                loan.disbursed_on,
            )
        if on > self.today:
            raise DomainRuleProblem(
                "error.msg.loan.transaction.cannot.be.a.future.date",
                "The transaction date cannot be in the future.",
                on,
            )
        if external_id is not None and any(
            t.external_id == external_id
            for other in self.loans.values()
            for t in other.transactions
        ):
            raise DataIntegrityProblem(
                "error.msg.loan.transaction.duplicate.externalId",
                f"Loan transaction with externalId `{external_id}` already exists",
                "externalId",
                external_id,
            )
        transaction = LoanTransaction(
            id=self._take_id("transaction"),
            type_id=REPAYMENT,
            on=on,
            amount_cents=amount_cents,
            principal_cents=0,
            overpayment_cents=0,
            outstanding_after_cents=0,
            submitted_on=self.today,
            created_by=by,
            payment_type_id=payment_type_id,
            note=note,
            external_id=external_id,
        )
        updated = self._reprocess(replace(loan, transactions=(*loan.transactions, transaction)))
        self.loans[loan_id] = updated
        stored = next(t for t in updated.transactions if t.id == transaction.id)
        return updated, stored

    def _reprocess(self, loan: Loan) -> Loan:
        """Replay every repayment over the schedule and derive the loan's status."""
        repayments = [
            Repayment(t.id, t.on, t.amount_cents)
            for t in loan.transactions
            if t.type_id == REPAYMENT
        ]
        installments, allocations, overpaid = allocate(loan.installments, repayments)
        transactions = tuple(
            replace(
                t,
                principal_cents=allocations[t.id].principal_cents,
                overpayment_cents=allocations[t.id].overpayment_cents,
                outstanding_after_cents=allocations[t.id].outstanding_after_cents,
            )
            if t.id in allocations
            else t
            for t in loan.transactions
        )
        outstanding = loan.disbursed_cents - sum(i.paid_cents for i in installments)
        status, closed_on, overpaid_on = ACTIVE, None, None
        if outstanding <= 0:
            ordered = sorted(repayments, key=lambda r: (r.on, r.transaction_id))
            closer = next(
                (r for r in ordered if allocations[r.transaction_id].outstanding_after_cents <= 0),
                None,
            )
            closed_on = closer.on if closer else loan.disbursed_on
            status = CLOSED
            if overpaid > 0:
                status = OVERPAID
                overpaid_on = next(
                    r.on
                    for r in reversed(ordered)
                    if allocations[r.transaction_id].overpayment_cents > 0
                )
        return replace(
            loan,
            installments=installments,
            transactions=transactions,
            status_id=status,
            closed_on=closed_on,
            overpaid_on=overpaid_on,
            overpaid_cents=overpaid,
        )

    def _require_active_client(self, loan: Loan) -> None:
        client = self.client(loan.client_id)
        if client.status_id != CLIENT_ACTIVE:
            raise DomainRuleProblem(
                "error.msg.client.not.active.exception",
                f"The Client with id `{client.id}` is not active",
                client.id,
            )


def _major(cents: int) -> float:
    return cents / 100


def _unknown_strategy(code: str) -> NotFoundProblem:
    return NotFoundProblem(
        "error.msg.transactions.processing.strategy.code.invalid",
        f"Loan transaction processing strategy with code {code} does not exist",
        code,
    )


def _unsupported(what: str) -> DomainRuleProblem:
    # Not a Fineract code: the twin models zero-interest principal-only loans and says so
    # in Fineract's domain-rule shape rather than silently computing something else.
    return DomainRuleProblem(
        "error.msg.twin.feature.not.supported",
        f"This Fineract twin does not model {what}.",
        what,
    )

"""A small httpx client for Apache Fineract's REST API, used by the tools and the seeding.

The same code reaches a real Fineract or the in-process twin: only ``base_url`` (the
server root; the client adds ``/fineract-provider/api/v1``) and the httpx transport
differ. Every call carries HTTP Basic credentials and the ``Fineract-Platform-TenantId``
header. Dates go out as ``dd MMMM yyyy`` with ``locale: en`` and come back as
``[y, m, d]``; money is integer cents on our side and major units on Fineract's
(converted exactly, through ``Decimal``). Any answer with status >= 400 raises
``FineractError`` carrying Fineract's error body and its most specific code.

``FineractClient`` is synchronous; ``AsyncFineractClient`` has the same methods as
coroutines. Both build their requests with the same ``_Call`` recipes below.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal
from types import TracebackType
from typing import Any, Generic, TypeVar

import httpx

from vamos_env.clock import MONTH_NAMES

API_PATH = "/fineract-provider/api/v1"
DATE_FORMAT = "dd MMMM yyyy"
LOCALE = "en"

T = TypeVar("T")


class FineractError(Exception):
    """A Fineract answer with HTTP status >= 400.

    ``code`` is the most specific globalisation code: ``errors[0]``'s when there is one
    (a 403 domain rule's top-level code is only ``validation.msg.domain.rule.violation``),
    else the body's own ``userMessageGlobalisationCode``; empty when the body has neither
    (e.g. the servlet's answer to a missing tenant).
    """

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        raw_errors = body.get("errors")
        self.status = status
        self.body = body
        self.errors: list[dict[str, Any]] = (
            [e for e in raw_errors if isinstance(e, dict)] if isinstance(raw_errors, list) else []
        )
        top = body.get("userMessageGlobalisationCode")
        first = self.errors[0].get("userMessageGlobalisationCode") if self.errors else None
        self.code: str = str(first or top or "")
        message = (
            (self.errors[0].get("defaultUserMessage") if self.errors else None)
            or body.get("defaultUserMessage")
            or body.get("message")
            or body.get("error")
            or ""
        )
        super().__init__(f"Fineract {status} {self.code}: {message}".strip())


def fineract_date(d: date) -> str:
    """``dd MMMM yyyy`` in English, independent of the process locale."""
    return f"{d.day:02d} {MONTH_NAMES[d.month - 1]} {d.year:04d}"


def parse_date(value: Any) -> date:
    """Fineract's ``[y, m, d]`` (or an ISO string, as some endpoints give) to a date."""
    if isinstance(value, list) and len(value) == 3:
        return date(int(value[0]), int(value[1]), int(value[2]))
    if isinstance(value, str):
        return date.fromisoformat(value[:10])
    raise ValueError(f"expected a Fineract date [y, m, d], got {value!r}")


def to_major(cents: int) -> Decimal:
    """Cents to the exact major-unit amount Fineract expects (65841 -> 658.41)."""
    return (Decimal(cents) / 100).quantize(Decimal("0.01"))


def to_cents(amount: Any) -> int:
    """A Fineract money number (658.41, "658.410000", 658) to integer cents, exactly."""
    if isinstance(amount, bool) or amount is None:
        raise ValueError(f"expected a Fineract amount, got {amount!r}")
    exact = Decimal(str(amount)) * 100
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _encode(payload: Any) -> bytes:
    """JSON with Decimal amounts as plain numbers.

    A 2-decimal amount below 10**13 has at most 15 significant digits, so its float's
    ``repr`` (what json writes) is exactly its own digits: 658.41 stays "658.41".
    """

    def default(value: Any) -> Any:
        if isinstance(value, Decimal):
            return float(value)
        raise TypeError(f"cannot encode {type(value).__name__}")

    return json.dumps(payload, default=default, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One API call: what to send and how to read the answer."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: Mapping[str, str] | None = None
    payload: Any = None
    has_payload: bool = field(default=False)


def _same(answer: Any) -> Any:
    return answer


def _resource_id(answer: Any) -> int:
    return int(answer["resourceId"])


def _dated(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key, value in fields.items():
        if value is None:
            continue
        body[key] = fineract_date(value) if isinstance(value, date) else value
    body["dateFormat"] = DATE_FORMAT
    body["locale"] = LOCALE
    return body


def _post(path: str, payload: Any, read: Callable[[Any], T], **params: str) -> _Call[T]:
    return _Call("POST", path, read, params or None, payload, True)


def _get(path: str, read: Callable[[Any], T], **params: str) -> _Call[T]:
    return _Call("GET", path, read, params or None)


def _first_exact(external_id: str) -> Callable[[Any], dict[str, Any] | None]:
    def read(answer: Any) -> dict[str, Any] | None:
        items = answer.get("pageItems", []) if isinstance(answer, dict) else answer
        # Fineract on MySQL matches externalId case-insensitively; account numbers must not.
        for item in items or []:
            if item.get("externalId") == external_id:
                return dict(item)
        return None

    return read


class _Calls:
    """The request recipes both clients share (no I/O here)."""

    @staticmethod
    def get_business_date() -> _Call[date]:
        return _get("/businessdate/BUSINESS_DATE", lambda a: parse_date(a["date"]))

    @staticmethod
    def set_business_date(d: date) -> _Call[Any]:
        return _post("/businessdate", _dated(type="BUSINESS_DATE", date=d), _same)

    @staticmethod
    def create_client(
        firstname: str, lastname: str, external_id: str, activation_date: date, office_id: int
    ) -> _Call[int]:
        body = _dated(
            officeId=office_id,
            legalFormId=1,
            firstname=firstname,
            lastname=lastname,
            externalId=external_id,
            active=True,
            activationDate=activation_date,
            submittedOnDate=activation_date,
        )
        return _post("/clients", body, lambda a: int(a["clientId"]))

    @staticmethod
    def find_client_by_external_id(external_id: str) -> _Call[dict[str, Any] | None]:
        return _get("/clients", _first_exact(external_id), externalId=external_id)

    @staticmethod
    def get_client(client_id: int) -> _Call[dict[str, Any]]:
        return _get(f"/clients/{client_id}", dict)

    @staticmethod
    def list_loan_products() -> _Call[list[dict[str, Any]]]:
        return _get("/loanproducts", list)

    @staticmethod
    def create_loan_product(
        name: str,
        short_name: str,
        currency_code: str,
        principal_cents: int,
        number_of_repayments: int,
        min_number_of_repayments: int | None,
        max_number_of_repayments: int | None,
        description: str | None,
    ) -> _Call[int]:
        body: dict[str, Any] = {
            "name": name,
            "shortName": short_name,
            "description": description,
            "currencyCode": currency_code,
            "digitsAfterDecimal": 2,
            "inMultiplesOf": 0,
            "principal": to_major(principal_cents),
            "numberOfRepayments": number_of_repayments,
            "minNumberOfRepayments": min_number_of_repayments,
            "maxNumberOfRepayments": max_number_of_repayments,
            "repaymentEvery": 1,
            "repaymentFrequencyType": 2,
            "interestRatePerPeriod": 0,
            "interestRateFrequencyType": 2,
            "amortizationType": 1,
            "interestType": 0,
            "interestCalculationPeriodType": 1,
            "transactionProcessingStrategyCode": "mifos-standard-strategy",
            "accountingRule": 1,
            "daysInYearType": 1,
            "daysInMonthType": 1,
            "isInterestRecalculationEnabled": False,
        }
        return _post("/loanproducts", _dated(**body), _resource_id)

    @staticmethod
    def submit_loan(
        client_id: int,
        product_id: int,
        principal_cents: int,
        installments: int,
        submitted_on: date,
        expected_disbursement_on: date,
        first_repayment_on: date | None,
        external_id: str | None,
    ) -> _Call[int]:
        body = _dated(
            clientId=client_id,
            productId=product_id,
            loanType="individual",
            principal=to_major(principal_cents),
            loanTermFrequency=installments,
            loanTermFrequencyType=2,
            numberOfRepayments=installments,
            repaymentEvery=1,
            repaymentFrequencyType=2,
            interestRatePerPeriod=0,
            amortizationType=1,
            interestType=0,
            interestCalculationPeriodType=1,
            transactionProcessingStrategyCode="mifos-standard-strategy",
            submittedOnDate=submitted_on,
            expectedDisbursementDate=expected_disbursement_on,
            repaymentsStartingFromDate=first_repayment_on,
            externalId=external_id,
        )
        return _post("/loans", body, lambda a: int(a["loanId"]))

    @staticmethod
    def approve_loan(loan_id: int, on: date) -> _Call[Any]:
        return _post(f"/loans/{loan_id}", _dated(approvedOnDate=on), _same, command="approve")

    @staticmethod
    def disburse_loan(loan_id: int, on: date) -> _Call[Any]:
        body = _dated(actualDisbursementDate=on)
        return _post(f"/loans/{loan_id}", body, _same, command="disburse")

    @staticmethod
    def get_loan(loan_id: int, associations: Sequence[str]) -> _Call[dict[str, Any]]:
        if associations:
            return _get(f"/loans/{loan_id}", dict, associations=",".join(associations))
        return _get(f"/loans/{loan_id}", dict)

    @staticmethod
    def make_repayment(
        loan_id: int, amount_cents: int, on: date, payment_type_id: int, note: str | None
    ) -> _Call[Any]:
        body = _dated(
            transactionDate=on,
            transactionAmount=to_major(amount_cents),
            paymentTypeId=payment_type_id,
            note=note,
        )
        return _post(f"/loans/{loan_id}/transactions", body, _same, command="repayment")

    @staticmethod
    def list_payment_types() -> _Call[list[dict[str, Any]]]:
        return _get("/paymenttypes", list)


def _settings(environ: Mapping[str, str] | None) -> tuple[str, str, str, str]:
    """(base_url, username, password, tenant) from the agents' environment variables."""
    env = os.environ if environ is None else environ
    base = env.get("FINERACT_API_BASE", "").strip()
    if not base:
        raise KeyError("FINERACT_API_BASE is not set (the Fineract server root, e.g. https://host)")
    return (
        base,
        env.get("FINERACT_USER", "mifos"),
        env.get("FINERACT_PASSWORD", "password"),
        env.get("FINERACT_TENANT", "default"),
    )


def _client_options(
    base_url: str, username: str, password: str, tenant: str, timeout: float, verify: bool
) -> dict[str, Any]:
    return {
        "base_url": base_url.rstrip("/") + API_PATH,
        "auth": httpx.BasicAuth(username, password),
        "headers": {
            "Fineract-Platform-TenantId": tenant,
            "Accept": "application/json",
            "Content-Type": "application/json",
        },
        "timeout": timeout,
        "verify": verify,
    }


def _answer(response: httpx.Response) -> Any:
    text = response.content
    try:
        parsed: Any = json.loads(text) if text.strip() else None
    except ValueError:
        parsed = None
        if response.status_code < 400:
            raise FineractError(
                response.status_code, {"error": "response is not JSON", "raw": response.text}
            ) from None
    if response.status_code >= 400:
        body = parsed if isinstance(parsed, dict) else {"raw": response.text}
        raise FineractError(response.status_code, body)
    return parsed


def _body_kwargs(call: _Call[Any]) -> dict[str, Any]:
    if not call.has_payload:
        return {}
    payload = call.payload
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if v is not None}
    return {"content": _encode(payload)}


class FineractClient:
    """Synchronous Fineract client over ``httpx.Client``."""

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        tenant: str = "default",
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        verify: bool = True,
    ) -> None:
        options = _client_options(base_url, username, password, tenant, timeout, verify)
        self._http = httpx.Client(transport=transport, **options)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FineractClient:
        """``FINERACT_API_BASE``, ``FINERACT_USER``, ``FINERACT_PASSWORD``, ``FINERACT_TENANT``."""
        return cls(*_settings(environ))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> FineractClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
    ) -> Any:
        """Any call below ``/fineract-provider/api/v1``; JSON in, parsed JSON out."""
        has_payload = json is not None
        return self._run(_Call(method.upper(), path, _same, params, json, has_payload))

    def _run(self, call: _Call[T]) -> T:
        response = self._http.request(
            call.method, call.path, params=call.params, **_body_kwargs(call)
        )
        return call.read(_answer(response))

    def get_business_date(self) -> date:
        return self._run(_Calls.get_business_date())

    def set_business_date(self, d: date) -> Any:
        return self._run(_Calls.set_business_date(d))

    def create_client(
        self,
        *,
        firstname: str,
        lastname: str,
        external_id: str,
        activation_date: date,
        office_id: int = 1,
    ) -> int:
        return self._run(
            _Calls.create_client(firstname, lastname, external_id, activation_date, office_id)
        )

    def find_client_by_external_id(self, external_id: str) -> dict[str, Any] | None:
        return self._run(_Calls.find_client_by_external_id(external_id))

    def get_client(self, client_id: int) -> dict[str, Any]:
        return self._run(_Calls.get_client(client_id))

    def list_loan_products(self) -> list[dict[str, Any]]:
        return self._run(_Calls.list_loan_products())

    def create_loan_product(
        self,
        *,
        name: str,
        short_name: str,
        currency_code: str = "USD",
        principal_cents: int = 100_000,
        number_of_repayments: int = 12,
        min_number_of_repayments: int | None = None,
        max_number_of_repayments: int | None = None,
        description: str | None = None,
    ) -> int:
        """A zero-interest product with monthly equal instalments; returns its id."""
        return self._run(
            _Calls.create_loan_product(
                name,
                short_name,
                currency_code,
                principal_cents,
                number_of_repayments,
                min_number_of_repayments,
                max_number_of_repayments,
                description,
            )
        )

    def submit_loan(
        self,
        *,
        client_id: int,
        product_id: int,
        principal_cents: int,
        installments: int,
        submitted_on: date,
        expected_disbursement_on: date,
        first_repayment_on: date | None = None,
        external_id: str | None = None,
    ) -> int:
        return self._run(
            _Calls.submit_loan(
                client_id,
                product_id,
                principal_cents,
                installments,
                submitted_on,
                expected_disbursement_on,
                first_repayment_on,
                external_id,
            )
        )

    def approve_loan(self, loan_id: int, *, on: date) -> Any:
        return self._run(_Calls.approve_loan(loan_id, on))

    def disburse_loan(self, loan_id: int, *, on: date) -> Any:
        return self._run(_Calls.disburse_loan(loan_id, on))

    def get_loan(
        self, loan_id: int, *, associations: Sequence[str] = ("repaymentSchedule", "transactions")
    ) -> dict[str, Any]:
        return self._run(_Calls.get_loan(loan_id, associations))

    def make_repayment(
        self,
        loan_id: int,
        *,
        amount_cents: int,
        on: date,
        payment_type_id: int = 1,
        note: str | None = None,
    ) -> Any:
        return self._run(_Calls.make_repayment(loan_id, amount_cents, on, payment_type_id, note))

    def list_payment_types(self) -> list[dict[str, Any]]:
        return self._run(_Calls.list_payment_types())


class AsyncFineractClient:
    """The same calls as ``FineractClient``, as coroutines over ``httpx.AsyncClient``."""

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        tenant: str = "default",
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        verify: bool = True,
    ) -> None:
        options = _client_options(base_url, username, password, tenant, timeout, verify)
        self._http = httpx.AsyncClient(transport=transport, **options)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AsyncFineractClient:
        return cls(*_settings(environ))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncFineractClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
    ) -> Any:
        has_payload = json is not None
        return await self._run(_Call(method.upper(), path, _same, params, json, has_payload))

    async def _run(self, call: _Call[T]) -> T:
        response = await self._http.request(
            call.method, call.path, params=call.params, **_body_kwargs(call)
        )
        return call.read(_answer(response))

    async def get_business_date(self) -> date:
        return await self._run(_Calls.get_business_date())

    async def set_business_date(self, d: date) -> Any:
        return await self._run(_Calls.set_business_date(d))

    async def create_client(
        self,
        *,
        firstname: str,
        lastname: str,
        external_id: str,
        activation_date: date,
        office_id: int = 1,
    ) -> int:
        return await self._run(
            _Calls.create_client(firstname, lastname, external_id, activation_date, office_id)
        )

    async def find_client_by_external_id(self, external_id: str) -> dict[str, Any] | None:
        return await self._run(_Calls.find_client_by_external_id(external_id))

    async def get_client(self, client_id: int) -> dict[str, Any]:
        return await self._run(_Calls.get_client(client_id))

    async def list_loan_products(self) -> list[dict[str, Any]]:
        return await self._run(_Calls.list_loan_products())

    async def create_loan_product(
        self,
        *,
        name: str,
        short_name: str,
        currency_code: str = "USD",
        principal_cents: int = 100_000,
        number_of_repayments: int = 12,
        min_number_of_repayments: int | None = None,
        max_number_of_repayments: int | None = None,
        description: str | None = None,
    ) -> int:
        return await self._run(
            _Calls.create_loan_product(
                name,
                short_name,
                currency_code,
                principal_cents,
                number_of_repayments,
                min_number_of_repayments,
                max_number_of_repayments,
                description,
            )
        )

    async def submit_loan(
        self,
        *,
        client_id: int,
        product_id: int,
        principal_cents: int,
        installments: int,
        submitted_on: date,
        expected_disbursement_on: date,
        first_repayment_on: date | None = None,
        external_id: str | None = None,
    ) -> int:
        return await self._run(
            _Calls.submit_loan(
                client_id,
                product_id,
                principal_cents,
                installments,
                submitted_on,
                expected_disbursement_on,
                first_repayment_on,
                external_id,
            )
        )

    async def approve_loan(self, loan_id: int, *, on: date) -> Any:
        return await self._run(_Calls.approve_loan(loan_id, on))

    async def disburse_loan(self, loan_id: int, *, on: date) -> Any:
        return await self._run(_Calls.disburse_loan(loan_id, on))

    async def get_loan(
        self, loan_id: int, *, associations: Sequence[str] = ("repaymentSchedule", "transactions")
    ) -> dict[str, Any]:
        return await self._run(_Calls.get_loan(loan_id, associations))

    async def make_repayment(
        self,
        loan_id: int,
        *,
        amount_cents: int,
        on: date,
        payment_type_id: int = 1,
        note: str | None = None,
    ) -> Any:
        return await self._run(
            _Calls.make_repayment(loan_id, amount_cents, on, payment_type_id, note)
        )

    async def list_payment_types(self) -> list[dict[str, Any]]:
        return await self._run(_Calls.list_payment_types())

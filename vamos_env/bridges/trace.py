"""The tool trace of an outside agent, rebuilt from its served twins' request log.

An outside agent runs its own tools: the grader sees only the HTTP requests the call's
served twins answered (``ServedTwins.log``). ``rebuild_trace`` turns that log into tool
events with the meanings of the 16 tools, at their times on the call's clock, in the
shape the grader reads (``RebuiltEvent.turn_parts`` gives a ``ToolCall`` and a
``ToolResult``; the ``writes`` are ``ServiceWrite.as_dict`` dicts).

**Grouping.** Requests less than ``burst_s`` apart on the call's clock form one burst
(one tool run of the agent); a burst is cut into events at each lookup and each write
that starts a tool's work. Reads just before a write in the same burst are that write's
preparation; reads after it are its follow-up (a confirmation, a fresh balance).

**Meanings.**

- ``verify_caller``: a lookup, i.e. a Stripe customer search on
  ``metadata['account_number']`` and/or a Fineract client by ``externalId``, with the
  reads that check the second factor the caller gave (the card list when the caller had
  said four digits, the bill list when it had said an amount).
- ``make_payment``: ``POST /v1/invoices/{id}/pay`` with a ``payment_method``.
- ``request_due_date_extension``: ``POST /v1/invoices/{id}`` with ``due_date`` (and the
  customer's ``last_extension_on`` note after it).
- ``set_paperless_billing``: ``POST /v1/customers/{id}`` with ``metadata[paperless]``.
- ``create_payment_arrangement``: a Fineract loan submitted (then approved, disbursed,
  recorded on the customer, past-due bills tagged and paid out of band).
- ``modify_payment_arrangement``: a Fineract repayment.
- ``transfer_to_human``: a Twilio call update whose TwiML has a ``<Dial>``;
  ``end_call``: one with ``Status=completed`` or ``<Hangup/>`` (not a tool event: it ends
  the call; ``tool_events`` leaves it out).
- ``read_account``: any other reads of account data (the read tools cannot be told
  apart: they share requests and an agent caches). ``other_write``: a write none of the
  tools makes (the cross-check reports it).

**Verification (the rule).** An outside agent has no verify request: it looks the account
up and compares the name and the factor itself, which the log cannot show. So a lookup is
a *successful* verification only if it is for the caller's own account number and, before
the lookup (strictly earlier on the call's clock), the caller had said: that account number
(digits, as numerals or words), a name that matches the name on file by the rule of
``verify_caller`` (same number of parts, same Soundex code each), and one true second
factor (the last four of a card on file, the postal code, or the latest bill's total).
Anything else is a failed attempt; the third failure locks verification and every later
lookup is a failed, locked-out attempt, as in-process. What the agent says cannot change
the outcome: only what the caller said and which account was looked up count.

**The gate.** An event reads or writes the verified account only when verification has
succeeded and every customer or client its requests touch is the caller's; otherwise it
is recorded with ``verified=False``, so any successful ``read_account`` (or write) before
verification, or of another account, is a gate breach for ``grade_gate``, exactly as an
in-process tool would be.

**Not recoverable.** Which read tool was meant (all are ``read_account``) and a read
served from the agent's own cache (no request at all); refusals the agent decides itself
(a partial amount, a policy refusal of an extension, paperless already set: reads only);
the words of ``verify_caller``'s name and factor and of ``transfer_to_human``'s reason;
a verification the agent rejected although the caller gave the right answers (it is
counted as successful) and a name spelled letter by letter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Literal

from vamos_env.bridges.served import LoggedRequest
from vamos_env.clock import from_unix
from vamos_env.envs.energy.tools.verification import name_parts, soundex
from vamos_env.grading.ledger import customer_with_number
from vamos_env.speech import find_amounts, find_digit_strings
from vamos_env.twins.telephony import read_twiml
from vamos_env.types import ToolCall, ToolResult

DEFAULT_BURST_S = 0.5
MAX_VERIFICATION_FAILURES = 3
READ_ACCOUNT = "read_account"
OTHER_WRITE = "other_write"
END_CALL = "end_call"
VERIFY = "verify_caller"

Outcome = Literal["succeeded", "failed", "refused"]

_FINERACT = "/fineract-provider/api/v1"
_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"]
    )
}  # fmt: skip
_SEARCH_NUMBER = re.compile(r"account_number'?\]?\s*:\s*['\"]([^'\"]+)['\"]")
_DIGIT_RUN = re.compile(r"\d+(?:-\d+)*")

# Write kinds -> the tool meaning they start; kinds that continue an open event.
_STARTS = {
    "pay": "make_payment",
    "due_date": "request_due_date_extension",
    "paperless": "set_paperless_billing",
    "loan_submit": "create_payment_arrangement",
    "loan_approve": "create_payment_arrangement",
    "loan_disburse": "create_payment_arrangement",
    "customer_arrangement": "create_payment_arrangement",
    "invoice_arrangement": "create_payment_arrangement",
    "pay_oob": "create_payment_arrangement",
    "repayment": "modify_payment_arrangement",
    "extension_note": OTHER_WRITE,
    "other_write": OTHER_WRITE,
}
_CONTINUES = {
    "extension_note": "request_due_date_extension",
    "loan_approve": "create_payment_arrangement",
    "loan_disburse": "create_payment_arrangement",
    "customer_arrangement": "create_payment_arrangement",
    "invoice_arrangement": "create_payment_arrangement",
    "pay_oob": "create_payment_arrangement",
}


# --- who the caller is -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallerIdentity:
    """The caller's true account and answers, as the grader knows them."""

    account_number: str
    name: str
    card_last4s: frozenset[str] = frozenset()
    postal_code: str = ""
    last_bill_total_cents: int | None = None
    customer_id: str = ""
    fineract_client_id: int | None = None

    @classmethod
    def from_twins(cls, twins: Any, account_number: str) -> CallerIdentity | None:
        """Read from a call's (pristine) twins, as the ledger reads account data."""
        billing = twins.billing.state
        customer = customer_with_number(billing, account_number)
        if customer is None:
            return None
        cid = str(customer["id"])
        cards = frozenset(
            str((pm.get("card") or {}).get("last4") or "")
            for pm in billing.payment_methods.values()
            if pm.get("customer") == cid
        ) - {""}
        invoices = [
            i
            for i in billing.invoices.values()
            if i.get("customer") == cid and i.get("status") not in ("draft", "void")
        ]
        latest = (
            max(invoices, key=lambda i: (int(i.get("created") or 0), i.get("number") or ""))
            if invoices
            else None
        )
        client = next(
            (c for c in twins.loans.state.clients.values() if c.external_id == account_number),
            None,
        )
        return cls(
            account_number=account_number,
            name=str(customer.get("name") or ""),
            card_last4s=cards,
            postal_code=str((customer.get("address") or {}).get("postal_code") or ""),
            last_bill_total_cents=None if latest is None else int(latest.get("total") or 0),
            customer_id=cid,
            fineract_client_id=None if client is None else int(client.id),
        )

    @property
    def subjects(self) -> frozenset[tuple[str, str]]:
        out = {("stripe", self.customer_id)} if self.customer_id else set()
        if self.fineract_client_id is not None:
            out.add(("fineract", str(self.fineract_client_id)))
        return frozenset(out)


@dataclass(slots=True)
class _Heard:
    """What the caller said up to some time, in the forms verification compares."""

    digits: set[str] = field(default_factory=set)  # digit runs without dashes, and their parts
    runs: set[str] = field(default_factory=set)  # whole runs without dashes
    amounts: set[int] = field(default_factory=set)
    parts: list[str] = field(default_factory=list)  # name parts of everything said, in order

    def add(self, text: str) -> None:
        runs = [m.value for m in find_digit_strings(text)] + _DIGIT_RUN.findall(text)
        for run in runs:
            whole = run.replace("-", "")
            self.runs.add(whole)
            self.digits.add(whole)
            self.digits.update(p for p in run.split("-") if p)
        for amount in find_amounts(text):
            self.amounts.update(amount.readings)
        self.parts.extend(name_parts(text))

    def factor_digits(self, account_number: str) -> set[str]:
        """Digit groups said outside the account number itself."""
        own = account_number.replace("-", "")
        parts = set(account_number.split("-"))
        return {d for d in self.digits if d != own and d not in parts} | (
            {d for d in self.runs if d != own} - {own}
        )

    def said_name(self, name: str) -> bool:
        wanted = [soundex(p) for p in name_parts(name)]
        if not wanted:
            return False
        codes = [soundex(p) for p in self.parts]
        n = len(wanted)
        return any(codes[i : i + n] == wanted for i in range(len(codes) - n + 1))

    def verifies(self, identity: CallerIdentity) -> bool:
        if identity.account_number.replace("-", "") not in self.runs:
            return False
        if not self.said_name(identity.name):
            return False
        groups = self.factor_digits(identity.account_number)
        if identity.card_last4s & groups:
            return True
        if identity.postal_code and identity.postal_code in groups:
            return True
        total = identity.last_bill_total_cents
        return total is not None and total in self.amounts


def _heard_before(words: Sequence[tuple[float, str]], time_s: float) -> _Heard:
    heard = _Heard()
    for at, text in words:
        if at < time_s:
            heard.add(text)
    return heard


# --- the rebuilt event ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RebuiltEvent:
    """One tool meaning recovered from the log: when, what, how it went, what it wrote."""

    time_s: float
    call_id: str
    tool: str  # one of the 16 tools, or read_account / other_write / end_call
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool  # the result has no "error" (a verification that failed is ok with its status)
    outcome: Outcome
    verified: bool  # the caller was verified and only its account was touched
    writes: tuple[dict[str, Any], ...] = ()
    requests: tuple[int, ...] = ()  # positions in the log
    error_code: str | None = None

    @property
    def is_tool(self) -> bool:
        return self.tool != END_CALL

    def turn_parts(self) -> tuple[ToolCall, ToolResult]:
        """The event as a tool turn's call and result, for the transcript the grader reads."""
        return (
            ToolCall(call_id=self.call_id, name=self.tool, arguments=dict(self.arguments)),
            ToolResult(
                call_id=self.call_id,
                name=self.tool,
                ok=self.ok,
                result=dict(self.result),
                writes=[dict(w) for w in self.writes],
                verified=self.verified,
            ),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "time_s": self.time_s,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "ok": self.ok,
            "outcome": self.outcome,
            "verified": self.verified,
            "writes": [dict(w) for w in self.writes],
            "requests": list(self.requests),
            "error_code": self.error_code,
        }

    def recoverable(self) -> dict[str, Any]:
        """The fields an in-process trace entry can be compared on (``recoverable_view``)."""
        return recoverable_view(self.tool, self.arguments, self.result, self.ok, self.verified,
                                self.writes)  # fmt: skip


def tool_events(events: Iterable[RebuiltEvent]) -> list[RebuiltEvent]:
    """The events that are tool calls (the hang-up is not)."""
    return [e for e in events if e.is_tool]


def call_ended_at(events: Iterable[RebuiltEvent]) -> float | None:
    """When the agent hung up through the call-control route (None when it did not)."""
    return next((e.time_s for e in events if e.tool == END_CALL and e.ok), None)


# --- the comparable view of a trace entry ------------------------------------------------------

_RESULT_KEYS: dict[str, tuple[str, ...]] = {
    VERIFY: ("status", "attempts_remaining"),
    "make_payment": ("paid", "bill_id", "amount_paid_cents", "card_last4", "decline_code"),
    "request_due_date_extension": ("extended", "bill_id", "new_due_date"),
    "set_paperless_billing": ("paperless", "changed"),
    "create_payment_arrangement": ("created", "arrangement_id", "installments",
                                   "financed_cents", "first_due_date"),
    "modify_payment_arrangement": ("recorded", "arrangement_id", "amount_cents",
                                   "payment_date"),
    "transfer_to_human": ("status",),
}  # fmt: skip
_WRITE_TOOLS = frozenset(_RESULT_KEYS) - {VERIFY, "transfer_to_human"}


def recoverable_view(
    tool: str,
    arguments: Mapping[str, Any] | Any,
    result: Mapping[str, Any],
    ok: bool,
    verified: bool,
    writes: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """What of a tool call a request log can show, in one comparable dict.

    Works on an in-process ``TraceEntry``'s fields and on a ``RebuiltEvent`` alike: a call
    that wrote nothing (and is neither a verification nor a transfer) is a ``read_account``,
    whatever tool it was, and only its meaning and gate state are comparable.
    """
    args = dict(arguments) if isinstance(arguments, Mapping) else {}
    written = [dict(w) for w in writes]
    if tool == VERIFY:
        return {
            "tool": VERIFY,
            "arguments": {"account_number": args.get("account_number")},
            "result": {k: result[k] for k in _RESULT_KEYS[VERIFY] if k in result},
            "outcome": "succeeded" if result.get("status") == "verified" else "failed",
            "verified": verified,
        }
    if tool == "transfer_to_human":
        return {"tool": tool, "outcome": "succeeded" if ok else "refused", "verified": verified}
    if tool not in _WRITE_TOOLS or not written:
        if tool == OTHER_WRITE:
            return {"tool": tool, "writes": written, "verified": verified}
        return {"tool": READ_ACCOUNT, "verified": verified}
    kept = {k: result[k] for k in _RESULT_KEYS[tool] if k in result}
    return {
        "tool": tool,
        "arguments": _recoverable_arguments(tool, args, written),
        "result": kept,
        "outcome": "succeeded" if ok else "refused",
        "verified": verified,
        "writes": written,
    }


def _recoverable_arguments(
    tool: str, args: dict[str, Any], writes: list[dict[str, Any]]
) -> dict[str, Any]:
    first = writes[0]
    if tool == "make_payment":
        return {k: args.get(k) for k in ("bill_id", "payment_method_id", "amount_cents")}
    if tool == "request_due_date_extension":
        return {"bill_id": args.get("bill_id"), "days": args.get("days")}
    if tool == "set_paperless_billing":
        return {"enabled": args.get("enabled")}
    if tool == "create_payment_arrangement":
        return {"installments": args.get("installments")}
    if tool == "modify_payment_arrangement":
        on = args.get("payment_date") or first.get("transaction_date")
        return {"amount_cents": args.get("amount_cents"), "payment_date": on}
    return {}


# --- reading requests ---------------------------------------------------------------------


def _cents(value: Any) -> int | None:
    try:
        cents = Decimal(str(value)) * 100
    except (InvalidOperation, ValueError):
        return None
    return int(cents.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _fineract_day(value: Any) -> str | None:
    """Fineract's ``dd MMMM yyyy`` (or ISO, or ``[y, m, d]``) as an ISO date."""
    try:
        if isinstance(value, list) and len(value) == 3:
            return date(int(value[0]), int(value[1]), int(value[2])).isoformat()
        text = str(value).strip()
        parts = text.split()
        if len(parts) == 3 and parts[1].lower() in _MONTHS:
            return date(int(parts[2]), _MONTHS[parts[1].lower()], int(parts[0])).isoformat()
        return date.fromisoformat(text[:10]).isoformat()
    except (TypeError, ValueError):
        return None


def _unix_day(value: Any) -> str | None:
    try:
        return from_unix(int(str(value))).date().isoformat()
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _body(req: LoggedRequest) -> dict[str, Any]:
    return req.body if isinstance(req.body, dict) else {}


def _metadata(req: LoggedRequest) -> dict[str, str]:
    meta = _body(req).get("metadata")
    return {str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {}


def _fineract_path(req: LoggedRequest) -> str:
    return req.path[len(_FINERACT) :] if req.path.startswith(_FINERACT) else ""


def _lookup_number(req: LoggedRequest) -> str | None:
    if req.method != "GET":
        return None
    if req.service == "stripe" and req.path == "/v1/customers/search":
        match = _SEARCH_NUMBER.search(str(req.query.get("query") or ""))
        return match.group(1) if match else None
    if req.service == "fineract" and _fineract_path(req) == "/clients":
        number = req.query.get("externalId")
        return str(number) if number else None
    return None


def _kind(req: LoggedRequest) -> str:
    if req.service == "twilio":
        return "twilio"
    if _lookup_number(req) is not None:
        return "lookup"
    if req.method in ("GET", "HEAD"):
        return "read"
    if req.service == "stripe":
        parts = req.path.strip("/").split("/")
        meta = _metadata(req)
        if len(parts) == 4 and parts[1] == "invoices" and parts[3] == "pay":
            return "pay_oob" if _true(_body(req).get("paid_out_of_band")) else "pay"
        if len(parts) == 3 and parts[1] == "invoices":
            if "due_date" in _body(req):
                return "due_date"
            if "arrangement_id" in meta:
                return "invoice_arrangement"
        if len(parts) == 3 and parts[1] == "customers":
            if "paperless" in meta:
                return "paperless"
            if "arrangement_id" in meta:
                return "customer_arrangement"
            if "last_extension_on" in meta:
                return "extension_note"
        return "other_write"
    if req.service == "fineract" and req.method == "POST":
        path = _fineract_path(req)
        command = str(req.query.get("command") or "")
        if path == "/loans" and not command:
            return "loan_submit"
        if re.fullmatch(r"/loans/\d+", path) and command in ("approve", "disburse"):
            return f"loan_{command}"
        if re.fullmatch(r"/loans/\d+/transactions", path) and command == "repayment":
            return "repayment"
    return "other_write"


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of an answer: itself, and the items of a list or a Fineract page."""
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    if not isinstance(value, dict):
        return []
    out = [value]
    for key in ("data", "pageItems"):
        items = value.get(key)
        if isinstance(items, list):
            out.extend(v for v in items if isinstance(v, dict))
    return out


def _error_code(req: LoggedRequest) -> tuple[str | None, str | None]:
    """(error code, decline code) of a refused request, as the clients would report them."""
    body = req.response if isinstance(req.response, dict) else {}
    if req.service == "stripe":
        error = body.get("error")
        if not isinstance(error, dict):
            return None, None
        return error.get("code"), error.get("decline_code")
    if req.service == "fineract":
        errors = [e for e in body.get("errors") or [] if isinstance(e, dict)]
        first = errors[0].get("userMessageGlobalisationCode") if errors else None
        return str(first or body.get("userMessageGlobalisationCode") or ""), None
    code = body.get("code")
    return (None if code is None else str(code)), None


class _Ledger:
    """What the log has shown so far: objects by id, and whose account each belongs to."""

    def __init__(self) -> None:
        self.invoices: dict[str, dict[str, Any]] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        self.loans: dict[str, dict[str, Any]] = {}  # id -> {"client": ..., "principal_cents"}

    def learn(self, req: LoggedRequest) -> None:
        if not req.ok:
            return
        for obj in _objects(req.response):
            kind, oid = obj.get("object"), obj.get("id")
            if kind == "invoice" and oid:
                self.invoices[str(oid)] = obj
            elif kind == "payment_method" and oid:
                self.cards[str(oid)] = obj
        if req.service != "fineract":
            return
        path = _fineract_path(req)
        answer = req.response if isinstance(req.response, dict) else {}
        if path == "/loans" and req.method == "POST" and answer.get("loanId") is not None:
            body = _body(req)
            self.loans[str(answer["loanId"])] = {
                "client": str(body.get("clientId") or answer.get("clientId") or ""),
                "principal_cents": _cents(body.get("principal")),
            }
        loan = re.fullmatch(r"/loans/(\d+)", path)
        if loan and req.method == "GET" and answer:
            known = self.loans.setdefault(loan.group(1), {})
            if answer.get("clientId") is not None:
                known["client"] = str(answer["clientId"])
            principal = answer.get("approvedPrincipal", answer.get("principal"))
            if principal is not None and known.get("principal_cents") is None:
                known["principal_cents"] = _cents(principal)

    def subjects(self, req: LoggedRequest) -> set[tuple[str, str]]:
        """The accounts (Stripe customers, Fineract clients) a request touched."""
        out: set[tuple[str, str]] = set()
        if req.service == "stripe":
            parts = req.path.strip("/").split("/")
            if len(parts) >= 3 and parts[1] == "customers" and parts[2] != "search":
                out.add(("stripe", parts[2]))
            if len(parts) >= 3 and parts[1] == "invoices":
                known = self.invoices.get(parts[2])
                if known is not None and known.get("customer"):
                    out.add(("stripe", str(known["customer"])))
            for source in (req.query, _body(req)):
                if isinstance(source.get("customer"), str):
                    out.add(("stripe", source["customer"]))
            for obj in _objects(req.response):
                if obj.get("object") == "customer" and obj.get("id"):
                    out.add(("stripe", str(obj["id"])))
                elif isinstance(obj.get("customer"), str):
                    out.add(("stripe", obj["customer"]))
        elif req.service == "fineract":
            path = _fineract_path(req)
            client = re.fullmatch(r"/clients/(\d+).*", path)
            if client:
                out.add(("fineract", client.group(1)))
            if path == "/clients":
                for obj in _objects(req.response):
                    if obj.get("externalId") is not None and obj.get("id") is not None:
                        out.add(("fineract", str(obj["id"])))
            loan = re.fullmatch(r"/loans/(\d+).*", path)
            if loan and self.loans.get(loan.group(1), {}).get("client"):
                out.add(("fineract", self.loans[loan.group(1)]["client"]))
            for source in (_body(req), req.response if isinstance(req.response, dict) else {}):
                if source.get("clientId") is not None:
                    out.add(("fineract", str(source["clientId"])))
        return out

    def context(self, req: LoggedRequest, kind: str) -> dict[str, Any]:
        """What a write's result reports besides the write: the card, the old due date."""
        out: dict[str, Any] = {}
        parts = req.path.strip("/").split("/")
        if kind in ("pay", "due_date") and len(parts) >= 3:
            invoice = self.invoices.get(parts[2], {})
            out["due_date"] = _unix_day(invoice["due_date"]) if invoice.get("due_date") else None
            out["amount_remaining"] = invoice.get("amount_remaining")
        if kind == "pay":
            card = self.cards.get(str(_body(req).get("payment_method")), {})
            out["card_last4"] = (card.get("card") or {}).get("last4")
        return out

    def write(self, req: LoggedRequest, kind: str) -> dict[str, Any] | None:
        """The request as the ``ServiceWrite`` an in-process tool would have logged."""
        if kind in ("read", "lookup", "twilio"):
            return None
        body = _body(req)
        values: dict[str, Any] = {}
        resource = ""
        parts = req.path.strip("/").split("/")
        loan_path = re.fullmatch(r"/loans/(\d+).*", _fineract_path(req))
        if kind in ("pay", "pay_oob"):
            service, operation, resource = "stripe", "invoices.pay", parts[2]
            owed = self.invoices.get(resource, {}).get("amount_remaining")
            if kind == "pay":
                values = {"payment_method": body.get("payment_method")}
            else:
                values = {"paid_out_of_band": True}
            values["amount_cents"] = None if owed is None else int(owed)
        elif kind in ("due_date", "invoice_arrangement"):
            service, operation, resource = "stripe", "invoices.update", parts[2]
            if "due_date" in body:
                values["due_date"] = _unix_day(body["due_date"])
            if _metadata(req):
                values["metadata"] = _metadata(req)
        elif kind in ("paperless", "customer_arrangement", "extension_note"):
            service, operation, resource = "stripe", "customers.update", parts[2]
            values = {"metadata": _metadata(req)}
        elif kind == "loan_submit":
            service, operation = "fineract", "loans.submit"
            answer = req.response if isinstance(req.response, dict) else {}
            resource = str(answer["loanId"]) if req.ok and answer.get("loanId") else ""
            values = {
                "client_id": _int(body.get("clientId")),
                "product_id": _int(body.get("productId")),
                "principal_cents": _cents(body.get("principal")),
                "installments": _int(body.get("numberOfRepayments")),
                "submitted_on": _fineract_day(body.get("submittedOnDate")),
                "first_repayment_on": _fineract_day(body.get("repaymentsStartingFromDate")),
            }
        elif kind == "loan_approve" and loan_path:
            service, operation, resource = "fineract", "loans.approve", loan_path.group(1)
            values = {"approved_on": _fineract_day(body.get("approvedOnDate"))}
        elif kind == "loan_disburse" and loan_path:
            service, operation, resource = "fineract", "loans.disburse", loan_path.group(1)
            principal = self.loans.get(resource, {}).get("principal_cents")
            amount = body.get("transactionAmount")
            values = {
                "disbursed_on": _fineract_day(body.get("actualDisbursementDate")),
                "amount_cents": _cents(amount) if amount is not None else principal,
            }
        elif kind == "repayment" and loan_path:
            service, operation, resource = "fineract", "loans.repayment", loan_path.group(1)
            values = {
                "amount_cents": _cents(body.get("transactionAmount")),
                "transaction_date": _fineract_day(body.get("transactionDate")),
            }
        else:
            service = req.service
            operation, resource, values = f"{req.method} {req.path}", req.path, {}
        if not req.ok:
            code, decline = _error_code(req)
            values["error_code"] = code
            if decline:
                values["decline_code"] = decline
        return {
            "service": service,
            "operation": operation,
            "resource": str(resource),
            "outcome": "succeeded" if req.ok else "failed",
            **values,
        }


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --- grouping -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Draft:
    meaning: str
    indices: list[int]
    number: str | None = None  # a lookup's account number
    customer: str | None = None  # the customer a lookup found
    factor_reads: bool = False
    has_write: bool = False
    time_s: float = 0.0


def _group(
    log: Sequence[LoggedRequest],
    kinds: list[str],
    words: Sequence[tuple[float, str]],
    burst_s: float,
    identity: CallerIdentity,
) -> list[_Draft]:
    drafts: list[_Draft] = []
    current: _Draft | None = None
    last_time: float | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            drafts.append(current)
        current = None

    for i, req in enumerate(log):
        if last_time is not None and req.time_s - last_time > burst_s:
            close()
        last_time = req.time_s
        kind = kinds[i]
        if kind == "twilio":
            close()
            drafts.append(_Draft("twilio", [i]))
            continue
        if kind == "lookup":
            number = _lookup_number(req)
            if (
                current is not None
                and current.meaning == VERIFY
                and current.number == number
                and not current.factor_reads
            ):
                current.indices.append(i)
            else:
                close()
                current = _Draft(VERIFY, [i], number=number, time_s=req.time_s)
            if req.service == "stripe" and current.customer is None:
                found = [o for o in _objects(req.response) if o.get("object") == "customer"]
                if found:
                    current.customer = str(found[0].get("id"))
            continue
        if kind == "read":
            if current is None:
                current = _Draft(READ_ACCOUNT, [i])
            elif current.meaning == VERIFY:
                if _factor_read(req, current, words, identity):
                    current.indices.append(i)
                    current.factor_reads = True
                else:
                    close()
                    current = _Draft(READ_ACCOUNT, [i])
            else:
                current.indices.append(i)
            continue
        meaning = _STARTS[kind]
        continues = _CONTINUES.get(kind)
        if current is not None and continues is not None and current.meaning == continues:
            current.indices.append(i)
        elif current is not None and current.meaning == READ_ACCOUNT and not current.has_write:
            current.meaning = meaning
            current.indices.append(i)
        else:
            close()
            current = _Draft(meaning, [i])
        current.has_write = True
    close()
    return drafts


def _factor_read(
    req: LoggedRequest,
    draft: _Draft,
    words: Sequence[tuple[float, str]],
    identity: CallerIdentity,
) -> bool:
    """A read that checks a second factor the caller had given before the lookup."""
    if req.service != "stripe" or draft.customer is None:
        return False
    heard = _heard_before(words, draft.time_s)
    groups = heard.factor_digits(draft.number or identity.account_number)
    cards = f"/v1/customers/{draft.customer}/payment_methods"
    if req.path == cards:
        return any(len(g) == 4 for g in groups)
    if req.path == "/v1/invoices" and req.query.get("customer") == draft.customer:
        return bool(heard.amounts)
    if req.path.startswith("/v1/invoices/") and req.path.endswith("/lines"):
        return draft.factor_reads and bool(heard.amounts)
    return False


# --- the rebuild --------------------------------------------------------------------------------


def rebuild_trace(
    log: Sequence[LoggedRequest],
    *,
    caller_words: Sequence[tuple[float, str]],
    identity: CallerIdentity,
    burst_s: float = DEFAULT_BURST_S,
) -> list[RebuiltEvent]:
    """The tool events of a call, rebuilt from its served twins' request log.

    ``caller_words``: what the caller said, as ``(time_s, text)`` on the same clock as the
    log (its own words, not background speech); ``identity``: the caller's true account.
    """
    kinds = [_kind(req) for req in log]
    ledger = _Ledger()
    writes: dict[int, dict[str, Any]] = {}
    context: dict[int, dict[str, Any]] = {}
    subjects: list[set[tuple[str, str]]] = []
    for i, req in enumerate(log):
        subjects.append(ledger.subjects(req))
        write = ledger.write(req, kinds[i])
        if write is not None:
            writes[i] = write
            context[i] = ledger.context(req, kinds[i])
        ledger.learn(req)
        subjects[i] |= ledger.subjects(req)

    drafts = _group(log, kinds, caller_words, burst_s, identity)
    events: list[RebuiltEvent] = []
    failures = 0
    verified = False
    own = identity.subjects
    for draft in drafts:
        requests = [log[i] for i in draft.indices]
        time_s = requests[0].time_s
        touched = set().union(*(subjects[i] for i in draft.indices))
        event_writes = tuple(writes[i] for i in draft.indices if i in writes)
        failed = next((r for r in requests if not r.ok), None)
        ok = failed is None
        code = _error_code(failed)[0] if failed is not None else None
        outcome: Outcome = "succeeded" if ok else _refusal(failed)
        meaning = draft.meaning
        call_id = f"http_{len(events) + 1}"
        result: dict[str, Any]
        if meaning == "twilio":
            update = read_twiml(str(_body(requests[0]).get("Twiml") or ""))
            status = str(_body(requests[0]).get("Status") or "")
            if requests[0].method != "POST":
                continue
            if update.action == "transfer":
                tool, args, result = (
                    "transfer_to_human",
                    {"target": update.target},
                    {"status": "transferring"},
                )
            elif update.action == "hang_up" or status == "completed":
                tool, args, result = END_CALL, {}, {"status": "completed"}
            else:
                continue
            if not ok:
                result = {"error": f"the call-control service refused it ({code})"}
            events.append(RebuiltEvent(time_s, call_id, tool, args, result, ok, outcome,
                                       verified, (), tuple(draft.indices), code))  # fmt: skip
            continue
        if meaning == VERIFY:
            number = draft.number or ""
            before = verified
            if not ok:
                result = {"error": "The account lookup failed; nothing was verified."}
                outcome = "failed"
            elif failures >= MAX_VERIFICATION_FAILURES:
                result, outcome = {"status": "locked_out"}, "failed"
            elif number == identity.account_number and _heard_before(caller_words, time_s).verifies(
                identity
            ):
                result, outcome = {"status": "verified"}, "succeeded"
                verified = True
            else:
                failures += 1
                outcome = "failed"
                if failures >= MAX_VERIFICATION_FAILURES:
                    result = {"status": "locked_out"}
                else:
                    result = {
                        "status": "not_verified",
                        "attempts_remaining": MAX_VERIFICATION_FAILURES - failures,
                    }
            events.append(RebuiltEvent(time_s, call_id, VERIFY, {"account_number": number},
                                       result, ok, outcome, before, event_writes,
                                       tuple(draft.indices), code))  # fmt: skip
            continue
        if meaning == READ_ACCOUNT and not touched:
            continue  # catalogue reads (loan products, payment types): no account data
        on_own = verified and touched <= own
        steps = [(log[i], kinds[i], writes.get(i), context.get(i, {})) for i in draft.indices]
        args, result = _meaning_of(meaning, steps, ok, code)
        events.append(RebuiltEvent(time_s, call_id, meaning, args, result, ok, outcome, on_own,
                                   event_writes, tuple(draft.indices), code))  # fmt: skip
    return events


Step = tuple[LoggedRequest, str, "dict[str, Any] | None", dict[str, Any]]


def _meaning_of(
    meaning: str, steps: list[Step], ok: bool, code: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments and the result of a write meaning, as far as its requests show them."""
    failure = {"error": f"The service refused the request ({code or 'no code'})."}
    firsts: dict[str, Step] = {}
    for step in steps:
        firsts.setdefault(step[1], step)
    if meaning == "make_payment" and "pay" in firsts:
        req, _, write, ctx = firsts["pay"]
        bill = req.path.strip("/").split("/")[2]
        owed = (write or {}).get("amount_cents")
        args = {"bill_id": bill, "payment_method_id": _body(req).get("payment_method"),
                "amount_cents": owed}  # fmt: skip
        answer = req.response if isinstance(req.response, dict) else {}
        if ok:
            result = {
                "paid": True,
                "bill_id": bill,
                "amount_paid_cents": int(answer.get("amount_paid") or owed or 0),
                "card_last4": ctx.get("card_last4"),
                "amount_remaining_cents": int(answer.get("amount_remaining") or 0),
            }
        else:
            decline = (write or {}).get("decline_code") or (write or {}).get("error_code")
            result = {
                **failure,
                "paid": False,
                "decline_code": decline or "card_declined",
                "card_last4": ctx.get("card_last4"),
                "amount_remaining_cents": owed,
            }
        return args, result
    if meaning == "request_due_date_extension" and "due_date" in firsts:
        req, _, write, ctx = firsts["due_date"]
        bill = req.path.strip("/").split("/")[2]
        new_due, old_due = (write or {}).get("due_date"), ctx.get("due_date")
        days = None
        if new_due and old_due:
            days = (date.fromisoformat(new_due) - date.fromisoformat(old_due)).days
        args = {"bill_id": bill, "days": days}
        if ok:
            result = {"extended": True, "bill_id": bill, "new_due_date": new_due,
                      "due_date": old_due, "days": days}  # fmt: skip
        else:
            result = {**failure, "extended": False, "bill_id": bill,
                      "requested_due_date": new_due}  # fmt: skip
        return args, result
    if meaning == "set_paperless_billing" and "paperless" in firsts:
        req = firsts["paperless"][0]
        enabled = _metadata(req).get("paperless") == "true"
        return {"enabled": enabled}, ({"paperless": enabled, "changed": True} if ok else failure)
    if meaning == "create_payment_arrangement":
        submit = firsts.get("loan_submit")
        body = _body(submit[0]) if submit else {}
        write = (submit[2] if submit else None) or {}
        installments = write.get("installments")
        if ok and submit is not None:
            moved = [(w or {}).get("resource") for _, k, w, _ in steps if k == "pay_oob"]
            result = {
                "created": True,
                "arrangement_id": write.get("resource") or None,
                "installments": installments,
                "financed_cents": write.get("principal_cents"),
                "first_due_date": _fineract_day(body.get("repaymentsStartingFromDate")),
                "bills_moved": moved,
            }
        else:
            result = {**failure, "created": False}
        return {"installments": installments}, result
    if meaning == "modify_payment_arrangement" and "repayment" in firsts:
        req, _, write, _ = firsts["repayment"]
        write = write or {}
        amount, on = write.get("amount_cents"), write.get("transaction_date")
        args = {"amount_cents": amount, "payment_date": on}
        if ok:
            answer = req.response if isinstance(req.response, dict) else {}
            tx = answer.get("resourceId")
            result = {"recorded": True, "arrangement_id": write.get("resource"),
                      "amount_cents": amount, "payment_date": on,
                      "transaction_id": None if tx is None else str(tx)}  # fmt: skip
        else:
            result = {**failure, "recorded": False, "engine_code": code}
        return args, result
    if meaning == OTHER_WRITE:
        req = steps[0][0]
        return {"method": req.method, "path": req.path}, ({} if ok else failure)
    return {}, ({} if ok else failure)


def _refusal(req: LoggedRequest | None) -> Outcome:
    return "refused" if req is not None and 400 <= req.status < 500 else "failed"

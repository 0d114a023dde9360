"""Tool schemas and bad arguments: every refusal names the argument and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from vamos_env.envs.energy.seed import SeedReport
from vamos_env.envs.energy.session import CallSession, with_displays
from vamos_env.envs.energy.tools import TOOL_NAMES, TOOLS, tool_schemas
from vamos_env.envs.energy.world import Manifest
from vamos_env.twins.snapshot import Twins

DOMAIN_TOOLS = {
    "verify_caller": {"account_number", "name_on_account", "second_factor"},
    "get_account": set(),
    "list_bills": set(),
    "get_bill": {"bill_id"},
    "explain_bill": {"bill_id"},
    "compare_bills": {"bill_id", "compare_to_bill_id"},
    "get_payment_history": set(),
    "make_payment": {"bill_id", "payment_method_id", "amount_cents"},
    "quote_payment_arrangement": {"installments"},
    "create_payment_arrangement": {"installments"},
    "get_payment_arrangement": set(),
    "modify_payment_arrangement": {"amount_cents", "payment_date"},
    "request_due_date_extension": {"bill_id", "days"},
    "set_paperless_billing": {"enabled"},
    "get_supplier_info": set(),
    "transfer_to_human": {"reason"},
}


def test_exactly_the_sixteen_tools_with_their_arguments() -> None:
    assert set(TOOL_NAMES) == set(DOMAIN_TOOLS)
    assert len(TOOL_NAMES) == 16
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        params = function["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert set(params["properties"]) == DOMAIN_TOOLS[function["name"]]
        assert len(function["description"]) > 60
        for prop in params["properties"].values():
            assert "title" not in prop
            assert prop.get("description"), (function["name"], prop)
        json.dumps(schema)
    by_name = {s["function"]["name"]: s["function"]["parameters"] for s in schemas}
    assert by_name["modify_payment_arrangement"]["required"] == ["amount_cents"]
    assert by_name["modify_payment_arrangement"]["properties"]["payment_date"]["type"] == "string"
    assert by_name["make_payment"]["properties"]["amount_cents"]["type"] == "integer"
    assert by_name["set_paperless_billing"]["properties"]["enabled"]["type"] == "boolean"
    # No tool takes an account id.
    assert not any("account_id" in p["properties"] for p in by_name.values())


def test_descriptions_state_preconditions_and_units() -> None:
    manual = {s["function"]["name"]: s["function"]["description"] for s in tool_schemas()}
    for name in TOOL_NAMES:
        if TOOLS[name].before_verification:
            assert "Works before verification" in manual[name]
        else:
            assert "Only after verify_caller" in manual[name]
    assert "agreed" in manual["make_payment"]
    assert "cents" in manual["make_payment"]
    assert "agreement" in manual["create_payment_arrangement"]
    assert "ONE second factor" in manual["verify_caller"]


def test_schemas_are_fresh_copies() -> None:
    first = tool_schemas()
    first[0]["function"]["name"] = "changed"
    assert tool_schemas()[0]["function"]["name"] == "verify_caller"


@pytest.fixture
def ready(
    verified: Callable[[str], CallSession], manifest: Manifest, report: SeedReport
) -> tuple[CallSession, str, str]:
    account = next(a for a in manifest.accounts if a.slot == "A04")
    session = verified(account.account_number)
    seeded = report.accounts[account.account_number]
    open_bill = next(b for b in account.bills if b.status == "open")
    return (
        session,
        seeded.invoices[open_bill.number_suffix],
        next(iter(seeded.payment_methods.values())),
    )


BAD_CALLS: list[tuple[str, Callable[[str, str], Any], str, str]] = [
    # (tool, arguments from (bill id, pm id), argument named, expectation words)
    ("get_bill", lambda b, p: {}, "bill_id", "Missing required argument"),
    ("get_bill", lambda b, p: {"bill_id": 12}, "bill_id", "must be a string"),
    ("get_bill", lambda b, p: {"bill_id": "bill-1"}, "bill_id", "expected format"),
    (
        "make_payment",
        lambda b, p: {"bill_id": b, "payment_method_id": p},
        "amount_cents",
        "Missing",
    ),
    (
        "make_payment",
        lambda b, p: {"bill_id": b, "payment_method_id": p, "amount_cents": "100"},
        "amount_cents",
        "must be an integer",
    ),
    (
        "make_payment",
        lambda b, p: {"bill_id": b, "payment_method_id": p, "amount_cents": 12.5},
        "amount_cents",
        "must be an integer",
    ),
    (
        "make_payment",
        lambda b, p: {"bill_id": b, "payment_method_id": p, "amount_cents": 0},
        "amount_cents",
        "more than 0",
    ),
    (
        "make_payment",
        lambda b, p: {"bill_id": b, "payment_method_id": p, "amount_cents": True},
        "amount_cents",
        "must be an integer",
    ),
    ("quote_payment_arrangement", lambda b, p: {"installments": 0}, "installments", "at least 1"),
    ("quote_payment_arrangement", lambda b, p: {"installments": 500}, "installments", "at most"),
    ("create_payment_arrangement", lambda b, p: {"installments": "3"}, "installments", "integer"),
    ("request_due_date_extension", lambda b, p: {"bill_id": b, "days": -1}, "days", "at least 0"),
    ("request_due_date_extension", lambda b, p: {"bill_id": b}, "days", "Missing"),
    ("set_paperless_billing", lambda b, p: {"enabled": "true"}, "enabled", "true or false"),
    ("set_paperless_billing", lambda b, p: {"enabled": 1}, "enabled", "true or false"),
    ("modify_payment_arrangement", lambda b, p: {"amount_cents": -5}, "amount_cents", "more than"),
    (
        "modify_payment_arrangement",
        lambda b, p: {"amount_cents": 500, "payment_date": "09/01/2026"},
        "payment_date",
        "format",
    ),
    (
        "modify_payment_arrangement",
        lambda b, p: {"amount_cents": 500, "payment_date": "2026-02-30"},
        "payment_date",
        "calendar date",
    ),
    ("transfer_to_human", lambda b, p: {"reason": "x" * 501}, "reason", "at most 500"),
    ("transfer_to_human", lambda b, p: {"reason": ""}, "reason", "must not be empty"),
]


@pytest.mark.parametrize(("tool", "make", "argument", "words"), BAD_CALLS)
def test_bad_arguments_name_the_argument_and_change_nothing(
    ready: tuple[CallSession, str, str],
    twins: Twins,
    tool: str,
    make: Callable[[str, str], Any],
    argument: str,
    words: str,
) -> None:
    session, bill_id, pm_id = ready
    before = (twins.billing.state.dump(), twins.loans.state.to_dict())
    result = session.call(tool, make(bill_id, pm_id))
    assert set(result) == {"error"}
    assert f"'{argument}'" in result["error"], result
    assert words in result["error"], result
    assert session.trace[-1].ok is False
    assert not session.trace[-1].writes
    assert (twins.billing.state.dump(), twins.loans.state.to_dict()) == before
    assert not session.transferred


def test_unknown_arguments_are_refused_without_echoing_them(
    ready: tuple[CallSession, str, str],
) -> None:
    session, bill_id, _ = ready
    result = session.call("get_bill", {"bill_id": bill_id, "Secret Name": 1})
    assert result == {"error": "Unexpected argument; this tool takes only: bill_id."}
    result = session.call("get_account", {"account_id": "cus_123"})
    assert "takes only: no arguments" in result["error"]
    assert "cus_123" not in result["error"]


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "got a list"),
        ([1, 2], "got a list"),
        (42, "got an integer"),
        ('"text"', "got a string"),
    ],
)
def test_non_object_arguments_are_refused(
    ready: tuple[CallSession, str, str], arguments: Any, words: str
) -> None:
    session, _, _ = ready
    result = session.call("get_bill", arguments)
    assert "JSON object" in result["error"] and words in result["error"]


def test_json_string_arguments_work_and_empty_means_none(
    ready: tuple[CallSession, str, str],
) -> None:
    session, bill_id, _ = ready
    assert session.call("get_bill", json.dumps({"bill_id": bill_id}))["bill_id"] == bill_id
    empties: list[Any] = [None, "", "  ", "{}", {}]
    for empty in empties:
        assert "account_number" in session.call("get_account", empty)


@pytest.mark.parametrize("name", ["get_accounts", "", "GET_ACCOUNT", None, 7])
def test_unknown_tools_are_refused(ready: tuple[CallSession, str, str], name: Any) -> None:
    session, _, _ = ready
    result = session.call(name, {})
    assert result["error"].startswith("Unknown tool. The tools are: verify_caller")
    assert session.trace[-1].tool == (name if isinstance(name, str) else repr(name))


def test_trace_records_every_call_in_order(ready: tuple[CallSession, str, str]) -> None:
    session, bill_id, _ = ready
    session.call("get_bill", {"bill_id": bill_id})
    session.call("get_bill", {})
    entries = [e.as_dict() for e in session.trace]
    assert [e["call_id"] for e in entries] == ["call_1", "call_2", "call_3"]
    assert [e["tool"] for e in entries] == ["verify_caller", "get_bill", "get_bill"]
    assert [e["ok"] for e in entries] == [True, True, False]
    assert [e["verified"] for e in entries] == [False, True, True]
    assert entries[1]["arguments"] == {"bill_id": bill_id}
    json.dumps(entries)


def test_displays_are_added_beside_every_cents_value() -> None:
    out = with_displays({"a_cents": 21407, "nested": [{"b_cents": -5, "flag_cents": True}]})
    assert out == {
        "a_cents": 21407,
        "a_display": "$214.07",
        "nested": [{"b_cents": -5, "b_display": "-$0.05", "flag_cents": True}],
    }
    assert with_displays({"x_cents": 1, "x_display": "kept"}) == {"x_cents": 1, "x_display": "kept"}

"""Stripe's error objects, raised as one exception type and rendered by the routes.

Every refusal the billing twin gives travels as a ``StripeError`` carrying the HTTP
status and the fields of Stripe's ``{"error": {...}}`` body. State code raises them
(business rules, missing objects, declines); the schema raises them (bad parameters);
the routes turn them into responses. The constructors below hold the vendor's wording
in one place, so a message is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_DOC_ROOT = "https://stripe.com/docs/error-codes/"
_SUPPORT = "Please see https://stripe.com/docs or we can help at https://support.stripe.com/."


class StripeError(Exception):
    """A refusal in Stripe's wire shape: status plus the ``error`` object's fields."""

    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        decline_code: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.code = code
        self.param = param
        self.decline_code = decline_code
        self.extra = dict(extra) if extra else {}

    def body(self, request_id: str | None = None) -> dict[str, Any]:
        """The JSON body Stripe sends: ``{"error": {...}}`` with only the fields that apply."""
        error: dict[str, Any] = {}
        if self.code is not None:
            error["code"] = self.code
            error["doc_url"] = _DOC_ROOT + self.code.replace("_", "-")
        if self.decline_code is not None:
            error["decline_code"] = self.decline_code
        error["message"] = self.message
        if self.param is not None:
            error["param"] = self.param
        if request_id is not None:
            error["request_log_url"] = f"https://dashboard.stripe.com/test/logs/{request_id}"
        error["type"] = self.type
        error.update(self.extra)
        return {"error": error}


def invalid_request(
    message: str, *, param: str | None = None, code: str | None = None, status: int = 400
) -> StripeError:
    return StripeError(status, "invalid_request_error", message, code=code, param=param)


def missing_param(param: str) -> StripeError:
    return invalid_request(
        f"Missing required param: {param}.", param=param, code="parameter_missing"
    )


def unknown_param(param: str) -> StripeError:
    return invalid_request(
        f"Received unknown parameter: {param}", param=param, code="parameter_unknown"
    )


def invalid_integer(param: str, value: str) -> StripeError:
    return invalid_request(
        f"Invalid integer: {value}", param=param, code="parameter_invalid_integer"
    )


def invalid_boolean(param: str, value: str) -> StripeError:
    return invalid_request(f"Invalid boolean: {value}", param=param)


def invalid_choice(param: str, choices: tuple[str, ...]) -> StripeError:
    # Stripe lists the choices with an Oxford "or": "must be one of a, b, or c".
    if len(choices) == 1:
        listed = choices[0]
    elif len(choices) == 2:
        listed = f"{choices[0]} or {choices[1]}"
    else:
        listed = ", ".join(choices[:-1]) + f", or {choices[-1]}"
    return invalid_request(f"Invalid {param}: must be one of {listed}", param=param)


def empty_string(param: str) -> StripeError:
    return invalid_request(
        f"You passed an empty string for '{param}'. We assume empty values are an attempt to "
        f"unset a parameter; however '{param}' cannot be unset. You should remove '{param}' "
        "from your request or supply a non-empty value.",
        param=param,
        code="parameter_invalid_empty",
    )


def exclusive(params: tuple[str, ...]) -> StripeError:
    return invalid_request(
        f"You may only specify one of these parameters: {', '.join(params)}.",
        param=params[0],
        code="parameters_exclusive",
    )


def no_such(label: str, object_id: str, param: str = "id") -> StripeError:
    """404 for an id that names nothing, e.g. ``No such customer: 'cus_x'``."""
    return invalid_request(
        f"No such {label}: '{object_id}'", param=param, code="resource_missing", status=404
    )


def unrecognized_url(method: str, path: str) -> StripeError:
    if path.endswith("/"):
        hint = (
            " If you are trying to list objects, remove the trailing slash. If you are trying "
            "to retrieve an object, make sure you passed a valid (non-empty) identifier in your "
            "code."
        )
    else:
        hint = ""
    return invalid_request(
        f"Unrecognized request URL ({method}: {path}).{hint} {_SUPPORT}", status=404
    )


def authentication(message: str) -> StripeError:
    return StripeError(401, "invalid_request_error", message)


def idempotency(message: str) -> StripeError:
    return StripeError(400, "idempotency_error", message)


def card_declined(
    *,
    code: str,
    message: str,
    decline_code: str | None,
    extra: Mapping[str, Any] | None = None,
) -> StripeError:
    return StripeError(
        402, "card_error", message, code=code, decline_code=decline_code, extra=extra
    )


def api_error() -> StripeError:
    return StripeError(
        500,
        "api_error",
        "An unknown error occurred while processing this request. " + _SUPPORT,
    )

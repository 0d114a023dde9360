"""Fineract's error bodies, as exceptions the twin's state and routes raise.

Apache Fineract answers every failure with one of a few JSON shapes, built by its
exception mappers (``ApiGlobalErrorResponse`` and ``ApiParameterError``):

- 400 validation: ``validation.msg.validation.errors.exist`` with one entry per
  parameter in ``errors`` (``validation.msg.<resource>.<parameter>.<rule>``);
- 403 domain rule: top-level code ``validation.msg.domain.rule.violation`` and the
  specific code (e.g. ``error.msg.loan.transaction.cannot.be.a.future.date``) in
  ``errors[0]``;
- 403 data integrity: the specific code at the top level and in ``errors[0]``;
- 404 not found: ``error.msg.resource.not.found`` with the specific code in ``errors[0]``;
- 400 unreadable body: a bare ``ApiParameterError`` (no wrapper), code
  ``error.msg.invalid.request.body``;
- 401 unauthenticated: ``error.msg.not.authenticated``.

``args`` entries are ``{"value": ...}`` objects and ``value`` is null unless Fineract
used ``parameterErrorWithValue``, exactly as the real server sends them. Dates inside
args are ISO strings, as Fineract formats ``LocalDate`` arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any


def _arg(value: Any) -> dict[str, Any]:
    if isinstance(value, date):
        return {"value": value.isoformat()}
    return {"value": value}


@dataclass(frozen=True, slots=True)
class ApiParameterError:
    """One entry of ``errors``: what failed, for which parameter, with which arguments."""

    code: str
    message: str
    parameter: str = "id"
    value: Any = None
    args: Sequence[Any] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "developerMessage": self.message,
            "defaultUserMessage": self.message,
            "userMessageGlobalisationCode": self.code,
            "parameterName": self.parameter,
            "value": self.value,
            "args": [_arg(a) for a in self.args],
        }


class FineractProblem(Exception):
    """Base of every failure the twin reports; ``status`` and ``body()`` are the wire answer."""

    status: int = 500

    def body(self) -> dict[str, Any]:
        raise NotImplementedError


def _global(
    status: int, code: str, developer: str, user: str, errors: Sequence[ApiParameterError] | None
) -> dict[str, Any]:
    return {
        "developerMessage": developer,
        "httpStatusCode": str(status),
        "defaultUserMessage": user,
        "userMessageGlobalisationCode": code,
        "errors": [e.to_json() for e in errors or ()],
    }


class ValidationProblem(FineractProblem):
    """400: ``PlatformApiDataValidationException``; one or more per-parameter errors."""

    status = 400

    def __init__(self, errors: Sequence[ApiParameterError]) -> None:
        super().__init__("; ".join(e.code for e in errors))
        self.errors = tuple(errors)

    def body(self) -> dict[str, Any]:
        return _global(
            400,
            "validation.msg.validation.errors.exist",
            "The request was invalid. This typically will happen due to validation errors which "
            "are provided.",
            "Validation errors exist.",
            self.errors,
        )


class DomainRuleProblem(FineractProblem):
    """403: an ``AbstractPlatformDomainRuleException`` (state or date rule broken)."""

    status = 403

    def __init__(self, code: str, message: str, *args: Any) -> None:
        super().__init__(code)
        self.code = code
        self.message = message
        self.args_ = args

    def body(self) -> dict[str, Any]:
        error = ApiParameterError(self.code, self.message, "id", None, self.args_)
        return _global(
            403,
            "validation.msg.domain.rule.violation",
            "Request was understood but caused a domain rule violation.",
            "Errors contain reason for domain rule violation.",
            [error],
        )


class DataIntegrityProblem(FineractProblem):
    """403: ``PlatformDataIntegrityException`` (a unique key such as externalId taken)."""

    status = 403

    def __init__(self, code: str, message: str, parameter: str, *args: Any) -> None:
        super().__init__(code)
        self.code = code
        self.message = message
        self.parameter = parameter
        self.args_ = args

    def body(self) -> dict[str, Any]:
        error = ApiParameterError(self.code, self.message, self.parameter, None, self.args_)
        return _global(
            403,
            self.code,
            "The request caused a data integrity issue to be fired by the database.",
            self.message,
            [error],
        )


class NotFoundProblem(FineractProblem):
    """404: ``AbstractPlatformResourceNotFoundException`` (unknown id)."""

    status = 404

    def __init__(self, code: str, message: str, *args: Any) -> None:
        super().__init__(code)
        self.code = code
        self.message = message
        self.args_ = args

    def body(self) -> dict[str, Any]:
        text = "The requested resource is not available."
        error = ApiParameterError(self.code, self.message, "id", None, self.args_)
        return _global(404, "error.msg.resource.not.found", text, text, [error])


class UnreadableBodyProblem(FineractProblem):
    """400: missing or malformed JSON; Fineract sends the bare ``ApiParameterError``."""

    status = 400

    def __init__(
        self, message: str = "The JSON provided in the body of the request is invalid or missing."
    ) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, Any]:
        return ApiParameterError("error.msg.invalid.request.body", self.message).to_json()


class UnsupportedParameterProblem(ValidationProblem):
    """400: JSON keys the command does not accept (``UnsupportedParameterException``)."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(
            [
                ApiParameterError(
                    "error.msg.parameter.unsupported",
                    f"The parameter {name} is not supported.",
                    name,
                    None,
                    (name,),
                )
                for name in names
            ]
        )


class UnrecognizedQueryParamProblem(ValidationProblem):
    """400: e.g. ``?command=frobnicate`` (``UnrecognizedQueryParamException``)."""

    def __init__(self, key: str, value: str | None) -> None:
        super().__init__(
            [
                ApiParameterError(
                    "error.msg.query.parameter.value.unsupported",
                    f"The query parameter {key} has an unsupported value of: {value}",
                    key,
                    None,
                    (key, value, []),
                )
            ]
        )


class UnauthenticatedProblem(FineractProblem):
    """401: bad or missing HTTP Basic credentials."""

    status = 401

    def body(self) -> dict[str, Any]:
        return _global(
            401,
            "error.msg.not.authenticated",
            "Invalid authentication details were passed in api request.",
            "Unauthenticated. Please login.",
            None,
        )


class RouteProblem(FineractProblem):
    """404/405 for a path or method the API does not have.

    The real server lets Jersey answer these; the twin uses the resource-not-found
    shape so clients always get Fineract's JSON (a documented approximation).
    """

    def __init__(self, status: int, method: str, path: str) -> None:
        super().__init__(f"{status} {method} {path}")
        self.status = status
        self.method = method
        self.path = path

    def body(self) -> dict[str, Any]:
        if self.status == 405:
            text = f"HTTP 405 Method Not Allowed: {self.method} {self.path}"
            code = "error.msg.method.not.allowed"
        else:
            text = f"HTTP 404 Not Found: {self.path}"
            code = "error.msg.resource.not.found"
        summary = "The requested resource is not available."
        return _global(
            self.status,
            "error.msg.resource.not.found",
            summary,
            summary,
            [ApiParameterError(code, text)],
        )


def mandatory(resource: str, parameter: str) -> ApiParameterError:
    """``DataValidatorBuilder.notNull()``: ``validation.msg.<resource>.<param>.cannot.be.blank``."""
    return ApiParameterError(
        f"validation.msg.{resource}.{parameter}.cannot.be.blank",
        f"The parameter `{parameter}` is mandatory.",
        parameter,
        None,
        (None,),
    )


def rule(resource: str, parameter: str, suffix: str, message: str, *args: Any) -> ApiParameterError:
    """Any other ``DataValidatorBuilder`` rule: ``validation.msg.<resource>.<param>.<suffix>``."""
    return ApiParameterError(
        f"validation.msg.{resource}.{parameter}.{suffix}", message, parameter, None, args
    )


def general(code: str, message: str, *args: Any) -> ApiParameterError:
    """``ApiParameterError.generalError``: a code not tied to one parameter."""
    return ApiParameterError(code, message, "id", None, args)

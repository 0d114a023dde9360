"""Tool schemas across vendors: OpenAI function-calling tools to Gemini function declarations.

The environment publishes its tools once, in OpenAI's format. Gemini's
``FunctionDeclaration.parameters`` accepts a subset of OpenAPI 3.0 schema: no
``additionalProperties``, ``pattern``, ``exclusiveMinimum``/``exclusiveMaximum``,
``$ref`` or ``title``, and a restricted ``format``. This converter keeps what
Gemini understands and folds what it drops into the description, so no rule the
agent should know is lost (e.g. an id's pattern becomes "format: ^in_...").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_KEEP = {
    "type",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "nullable",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
}
_GEMINI_FORMATS = {
    "string": {"enum", "date-time"},
    "integer": {"int32", "int64"},
    "number": {"float", "double"},
}


def _convert(schema: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    notes: list[str] = []
    kind = schema.get("type")
    for key, value in schema.items():
        if key == "properties":
            out[key] = {name: _convert(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = _convert(value)
        elif key in _KEEP or (
            key == "format" and isinstance(kind, str) and value in _GEMINI_FORMATS.get(kind, set())
        ):
            out[key] = value
        elif key == "pattern" or key == "format":
            notes.append(f"format: {value}")
        elif key == "exclusiveMinimum":
            notes.append(f"greater than {value}")
        elif key == "exclusiveMaximum":
            notes.append(f"less than {value}")
    if isinstance(kind, str):
        out["type"] = kind.upper()
    if notes:
        described = out.get("description", "")
        out["description"] = (described + " " if described else "") + f"({'; '.join(notes)})"
    if out.get("type") == "OBJECT" and not out.get("properties"):
        out.pop("properties", None)
        out.pop("required", None)
    return out


def gemini_tools(openai_tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Gemini function declarations (as dicts) for OpenAI ``{"type": "function", ...}`` tools."""
    declarations = []
    for tool in openai_tools:
        function = tool["function"]
        declaration: dict[str, Any] = {
            "name": function["name"],
            "description": function.get("description", ""),
        }
        parameters = _convert(function.get("parameters", {"type": "object"}))
        if parameters.get("properties"):
            declaration["parameters"] = parameters
        declarations.append(declaration)
    return declarations

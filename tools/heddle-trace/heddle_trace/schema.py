# SPDX-License-Identifier: Apache-2.0
"""The JSON schema check of validate, fast enough for traces of millions of events.

jsonschema takes ~0.25 ms per event, minutes for a big trace; but events repeat a few shapes.
An event's verdict depends only on its keys, its strings that the schema names (an enum or const
value; other strings only as strings), and how its numbers compare with the numbers the schema
names: `shape` keeps just that, and the verdict is computed once per shape. This holds while the
schema uses only the keywords in KEYWORDS; a schema with another keyword (pattern, maxLength...)
is checked event by event."""
import json
import math
from pathlib import Path

import jsonschema

from .load import TraceError

PATH = Path(__file__).resolve().parent.parent / "trace_event.schema.json"
KEYWORDS = {"$schema", "$id", "title", "description", "definitions", "$ref", "type", "required", "properties",
            "items", "allOf", "if", "then", "enum", "const", "minimum"}


def load_schema():
    try:
        with open(PATH, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise TraceError(f"{PATH}: cannot read heddle-trace's schema (a broken install?): {e}") from None


def named_values(schema):
    """(strings, numbers) that schema's enum, const and minimum name; None if it uses a keyword
    outside KEYWORDS."""
    strings, numbers = set(), set()

    def walk(node, under_properties=False):
        if isinstance(node, list):
            return all(walk(n) for n in node)
        if not isinstance(node, dict):
            return True
        for key, value in node.items():
            if under_properties:  # key names a property or a definition: value is a schema
                ok = walk(value)
            elif key not in KEYWORDS:
                return False
            elif key in ("enum", "const", "minimum"):
                for v in (value if key == "enum" else [value]):
                    if isinstance(v, str):
                        strings.add(v)
                    elif isinstance(v, (int, float)) and not isinstance(v, bool):
                        numbers.add(v)
                ok = True
            else:
                ok = walk(value, under_properties=key in ("properties", "definitions"))
            if not ok:
                return False
        return True

    return (strings, sorted(numbers)) if walk(schema) else None


class EventChecker:
    """Schema problems of one event: [(path below the event, message)]."""

    def __init__(self, schema):
        self.validator = jsonschema.Draft7Validator({"definitions": schema["definitions"],
                                                     "$ref": "#/definitions/event"})
        self.named = named_values(schema)
        self.valid_shapes = set()

    def shape(self, value):
        strings, numbers = self.named
        if isinstance(value, dict):
            return ("{", tuple(sorted((k, self.shape(v)) for k, v in value.items())))
        if isinstance(value, list):
            return ("[", tuple(self.shape(v) for v in value))
        if isinstance(value, str):
            return ("s", value if value in strings else None)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, float) and not math.isfinite(value):
            return ("f", repr(value))
        integral = isinstance(value, int) or value.is_integer()  # jsonschema: 1.0 is an integer
        return (type(value).__name__, integral, tuple((value > n) - (value < n) for n in numbers))

    def problems(self, event):
        if self.named is None:
            return self.errors(event)
        key = self.shape(event)
        if key in self.valid_shapes:
            return []
        found = self.errors(event)
        if not found:
            self.valid_shapes.add(key)
        return found

    def errors(self, event):
        return [(list(e.absolute_path), e.message) for e in self.validator.iter_errors(event)]


def document_problems(doc, schema):
    """The file's problems outside its events: [(path, message)]."""
    top = jsonschema.Draft7Validator(schema)
    return [(list(e.absolute_path), e.message) for e in top.iter_errors({**doc, "traceEvents": []})]

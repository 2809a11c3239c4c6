"""Parsed JSON made safe to store, with every change reported.

`json.loads` accepts input that later breaks the store or the API: a lone surrogate
(`"\\ud800"`) cannot be encoded as UTF-8, so hashing or inserting the text fails; an integer
of more than 4300 digits raises `ValueError`; nesting a few thousand levels deep raises
`RecursionError`. `load_json` and `clean_json` turn each of these into either a reason
(the value cannot be used: `UnusableJSON`) or a normalization plus a note saying what was
changed, so a caller can report `file:line: note` and keep the rest of the line.

Normalizations: a lone surrogate becomes U+FFFD; an integer too long for Python's
conversion limit is kept as its digit string; NaN, Infinity and numbers too large for a
float (`1e400`), which `json.loads` accepts but JSON does not (the API would answer with
invalid JSON), become null. Values nested deeper than `MAX_DEPTH` are
refused (no transcript nests that deep; deeper values would break the recursive JSON
encoders and decoders used further on).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 200
_SURROGATE = re.compile("[\ud800-\udfff]")


class UnusableJSON(ValueError):
    """The text is not JSON Axiom can store; the message is the reason, `line` the line of
    the text where JSON syntax broke (None when unknown)."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.line = line


def _fix_str(value: str, notes: list[str]) -> str:
    if value.isascii() or not _SURROGATE.search(value):
        return value
    found = _SURROGATE.search(value)
    notes.append(f"lone surrogate U+{ord(found.group()):04X} replaced with U+FFFD")
    return _SURROGATE.sub("\ufffd", value)


def _fix_float(value: float, notes: list[str]) -> float | None:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        notes.append("NaN is not valid JSON; stored as null")
    else:
        sign = "" if value > 0 else "-"
        notes.append(f"{sign}Infinity (or a number too large for a float); stored as null")
    return None


def clean_json(value: Any, notes: list[str]) -> Any:
    """`value` with lone surrogates replaced (in keys too) and non-finite numbers nulled,
    checked for depth; changes are appended to `notes`. Containers are fixed in place;
    walks without recursion."""
    if isinstance(value, str):
        return _fix_str(value, notes)
    if isinstance(value, float):
        return _fix_float(value, notes)
    if not isinstance(value, dict | list):
        return value
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UnusableJSON(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(container, dict):
            if any(not k.isascii() and _SURROGATE.search(k) for k in container):
                items = [(_fix_str(k, notes), v) for k, v in container.items()]
                container.clear()
                container.update(items)
            keys: Any = list(container)
        else:
            keys = range(len(container))
        for key in keys:
            item = container[key]
            if isinstance(item, str):
                fixed = _fix_str(item, notes)
                if fixed is not item:
                    container[key] = fixed
            elif isinstance(item, float) and not math.isfinite(item):
                container[key] = _fix_float(item, notes)
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return value


def load_json(text: str, notes: list[str]) -> Any:
    """`json.loads(text)` made safe (see the module docstring); raises `UnusableJSON`."""
    try:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer over the conversion limit: keep it as digits
            value = json.loads(text, parse_int=lambda digits: _int(digits, notes))
    except json.JSONDecodeError as exc:
        # Some messages end in "at" ("Unterminated string starting at"): say it once.
        reason = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
        raise UnusableJSON(f"not valid JSON ({reason})", exc.lineno) from exc
    except RecursionError as exc:
        raise UnusableJSON("not usable JSON (nested too deeply to parse)") from exc
    return clean_json(value, notes)


def _int(digits: str, notes: list[str]) -> int | str:
    try:
        return int(digits)
    except ValueError:
        notes.append(f"integer of {len(digits.lstrip('-'))} digits kept as text")
        return digits


def id_text(value: Any, what: str, notes: list[str]) -> str | None:
    """An id as text: a string as written, a number as its text, anything else None
    (both noted as `what …`)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        notes.append(f"{what} {value!r} is not a string; kept as {str(value)!r}")
        return str(value)
    notes.append(f"{what} is a {type(value).__name__}, not a string; dropped")
    return None


def as_text(value: Any, what: str, notes: list[str]) -> str:
    """Text as written; None → ''; a number, object or list becomes its JSON text (noted as
    `what …`)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    kind = "number" if isinstance(value, int | float) and not isinstance(value, bool) else None
    notes.append(f"{what} is a {kind or type(value).__name__}, not text; stored as its JSON text")
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def as_object(value: Any, what: str, notes: list[str]) -> dict[str, Any]:
    """An object as written; None → {}; any other value kept under 'value' (noted as
    `what …`)."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    notes.append(f"{what} is a {type(value).__name__}, not an object; kept under 'value'")
    return {"value": value}

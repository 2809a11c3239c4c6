from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON for a <pre> block (the result is escaped like any other string)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@register.filter
def lookup(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None

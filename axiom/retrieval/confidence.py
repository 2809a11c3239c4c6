"""Is a hit relevant enough to show without being asked? One rule for every reader.

The search gives each hit a *match* (an absolute 0..1 similarity of the query to the hit's
own text, see `axiom.retrieval.search`, step 4) and from it a tier:

* `high` — match >= 0.92 and it leads every other candidate's match by >= 0.03;
* `suggested` — match >= 0.75;
* `none` — anything else.

`relevance(hit)` is that tier, except that a memory the pipeline has set aside
(deprecated or superseded) is never relevant. The MCP server, the API, the viewer and the
agent's context injection all call it, so "relevant" means the same thing everywhere. This
module imports nothing heavy: the hook path (no model, no LanceDB) uses it too.
"""

from __future__ import annotations

from typing import Literal, Protocol

Relevance = Literal["high", "suggested", "none"]

HIGH_MATCH, HIGH_GAP, SUGGESTED_MATCH = 0.92, 0.03, 0.75
SET_ASIDE = frozenset({"deprecated", "superseded"})


class HasTier(Protocol):
    tier: str
    status: str | None


def tier_for(match: float, best_other: float) -> Relevance:
    """The confidence tier of a hit from its match and the best match of any other source."""
    if match >= HIGH_MATCH and match - best_other >= HIGH_GAP:
        return "high"
    if match >= SUGGESTED_MATCH:
        return "suggested"
    return "none"


def relevance(hit: HasTier) -> Relevance:
    """'high' | 'suggested' | 'none': whether `hit` may be shown unasked (see module doc)."""
    if getattr(hit, "status", None) in SET_ASIDE:
        return "none"
    return hit.tier if hit.tier in ("high", "suggested") else "none"  # type: ignore[return-value]


def clears(hit: HasTier, floor: Relevance = "suggested") -> bool:
    """True when `hit` is at least `floor` relevant."""
    order = {"none": 0, "suggested": 1, "high": 2}
    return order[relevance(hit)] >= order[floor]

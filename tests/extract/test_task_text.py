"""Status reports in prose (`axiom.extract.task_text.status_update`): "closed", "fixed" and
"resolved" report work done only when the clause ends there; they also describe things."""

from __future__ import annotations

import pytest

from axiom.extract.task_text import status_update


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("OPS-55 is fixed.", "OPS-55"),
        ("OPS-55 is fixed", "OPS-55"),
        ("The login bug is fixed now", "login bug"),
        ("#412 was closed", "#412"),
        ("The ticket is resolved, so the deploy can go", "ticket"),
        ("OPS-77 is done", "OPS-77"),
    ],
)
def test_a_report_of_work_done(text: str, title: str) -> None:
    update = status_update(text)
    assert update is not None and (update.title, update.status) == (title, "done")


@pytest.mark.parametrize(
    "text",
    ["The price is fixed at $10", "The store is closed on Sundays", "It is resolved by hand"],
)
def test_a_description_is_no_report(text: str) -> None:
    assert status_update(text) is None

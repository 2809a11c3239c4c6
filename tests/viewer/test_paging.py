"""Every paged listing answers a page number it cannot use with a page, never a 500."""

from __future__ import annotations

import pytest

from axiom.store.bounds import MAX_PAGE

LISTINGS = ["/sessions/", "/entries/", "/tasks/"]
ODD_PAGES = ["999999999999999999999", str(2**63), str(2**64), "-3", "0", "abc", "9" * 5000]


@pytest.mark.parametrize("url", LISTINGS)
@pytest.mark.parametrize("page", ODD_PAGES)
def test_an_odd_page_number_is_still_a_page(client, site, url: str, page: str) -> None:
    response = client.get(url, {"page": page})
    assert response.status_code == 200, response.content[:500]


def test_a_huge_page_is_clamped_and_keeps_its_rows_empty(client, make_sessions) -> None:
    make_sessions(3)
    html = client.get("/sessions/", {"page": "999999999999999999999"}).content.decode()
    assert "Synthetic session" not in html
    assert f"?page={MAX_PAGE - 1}" in html  # the previous-page link from the clamped page

"""Conflict pages over HTTP (Django test client with CSRF checks on): the list, both
memories side by side, the plain POST form, the warning on a contested memory."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client
from django.urls import reverse

from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import list_entries
from axiom.store.db import Database
from tests.conflicts.support import Said, run_sessions

OLD = Said("Use <b>Kafka</b> for the audit event bus of the payments team")
NEW = Said("Moved the audit event bus of the payments team from Kafka to NATS")


def _setup(site: Database, tmp_path: Path) -> str:
    run_sessions(site, tmp_path, {"one": [OLD], "two": [NEW]})
    with site.read() as conn:
        (conflict,) = list_conflicts(conn, "open")
    return conflict.conflict_id


def _statuses(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return {e.title: e.status for e in list_entries(conn)}


def test_the_form_resolves_with_csrf_and_without_javascript(site, tmp_path: Path) -> None:
    cid = _setup(site, tmp_path)
    strict = Client(enforce_csrf_checks=True)
    listing = strict.get(reverse("viewer-conflicts")).content.decode()
    assert cid in listing
    page = strict.get(reverse("viewer-conflict", args=[cid])).content.decode()
    assert "&lt;b&gt;Kafka&lt;/b&gt;" in page and "<b>Kafka" not in page  # escaped
    assert page.count('class="memory side-') == 2 and "<mark>" in page
    url = reverse("viewer-conflict-resolve", args=[cid])
    assert strict.post(url, {"choice": "keep_newer"}).status_code == 403  # no token
    assert set(_statuses(site).values()) == {"contested"}
    token = re.search(r'name="csrfmiddlewaretoken" value="(\w+)"', page).group(1)
    done = strict.post(
        url, {"choice": "keep_newer", "note": "NATS it is", "csrfmiddlewaretoken": token}
    )
    assert done.status_code == 302 and done["Location"] == reverse("viewer-conflict", args=[cid])
    assert _statuses(site) == {OLD.text: "superseded", NEW.text: "active"}
    after = strict.get(done["Location"]).content.decode()
    assert (
        "keep_newer" in after and "NATS it is" in after and 'class="resolve-conflict"' not in after
    )
    refused = strict.post(url, {"choice": "keep_both", "csrfmiddlewaretoken": token})
    assert refused.status_code == 422 and "already resolved" in refused.content.decode()


def test_a_contested_memory_page_warns_and_names_its_opponent(client, site, tmp_path: Path) -> None:
    cid = _setup(site, tmp_path)
    with site.read() as conn:
        entries = {e.title: e.entry_id for e in list_entries(conn)}
    page = client.get(reverse("viewer-entry", args=[entries[NEW.text]])).content.decode()
    assert "contested-warning" in page and cid in page and entries[OLD.text] in page

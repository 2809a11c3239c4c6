"""In Chromium: a page served from another origin — another port of 127.0.0.1, which
shares the site's cookies — cannot approve a memory or resolve a condition, neither with
fetch (credentials included) nor with an auto-submitting form; the viewer's own approve
button still works. Run once with reads open (no AXIOM_AUTH_TOKEN) and once logged in with
AXIOM_AUTH_TOKEN set (the login cookie is sent to every port)."""

from __future__ import annotations

import functools
import http.server
import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.config import AxiomConfig
from axiom.ingest.importer import import_paths
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.store.api_token import ensure_api_token
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.conftest import SAMPLE_SESSION
from tests.live_server import runserver
from tests.viewer.test_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

ATTACK = """<!doctype html><html><body>
<form id="approve" method="post" action="{base}/api/v1/entries/{entry}/approve"
      enctype="text/plain" target="sink1">
  <input name='{{"approved_by": "mallory", "x": "' value='"}}'></form>
<form id="resolve" method="post" action="{base}/api/v1/conditions/{cond}/resolve"
      enctype="text/plain" target="sink2">
  <input name='{{"target_id": "{entry}", "x": "' value='"}}'></form>
<form id="viewer" method="post" action="{base}/entries/{entry}/approve" target="sink3">
  <input name="approved_by" value="mallory"></form>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe><iframe name="sink3"></iframe>
<script>
const results = [];
const post = (url, body) => fetch(url, {{method: "POST", credentials: "include",
    headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(body)}})
  .then(r => results.push(r.status), e => results.push("blocked"));
Promise.all([
  post("{base}/api/v1/entries/{entry}/approve", {{approved_by: "mallory"}}),
  post("{base}/api/v1/conditions/{cond}/resolve", {{target_id: "{entry}"}}),
  fetch("{base}/api/v1/entries/{entry}/approve", {{method: "POST", credentials: "include",
    mode: "no-cors", body: '{{"approved_by": "mallory"}}'}})
    .then(() => results.push("sent"), () => results.push("blocked")),  // CORP may block it
]).then(() => {{
  for (const id of ["approve", "resolve", "viewer"]) document.getElementById(id).submit();
  setTimeout(() => {{ document.title = "done:" + results.join(","); }}, 1500);
}});
</script></body></html>"""


def _store(root: Path) -> tuple[Path, str, str]:
    data = root / "data"
    database = Database(data / "axiom.duckdb")
    migrate(database)
    (sid,) = import_paths(database, [SAMPLE_SESSION]).session_ids
    process_session(database, sid, configured_pipeline(AxiomConfig(data_dir=data)))
    with database.read() as conn:
        entry = conn.execute(
            "SELECT entry_id FROM entries WHERE stage = 'verified' ORDER BY entry_id LIMIT 1"
        ).fetchone()[0]
        cond = conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'condition' LIMIT 1"
        ).fetchone()[0]
    return data, entry, cond


@pytest.fixture
def attacker(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(folder, base URL) of a plain static server on another port of 127.0.0.1."""
    site = tmp_path / "attacker"
    site.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _get_json(url: str, token: str) -> object:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.mark.parametrize("auth_token", ["", "s3cret-login-token"])
def test_a_page_from_another_origin_cannot_write(
    tmp_path: Path, attacker: tuple[Path, str], auth_token: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    data, entry, cond = _store(tmp_path)
    token = auth_token or ensure_api_token(data)
    env = {"AXIOM_AUTH_TOKEN": auth_token} if auth_token else {}
    with runserver(data, tmp_path / "runserver.log", **env) as base:
        folder, evil = attacker
        (folder / "index.html").write_text(ATTACK.format(base=base, entry=entry, cond=cond))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context().new_page()
            if auth_token:
                page.goto(f"{base}/login?next=/entries/")
                page.get_by_label("Token").fill(auth_token)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_url(f"{base}/entries/")
            page.goto(f"{base}/entries/{entry}/")  # the site's cookies are now set
            page.goto(f"{evil}/index.html")
            page.wait_for_function("document.title.startsWith('done:')", timeout=30_000)
            assert "200" not in page.title(), page.title()

            history = _get_json(f"{base}/api/v1/entries/{entry}", token)["history"]
            assert not [h for h in history if h["type"] == "entry_approved"], history
            resolved = _get_json(f"{base}/api/v1/conditions/resolved", token)
            assert resolved == []

            # The viewer's own approve button still works.
            page.goto(f"{base}/entries/{entry}/")
            page.get_by_label("Your name").fill("Ana")
            page.get_by_role("button", name="Approve").click()
            expect(page.locator("#approval-result")).to_have_text("certified: approved by Ana")
            browser.close()
        history = _get_json(f"{base}/api/v1/entries/{entry}", token)["history"]
        approvals = [h["payload"]["approved_by"] for h in history if h["type"] == "entry_approved"]
        assert approvals == ["Ana"]

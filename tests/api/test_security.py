"""No page can write: API writes need the token (or our own page's CSRF), JSON only, from
this origin only; hostile numbers and bodies get JSON 4xx; every response carries the
security headers."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from django.test import Client

from api.api import api
from axiom.store.api_token import api_token_path
from config import stores
from config.security import MAX_API_BODY_BYTES

APPROVE = "/api/v1/entries/ent_nope/approve"
RESOLVE = "/api/v1/conditions/cond_nope/resolve"
BODY = json.dumps({"approved_by": "ana"})


@pytest.fixture
def browser(site) -> Client:
    """A client that, like a browser, gets no CSRF exemption."""
    return Client(enforce_csrf_checks=True)


def _post(client: Client, url: str = APPROVE, body: str = BODY, **extra):  # type: ignore[no-untyped-def]
    return client.post(
        url, body, content_type=extra.pop("content_type", "application/json"), **extra
    )


def _write_operations() -> list[str]:
    """Every POST/PUT/PATCH/DELETE path of the OpenAPI schema, path parameters filled in."""
    schema = api.get_openapi_schema()
    found = []
    for path, operations in schema["paths"].items():
        if {"post", "put", "patch", "delete"} & set(operations):
            found.append(re.sub(r"\{[^}]+\}", "x", path))
    return sorted(found)


def test_every_write_operation_of_the_api_requires_the_token(browser: Client) -> None:
    writes = _write_operations()
    assert len(writes) >= 5  # approve, resolve, conflict resolve, forget, hooks
    refused = {url: _post(browser, url, "{}").status_code for url in writes}
    assert refused == {url: 401 for url in writes}


@pytest.mark.parametrize("url", [APPROVE, RESOLVE])
def test_a_write_without_the_token_is_refused(browser: Client, url: str) -> None:
    body = json.dumps({"approved_by": "ana", "target_id": "t"})
    response = _post(browser, url, body)
    assert response.status_code == 401 and "detail" in response.json()
    assert _post(browser, url, body, HTTP_AUTHORIZATION="Bearer wrong").status_code == 401


def test_a_write_with_the_token_goes_through(browser: Client, api_auth, data_dir: Path) -> None:
    response = _post(browser, **api_auth)
    assert response.status_code == 404  # authenticated: the entry simply does not exist
    token = api_token_path(data_dir).read_text().strip()
    assert api_auth["HTTP_AUTHORIZATION"] == f"Bearer {token}"


def test_the_auth_token_setting_replaces_the_stored_token(browser, settings, site) -> None:
    settings.AXIOM_AUTH_TOKEN = "env-token"
    assert _post(browser, HTTP_AUTHORIZATION="Bearer env-token").status_code == 404
    stored = stores.ensure_api_token(Path(settings.AXIOM_DATA_DIR))
    assert _post(browser, HTTP_AUTHORIZATION=f"Bearer {stored}").status_code == 401


def test_our_own_page_writes_with_its_csrf_token(browser: Client) -> None:
    browser.get("/api/docs")  # sets the CSRF cookie, as the Swagger page does
    csrf = browser.cookies["csrftoken"].value
    assert _post(browser, HTTP_X_CSRFTOKEN=csrf).status_code == 404
    assert _post(browser, HTTP_X_CSRFTOKEN="x" * 32).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_ORIGIN": "http://evil.example"},
        {"HTTP_ORIGIN": "http://testserver:8001"},  # another port is another origin
        {"HTTP_ORIGIN": "null"},
        {"HTTP_SEC_FETCH_SITE": "cross-site"},
        {"HTTP_SEC_FETCH_SITE": "same-site"},
    ],
)
def test_a_write_from_another_origin_is_forbidden_even_with_the_token(
    browser: Client, api_auth, headers: dict[str, str]
) -> None:
    response = _post(browser, **api_auth, **headers)
    assert response.status_code == 403
    assert "cross-origin" in response.json()["detail"]
    viewer = browser.post("/entries/ent_nope/approve", {"approved_by": "a"}, **headers)
    assert viewer.status_code == 403


def test_a_write_from_our_own_origin_passes_the_origin_check(browser: Client, api_auth) -> None:
    headers = {"HTTP_ORIGIN": "http://testserver", "HTTP_SEC_FETCH_SITE": "same-origin"}
    assert _post(browser, **api_auth, **headers).status_code == 404


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"]
)
def test_a_write_body_that_is_not_json_is_415(browser, api_auth, content_type: str) -> None:
    response = _post(browser, body="approved_by=ana", content_type=content_type, **api_auth)
    assert response.status_code == 415 and "application/json" in response.json()["detail"]


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"]
)
def test_a_write_without_the_token_is_401_whatever_its_body(browser, site, content_type) -> None:
    """Who may write is settled before what was sent: no token and no CSRF token is 401,
    not 415 (nor 422 for a body nested too deep), and the write still never runs."""
    not_json = _post(browser, body="approved_by=ana", content_type=content_type)
    assert not_json.status_code == 401 and not_json.json() == {"detail": "Unauthorized"}
    wrong = _post(browser, body="a=b", content_type=content_type, HTTP_AUTHORIZATION="Bearer x")
    assert wrong.status_code == 401
    deep = _post(browser, body='{"approved_by": ' + "[" * 40 + "]" * 40 + "}")
    assert deep.status_code == 401


def test_our_own_page_sending_a_form_is_still_415(browser: Client) -> None:
    """Authenticated by its CSRF token, our page gets the content-type answer."""
    browser.get("/api/docs")  # sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    response = _post(
        browser, body="approved_by=ana", content_type="text/plain", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 415
    form = _post(
        browser,
        body=f"approved_by=ana&csrfmiddlewaretoken={csrf}",
        content_type="application/x-www-form-urlencoded",
    )
    assert form.status_code == 415


def test_a_cross_site_form_is_refused_before_authentication(browser: Client) -> None:
    """Another page's form post (the classic CSRF, no preflight) is 403, token or not."""
    form = {"content_type": "application/x-www-form-urlencoded", "body": "approved_by=ana"}
    for headers in ({"HTTP_ORIGIN": "http://evil.example"}, {"HTTP_SEC_FETCH_SITE": "cross-site"}):
        assert _post(browser, **form, **headers).status_code == 403


def test_an_oversized_body_is_413(browser: Client, api_auth) -> None:
    body = json.dumps({"approved_by": "a", "note": "x" * MAX_API_BODY_BYTES})
    response = _post(browser, body=body, **api_auth)
    assert response.status_code == 413 and "bytes" in response.json()["detail"]


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_json_is_422(browser: Client, api_auth, depth: int) -> None:
    body = '{"approved_by": ' + "[" * depth + "]" * depth + "}"
    response = _post(browser, body=body, **api_auth)
    assert response.status_code == 422 and "nested" in response.json()["detail"]


def test_malformed_json_is_a_json_400(browser: Client, api_auth) -> None:
    response = _post(browser, body="{not json", **api_auth)
    assert response.status_code == 400 and "detail" in response.json()


@pytest.mark.parametrize(
    "url",
    [
        f"/api/v1/sessions?page={2**63}",
        f"/api/v1/sessions?page={10**30}",
        "/api/v1/sessions?per_page=0",
        f"/api/v1/entries?offset={2**63}",
        "/api/v1/entries?limit=0",
        f"/api/v1/tasks?offset={2**64}",
        "/api/v1/search?q=x&k=100000",
    ],
)
def test_out_of_range_numbers_are_422(client, site, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 422, response.content
    assert response.json()["detail"]


def test_unknown_api_paths_and_methods_answer_json(client, site) -> None:
    missing = client.get("/api/v1/nothing-here")
    assert (missing.status_code, missing.json()) == (404, {"detail": "Not Found"})
    wrong = client.get(APPROVE)
    assert wrong.status_code == 405 and wrong.json() == {"detail": "Method Not Allowed"}
    assert "POST" in wrong["Allow"]


def test_a_server_error_is_json_and_logged_with_its_traceback(client, site, caplog) -> None:
    site.path.write_bytes(b"this is not a DuckDB file" * 100)
    stores.reset()
    with caplog.at_level(logging.ERROR):
        response = client.get("/api/v1/sessions")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal error (logged on the server)"}
    assert str(site.path) not in response.content.decode()
    assert any(r.exc_info for r in caplog.records if r.name.startswith("axiom"))


@pytest.mark.parametrize("url", ["/", "/sessions/", "/api/v1/health", "/api/v1/nope", "/api/docs"])
def test_every_response_carries_the_security_headers(client, site, url: str) -> None:
    response = client.get(url)
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


def test_health_shows_no_filesystem_path(client, site, data_dir: Path) -> None:
    healthy = client.get("/api/v1/health")
    site.path.unlink()
    missing = client.get("/api/v1/health")
    assert missing.status_code == 503
    for response in (healthy, missing):
        assert str(data_dir) not in response.content.decode()


@pytest.mark.parametrize("url", ["/static/../x", "/static/..%2f..%2fetc/passwd", "/static/%00"])
def test_static_paths_that_climb_out_are_not_a_server_error(client, site, url: str) -> None:
    assert client.get(url).status_code in {400, 404}

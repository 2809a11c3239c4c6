"""Sessions list and detail pages, the dashboard and token authentication."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, ToolCall, Transcript

SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"
SAMPLE_TITLE = "Event store on DuckDB, importer and first blocked task"


def row_titles(html: str) -> list[str]:
    return re.findall(r"Synthetic session (\d{3})", html)


@pytest.fixture
def sample(site, sample_session: Path) -> str:
    report = import_paths(site, [sample_session])
    assert report.sessions_new == 1
    return SAMPLE_ID


# --- list -----------------------------------------------------------------------------


def test_it_lists_sessions_newest_first(client, make_sessions):
    make_sessions(3)
    response = client.get(reverse("viewer-sessions"))
    assert response.status_code == 200
    assert row_titles(response.content.decode()) == ["002", "001", "000"]


def test_it_shows_25_sessions_and_a_load_more_link(client, make_sessions):
    make_sessions(30)
    html = client.get(reverse("viewer-sessions")).content.decode()
    assert "<html" in html
    assert row_titles(html) == [f"{n:03d}" for n in range(29, 4, -1)]
    assert 'href="/sessions/?page=2"' in html
    assert 'hx-get="/sessions/?page=2"' in html
    assert 'hx-target="closest tr"' in html


def test_htmx_gets_only_the_next_rows(client, make_sessions):
    make_sessions(30)
    response = client.get(reverse("viewer-sessions"), {"page": 2}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert "<header" not in html
    assert row_titles(html) == ["004", "003", "002", "001", "000"]
    assert "Load more" not in html  # the last page
    assert "HX-Request" in response["Vary"]


def test_the_plain_page_link_renders_a_whole_page(client, make_sessions):
    make_sessions(30)
    html = client.get(reverse("viewer-sessions"), {"page": 2}).content.decode()
    assert "<html" in html
    assert row_titles(html) == ["004", "003", "002", "001", "000"]
    assert 'href="/sessions/?page=1"' in html  # back to newer sessions


def test_a_history_restore_gets_the_whole_page(client, make_sessions):
    make_sessions(2)
    response = client.get(
        reverse("viewer-sessions"), HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in response.content.decode()


@pytest.mark.parametrize("page", ["abc", "-3", "0"])
def test_a_bad_page_number_means_the_first_page(client, make_sessions, page):
    make_sessions(2)
    html = client.get(reverse("viewer-sessions"), {"page": page}).content.decode()
    assert row_titles(html) == ["001", "000"]


def test_it_explains_an_empty_store(client, site):
    html = client.get(reverse("viewer-sessions")).content.decode()
    assert "No sessions yet" in html


# --- detail ---------------------------------------------------------------------------


def test_the_list_links_to_the_detail_page(client, sample):
    html = client.get(reverse("viewer-sessions")).content.decode()
    assert f'href="/sessions/{SAMPLE_ID}/"' in html
    assert SAMPLE_TITLE in html


def test_the_detail_page_shows_every_message_with_an_anchor(client, sample):
    response = client.get(reverse("viewer-session", args=[sample]))
    html = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{SAMPLE_TITLE}</h1>" in html
    assert "-home-dev-axiom" in html and "claude_code" in html
    assert "2026-11-20 09:00:00 UTC" in html and "2026-11-20 09:12:00 UTC" in html
    for index in range(12):
        assert f'id="m-{index}"' in html
        assert f'href="#m-{index}"' in html
    assert "Postgres feels heavy for a local tool" in html
    assert "배포는 레지스트리 인증서 교체 전까지 막혀 있어요." in html


def test_tool_calls_results_and_thinking_are_folded(client, sample):
    html = client.get(reverse("viewer-session", args=[sample])).content.decode()
    call = re.search(
        r'<details class="fold tool-call"><summary>tool: Bash</summary><pre>(.*?)</pre></details>',
        html,
        re.S,
    )
    assert call is not None
    assert "&quot;command&quot;: &quot;python -m axiom migrate&quot;" in call.group(1)
    assert html.count("<summary>tool: TodoWrite</summary>") == 2
    # The failed Bash call's result is folded, marked as an error and linked to its call.
    error = re.search(r'<details class="fold tool-result is-error">(.*?)</details>', html, re.S)
    assert error is not None
    assert "tool result: Bash (error)" in error.group(1)
    assert 'href="#m-5"' in error.group(1)
    assert "JSONB does not exist!" in error.group(1)
    assert '<details class="fold thinking"><summary>thinking</summary>' in html


def test_transcript_markup_is_escaped(client, sample):
    html = client.get(reverse("viewer-session", args=[sample])).content.decode()
    assert "<script>alert(" not in html
    # Rendered as Markdown with raw HTML off: the tag is text (quotes need no escaping there).
    assert "&lt;script&gt;alert('transcripts are data, never markup')&lt;/script&gt;" in html


def test_sidechain_messages_are_marked(client, site):
    ingest_transcripts(
        site,
        [
            Transcript(
                session_id="with-sidechain",
                project="p",
                source="claude_code",
                messages=(
                    Message(index=0, role="user", text="main thread"),
                    Message(
                        index=1,
                        role="assistant",
                        text="sub-agent work",
                        is_sidechain=True,
                        tool_calls=(ToolCall("t1", "Read", {"file_path": "<b>x</b>"}),),
                    ),
                ),
            )
        ],
    )
    html = client.get(reverse("viewer-session", args=["with-sidechain"])).content.decode()
    assert 'class="msg role-assistant is-sidechain"' in html
    assert 'class="msg role-user"' in html
    assert html.count('title="Sub-agent (sidechain) message">sidechain</span>') == 1
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_session_ids_with_slashes_and_spaces_resolve(client, site):
    odd = "notes/2026 plan?#1"
    ingest_transcripts(
        site, [Transcript(odd, "p", "markdown", (Message(index=0, role="user", text="hi"),))]
    )
    url = reverse("viewer-session", args=[odd])
    assert client.get(url).status_code == 200
    assert url in client.get(reverse("viewer-sessions")).content.decode()


def test_an_unknown_session_is_a_404_page(client, site):
    response = client.get(reverse("viewer-session", args=["no-such-session"]))
    assert response.status_code == 404
    assert "Not found" in response.content.decode()


# --- dashboard ------------------------------------------------------------------------


def test_the_dashboard_shows_counts_and_links(client, sample):
    html = client.get(reverse("viewer-dashboard")).content.decode()
    assert '<span class="n">1</span> sessions' in html
    assert '<span class="n">12</span> messages' in html
    assert 'href="/entries/?stage=certified">certified</a>' in html  # the stage legend
    assert "vectors waiting (outbox)" in html and "projection errors" in html
    assert '<svg class="chart" role="img"' in html and "<title" in html
    assert 'href="/sessions/"' in html and 'href="/api/docs"' in html


def test_pages_carry_the_csrf_header_for_htmx(client, site):
    html = client.get(reverse("viewer-dashboard")).content.decode()
    assert re.search(r"hx-headers='\{\"X-CSRFToken\": \"[A-Za-z0-9]+\"\}'", html)


# --- token authentication -------------------------------------------------------------


@pytest.fixture
def token(settings, site) -> str:
    settings.AXIOM_AUTH_TOKEN = "s3cret-token"
    return "s3cret-token"


def test_without_a_token_setting_everything_is_open(client, site):
    assert client.get(reverse("viewer-dashboard")).status_code == 200


def test_a_request_without_the_token_is_refused(client, token):
    response = client.get(reverse("viewer-sessions"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert 'name="token"' in response.content.decode()  # the login form
    api = client.get("/api/v1/health")
    assert api.status_code == 401
    assert "detail" in api.json()


def test_the_bearer_token_is_accepted(client, token):
    ok = client.get(reverse("viewer-sessions"), HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ok.status_code == 200
    assert client.get("/api/v1/health", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
    wrong = client.get(reverse("viewer-sessions"), HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 401


def test_login_sets_a_cookie_that_authenticates(client, token):
    response = client.post(reverse("viewer-login"), {"token": token, "next": "/sessions/"})
    assert response.status_code == 302
    assert response["Location"] == "/sessions/"
    cookie = response.cookies["axiom_token"]
    assert cookie["httponly"] and token not in cookie.value
    assert client.get(reverse("viewer-sessions")).status_code == 200


def test_the_login_form_posts_the_token(client, token):
    form = client.get(reverse("viewer-login"))
    assert 'method="post"' in form.content.decode()
    response = client.post(reverse("viewer-login"), {"token": token, "next": "/"})
    assert response.status_code == 302
    assert client.get(reverse("viewer-dashboard")).status_code == 200


def test_a_token_in_the_login_url_is_ignored(client, token):
    response = client.get(reverse("viewer-login"), {"token": token, "next": "/sessions/"})
    assert response.status_code == 200
    assert 'name="token"' in response.content.decode()  # just the form again
    assert "axiom_token" not in response.cookies
    assert client.get(reverse("viewer-sessions")).status_code == 401


def test_login_needs_the_forms_csrf_token(token):
    strict = Client(enforce_csrf_checks=True)
    refused = strict.post(reverse("viewer-login"), {"token": token})
    assert refused.status_code == 403
    assert "axiom_token" not in refused.cookies
    csrf = strict.get(reverse("viewer-login")).cookies["csrftoken"].value
    accepted = strict.post(reverse("viewer-login"), {"token": token, "csrfmiddlewaretoken": csrf})
    assert accepted.status_code == 302
    assert "axiom_token" in accepted.cookies


def test_a_wrong_login_token_is_refused(client, token):
    response = client.post(reverse("viewer-login"), {"token": "guess"})
    assert response.status_code == 401
    assert "not valid" in response.content.decode()
    assert "axiom_token" not in response.cookies
    assert client.get(reverse("viewer-dashboard")).status_code == 401


def test_login_never_redirects_off_site(client, token):
    response = client.post(reverse("viewer-login"), {"token": token, "next": "https://evil.test/"})
    assert response["Location"] == "/"


def test_static_files_need_no_token(client, token):
    assert client.get("/static/axiom/app.css").status_code != 401


def test_pages_name_their_icon_so_browsers_do_not_ask_for_a_missing_favicon(client, site):
    """Without a linked icon every browser asks for /favicon.ico, a 404 in the console of
    every first page load."""
    html = client.get(reverse("viewer-dashboard")).content.decode()
    assert '<link rel="icon" href="/static/axiom/favicon.svg" type="image/svg+xml">' in html
    assert finders.find("axiom/favicon.svg")  # what runserver serves under /static/

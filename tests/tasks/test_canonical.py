"""Canonical keys and ids: variants of one name map to one key; strong ids are recognised."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from axiom.tasks.canonical import (
    DEFAULT_PROJECT,
    artifact_key_for,
    artifact_keys_in,
    condition_key,
    entity_id_for,
    kind_of_key,
    normalize_project,
    normalize_text,
    normalize_title,
    normalize_url,
    placeholder_condition_key,
    task_key,
    task_lookup_keys,
)


def _url_key(url: str) -> str:
    return "art:url:" + hashlib.sha1(url.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    "variant",
    [
        "Fix the login bug",
        "fix the login bug",
        "FIX THE LOGIN BUG",
        "  Fix   the\tlogin\nbug  ",
        "Fix the login bug.",
        "Fix the login-bug!",
        "**Fix** the `login` bug?",
        "ＦＩＸ　ｔｈｅ ｌｏｇｉｎ bug",  # full-width letters and ideographic space (NFKC)
        "Fix the lo\u200bgin bug",  # zero-width space inside a word
        "Fix the login bug 🐛",  # emoji is a symbol
    ],
)
def test_english_variants_share_one_key(variant: str) -> None:
    assert task_key("axiom", variant) == "task:axiom:fix login bug"


@pytest.mark.parametrize(
    "variant",
    [
        "로그인 버그 수정",
        "로그인 버그 수정!",
        "로그인 버그 수정。",  # ideographic full stop
        "「로그인 버그 수정」",
        "로그인  버그\u3000수정",
        unicodedata.normalize("NFD", "로그인 버그 수정"),  # decomposed jamo
        "  로그인 버그 수정 ",
    ],
)
def test_korean_variants_share_one_key(variant: str) -> None:
    assert task_key("axiom", variant) == "task:axiom:로그인 버그 수정"


def test_korean_spacing_is_significant() -> None:
    assert task_key("p", "로그인 버그") != task_key("p", "로그인버그")


def test_mixed_korean_and_english() -> None:
    assert normalize_text("API 키 발급 (Stripe)!") == "api 키 발급 stripe"


def test_apostrophes_are_deleted_other_punctuation_is_a_space() -> None:
    assert normalize_text("Don't break") == normalize_text("dont break") == "dont break"
    assert normalize_text("Don’t break") == "dont break"
    assert normalize_text("snake_case-name/path") == "snake case name path"


def test_nfkc_and_casefold() -> None:
    assert normalize_text("Straße") == normalize_text("STRASSE") == "strasse"
    assert normalize_text("ﬁle №１") == "file no1"
    assert normalize_text("①②") == "12"


def test_accents_are_kept() -> None:
    assert normalize_text("Café") == "café"
    assert normalize_text("Café") != normalize_text("Cafe")
    assert normalize_text(unicodedata.normalize("NFD", "Café")) == "café"


def test_other_scripts_are_kept() -> None:
    assert normalize_text("数据库 迁移") == "数据库 迁移"
    assert normalize_text("हिन्दी") == "हिन्दी"  # vowel signs are marks, kept
    assert normalize_text("Миграция БД") == "миграция бд"


@given(st.text())
def test_normalize_text_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


@given(st.text())
def test_normalize_text_shape(text: str) -> None:
    norm = normalize_text(text)
    assert norm == norm.strip()
    assert "  " not in norm
    assert not re.search(r"[\t\n\r]", norm)
    assert unicodedata.normalize("NFKC", norm) == norm


def test_empty_titles_cannot_be_keyed() -> None:
    with pytest.raises(ValueError):
        task_key("p", "!!! ...")
    with pytest.raises(ValueError):
        condition_key("p", "   ")


# --------------------------------------------------------------------------- articles


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Fix login redirect bug", "Fix the login redirect bug"),
        ("Write a test for the parser", "write test for parser"),
        ("Add an index", "add index"),
        ("THE Fix", "fix"),
        ("Fix the 로그인 bug", "Fix 로그인 bug"),
    ],
)
def test_task_keys_drop_english_articles(a: str, b: str) -> None:
    assert task_key("p", a) == task_key("p", b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Fix login redirect bug", "Fix logout redirect bug"),
        ("Plan A", "Plan B"),  # a final article is a name, kept
        ("Plan A", "Plan"),
        ("Update theme", "Update me"),  # whole words only
        ("Another fix", "other fix"),
        ("로그인 버그 수정", "로그아웃 버그 수정"),
    ],
)
def test_article_dropping_keeps_different_titles_apart(a: str, b: str) -> None:
    assert task_key("p", a) != task_key("p", b)


def test_korean_titles_are_kept_intact() -> None:
    assert normalize_title("로그인 버그 수정") == "로그인 버그 수정"
    assert normalize_title("the 로그인 리다이렉트 버그") == "로그인 리다이렉트 버그"
    assert task_key("p", "로그인버그") != task_key("p", "로그인 버그")


def test_a_title_of_articles_only_keeps_its_last_word() -> None:
    assert normalize_title("The") == "the"
    assert normalize_title("a the") == "the"
    assert task_key("p", "The") == "task:p:the"


def test_conditions_keep_the_plain_normalization() -> None:
    assert condition_key("p", "the design review") == "cond:p:the design review"


def test_lookup_keys_give_the_key_under_the_older_rule_too() -> None:
    assert task_lookup_keys("p", "Fix the login bug") == (
        "task:p:fix login bug",
        "task:p:fix the login bug",
    )
    assert task_lookup_keys("p", "Fix login bug") == ("task:p:fix login bug",)
    assert task_lookup_keys("p", "로그인 버그 수정") == ("task:p:로그인 버그 수정",)


@given(st.text())
def test_normalize_title_is_idempotent_and_never_empties_a_title(text: str) -> None:
    once = normalize_title(text)
    assert normalize_title(once) == once
    assert bool(once) == bool(normalize_text(text))


# --------------------------------------------------------------------------- projects


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("axiom", "axiom"),
        ("Axiom", "axiom"),
        ("/home/me/work/Axiom", "axiom"),
        ("/home/me/work/axiom/", "axiom"),
        ("C:\\src\\Axiom", "axiom"),
        ("  my repo  ", "my-repo"),
        ("my_repo", "my_repo"),
        ("a:b", "a-b"),
        ("프로젝트", "프로젝트"),
        ("", DEFAULT_PROJECT),
        ("///", DEFAULT_PROJECT),
        (None, DEFAULT_PROJECT),
    ],
)
def test_normalize_project(raw: str | None, expected: str) -> None:
    assert normalize_project(raw) == expected


@given(st.one_of(st.none(), st.text()))
def test_normalize_project_is_idempotent_and_key_safe(raw: str | None) -> None:
    once = normalize_project(raw)
    assert normalize_project(once) == once
    assert once
    assert ":" not in once and "/" not in once and "\\" not in once


def test_keys_use_the_normalized_project() -> None:
    assert task_key("/work/Axiom", "Ship it") == task_key("axiom", "ship it!")
    assert condition_key("Axiom", "API key issued") == "cond:axiom:api key issued"
    assert condition_key("axiom", "API 키 발급 대기") == "cond:axiom:api 키 발급 대기"


def test_placeholder_condition_is_per_task() -> None:
    a = placeholder_condition_key("axiom", "tsk_aaaaaaaaaaaa")
    b = placeholder_condition_key("axiom", "tsk_bbbbbbbbbbbb")
    assert a.startswith("cond:axiom:unknown blocker of ")
    assert a != b
    assert a == placeholder_condition_key("/x/Axiom", "tsk_aaaaaaaaaaaa")


# --------------------------------------------------------------------------- artifacts


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com/docs/page",
        "see https://example.com/docs/page/",
        "see https://example.com/docs/page.",
        "see https://example.com/docs/page/),",
        "(https://example.com/docs/page)",
        "<https://example.com/docs/page>",
        "[docs](https://example.com/docs/page)",
        "HTTPS://EXAMPLE.com/docs/page",
        "https://example.com:443/docs/page#install",
        "문서 https://example.com/docs/page 참고",
        "문서(https://example.com/docs/page)를 참고",
    ],
)
def test_url_variants_share_one_key(text: str) -> None:
    assert artifact_key_for(text) == _url_key("https://example.com/docs/page")


def test_url_path_case_and_query_are_significant() -> None:
    base = artifact_key_for("https://example.com/Docs")
    assert base != artifact_key_for("https://example.com/docs")
    assert artifact_key_for("https://example.com/a?x=1") != artifact_key_for(
        "https://example.com/a?x=2"
    )
    assert artifact_key_for("http://example.com/a") != artifact_key_for("https://example.com/a")


def test_url_keeps_balanced_parentheses() -> None:
    url = "https://en.wikipedia.org/wiki/Foo_(bar)"
    assert artifact_key_for(f"(see {url})") == _url_key(url)


def test_url_with_korean_path_is_cut_at_korean_punctuation() -> None:
    url = "https://ko.wikipedia.org/wiki/한국"
    assert artifact_key_for(f"{url}。다음 문장") == _url_key(url)
    assert artifact_key_for(f"「{url}」") == _url_key(url)


def test_normalize_url() -> None:
    assert normalize_url("HTTP://Example.COM:80/a/b/?q=1#frag") == "http://example.com/a/b?q=1"
    assert normalize_url("https://example.com/") == "https://example.com"
    assert normalize_url("https://example.com:8443/x") == "https://example.com:8443/x"


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com/Owner/Repo/issues/12",
        "https://github.com/owner/repo/issues/12/",
        "https://github.com/owner/repo/issues/12#issuecomment-99",
        "https://www.github.com/owner/repo/pull/12",
        "https://github.com/owner/repo/pull/12/files",
        "fixed in owner/repo#12",
        "Owner/Repo#12 머지 대기",
        "owner/repo#12에서 논의",
        "see (owner/repo#12).",
    ],
)
def test_github_forms_share_one_key(text: str) -> None:
    assert artifact_key_for(text) == "art:gh_issue:owner/repo:12"


def test_github_issue_url_is_not_a_url_key() -> None:
    keys = artifact_keys_in("https://github.com/owner/repo/issues/3")
    assert keys == ["art:gh_issue:owner/repo:3"]


def test_other_github_urls_are_plain_urls() -> None:
    url = "https://github.com/owner/repo/blob/main/README.md"
    assert artifact_key_for(url) == _url_key(url)


def test_github_repo_names_with_dots_and_dashes() -> None:
    assert artifact_key_for("my-org/my.repo-js#7") == "art:gh_issue:my-org/my.repo-js:7"


def test_bare_hash_number_is_not_an_id() -> None:
    assert artifact_key_for("see #12") is None
    assert artifact_key_for("path/to/file#12") != "art:gh_issue:to/file:12"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("ABC-123", "art:jira:ABC-123"),
        ("blocked on PROJ-42 being merged", "art:jira:PROJ-42"),
        ("PROJ-42을 해결해야 함", "art:jira:PROJ-42"),
        ("(AX_2-7)", "art:jira:AX_2-7"),
        ("see https://acme.atlassian.net/browse/OPS-77", "art:jira:OPS-77"),
        ("https://jira.acme.io/browse/OPS-77?focused=1", "art:jira:OPS-77"),
    ],
)
def test_jira_keys(text: str, key: str) -> None:
    assert artifact_key_for(text) == key


@pytest.mark.parametrize(
    "text",
    [
        "abc-123",  # Jira keys are upper case
        "A-1",  # project keys have at least two characters
        "UTF-8 decoding fails",
        "use SHA-1 here",
        "ISO-8601 dates",
        "GPT-4 answer",
        "CVE-2024-12345",
        "feature/ABC-12-login",  # branch name, not a bare key
        "ABC-0123",  # no leading zero
        "nothing to see",
        "",
    ],
)
def test_not_jira_or_not_an_id(text: str) -> None:
    assert artifact_key_for(text) is None


def test_url_containing_a_jira_like_token_is_one_url_key() -> None:
    url = "https://example.com/notes/ABC-123"
    assert artifact_keys_in(f"see {url}") == [_url_key(url)]


def test_all_keys_in_order_without_duplicates() -> None:
    text = "needs OPS-1 and foo/bar#2, see https://example.com/x and OPS-1 again"
    assert artifact_keys_in(text) == [
        "art:jira:OPS-1",
        "art:gh_issue:foo/bar:2",
        _url_key("https://example.com/x"),
    ]
    assert artifact_key_for(text) == "art:jira:OPS-1"


@given(st.text())
def test_artifact_recognition_never_crashes(text: str) -> None:
    for key in artifact_keys_in(text):
        assert key.startswith(("art:url:", "art:jira:", "art:gh_issue:"))
        assert entity_id_for(key).startswith("art_")


# --------------------------------------------------------------------------- ids


def test_entity_ids_are_deterministic_and_prefixed() -> None:
    key = task_key("axiom", "Fix the login bug")
    assert entity_id_for(key) == entity_id_for(task_key("/w/Axiom", "fix the LOGIN bug!"))
    assert re.fullmatch(r"tsk_[0-9a-f]{12}", entity_id_for(key))
    assert entity_id_for(key) == "tsk_" + hashlib.sha1(key.encode()).hexdigest()[:12]
    assert entity_id_for(condition_key("a", "x")).startswith("cnd_")
    assert entity_id_for("art:jira:ABC-1").startswith("art_")
    assert entity_id_for(task_key("a", "x")) != entity_id_for(task_key("b", "x"))


def test_kind_of_key() -> None:
    assert kind_of_key("task:a:x") == "task"
    assert kind_of_key("cond:a:x") == "condition"
    assert kind_of_key("art:jira:ABC-1") == "artifact"


@pytest.mark.parametrize("bad", ["", "task", "tsk:a:b", "nonsense"])
def test_entity_id_rejects_non_keys(bad: str) -> None:
    with pytest.raises(ValueError):
        entity_id_for(bad)

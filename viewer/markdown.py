"""Transcript text as inert Markdown: CommonMark with raw HTML off, links kept only for
http(s) and mailto, every link opening in a new tab with `rel="noopener noreferrer"`.

A message with a cited span is not rendered here: the span view marks raw text offsets
(`viewer.spans`), which Markdown would move, so those messages stay escaped text.
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

SAFE_SCHEMES = ("http://", "https://", "mailto:")
LINK_REL = "noopener noreferrer"
# Bare URLs in prose become links too (no linkify-it dependency): up to whitespace or `<`,
# minus trailing punctuation that usually closes the sentence.
BARE_URL = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]}]")


def _safe_link(url: str) -> bool:
    """Only web and mail links; relative or other-scheme links stay text."""
    return url.strip().lower().startswith(SAFE_SCHEMES)


def _link_open(tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", LINK_REL)
    if not str(token.attrGet("href") or "").lower().startswith("mailto:"):
        token.attrSet("target", "_blank")
    return _renderer.renderToken(tokens, idx, options, env)


def _image(tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    """An image becomes a link to it: loading it would reach another host on page view."""
    token = tokens[idx]
    src = escapeHtml(str(token.attrGet("src") or ""))
    alt = escapeHtml(_renderer.renderInlineAsText(token.children or [], options, env))
    return f'<a href="{src}" rel="{LINK_REL}" target="_blank">image: {alt or src}</a>'


def _bare_urls(state: Any) -> None:
    """Core rule: turn bare http(s) URLs in text tokens (outside links) into links."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        in_link = 0
        for token in block.children:
            in_link += token.type == "link_open"
            in_link -= token.type == "link_close"
            if token.type != "text" or in_link or "http" not in token.content:
                children.append(token)
                continue
            children.extend(_split_urls(token.content, token.level))
        block.children = children


def _split_urls(text: str, level: int) -> list[Token]:
    out: list[Token] = []
    position = 0
    for match in BARE_URL.finditer(text):
        if match.start() > position:
            out.append(_text(text[position : match.start()], level))
        opener = Token("link_open", "a", 1, attrs={"href": match.group()}, level=level)
        out += [opener, _text(match.group(), level + 1), Token("link_close", "a", -1, level=level)]
        position = match.end()
    if position < len(text):
        out.append(_text(text[position:], level))
    return out


def _text(content: str, level: int) -> Token:
    return Token("text", "", 0, content=content, level=level)


_md = MarkdownIt("commonmark", {"html": False, "linkify": False})
_md.validateLink = _safe_link  # type: ignore[method-assign]
_md.core.ruler.push("bare_urls", _bare_urls)
_renderer = _md.renderer
_renderer.rules["link_open"] = _link_open
_renderer.rules["image"] = _image


def render_markdown(text: str) -> SafeString:
    """HTML for `text`; safe to mark safe because raw HTML is escaped by markdown-it."""
    return mark_safe(_md.render(text))  # noqa: S308 - html=False: markdown-it escapes all input

"""`viewer.markdown` and `viewer.transcript`: inert Markdown, folding of long messages."""

from __future__ import annotations

from axiom.ingest.session_queries import MessageRow
from viewer.markdown import render_markdown
from viewer.spans import Segment
from viewer.transcript import is_long, message_bodies, preview_of


def message(index: int, text: str) -> MessageRow:
    return MessageRow(index, "user", text, None, False, [], {})


def test_it_escapes_raw_html_and_drops_unsafe_links():
    html = render_markdown('<b onclick="x()">hi</b> [a](javascript:alert(1)) [b](/relative)')
    assert "<b" not in html and "&lt;b onclick" in html
    assert "href" not in html  # neither javascript: nor a relative link becomes a link


def test_every_link_gets_rel_noopener():
    html = render_markdown("[a](https://x.org) https://y.org/z. [m](mailto:a@b.c)")
    assert html.count('rel="noopener noreferrer"') == 3
    assert '<a href="https://y.org/z" rel="noopener noreferrer" target="_blank">' in html
    assert '<a href="mailto:a@b.c" rel="noopener noreferrer">m</a>' in html


def test_code_blocks_keep_their_text():
    html = render_markdown("```\n<script>x</script>\n```")
    assert "<pre><code>&lt;script&gt;x&lt;/script&gt;\n</code></pre>" in html


def test_a_cited_message_keeps_raw_text_and_stays_open():
    long = "word " * 2000
    bodies = message_bodies([message(0, long), message(1, long)], {1: [Segment(long, "c1")]})
    assert bodies[0].folded and bodies[0].html is not None
    assert not bodies[1].folded and bodies[1].html is None


def test_long_means_many_characters_or_many_lines():
    assert not is_long("short")
    assert is_long("x" * 3001)
    assert is_long("line\n" * 41)
    assert preview_of("word " * 500).endswith("…")
    assert len(preview_of("word " * 500)) <= 301

"""Answers as a chat interface shows them: Markdown rendered by markdown-it-py, then sanitized by nh3.

Judges read answers the way a user sees them, so a reader of the pair explorer should too: bold, headers,
lists, tables and code blocks appear rendered. Two layers keep that safe. The parser runs with raw HTML off,
so `<script>` in an answer is text, and it rejects `javascript:`-style link targets; nh3 (the Ammonia
sanitizer) then keeps only an allowlist of tags and attributes and the http(s) and mailto URL schemes, so
nothing the parser lets through can carry a handler, a style or a script URL. Images are shown as their
address, never fetched: a page that opens offline must not call out to hosts an answer names. LaTeX stays
text (no math plugin), and code blocks stay text inside `<pre><code>`.
"""

from __future__ import annotations

from functools import cache, lru_cache
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt

TAGS = {"p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2",
        "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a"}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}
URL_SCHEMES = {"http", "https", "mailto"}


def _image_as_text(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as `[image: alt] address` in escaped text: shown, not loaded."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    return f"[image: {escape(alt)}] {escape(str(token.attrGet('src') or ''))}"


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    md.add_render_rule("image", _image_as_text)
    return md


@lru_cache(maxsize=20_000)  # a reference's answers appear in every comparison of a profile
def render_markdown(text: str) -> str:
    """Sanitized HTML for one answer. Table cells keep only a text-align style (what the parser writes for
    aligned columns); every other style, class, id and handler is removed."""
    html = _parser().render(text)
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                     filter_style_properties={"text-align"}, link_rel="noopener noreferrer nofollow")


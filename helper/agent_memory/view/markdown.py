"""A note's Markdown as HTML that can carry nothing active: markdown-it-py with raw HTML off (every tag a note holds is
shown as text), no images (nothing is ever loaded), and links kept only when they lead to http, https or mailto
addresses or within the page (`javascript:`, `vbscript:`, `data:`, `file:` and every other scheme are shown as text).
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote

from markdown_it import MarkdownIt

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence

    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

ALLOWED_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_IGNORED = re.compile(r"[\x00-\x20\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def safe_link(url: str) -> bool:
    """Whether a link may be kept: no scheme (a relative address), or one of ALLOWED_SCHEMES. Browsers ignore
    controls, spaces and invisible characters inside a scheme (`java\\tscript:`), so they are taken out first."""
    plain = _IGNORED.sub("", unquote(url)).lower()  # markdown-it hands it over percent-encoded
    found = _SCHEME.match(plain)
    if found is None:
        return not plain.startswith(("//", "\\", "/\\"))  # another host's address, without a scheme
    return found.group(1) in ALLOWED_SCHEMES


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")  # an image is a request: `![x](url)` stays text, its link checked as any other
    md.validateLink = safe_link  # type: ignore[method-assign]  # markdown-it-py's documented hook

    def link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
        tokens[idx].attrSet("referrerpolicy", "no-referrer")
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


def to_html(text: str) -> str:
    """The HTML of a note's Markdown body."""
    html: str = _parser().render(text)
    return html

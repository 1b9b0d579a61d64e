"""Reading the built site back: links, anchors and text of its pages."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class PageParser(HTMLParser):
    """Collects ids, link targets (``href``, ``xlink:href``, ``src``) and the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.append(value)
            elif name in ("href", "src", "xlink:href", "action", "poster"):
                self.links.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def broken_links(site: Path, pages: list[Path]) -> list[str]:
    """Every link of ``pages`` that does not point at an existing file of the site (and an
    existing id in it, for ``#fragment`` links); also links that leave the site."""
    parsed = {p.resolve(): parse(p) for p in pages}
    problems = []
    root = site.resolve()
    for page, doc in parsed.items():
        for link in doc.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                problems.append(f"{page.name}: external {link}")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_relative_to(root):
                problems.append(f"{page.name}: leaves the site: {link}")
            elif not target.is_file():
                problems.append(f"{page.name}: no file for {link}")
            elif parts.fragment:
                ids = (parsed[target] if target in parsed else parse(target)).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{page.name}: no id for {link}")
    return problems


def row_of(page: Path, needle: str, *, after: str = "") -> str:
    """The first ``<tr>`` of ``page`` containing ``needle`` (raw HTML), after the text
    ``after`` when given."""
    html = page.read_text(encoding="utf-8")
    at = html.index(needle, html.index(after) if after else 0)
    return html[html.rindex("<tr", 0, at):html.index("</tr>", at)]

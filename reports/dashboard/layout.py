"""The page shell shared by every dashboard page: the report's self-contained style
(:mod:`reports.render.html`: its CSS, Content-Security-Policy, escaping and tables) plus a
navigation bar and a few dashboard classes. Pages link each other by relative paths only, so
the site works from ``file://`` and from any sub-path of a web server (GitHub Pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from reports.render.html import _CSS as REPORT_CSS
from reports.render.html import CSP
from reports.render.html import _e as esc
from reports.render.html import _empty as empty
from reports.render.html import _table as table
from reports.render.html import _verdict as verdict

__all__ = ["SiteContext", "empty", "esc", "page", "table", "tag", "verdict"]

_CSS = REPORT_CSS + """
nav.top{margin:18px 0 0;font-size:13px;border-bottom:1px solid #eee;padding-bottom:6px}
nav.top a{margin-right:16px}nav.top a.here{font-weight:700;color:#222;text-decoration:none}
.tag{display:inline-block;padding:0 5px;border-radius:3px;font-size:11px;font-weight:600;
 margin-left:6px;vertical-align:middle;white-space:nowrap}
.tag-uncommon{background:#ede7f6;color:#4527a0;border:1px solid #b39ddb}
.tag-problem{background:#ffebee;color:#b71c1c;border:1px solid #ef9a9a}
.tag-cp{background:#fdecea;color:#b71c1c;border:1px solid #ef9a9a}
tr.cp td{background:#fdecea}tr.step td{background:#fff4e5}
.step-regression{color:#b71c1c;font-weight:700}.step-improvement{color:#1b5e20;font-weight:700}
.spread{font-size:11px;white-space:nowrap}tr.uncommon td:first-child{border-left:3px solid #7e57c2}
svg.spark{display:block}.multiples{display:flex;flex-wrap:wrap;gap:6px 18px;margin:8px 0}
svg.panel{display:block;border:1px solid #eee;border-radius:3px}
.note{display:block;min-width:24em;font-size:12px}
.toc a{margin-right:14px;white-space:nowrap}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:13px}
dl.meta dt{color:#666}dl.meta dd{margin:0;overflow-wrap:anywhere}
"""


@dataclass(frozen=True)
class SiteContext:
    title: str
    generated: str  # when the site was built (UTC, ISO)
    store: str  # the store as given on the command line
    asv: bool  # an asv site was copied to asv/


def tag(text: str, kind: str) -> str:
    return f'<span class="tag tag-{esc(kind)}">{esc(text)}</span>'


def page(ctx: SiteContext, title: str, body: list[str], *, depth: int = 0,
         here: str = "") -> str:
    """A whole document; ``depth`` is how many folders below the site root the page is,
    ``here`` the nav entry to highlight (``index``, ``compare``, ``coverage``, ``engines``)."""
    up = "../" * depth
    links = [("index", f"{up}index.html", "Workloads"),
             ("compare", f"{up}compare.html", "Release comparison"),
             ("coverage", f"{up}coverage.html", "Coverage"),
             ("engines", f"{up}engines.html", "Engines")]
    if ctx.asv:
        links.append(("asv", f"{up}asv/index.html", "asv"))
    current = ' class="here"'
    nav = "".join(f'<a href="{href}"{current if key == here else ""}>{esc(text)}</a>'
                  for key, href, text in links)
    footer = (f'<p class="muted">{esc(ctx.title)} · built {esc(ctx.generated)} from the '
              f"results store {esc(ctx.store)} by schedperf dashboard</p>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f'<nav class="top">{nav}</nav>', *body, footer, "</body>", "</html>", ""])

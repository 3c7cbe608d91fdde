"""Check that a built documentation site works when opened as files (``file://``).

    python docs/check_site_links.py build/site

Every link and resource (``href``, ``src``) of every HTML page that points inside the site
must name an existing file, relative to the page: a link to a folder (``tutorials/``) or an
absolute path (``/api/``) needs a web server. ``404.html``, the page a web server shows for a
missing address, is left out: its links are absolute by design. Prints the broken ones; exit
status 1 if any.
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Links(HTMLParser):
    """The ``href`` and ``src`` values of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("href", "src") and value]


def broken_links(site: Path) -> list[str]:
    """``page: url`` for each link of the site's pages that does not name a file of the site."""
    site = site.resolve()
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.parent == site and page.name == "404.html":
            continue
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        for url in parser.urls:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:
                continue  # another site, data:, mailto:, or an anchor of this page
            path = unquote(parts.path)
            target = (page.parent / path).resolve()
            inside = target == site or site in target.parents
            if path.startswith("/") or not inside or not target.is_file():
                broken.append(f"{page.relative_to(site).as_posix()}: {url}")
    return broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site (mkdocs' site_dir)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        sys.stderr.write(f"error: {str(args.site)!r} has no index.html: is it a built site?\n")
        return 2
    broken = broken_links(args.site)
    for line in broken:
        print(line)
    print(f"{len(broken)} broken links in {args.site}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

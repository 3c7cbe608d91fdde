"""A table of strings ready to print, in the terminal or a notebook (``TextTable``): fitted to
a width, with styles per cell and an optional detail line per row. Loads rich only to print."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

WRAP = 12
"""A cell longer than this may wrap when a table is fitted to the terminal (``TextTable.fit``)."""


@dataclass(frozen=True)
class TextTable:
    """A table ready to print: title, column headers, rows, a caption under it and notes
    printed after it. ``justify`` has a letter per column, ``l`` (left) or ``r`` (right; the
    columns past its end too); with ``no_wrap`` only the last column may wrap, and the first
    ``whole`` columns never do (a word wider than a wrapping column is folded, not cut);
    ``styles``, if any, holds a terminal style per cell (``""``: none). With ``details`` (a
    line per row, e.g. a claim's reason in short) the table prints as plain lines without
    borders: each row on one line, its last cell cut to the width, its detail under it,
    indented to the second column."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    justify: str = ""
    caption: str = ""
    no_wrap: bool = False
    styles: tuple[tuple[str, ...], ...] = ()
    whole: int = 0
    details: tuple[str, ...] = ()

    def rich(self) -> Any:
        """The table as a ``rich.table.Table`` (printed as written: no rich markup); with
        ``details``, as lines (``lines``)."""
        if self.details:
            return self.lines()
        from rich.table import Table
        from rich.text import Text

        made = Table(title=self.title, header_style="bold", caption=self.caption or None)
        last = len(self.columns) - 1
        for i, column in enumerate(self.columns):
            justify: Literal["left", "right"] = (
                "left" if self.justify[i : i + 1] == "l" else "right"
            )
            wrap = not (self.no_wrap and i < last) and i >= self.whole
            overflow: Literal["fold", "ellipsis"] = "fold" if wrap else "ellipsis"
            made.add_column(column, justify=justify, no_wrap=not wrap, overflow=overflow)
        for i, row in enumerate(self.rows):
            styles = self.styles[i] if self.styles else ("",) * len(row)
            made.add_row(*(Text(c, style=s) if s else c for c, s in zip(row, styles, strict=True)))
        return made

    def widths(self) -> list[int]:
        """Each column's width: its header's or its widest cell's."""
        return [max(len(c), *(len(r[i]) for r in self.rows)) for i, c in enumerate(self.columns)]

    def lines(self) -> Any:
        """A table with ``details`` as a ``rich`` group of lines: the title, the header, then
        each row (cells two spaces apart, the last one not padded) and its detail."""
        from rich.console import Group
        from rich.text import Text

        widths = self.widths()
        indent = " " * (widths[0] + 2)

        def line(cells: tuple[str, ...], styles: tuple[str, ...]) -> Any:
            text = Text(no_wrap=True, overflow="ellipsis")
            for i, (cell, style) in enumerate(zip(cells, styles, strict=True)):
                last = i == len(cells) - 1
                text.append(cell if last else cell.ljust(widths[i] + 2), style=style or None)
            return text

        out = [Text(self.title, style="italic"), line(self.columns, ("bold",) * len(widths))]
        for i, (row, detail) in enumerate(zip(self.rows, self.details, strict=True)):
            out.append(line(row, self.styles[i] if self.styles else ("",) * len(row)))
            out.append(Text(indent + detail, style="dim"))
        return Group(*out, *([Text(self.caption)] if self.caption else []))

    def fit(self, width: int) -> TextTable:
        """The table with the columns (from the left) that fit ``width`` characters, each at
        least as wide as its header and its cells up to ``WRAP`` characters (longer cells
        wrap), and a note naming those left out; unchanged when all fit. With ``details``
        each row's last cell is cut (``…``) to what the width leaves it."""
        if self.details:
            room = width - sum(w + 2 for w in self.widths()[:-1])
            rows = tuple((*r[:-1], cut(r[-1], room)) for r in self.rows)
            return replace(self, rows=rows)
        if self.no_wrap or not self.columns:
            return self
        used, kept = 1, 0
        for i, column in enumerate(self.columns):
            cells = (min(len(row[i]), WRAP) for row in self.rows)
            used += 3 + max([len(column), *cells])
            if used > width and kept > 0:
                break
            kept += 1
        if kept == len(self.columns):
            return self
        left = ", ".join(self.columns[kept:])
        note = (
            f"{len(self.columns) - kept} columns not shown at this width ({left}); --json has all"
        )
        return replace(
            self,
            columns=self.columns[:kept],
            rows=tuple(row[:kept] for row in self.rows),
            styles=tuple(row[:kept] for row in self.styles),
            justify=self.justify[:kept],
            notes=(*self.notes, note),
        )


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ``…`` marking the cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def listing(title: str, rows: list[tuple[str, str]], notes: tuple[str, ...] = ()) -> TextTable:
    """A two-column table: quantity and value; ``notes`` printed after it."""
    return TextTable(title, ("quantity", "value"), tuple(rows), notes, justify="lr")

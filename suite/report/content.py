"""What a report says, independent of how it is shown: one model, two renderings (html.py, markdown.py).

Each kind's page.py (suite/<kind>/page.py) builds a Page of Sections, each holding blocks: Figures
(headline numbers), Table, Image (PNG bytes), Verdict, Text. Nothing here knows a kind.
"""

from dataclasses import dataclass, field


@dataclass
class Figures:
    items: list            # [(label, value, note)]


@dataclass
class Table:
    header: list
    rows: list
    caption: str = ""
    numbers_right: bool = True     # right-align cells that are numbers


@dataclass
class Image:
    name: str              # file stem (plots/<name>.png in the Markdown twin)
    png: bytes
    alt: str


@dataclass
class Verdict:
    verdict: str           # closed | open | invalid | compliant | non-compliant | unknown
    text: str


@dataclass
class Text:
    text: str


@dataclass
class Section:
    id: str
    title: str
    blocks: list = field(default_factory=list)


@dataclass
class Page:
    title: str
    subtitle: str
    sections: list
    tables: dict = field(default_factory=dict)   # export name -> (columns, rows)
    files: dict = field(default_factory=dict)    # file name -> text written as it is (a kind's own exports)
    labels: tuple = ()                           # MINIATURE, OPEN, INVALID, NOT PUBLISHABLE: in its title (suite.rules.verdict)

    def images(self):
        return [b for s in self.sections for b in s.blocks if isinstance(b, Image)]


def fmt(value, places=2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.{places}f}"
    return str(value)

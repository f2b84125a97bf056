"""README.md: at most 150 lines, its two set-up commands (which .ci/run runs), and links that lead
somewhere; the rest of the documentation is docs/*.md, each page linked from README."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 150


def readme_commands() -> list[str]:
    text = README.read_text()
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", setup, re.S)


def links(path: Path) -> list[str]:
    """The relative targets of a Markdown file's [text](target) links, without their #anchor."""
    targets = re.findall(r"\]\(([^)\s]+)\)", path.read_text())
    return [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def test_readme_has_exactly_two_setup_commands_each_one_line():
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)


def test_ci_runs_readmes_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    line = re.search(r"TEST_COMMAND='(.*)'", ci).group(1)
    assert line == readme_commands()[1]
    assert "pytest" in line


def test_readme_is_at_most_150_lines():
    assert len(README.read_text().splitlines()) <= MAX_README_LINES


def test_every_link_in_readme_and_docs_leads_to_a_file_that_exists():
    broken = [f"{page.relative_to(REPO)} -> {target}"
              for page in [README, *sorted(DOCS.glob("*.md"))]
              for target in links(page) if target and not (page.parent / target).exists()]
    assert broken == []


def test_readme_links_every_docs_page():
    linked = {(REPO / t).resolve() for t in links(README)}
    assert sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in linked) == []
    assert {"running.md", "multi-host.md", "dlio-engine.md", "checkpointing.md", "checker.md", "metrics.md",
            "tpcx-ai.md", "fdr-format.md", "submission.md", "architecture.md"} <= {p.name for p in DOCS.glob("*.md")}


def test_the_checker_page_says_how_to_write_a_rule():
    text = (DOCS / "checker.md").read_text()
    assert "## Writing a rule" in text
    for key in ("id:", "applies_to:", "field:", "op:", "value:", "severity:", "effect:", "message:"):
        assert key in text


def test_docs_name_only_code_paths_that_exist():
    """Every `suite/...` file or folder the README and docs name exists: a page cannot send a reader
    to a module that moved."""
    missing = set()
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for path in re.findall(r"`(suite/[\w./-]+?)`", page.read_text()):
            pattern = path.replace("NN", "[0-9][0-9]")        # ucNN.py: one file per use case
            if not list(REPO.glob(pattern)):
                missing.add(f"{page.relative_to(REPO)}: {path}")
    assert sorted(missing) == []

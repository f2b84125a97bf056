import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", setup, re.S)


def test_readme_has_exactly_two_setup_commands_each_one_line():
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)


def test_ci_runs_readmes_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    line = re.search(r"TEST_COMMAND='(.*)'", ci).group(1)
    assert line == readme_commands()[1]
    assert "pytest" in line

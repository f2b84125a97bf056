"""User-facing errors and the process exit codes.

`cli.main` catches SuiteError (and only it), prints its one-line message and
exits with its exit code. Anything else is a bug and keeps its traceback.
"""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0            # success, or compliant
    FAILED = 1        # non-compliant, or a run that failed
    BAD_INPUT = 2     # usage error or unusable input


class SuiteError(Exception):
    """An error the user can act on; str(err) is the whole one-line message."""

    exit_code = ExitCode.BAD_INPUT


class WorkloadError(SuiteError):
    """A workload file, name or parameter is invalid."""


class RuleError(SuiteError):
    """A rule file is invalid."""


class ResultError(SuiteError):
    """A result file or tree cannot be used."""


class RunError(SuiteError):
    """A benchmark run failed after it started."""

    exit_code = ExitCode.FAILED


def expected_got(where: str, field: str, expected, actual) -> str:
    """The one message shape used everywhere: `<where>: <field>: expected X, got Y`."""
    return f"{where}: {field}: expected {expected}, got {actual}"

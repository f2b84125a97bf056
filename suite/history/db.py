"""The two backends of suite.history.store and which one a location names: SQLite for a path (the
default $XDG_DATA_HOME/suite/history.sqlite), PostgreSQL for a postgresql:// URL.

SQLite: WAL (readers never wait for a writer), a busy timeout (a writer waits for another's
transaction), every write in BEGIN IMMEDIATE (two runs recording at once both land, one after the
other). A file that is not SQLite, is corrupt, or stays locked past the timeout is a HistoryError;
a new store's directory is made. PostgreSQL: autocommit, a transaction per write, the migration
under an advisory lock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from suite import redact
from suite.history.store import LOCK_TIMEOUT_S, SCHEMA_VERSION, SQLITE_MAGIC, HistoryError, Store, is_url, shown


def location(given: str | None = None) -> str:
    """--history, else SUITE_HISTORY, else $XDG_DATA_HOME/suite/history.sqlite (~/.local/share). An
    empty --history is an error, never the default store."""
    if given is not None:
        if not str(given).strip():
            raise HistoryError("--history: expected a store's path or postgresql:// URL, got an empty string "
                               "(leave --history out for $SUITE_HISTORY or the default store)")
        return str(given)
    if os.environ.get("SUITE_HISTORY"):
        return os.environ["SUITE_HISTORY"]
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "suite" / "history.sqlite")


def open_store(given: str | None = None, timeout_s: float | None = None, create: bool = True) -> Store:
    """The store at --history / SUITE_HISTORY / the default, migrated to this suite's schema. With
    `create` False (the commands that only read or forget: list, show, trend, regressions, rm, gc,
    rerun, compare's baseline), a SQLite path with no file there is an error naming it, not a new
    empty store; a store we may not write (its file or its directory read-only) is opened read-only."""
    where = location(given)
    if timeout_s is None:
        try:
            timeout_s = float(os.environ.get("SUITE_HISTORY_TIMEOUT_S") or LOCK_TIMEOUT_S)
        except ValueError:
            raise HistoryError(f"SUITE_HISTORY_TIMEOUT_S: expected a number of seconds, got "
                               f"{os.environ['SUITE_HISTORY_TIMEOUT_S']!r}") from None
    store = PostgresStore(where, timeout_s) if is_url(where) else SQLiteStore(where, timeout_s, create)
    try:
        store.migrate()
    except BaseException:
        store.close()
        raise
    return store


class SQLiteStore(Store):
    ID, FLOAT, PLACEHOLDER = "INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", "?"
    FIGURE_ORDER = ("UPDATE figures SET position = (SELECT COUNT(*) FROM figures AS f WHERE f.entry_id = "
                    "figures.entry_id AND f.rowid < figures.rowid) WHERE position IS NULL")

    def __init__(self, where: str, timeout_s: float, create: bool = True):
        self.where, self.timeout_s = where, timeout_s
        path = Path(where)
        self._refuse_foreign_file(path)
        exists = path.exists()
        if not exists and not create:
            raise HistoryError(f"{shown(where)}: expected an existing history store, got no file there (a mistyped "
                               f"--history? `suite history import` or `suite run` creates one)")
        self.read_only = exists and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        try:
            if not exists:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self._uri(path), timeout=timeout_s, isolation_level=None, uri=True)
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(f"{shown(where)}: expected a database file we can open, got {exc}") from None

    def _uri(self, path: Path) -> str:
        """rwc for a store we may write; ro for one we may not; ro and immutable where SQLite could not
        make the WAL index beside it (a read-only directory without one) and no WAL holds unmerged writes."""
        uri = f"file:{quote(str(path.absolute()))}"
        if not self.read_only:
            return uri + "?mode=rwc"
        shm, wal = Path(f"{path}-shm"), Path(f"{path}-wal")
        if not os.access(path.parent, os.W_OK) and not shm.exists() and not (wal.exists() and wal.stat().st_size):
            return uri + "?mode=ro&immutable=1"
        return uri + "?mode=ro"

    def migrate(self) -> None:
        """WAL set only once the file is known to be ours (or empty): a foreign file stays byte for byte.
        A read-only store is read as it is when its schema is this suite's, refused when older."""
        version = self._version()
        if self.read_only:
            if version != SCHEMA_VERSION:
                self._check_version(version)
                raise HistoryError(f"{shown(self.where)}: schema_version: expected {SCHEMA_VERSION} to read a store we "
                                   f"may not write, got {version} (open it once where it can be written to migrate it)")
            return
        if self._execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._execute("PRAGMA journal_mode=WAL").fetchone()
        super().migrate()

    def _refuse_foreign_file(self, path: Path) -> None:
        if path.is_dir():
            raise HistoryError(f"{shown(str(path))}: expected a SQLite file (or a new path), got a directory")
        try:
            with open(path, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise HistoryError(f"{shown(str(path))}: expected a readable SQLite file, got {exc.strerror or exc}") from None
        if head and head != SQLITE_MAGIC:
            raise HistoryError(f"{shown(str(path))}: expected a SQLite file (a suite history store), got another kind of "
                               f"file; it is left as it is")

    def _guard(self, call):
        try:
            return call()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise HistoryError(f"{shown(self.where)}: expected the store free within {self.timeout_s:g} s, got "
                                   f"it locked by another process (SUITE_HISTORY_TIMEOUT_S waits longer)") from None
            raise HistoryError(f"{shown(self.where)}: expected a usable suite history store, got {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"{shown(self.where)}: expected a suite history store, got {exc} (nothing was "
                               f"written to it)") from None

    def _tables(self) -> set[str]:
        rows = self._execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        return {r[0] for r in rows.fetchall()}

    def _execute(self, sql, params=()):
        return self._guard(lambda: self.conn.execute(sql, params))

    @contextlib.contextmanager
    def _write(self):
        if self.conn.in_transaction:          # nested (a batch of adds in one transaction): the outer one holds
            yield
            return
        self._execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        self._execute("COMMIT")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error, AttributeError):
            self.conn.close()


class PostgresStore(Store):
    ID, FLOAT, PLACEHOLDER = "BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "%s"
    LOCK_KEY = 0x5175_6974_6548   # the advisory lock a migration holds ("suiteH")

    def __init__(self, where: str, timeout_s: float):
        self.where, self.timeout_s = where, timeout_s
        try:
            import psycopg
        except ImportError:
            raise HistoryError(f"{shown(where)}: expected psycopg for a PostgreSQL store, got none: "
                               f"pip install '.[history-pg]' in the suite checkout") from None
        self._psycopg = psycopg
        try:
            self.conn = psycopg.connect(where, autocommit=True, connect_timeout=max(1, int(timeout_s)))
        except psycopg.Error as exc:
            raise HistoryError(f"{shown(where)}: expected a PostgreSQL server we can reach, got "
                               f"{_said(exc, where)}") from None
        self._tx = None

    def _tables(self) -> set[str]:
        rows = self._execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        return {r[0] for r in rows.fetchall()}

    def _version(self, lock: bool = False) -> int:
        if lock:
            self._execute("SELECT pg_advisory_xact_lock(%s)", (self.LOCK_KEY,))
        return super()._version(lock)

    def _execute(self, sql, params=()):
        try:
            return self.conn.execute(sql, params)
        except self._psycopg.Error as exc:
            raise HistoryError(f"{shown(self.where)}: expected a usable suite history store, got "
                               f"{_said(exc, self.where)}") from None

    @contextlib.contextmanager
    def _write(self):
        if self._tx is not None:          # nested: the outer transaction holds
            yield
            return
        try:
            with self.conn.transaction() as tx:
                self._tx = tx
                yield
        except self._psycopg.Error as exc:
            raise HistoryError(f"{shown(self.where)}: expected a write to land, got {_said(exc, self.where)}") from None
        finally:
            self._tx = None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def _said(exc: BaseException, where: str) -> str:
    """The first line of a driver's error, with whatever it repeats of `where`'s secrets scrubbed
    (libpq quotes the URL, or the part of it it could not parse)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact.scrub(first, where)

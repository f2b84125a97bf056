"""The results store of `suite history`: SQLite (the standard library; one file, WAL) by default, or
PostgreSQL by URL for a team that shares one (psycopg, the `history-pg` extra). One small interface
over both (`Store`): add, get, entries, remove; the SQL is written once with `?` placeholders.

The schema is versioned: the `meta` table holds `app` (this store's mark: a database without it that
holds other tables is foreign and refused untouched) and `schema_version`; MIGRATIONS brings an older
store up to SCHEMA_VERSION inside one write transaction (two processes opening a new store at once:
one migrates, the other finds it done). A store newer than this suite is refused, never downgraded.

Every failure of the database (not one, corrupt, locked past the timeout, unreachable) is a
HistoryError: one line naming the store, exit 2; nothing already recorded is rewritten by an open.
"""

from __future__ import annotations

import json

from suite.errors import SuiteError
from suite import redact
from suite.history import decode
from suite.history.entry import APART, Entry, Figure, key_of

APP = "suite-history"
SCHEMA_VERSION = 4
LOCK_TIMEOUT_S = 30.0            # how long a writer waits for another's transaction (SUITE_HISTORY_TIMEOUT_S)
SQLITE_MAGIC = b"SQLite format 3\x00"

# version -> statements; {id} and {float} are the dialect's (SQLite: INTEGER PRIMARY KEY AUTOINCREMENT,
# REAL; PostgreSQL: BIGSERIAL PRIMARY KEY, DOUBLE PRECISION)
MIGRATIONS = {
    1: ["CREATE TABLE entries (id {id}, recorded_at TEXT NOT NULL, started_at TEXT, source TEXT NOT NULL, "
        "status TEXT NOT NULL, kind TEXT NOT NULL, workload TEXT, accelerator TEXT, accelerators INTEGER, "
        "ruleset TEXT, division TEXT, verdict TEXT NOT NULL, system_fp TEXT NOT NULL, system_label TEXT NOT NULL, "
        "results_path TEXT, content_hash TEXT, command TEXT NOT NULL, cwd TEXT, exit_code INTEGER, "
        "duration_s {float}, system TEXT NOT NULL, identity TEXT NOT NULL)",
        "CREATE TABLE figures (entry_id INTEGER NOT NULL, name TEXT NOT NULL, label TEXT NOT NULL, "
        "higher_is_better INTEGER NOT NULL, per_run TEXT NOT NULL, per_epoch TEXT NOT NULL, point {float}, "
        "PRIMARY KEY (entry_id, name))"],
    2: ["CREATE INDEX entries_series ON entries (kind, workload, accelerator, system_fp)",
        "CREATE INDEX entries_hash ON entries (content_hash)",
        "CREATE INDEX figures_name ON figures (name, entry_id)"],
    # what a content hash covers when more than results_path; one entry per result and series (imports at once)
    3: ["ALTER TABLE entries ADD COLUMN hash_scope TEXT",
        "ALTER TABLE entries ADD COLUMN dedup_key TEXT",
        "CREATE UNIQUE INDEX entries_dedup ON entries (dedup_key)"],
    # a series is one kind + identity (dataset, round ...) + system (suite.history.entry.key_of): older
    # entries keyed from their recorded identity by _key_older (migrate); the figures' order (the first
    # is the kind's headline)
    4: ["ALTER TABLE entries ADD COLUMN series_key TEXT",
        "ALTER TABLE figures ADD COLUMN position INTEGER",
        "CREATE INDEX entries_series_key ON entries (series_key)"],
}
COLUMNS = ("recorded_at", "started_at", "source", "status", "kind", "workload", "accelerator", "accelerators",
           "ruleset", "division", "verdict", "system_fp", "system_label", "results_path", "content_hash",
           "command", "cwd", "exit_code", "duration_s", "system", "identity", "hash_scope", "series_key")
JSON_COLUMNS = ("command", "system", "identity", "hash_scope")


class HistoryError(SuiteError):
    """The store cannot be used (one line, exit 2)."""


def is_url(where: str) -> bool:
    return where.startswith(("postgresql://", "postgres://"))


def shown(where: str) -> str:
    """The store as a message names it: without a URL's password or secret query values (a path that
    only looks like a URL included)."""
    return redact.url(where)


class Store:
    """The one interface. Subclasses give connect-time setup, `_write()` (a write transaction's
    context), `_execute(sql, params)` -> cursor, and the dialect's {id} and {float}."""

    ID, FLOAT, PLACEHOLDER = "", "", "?"
    where = ""

    # ---------------------------------------------------------------- the schema
    def migrate(self) -> None:
        version = self._version()
        if version == SCHEMA_VERSION:
            return
        with self._write():
            version = self._version(lock=True)
            self._check_version(version)
            if version == 0:
                self._exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                self._exec("INSERT INTO meta (key, value) VALUES (?, ?)", ("app", APP))
                self._exec("INSERT INTO meta (key, value) VALUES (?, ?)", ("schema_version", "0"))
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for sql in MIGRATIONS[v]:
                    self._exec(sql.format(id=self.ID, float=self.FLOAT))
                if v == 4:
                    self._key_older()
            self._exec("UPDATE meta SET value = ? WHERE key = ?", (str(SCHEMA_VERSION), "schema_version"))

    def _key_older(self) -> None:
        """Entries of an older store get their series key from the identity they recorded (the kind's,
        as `suite compare` reads it); one recorded without any (an older suite's failed run, a kind
        without figures) is kept apart ("apart:<id>", said by trend and list). Their figures keep the
        order they were written in where the backend knows it (SQLite's rowid), else by name."""
        rows = self._exec("SELECT id, kind, identity, system_fp FROM entries WHERE series_key IS NULL").fetchall()
        for entry_id, kind, identity, fp in rows:
            try:
                said = json.loads(identity) if isinstance(identity, str) else None
            except ValueError:
                said = None
            ok = isinstance(said, dict) and said and isinstance(kind, str) and isinstance(fp, str)
            self._exec("UPDATE entries SET series_key = ? WHERE id = ?",
                       (key_of(kind, said, fp) if ok else f"{APART}{entry_id}", entry_id))
        if self.FIGURE_ORDER:
            self._exec(self.FIGURE_ORDER)

    FIGURE_ORDER = ""              # the dialect's statement numbering an older store's figures as written

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise HistoryError(f"{shown(self.where)}: schema_version: expected at most {SCHEMA_VERSION} "
                               f"(this suite's), got {version}: a newer suite wrote it")

    def _version(self, lock: bool = False) -> int:
        """0 for an empty database; the recorded version for ours; HistoryError for a foreign one."""
        tables = self._tables()
        if "meta" not in tables:
            if tables:
                raise HistoryError(f"{shown(self.where)}: tables: expected a suite history store (or none), "
                                   f"got another application's ({', '.join(sorted(tables)[:5])})")
            return 0
        rows = dict(self._exec("SELECT key, value FROM meta").fetchall())
        if rows.get("app") != APP or not str(rows.get("schema_version", "")).isdigit():
            raise HistoryError(f"{shown(self.where)}: meta.app: expected {APP!r}, got {rows.get('app')!r}")
        version = int(rows["schema_version"])
        self._check_version(version)
        return version

    # ---------------------------------------------------------------- writing
    def add(self, entry: Entry, unique_hash: bool = False) -> tuple[int, bool]:
        """(id, True) for a new entry; (the id of the entry already there, False) for a result and series
        recorded before (the unique dedup_key: two imports at once add it once); with `unique_hash`,
        also for an entry of the same content hash recorded before dedup keys (an import twice adds nothing)."""
        row = _row(entry)
        key = dedup_key(entry)
        with self._write():
            if unique_hash and entry.content_hash:
                found = self._exec("SELECT id FROM entries WHERE content_hash = ? ORDER BY id LIMIT 1",
                                   (entry.content_hash,)).fetchone()
                if found:
                    return int(found[0]), False
            sql = (f"INSERT INTO entries ({', '.join(COLUMNS)}, dedup_key) VALUES ({', '.join('?' * (len(COLUMNS) + 1))}) "
                   f"ON CONFLICT DO NOTHING RETURNING id")
            inserted = self._exec(sql, (*row, key)).fetchone()
            if inserted is None:
                found = self._exec("SELECT id FROM entries WHERE dedup_key = ?", (key,)).fetchone()
                return int(found[0]), False
            new_id = int(inserted[0])
            for position, f in enumerate(entry.figures):
                self._exec("INSERT INTO figures (entry_id, name, label, higher_is_better, per_run, per_epoch, "
                           "point, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (new_id, f.name, f.label, int(f.higher_is_better), json.dumps(list(f.per_run), allow_nan=False),
                            json.dumps([list(e) for e in f.per_epoch], allow_nan=False), f.point(), position))
        return new_id, True

    def remove(self, ids) -> int:
        ids = [int(i) for i in ids]
        if not ids:
            return 0
        marks = ", ".join("?" * len(ids))
        with self._write():
            self._exec(f"DELETE FROM figures WHERE entry_id IN ({marks})", ids)
            return self._exec(f"DELETE FROM entries WHERE id IN ({marks})", ids).rowcount

    # ---------------------------------------------------------------- reading
    def legacy_hashes(self, results_path: str) -> list[tuple[int, str]]:
        """(id, hash) of the entries of `results_path` whose hash has no algorithm prefix (the first one)."""
        rows = self._exec("SELECT id, content_hash FROM entries WHERE results_path = ? AND content_hash NOT LIKE ?",
                          (results_path, "%:%")).fetchall()
        return [(int(i), h) for i, h in rows if isinstance(h, str)]

    def get(self, entry_id: int) -> Entry | None:
        found = self.entries(ids=[entry_id])
        return found[0] if found else None

    def require(self, entry_id: int) -> Entry:
        """The entry, or a HistoryError naming the store (exit 2)."""
        found = self.get(entry_id)
        if found is None:
            raise HistoryError(f"history: id: expected an entry of {shown(self.where)}, got {entry_id} (none)")
        return found

    def entries(self, *, ids=None, kind=None, workload=None, accelerator=None, system=None, since=None,
                figures=True, figure=None, series_key=None, headline=False) -> list[Entry]:
        """Entries oldest first (by the result's start, else the time recorded), filtered; `system` is
        a fingerprint prefix or part of the system's label; `since` an ISO date or time. `figure`:
        load only that figure (a trend of 10,000 entries); `headline`: only each entry's first (the
        list; an older PostgreSQL store's entries, whose figures have no order, all of theirs)."""
        where, params = [], []
        for column, value in (("kind", kind), ("workload", workload), ("accelerator", accelerator),
                              ("series_key", series_key)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if ids is not None:
            where.append(f"id IN ({', '.join('?' * len(ids)) or 'NULL'})")
            params += [int(i) for i in ids]
        if system:                      # % and _ are literal: escaped, the escape character said
            where.append("(system_fp LIKE ? ESCAPE '!' OR system_label LIKE ? ESCAPE '!')")
            params += [like(system) + "%", "%" + like(system) + "%"]
        if since:
            where.append("COALESCE(started_at, recorded_at) >= ?")
            params.append(since)
        sql = (f"SELECT id, {', '.join(COLUMNS)} FROM entries{' WHERE ' + ' AND '.join(where) if where else ''} "
               f"ORDER BY COALESCE(started_at, recorded_at), id")
        rows = self._exec(sql, params).fetchall()
        found = {int(r[0]): r for r in rows}
        figs = self._figures(list(found), figure, headline) if figures and found else {}
        return [decode.entry(shown(self.where), r, COLUMNS, figs.get(int(r[0]), ())) for r in rows]

    def _figures(self, ids: list[int], name: str | None, headline: bool = False) -> dict[int, tuple[Figure, ...]]:
        sql = "SELECT entry_id, name, label, higher_is_better, per_run, per_epoch FROM figures"
        where, params = [], []
        if name is not None:
            where.append("name = ?")
            params.append(name)
        elif headline:
            where.append("COALESCE(position, 0) = 0")
        if len(ids) <= 500:
            where.append(f"entry_id IN ({', '.join('?' * len(ids))})")
            params += ids
        sql += (" WHERE " + " AND ".join(where)) if where else ""
        wanted = set(ids)
        out: dict[int, list[Figure]] = {}
        for eid, fname, label, hib, per_run, per_epoch in self._exec(sql + " ORDER BY entry_id, position, name",
                                                                     params):
            if decode.integer(eid) in wanted:
                out.setdefault(int(eid), []).append(decode.figure(shown(self.where), eid, fname, label, hib,
                                                                  per_run, per_epoch))
        return {k: tuple(v) for k, v in out.items()}

    def _exec(self, sql: str, params=()):
        return self._execute(sql if self.PLACEHOLDER == "?" else sql.replace("?", self.PLACEHOLDER), params)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _row(e: Entry) -> tuple:
    values = {c: getattr(e, c) for c in COLUMNS}
    values["command"] = list(e.command)
    values["series_key"] = e.series()
    for c in JSON_COLUMNS:
        values[c] = json.dumps(values[c], sort_keys=True, allow_nan=False) if values[c] or c != "hash_scope" else None
    return tuple(values[c] for c in COLUMNS)


def dedup_key(e: Entry) -> str | None:
    """One entry per result (content hash) and series (kind, identity, system): None without a hash
    (a failed run's nothing). Entries of schema 3 keep theirs (kind, workload, accelerator, system)."""
    if not e.content_hash:
        return None
    return json.dumps([e.content_hash, e.series()])


def like(text: str) -> str:
    """`text` as a literal inside a LIKE pattern whose escape character is `!`."""
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")

"""No password of a store's URL reaches the store, a message or a subprocess's argv: the user-information
password (one holding `@`, `/`, `:` too), a `password=` query parameter in any case or URL-encoded, and
whatever libpq repeats of them in its own error. Hypothesis draws the URLs; the CLI runs against a
real SQLite store and a real (unreachable) PostgreSQL address."""

import argparse
from urllib.parse import quote

import pytest
from hypothesis import given, settings, strategies as st

from suite import redact
from suite.history import db, record

PLAIN = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
# a password as users write them: a marker no host or user holds, then any printable character that a
# query value may hold unencoded (& and # end a value, whitespace ends a URL)
PASSWORD = st.text(st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="&#'\"<>%"),
                   min_size=1, max_size=12).map(lambda s: "ZQ" + s)
NAMES = st.sampled_from(["password", "PASSWORD", "PassWord", "pass%77ord", "%70assword", "sslpassword"])


@settings(max_examples=300, derandomize=True, deadline=None)
@given(user=PLAIN, host=PLAIN, db_=PLAIN, password=PASSWORD, name=NAMES, userinfo=st.booleans(),
       encode=st.booleans())
def test_a_random_url_never_shows_its_password_redacted(user, host, db_, password, name, userinfo, encode):
    value = quote(password, safe="") if encode else password
    if userinfo:
        url = f"postgresql://{user}:{value}@{host}:5432/{db_}?sslmode=require"
    else:
        url = f"postgresql://{user}@{host}:5432/{db_}?sslmode=require&{name}={value}"
    shown = [redact.url(url), " ".join(redact.command(["suite", "run", "--history", url])),
             " ".join(redact.command([f"--history={url}"]))]
    assert all(host in s and "REDACTED" in s for s in shown), shown
    for s in shown + [redact.scrub(f"invalid percent-encoded token: \"{value}\"", url)]:
        assert password not in s and value not in s, s


@pytest.mark.parametrize("url, kept", [
    ("postgresql://alice@db.example/team?password=sekrit1", "postgresql://alice@db.example/team?password=REDACTED"),
    ("postgresql://alice:sekrit1@db.example/team", "postgresql://alice:REDACTED@db.example/team"),
    ("postgresql://alice:se@k/r:it1@db.example/team", "postgresql://alice:REDACTED@db.example/team"),
    ("postgresql://db.example/team?sslmode=require&PASSWORD=sekrit1", "postgresql://db.example/team?sslmode=require&PASSWORD=REDACTED"),
    ("postgresql://db.example/team?pass%77ord=sekrit1", "postgresql://db.example/team?pass%77ord=REDACTED"),
    ("host=db.example password='sekrit1' user=alice", "host=db.example password=REDACTED user=alice"),
])
def test_each_form_of_password_is_redacted(url, kept):
    assert redact.url(url) == kept and "sekrit1" not in redact.secrets_of(url)[0].replace("sekrit1", "") + kept


@pytest.mark.parametrize("url", [
    "postgresql://alice:p%zzSEKRIT@127.0.0.1:1/db",                      # libpq quotes the bad token
    "postgresql://alice@127.0.0.1:1/db?password=SEK%zzRIT",
    "postgresql://alice@127.0.0.1:1/db?sslmode=disable&PASSWORD=SEKRIT",
    "postgresql://alice:SEKRIT@127.0.0.1:1/db",
])
def test_no_store_message_repeats_the_password(run_cli, url):
    pytest.importorskip("psycopg")
    code, out, err = run_cli("history", "list", "--history", url)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "SEKRIT" not in err and "SEK%zzRIT" not in err and "127.0.0.1" in err


def test_a_recorded_command_keeps_the_url_without_its_password(tmp_path):
    """A run's record (real SQLite store): --history given as a URL with ?password= and user:pw@."""
    store = tmp_path / "h.sqlite"
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "results.json").write_text("{}")
    argv = ["run", "--workload", "resnet50", "--history", "postgresql://alice@db.example/t?PassWord=SEKRIT1",
            "--note", "postgresql://bob:SEKRIT2@db.example/t", "--x=postgresql://db.example/t?a=1&password=SEKRIT3"]
    args = argparse.Namespace(history=str(store), results_dir=str(tmp_path / "r"), workload="resnet50", argv=argv)
    record.RunRecord(args).finish(0, "ok")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("h.sqlite*"))
    assert raw and b"SEKRIT" not in raw
    with db.open_store(str(store)) as s:
        (e,) = s.entries()
    assert "postgresql://alice@db.example/t?PassWord=REDACTED" in e.command
    assert "postgresql://bob:REDACTED@db.example/t" in e.command


def test_a_url_taken_for_a_path_is_named_without_its_password(run_cli, tmp_path):
    """Not postgresql://: read as a SQLite path, and the message still hides the password."""
    code, out, err = run_cli("history", "list", "--history", "mysql://alice:SEKRIT@db.example/x?password=SEKRIT")
    assert code == 2 and "SEKRIT" not in err and "alice:REDACTED@db.example" in err

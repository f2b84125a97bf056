"""No secret is ever stored or shown: a command line, a system description, a store's URL and any
message that may repeat one, with every credential-like value replaced by REDACTED.

Credential-like: the value of an option or KEY=VALUE whose name says key, token, secret, password,
passwd, credential, auth, session or signature (`--s3-secret-key X`, `--token=X`,
`--param storage.secret_key=X`, `AWS_SECRET_ACCESS_KEY=X`); in a URL, the password of its user
information (`postgresql://user:pw@host`, also a password holding `@` or `/`) and the value of every
query parameter with such a name (`?password=pw`, `?PassWord=pw`, `?pass%77ord=pw`: names compared
decoded and in any case); a libpq `password=pw` pair wherever it stands; and anything shaped like an
AWS access key id (AKIA/ASIA + 16) or a bearer token.

A URL is parsed, not matched by one pattern: the user information is everything before the LAST `@`
of the authority, so a password with `@`, `:` or `/` in it goes whole.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

REDACTED = "REDACTED"
SECRET_NAME = re.compile(r"(key|token|secret|passw|pwd|credential|auth|session|signature|cookie)", re.I)
# names that say key but hold none (a workload's record_length key, a figure's key): left as they are
NOT_SECRET = re.compile(r"^(--)?(param|workload|figure|key_?size|primary_?key|keys?)$", re.I)
# a URL: scheme:// then everything up to whitespace or a quote (its parts are parsed by _url)
URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]*")
# a KEY=VALUE pair inside free text (a libpq conninfo, a query string quoted in an error)
PAIR = re.compile(r"(?P<name>[A-Za-z0-9_.%-]+)(?P<eq>\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s&;,'\"]+)")
SHAPES = (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
          re.compile(r"(?i)\bbearer\s+[a-z0-9._~+/-]+=*"),
          re.compile(r"\b[A-Za-z0-9/+]{40}\b(?=.*\b(AKIA|ASIA))"))


def _secret_name(name: str) -> bool:
    name = unquote(name).strip().lstrip("-")
    return bool(SECRET_NAME.search(name)) and not NOT_SECRET.match(name)


def _query(query: str) -> str:
    """A query string with the value of every secret-named parameter replaced (names decoded, any case)."""
    out = []
    for pair in query.split("&"):
        name, sep, value = pair.partition("=")
        out.append(f"{name}={REDACTED}" if sep and _secret_name(name.rsplit(".", 1)[-1]) else pair)
    return "&".join(out)


def _split(url: str) -> tuple[str, str | None, str | None, str]:
    """(scheme://, user, password, the rest): the user information is everything before the LAST `@`
    when it holds a `:` (a password may hold `@`, `/`, `?`); None where the URL has none."""
    scheme, _, rest = url.partition("://")
    if "@" in rest:
        userinfo, _, after = rest.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon and not re.search(r"[/?#]", user):
            return scheme + "://", user, password, after
        head = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if "@" in head:
            return scheme + "://", head.rpartition("@")[0], None, rest[len(head.rpartition("@")[0]) + 1:]
    return scheme + "://", None, None, rest


def _tail(rest: str) -> tuple[str, str | None, str | None]:
    """host/path, query, fragment."""
    before, hashmark, fragment = rest.partition("#")
    path, q, query = before.partition("?")
    return path, (query if q else None), (fragment if hashmark else None)


def _url(url: str) -> str:
    """One URL with its user-information password and secret query values replaced."""
    scheme, user, password, rest = _split(url)
    path, query, fragment = _tail(rest)
    out = scheme + ("" if user is None else user + ("" if password is None else ":" + REDACTED) + "@") + path
    if query is not None:
        out += "?" + _query(query)
    if fragment is not None:
        out += "#" + _query(fragment)
    return out


def url(where: str) -> str:
    """A store's location as a message or the history names it: a URL without its secrets."""
    return text(where)


def secrets_of(where: str) -> list[str]:
    """The secret values `where` holds (URL passwords, secret query values, secret KEY=VALUE pairs), raw
    and decoded: what a message from a library that was given it must not repeat."""
    found: list[str] = []
    for m in URL.finditer(where):
        _scheme, _user, password, rest = _split(m.group(0))
        if password:
            found.append(password)
        _path, query, _fragment = _tail(rest)
        for pair in (query or "").split("&"):
            name, sep, value = pair.partition("=")
            if sep and value and _secret_name(name.rsplit(".", 1)[-1]):
                found.append(value)
    for m in PAIR.finditer(where):
        if _secret_name(m.group("name").rsplit(".", 1)[-1]) and m.group("value").strip("'\""):
            found.append(m.group("value").strip("'\""))
    out: list[str] = []
    for s in found:
        for v in (s, unquote(s)):
            if v and v not in out:
                out.append(v)
    return out


def scrub(message: str, where: str) -> str:
    """A message a library gave about `where` (libpq repeats URLs and parts of them): with `where`'s
    secrets and every URL password replaced; when it still holds 4 or more characters of a secret in a
    row, withheld altogether."""
    message = text(message)
    for secret in sorted(secrets_of(where), key=len, reverse=True):
        message = message.replace(secret, REDACTED)
    for secret in secrets_of(where):
        width = min(4, len(secret))
        if any(secret[i:i + width] in message.replace(REDACTED, "\0")
               for i in range(len(secret) - width + 1)):
            return "an error whose message repeats part of the password (withheld)"
    return message


def text(value: str) -> str:
    """A free text with URL secrets, secret KEY=VALUE pairs and key-shaped strings replaced."""
    value = URL.sub(lambda m: _url(m.group(0)), value)
    value = PAIR.sub(lambda m: (f"{m.group('name')}{m.group('eq')}{REDACTED}"
                                if _secret_name(m.group("name").rsplit(".", 1)[-1]) and REDACTED not in m.group("value")
                                else m.group(0)), value)
    for shape in SHAPES:
        value = shape.sub(REDACTED, value)
    return value


def _assignment(arg: str) -> str:
    """KEY=VALUE (or --opt=VALUE) with a secret name: its value replaced."""
    name, sep, value = arg.partition("=")
    if "://" in name:                  # a URL whose query holds `=`: text() takes it apart
        return arg
    if sep and value and _secret_name(name.rsplit(".", 1)[-1]) or sep and _secret_name(name) and value:
        return f"{name}={REDACTED}"
    return arg


def command(argv) -> tuple[str, ...]:
    """The command line with every credential-like value replaced."""
    out: list[str] = []
    hide_next = False
    for arg in map(str, argv):
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if arg.startswith("--") and "=" not in arg and _secret_name(arg):
            hide_next = True
            out.append(arg)
            continue
        out.append(text(_assignment(arg)))
    return tuple(out)


def mapping(doc: dict) -> dict:
    """A flat description (dotted keys -> text): values under a secret-looking key replaced, URL
    passwords and key-shaped strings removed from the rest."""
    out = {}
    for key, value in doc.items():
        last = str(key).rsplit(".", 1)[-1]
        if value is not None and _secret_name(last):
            out[key] = REDACTED
        else:
            out[key] = text(value) if isinstance(value, str) else value
    return out


def has_redacted(argv) -> bool:
    return any(REDACTED in a for a in argv)

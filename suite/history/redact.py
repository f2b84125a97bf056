"""No secret is ever stored: a command line, and a system description, with every credential-like
value replaced by REDACTED before it reaches the store.

Credential-like: the value of an option or KEY=VALUE whose name says key, token, secret, password,
passwd, credential, auth, session or signature (`--s3-secret-key X`, `--token=X`,
`--param storage.secret_key=X`, `AWS_SECRET_ACCESS_KEY=X`); the password of a URL
(`postgresql://user:pw@host`, `s3://key:secret@bucket`); and anything shaped like an AWS access key
id (AKIA/ASIA + 16) or a bearer token, wherever it stands.
"""

from __future__ import annotations

import re

REDACTED = "REDACTED"
SECRET_NAME = re.compile(r"(key|token|secret|passw|pwd|credential|auth|session|signature|cookie)", re.I)
# names that say key but hold none (a workload's record_length key, a figure's key): left as they are
NOT_SECRET = re.compile(r"^(--)?(param|workload|figure|key_?size|primary_?key|keys?)$", re.I)
URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]*:)(?P<pw>[^@/\s]+)(?=@)", re.I)
SHAPES = (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
          re.compile(r"(?i)\bbearer\s+[a-z0-9._~+/-]+=*"),
          re.compile(r"\b[A-Za-z0-9/+]{40}\b(?=.*\b(AKIA|ASIA))"))


def text(value: str) -> str:
    """A free text with URL passwords and key-shaped strings replaced."""
    value = URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED, value)
    for shape in SHAPES:
        value = shape.sub(REDACTED, value)
    return value


def _secret_name(name: str) -> bool:
    name = name.strip().lstrip("-")
    return bool(SECRET_NAME.search(name)) and not NOT_SECRET.match(name)


def _assignment(arg: str) -> str:
    """KEY=VALUE (or --opt=VALUE) with a secret name: its value replaced."""
    name, sep, value = arg.partition("=")
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

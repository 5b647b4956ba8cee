"""A recorded command line with its secrets masked (h37-tracingoff3, h37-tidy30).

Nsight records the profiled program's command (``META_DATA_CAPTURE``'s ``PROCESS_0:COMMAND`` / ``ARGUMENT_n``), and
the tracing-off fix shows it back, in every report of the capture.  A credential typed on it must not be shown: a
secret's value is replaced by :data:`MASK` -- a placeholder where it stood, so the fix stays the user's own command,
their program and its other arguments as typed.

Where secrets stand on a command line: ``--name=value`` / ``NAME=value`` and the word after ``--name`` (by the name:
:data:`_SECRET_NAME`), the word after ``-p`` (``mysql``'s, ``sshpass``'s password; not a number, a port or a count),
the password of a URL (``scheme://user:password@host``), an HTTP header's value (``Authorization: Bearer ...``), and
any of these inside one argument that is itself a shell line (``bash -c 'HF_TOKEN=... python train.py'``): the words
of such an argument are masked one by one, never the whole line after its first ``=`` (that deleted the program).
"""
from __future__ import annotations

import re
import shlex

#: An option or variable whose value is a secret, by its name (``--token``, ``--api-key``, ``HF_TOKEN``,
#: ``AWS_SECRET_ACCESS_KEY``, ``--password``, ``MYSQL_PWD``, ``--credentials``, ``--auth``, ``--pass``).
_SECRET_NAME = re.compile(r"(token|secret|passw(or)?d|passphrase|api[-_]?key|access[-_]?key|credentials?"
                          r"|(^|[-_])(key|auth|pass)|[-_]pwd)$", re.IGNORECASE)
#: HTTP headers whose value is a credential (``curl -H 'Authorization: Bearer ...'``), beside :data:`_SECRET_NAME`'s.
_SECRET_HEADER = re.compile(r"(proxy-)?authorization|cookie|x-[a-z-]*(token|key)", re.IGNORECASE)
#: The schemes of an ``Authorization`` value: kept, the credential after them masked.
_AUTH_SCHEMES = frozenset({"bearer", "basic"})
#: The password of a URL with a scheme (``https://user:password@host``): user and host kept.
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^\s/:@]*:)(?P<password>[^\s/@]+)(?=@)", re.IGNORECASE)
#: Short options whose separate next word is a password (``mysql -p``, ``sshpass -p``) unless it is a number.
_PASSWORD_FLAGS = frozenset({"-p"})
#: What follows ``-p`` as a port, a port mapping or a count (``docker run -p 8080:80``, ``-p 4``): not masked.
_NOT_A_PASSWORD = re.compile(r"[0-9][0-9.:]*")
#: What a secret value is shown as.
MASK = "***"


def masked_words(words: list[str]) -> list[str]:
    """``words`` shell-quoted, each secret's value shown as :data:`MASK` (the module's list of where they stand)."""
    out, hide = [], ""
    for word in words:
        masked, hide = _masked_word(word, hide)
        out.append(masked)
    return out


def _masked_word(word: str, hide: str) -> tuple[str, str]:
    """One word shell-quoted and masked, and what the word after it is (:func:`_hides_next`): ``hide`` says what
    this one is -- ``"secret"`` (the value of an option or header before it), ``"password"`` (after ``-p``: a
    secret unless a port or a count), or nothing."""
    if hide and word.lower() in _AUTH_SCHEMES:  # the value's scheme (``Authorization: Bearer``): the credential follows
        return shlex.quote(word), "secret"
    if hide and not word.startswith("-") and not (hide == "password" and _NOT_A_PASSWORD.fullmatch(word)):
        return MASK, ""
    inner = _shell_line(word)
    if inner:
        masked = masked_words(inner)
        changed = masked != [shlex.quote(w) for w in inner]
        return (shlex.quote(" ".join(masked)) if changed else shlex.quote(word)), ""
    name, eq, _ = word.partition("=")
    if eq and _SECRET_NAME.search(name.lstrip("-")):
        return shlex.quote(name) + "=" + MASK, ""
    header, colon, value = word.partition(":")
    if colon and not value.startswith("//") and _is_secret_header(header):
        return shlex.quote(header) + ":" + (MASK if value else ""), "" if value else "secret"
    pieces = _URL_PASSWORD.sub(r"\g<head>\0", word).split("\0")  # (a command's words hold no NUL)
    if len(pieces) > 1:
        return MASK.join(shlex.quote(p) if p else "" for p in pieces), ""
    return shlex.quote(word), _hides_next(word)


def _shell_line(word: str) -> list[str]:
    """The words of an argument that holds several (a ``bash -c`` line, a header ``Authorization: Bearer ...``), else
    none: an argument that does not split as the shell would is read as one word."""
    if not any(c.isspace() for c in word):
        return []
    try:
        inner = shlex.split(word)
    except ValueError:
        return []
    return inner if len(inner) > 1 else []


def _is_secret_header(name: str) -> bool:
    return bool(name) and not any(c.isspace() for c in name) and bool(
        _SECRET_HEADER.fullmatch(name) or _SECRET_NAME.search(name))


def _hides_next(word: str) -> str:
    """What the word after ``word`` is: a secret after ``--token`` (a secret's name as an option), ``Authorization:``
    (a credential header, its value the next word) or ``Bearer`` (a scheme); a password after ``-p``, unless it is a
    number (a port, a count); else nothing."""
    if word in _PASSWORD_FLAGS:
        return "password"
    if word.startswith("-"):
        return "secret" if _SECRET_NAME.search(word.lstrip("-")) else ""
    return "secret" if word.lower() in _AUTH_SCHEMES else ""

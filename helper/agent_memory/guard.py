"""The secret guard: notes and skills that contain credentials are refused, and error text is scrubbed before it
is shown.

A finding names the rule and the line, never the value. A rule is a pattern plus, where the pattern alone would
also match prose or code, a check of what it matched: a key name followed by a call, a variable, a type, a path
or a placeholder is not a secret, nor is a default password in a URL of this machine, and neither is a word that
happens to start like a key. Tokens are found wherever they stand, next to any letter of any script.
"""

from __future__ import annotations

import binascii
import functools
import json
import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import pairwise


@functools.cache
def _regex(source: str) -> re.Pattern[str]:
    """`source` compiled on first use, then kept: compiling every pattern of the guard would cost each command a few
    milliseconds of start-up, and most commands never scan or redact."""
    return re.compile(source)


# What continues a token's word. Tokens are ASCII, so their edges are too: a token next to an underscore, a
# hyphen or any other letter (`clé…`, `…です`, `…_old`) is still a token, where `\w` and `\b` (which take `é`
# and `で` for word characters) would hide it.
_ALNUM = "[A-Za-z0-9]"
# Values that only point at a secret (an environment variable, a template, a placeholder, an earlier redaction).
_REFERENCE = r"(?![\"']?(?i:\$|<|\{|%|\[|\*{3}|os\.|process\.env|getenv|environ|env\[|\.\.\.|x{6}|your[_-]|redacted))"
# Code that uses a key name without holding a secret: an expression (`(a if b else c)`), a name followed by a
# call, an index, a block, a generic type, a comparison or a closing bracket (`getpass.getpass()`,
# `Optional[str]`, `f(token=self.token)`, `Token{Value: v}`), an attribute (`settings.api_key`,
# `options?.token`), a path, a bare name made of words (`new_password`, `accessToken`, `required-for-login`), or
# a CSS pseudo-class and its block (`.token:hover{color:#ff0000}`, `.api-key::after{...}`).
_NAME = r"[A-Za-z_$][\w$]*"
_ATTRIBUTE = rf"{_NAME}(?:\??\.{_NAME})+"
_CODE = (
    rf"(?s:\(.*|{_NAME}(?:\??\.{_NAME})*(?:[(\[{{)\]}}<=]|\?.|&&|\|\|).*|{_ATTRIBUTE}|[/~.].*|[A-Za-z_.-]+"
    r"|:?[a-z][a-z-]*(?:\([^)]*\))?\{.*)"
)
_LOWER = "[a-z]"
_DIGIT = "[0-9]"
_SYMBOL = "[^A-Za-z0-9_.-]"
_VARIABLE = _NAME
_URL = "[A-Za-z][A-Za-z0-9+.-]*://"  # a password inside one is the url-password rule's
_HUMP = "[a-z0-9][A-Z]"  # an upper-case letter inside a word, not one that starts it
# A path made of names (`keys/server.pem`, `src/lib/utils`, `C:\certs\site-key.pem`): each part between slashes
# is words in lower case, Capitalized or in capitals, each maybe followed by digits (`ed25519`, `x86`), joined
# by `-`, `_` or `.`. A secret that holds a slash (base64 does) has parts that mix case and digits at random.
_PATH_SEPARATOR = r"[/\\]"
_PATH_WORD = r"(?:(?:[A-Z]?[a-z]+|[A-Z]+)[0-9]*|[0-9]+)"
_PATH_PART = rf"(?:[A-Za-z]:|~)?[-_.]*(?:{_PATH_WORD}(?:[-_.]+{_PATH_WORD})*[-_.]*)?"


def _path(value: str) -> bool:
    """Whether `value` is a path of names: where a key is kept, not the key."""
    if len(value) > 4096:  # longer than any path a system takes
        return False
    parts = _regex(_PATH_SEPARATOR).split(value.rstrip("`)]}>.:!?"))  # prose around it: (`keys/a.pem`).
    return len(parts) > 1 and all(_regex(_PATH_PART).fullmatch(part) for part in parts)


def _counts(chars: str) -> bool:
    """Whether each character is the one before it, or the next or the previous one throughout (`abcd`, `4321`,
    `xxxx`)."""
    steps = {ord(after) - ord(before) for before, after in pairwise(chars)}
    return steps <= {0, 1} or steps <= {0, -1}


def _placeholder(value: str) -> bool:
    """A short example value, not a secret: its letters and its digits each count up, count down or repeat
    (`a1b2c3d4`, `abcd-1234`, `12345678`, `xxxx0000`). A longer value typed that way stands for a token in
    examples and tests, and is taken as one."""
    if len(value) > 16 or _regex(_SYMBOL).search(value):
        return False
    lowered = value.lower()
    return _counts("".join(filter(str.isalpha, lowered))) and _counts("".join(filter(str.isdigit, lowered)))


def _long_run(value: str) -> bool:
    """A long run of letters and digits with a digit in it: a generated key, not a name or a word."""
    return len(value) >= 24 and value.isascii() and value.isalnum() and _regex(_DIGIT).search(value) is not None


def _random_looking(value: str) -> bool:
    """Whether `value` mixes what machine-made secrets mix: two of lower case, upper case inside a word,
    digits and symbols before the end (so `X-Api-Key`, `Required` and `Authorization:` do not), unless it is a
    placeholder; or is a long run of letters and digits."""
    classes = (
        _regex(_LOWER).search(value),
        _regex(_HUMP).search(value),
        _regex(_DIGIT).search(value),
        _regex(_SYMBOL).search(value, 0, len(value) - 1),
    )
    return (sum(found is not None for found in classes) >= 2 and not _placeholder(value)) or _long_run(value)


def _assigned(match: re.Match[str]) -> bool:
    value = match.group("secret")
    if "..." in value or "\u2026" in value or _regex(_URL).match(value):  # an elided example (`"hf_jwt_…"`), a URL
        return False
    quoted = match.string[match.start("secret") - 1] in "\"'"
    if value.startswith("`"):  # Markdown code or a template string: what is inside decides
        value, quoted = value[1:].split("`", 1)[0], False
    if not quoted and match.string[match.end() : match.end() + 1] == ";" and _regex(_VARIABLE).fullmatch(value):
        return False  # a statement that assigns a variable: `var token = mapToken2;`
    if _path(value):  # says where the key is kept (`private_key: keys/server.pem`), as the refusal asks
        return False
    return _long_run(value) or ((quoted or not _regex(_CODE).fullmatch(value)) and _random_looking(value))


def _mixed(match: re.Match[str]) -> bool:
    return _random_looking(match.group("secret"))


def _jwt(match: re.Match[str]) -> bool:
    """Whether the first part decodes to a JSON object with an `alg`, as every JWS and JWE header has."""
    import base64  # with struct, several milliseconds: only a text with a JWT-like token pays for it

    header = "eyJ" + match.group("header")
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


# What a URL's user name and password may hold (RFC 3986, without the quote that ends a string around the URL).
_USER = r"[A-Za-z0-9._~%!$&()*+,;=-]{1,256}"
_PASSWORD = r"[A-Za-z0-9._~%!$&()*+,;=:-]{1,256}"
# Placeholders in documentation: `${PASS}`, `$PASS`, `****`, `%s`, `xxxx`, and the name of the thing itself
# (`user:password@`, `username:TOKEN@`, `myuser:mypassword@`).
_URL_PLACEHOLDER = (
    r"(?is:[$*].*|%[s(].*|\.\.\..*|x+|(?:my|your|the)?[-_]?(?:password|passwd|passphrase|pwd|token|secret)s?)"
)
# This machine, by name or loopback address: `localhost`, `app.localhost`, `127.0.0.1`, `[::1]`, `0.0.0.0`.
_HOST = r"\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9.-]*"
_LOCAL_HOST = r"(?i:(?:[a-z0-9-]+\.)*localhost\.?|127(?:\.[0-9]{1,3}){3}|\[(?:0*:)*0*1\]|0\.0\.0\.0)"


def _url_password(match: re.Match[str]) -> bool:
    """Whether the URL's password is one: not a placeholder, and on this machine not a default credential (the
    user name again, `postgres://postgres:postgres@localhost`, or a password made of words)."""
    password = match.group("secret")
    if _regex(_URL_PLACEHOLDER).fullmatch(password):
        return False
    host = _regex(_HOST).match(match.string, match.end())
    assert host is not None  # _HOST matches the empty string
    if not _regex(_LOCAL_HOST).fullmatch(host.group()) or match.string[host.end() : host.end() + 1] == "@":
        return True  # another machine, or `localhost@` inside what a URL parser takes for the user info
    return password != match.group("user") and _random_looking(password)


class Rule:
    """One kind of credential: its rule name, what it is called, its regular expression (`source`), and the check
    of a match (`Callable[[re.Match[str]], bool] | None`).

    A pattern with a `secret` group is redacted there only, so a message keeps the key's name or the URL's host.
    Patterns never match across a line break. (A plain class, not a namedtuple: making one compiles code, a
    millisecond of the start-up of the SessionStart hook, which loads this module to redact what it tells.)
    """

    __slots__ = ("rule", "label", "source", "check")

    def __init__(
        self, rule: str, label: str, source: str, check: Callable[[re.Match[str]], bool] | None = None
    ) -> None:
        self.rule = rule
        self.label = label
        self.source = source
        self.check = check

    def __repr__(self) -> str:
        return f"Rule({self.rule!r})"

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on first use)."""
        return _regex(self.source)

    def matches(self, text: str) -> list[re.Match[str]]:
        """The credentials of this kind in `text`."""
        return [match for match in self.pattern.finditer(text) if self.check is None or self.check(match)]


# Patterns start with their literal prefix where they have one, which lets the regular expression engine skip
# ahead to it instead of trying every position (a 1 MiB note then takes milliseconds per rule): `X(?<!…X)` says
# what may not come before X, written after it. A token ends where its own characters end, so a suffix
# (`_old`, `-old`, `です`) never hides it.
_ASSIGNED = (
    r"(?=[PpAaSsTt])(?i:password|passwd|passphrase|pwd|api[_-]?key|secret[_-]?key|secret|token|private[_-]?key)"
    r"[\"']?[ \t]*[:=](?!=)[ \t]*" + _REFERENCE + r"[\"']?(?P<secret>[^\s\"',;]{8,})"  # `==` compares
)

RULES: tuple[Rule, ...] = (
    Rule("hf-token", "Hugging Face token", rf"hf_(?<!{_ALNUM}hf_)[A-Za-z0-9]{{30,}}"),
    Rule(
        "github-token",
        "GitHub token",
        rf"g(?<!{_ALNUM}g)(?:h[pousr]_[A-Za-z0-9]{{36,}}|ithub_pat_[A-Za-z0-9_]{{22,}})",
    ),
    Rule("gitlab-token", "GitLab token", rf"gl(?<!{_ALNUM}gl)(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{{20,}}"),
    Rule("npm-token", "npm token", rf"npm_(?<!{_ALNUM}npm_)[A-Za-z0-9]{{36}}(?!{_ALNUM})"),
    Rule("stripe-key", "Stripe live key", rf"[rs]k_live_(?<!{_ALNUM}[rs]k_live_)[A-Za-z0-9]{{20,}}"),
    Rule("google-api-key", "Google API key", rf"AIza(?<!{_ALNUM}AIza)[0-9A-Za-z_-]{{35}}"),
    Rule("aws-access-key", "AWS access key id", rf"A(?<!{_ALNUM}A)(?:KIA|SIA)[0-9A-Z]{{16}}(?!{_ALNUM})"),
    Rule(
        "aws-secret-key",
        "AWS secret access key",
        r"(?i:aws_?secret_?access_?key)[\"']?[ \t]*[:=][ \t]*[\"']?" + _REFERENCE + r"(?P<secret>[A-Za-z0-9/+=]{40})",
    ),
    Rule("private-key", "private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    # `sk-` starts prose too (`sk-learn-compatible`): a key's body is random, so it mixes cases or digits
    Rule("openai-key", "OpenAI or Anthropic API key", rf"sk-(?<!{_ALNUM}sk-)(?P<secret>[A-Za-z0-9_-]{{32,}})", _mixed),
    Rule("slack-token", "Slack token", rf"x(?<!{_ALNUM}x)(?:ox[abposre]|app)-[A-Za-z0-9-]{{10,}}"),
    Rule(
        "jwt",
        "JSON Web Token",
        rf"eyJ(?<!{_ALNUM}eyJ)(?P<header>[A-Za-z0-9_-]{{8,}})\.[A-Za-z0-9_-]{{2,}}\.[A-Za-z0-9_-]*",
        _jwt,
    ),
    Rule(
        "url-password",
        "password in a URL",
        r"://(?<=[A-Za-z0-9+.-]://)(?P<user>" + _USER + "):(?P<secret>" + _PASSWORD + ")@",
        _url_password,
    ),
    Rule("password-assignment", "password or API key assignment", _ASSIGNED, _assigned),
    Rule(
        "bearer-token",
        "bearer token",
        rf"[Bb](?<!{_ALNUM}[Bb])(?i:earer)[ \t]+" + _REFERENCE + r"(?P<secret>[A-Za-z0-9._~+/=-]{20,})",
        _mixed,
    ),
)


class Finding:
    """A credential found in some text: which rule matched (`rule`, `label`), on which `line` (1-based)."""

    __slots__ = ("rule", "label", "line")

    def __init__(self, rule: str, label: str, line: int) -> None:
        self.rule = rule
        self.label = label
        self.line = line

    def __repr__(self) -> str:
        return f"Finding({self.rule!r}, {self.label!r}, {self.line})"


def scan(text: str) -> list[Finding]:
    """Every rule that matches, once per line it matches on, in line order."""
    found = set()
    breaks: list[int] | None = None  # where lines end, worked out once there is a finding to place
    for order, rule in enumerate(RULES):
        for match in rule.matches(text):
            if breaks is None:
                breaks = [newline.start() for newline in re.finditer("\n", text)]
            found.add((bisect_right(breaks, match.start()) + 1, order))
    return [Finding(RULES[order].rule, RULES[order].label, line) for line, order in sorted(found)]


def scan_bytes(data: bytes) -> list[Finding]:
    """`scan` of a file whatever its encoding: undecodable bytes are replaced, and text in UTF-16 (every other
    byte NUL for ASCII) is read with its NULs dropped."""
    text = data.decode("utf-8", errors="replace")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return scan(text)


def redact(text: str) -> str:
    """`text` with every credential replaced, for error messages and logs."""
    for rule in RULES:
        text = rule.pattern.sub(functools.partial(_redacted, rule), text)
    return text


def _redacted(rule: Rule, match: re.Match[str]) -> str:
    if rule.check is not None and not rule.check(match):
        return match.group()
    if "secret" not in rule.pattern.groupindex:
        return "[redacted]"
    start, end = match.span("secret")
    return match.string[match.start() : start] + "[redacted]" + match.string[end : match.end()]

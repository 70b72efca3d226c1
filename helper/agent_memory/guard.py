"""The secret guard: notes and skills that contain credentials are refused, and error text is scrubbed before it
is shown.

A finding names the rule and the line, never the value. A rule is a pattern plus, where the pattern alone would
also match prose or code, a check of what it matched: a key name followed by a call, a variable, a type or a
placeholder is not a secret, and neither is a word that happens to start like a key.
"""

from __future__ import annotations

import binascii
import json
import re
from bisect import bisect_right
from collections import namedtuple


class Pattern:
    """A regular expression compiled when it is first used (and then kept by `re`'s own cache): compiling the guard's
    patterns costs every command about ten milliseconds of start-up, and most commands never scan or redact."""

    __slots__ = ("source", "flags")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags

    def __getattr__(self, name: str) -> object:
        return getattr(re.compile(self.source, self.flags), name)


# Values that only point at a secret (an environment variable, a template, a placeholder, an earlier redaction).
_REFERENCE = r"(?![\"']?(?i:\$|<|\{|%|\[|\*{3}|os\.|process\.env|getenv|environ|env\[|\.\.\.|x{6}|your[_-]|redacted))"
# Code that uses a key name without holding a secret: an expression (`(a if b else c)`), a name followed by a
# call, an index, a generic type, a comparison or a closing bracket (`getpass.getpass()`, `Optional[str]`,
# `f(token=self.token)`), an attribute (`settings.api_key`, `options?.token`), a path, or a bare name made of
# words (`new_password`, `accessToken`, `required-for-login`).
_NAME = r"[A-Za-z_$][\w$]*"
_ATTRIBUTE = rf"{_NAME}(?:\??\.{_NAME})+"
_CODE = Pattern(rf"\(.*|{_NAME}(?:\??\.{_NAME})*(?:[(\[)\]}}<=]|\?.|&&|\|\|).*|{_ATTRIBUTE}|[/~.].*|[A-Za-z_.-]+", re.S)
_LOWER = Pattern(r"[a-z]")
_DIGIT = Pattern(r"[0-9]")
_SYMBOL = Pattern(r"[^A-Za-z0-9_.-]")
_VARIABLE = Pattern(_NAME)
_URL = Pattern(r"[A-Za-z][A-Za-z0-9+.-]*://")  # a password inside one is the url-password rule's
_HUMP = Pattern(r"[a-z0-9][A-Z]")  # an upper-case letter inside a word, not one that starts it


def _long_run(value: str) -> bool:
    """A long run of letters and digits with a digit in it: a generated key, not a name or a word."""
    return len(value) >= 24 and value.isascii() and value.isalnum() and _DIGIT.search(value) is not None


def _random_looking(value: str) -> bool:
    """Whether `value` mixes what machine-made secrets mix: two of lower case, upper case inside a word,
    digits and symbols before the end (so `X-Api-Key`, `Required` and `Authorization:` do not); or is a long
    run of letters and digits."""
    classes = (
        _LOWER.search(value),
        _HUMP.search(value),
        _DIGIT.search(value),
        _SYMBOL.search(value, 0, len(value) - 1),
    )
    return sum(found is not None for found in classes) >= 2 or _long_run(value)


def _assigned(match: re.Match[str]) -> bool:
    value = match.group("secret")
    if "..." in value or "\u2026" in value or _URL.match(value):  # an elided example (`"hf_jwt_…"`), a URL
        return False
    quoted = match.string[match.start("secret") - 1] in "\"'"
    if value.startswith("`"):  # Markdown code or a template string: what is inside decides
        value, quoted = value[1:].split("`", 1)[0], False
    if not quoted and match.string[match.end() : match.end() + 1] == ";" and _VARIABLE.fullmatch(value):
        return False  # a statement that assigns a variable: `var token = mapToken2;`
    return _long_run(value) or ((quoted or not _CODE.fullmatch(value)) and _random_looking(value))


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
_URL_PLACEHOLDER = Pattern(
    r"[$*].*|%[s(].*|\.\.\..*|x+|(?:my|your|the)?[-_]?(?:password|passwd|passphrase|pwd|token|secret)s?",
    re.I | re.S,
)


def _url_password(match: re.Match[str]) -> bool:
    return not _URL_PLACEHOLDER.fullmatch(match.group("secret"))


class Rule(namedtuple("Rule", "rule label pattern check", defaults=(None,))):
    """One kind of credential: its rule name, what it is called, its pattern (a `Pattern`), and the check of a
    match (`Callable[[re.Match[str]], bool] | None`).

    A pattern with a `secret` group is redacted there only, so a message keeps the key's name or the URL's host.
    Patterns never match across a line break.
    """

    __slots__ = ()

    def matches(self, text: str) -> list[re.Match[str]]:
        """The credentials of this kind in `text`."""
        return [match for match in self.pattern.finditer(text) if self.check is None or self.check(match)]


# Patterns start with their literal prefix where they have one, which lets the regular expression engine skip
# ahead to it instead of trying every position (a 1 MiB note then takes milliseconds per rule): `X(?<!\wX)` is
# `\bX` written that way.
_ASSIGNED = (
    r"(?=[PpAaSsTt])(?i:password|passwd|passphrase|pwd|api[_-]?key|secret[_-]?key|secret|token|private[_-]?key)"
    r"[\"']?[ \t]*[:=](?!=)[ \t]*" + _REFERENCE + r"[\"']?(?P<secret>[^\s\"',;]{8,})"  # `==` compares
)

RULES: tuple[Rule, ...] = (
    Rule("hf-token", "Hugging Face token", Pattern(r"hf_(?<!\whf_)[A-Za-z0-9]{30,}\b")),
    Rule(
        "github-token",
        "GitHub token",
        Pattern(r"g(?<!\wg)(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{22,})\b"),
    ),
    Rule("gitlab-token", "GitLab token", Pattern(r"gl(?<!\wgl)(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}")),
    Rule("npm-token", "npm token", Pattern(r"npm_(?<!\wnpm_)[A-Za-z0-9]{36}\b")),
    Rule("stripe-key", "Stripe live key", Pattern(r"[rs]k_live_(?<!\w[rs]k_live_)[A-Za-z0-9]{20,}\b")),
    Rule("google-api-key", "Google API key", Pattern(r"AIza(?<!\wAIza)[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    Rule("aws-access-key", "AWS access key id", Pattern(r"A(?<!\wA)(?:KIA|SIA)[0-9A-Z]{16}\b")),
    Rule(
        "aws-secret-key",
        "AWS secret access key",
        Pattern(
            r"(?i:aws_?secret_?access_?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
            + _REFERENCE
            + r"(?P<secret>[A-Za-z0-9/+=]{40})"
        ),
    ),
    Rule("private-key", "private key block", Pattern(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    # `sk-` starts prose too (`sk-learn-compatible`): a key's body is random, so it mixes cases or digits
    Rule(
        "openai-key",
        "OpenAI or Anthropic API key",
        Pattern(r"sk-(?<!\wsk-)(?P<secret>[A-Za-z0-9_-]{32,})"),
        _mixed,
    ),
    Rule("slack-token", "Slack token", Pattern(r"x(?<!\wx)(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}")),
    Rule(
        "jwt",
        "JSON Web Token",
        Pattern(r"eyJ(?<!\weyJ)(?P<header>[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*"),
        _jwt,
    ),
    Rule(
        "url-password",
        "password in a URL",
        Pattern(r"://(?<=[A-Za-z0-9+.-]://)" + _USER + ":(?P<secret>" + _PASSWORD + ")@"),
        _url_password,
    ),
    Rule("password-assignment", "password or API key assignment", Pattern(_ASSIGNED), _assigned),
    Rule(
        "bearer-token",
        "bearer token",
        Pattern(r"[Bb](?<!\w[Bb])(?i:earer)[ \t]+" + _REFERENCE + r"(?P<secret>[A-Za-z0-9._~+/=-]{20,})"),
        _mixed,
    ),
)


class Finding(namedtuple("Finding", "rule label line")):
    """A credential found in some text: which rule matched (`rule`, `label`), on which `line` (1-based)."""

    __slots__ = ()


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
        text = rule.pattern.sub(lambda match, rule=rule: _redacted(rule, match), text)
    return text


def _redacted(rule: Rule, match: re.Match[str]) -> str:
    if rule.check is not None and not rule.check(match):
        return match.group()
    if "secret" not in rule.pattern.groupindex:
        return "[redacted]"
    start, end = match.span("secret")
    return match.string[match.start() : start] + "[redacted]" + match.string[end : match.end()]

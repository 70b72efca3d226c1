"""The secret guard: every kind of credential is found wherever it hides (note body, any frontmatter field,
any skill file in any encoding) and named without its value; code and prose that only mention a key are not.

This file holds the guard's deliberate test cases: credential-shaped values are assembled at run time, so that
the file holds none literally and the repository scan finds none in it.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path

import pytest

import tools
from agent_memory import guard
from agent_memory.errors import ContentRefused
from agent_memory.memory import saving

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import false_positives  # noqa: E402


def _b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


JWT = ".".join([_b64({"alg": "HS256", "typ": "JWT"}), _b64({"sub": "1234567890", "name": "Ada"}), "Xy9" * 14])

# one credential per rule (the other test files parametrize over these); the value is the last word
SECRETS = {
    "hf-token": "hf_" + "Ab3" * 12,
    "github-token": "ghp_" + "Zz9" * 12 + "x",
    "gitlab-token": "glpat-" + "Xy7_" * 5,
    "npm-token": "npm_" + "Np4" * 12,
    "stripe-key": "sk_" + "live_" + "Sx5" * 8,
    "google-api-key": "AIza" + "Sy" + "G1k" * 11,
    "aws-access-key": "AKIA" + "ABCDEFGHIJKLMNOP",
    "aws-secret-key": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "private-key": "-----BEGIN OPENSSH " + "PRIVATE KEY-----",
    "openai-key": "sk-" + "proj-" + "Qw8" * 14,
    "slack-token": "xoxb-" + "1234567890-abcdef",
    "jwt": JWT,
    "url-password": "https://" + "deploy:" + "p4ssw0rd@git.example.com/team/repo.git",
    "password-assignment": "db_password: " + "s3cr3t-Value!",
    "bearer-token": "Authorization: Bearer " + "abcDEF123456ghiJKL789mno",
}

# more of each kind: (rule, text, the part that must not survive redaction)
MORE = [
    ("openai-key", "key " + "sk-" + "ant-api03-" + "Kk2" * 30, "Kk2Kk2"),
    ("openai-key", "sk-" + "A1b2" * 12, "A1b2A1b2"),
    ("slack-token", "SLACK_APP_TOKEN=" + "xapp-" + "1-A0123BCDE-4567890123-abcdef0123", "A0123BCDE"),
    ("stripe-key", "restricted " + "rk_" + "live_" + "Rk5" * 9, "Rk5Rk5"),
    ("gitlab-token", "deploy " + "gldt-" + "Dd4" * 8, "Dd4Dd4"),
    ("jwt", "id_token: " + JWT.rsplit(".", 1)[0] + ".", JWT.split(".")[1]),  # unsigned (alg none style)
    ("jwt", f'{{"session": "{JWT}"}}', JWT.split(".")[2]),
    ("url-password", "postgres://" + "app:hunter2" + "@db.internal:5432/app", "hunter2"),
    ("url-password", "https://" + "u:p4ssw0rd" + "@host/x", "p4ssw0rd"),
    ("url-password", "git clone https://" + "oauth2:" + "glpat_like_Value1" + "@gitlab.com/x.git", "glpat_like"),
    ("password-assignment", 'password = "' + "correct-Horse-7" + '"', "correct-Horse-7"),
    ("password-assignment", "API_KEY=" + "9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c"),
    ("password-assignment", '"client_secret": "' + "Gx7-kP2qL9" + '"', "Gx7-kP2qL9"),
    ("password-assignment", "token: " + "abcdefghijklmnopqrstuvwxyzABCDEF0", "abcdefghijklmnop"),
    ("password-assignment", "secret_key=" + "abcdefghijklmnopqrstuvwxy2", "abcdefghijklmnopqrstuvwxy2"),
    ("password-assignment", "the password: `" + "Tr0ub4dor&3" + "`", "Tr0ub4dor&3"),
    ("password-assignment", "PASSWORD=" + "hunter2hunter", "hunter2hunter"),
    ("password-assignment", 'password = "' + "CorrectHorse" + '"', "CorrectHorse"),
    ("url-password", "https://" + "user:pass" + "@host/x", "pass@"),
    ("bearer-token", "curl -H 'authorization: bearer " + "Tok3nValue" * 3 + "'", "Tok3nValue"),
]
CASES = [(rule, f"see: {text}", text.split()[-1]) for rule, text in SECRETS.items()] + MORE

# code and prose that name a key, a token's prefix or a URL's parts, and hold no credential
HARMLESS = [
    "sk-learn-compatible estimators",
    "a sk-learn-compatible-estimator-wrapper-for-pipelines-and-grids",
    "password=getpass.getpass()",
    "api_key=os.environ['OPENAI_API_KEY']",
    "api_key = os.environ.get('OPENAI_API_KEY')",
    "token = get_token()",
    "token = tokens[0]",
    "def login(password: str) -> None",
    "password: Optional[str] = None",
    "PASSWORD_MIN_LENGTH = 12",
    "HfApi(endpoint=endpoint, token=token).list_models()",
    "client.login(username=user, password=new_password)",
    "const password = userPassword;",
    "api_key: config.api_key",
    "secret_key = settings.SECRET_KEY",
    "password: ${DB_PASSWORD}",
    "password=<your password>",
    "password: ********",
    "api_key: [redacted]",
    "set the api_key: in the settings page",
    "password: required-for-login",
    '"api_key": "required"',
    "pwd=$(pwd)",
    "PWD=/home/me/project",
    "secret: true",
    "token: null",
    "token budget: 2500 tokens",
    "max_tokens=4096",
    "the hf_hub_download function",
    "npm_config_cache=/tmp/npm",
    "npm_" + "tooShort1",
    "glpat-" + "short",
    "AIza" + "Sy" + "tooShort",
    "sk_" + "test_" + "Sx5" * 8,  # a Stripe test key is not a live key
    "xapp-" + "1",
    "Bearer tokens are read from the environment",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer authentication-is-required",
    "ssh git@github.com and user@host",
    "https://example.com:8443/path?q=1",
    "http://localhost:8080/@admin",
    "postgres://app:${DB_PASS}@db/app",
    "https://user:****@host/x",
    "https://user:<password>@host/x",
    "https://user:%s@host/x",
    "mailto:someone@example.com",
    "eyJhbGciOi is how a JWT header starts",
    _b64({"not": "a header"}) + ".abc.def",  # JSON, but no `alg`
    "eyJhbGciOiJIUz.truncated.x",
    "AKIA lower-case akiaabcdefghijklmnop",
    # seen in the code of this repository's dependencies
    "token: TextGenerationStreamOutputToken",
    'HEADER_X_XET_ACCESS_TOKEN = "X-Xet-Access-Token"',
    '`{"access_token": "hf_jwt_\u2026", "token_type": "bearer"}`',
    'verify_token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...",',
    "# cached token: `get_token()` may refresh an OAuth token",
    "token = (String.Double if terminator == '\"' else String.Single)",
    'tok = re.findall("token=([a-z0-9]+)", url)[0]',
    "headers=build_hf_headers(token=self._token))",
    "return o.to_dict(include_password=self.include_password)",
    "session_secret = (constants.OAUTH_CLIENT_SECRET or '') + '-v1'",
    "smb://workgroup;user:password@server:port/share and smb://myuser:mypassword@myserver.com/share",
    "hdfs://username:pwd@node:123/mnt and gist://username:TOKEN@id/file.txt",
    "Specify a proxy in the form scheme://[user:passwd@]proxy.server:port.",
    "git://[path-to-repo[:]][ref@]path/to/file",
    "onresumptiontoken: options2?.onresumptiontoken",
    "var mapToken = mapToken2;",
    "const browserToken = browser.launchOptions?.channel ?? 'x'",
    "t.lastToken==`.`&&e.match(g)",
    "endToken:a&&a.join?a[a.length-1]:a",
    "{regex:x,token:`linkified`}",
    'token_url = "https://auth.example.com/oauth/token"',
    'prefix_token = "Authorization:"',
]


# what a note keeps about keys without holding one, and its look-alikes that do hold one: (rule, text, secret)
NEAR_MISSES = [
    ("password-assignment", "api_key: " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "K7MDENG"),  # base64 with `/`
    ("password-assignment", 'private_key: "' + "keys/Xk9Qz2Lw" + '"', "Xk9Qz2Lw"),
    ("password-assignment", 'token: "' + "hover{Xy7kQ9z}" + '"', "Xy7kQ9z"),
    ("password-assignment", "Token: " + "a1b2c3d5", "a1b2c3d5"),  # does not count up
    ("password-assignment", "password: " + "p4ssw0rd", "p4ssw0rd"),
    ("password-assignment", "token: " + "abcdefghijklmnopqrstuvwxy2", "abcdefghijklmnop"),  # long: a key
    ("url-password", "postgres://" + "postgres:postgres" + "@db.example.com/app", "postgres@db"),
    ("url-password", "postgres://" + "postgres:postgres" + "@localhost.example.com/app", "postgres@local"),
    ("url-password", "postgres://" + "app:Xy7kQ9zW" + "@localhost:5432/app", "Xy7kQ9zW"),
    ("url-password", "postgres://" + "admin:Summer" + "@localhost@db.example.com/app", "Summer"),
]
CASES += NEAR_MISSES


@pytest.mark.parametrize(("rule", "text", "secret"), CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_each_kind_is_found_on_its_line_and_redact_hides_it(rule, text, secret):
    findings = guard.scan(f"line one\n{text}\nline three")
    assert (rule, 2) in [(f.rule, f.line) for f in findings]
    redacted = guard.redact(f"line one\n{text}\n")
    assert secret not in redacted and "[redacted]" in redacted


def test_every_rule_has_a_case():
    assert {rule.rule for rule in guard.RULES} == set(SECRETS)


# the rules whose match is a token of a fixed shape, and where such a token may stand in a note
TOKENS = [rule for rule in SECRETS if not SECRETS[rule].count(" ") and rule not in ("private-key", "url-password")]
SURROUNDINGS = {
    "japanese": "私のトークンは{}です",
    "accented": "clé{}",
    "korean-after": "{}입니다",
    "underscore-suffix": "{}_old",
    "underscore-prefix": "OLD_{}",
    "hyphen-suffix": "{}-old",
    "hyphen-prefix": "old-{}",
    "cyrillic": "ключ{}ключ",
    "no-break-space": "key\u00a0{}\u00a0",
}


def test_the_token_rules_are_those_of_a_fixed_shape():
    assert sorted(TOKENS) == sorted(
        ["hf-token", "github-token", "gitlab-token", "npm-token", "stripe-key", "google-api-key", "aws-access-key"]
        + ["openai-key", "slack-token", "jwt"]
    )


@pytest.mark.parametrize("where", sorted(SURROUNDINGS))
@pytest.mark.parametrize("rule", TOKENS)
def test_a_token_is_found_next_to_any_letter_an_underscore_or_a_hyphen(rule, where):
    token = SECRETS[rule]
    text = "first line\n" + SURROUNDINGS[where].format(token) + "\nlast line"
    assert (rule, 2) in [(f.rule, f.line) for f in guard.scan(text)]
    assert token not in guard.redact(text)


def test_a_token_inside_a_longer_ascii_word_is_another_word():
    # the rules' own characters continue a token: these are not the tokens they start like
    assert guard.scan("x" + SECRETS["hf-token"]) == []
    assert guard.scan(SECRETS["npm-token"] + "7") == []
    assert guard.scan(SECRETS["aws-access-key"] + "Q") == []


@pytest.mark.parametrize("harmless", HARMLESS + list(false_positives.ABOUT_KEYS))
def test_code_and_prose_that_mention_keys_are_not_secrets(harmless):
    assert guard.scan(harmless) == []
    assert guard.redact(harmless) == harmless


def test_redact_keeps_what_says_where_the_secret_was():
    assert guard.redact("db_password: " + "s3cr3t-Value!") == "db_password: [redacted]"
    assert guard.redact("clone https://" + "u:p4ssw0rd" + "@host/x") == "clone https://u:[redacted]@host/x"
    assert guard.redact("Authorization: Bearer " + "abcDEF123456ghiJKL789") == "Authorization: Bearer [redacted]"


def test_findings_are_once_per_rule_and_line_in_line_order():
    text = f"{SECRETS['hf-token']} {SECRETS['hf-token']}\nplain\n{SECRETS['github-token']}\n{SECRETS['hf-token']}"
    assert [(f.rule, f.line) for f in guard.scan(text)] == [("hf-token", 1), ("github-token", 3), ("hf-token", 4)]


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: b"\xff\xfe\x80" + text.encode() + b"\xc3",  # not UTF-8
        lambda text: text.encode("latin-1") + "é".encode("latin-1"),
        lambda text: text.encode("utf-16"),  # with its byte order mark
        lambda text: text.encode("utf-16-be"),
    ],
    ids=["invalid-utf8", "latin-1", "utf-16", "utf-16-be"],
)
def test_files_are_scanned_whatever_their_encoding(encode):
    data = encode(f"first\nthe key {SECRETS['hf-token']} was here\n")
    assert [(f.rule, f.line) for f in guard.scan_bytes(data)] == [("hf-token", 2)]


def test_check_secrets_covers_every_field_and_names_it_never_the_value():
    meta = {
        "title": "fine",
        "tags": ["ok", SECRETS["github-token"]],
        "agent": SECRETS["hf-token"],
        "session": None,
        "machine": "laptop " + SECRETS["npm-token"],  # a field the check has never heard of
        "sources": [SECRETS["url-password"]],
    }
    body = "ok\nok\n" + JWT + "\n"
    with pytest.raises(ContentRefused) as caught:
        saving.check_secrets(body, meta, {"agent": "--agent or AGENT_MEMORY_AGENT", "tags": "--tag"})
    message = caught.value.message
    assert "body line 3: JSON Web Token (rule jwt)" in message
    assert "field tags (from --tag): GitHub token (rule github-token)" in message
    assert "field agent (from --agent or AGENT_MEMORY_AGENT): Hugging Face token (rule hf-token)" in message
    assert "field machine: npm token (rule npm-token)" in message
    assert "field sources: password in a URL (rule url-password)" in message
    assert "title" not in message and "session" not in message
    for value in (JWT, SECRETS["github-token"], SECRETS["hf-token"], SECRETS["npm-token"], "p4ssw0rd"):
        assert value not in message
    assert caught.value.next_step


HOSTILE_SIZES = [
    "password=" * 120_000,
    "a://b:" * 180_000,
    "eyJ" + "A" * 1_000_000,
    ("eyJ" + "a" * 20 + ".") * 40_000,
    "sk-" + "a-" * 500_000,
    "https://u:" + "p" * 300 + "@" * 1_000_000,
    "Bearer " * 150_000,
    ("token: " + "Ab1" * 5 + "\n") * 50_000,
    ("token: " + "A" * 2000 + "/" + "A" * 2000 + "a!\n") * 250,  # path-shaped, with a part that is no name
    ("private_key: " + "Ab/" * 1300 + "\n") * 250,
    "x://u:Ab1@localhost" * 50_000,
]


@pytest.mark.parametrize("text", HOSTILE_SIZES, ids=[f"hostile-{i}" for i in range(len(HOSTILE_SIZES))])
def test_scanning_a_megabyte_of_hostile_text_stays_cheap(text):
    start = time.perf_counter()
    guard.scan(text)
    guard.redact(text)
    # well under a second on an idle machine; a pattern that backtracks quadratically would take hours
    assert time.perf_counter() - start < 30


def test_the_benchmark_corpus_gives_no_finding():
    refused, rules = false_positives.corpus_findings(2000)
    assert (refused, dict(rules)) == (0, {})


def test_the_repositorys_own_code_and_prose_give_no_finding():
    files = false_positives.repository_files()
    scanned = {path.relative_to(false_positives.REPO).as_posix() for path in files}
    # what the scan covers: the helper (not twice through the core skill's link), tests, benchmarks, the Space
    assert {"helper/agent_memory/guard.py", "tests/test_guard.py", "bench/data.py", "build.py", "README.md"} <= scanned
    assert "skill/SKILL.md" in scanned
    assert not any(path.startswith("helper/agent_memory/core_skill/") for path in scanned)
    found = false_positives.file_findings(files)
    unexpected = {
        path: [(f.line, f.rule) for f in findings]
        for path, findings in found.items()
        if path not in false_positives.DELIBERATE
    }
    assert unexpected == {}
    assert set(false_positives.DELIBERATE) <= set(found)  # an exception that no longer holds a case is stale


# -- through the command line -------------------------------------------------------------------------------


def _nothing_kept(machine) -> None:
    outbox = machine.state / "state" / "outbox"
    assert not outbox.exists() or [p for p in outbox.iterdir() if not p.name.startswith(".")] == []


def test_save_refuses_a_token_in_agent_memory_agent_naming_the_field_never_the_value(ready, folder_store):
    token = SECRETS["hf-token"]
    result = ready.save("# A plain note\n\nNothing secret here.\n", env={"AGENT_MEMORY_AGENT": token})
    tools.exited(result, 5)
    assert result.json["error"].startswith("The note looks like it contains a credential, so it was not saved:")
    expected = "field agent (from --agent or AGENT_MEMORY_AGENT): Hugging Face token (rule hf-token)"
    assert expected in result.json["error"]
    assert result.json["next"]
    assert token not in result.out + result.err
    _nothing_kept(ready)
    assert not list(Path(folder_store.removeprefix("file://")).rglob("*.md"))


@pytest.mark.parametrize(
    ("args", "env", "field"),
    [
        (("--source", "https://u:" + "p4ssw0rd@host/x"), {}, "field sources (from --source): password in a URL"),
        (("--agent", "codex " + SECRETS["openai-key"]), {}, "field agent (from --agent or AGENT_MEMORY_AGENT)"),
        (("--tag", SECRETS["stripe-key"]), {}, "field tags (from --tag): Stripe live key"),
        (("--title", "deploy with " + SECRETS["gitlab-token"]), {}, "field title (from --title"),
        ((), {"CODEX_THREAD_ID": SECRETS["hf-token"]}, "field session (from the agent's session id"),
    ],
    ids=["source-url-password", "agent-option", "tag", "title", "session"],
)
def test_save_scans_every_field_it_writes(ready, args, env, field):
    result = ready.run("save", *args, input="# A plain note\n\nNothing secret here.\n", env=env)
    tools.exited(result, 5)
    assert field in result.err and "Next:" in result.err
    assert "p4ssw0rd" not in result.err + result.out
    for secret in SECRETS.values():
        assert secret.split()[-1] not in result.err + result.out
    _nothing_kept(ready)


def test_save_refuses_a_bare_jwt_in_the_body_and_accepts_prose_about_keys(ready):
    refused = ready.save(f"# Debugging auth\n\nThe cookie held {JWT} at the time.\n")
    tools.exited(refused, 5)
    assert "body line 3: JSON Web Token (rule jwt)" in refused.json["error"]
    assert JWT.split(".")[1] not in refused.out + refused.err
    prose = "# Settings\n\nUse a sk-learn-compatible wrapper; read it with password=getpass.getpass().\n"
    saved = ready.save(prose + "api_key=os.environ['OPENAI_API_KEY'] and token = get_token()\n")
    tools.exited(saved)
    assert saved.json["status"] == "saved"


def test_a_session_id_that_is_not_an_id_is_left_out_not_stored(ready):
    result = ready.save("# Plain\n\ntext\n", env={"CODEX_THREAD_ID": "abc\ndef: [1]"})
    tools.exited(result)
    shown = ready.run("read", result.json["id"])
    tools.exited(shown)
    assert "\nagent: codex\n" in shown.out and "session" not in shown.out


def test_save_refuses_tokens_next_to_any_letter_naming_the_line_and_rule_never_the_value(ready, folder_store):
    hf, aws, github = SECRETS["hf-token"], SECRETS["aws-access-key"], SECRETS["github-token"]
    body = f"# Keys\n\n私のトークンは{hf}です\nキー{aws}です\nthe old one: {github}_old\n"
    for args in ((), ("--json",)):
        result = ready.run("save", *args, input=body)
        tools.exited(result, 5)
        for expected in (
            "body line 3: Hugging Face token (rule hf-token)",
            "body line 4: AWS access key id (rule aws-access-key)",
            "body line 5: GitHub token (rule github-token)",
        ):
            assert expected in (result.json["error"] if args else result.err)
        assert "Next:" in result.err or result.json["next"]
        for token in (hf, aws, github):
            assert token not in result.out + result.err
    _nothing_kept(ready)
    assert not list(Path(folder_store.removeprefix("file://")).rglob("*.md"))


def test_save_keeps_a_note_that_says_where_keys_are_kept(ready):
    body = "# Where the keys are\n\n" + "\n".join(false_positives.ABOUT_KEYS) + "\n"
    saved = ready.save(body, "--title", "Where the keys are")
    tools.exited(saved)
    assert saved.json["status"] == "saved"
    shown = ready.run("read", saved.json["id"])
    tools.exited(shown)
    assert shown.out.endswith(body)

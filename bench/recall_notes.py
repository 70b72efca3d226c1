"""The recall benchmark's notes, as data: the notes that queries mean, with those queries, and what the
distractors are made of (`recall_corpus.build` turns them into note files).

Each target note carries the queries that mean it, written as agents write them, in one of the STYLES.
"""

from __future__ import annotations

from dataclasses import dataclass

# The styles of query, in the order the tables show them, with what each is.
STYLES = {
    "phrase": "words side by side as they stand in the note (the only kind a phrase search finds)",
    "words": "several keywords in the note's order, not side by side",
    "reordered": "several keywords in another order than the note's",
    "case": "keywords in another letter case than the note's",
    "title+body": "a word of the title and a word found only in the body",
    "quoted": 'a quoted phrase and another word (`"wal mode" sqlite`)',
}


@dataclass(frozen=True)
class Target:
    """A note that queries mean: `queries` are `(style, query)`."""

    key: str
    title: str
    body: str
    queries: tuple[tuple[str, str], ...]
    kind: str = "note"
    corrects: str | None = None  # the key of the note this one corrects
    tags: tuple[str, ...] = ()


TARGETS = (
    Target(
        "sqlite-wal",
        "Chose SQLite in WAL mode for the local cache",
        "Decision (confirmed): the cache database runs SQLite in WAL mode, because readers must not block the "
        "single writer.\n\nSet `PRAGMA journal_mode=WAL` once, when the file is created: it persists in the file. "
        "Checkpoints run automatically every 1000 pages.",
        (
            ("words", "sqlite wal"),
            ("quoted", '"wal mode" sqlite'),
            ("reordered", "cache sqlite"),
            ("title+body", "cache readers"),
            ("case", "JOURNAL_MODE"),
        ),
        tags=("cache", "design"),
    ),
    Target(
        "retry-budget",
        "Flaky retry budget in the upload tests",
        "The upload tests failed about once in 20 runs on CI: the retry budget of 3 attempts ran out when the "
        "emulator answered slowly under load.\n\nFixed by scaling the budget with the measured load average "
        "instead of a fixed count. See tests/test_upload.py.",
        (
            ("phrase", "flaky retry budget"),
            ("reordered", "budget retry flaky"),
            ("case", "RETRY BUDGET upload"),
            ("title+body", "flaky emulator"),
            ("words", "retry tests ci"),
        ),
        tags=("tests", "flaky"),
    ),
    Target(
        "windows-paths",
        "Windows paths longer than 260 characters break the installer",
        "pip fails with `OSError: [Errno 2]` on Windows when the virtualenv sits deep in the user profile: the "
        "MAX_PATH limit of 260 characters.\n\nWorkaround: install into %LOCALAPPDATA%\\venvs\\short, or enable "
        "LongPathsEnabled in the registry (needs admin rights).",
        (
            ("words", "windows path limit"),
            ("reordered", "installer windows"),
            ("quoted", '"MAX_PATH" pip'),
            ("title+body", "installer LongPathsEnabled"),
            ("case", "windows max_path"),
        ),
        tags=("windows",),
    ),
    Target(
        "pg-pool",
        "Postgres connection pool exhausted under load test",
        "At 200 concurrent users the API returned 500s with `QueuePool limit of size 5 overflow 10 reached`.\n\n"
        "Root cause: each request held its database session until the response was streamed. Fix: close the "
        "session before streaming; pool_size=20, max_overflow=10. Load test script: scripts/locust_api.py.",
        (
            ("words", "postgres pool load"),
            ("reordered", "pool exhausted postgres"),
            ("case", "queuepool LIMIT"),
            ("title+body", "connection streamed"),
            ("phrase", "connection pool exhausted"),
        ),
    ),
    Target(
        "release-checklist",
        "Release checklist: tag, build the wheel, then publish",
        "1. Bump the version in pyproject.toml.\n2. Tag vX.Y.Z on main and push the tag.\n3. CI builds the wheel "
        "and the sdist from the tag.\n4. Publish with trusted publishing; never upload from a laptop.\n"
        "5. Announce it in #releases.",
        (
            ("words", "release checklist publish"),
            ("reordered", "publish tag"),
            ("quoted", '"trusted publishing" release'),
            ("title+body", "checklist sdist"),
            ("case", "Release Checklist"),
        ),
        tags=("release",),
    ),
    Target(
        "jwt-expiry",
        "JWT expiry logs users out after exactly one hour",
        "Users were logged out after 60 minutes: the access token lives one hour, and the frontend never called "
        "the refresh endpoint because its interceptor compared `exp` in milliseconds with a time in seconds.\n\n"
        "Fixed in web/src/api/auth.ts.",
        (
            ("words", "jwt expiry hour"),
            ("reordered", "expiry jwt"),
            ("case", "Refresh Endpoint"),
            ("title+body", "jwt interceptor"),
            ("quoted", '"refresh endpoint" milliseconds'),
        ),
    ),
    Target(
        "docker-cache",
        "Docker build cache invalidated by copying the source before pip install",
        "Every image build reinstalled all dependencies because the Dockerfile copied the whole source tree "
        "before `pip install`.\n\nCopy requirements.txt first, install, then copy the source: builds went from 6 "
        "minutes to 40 seconds.",
        (
            ("words", "docker cache pip"),
            ("reordered", "pip install docker"),
            ("quoted", '"build cache" docker'),
            ("title+body", "docker requirements.txt"),
            ("phrase", "docker build cache"),
        ),
        tags=("ci",),
    ),
    Target(
        "report-timezone",
        "Timezone bug: daily reports used the server's local time",
        "The daily report counted events from 00:00 server time (UTC+2), not UTC, so the first two hours of each "
        "day went to the previous day.\n\nAll timestamps are now stored in UTC and converted only in the "
        "template. Use datetime.now(timezone.utc), never datetime.now().",
        (
            ("words", "timezone reports utc"),
            ("reordered", "utc timezone"),
            ("quoted", '"local time" reports'),
            ("title+body", "timezone template"),
            ("case", "DAILY REPORT"),
        ),
    ),
    Target(
        "websocket-leak",
        "Memory leak in the websocket handler",
        "The gateway grew by about 50 MB per hour: each closed websocket left its subscription in the broadcast "
        "set, because the disconnect handler ran only on a clean close.\n\nMoved the cleanup into a finally "
        "block; RSS is flat over 24 hours.",
        (
            ("phrase", "memory leak"),
            ("reordered", "websocket leak"),
            ("title+body", "leak subscription"),
            ("case", "WebSocket Memory"),
            ("words", "websocket disconnect finally"),
        ),
        tags=("perf",),
    ),
    Target(
        "urllib3-pin",
        "Pin urllib3 below 2 for the legacy S3 client",
        "boto 2, still used by the archive job, breaks with urllib3 2.x: `TypeError: HTTPResponse.__init__() got "
        "an unexpected keyword argument`.\n\nPinned urllib3<2 in constraints.txt until the archive job moves to "
        "boto3 (ticket OPS-412).",
        (
            ("words", "pin urllib3 legacy"),
            ("reordered", "s3 urllib3"),
            ("quoted", '"archive job" urllib3'),
            ("title+body", "legacy constraints"),
            ("case", "URLLIB3 Pin"),
        ),
    ),
    Target(
        "redis-sessions",
        "Sessions lost when Redis evicted keys",
        "Logged-in users were logged out at random during traffic peaks: Redis reached maxmemory with the "
        "volatile-lru policy and evicted session keys.\n\nSessions moved to their own Redis instance with "
        "noeviction and 2 GB; the cache instance keeps allkeys-lru.",
        (
            ("words", "sessions redis"),
            ("reordered", "redis sessions"),
            ("quoted", '"allkeys-lru" cache'),
            ("title+body", "evicted maxmemory"),
            ("case", "REDIS noeviction"),
        ),
    ),
    Target(
        "feature-flags",
        "Feature flags are read once at startup",
        "Changing a flag in the admin UI had no effect until the workers restarted: flags are loaded into a "
        "module-level dict at import.\n\nDecision: keep it (no lookup per request); the admin UI now says that a "
        "deploy or a restart applies the change.",
        (
            ("words", "feature flags startup"),
            ("reordered", "startup flags"),
            ("title+body", "flags restart"),
            ("case", "Feature Flags ADMIN"),
            ("phrase", "feature flags"),
        ),
        tags=("design",),
    ),
    Target(
        "macos-disk",
        "CI runs out of disk on the macOS runners",
        "The macOS job failed with `No space left on device` while building the app bundle: the runner image "
        "has about 14 GB free and the Xcode cache alone takes 9 GB.\n\nFix: delete "
        "~/Library/Developer/Xcode/DerivedData before the build step.",
        (
            ("words", "ci disk macos"),
            ("reordered", "macos runners disk"),
            ("quoted", '"no space left" macos'),
            ("title+body", "runners DerivedData"),
            ("case", "MACOS xcode"),
        ),
        tags=("ci",),
    ),
    Target(
        "orders-migration",
        "Migration 0042 locks the orders table for minutes",
        "Adding a NOT NULL column with a default rewrote the whole orders table under an ACCESS EXCLUSIVE lock "
        "(12 minutes at production size).\n\nSplit into three steps: add a nullable column, backfill in batches of "
        "10,000, then set NOT NULL. Rule: no table rewrite in a deploy migration.",
        (
            ("words", "migration orders table"),
            ("reordered", "orders migration"),
            ("quoted", '"not null" migration'),
            ("title+body", "migration backfill"),
            ("case", "access exclusive"),
        ),
    ),
    Target(
        "rate-limiter",
        "Rate limiter counted retries as new requests",
        "Clients that retried on 429 were throttled even harder: the limiter was keyed on the request id, which "
        "the SDK generates again on every retry.\n\nNow keyed on the API key and the route; retries within the "
        "Retry-After window are not counted.",
        (
            ("words", "rate limiter retries"),
            ("reordered", "retries rate"),
            ("quoted", '"retry-after" 429'),
            ("title+body", "limiter sdk"),
            ("phrase", "rate limiter"),
        ),
    ),
    Target(
        "moment-bundle",
        "Frontend bundle grew to 4 MB because of moment locales",
        "webpack-bundle-analyzer showed moment.js with every locale (about 600 kB).\n\nReplaced moment with "
        "date-fns and imported only the functions used; the main bundle is 1.1 MB gzipped. Do not add moment "
        "back.",
        (
            ("words", "bundle moment locales"),
            ("reordered", "locales bundle"),
            ("title+body", "bundle date-fns"),
            ("case", "Webpack BUNDLE"),
            ("quoted", '"main bundle" gzipped'),
        ),
        tags=("perf",),
    ),
    Target(
        "monorepo",
        "Decision: one repository for the API and the web app (monorepo)",
        "We keep api/ and web/ in one repository with a shared CI pipeline: changes that touch both land in one "
        "pull request, and the OpenAPI schema cannot drift.\n\nRevisit if CI takes more than 20 minutes.",
        (
            ("words", "decision repository"),
            ("reordered", "monorepo web"),
            ("quoted", '"openapi schema" drift'),
            ("title+body", "monorepo pipeline"),
        ),
        tags=("design",),
    ),
    Target(
        "monorepo-paths",
        "Correction: the monorepo's CI runs per folder",
        "Corrects the monorepo decision: CI reached 26 minutes, so the pipeline now runs the api/ and web/ jobs "
        "only when their folder changed (path filters). It is still one repository.",
        (("words", "ci folder"), ("quoted", '"path filters" pipeline'), ("case", "MONOREPO correction")),
        corrects="monorepo",
        tags=("ci",),
    ),
    Target(
        "celery-twice",
        "Celery tasks ran twice after a worker restart",
        "With acks_late=True and a visibility timeout of one hour, tasks still running when a worker was killed "
        "were delivered again and ran twice (duplicate invoices).\n\nTasks are idempotent now: each checks the "
        "invoice status before sending.",
        (
            ("words", "celery tasks twice"),
            ("reordered", "restart celery"),
            ("quoted", '"visibility timeout" celery'),
            ("title+body", "tasks idempotent"),
            ("case", "ACKS_LATE"),
        ),
    ),
    Target(
        "gpg-tags",
        "GPG signing of release tags on the build machine",
        "The build machine signs tags with the release key kept on the hardware token; `git tag -s` asks for the "
        "PIN through pinentry-curses, so run it in a real terminal, not from a script.\n\nThe public key is in "
        "docs/release-key.asc.",
        (
            ("words", "gpg signing tags"),
            ("reordered", "tags gpg"),
            ("quoted", '"git tag -s" pin'),
            ("title+body", "signing pinentry"),
            ("phrase", "release tags"),
        ),
        tags=("release",),
    ),
    Target(
        "dashboard-index",
        "Slow dashboard: missing index on events.created_at",
        "The dashboard's last-7-days query did a sequential scan over 80 M rows.\n\nAdded a BRIN index on "
        "events.created_at (the table is append-only): 9 s down to 120 ms. EXPLAIN ANALYZE output saved in "
        "docs/perf/dashboard.txt.",
        (
            ("words", "slow dashboard index"),
            ("reordered", "created_at index"),
            ("quoted", '"sequential scan" dashboard'),
            ("title+body", "dashboard brin"),
            ("case", "Brin INDEX"),
        ),
        tags=("perf",),
    ),
    Target(
        "spf-email",
        "Email delivery: the SPF record missed the new provider",
        "Password reset emails landed in spam after the switch to the new mail provider: the domain's SPF record "
        "still listed only the old one.\n\nAdded include:_spf.mailprovider.example to the TXT record; DMARC "
        "reports are clean since.",
        (
            ("words", "email spf provider"),
            ("reordered", "spf email"),
            ("quoted", '"password reset" spam'),
            ("title+body", "spf dmarc"),
            ("phrase", "spf record"),
        ),
    ),
    Target(
        "test-order",
        "Tests depend on the order they run in",
        "tests/test_billing.py passed alone and failed in the full suite: a fixture changed the module-level "
        "PRICES dict.\n\nFound with pytest-randomly (seed 12345). The fixture now deep-copies, and the suite "
        "runs in random order on CI.",
        (
            ("words", "tests order"),
            ("reordered", "order tests random"),
            ("quoted", '"pytest-randomly" fixture'),
            ("title+body", "order fixture"),
            ("case", "prices DICT"),
        ),
        tags=("tests", "flaky"),
    ),
    Target(
        "oomkilled",
        "Kubernetes pods OOMKilled at 512Mi",
        "The image-resize worker was OOMKilled during bulk uploads: Pillow decodes a 40-megapixel JPEG into about "
        "160 MB, and four of them run at once.\n\nLimit raised to 1Gi and concurrency set to 2 per pod; large "
        "images are downscaled with draft() first.",
        (
            ("words", "kubernetes oomkilled"),
            ("reordered", "oomkilled kubernetes"),
            ("quoted", '"bulk uploads" pillow'),
            ("title+body", "pods pillow"),
            ("case", "OOMKILLED 512mi"),
        ),
    ),
    Target(
        "env-secrets",
        "Secrets are read from the environment, never from files in the repository",
        "Decision: every credential comes from environment variables that the deploy injects (Vault agent); "
        ".env files are for local development only and listed in .gitignore.\n\nA pre-commit hook "
        "(detect-secrets) refuses commits that add one.",
        (
            ("words", "secrets environment"),
            ("reordered", "environment secrets vault"),
            ("quoted", '"pre-commit hook" secrets'),
            ("title+body", "secrets gitignore"),
        ),
        tags=("design",),
    ),
    Target(
        "restore-test",
        "Nightly backup restore test",
        "Every night a job restores the latest Postgres backup into a scratch instance and runs a row count on 12 "
        "tables; it pages on-call if any count drops by more than 1 %.\n\nA restore takes 35 minutes for 180 GB.",
        (
            ("words", "nightly restore postgres"),
            ("reordered", "restore backup"),
            ("title+body", "backup on-call"),
            ("case", "Nightly BACKUP"),
            ("quoted", '"row count" restore'),
        ),
    ),
    Target(
        "keyset-pagination",
        "Pagination skipped rows when sorting by updated_at",
        "Offset pagination over a list sorted by updated_at skipped and repeated rows while records were being "
        "edited.\n\nThe export now uses keyset pagination on (updated_at, id); offset stays only in the admin UI.",
        (
            ("words", "pagination sorting"),
            ("reordered", "updated_at pagination"),
            ("quoted", '"keyset pagination" export'),
            ("title+body", "pagination offset"),
        ),
    ),
    Target(
        "distutils",
        "Python 3.12 removed distutils: the build script is fixed",
        "scripts/build_ext.py imported distutils.core, which Python 3.12 removed.\n\nReplaced with setuptools "
        "(setuptools>=68 in the build requirements). The CI matrix now includes 3.12 and 3.13.",
        (
            ("words", "python distutils"),
            ("reordered", "distutils 3.12"),
            ("quoted", '"build requirements" setuptools'),
            ("title+body", "distutils matrix"),
            ("case", "DISTUTILS"),
        ),
    ),
    Target(
        "root-logger",
        "Log lines duplicated by the root logger",
        "Every message appeared twice in the production logs: the app added its own handler and propagate stayed "
        "True, so the root logger printed it again.\n\nSet propagate=False on the app's logger: one line per event.",
        (
            ("words", "log duplicated"),
            ("reordered", "logger duplicated"),
            ("quoted", '"root logger" propagate'),
            ("title+body", "duplicated propagate"),
            ("case", "PROPAGATE=false"),
        ),
    ),
    Target(
        "apns",
        "Push notifications failed after the APNs certificate expired",
        "iOS push stopped on March 3rd: the APNs certificate had expired.\n\nMoved to token-based authentication "
        "(a .p8 key), which does not expire; a calendar reminder is set anyway for the key rotation policy.",
        (
            ("words", "push notifications apns"),
            ("reordered", "apns push"),
            ("quoted", '"token-based authentication" ios'),
            ("title+body", "certificate p8"),
            ("phrase", "apns certificate"),
        ),
    ),
    Target(
        "cron-dst",
        "Cron job ran twice during the daylight saving change",
        "The 02:30 billing cron ran twice on the last Sunday of October (the clock went back), charging some "
        "customers twice.\n\nCron schedules are in UTC on every host now (CRON_TZ=UTC).",
        (
            ("words", "cron twice daylight"),
            ("reordered", "daylight saving cron"),
            ("quoted", '"daylight saving" billing'),
            ("title+body", "cron customers"),
            ("case", "cron_tz"),
        ),
    ),
    Target(
        "api-versioning",
        "API versioning: v2 only adds fields",
        "Decision: the public API stays on /v2 and only adds optional fields; removing or renaming a field needs "
        "/v3 and six months of overlap.\n\nClients must ignore unknown fields.",
        (
            ("words", "api versioning fields"),
            ("reordered", "fields v2"),
            ("quoted", '"unknown fields" clients'),
            ("title+body", "versioning overlap"),
        ),
        tags=("design",),
    ),
    Target(
        "startup-probe",
        "Load balancer health check killed slow-starting pods",
        "New pods took 45 s to warm the model cache, but the health check failed them after 30 s and they "
        "restarted in a loop.\n\nAdded a startup probe with a budget of 120 s; readiness checks only the HTTP "
        "server.",
        (
            ("words", "health check pods"),
            ("reordered", "pods health"),
            ("quoted", '"startup probe" pods'),
            ("title+body", "balancer readiness"),
            ("phrase", "health check"),
        ),
    ),
    Target(
        "lfs-quota",
        "Git LFS quota exceeded by test fixtures",
        "Pushes were rejected with `This repository is over its data quota`: 3 GB of binary test fixtures in "
        "LFS.\n\nFixtures over 1 MB now live in the artifacts bucket and are fetched by `make fixtures`.",
        (
            ("words", "git quota fixtures"),
            ("reordered", "quota fixtures lfs"),
            ("quoted", '"data quota" push'),
            ("title+body", "lfs artifacts"),
            ("case", "lfs FIXTURES"),
        ),
        tags=("tests",),
    ),
    Target(
        "unicode-usernames",
        "Unicode normalization: usernames that look the same",
        "Two accounts 'José' and 'Jose\u0301' (one with a combining accent) could both register.\n\nUsernames are "
        "now NFKC-normalized and casefolded before the uniqueness check; existing duplicates were merged by hand "
        "(3 cases).",
        (
            ("words", "unicode usernames"),
            ("reordered", "usernames normalization"),
            ("quoted", '"uniqueness check" usernames'),
            ("title+body", "unicode nfkc"),
            ("case", "NFKC Casefolded"),
        ),
    ),
    Target(
        "payments-webhook",
        "Checkpoint: payments webhook migration",
        "Done: the webhook endpoint moved to /hooks/payments with signature verification; the old endpoint is "
        "still accepted until the provider switches.\n\nNext: remove the old endpoint after 2024-06-01; replay "
        "the 14 events that failed during the switch. Files: api/payments/webhooks.py.",
        (
            ("words", "payments migration"),
            ("reordered", "webhook payments"),
            ("quoted", '"signature verification" webhook'),
            ("title+body", "checkpoint replay"),
        ),
        kind="checkpoint",
    ),
    Target(
        "i18n-manifest",
        "Translations missing in the production build",
        "The French and German strings fell back to English in production only: the build step copied the locale "
        "files after the hash manifest was generated, so their URLs answered 404.\n\nThe i18n files are part of "
        "the bundle's manifest now.",
        (
            ("words", "translations production"),
            ("reordered", "production translations missing"),
            ("title+body", "translations manifest"),
            ("case", "I18N Manifest"),
        ),
    ),
    Target(
        "bastion-keys",
        "SSH to the bastion needs an ed25519 key",
        "Since the OpenSSH upgrade the bastion rejects ssh-rsa keys (SHA-1 signatures).\n\nGenerate a key with "
        "`ssh-keygen -t ed25519` and add its public half to the authorized_keys list of the infra repository.",
        (
            ("words", "ssh bastion key"),
            ("reordered", "bastion ssh"),
            ("quoted", '"ssh-rsa" bastion'),
            ("title+body", "bastion openssh"),
            ("case", "ED25519 Bastion"),
        ),
    ),
    Target(
        "uuidv7",
        "Decision: UUIDv7 for public ids",
        "Public ids are UUIDv7: sortable by creation time (good for index locality) and not guessable like the old "
        "sequential integers.\n\nStored as the native uuid type in Postgres.",
        (("words", "uuidv7 public"), ("quoted", '"index locality" uuid'), ("title+body", "uuidv7 sequential")),
        tags=("design",),
    ),
    Target(
        "uuidv7-invitations",
        "Correction: invitation ids are random, not UUIDv7",
        "Corrects the UUIDv7 decision for invitations only: their ids showed when an account was created.\n\n"
        "Invitation ids are random UUIDv4; the other public ids stay UUIDv7.",
        (("words", "invitation random"), ("reordered", "uuidv4 invitation"), ("title+body", "correction account")),
        corrects="uuidv7",
    ),
)

# Queries that mean a note and its correction together: `(style, query, target keys)`.
PAIRS = (
    ("words", "monorepo ci", ("monorepo", "monorepo-paths")),
    ("reordered", "pipeline monorepo", ("monorepo", "monorepo-paths")),
    ("words", "uuidv7 ids", ("uuidv7", "uuidv7-invitations")),
    ("case", "Public IDS uuidv7", ("uuidv7", "uuidv7-invitations")),
)

# What the distractors are made of: where the work happened, and sentences of everyday engineering memory
AREAS = (
    "the cache",
    "the upload queue",
    "CI",
    "the API",
    "the web app",
    "billing",
    "the export job",
    "search",
    "the mobile app",
    "auth",
    "the dashboard",
    "the worker pool",
    "the release pipeline",
    "the database",
    "logging",
    "the admin UI",
    "payments",
    "notifications",
    "the installer",
    "infra",
)
TITLES = (
    "Checkpoint: {area}",
    "Notes from the review of {area}",
    "Open questions about {area}",
    "Investigated an alert in {area}",
    "Pairing session on {area}",
    "Cleanup of {area}",
    "Stand-up: {area}",
    "Plan for {area} next sprint",
    "Handover: {area}",
    "What changed in {area} this week",
)
SENTENCES = (
    "Ran the full test suite on Windows; two path tests are still skipped there.",
    "The cache hit rate on the dashboard is 92 % after warm-up.",
    "Every call to the payments provider retries with exponential backoff, capped at 30 s.",
    "Reviewed the pull request for the export job and asked for a test of the empty case.",
    "Postgres minor upgrade to 15.6 is done on staging; production follows next week.",
    "The release notes draft is in docs/releases/next.md.",
    "A worker restart during the deploy dropped three jobs; they were queued again by hand.",
    "Load test at 150 users: p95 latency 340 ms, no errors.",
    "The session cookie is now SameSite=Lax on every subdomain.",
    "Moved the feature toggles page behind the admin role.",
    "The nightly job that cleans temporary files now skips folders younger than a day.",
    "Disk usage on the build server is at 71 %; old artifacts are removed after 30 days.",
    "The migration script for the invoices table ran in 4 minutes on a copy of production.",
    "The timeout for the search endpoint went from 10 s to 5 s; nothing slower showed up in the logs.",
    "Renamed the settings module and kept an alias for one release.",
    "The mobile build needs Xcode 15; the runner image has it since Monday.",
    "A flaky test in the notifications suite was quarantined; the ticket is QA-88.",
    "Pinned the linter version in the pre-commit configuration.",
    "The upload queue drains 1,200 files a minute with four workers.",
    "Decided to keep the REST endpoints and not add GraphQL this quarter.",
    "The retry of failed webhooks waits one minute, then ten, then an hour.",
    "The order history page loads 50 rows at a time.",
    "Checked the backup of the user database: restored fine on a scratch host.",
    "The Docker image for the API is 410 MB; the slim base image would save 150 MB.",
    "Budget for the staging cluster: 3 nodes, scaled down at night.",
    "Time zones in the calendar view come from the browser, not the profile.",
    "Memory of the search worker stays near 300 MB under normal traffic.",
    "Redis is used for rate counters and the short-lived cache, not for anything that must survive.",
    "The public API rejects unknown query parameters with a 400.",
    "Log levels: INFO in production, DEBUG only behind a flag.",
    "The installer writes its log to the temp folder and prints the path on failure.",
    "Translation strings are extracted with `make messages` before every release.",
    "The admin UI shows the last 20 deploys with their commit and author.",
    "Code review rule: one approval for docs, two for anything under api/.",
    "The CI pipeline caches node_modules keyed on the lockfile hash.",
    "Uploads over 100 MB go straight to the bucket with a presigned URL.",
    "The health endpoint returns the version and the commit it was built from.",
    "A customer reported slow exports; their account has 2 million rows.",
    "Key rotation for the service accounts is due every 90 days.",
    "The staging database is refreshed from an anonymized production dump every Monday.",
    "Python 3.11 is the minimum for the backend; the scripts still run on 3.9.",
    "The pagination links in the API follow RFC 8288.",
    "The web app's bundle is split per route; the largest chunk is the editor.",
    "The queue worker acknowledges a job only after it is written to the database.",
    "Alerts for 5xx rates page on-call after five minutes above 2 %.",
    "The cron schedule of the report job moved to 06:00.",
    "Switched the CI runners to the larger machine type for the integration tests.",
    "The signup form validates emails on the server only.",
    "Search results are cached for 60 seconds per query and user.",
    "Kubernetes requests and limits were aligned for every deployment.",
    "The SDK's default timeout is 30 s; clients can lower it.",
    "The tests for the billing module use a frozen clock.",
    "Replaced the hand-written CSV parser with the standard library's csv module.",
    "The dashboard's charts render on the client; the data comes from one endpoint.",
    "Login attempts are limited to 10 per minute per account.",
    "The export job writes to a temporary file and renames it when done.",
    "The web app supports the last two versions of each major browser.",
    "Release candidates are deployed to staging for two days before production.",
    "The worker pool size follows the number of cores, at most 8.",
    "Database connections are opened lazily, on the first query of a request.",
    "Reminder: rotate the staging certificates before the end of the month.",
    "The retry budget for uploads is shared by all files of one batch.",
    "Error messages shown to users never include stack traces.",
    "The infra repository holds the Terraform for every environment.",
    "A lock file guards the nightly job against two runs at once.",
    "Notifications are batched: at most one email per user per hour.",
    "The build step for the docs site takes 90 seconds.",
    "The mobile app refreshes its token in the background.",
    "Profiling showed half the request time in JSON serialization.",
    "Agreed to write a checkpoint note at the end of every working session.",
)
AGENTS = ("codex", "claude-code")
MACHINES = ("laptop", "desktop", "ci-runner")
TAGS = ("ci", "tests", "perf", "release", "design", "windows", "flaky", "cache")

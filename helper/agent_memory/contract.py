"""The JSON objects the commands print, declared once: every key, and what it holds.

Each command's handler returns one of these (`cli.parsing.Rendered`), and `cli.render.emit` prints it, the one
place where a result becomes JSON. The keys are the contract that agents and scripts read (`skill/references/
commands.md`): tests assert them exactly, and a key added here must be documented there.

For the type checker and the tests only: no command loads this module (nor `typing`, a fifth of the interpreter's
own start-up). The modules that build a result import its declaration under `TYPE_CHECKING` and build it as a dict
literal annotated with it; `tests/test_import_paths.py` holds that no command loads it.
"""

from __future__ import annotations

from typing import TypedDict, final

# -- what several results share -------------------------------------------------------------------------------


class Failure(TypedDict):
    """What `--json` prints when a command fails (its text goes to stderr as `Error:` and `Next:` lines)."""

    error: str
    next: str
    exit_code: int


class Skipped(TypedDict):
    """An object that a refresh left out, with why (`reason`): `unsafe` (a folder store's entry that could lead
    outside it) or `oversized` (larger than it may be: never downloaded); `next` clears it."""

    path: str
    reason: str
    detail: str
    next: str


class Gone(TypedDict):
    """A note that a listing found gone from the bucket, and when: its cached copy was dropped."""

    path: str
    at: str


class CacheFreshness(TypedDict):
    """How fresh a search's answer is (`freshness`, named apart from `sync`, which is the sync of the runtimes' own
    memory): `status` fresh or stale, the `reason` and `detail` of a stale one, `kind` of
    a fresh refresh (`changes`, `listing`), what it skipped, and the paths of the cached notes it dropped because
    the bucket no longer holds them (`gone`)."""

    status: str
    reason: str | None
    detail: str | None
    kind: str | None
    skipped: list[Skipped]
    gone: list[str]


class LastError(TypedDict):
    """Why the last attempt of an upload failed, and when."""

    reason: str
    detail: str
    at: str


class Damage(TypedDict):
    """A pending upload whose plan cannot be executed as written: listed with its folder, never skipped."""

    kind: str
    id: str
    file: str
    problem: str


# -- notes ----------------------------------------------------------------------------------------------------


class Match(TypedDict):
    """A line of a note's body that holds terms of the query (numbered from the body's first line)."""

    line: int
    text: str


class NoteHit(TypedDict):
    """A note that a search found (display-safe; `damaged` says why a note's fields are not shown)."""

    id: str
    title: str
    kind: str
    created: str
    agent: str
    machine: str
    damaged: str | None
    path: str
    pending: bool
    corrects: str | None
    corrected_by: str | None
    partial: bool
    missing: list[str]
    matches: list[Match]


class Found(TypedDict):
    """What a search of the project's notes found: those that hold every term of the query (else those with the
    most, marked `partial`), best first, and how many of the project's notes are pending here."""

    project: str
    query: str
    results: list[NoteHit]
    pending: int


class Search(TypedDict):
    """`search`: what it found, and how fresh the cache was."""

    project: str
    query: str
    results: list[NoteHit]
    freshness: CacheFreshness
    pending: int


class NoteRead(TypedDict):
    """`read NOTE_ID --json`: the note's exact text and where it was read from (`cache`, `bucket`, `pending`)."""

    id: str
    path: str
    content: str
    source: str


@final  # (final: `"revision" in result` tells a publication from a note or a sync)
class NoteUpload(TypedDict):
    """`save`, or the retry of one note: `status` saved or pending, with the `message` that says so and, while
    pending, `next`: what shares it (what fixes the failure first, then the retry)."""

    id: str
    project: str | None
    bucket: str
    path: str
    status: str
    message: str
    next: str | None


# -- skills ---------------------------------------------------------------------------------------------------


class _PublicationFields(TypedDict):
    name: str | None
    revision: str
    status: str
    files: list[str]


@final
class Publication(_PublicationFields, total=False):
    """`publish-skill`, or the retry of one publication: `status` published or pending (with its `message`, and
    `next`: what publishes it)."""

    message: str
    next: str


class SkillHit(TypedDict):
    """A published skill revision that `search --skills` found, and when it was published."""

    name: str
    revision: str
    description: str
    published: str | None


class SkillSearch(TypedDict):
    """`search --skills`: the complete revisions matching the query, newest first."""

    skills: list[SkillHit]


class SkillFile(TypedDict):
    """`read --skill NAME --revision REV [FILE]`: one file of a published revision."""

    name: str
    revision: str
    file: str
    content: str


class Installed(TypedDict):
    """`install-skill`: every destination (which now holds the revision), those that already did, the backup."""

    name: str
    revision: str
    installed: list[str]
    unchanged: list[str]
    backup: str | None


# -- sync of the runtimes' own memory -----------------------------------------------------------------------------


class SyncConflict(TypedDict):
    """A synced file changed here and elsewhere on the same lines (or `deleted_here` and changed elsewhere): the
    file here keeps its text, the other texts are kept in `kept` (outside the runtime's folder), `show` lists its
    versions."""

    agent: str
    scope: str
    folder: str
    path: str
    heads: list[str]
    kept: list[str]
    deleted_here: bool
    show: str


class SyncRefused(TypedDict):
    """A file that was not synced, and why (a secret, a link, too large, a hostile version)."""

    path: str
    why: str


class SyncFileRefused(SyncRefused):
    """A file of a memory folder that was not synced: why, and `next`, what makes it sync."""

    next: str


class SyncBlocked(TypedDict):
    """A memory folder, or a subfolder of one, that is not synced now (`why`: gone, a link, a file, unreadable):
    what it held is deleted nowhere; `next` says what to do."""

    agent: str
    scope: str
    folder: str
    why: str
    next: str


class SyncHeld(TypedDict):
    """A deletion held until the user confirms it (`next`): many files deleted at once, here or on another
    machine (`why`), are deleted nowhere else until then."""

    agent: str
    scope: str
    folder: str
    path: str
    why: str
    next: str


class SyncFolder(TypedDict):
    """What one sync did in one memory folder."""

    agent: str
    scope: str
    folder: str
    pushed: list[str]
    pulled: list[str]
    merged: list[str]
    waiting: list[str]
    conflicts: list[SyncConflict]
    refused: list[SyncFileRefused]
    blocked: list[SyncBlocked]
    held: list[SyncHeld]
    in_step: int


@final
class SyncUpload(TypedDict):
    """One upload of synced versions: `saved`, or `pending` in the outbox (retried as notes are), with `next` then."""

    id: str
    agent: str | None
    bucket: str
    files: list[str]
    status: str
    message: str
    next: str | None


class SyncRun(TypedDict):
    """`sync now` (and `sync restore`): each folder's pass, the uploads, and the store's errors."""

    folders: list[SyncFolder]
    uploads: list[SyncUpload]
    errors: list[str]
    busy: list[str]
    refused: list[SyncRefused]


class SyncArrival(TypedDict):
    """A file that versions made on other machines reached since this machine's last session: whose, and when
    the newest was made."""

    path: str
    machines: list[str]
    time: str


class SyncFolderState(TypedDict):
    """A synced memory folder as this machine's record has it (none yet: never synced), whether it `exists` (a
    runtime creates it with its first memory), where its place came from (`source`: the runtime's own folder, a
    setting and its file; "" for a record of a folder no longer watched), and whether it is synced (`synced`: a
    folder outside the runtime's configuration folder only once the user named it)."""

    agent: str
    scope: str
    folder: str
    source: str
    synced: bool
    exists: bool
    files: int
    pushed: int
    pulled: int
    conflicts: list[SyncConflict]
    blocked: list[SyncBlocked]
    held: list[SyncHeld]
    last_sync: str | None
    arrived: list[SyncArrival]


class SyncAgent(TypedDict):
    """Whether one runtime's memory is synced, and its folders here."""

    agent: str
    enabled: bool
    folders: list[SyncFolderState]


class SyncStatus(TypedDict):
    """`sync status`: each runtime, and the uploads of synced versions still waiting."""

    agents: list[SyncAgent]
    pending: int


class SyncSummary(TypedDict):
    """The `sync` part of `status`: the runtimes synced, uploads waiting, files and folders that need a decision."""

    enabled: list[str]
    pending: int
    conflicts: list[SyncConflict]
    blocked: list[SyncBlocked]
    held: list[SyncHeld]


class SyncSwitched(TypedDict):
    """`sync enable|disable`: the runtimes now on, and what each was before; `folders`: the memory folders outside
    a runtime's configuration folder that the user named for sync (`--folder`), per runtime."""

    enabled: list[str]
    changed: dict[str, bool]
    folders: dict[str, list[str]]


class SyncVersion(TypedDict):
    """One version of a synced file (`deleted`: a tombstone; `head`: a current version)."""

    id: str
    bases: list[str]
    machine: str
    time: str
    deleted: bool
    head: bool
    text: list[str] | None  # its first lines, credentials masked (None: a deletion)
    more_lines: int  # lines of the text not shown


class SyncDiff(TypedDict):
    """`sync history FILE --diff`: the unified diff from version `older` (None: no file) to version `newer`."""

    older: str | None
    newer: str
    lines: list[str]
    more_lines: int


class SyncHistory(TypedDict):
    """`sync history FILE`: its versions, the one the file here matches, the kept texts of a conflict, and why sync
    leaves the file out (`not_synced`: None when it syncs it)."""

    agent: str
    scope: str
    folder: str
    path: str
    versions: list[SyncVersion]
    here: str | None
    kept: list[str]
    not_synced: str | None
    diffs: list[SyncDiff]


# -- what waits on this machine -------------------------------------------------------------------------------


class Progress(TypedDict):
    """Where an upload that waits goes, and how its attempts went: every kind lists these."""

    bucket: str
    queued: str | None
    attempts: int
    last_error: LastError | None


class PendingNote(Progress):
    """A note waiting for upload, as `pending` and `status` list it."""

    id: str
    path: str
    project: str | None


class PendingPublication(Progress):
    """A skill revision waiting for upload."""

    name: str | None
    revision: str
    files: list[str]


class PendingSync(Progress):
    """Versions of the runtimes' memory files waiting for upload (one upload per sync)."""

    id: str
    agent: str | None
    scope: str | None
    files: list[str]


class NoteWaiting(TypedDict):
    """A note waiting for upload, as `status` lists it: how many seconds ago it was queued (None: no time stamp)."""

    id: str
    bucket: str
    path: str
    age_seconds: int | None
    attempts: int
    last_error: LastError | None


class Pending(TypedDict):
    """`pending`: every upload that waits here, by kind, and the damaged ones."""

    notes: list[PendingNote]
    skills: list[PendingPublication]
    sync: list[PendingSync]
    damaged: list[Damage]


Delivered = NoteUpload | Publication | SyncUpload  # what one upload's delivery gives its command, by kind
Waiting = PendingNote | PendingPublication | PendingSync  # how one upload that waits is listed, by kind


class Retries(TypedDict):
    """`pending retry` (every upload): each one's result, and the damaged ones (never uploaded)."""

    results: list[Delivered]
    damaged: list[Damage]


class Exported(TypedDict):
    """`pending export`: the files written."""

    id: str
    written: list[str]


class Discarded(TypedDict):
    """`pending discard`: where the plan and its bytes are kept."""

    id: str
    kind: str
    kept: str


# -- the hooks --------------------------------------------------------------------------------------------------


class SessionStart(TypedDict):
    """`hook session-start --json`: the reminder the model was given ("" for a resumed session that has it)."""

    event: str
    agent: str
    context: str


class Waited(TypedDict):
    """What the hooks' retry did: each upload's result, the damaged ones, and the seconds left of their wait."""

    results: list[Delivered]
    damaged: list[Damage]
    waiting: int


class Stop(TypedDict):
    """`hook stop|session-end --json`: the event, and what its retry did (`Waited`)."""

    event: str
    agent: str
    results: list[Delivered]
    damaged: list[Damage]
    waiting: int


# -- this machine -------------------------------------------------------------------------------------------------


class Place(TypedDict):
    """A folder mapped to a project (`project map|unmap`, and what a mapped ancestor resolves to)."""

    project: str
    root: str


class Mapping(Place):
    """The project of a folder: the mapped folder (`root`), and how it was found (`mapped`, `worktree`, `origin`)."""

    found: str
    via: str | None


class StoreCheck(TypedDict):
    """Whether the configured store can be used, checked without the network."""

    status: str
    detail: str | None
    next: str | None


class StateDamage(TypedDict):
    """A file of agent-memory's own that cannot be read as it writes it (a FIFO, a link, too large): skipped by
    every command and hook, never waited on; `next` removes or moves it."""

    file: str
    problem: str
    next: str


class Outage(TypedDict):
    """The configured bucket's outage: since when it has not answered, when it is tried again, and why."""

    since: str
    until: str
    failures: int
    detail: str
    next: str


class PublicationWaiting(TypedDict):
    """A skill revision waiting for upload, as `status` lists it."""

    name: str | None
    revision: str
    bucket: str
    attempts: int
    last_error: LastError | None


class DamagedNote(TypedDict):
    """A cached note whose fields cannot be used (searched as text, its fields never shown), and why."""

    id: str
    problem: str


class InstalledSkill(TypedDict):
    """A skill folder that agent-memory installed, for one agent: the name and revision its install marker records
    (as the marker holds them), and whether it was edited since."""

    agent: str
    name: object
    revision: object
    path: str
    modified: bool


class Status(TypedDict):
    """`status`: configuration, project, pending uploads, damaged notes, installed skills, hooks, Codex's sandbox."""

    version: str
    config_file: str
    bucket: str | None
    store: StoreCheck
    project: Mapping | None
    project_error: str | None
    last_refresh: str | None
    pending: list[NoteWaiting]
    pending_skills: list[PublicationWaiting]
    damaged: list[Damage]
    damaged_notes: list[DamagedNote]
    damaged_state: list[StateDamage]
    outage: Outage | None
    skipped: list[Skipped]
    gone: list[Gone]
    skills: list[InstalledSkill]
    hooks: list[HookFile]
    codex_sandbox: Consent
    usage: UsageTotals
    sync: SyncSummary


class UsageTotals(TypedDict):
    """`status`'s line on the use of memory over the last `days` days, every project and agent together."""

    days: int
    sessions: int
    sessions_searched: int
    searches: int
    searches_found: int
    saved: int
    read: int


class AgentUse(TypedDict):
    """One agent's use of one project's memory: sessions seen (by the SessionStart hook or a command), those that
    searched and their share (null without sessions), searches and those that found something, notes saved and
    read."""

    agent: str
    sessions: int
    sessions_searched: int
    searched_share: float | None
    searches: int
    searches_found: int
    saved: int
    read: int


class UsageProject(TypedDict):
    """A project's use: the notes this machine holds (setup notes aside), those that no search returned in the
    period, and each agent's use."""

    project: str
    notes: int
    never_returned: int
    agents: list[AgentUse]


class UsageReport(TypedDict):
    """`usage`: the use of memory on this machine over the last `days` days (since `since`), per project."""

    days: int
    since: str
    projects: list[UsageProject]


class View(TypedDict):
    """`view`: the page written (`url`, its folder `out`), the projects in it, how many notes (of them `pending`
    upload, and how many had their Markdown `rendered`; the rest are shown as text), the sync conflicts and the
    items of its health list, and whether a browser was `opened`."""

    url: str
    out: str
    projects: list[str]
    notes: int
    pending: int
    rendered: int
    conflicts: int
    health: int
    opened: bool


class BucketSet(TypedDict):
    """`config set bucket`: the bucket now configured, whether it was created, and the one it replaced."""

    bucket: str
    created: bool
    was: str | None
    unchanged: bool


class OriginClaim(TypedDict, total=False):
    """A claim of a repository's origin in the bucket, or its withdrawal: `state` "recorded", "unchanged",
    "withdrawn", "failed" or "refused" (with `error`), and the other projects that claim the same origin."""

    origin: str
    state: str
    others: list[str]
    error: str


class ProjectMapped(TypedDict):
    """`project map`: the folder mapped, and the claim of its repository's origin in the bucket (None: none)."""

    project: str
    root: str
    origin: OriginClaim | None


class ProjectUnmapped(TypedDict):
    """`project unmap`: the folder no longer mapped, and with `--origin` the withdrawal of its project's claim of
    the repository's origin (`{"origin", "state"}`; None without `--origin`)."""

    project: str
    root: str
    origin: OriginClaim | None


class HookFile(TypedDict, total=False):
    """One runtime's hooks (`hooks install|remove|status`): its file, their state, what the user has to know; after
    a change, whether it `changed` and the `backup` of the previous file."""

    agent: str
    file: str
    state: str
    events: dict[str, str]
    note: str
    changed: bool
    backup: str | None


class Hooks(TypedDict):
    """`hooks install|remove|status`: one entry per runtime."""

    agents: list[HookFile]


class Consent(TypedDict, total=False):
    """`codex-sandbox allow|remove|status`: the consent block in Codex's config.toml, against what saving writes."""

    file: str
    state: str
    roots: list[str]
    network: bool
    missing: list[str]
    next: str | None
    changed: bool
    backup: str | None


class UninstallStep(TypedDict):
    """One step of `uninstall`, in the order it ran: `step` ("command", "codex-sandbox", "hooks", "instructions",
    "skills"), the files or folders it took agent-memory out of (`removed`), the files deleted with it (`deleted`:
    they held nothing else), and the backups of what it changed."""

    step: str
    removed: list[str]
    deleted: list[str]
    backups: list[str]


class Uninstall(TypedDict):
    """`uninstall`: its steps, the folders it kept (the configuration, the cache, the state with the outbox), how
    many uploads it left unsent (`--discard-pending`), the runtimes whose sync of their own memory it turned off
    (`sync_off`), warnings, and whether it changed anything."""

    steps: list[UninstallStep]
    kept: dict[str, str]
    pending: int
    sync_off: list[str]
    warnings: list[str]
    changed: bool


class InstructionsRemoved(TypedDict):
    """`instructions remove`: the files the block was taken out of, those deleted with it, and their backups."""

    removed: list[str]
    deleted: list[str]
    backups: list[str]


class ImportSource(TypedDict):
    """Where `import` looked for memories: the tool's folder, whether it exists, and how many files it holds."""

    tool: str
    path: str
    found: bool
    files: int


class SecretFinding(TypedDict):
    """A credential found in a file (never its value): the line, and the rule that matched."""

    line: int
    rule: str
    label: str


class ImportOutcome(TypedDict):
    """What became of one file of `import` (`action`: new, correction, unchanged, refused, empty), the note it
    became or matches (`id`), and why a refused one was refused."""

    tool: str
    title: str
    action: str
    id: str | None
    corrects: str | None
    status: str | None
    reason: str | None
    findings: list[SecretFinding]


class ImportRow(ImportOutcome):
    """One file of `import`, where it is, and what became of it."""

    path: str
    source: str


class Import(TypedDict):
    """`import`: where memories were looked for, one row per file (what became of it), the counts, and `freshness`."""

    project: str
    dry_run: bool
    sources: list[ImportSource]
    files: list[ImportRow]
    counts: dict[str, int]
    freshness: CacheFreshness


class CommandLink(TypedDict):
    """Where the command `agent-memory` of a login shell comes from (`state`: "on path", "linked", "replaced",
    "unchanged", "other"), the link's target, the link it replaced, what a login shell finds, and a warning."""

    path: str
    target: str
    was: str | None
    warning: str | None
    state: str
    found: str | None


class BootstrapMapping(TypedDict):
    """How bootstrap mapped the folder (`state`: "mapped", "remapped", "unchanged"), and the project it `was`."""

    state: str
    was: str | None


class BootstrapHooks(TypedDict):
    """Whether bootstrap was asked to install the hooks, and each runtime's hooks then."""

    requested: bool
    installed: list[HookFile]


class BootstrapSync(TypedDict):
    """Whether bootstrap was asked to sync the runtimes' own memory, the runtimes synced, and whether it changed."""

    requested: bool
    enabled: list[str]
    changed: bool


class Bootstrap(TypedDict):
    """`bootstrap`: what each step found or changed, the warnings, and the verification (`status` decides the exit
    code)."""

    bucket: str
    bucket_created: bool
    bucket_was: str | None
    project: str
    root: str
    mapping: BootstrapMapping
    found: dict[str, str | None]
    origin: OriginClaim | None
    agents: list[str]
    skill: dict[str, list[str]]
    skills: list[dict[str, str]]
    instructions: list[dict[str, str]]
    backups: list[str]
    hooks: BootstrapHooks
    sync: BootstrapSync
    codex_sandbox: Consent | None
    command: CommandLink | None
    verification: dict[str, str | None]
    warnings: list[str]
    changed: bool

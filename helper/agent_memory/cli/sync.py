"""`agent-memory sync enable|disable|now|status|history|restore`: two-way sync of Claude Code's auto memory and
Codex's memories through the bucket (see `sync/`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import agents, commands
from ..agents import RUNTIMES
from ..config.context import Context
from ..display import plural, safe_tree
from ..errors import OK, PENDING, UsageError
from ..guard import redact
from ..outbox.listing import summary
from ..sync import codex_delivery, restoring, settings
from ..sync import summary as reports
from ..sync.deletions import MAX_DELETES
from ..sync.engine import FolderSync
from ..sync.running import Run, scopes, sync
from ..sync.summary import conflict
from .parsing import Rendered, subcommands, with_json
from .render import notice, told_pending

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncConflict, SyncFolder, SyncFolderState, SyncHistory, SyncRun, SyncStatus, SyncSwitched


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Sync the memory your agents keep themselves (Claude Code's auto memory, per project; Codex's memories, per "
        "machine, which reach the others through Codex's memory extension folder) through the bucket: every change "
        "is a new version, nothing is overwritten or deleted there."
    )
    actions = subcommands(parser)
    for action, summary_line in (("enable", "sync this agent's memory from now on"), ("disable", "stop syncing it")):
        p = with_json(actions.add_parser(action, help=summary_line))
        p.add_argument("--agent", required=True, type=agents.choice, choices=agents.CHOICES)
        p.add_argument(
            "--folder",
            metavar="PATH",
            help=(
                "name a memory folder outside the agent's own folder (one a setting points to): it is synced only "
                "once named"
                if action == "enable"
                else "take back the name of such a folder (it is no longer synced; nothing is deleted)"
            ),
        )
        p.set_defaults(handler=switch)
    p = with_json(actions.add_parser("now", help="push and pull once, both directions"))
    p.add_argument("--agent", type=agents.choice, choices=agents.CHOICES, help="default: every agent synced here")
    p.add_argument(
        "--allow-deletes",
        action="store_true",
        help=f"carry many deletions at once (more than {MAX_DELETES}, or more than half of a folder's files)",
    )
    p.set_defaults(handler=now)
    with_json(actions.add_parser("status", help="what is synced, where, and what needs a decision")).set_defaults(
        handler=status
    )
    p = with_json(actions.add_parser("history", help="every version of a synced file, with its text"))
    p.add_argument("file", metavar="FILE", help="its path in the agent's memory folder (such as MEMORY.md)")
    p.add_argument("--agent", choices=RUNTIMES, help="whose memory (default: the one that has FILE)")
    p.add_argument(
        "--diff",
        nargs="*",
        metavar="ID",
        help="show what changed in place of the texts: alone, each version against the one it was based on; "
        "with two version ids (--diff OLDER NEWER), between those two",
    )
    p.set_defaults(handler=history)
    p = with_json(actions.add_parser("restore", help="bring back a version of a file (pushed as a new version)"))
    p.add_argument("file", metavar="FILE", help="its path in the agent's memory folder")
    p.add_argument("--version", required=True, metavar="ID", help="a version id from sync history")
    p.add_argument("--agent", choices=RUNTIMES, help="whose memory (default: the one that has FILE)")
    p.set_defaults(handler=restore)


def switch(args: argparse.Namespace, ctx: Context) -> Rendered:
    chosen = agents.selected(args.agent)
    ctx.bucket  # noqa: B018 (sync needs a bucket: NotSetUp, with its command, before anything changes)
    on = args.action == "enable"
    if args.folder is not None:
        return _name_folder(args, ctx, chosen, on)
    before = settings.switch(chosen, on)
    ctx.reload()
    enabled = settings.enabled(ctx.config)
    result: SyncSwitched = {
        "enabled": enabled,
        "changed": {name: before[name] != on for name in chosen},
        "folders": settings.folders_named(ctx.config),
    }
    whose = agents.own_memory(args.agent)
    if on:
        text = (
            f"Sync of {whose} is on. It runs at session start and end (with the hooks: "
            f"{commands.line('hooks', 'install')}) and with {commands.line('sync', 'now')}."
        )
    else:
        text = f"Sync of {whose} is off. Nothing was deleted, here or in the bucket."
    return result, text, OK


def _name_folder(args: argparse.Namespace, ctx: Context, chosen: tuple[str, ...], on: bool) -> Rendered:
    """`sync enable|disable --agent A --folder PATH`: name a memory folder outside the agent's own folder for
    sync, or take the name back (sync of the agent itself is left as it is)."""
    folder = os.path.normpath(os.path.abspath(os.path.expanduser(args.folder)))
    if len(chosen) != 1:  # a folder a setting points to is Claude Code's (autoMemoryDirectory)
        action = "enable" if on else "disable"
        again = commands.line("sync", action, "--agent", "claude", "--folder", folder)
        raise UsageError("--folder names the folder of one agent.", next_step=again)
    before = folder in settings.folders_named(ctx.config).get(chosen[0], [])
    named = settings.name_folder(chosen[0], folder, on)
    ctx.reload()
    enabled = settings.enabled(ctx.config)
    result: SyncSwitched = {"enabled": enabled, "changed": {chosen[0]: before != on}, "folders": named}
    whose = agents.own_memory(chosen[0])
    if on:
        text = f"{folder} is synced as {whose} wherever the agent uses it"
        if chosen[0] not in enabled:
            text += f" (once sync is on: {commands.line('sync', 'enable', '--agent', chosen[0])})"
    elif not before:
        text = f"{folder} was not named for {whose}: nothing changed"
    else:
        text = f"{folder} is no longer synced. Nothing was deleted, here or in the bucket"
    return result, text + ".", OK


def now(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.bucket  # noqa: B018
    chosen = list(agents.selected(args.agent)) if args.agent else settings.enabled(ctx.config)
    if not chosen:
        raise UsageError(
            "Sync is not enabled for any agent on this machine.",
            next_step=commands.line("sync", "enable", "--agent", "claude"),
        )
    chosen_scopes = [scope for runtime in chosen for scope in scopes(ctx, runtime)]
    run = sync(ctx, chosen_scopes, push=True, allow_deletes=args.allow_deletes)
    for scope in chosen_scopes:
        for folder in scope.unnamed:
            notice(reports.unnamed_line(scope.runtime, folder, scope.sources.get(folder, "")))
    return told_run(run)


def told_run(run: Run) -> Rendered:
    """A sync's result in words: exit 75 while an upload is pending, else 0."""
    found: SyncRun = {
        "folders": [_folder(done) for done in run.folders],
        "uploads": run.uploads,
        "errors": run.errors,
        "busy": run.busy,
        "refused": run.refused,
    }
    result = safe_tree(found)
    lines = []
    for done in result["folders"]:
        parts = [f"{len(done[key])} {key}" for key in ("pushed", "pulled", "merged") if done[key]]
        parts.append(f"{done['in_step']} in step")
        lines.append(f"{done['agent']} {done['scope']} ({done['folder']}): {', '.join(parts)}")
        for conflict_found in done["conflicts"]:
            notice(_conflict_line(conflict_found))
        for refused in done["refused"]:
            notice(reports.refused_line(refused))
        for blocked in done["blocked"]:
            notice(reports.blocked_line(blocked))
        for line in reports.held_lines(done["held"]):
            notice(line)
        if done["waiting"]:
            notice(f"Changed here meanwhile, synced next time: {', '.join(done['waiting'])}.")
    for upload in result["uploads"]:
        if upload["status"] == "pending":
            notice(told_pending(upload))
    for error in result["errors"]:
        notice(f"The bucket could not be read ({error}): synced with what this machine knows.")
    for from_bucket in result["refused"]:
        notice(f"Refused from the bucket: {from_bucket['path']}: {from_bucket['why']}.")
    for busy in result["busy"]:
        notice(f"{busy} is being synced by another process right now.")
    pending = any(upload["status"] == "pending" for upload in result["uploads"])
    return result, "\n".join(lines) or "Nothing to sync.", PENDING if pending else OK


def _folder(done: FolderSync) -> SyncFolder:
    return {
        "agent": done.runtime,
        "scope": done.scope,
        "folder": str(done.folder),
        "pushed": done.pushed,
        "pulled": done.pulled,
        "merged": done.merged,
        "waiting": done.waiting,
        "conflicts": [conflict(done.runtime, done.scope, done.folder, str(c["path"]), c) for c in done.conflicts],
        "refused": done.refused,
        "blocked": [reports.blocked(done.runtime, done.scope, done.folder, *item) for item in done.blocked.items()],
        "held": [reports.held(done.runtime, done.scope, done.folder, *item) for item in done.held.items()],
        "in_step": done.in_step,
    }


def _conflict_line(item: SyncConflict) -> str:
    kept = ", ".join(item["kept"])
    return (
        f"Conflict: {item['path']} ({item['agent']}) {reports.what_happened(item)}; {reports.keeps(item)}, the "
        f"other is kept in {kept}. Decide by editing the file (or: "
        f"{commands.line('sync', 'restore', item['path'], '--version', 'ID')}); see both: {item['show']}"
    )


def status(args: argparse.Namespace, ctx: Context) -> Rendered:
    bucket = ctx.bucket
    enabled = settings.enabled(ctx.config)
    watched = [
        (scope.runtime, scope.scope, place, scope.sources.get(place, ""), place in scope.places)
        for runtime in enabled
        for scope in scopes(ctx, runtime)
        for place in scope.places + scope.unnamed
    ]
    states = reports.folder_states(bucket, watched)
    found: SyncStatus = {
        "agents": [
            {
                "agent": runtime,
                "enabled": runtime in enabled,
                "folders": [state for state in states if state["agent"] == runtime],
            }
            for runtime in RUNTIMES
        ],
        "pending": summary().get("sync", 0),
    }
    result = safe_tree(found)
    lines = []
    for agent in result["agents"]:
        lines.append(f"{agent['agent']}: {'on' if agent['enabled'] else 'off'}")
        if agent["enabled"] and not agent["folders"]:  # Claude Code's memory is per project
            lines.append(
                "  nothing to sync yet: no project is mapped on this machine "
                f"(map this folder: {commands.line('project', 'map', 'NAME')})"
            )
        for state in agent["folders"]:
            lines += [f"  {line}" for line in _state_lines(state)]
        if agent["agent"] == "codex" and agent["enabled"]:
            lines += codex_delivery.status_lines(bucket)
    if result["pending"]:
        lines.append(f"uploads waiting: {result['pending']} (retry: {commands.line('pending', 'retry')})")
    return result, "\n".join(lines), OK


def _state_lines(state: SyncFolderState) -> list[str]:
    """How `sync status` tells one memory folder: where it is and why, what it holds, and what needs a decision."""
    last = f"last sync {state['last_sync'] or 'never'}"
    last += f"; its place: {state['source']}" if state["source"] else ""
    if not state["synced"]:
        return [reports.unnamed_line(state["agent"], Path(state["folder"]), state["source"])]
    if not state["exists"] and not state["files"]:
        return [
            f"{state['scope']} -> {state['folder']}: nothing here to sync yet: the folder does not exist "
            f"({agents.runtime(state['agent']).LABEL} creates it with its first memory; the next sync brings here "
            f"what other machines pushed), {last}"
        ]
    lines = [
        f"{state['scope']} -> {state['folder']}: {plural(state['files'], 'file')} "
        f"{'recorded (a folder is not synced now: below)' if state['blocked'] else 'in step'}, "
        f"{state['pushed']} pushed, {state['pulled']} pulled, {len(state['conflicts'])} conflicts, {last}"
    ]
    lines += [reports.blocked_line(item) for item in state["blocked"]]
    lines += reports.held_lines(state["held"])
    lines += [_conflict_line(item) for item in state["conflicts"]]
    if state["arrived"]:
        came = "; ".join(f"{item['path']} ({reports.from_where(item)})" for item in state["arrived"])
        lines.append(f"arrived since this machine's last session: {came}")
    return lines


def _one_agent_has(file: str, known: list[restoring.Found]) -> None:
    """UsageError when more than one agent's memory has `file` (`known`: `restoring.find_all`; both keep a
    `MEMORY.md`): the history shown must be the one the user means, never one picked in silence."""
    having = [found.scope.runtime for found in known]
    if len(having) > 1:
        raise UsageError(
            f"Both {' and '.join(agents.own_memory(name) for name in having)} have {file}.",
            next_step=" or ".join(commands.line("sync", "history", file, "--agent", name) for name in having),
        )


def _runtimes(args: argparse.Namespace, ctx: Context) -> list[str]:
    return [args.agent] if args.agent else (settings.enabled(ctx.config) or list(RUNTIMES))


def history(args: argparse.Namespace, ctx: Context) -> Rendered:
    runtimes = _runtimes(args, ctx)
    known = restoring.find_all(ctx, args.file, runtimes)
    if args.agent is None:
        _one_agent_has(args.file, known)
    found = restoring.find(ctx, args.file, runtimes, ask_bucket=True, known=known)
    listed, here, kept = restoring.versions_of(ctx, found)
    left_out = restoring.not_synced(ctx, found)
    diffs = restoring.differences(ctx, found, args.diff) if args.diff is not None else []
    record: SyncHistory = {
        "agent": found.scope.runtime,
        "scope": found.scope.scope,
        "folder": str(found.folder),
        "path": redact(found.path),  # a name holding a token is never shown whole
        "versions": listed,
        "here": here,
        "kept": kept,
        "not_synced": left_out,
        "diffs": diffs,
    }
    result = safe_tree(record)
    lines = [f"{result['path']} in {result['folder']} ({result['agent']} {result['scope']}):"]
    for version in result["versions"]:
        marks = [mark for mark, on in (("current", version["head"]), ("here", version["id"] == here)) if on]
        state = "deleted" if version["deleted"] else "text"
        based = ", ".join(version["bases"]) or "first"
        shown = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"  {version['id']} {version['time']} {version['machine']} {state}, based on {based}{shown}")
        if args.diff is None:
            lines += _indented(version["text"] or [], version["more_lines"])
    for change in result["diffs"]:
        lines.append(f"  changes from {change['older'] or 'no file'} to {change['newer']}:")
        lines += _indented(change["lines"], change["more_lines"]) if change["lines"] else ["      (the same text)"]
    lines += [f"  other text kept (conflict): {path}" for path in kept]
    if found.scope.runtime not in settings.enabled(ctx.config):  # what the bucket holds, from other machines
        off = f"the sync of {agents.own_memory(found.scope.runtime)} is off on this machine"
        told = f"  {off}: these are the versions other machines synced" if listed else f"  no version: {off}"
        lines.append(f"{told} (turn it on: {commands.line('sync', 'enable', '--agent', found.scope.runtime)})")
    elif result["not_synced"]:
        lines.append(f"  not synced: {result['not_synced']}")
    elif not listed:
        lines.append("  no version yet: it is pushed by the next sync")
    return result, "\n".join(lines), OK


def _indented(lines: list[str], more: int) -> list[str]:
    return [f"      {line}" for line in lines] + ([f"      ({plural(more, 'more line')})"] if more else [])


def restore(args: argparse.Namespace, ctx: Context) -> Rendered:
    found = restoring.whose(ctx, args.file, _runtimes(args, ctx), args.version)
    return told_run(restoring.restore(ctx, found, args.version))

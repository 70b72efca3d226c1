"""`agent-memory sync enable|disable|now|status|history|restore`: two-way sync of Claude Code's auto memory and
Codex's memories through the bucket (see `sync/`)."""

from __future__ import annotations

import argparse

from .. import agents, commands
from ..agents import RUNTIMES
from ..config.context import Context
from ..display import plural, safe_tree
from ..errors import OK, PENDING, UsageError
from ..outbox.listing import summary
from ..sync import codex_delivery, restoring, settings
from ..sync import summary as reports
from ..sync.engine import FolderSync
from ..sync.running import Run, scopes, sync
from ..sync.summary import conflict
from .parsing import Rendered, subcommands, with_json
from .render import notice, told_pending

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncFolder, SyncHistory, SyncRun, SyncStatus, SyncSwitched


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
        p.set_defaults(handler=switch)
    p = with_json(actions.add_parser("now", help="push and pull once, both directions"))
    p.add_argument("--agent", type=agents.choice, choices=agents.CHOICES, help="default: every agent synced here")
    p.set_defaults(handler=now)
    with_json(actions.add_parser("status", help="what is synced, where, and what needs a decision")).set_defaults(
        handler=status
    )
    p = with_json(actions.add_parser("history", help="every version of a synced file"))
    p.add_argument("file", metavar="FILE", help="its path in the agent's memory folder (such as MEMORY.md)")
    p.add_argument("--agent", choices=RUNTIMES, help="whose memory (default: the one that has FILE)")
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
    before = settings.switch(chosen, on)
    ctx.reload()
    enabled = settings.enabled(ctx.config)
    result: SyncSwitched = {"enabled": enabled, "changed": {name: before[name] != on for name in chosen}}
    whose = agents.own_memory(args.agent)
    if on:
        text = (
            f"Sync of {whose} is on. It runs at session start and end (with the hooks: "
            f"{commands.line('hooks', 'install')}) and with {commands.line('sync', 'now')}."
        )
    else:
        text = f"Sync of {whose} is off. Nothing was deleted, here or in the bucket."
    return result, text, OK


def now(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.bucket  # noqa: B018
    chosen = list(agents.selected(args.agent)) if args.agent else settings.enabled(ctx.config)
    if not chosen:
        raise UsageError(
            "Sync is not enabled for any agent on this machine.",
            next_step=commands.line("sync", "enable", "--agent", "claude"),
        )
    run = sync(ctx, [scope for runtime in chosen for scope in scopes(ctx, runtime)], push=True)
    return told_run(run)


def told_run(run: Run) -> Rendered:
    """A sync's result in words: exit 75 while an upload is pending, else 0."""
    result: SyncRun = safe_tree(
        {
            "folders": [_folder(done) for done in run.folders],
            "uploads": run.uploads,
            "errors": run.errors,
            "busy": run.busy,
            "refused": run.refused,
        }
    )
    lines = []
    for done in result["folders"]:
        parts = [f"{len(done[key])} {key}" for key in ("pushed", "pulled", "merged") if done[key]]
        parts.append(f"{done['in_step']} in step")
        lines.append(f"{done['agent']} {done['scope']} ({done['folder']}): {', '.join(parts)}")
        for item in done["conflicts"]:
            notice(_conflict_line(item))
        for item in done["refused"]:
            notice(f"Not synced: {item['path']}: {item['why']}.")
        if done["waiting"]:
            notice(f"Changed here meanwhile, synced next time: {', '.join(done['waiting'])}.")
    for upload in result["uploads"]:
        if upload["status"] == "pending":
            notice(told_pending(upload))
    for error in result["errors"]:
        notice(f"The bucket could not be read ({error}): synced with what this machine knows.")
    for item in result["refused"]:
        notice(f"Refused from the bucket: {item['path']}: {item['why']}.")
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
        "conflicts": [conflict(done.runtime, done.scope, done.folder, item["path"], item) for item in done.conflicts],
        "refused": done.refused,
        "in_step": done.in_step,
    }


def _conflict_line(item: dict[str, object]) -> str:
    kept = ", ".join(item["kept"])
    return (
        f"Conflict: {item['path']} ({item['agent']}) was changed here and elsewhere on the same lines; the file keeps "
        f"this machine's text, the other is kept in {kept}. Decide by editing the file (or: "
        f"{commands.line('sync', 'restore', item['path'], '--version', 'ID')}); see both: {item['show']}"
    )


def status(args: argparse.Namespace, ctx: Context) -> Rendered:
    bucket = ctx.bucket
    enabled = settings.enabled(ctx.config)
    watched = [(s.runtime, s.scope, place) for runtime in enabled for s in scopes(ctx, runtime) for place in s.places]
    states = reports.folder_states(bucket, watched)
    result: SyncStatus = safe_tree(
        {
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
    )
    lines = []
    for agent in result["agents"]:
        lines.append(f"{agent['agent']}: {'on' if agent['enabled'] else 'off'}")
        if agent["enabled"] and not agent["folders"]:  # Claude Code's memory is per project
            lines.append(
                "  nothing to sync yet: no project is mapped on this machine "
                f"(map this folder: {commands.line('project', 'map', 'NAME')})"
            )
        for state in agent["folders"]:
            last = f"last sync {state['last_sync'] or 'never'}"
            if not state["exists"] and not state["files"]:
                lines.append(
                    f"  {state['scope']} -> {state['folder']}: nothing here to sync yet: the folder does not exist "
                    f"({agents.runtime(state['agent']).LABEL} creates it with its first memory; the next sync "
                    f"brings here what other machines pushed), {last}"
                )
                continue
            lines.append(
                f"  {state['scope']} -> {state['folder']}: {plural(state['files'], 'file')} in step, "
                f"{state['pushed']} pushed, {state['pulled']} pulled, {len(state['conflicts'])} conflicts, {last}"
            )
            if not state["exists"]:  # a sync reads a folder that is gone as all its files deleted
                lines.append(
                    f"  the folder is gone: the next sync records its {plural(state['files'], 'file')} as deleted, on "
                    "every machine (each version stays in the bucket: "
                    f"{commands.line('sync', 'history', 'FILE', '--agent', state['agent'])})"
                )
            lines += [f"  {_conflict_line(item)}" for item in state["conflicts"]]
        if agent["agent"] == "codex" and agent["enabled"]:
            lines += codex_delivery.status_lines(bucket)
    if result["pending"]:
        lines.append(f"uploads waiting: {result['pending']} (retry: {commands.line('pending', 'retry')})")
    return result, "\n".join(lines), OK


def _runtimes(args: argparse.Namespace, ctx: Context) -> list[str]:
    return [args.agent] if args.agent else (settings.enabled(ctx.config) or list(RUNTIMES))


def history(args: argparse.Namespace, ctx: Context) -> Rendered:
    found = restoring.find(ctx, args.file, _runtimes(args, ctx), ask_bucket=True)
    listed, here, kept = restoring.versions_of(ctx, found)
    result: SyncHistory = safe_tree(
        {
            "agent": found.scope.runtime,
            "scope": found.scope.scope,
            "folder": str(found.folder),
            "path": found.path,
            "versions": listed,
            "here": here,
            "kept": kept,
        }
    )
    lines = [f"{result['path']} in {result['folder']} ({result['agent']} {result['scope']}):"]
    for version in result["versions"]:
        marks = [mark for mark, on in (("current", version["head"]), ("here", version["id"] == here)) if on]
        state = "deleted" if version["deleted"] else "text"
        based = ", ".join(version["bases"]) or "first"
        shown = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"  {version['id']} {version['time']} {version['machine']} {state}, based on {based}{shown}")
    lines += [f"  other text kept (conflict): {path}" for path in kept]
    if found.scope.runtime not in settings.enabled(ctx.config):  # what the bucket holds, from other machines
        off = f"the sync of {agents.own_memory(found.scope.runtime)} is off on this machine"
        told = f"  {off}: these are the versions other machines synced" if listed else f"  no version: {off}"
        lines.append(f"{told} (turn it on: {commands.line('sync', 'enable', '--agent', found.scope.runtime)})")
    elif not listed:
        lines.append("  no version yet: it is pushed by the next sync")
    return result, "\n".join(lines), OK


def restore(args: argparse.Namespace, ctx: Context) -> Rendered:
    found = restoring.find(ctx, args.file, _runtimes(args, ctx))
    return told_run(restoring.restore(ctx, found, args.version))

"""`agent-memory status`: configuration, project, pending uploads, installed skills, hooks and Codex's sandbox."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..config.projects import how_found
from ..display import plural
from ..errors import ACCESS, OK
from ..errors import render as error_lines
from ..report.status import status
from ..setup.sandbox_consent_read import in_words as sandbox_lines
from .parsing import Rendered, with_json
from .render import notice

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Mapping, StoreCheck, SyncSummary, UsageTotals


def declare(p: argparse.ArgumentParser) -> None:
    with_json(p)


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = status(ctx)
    project = result["project"]
    unset = f"(not set: run {commands.line('bootstrap')})"
    lines = [
        f"agent-memory {result['version']}",
        f"config file: {result['config_file']}",
        f"bucket: {result['bucket'] or unset}",
        *_store_lines(result["store"]),
        f"project: {_project_line(project) if project else result['project_error']}",
        f"last refresh: {result['last_refresh'] or 'never'}",
        f"pending uploads: {len(result['pending'])}",
    ]
    for entry in result["pending"]:
        error = entry["last_error"]
        lines.append(
            f"  {entry['id']} -> {entry['bucket']}/{entry['path']}, {entry['age_seconds']} s old, "
            f"{plural(entry['attempts'], 'attempt')}, "
            f"last error: {error.get('reason', '-') if error else '-'}: {error.get('detail', '-') if error else '-'}"
        )
    for manifest in result["pending_skills"]:
        lines.append(f"  skill {manifest['name']} revision {manifest['revision']}: publication pending")
    for item in result["damaged"]:
        lines.append(f"  DAMAGED {item['kind']} {item['id']}: {item['problem']} (see agent-memory pending)")
    if result["damaged_notes"]:
        lines.append(f"damaged notes (searched as text, their fields not shown): {len(result['damaged_notes'])}")
        lines += [f"  DAMAGED note {item['id']}: {item['problem']}" for item in result["damaged_notes"]]
    if result["outage"]:
        outage = result["outage"]
        lines.append(
            f"bucket not answering since {outage['since']} ({outage['detail']}); tried again from "
            f"{outage['until']}, or now with: {outage['next']}"
        )
    for state in result["damaged_state"]:
        lines.append(f"  DAMAGED {state['problem']}: skipped by every command and hook")
        lines.append(f"    Next: {state['next']}")
    lines.append(f"installed skills: {len(result['skills'])}")
    for skill in result["skills"]:
        edited = " (edited locally)" if skill["modified"] else ""
        revision = skill["revision"] or "package"
        lines.append(f"  {skill['agent']}: {skill['name']} @ {revision}{edited} in {skill['path']}")
    lines += [f"hooks ({h['agent']}): {h['note']}" for h in result["hooks"]]
    lines.append(_usage_line(result["usage"]))
    lines += _sync_lines(result["sync"])
    lines += sandbox_lines(result["codex_sandbox"]) if result["codex_sandbox"]["state"] != "not allowed" else []
    if result["store"]["status"] == "refused":  # as every command that uses the store would: exit 4
        notice(error_lines(result["store"]["detail"] or "", result["store"]["next"] or ""))  # (refused: both set)
        return result, "\n".join(lines), ACCESS
    return result, "\n".join(lines), OK


def _usage_line(use: UsageTotals) -> str:
    return (
        f"usage (last {use['days']} days, this machine): {plural(use['sessions'], 'session')}, "
        f"{use['sessions_searched']} searched memory; {plural(use['searches'], 'search', 'searches')}, "
        f"{use['searches_found']} found something; {use['saved']} saved, {use['read']} read "
        f"(details: {commands.line('usage')})"
    )


def _sync_lines(found: SyncSummary) -> list[str]:
    if not (found["enabled"] or found["pending"] or found["conflicts"] or found["blocked"] or found["held"]):
        return []
    synced = ", ".join(found["enabled"]) or "off"
    lines = [f"sync of the agents' own memory: {synced}, {found['pending']} uploads waiting"]
    for item in found["conflicts"]:  # the same file in two checkouts of a project: one line
        line = f"  CONFLICT {item['agent']} {item['path']} needs a decision: {item['show']}"
        lines += [] if line in lines else [line]
    if found["blocked"] or found["held"]:
        from ..sync.summary import blocked_line, held_lines  # only where a folder or a deletion needs a decision

        lines += [f"  {blocked_line(item)}" for item in found["blocked"]]
        lines += [f"  {line}" for line in held_lines(found["held"])]
    return lines


def _project_line(project: Mapping) -> str:
    line = f"{project['project']} ({project['root']})"
    return line if project["found"] == "mapped" else f"{line}, found as {how_found(project)}"


def _store_lines(store: StoreCheck) -> list[str]:
    if store["status"] in ("ok", "not set"):
        return [f"store: {store['status']}"] if store["status"] == "ok" else []
    if store["status"] == "not checked":
        return [f"store: not checked ({store['detail']})"]
    return [f"store: {str(store['status']).upper()}: {store['detail']}", f"  Next: {store['next']}"]

"""The view's picture: notes per week by agent and by machine, and searches per week (from the receipts of use), as
inline SVG drawn here (bars are rectangles: no chart library, no script, no style attribute)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import date, datetime, timedelta, timezone

from .sources import Note

WEEKS = 26  # the weeks drawn, up to the newest one with anything in it
SERIES = 6  # series drawn apart; the rest are added up as "others"
WIDTH, HEIGHT = 720, 160


@functools.lru_cache(maxsize=4096)  # by day: 50,000 notes are written on a few hundred days
def week_of(day: str) -> date | None:
    """The Monday of the week of a day (`YYYY-MM-DD`, the start of a `created` time), None if it is not one."""
    try:
        found = date.fromisoformat(day)
    except ValueError:
        return None
    return found - timedelta(days=found.weekday())


def charts(notes: Iterable[Note], searches: list[int]) -> list[dict[str, object]]:
    """The three charts, each `{"title", "label", "weeks", "bars", "legend", "max"}` ready for the template."""
    by_agent: list[tuple[date, str]] = []
    by_machine: list[tuple[date, str]] = []
    for note in notes:
        week = week_of((note.fields.get("created") or "")[:10])
        if week is not None and not note.setup:
            by_agent.append((week, note.fields.get("agent") or "unknown"))
            by_machine.append((week, note.fields.get("machine") or "unknown"))
    searched = [(week_of(datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d")), "searches") for t in searches]
    counted = [(week, name) for week, name in searched if week is not None]
    today = week_of(datetime.now(timezone.utc).strftime("%Y-%m-%d"))
    newest = max((week for week, _ in by_agent + counted), default=today)
    weeks = [newest - timedelta(weeks=back) for back in range(WEEKS - 1, -1, -1)] if newest else []
    return [
        _chart("Notes per week by agent", weeks, by_agent),
        _chart("Notes per week by machine", weeks, by_machine),
        _chart("Searches per week on this machine", weeks, counted),
    ]


def _chart(title: str, weeks: list[date], points: list[tuple[date, str]]) -> dict[str, object]:
    totals: dict[str, int] = {}
    for week, name in points:
        if weeks and week >= weeks[0]:
            totals[name] = totals.get(name, 0) + 1
    names = sorted(totals, key=lambda name: (-totals[name], name))
    drawn = names[:SERIES]
    counts = {(week, name if name in drawn else "others"): 0 for week in weeks for name in [*drawn, "others"]}
    for week, name in points:
        key = (week, name if name in drawn else "others")
        if key in counts:
            counts[key] += 1
    series = drawn + (["others"] if len(names) > SERIES else [])
    tallest = max((sum(counts[(week, name)] for name in series) for week in weeks), default=0) or 1
    step = WIDTH / max(len(weeks), 1)
    bars = []
    for index, week in enumerate(weeks):
        y: float = HEIGHT
        for number, name in enumerate(series):
            count = counts[(week, name)]
            if not count:
                continue
            height = count / tallest * (HEIGHT - 10)
            y -= height
            bars.append(
                {
                    "x": round(index * step + 1, 1),
                    "y": round(y, 1),
                    "width": round(step - 2, 1),
                    "height": round(height, 1),
                    "series": number,
                    "tip": f"week of {week.isoformat()}: {count} {name}",
                }
            )
    legend = [{"name": name, "series": number, "total": totals.get(name, 0)} for number, name in enumerate(series)]
    if "others" in series:
        legend[-1]["total"] = sum(totals[name] for name in names[SERIES:])
    summary = ", ".join(f"{item['name']} {item['total']}" for item in legend) or "nothing yet"
    return {
        "title": title,
        "label": f"{title}, the {len(weeks)} weeks to {weeks[-1].isoformat() if weeks else '-'}: {summary}",
        "first": weeks[0].isoformat() if weeks else "",
        "last": weeks[-1].isoformat() if weeks else "",
        "bars": bars,
        "legend": legend,
        "max": tallest,
        "width": WIDTH,
        "height": HEIGHT,
    }

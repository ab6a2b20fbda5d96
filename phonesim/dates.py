"""Shared date facts for every app: the simulated today (it matches the status-bar date
"Mon, Mar 4") and how dates and times are shown and read back from text fields (same parsers
as the typed answers)."""

from __future__ import annotations

from datetime import date, timedelta

from phonesim.answers import parse_dates, parse_times

TODAY = date(2024, 3, 4)  # system date "Mon, Mar 4" (phonesim/system.py)


def day(offset: int) -> str:
    """ISO date `offset` days from today."""
    return (TODAY + timedelta(days=offset)).isoformat()


def long_date(iso: str) -> str:
    """'Tuesday, March 5, 2024' (detail screens; parseable by the date answer matcher)."""
    d = date.fromisoformat(iso)
    return f"{d:%A}, {d:%B} {d.day}, {d.year}"


def short_date(iso: str) -> str:
    """'Tue, Mar 5' (list rows)."""
    d = date.fromisoformat(iso)
    return f"{d:%a}, {d:%b} {d.day}"


def month_day_year(iso: str) -> str:
    """'Mar 5, 2024' (expenses, notes and files rows)."""
    d = date.fromisoformat(iso)
    return f"{d:%b} {d.day}, {d.year}"


def read_date(text: str) -> str | None:
    """ISO date typed into a date field ('2024-03-05', 'March 5, 2024', '3/5/2024'), or None."""
    found = parse_dates(text)
    return found.pop().isoformat() if len(found) == 1 else None


def read_time(text: str) -> str | None:
    """'HH:MM' typed into a time field ('14:30', '2:30 pm', '7:05'), or None."""
    found = parse_times(text)
    if len(found) != 1:
        return None
    m = found.pop()
    return f"{m // 60:02d}:{m % 60:02d}"


def minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def hhmm(total: int) -> str:
    total %= 24 * 60
    return f"{total // 60:02d}:{total % 60:02d}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 event', '3 events', '3 matches' (list headers; task evidence uses the same text)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"

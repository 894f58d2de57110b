"""Full-moon dates from the mean synodic month (29.530588 days). Fix for #412: parse dates as UTC."""
from datetime import datetime, timedelta, timezone

SYNODIC_MONTH = 29.530588
NEW_MOON = datetime(2000, 1, 6, 18, 14, tzinfo=timezone.utc)


def full_moons(start, count):
    k = int((start - NEW_MOON).total_seconds() / 86400 / SYNODIC_MONTH)
    return [NEW_MOON + timedelta(days=(k + i + 0.5) * SYNODIC_MONTH) for i in range(count)]

"""Build runs and pipeline metrics: throughput per day, duration and memories per run,
and each pipeline stage's latency, as charts over the core's aggregates."""

from __future__ import annotations

from collections import Counter

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from axiom.observability.build_report import BuildReport, collect_build_report
from config.stores import get_database
from viewer.charts import bar_chart, fill_days

RUNS = 50


def _charts(report: BuildReport) -> dict[str, str]:
    per_day: Counter = Counter()
    for day, _status, n in report.per_day:
        per_day[day] += n
    oldest_first = list(reversed(report.runs))
    durations = [
        (r.started_at.strftime("%Y-%m-%d %H:%M"), (r.duration_ms or 0) / 1000) for r in oldest_first
    ]
    produced = [
        (r.started_at.strftime("%Y-%m-%d %H:%M"), float(report.entries_by_build.get(r.build_id, 0)))
        for r in oldest_first
    ]
    return {
        "per_day": bar_chart(
            fill_days(sorted(per_day.items())), title="Build runs per day", unit="runs"
        ),
        "durations": bar_chart(
            durations, title=f"Duration of the last {len(durations)} runs", unit="s"
        ),
        "produced": bar_chart(produced, title="Memories produced per run", unit="memories"),
        "stages": bar_chart(
            [(s.stage, s.p50_ms) for s in report.stages],
            title="Median latency per pipeline stage",
            unit="ms",
        ),
    }


def build_list(request: HttpRequest) -> HttpResponse:
    with get_database().read() as conn:
        report = collect_build_report(conn, RUNS)
    context = {"report": report, "charts": _charts(report)}
    return render(request, "viewer/builds.html", context)

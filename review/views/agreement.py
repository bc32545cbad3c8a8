"""The agreement page of a project: the latest report's figures, the rater-pair heat map, alpha over time,
the most contested items, downloads; coordinators compute a new report from here.

Everything is drawn on the server (an HTML table for the heat map, inline SVG
for the chart); no script beyond htmx, which polls a running report's status.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import ProjectAccess, get_project_for_user
from annotation.models import Membership, Project, QAItem, Role
from common.csv_safety import csv_writer
from common.requests import SignedInRequest
from review import reports
from review.models import AgreementReport

HISTORY_SHOWN = 20
CHART = {"width": 640, "height": 220, "left": 44, "right": 12, "top": 12, "bottom": 28}
SERIES_CLASSES = 8  # series-0 .. series-7 in agreement.css


@login_required
@vary_on_headers("HX-Request")
def agreement(request: SignedInRequest, slug: str, report_id: int | None = None) -> HttpResponse:
    access: ProjectAccess
    report: AgreementReport | None
    if report_id is None:
        access = reports.agreement_access(request.user, slug)
        report = reports.latest_done_report(access.project)
    else:
        access, report = reports.get_report_for_user(request.user, slug, report_id)
    project, membership = access.project, access.membership
    active = AgreementReport.objects.active().filter(project=project).first()
    if request.htmx and request.GET.get("status"):
        response = render(
            request, "review/agreement.html#status", {"project": project, "membership": membership, "active": active}
        )
        if active is None:
            response["HX-Refresh"] = "true"  # the report is done: show its figures
        return response
    context = {
        "project": project,
        "membership": membership,
        "report": report,
        "active": active,
        "scopes": _scopes(project, membership, report) if report is not None else [],
        "chart": history_chart(reports.history_points(project)),
        "history": reports.reports_for_project(project)[:HISTORY_SHOWN],
        "sees_raters": reports.sees_rater_names(membership),
        "auto_after": reports.auto_after_judgments(),
    }
    return render(request, "review/agreement.html", context)


@login_required
@require_POST
def agreement_compute(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    report, created = reports.agreement_report_request(
        project=project, user=request.user, trigger=AgreementReport.Trigger.PAGE
    )
    if created:
        messages.success(request, f"Agreement report {report.pk} queued; this page shows its progress.")
    else:
        messages.info(request, f"Report {report.pk} is already {report.status_words.lower()}.")
    return redirect("agreement", project.slug)


@login_required
@require_GET
def agreement_download(request: SignedInRequest, slug: str, report_id: int, fmt: str) -> HttpResponse:
    access, report = reports.get_report_for_user(request.user, slug, report_id)
    if not report.is_done:
        raise Http404("This report has no figures yet.")
    result = reports.result_for_viewer(report.result, access.membership)
    if fmt == "json":
        body = {"report_id": report.pk, "same_as": report.same_as_id, **result}
        response = HttpResponse(json.dumps(body, indent=2, ensure_ascii=False), content_type="application/json")
    elif fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        csv_writer(response).writerows(reports.report_csv_rows(result))
    else:
        raise Http404("Download as json or csv.")
    response["Content-Disposition"] = f'attachment; filename="agreement-{slug}-{report.pk}.{fmt}"'
    return response


# What the template draws


def heat_class(value: float | None) -> str:
    """A CSS class of the heat scale: heat-0 (no agreement or worse) .. heat-10 (perfect), heat-na, heat-neg."""
    if value is None:
        return "heat-na"
    if value < 0:
        return "heat-neg"
    return f"heat-{min(10, int(value * 10))}"


def _link(project: Project, membership: Membership, scope: dict[str, Any], unit: dict[str, Any]) -> str | None:
    if "item_id" in unit:
        return reverse("item_history", args=[project.slug, unit["item_id"]])
    if "pair_id" in unit and membership.is_coordinator:
        name = "pair_labels" if scope["kind"] == "label" else "pair_detail"
        return reverse(name, args=[project.slug, unit["pair_id"]])
    return None


def _scopes(project: Project, membership: Membership, report: AgreementReport) -> list[dict[str, Any]]:
    result = reports.result_for_viewer(report.result, membership)
    item_ids = {
        unit["item_id"]
        for scope in result.get("scopes", {}).values()
        for unit in scope["summary"].get("contested_units", [])
        if "item_id" in unit
    }
    questions = dict(QAItem.objects.filter(project=project, pk__in=item_ids).values_list("pk", "question"))
    scopes = []
    for key, scope in reports.ordered_scopes(result):
        summary = scope["summary"]
        raters = summary.get("raters", [])
        matrix = summary.get("matrices", {}).get("cohen_kappa", [])
        heat = [
            {"rater": rater, "cells": [{"value": value, "css": heat_class(value)} for value in row]}
            for rater, row in zip(raters, matrix, strict=False)
        ]
        contested = [
            {
                **unit,
                "link": _link(project, membership, scope, unit),
                "question": questions.get(unit.get("item_id"), ""),
            }
            for unit in summary.get("contested_units", [])
        ]
        scopes.append(
            {
                "key": key,
                "anchor": key.replace(":", "-"),
                "label": scope["label"],
                "kind": scope["kind"],
                "unit": scope["unit"],
                "notes": [*scope.get("notes", []), *summary.get("notes", [])],
                "figures": scope.get("figures", []),
                "summary": summary,
                "statistics": list(summary["statistics"].values()),
                "raters": raters,
                "heat": heat,
                "contested": contested,
                "strata": scope.get("strata", {}),
            }
        )
    return scopes


def history_chart(points: list[tuple[int, Any, dict[str, Any]]]) -> dict[str, Any] | None:
    """Alpha per scope over the reports, as SVG coordinates: one point per report, one line per scope."""
    labels: dict[str, str] = {}
    for _, _, headline in points:
        for key, figures in headline.items():
            if figures.get("alpha") is not None:
                labels.setdefault(key, figures.get("label", key))
    keys = {key: labels[key] for key in sorted(labels, key=reports.scope_rank)}
    if not keys:
        return None
    values = [h[k]["alpha"] for _, _, h in points for k in keys if k in h and h[k].get("alpha") is not None]
    low = min(0.0, float(min(values)))
    width, height = CHART["width"], CHART["height"]
    left, right, top, bottom = CHART["left"], CHART["right"], CHART["top"], CHART["bottom"]
    plot_width, plot_height = width - left - right, height - top - bottom

    def x(index: int) -> float:
        if len(points) == 1:
            return left + plot_width / 2
        return round(left + index * plot_width / (len(points) - 1), 1)

    def y(value: float) -> float:
        return round(top + (1.0 - value) * plot_height / (1.0 - low), 1)

    series = []
    for number, (key, label) in enumerate(keys.items()):
        dots = []
        for index, (report_id, finished_at, headline) in enumerate(points):
            alpha = headline.get(key, {}).get("alpha")
            if alpha is None:
                continue
            when = finished_at.strftime("%Y-%m-%d %H:%M") if finished_at else ""
            dots.append({"x": x(index), "y": y(alpha), "title": f"{label}: {alpha:.3f} (report {report_id}, {when})"})
        series.append(
            {
                "key": key,
                "label": label,
                "css": f"series-{number % SERIES_CLASSES}",
                "points": " ".join(f"{dot['x']},{dot['y']}" for dot in dots),
                "dots": dots,
            }
        )
    ticks = sorted({low, 0.0, 0.5, 0.8, 1.0})
    return {
        **CHART,
        "plot_right": width - right,
        "plot_bottom": height - bottom,
        "series": series,
        "ticks": [{"value": tick, "y": y(tick)} for tick in ticks],
        "first": points[0][1],
        "last": points[-1][1],
        "n": len(points),
    }

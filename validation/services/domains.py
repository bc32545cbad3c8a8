"""Source domains and their reliability labels."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource
from annotation.models import Project
from audit import services as audit
from audit.models import Action, AuditEvent
from common.errors import InvalidInput, InvalidState
from validation.importers import (
    read_domain_rows,
)
from validation.models import (
    DomainLabel,
    SourceDomain,
    ValidationItem,
)
from validation.text import domain_of


def source_domain_label(*, project: Project, domain: str, label: str, user: User | None, origin: str) -> SourceDomain:
    """Label a domain once per project; a second label for the same domain is refused."""
    if label not in DomainLabel.values:
        raise InvalidInput(f"label: use one of {', '.join(DomainLabel.values)}.", field="label")
    host = domain_of(domain)
    if not host:
        raise InvalidInput("domain: not a host name.", field="domain")
    try:
        with transaction.atomic():
            labelled = SourceDomain.objects.create(
                project=project, domain=host, label=label, origin=origin, labelled_by=user
            )
            audit.record(
                user, Action.VALIDATION_DOMAIN_LABELLED, labelled, project=project, reliability=label, origin=origin
            )
            return labelled
    except IntegrityError:
        current = SourceDomain.objects.get(project=project, domain=host)
        raise InvalidState(
            f"{host} is already labelled {current.get_label_display().lower()} in this project.", field="domain"
        ) from None


def source_domain_relabel(
    *, project: Project, domain: str, label: str, user: User | None, note: str = ""
) -> SourceDomain:
    """A coordinator changes a domain's label (it decides what releases leave out). The row holds the current
    label, who set it and when; every label before stays in the audit log (`source_domain_history`)."""
    if label not in DomainLabel.values:
        raise InvalidInput(f"label: choose one of {', '.join(DomainLabel.values)}.", field="label")
    host = domain_of(domain)
    with transaction.atomic():
        current = SourceDomain.objects.select_for_update().filter(project=project, domain=host).first()
        if current is None:
            raise InvalidState(f"{host or domain!r} has no label in this project yet: label it first.", field="domain")
        if current.label == label:
            raise InvalidState(f"{host} is already labelled {current.get_label_display().lower()}.", field="label")
        before = current.label
        current.label, current.origin = label, SourceDomain.Origin.COORDINATOR
        current.labelled_by, current.labelled_at = user, timezone.now()
        current.save(update_fields=["label", "origin", "labelled_by", "labelled_at"])
        audit.record(
            user,
            Action.VALIDATION_DOMAIN_RELABELLED,
            current,
            project=project,
            before=before,
            reliability=label,
            note=note.strip()[:500],
        )
    return current


def source_domain_history(domains: list[SourceDomain]) -> dict[int, list[dict[str, Any]]]:
    """Every label each domain had, newest first — the first labelling and each change, from the audit log (one
    query for them all): {domain row id: [{label, before, by, at, note}]}."""
    history: dict[int, list[dict[str, Any]]] = {domain.pk: [] for domain in domains}
    if not domains:
        return history
    events = AuditEvent.objects.filter(
        project_id=domains[0].project_id,
        object_type="sourcedomain",
        object_id__in=list(history),
        action__in=[Action.VALIDATION_DOMAIN_LABELLED, Action.VALIDATION_DOMAIN_RELABELLED],
    ).select_related("actor")
    for event in events:
        label, before = event.details.get("reliability", ""), event.details.get("before")
        history[int(event.object_id or 0)].append(
            {
                "label": label,
                "before": before,
                "label_words": _words(label),
                "before_words": _words(before) if before else None,
                "by": event.actor.username if event.actor else None,
                "at": event.created_at,
                "note": event.details.get("note", ""),
            }
        )
    return history


def _words(label: str) -> str:
    return str(DomainLabel(label).label) if label in DomainLabel.values else label


def source_domains_import(*, project: Project, source: ImportSource, user: User | None) -> ImportReport:
    """Import already-judged domains (`base_url,label`): unlabelled domains get the label; labelled ones keep theirs."""
    report = ImportReport()
    rows = read_domain_rows(source, report)
    if not report.ok:
        return report
    labelled = set(SourceDomain.objects.filter(project=project).values_list("domain", flat=True))
    new: dict[str, str] = {}
    for domain, label in rows:
        if domain in labelled or domain in new:
            report.already_present += 1
        else:
            new[domain] = label
    now = timezone.now()
    with transaction.atomic():
        SourceDomain.objects.bulk_create(
            [
                SourceDomain(
                    project=project,
                    domain=domain,
                    label=label,
                    origin=SourceDomain.Origin.IMPORTED,
                    labelled_by=user,
                    labelled_at=now,
                )
                for domain, label in new.items()
            ],
            ignore_conflicts=True,
        )
    report.created = len(new)
    items = ValidationItem.objects.filter(project=project, domain__in=list(new))
    report.counts = {"items_labelled": {label: 0 for label in set(new.values())}}
    for domain in items.values_list("domain", flat=True):
        report.counts["items_labelled"][new[domain]] += 1
    return report


def domain_labels(project: Project) -> dict[str, SourceDomain]:
    return {row.domain: row for row in SourceDomain.objects.filter(project=project)}

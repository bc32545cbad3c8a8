"""Source domains and their reliability labels."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource
from annotation.models import Project
from audit import services as audit
from audit.models import Action
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

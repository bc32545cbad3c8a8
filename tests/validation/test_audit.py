"""Validation services write the audit log (audit.record) in the transaction of their change."""

from __future__ import annotations

import pytest

from audit.models import Action, AuditEvent
from common.errors import InvalidState
from validation import services
from validation.models import SourceDomain


def test_merges_final_answers_domain_labels_and_seed_queries_are_audited(imported, coordinator):
    group = services.duplicate_groups(imported)[0]
    keep, duplicate = group["keep"], group["duplicates"][0]

    services.validation_item_merge(project=imported, keep=keep, duplicate=duplicate, user=coordinator)
    services.validation_final_answer_choose(vitem=keep, revision_number=1, user=coordinator, note="as imported")
    services.source_domain_label(
        project=imported,
        domain="https://www.kaleijy.com/x",
        label="not_sure",
        user=coordinator,
        origin=SourceDomain.Origin.COORDINATOR,
    )
    services.seed_query_create(project=imported, topic="food", query="Best [LOCATION] food?", user=coordinator)
    services.validation_settings_update(project=imported, location="Doha", user=coordinator)

    events = {event.action: event for event in AuditEvent.objects.filter(project=imported, actor=coordinator)}
    merged = events[Action.VALIDATION_MERGED]
    assert (merged.object_type, merged.object_id, merged.details) == (
        "item",
        duplicate.item_id,
        {"merged_into": keep.item_id},
    )
    final = events[Action.VALIDATION_FINAL_ANSWER]
    assert (final.object_id, final.details["revision"], final.details["note"]) == (keep.item_id, 1, "as imported")
    assert events[Action.VALIDATION_DOMAIN_LABELLED].details == {"reliability": "not_sure", "origin": "coordinator"}
    assert events[Action.VALIDATION_SEED_ADDED].object_label == "Best [LOCATION] food?"
    assert events[Action.PROJECT_SETTINGS].details["validation"]["location"] == "Doha"


def test_a_refused_label_writes_no_audit_record(imported, coordinator):
    services.source_domain_label(
        project=imported, domain="a.org", label="not_sure", user=coordinator, origin="coordinator"
    )

    with pytest.raises(InvalidState, match="already labelled"):
        services.source_domain_label(
            project=imported, domain="a.org", label="very_reliable", user=coordinator, origin="coordinator"
        )

    assert AuditEvent.objects.filter(action=Action.VALIDATION_DOMAIN_LABELLED).count() == 1

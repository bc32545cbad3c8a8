"""Business rules of validation projects. Views, the API and tests call these functions.

Reused, not copied: projects, members and roles (`annotation.services`), QA
items and their revisions (`annotation.models.QAItem`/`QAItemRevision`), the
review queue with N blind slots per item (`annotation.lifecycle.items_route`,
`review_claim_next`, `review_release`), the answer diff (`review.history.text_diff`),
the agreement statistics (`review.agreement.agreement_summary`) and the import
report (`annotation.importers.report.ImportReport`).

One module per concern; this package names them all, so callers write `services.<name>`.
"""

from __future__ import annotations

from exports.splits import split_sizes  # the one split-size rule of every kind's release
from validation.services.aggregates import (
    judgment_record,
    judgments_aggregate,
    validation_agreement,
)
from validation.services.domains import (
    domain_labels,
    source_domain_history,
    source_domain_label,
    source_domain_relabel,
    source_domains_import,
)
from validation.services.duplicates import (
    MERGE_ALL,
    MERGE_EXACT,
    duplicate_groups,
    validation_duplicates_merge_all,
    validation_item_merge,
)
from validation.services.final_answer import (
    final_answer_record,
    final_answers,
    validation_final_answer_choose,
)
from validation.services.imports import (
    DOMAINS,
    NO_SOURCE_TITLE,
    SEEDS,
    UPLOAD_IMPORTER,
    ListImportReport,
    seed_queries_import_start,
    source_domains_import_start,
    validation_import_jobs,
    validation_items_import,
)
from validation.services.judging import (
    better_answer_options,
    task_context,
    validation_claim_next,
    validation_routing,
    validation_skip,
    validation_submit,
    validation_waiting_count,
)
from validation.services.listing import (
    attach_domain_labels,
    item_detail_context,
    validation_items_filtered,
)
from validation.services.projects import (
    validation_project_create,
    validation_settings,
    validation_settings_update,
)
from validation.services.releasing import (
    ReleasePlan,
    assign_splits,
    leave_out_reason,
    validation_release_plan,
    validation_release_units,
)
from validation.services.seeds import (
    LOCATION_PLACEHOLDER,
    MAX_LOCATIONS,
    SeedReport,
    expand_templates,
    location_forms,
    location_save,
    seed_queries_add,
    seed_queries_csv,
    seed_queries_import,
    seed_query_create,
)

__all__ = [
    "DOMAINS",
    "LOCATION_PLACEHOLDER",
    "MAX_LOCATIONS",
    "MERGE_ALL",
    "MERGE_EXACT",
    "NO_SOURCE_TITLE",
    "SEEDS",
    "UPLOAD_IMPORTER",
    "ListImportReport",
    "ReleasePlan",
    "SeedReport",
    "assign_splits",
    "attach_domain_labels",
    "better_answer_options",
    "domain_labels",
    "duplicate_groups",
    "expand_templates",
    "final_answer_record",
    "final_answers",
    "item_detail_context",
    "judgment_record",
    "judgments_aggregate",
    "leave_out_reason",
    "location_forms",
    "location_save",
    "seed_queries_add",
    "seed_queries_csv",
    "seed_queries_import",
    "seed_queries_import_start",
    "seed_query_create",
    "source_domain_history",
    "source_domain_label",
    "source_domain_relabel",
    "source_domains_import",
    "source_domains_import_start",
    "split_sizes",
    "task_context",
    "validation_agreement",
    "validation_claim_next",
    "validation_duplicates_merge_all",
    "validation_final_answer_choose",
    "validation_import_jobs",
    "validation_item_merge",
    "validation_items_filtered",
    "validation_items_import",
    "validation_project_create",
    "validation_release_plan",
    "validation_release_units",
    "validation_routing",
    "validation_settings",
    "validation_settings_update",
    "validation_skip",
    "validation_submit",
    "validation_waiting_count",
]

"""Business rules of trivia projects, one module per concern. Views, the API, the release writer and tests call
these functions.

Reused, not copied (as validation projects do): projects, members and roles
(`annotation.services`), the access rule (`annotation.access`), QA items and
their revisions (`annotation.models.QAItem` / `QAItemRevision`, the candidates in
the revision's `content`), the review queue, claims and judgments per criterion
(`annotation.lifecycle.items_route`, `review_claim_next`, `review_claim`,
`review_submit`, `qa_item_reject`), whose judgments the agreement reports read;
the claim pattern of the annotator's queue for the translators' queue
(FOR UPDATE SKIP LOCKED, then a conditional update) and the error types
(`common.errors`).

Callers import from the concern's module (`from multichoice.services.items import trivia_item_create`). The
names below are the ones the trivia pages (multichoice/views.py) call as `services.<name>` beside view functions
of the same name; nothing else is re-exported.
"""

from __future__ import annotations

from multichoice.services.balance import trivia_balance, trivia_targets_set
from multichoice.services.files import (
    trivia_export_csv,
    trivia_export_jsonl,
    trivia_import_undo,
    trivia_imports,
    trivia_record,
)
from multichoice.services.items import trivia_counts, trivia_item_rewrite, trivia_item_submit, trivia_items
from multichoice.services.projects import trivia_project_create, trivia_settings, trivia_settings_update
from multichoice.services.reviews import trivia_may_review, trivia_review, trivia_review_next, trivia_reviews
from multichoice.services.translation import (
    translation_claim_next,
    translation_resolve,
    translation_send_back,
    translation_submit,
)

__all__ = [
    "translation_claim_next",
    "translation_resolve",
    "translation_send_back",
    "translation_submit",
    "trivia_balance",
    "trivia_counts",
    "trivia_export_csv",
    "trivia_export_jsonl",
    "trivia_import_undo",
    "trivia_imports",
    "trivia_item_rewrite",
    "trivia_item_submit",
    "trivia_items",
    "trivia_may_review",
    "trivia_project_create",
    "trivia_record",
    "trivia_review",
    "trivia_review_next",
    "trivia_reviews",
    "trivia_settings",
    "trivia_settings_update",
    "trivia_targets_set",
]

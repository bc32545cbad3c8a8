"""Business rules of projects, members, page pairs, screening and QA authoring, one module per concern.

Views, the API, management commands and tasks all call these functions; none of them carries a second copy of a
rule. Callers import from the concern's module (`from annotation.services.pairs import pair_claim_next`). The
names below are the ones the annotator's, project and deletion pages call as `services.<name>` beside view
functions of the same name; nothing else is re-exported.
"""

from __future__ import annotations

from annotation.services.deletion import (
    deleted_in_project,
    deleted_projects_for,
    pair_delete,
    pair_restore,
    project_delete,
    project_restore,
)
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_restore, qa_item_update_what_fits
from annotation.services.pairs import pair_claim_next, pair_give_back, pair_record_activity, pair_screen, pair_skip_undo
from annotation.services.projects import project_create, project_update
from annotation.services.submission import pair_submit

__all__ = [
    "deleted_in_project",
    "deleted_projects_for",
    "pair_claim_next",
    "pair_delete",
    "pair_give_back",
    "pair_record_activity",
    "pair_restore",
    "pair_screen",
    "pair_skip_undo",
    "pair_submit",
    "project_create",
    "project_delete",
    "project_restore",
    "project_update",
    "qa_item_create",
    "qa_item_delete",
    "qa_item_restore",
    "qa_item_update_what_fits",
]

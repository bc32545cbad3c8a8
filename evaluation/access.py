"""Who may see and start evaluation runs: researchers and coordinators of the project (404 to non-members, 403 to
members without either role), through the project's access functions."""

from __future__ import annotations

from django.http import Http404

from annotation.access import AnyUser, ProjectAccess, project_access
from annotation.models import Role
from evaluation.models import EvaluationRun, JudgedItem, Judgment

ROLES = (Role.RESEARCHER, Role.COORDINATOR)


def evaluation_access(user: AnyUser, slug: str) -> ProjectAccess:
    return project_access(user, slug, role=ROLES)


def get_run_for_user(user: AnyUser, slug: str, run_id: int) -> tuple[ProjectAccess, EvaluationRun]:
    access = evaluation_access(user, slug)
    run = (
        EvaluationRun.objects.filter(project=access.project, pk=run_id).select_related("release", "created_by").first()
    )
    if run is None:
        raise Http404("No such evaluation run in this project.")
    run.project = access.project
    run.release.project = access.project
    return access, run


def get_judgment_for_user(
    user: AnyUser, slug: str, run_id: int, judgment_id: int
) -> tuple[ProjectAccess, EvaluationRun, Judgment]:
    access, run = get_run_for_user(user, slug, run_id)
    judgment = Judgment.objects.filter(run=run, pk=judgment_id).select_related("prompt").first()
    if judgment is None:
        raise Http404("No such judgment of this run.")
    judgment.run = run
    return access, run, judgment


def get_judged_item_for_user(
    user: AnyUser, slug: str, run_id: int, judgment_id: int, judged_id: int
) -> tuple[ProjectAccess, Judgment, JudgedItem]:
    access, _, judgment = get_judgment_for_user(user, slug, run_id, judgment_id)
    item = JudgedItem.objects.filter(judgment=judgment, pk=judged_id).select_related("prediction").first()
    if item is None:
        raise Http404("No such judged item.")
    return access, judgment, item

"""Who may see and start evaluation runs: researchers and coordinators of the project (404 to non-members, 403 to
members without either role), through the project's access functions. Checking a judge (a person's own verdict on
judged items, the sampled ones first) is open to the members who may review as well: the native speakers."""

from __future__ import annotations

from django.http import Http404

from annotation.access import AnyUser, ProjectAccess, project_access
from annotation.models import Role
from evaluation.models import EvaluationRun, JudgedItem, Judgment

ROLES = (Role.RESEARCHER, Role.COORDINATOR)
CHECKERS = (Role.REVIEWER, *ROLES)


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
    user: AnyUser, slug: str, run_id: int, judgment_id: int, *, role: tuple[Role, ...] = ROLES
) -> tuple[ProjectAccess, EvaluationRun, Judgment]:
    """A judgment of a run of the project; `role=CHECKERS` for the check of the judge (reviewers too)."""
    access = project_access(user, slug, role=role)
    run = EvaluationRun.objects.filter(project=access.project, pk=run_id).select_related("release").first()
    if run is None:
        raise Http404("No such evaluation run in this project.")
    run.project = access.project
    run.release.project = access.project
    judgment = Judgment.objects.filter(run=run, pk=judgment_id).select_related("prompt").first()
    if judgment is None:
        raise Http404("No such judgment of this run.")
    judgment.run = run
    return access, run, judgment


def get_judged_item_for_user(
    user: AnyUser, slug: str, run_id: int, judgment_id: int, judged_id: int, *, role: tuple[Role, ...] = ROLES
) -> tuple[ProjectAccess, Judgment, JudgedItem]:
    access, _, judgment = get_judgment_for_user(user, slug, run_id, judgment_id, role=role)
    item = JudgedItem.objects.filter(judgment=judgment, pk=judged_id).select_related("prediction").first()
    if item is None:
        raise Http404("No such judged item.")
    item.judgment = judgment
    return access, judgment, item


def may_evaluate(access: ProjectAccess) -> bool:
    """Whether the member sees evaluation runs and judgments (not only the check of a judge)."""
    return any(access.membership.has_role(role) for role in ROLES)

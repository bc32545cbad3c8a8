from django import template

from annotation.models import Project

register = template.Library()


@register.filter
def criterion_label(key: str, project: Project) -> str:
    """The project's label for a criterion key (the key itself for a criterion since removed)."""
    for criterion in project.review_criteria:
        if criterion.get("key") == key:
            return criterion.get("label") or key
    return key

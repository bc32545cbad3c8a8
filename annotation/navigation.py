"""A project's navigation bar, grouped by task: its kind's links (`common.kinds`), those the member's roles may use.

Rendered by the `project_nav` tag (annotation/templatetags/localqa.py) into templates/annotation/_nav_groups.html:
a group of one link is a plain link, a larger one a <details> menu, so a coordinator's bar stays one row.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotation.models import Membership, Project
from common import kinds


@dataclass(frozen=True)
class NavLink:
    label: str
    url: str
    current: bool


@dataclass(frozen=True)
class NavGroup:
    label: str
    links: list[NavLink]

    @property
    def current(self) -> bool:
        return any(link.current for link in self.links)


def _may(membership: Membership | None, who: str | tuple[str, ...]) -> bool:
    if who == kinds.PUBLIC:
        return True
    if who == kinds.ALL:
        return membership is not None and bool(membership.roles)
    return membership is not None and any(membership.has_role(role) for role in who)


def project_nav(project: Project, membership: Membership | None, path: str = "") -> list[NavGroup]:
    """The groups of links this member sees, in order (Work, Review, Data, Settings), empty groups left out."""
    groups: dict[str, list[NavLink]] = {}
    for link in kinds.of(project).nav:
        if _may(membership, link.who):
            url = reverse(link.url_name, args=[project.slug])
            groups.setdefault(link.group, []).append(NavLink(link.label, url, current=path == url))
    return [NavGroup(label, links) for label, links in groups.items()]

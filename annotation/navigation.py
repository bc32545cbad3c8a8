"""A project's navigation bar, grouped by task: the links of each kind, and only those the member's roles may use.

Rendered by the `project_nav` tag (annotation/templatetags/localqa.py) into templates/annotation/_nav_groups.html:
a group of one link is a plain link, a larger one a <details> menu, so a coordinator's bar stays one row.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotation.models import Membership, Project

# (group, label, url name, who may use it). Who: "public" (anyone who may see the project, members or not, when
# its releases are published to everyone signed in), "all" (every member), or the roles of which any one is enough.
PUBLIC = "public"
ALL = "all"
REVIEW = ("reviewer", "coordinator")
READ = ("reviewer", "coordinator", "researcher")  # reports a researcher reads
COORD = ("coordinator",)
ANNOT = ("annotator",)

KIND_LINKS: dict[str, list[tuple[str, str, str, object]]] = {
    Project.Kind.WIKIPEDIA_QA: [
        ("Work", "Guidelines", "project_guidelines", ALL),
        ("Work", "My items", "my_items", ANNOT),
        ("Review", "Review queue", "review_queue", REVIEW),
        ("Review", "Agreement", "agreement", READ),
        ("Review", "Dashboard", "dashboard", COORD),
        ("Review", "Labels", "label_list", COORD),
        ("Review", "Reviewers", "reviewers", COORD),
        ("Data", "Releases", "release_list", PUBLIC),
        ("Data", "Pairs", "pair_list", COORD),
        ("Data", "Items", "item_list", COORD),
        ("Data", "Import", "import_start", COORD),
        ("Data", "Collect", "collection_start", COORD),
        ("Data", "Deleted", "deleted_list", COORD),
        ("Data", "Archive", "project_archives", COORD),
        ("Settings", "Settings", "project_settings", COORD),
        ("Settings", "Members", "project_members", COORD),
        ("Settings", "Audit log", "audit_project", COORD),
    ],
    Project.Kind.VALIDATION: [
        ("Review", "Duplicates", "validation_duplicates", COORD),
        ("Review", "Agreement", "validation_agreement", COORD),
        ("Data", "Releases", "release_list", PUBLIC),
        ("Data", "Items", "validation_items", COORD),
        ("Data", "Import", "validation_import", COORD),
        ("Data", "Seed queries", "validation_seeds", COORD),
        ("Data", "Domains", "validation_domains", COORD),
        ("Settings", "Validation settings", "validation_settings", COORD),
        ("Settings", "Members", "project_members", COORD),
    ],
    Project.Kind.TRIVIA: [
        ("Work", "Write an item", "trivia_item_new", ANNOT),
        ("Review", "Review queue", "review_queue", REVIEW),
        ("Review", "Agreement", "agreement", READ),
        ("Review", "Reviewers", "reviewers", COORD),
        ("Review", "Tagged translations", "trivia_problems", COORD),
        ("Review", "Balance", "trivia_balance", COORD),
        ("Data", "Releases", "release_list", PUBLIC),
        ("Data", "Items", "trivia_items", COORD),
        ("Data", "Import", "trivia_import", COORD),
        ("Settings", "Trivia settings", "trivia_settings", COORD),
        ("Settings", "Members", "project_members", COORD),
    ],
    Project.Kind.ENTITY_QA: [
        ("Review", "Review queue", "review_queue", REVIEW),
        ("Review", "Agreement", "agreement", READ),
        ("Review", "Reviewers", "reviewers", COORD),
        ("Data", "Releases", "release_list", PUBLIC),
        ("Settings", "Members", "project_members", COORD),
    ],
}


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


def _may(membership: Membership | None, who: object) -> bool:
    if who == PUBLIC:
        return True
    if who == ALL:
        return membership is not None and bool(membership.roles)
    return membership is not None and any(membership.has_role(role) for role in who)  # type: ignore[attr-defined]


def project_nav(project: Project, membership: Membership | None, path: str = "") -> list[NavGroup]:
    """The groups of links this member sees, in order (Work, Review, Data, Settings), empty groups left out."""
    groups: dict[str, list[NavLink]] = {}
    for group, label, name, who in KIND_LINKS.get(project.kind, KIND_LINKS[Project.Kind.WIKIPEDIA_QA]):
        if _may(membership, who):
            url = reverse(name, args=[project.slug])
            groups.setdefault(group, []).append(NavLink(label, url, current=path == url))
    return [NavGroup(label, links) for label, links in groups.items()]

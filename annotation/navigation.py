"""A project's navigation bar, grouped by task: its kind's links (`common.kinds`), those the member's roles may use.

Rendered by the `project_nav` tag (annotation/templatetags/localqa.py) into templates/annotation/_nav_groups.html:
a group of one link is a plain link, a larger one a <details> menu, so a coordinator's bar stays one row.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse

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


# Probe values a URL is reversed with once, to learn where its arguments go (two sets, to check the pattern).
_STR_PROBES, _INT_PROBES = ("zq-url-probe-a{}", "zq-url-probe-b{}"), (987_650_000, 876_540_000)
_SAFE_SLUG = re.compile(r"[-a-zA-Z0-9_]+")  # text that reverse() puts in a URL as it is (no quoting)


@functools.lru_cache(maxsize=512)
def _url_pattern(name: str, kinds: tuple[type, ...], prefix: str, urlconf: str) -> str | None:
    """`name`'s URL as a format string, `{0}`, `{1}`… where its arguments go; None when that cannot be told."""
    del prefix  # in the key only: reverse() reads the thread's script prefix itself
    first, second = ([_probe(kind, at, which) for at, kind in enumerate(kinds)] for which in (0, 1))
    url = reverse(name, urlconf=urlconf, args=first)
    pattern = url.replace("{", "{{").replace("}", "}}")
    for at, probe in enumerate(first):
        if pattern.count(str(probe)) != 1:
            return None
        pattern = pattern.replace(str(probe), f"{{{at}}}")
    return pattern if pattern.format(*second) == reverse(name, urlconf=urlconf, args=second) else None


def _probe(kind: type, at: int, which: int) -> str | int:
    return _STR_PROBES[which].format(at) if kind is str else _INT_PROBES[which] + at


def cached_reverse(name: str, *args: str | int) -> str:
    """`reverse(name, args=args)`, the URL pattern reversed once per process and filled in after: a page links
    to each of its items several times (some 40 URLs a page). Slugs and non-negative ids only; anything else is
    reversed as usual."""
    if all((type(arg) is int and arg >= 0) or (type(arg) is str and _SAFE_SLUG.fullmatch(arg)) for arg in args):
        kinds = tuple(type(arg) for arg in args)
        pattern = _url_pattern(name, kinds, get_script_prefix(), get_urlconf(settings.ROOT_URLCONF))
        if pattern is not None:
            return pattern.format(*args)
    return reverse(name, args=args)


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
            url = cached_reverse(link.url_name, project.slug)
            groups.setdefault(link.group, []).append(NavLink(link.label, url, current=path == url))
    return [NavGroup(label, links) for label, links in groups.items()]

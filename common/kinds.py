"""Project kinds: each kind is one registered unit, and this is the only place that knows the list.

A kind app registers its `ProjectKind` from its `AppConfig.ready()` (`register`); a part that only a higher app
can provide (the Wikipedia QA release writers live in exports, its next steps in review) is added by that app
with `extend`. Every screen that differs by kind asks the unit (`of(project)`): its landing page, navigation,
settings page, importer, review page and wording, release writers, release columns and manifest,
agreement strata and gatherers, the count on the home list and the next steps of its members. Nothing here
imports an app: the unit holds URL names, template names and the callables the kind app hands in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any

# Who may use a navigation link: anyone who may see the project (members or not, when its releases are
# published to everyone signed in), every member, or the roles of which any one is enough.
PUBLIC = "public"
ALL = "all"
REVIEW = ("reviewer", "coordinator")
READ = ("reviewer", "coordinator", "researcher")  # reports a researcher reads
COORD = ("coordinator",)
ANNOT = ("annotator",)


@dataclass(frozen=True)
class Link:
    """A link of the project's navigation bar: its group (Work, Review, Data, Settings), label and URL name."""

    group: str
    label: str
    url_name: str
    who: str | tuple[str, ...]


def _pair_title(item: Any) -> str:
    return item.pair.local_title if item.pair_id else ""


def _item_kind(item: Any) -> str:
    return str(item.get_kind_display())


@dataclass(frozen=True)
class Words:
    """The words the shared screens (review queue, item history) use for a kind's items, and the two columns
    that tell its items apart. `*_fields` are the `QAItem` field paths the column reads (loaded with the list,
    one query: a path through a relation is followed with `select_related`)."""

    item: str = "QA item"  # one unit of work, as a heading reads it
    items: str = "QA items"
    source: str = "Pair"  # the column naming where an item comes from
    source_of: Callable[[Any], str] = _pair_title
    source_fields: tuple[str, ...] = ("pair__local_title",)
    source_local: bool = True  # the source is text in the local language (a page title), not a code or a name
    kind: str = "Kind"
    kind_of: Callable[[Any], str] = _item_kind
    kind_fields: tuple[str, ...] = ("kind",)
    kind_filter: bool = True  # the review queue filters by `QAItem.kind` (lead / document QA)

    def related(self) -> list[str]:
        """The relations the two columns follow, for `select_related`."""
        paths = {path.rsplit("__", 1)[0] for path in (*self.source_fields, *self.kind_fields) if "__" in path}
        return sorted(paths)


@dataclass(frozen=True)
class Count:
    """The count the home list shows for projects of a kind: `count(project_ids)` → {project id: n}, one query."""

    singular: str
    plural: str
    count: Callable[[list[int]], dict[int, int]]

    def label(self, n: int) -> str:
        return f"{n} {self.singular if n == 1 else self.plural}"


@dataclass(frozen=True)
class ProjectKind:
    value: str  # `Project.Kind` value
    name: str  # short, as the home list's Kind column reads it
    home: str  # URL name (slug) of the kind's landing page
    settings: str  # URL name (slug) of the page holding its settings (reviewers per item included)
    nav: tuple[Link, ...]
    words: Words = field(default_factory=Words)
    count: Count | None = None
    importer: Any = None  # the `annotation.ingest.UploadImporter` of its import jobs; None: it has none
    next_steps: Callable[..., Iterable[Any]] | None = None  # (project=, membership=, user=) → steps
    review_page: str | None = None  # URL name (slug, item id) of its own review screen; None: the shared one
    item_summary: str = "review/_item_summary.html"  # template of an item's fields on the history page
    # The fields of a revision the history page diffs: (name, label); `evidence` and `options` are read from
    # the revision's spans and content (review.history._revision_text).
    history_fields: tuple[tuple[str, str], ...] = (
        ("question", "Question"),
        ("answer_standard", "Answer (standard)"),
        ("answer_local", "Answer (local)"),
        ("evidence", "Evidence"),
    )
    release_writers: Callable[[], list[Any]] | None = None  # the writers of its release, in order
    # (project, item statuses) → exports.splits.ReleaseUnits: the groups its release splits and what it leaves out
    release_units: Callable[[Any, list[str]], Any] | None = None
    release_columns: tuple[tuple[str, str], ...] = ()  # (heading, key of `Release.counts`) on release lists
    manifest_project: Callable[[Any], dict[str, Any]] | None = None  # project → what its manifest says of it
    prompt_templates: bool = False  # its releases carry the export settings' prompt templates (in the manifest)
    # (project, item ids) → {stratum: {item id: label}} for those items: a report asks a chunk of items at a time
    strata: Callable[[Any, Collection[int]], dict[str, dict[int, str]]] | None = None
    scopes: Callable[[Any], list[Any]] | None = None  # project → agreement scopes of judgments it keeps itself

    def missing(self) -> list[str]:
        """Parts every kind needs and this one lacks (a test checks none is missing once the apps are ready)."""
        needed = ("count", "next_steps", "release_writers", "release_units", "manifest_project")
        return [name for name in needed if getattr(self, name) is None]


_KINDS: dict[str, ProjectKind] = {}


def register(kind: ProjectKind) -> None:
    """Register a kind (from its app's `ready()`; registering the same value again replaces it)."""
    _KINDS[kind.value] = kind


def extend(value: str, **parts: Any) -> None:
    """Add the parts of a registered kind that a higher app provides (`extend("wikipedia_qa", release_writers=…)`)."""
    names = {f.name for f in fields(ProjectKind)}
    unknown = set(parts) - names
    if unknown:
        raise TypeError(f"ProjectKind has no part {', '.join(sorted(unknown))}")
    _KINDS[value] = replace(get(value), **parts)


def get(value: str) -> ProjectKind:
    try:
        return _KINDS[value]
    except KeyError:
        raise LookupError(f"No project kind {value!r} is registered (is its app installed?)") from None


def of(project: Any) -> ProjectKind:
    """The unit of a project's kind."""
    return get(project.kind)


def registered() -> list[ProjectKind]:
    return list(_KINDS.values())


def sizes(projects: Iterable[Any]) -> dict[int, str]:
    """What the home list says of each project's size, in its kind's words ("6 page pairs", "3 trivia items"):
    one query per kind among the projects."""
    by_kind: dict[str, list[int]] = {}
    for project in projects:
        by_kind.setdefault(project.kind, []).append(project.pk)
    found: dict[int, str] = {}
    for value, ids in by_kind.items():
        count = get(value).count
        if count is not None:
            numbers = count.count(ids)
            found |= {pk: count.label(numbers.get(pk, 0)) for pk in ids}
    return found

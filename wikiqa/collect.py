"""Collecting page pairs from Wikipedia (services of the Wikipedia QA kind).

Pages, the API, the `wikipedia_collect` command and the Celery task all call these functions. A collection is
a row holding its status, progress and outcome; the worker claims it with a conditional update, so a second
delivery of the same task does nothing, and a worker that died mid-way leaves a row that can be resumed (titles
without an outcome are still pending).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.languages import VARIANT
from annotation.models import PagePair, Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, pause_between_steps, stalled
from common.text import unstorable
from wikiqa.models import Collection, CollectionTitle, WikiPage
from wikiqa.wikipedia import PageContent, PageFacts, WikipediaError, WikiSession

logger = logging.getLogger(__name__)

MAX_TITLES = 50_000
Outcome = CollectionTitle.Outcome


# Collections


def parse_titles(text: str) -> list[str]:
    """One title per line; blank lines and repeats dropped, order kept, underscores read as spaces."""
    titles = (line.strip().replace("_", " ") for line in text.splitlines())
    return list(dict.fromkeys(title for title in titles if title))


def collection_create(
    *,
    project: Project,
    user: User | None,
    titles: Iterable[str] = (),
    category: str = "",
    local_heavy_only: bool = True,
    standard_variant: str | None = None,
    enqueue: bool = True,
) -> Collection:
    """Start a collection for a list of local-wiki titles, or for the members of a local-wiki category.

    `standard_variant` (e.g. zh-hk) overrides the project's script variant for the standard wiki.
    With `enqueue` (the default) a worker runs it; the command runs it in its own process instead.
    """
    variant = project.standard_variant if standard_variant is None else standard_variant.strip().lower()
    if variant and not VARIANT.fullmatch(variant):
        raise InvalidInput(
            f"{variant!r} is not a language variant code such as zh-cn, zh-hk or zh-tw.", field="standard_variant"
        )
    titles = list(dict.fromkeys(title.strip() for title in titles if title.strip()))
    category = category.strip()
    if bool(titles) == bool(category):
        raise InvalidInput("Give either a list of titles or a category, not both and not neither.", field="titles")
    if len(titles) > MAX_TITLES:
        raise InvalidInput(f"At most {MAX_TITLES:,} titles per collection; split the list.", field="titles")
    for number, title in enumerate([category] if category else titles, start=1):
        if message := unstorable(title):
            where = "The category" if category else f"Title {number} ({title[:60]!r})"
            raise InvalidInput(f"{where} {message}.", field="category" if category else "titles")
    too_long = [title for title in titles if len(title) > 500]
    if too_long:
        raise InvalidInput(f"A title is longer than 500 characters: {too_long[0][:60]!r}…", field="titles")
    with transaction.atomic():
        collection = Collection.objects.create(
            project=project,
            created_by=user,
            source=Collection.Source.CATEGORY if category else Collection.Source.TITLES,
            category=category,
            local_wiki=project.local_wiki,
            standard_wiki=project.standard_wiki,
            standard_variant=variant,
            local_heavy_only=local_heavy_only,
            progress_total=len(titles),
        )
        CollectionTitle.objects.bulk_create(
            CollectionTitle(collection=collection, position=position, title=title)
            for position, title in enumerate(titles)
        )
        audit.record(
            user, Action.COLLECTION_STARTED, collection, project=project, titles=len(titles), category=category
        )
        if enqueue:
            _enqueue_collection(collection)
    return collection


def _enqueue_collection(collection: Collection) -> None:
    job_enqueue("collection", collection.pk)


def collection_cancel(*, collection: Collection, actor: User | None = None) -> Collection:
    """Stop a collection: at once if no worker has it (or its worker is gone), else before the worker's next title."""
    now = timezone.now()
    no_worker = Q(status=Collection.Status.PENDING) | stalled(Collection)
    stopped = Collection.objects.filter(no_worker, pk=collection.pk).update(
        status=Collection.Status.CANCELLED, cancel_requested=False, finished_at=now
    ) or Collection.objects.filter(pk=collection.pk, status=Collection.Status.RUNNING).update(cancel_requested=True)
    if not stopped:
        raise InvalidState(f"This collection is {collection.status_words.lower()}; nothing to cancel.")
    audit.record(actor, Action.COLLECTION_CANCELLED, collection, project=collection.project)
    collection.refresh_from_db()
    return collection


def collection_resume(*, collection: Collection, enqueue: bool = True, actor: User | None = None) -> Collection:
    """Continue a cancelled, failed or stalled collection from its first title without an outcome.

    With `enqueue` (the default) a worker picks it up; the command runs it in its own process instead.
    """
    resumable = {Collection.Status.CANCELLED, Collection.Status.FAILED}
    with transaction.atomic():
        updated = Collection.objects.filter(pk=collection.pk, status__in=resumable).update(
            status=Collection.Status.PENDING, cancel_requested=False, error="", finished_at=None
        ) or Collection.objects.filter(stalled(Collection), pk=collection.pk).update(
            status=Collection.Status.PENDING, cancel_requested=False
        )
        if not updated:
            raise InvalidState(
                f"This collection is {collection.status_words.lower()}; only a cancelled, failed or "
                "stalled collection can be resumed."
            )
        audit.record(actor, Action.COLLECTION_RESUMED, collection, project=collection.project)
        if enqueue:
            _enqueue_collection(collection)
    collection.refresh_from_db()
    return collection


def collection_outcome_counts(collection: Collection) -> dict[str, int]:
    """Titles by outcome, in the order of the outcome list (the first rows of a statistics table)."""
    counts = dict(
        CollectionTitle.objects.filter(collection=collection).values_list("outcome").annotate(n=Count("id")).order_by()
    )
    return {outcome.value: counts.get(outcome.value, 0) for outcome in Outcome}


ProgressHook = Callable[[Collection], None]


def collection_run(
    *, collection_id: int, session: WikiSession | None = None, on_progress: ProgressHook | None = None
) -> Collection | None:
    """Process a collection's pending titles, one at a time, until done or cancelled.

    Claims the collection first (pending, or running with a stale heartbeat);
    returns None if another worker has it or it is finished. Each title's
    outcome and the counters change in one transaction, so progress is never
    half-written.
    """
    run = job_claim(Collection, collection_id, started_at=Coalesce(F("started_at"), timezone.now()))
    if run is None:
        return None
    collection = Collection.objects.select_related("project").get(pk=collection_id)
    own_session = session is None
    session = session or WikiSession()
    try:
        if collection.source == Collection.Source.CATEGORY and not collection.titles.exists():
            _add_category_members(collection, session, run)
        while True:
            if Collection.objects.filter(pk=collection.pk, cancel_requested=True).exists():
                run.finish(status=Collection.Status.CANCELLED, cancel_requested=False)
                break
            entry = collection.titles.filter(outcome=Outcome.PENDING).order_by("position").first()
            if entry is None:
                run.finish()
                break
            _record_outcome(run, entry, _process_title(collection, entry, session))
            pause_between_steps()
            if on_progress is not None:
                collection.refresh_from_db()
                on_progress(collection)
    except JobLost:
        pass  # cancelled while no worker seemed to hold it, or taken over: that run goes on
    except CollectionFailed as error:
        run.fail(str(error))
    except Exception as error:
        run.fail(error)
        raise
    finally:
        if own_session:
            session.close()
    collection.refresh_from_db()
    return collection


def _add_category_members(collection: Collection, session: WikiSession, run: JobRun) -> None:
    try:
        titles = session.category_members(collection.local_wiki, collection.category)
    except WikipediaError as error:
        raise CollectionFailed(str(error)) from None
    titles = titles[:MAX_TITLES]
    with transaction.atomic():
        CollectionTitle.objects.bulk_create(
            (CollectionTitle(collection=collection, position=i, title=title[:500]) for i, title in enumerate(titles)),
            ignore_conflicts=True,
        )
        run.beat(progress_total=len(titles))


class CollectionFailed(Exception):
    """The collection as a whole cannot go on (its category could not be listed, Wikipedia cannot be reached)."""


@dataclass
class _Result:
    outcome: str
    error: str = ""
    local: PageFacts | None = None
    standard: PageFacts | None = None
    pair: PagePair | None = None
    pair_created: bool = False


def _process_title(collection: Collection, entry: CollectionTitle, session: WikiSession) -> _Result:
    variant = collection.standard_variant
    try:
        local = session.facts(collection.local_wiki, entry.title)
        if not local.exists:
            return _Result(Outcome.PAGE_MISSING, local=local)
        if local.disambiguation:
            return _Result(Outcome.DISAMBIGUATION, local=local)
        link = local.langlinks.get(collection.standard_wiki)
        if link is None:
            return _Result(Outcome.NO_STANDARD_PAGE, local=local)
        standard = session.facts(collection.standard_wiki, link.title, variant=variant)
        if not standard.exists:
            return _Result(Outcome.NO_STANDARD_PAGE, local=local, standard=standard)
        if standard.disambiguation:
            return _Result(Outcome.DISAMBIGUATION, local=local, standard=standard)
        local_page = _content(session, local, variant="")
        standard_page = _content(session, standard, variant=variant)
    except WikipediaError as error:
        if error.unreachable:  # not this page's failure: every title would spend its retries the same way
            raise CollectionFailed(
                f"Wikipedia could not be reached from this server ({error}). Nothing was recorded for "
                f"“{entry.title}” or the titles after it; resume the collection once the server is online."
            ) from None
        return _Result(Outcome.FETCH_FAILED, error=str(error))
    if not local_page.lead.strip() or not standard_page.lead.strip():
        return _Result(Outcome.EMPTY_LEAD, local=local, standard=standard)
    local_heavy = len(local_page.lead) > len(standard_page.lead) and len(local_page.text) > len(standard_page.text)
    if collection.local_heavy_only and not local_heavy:
        return _Result(Outcome.NOT_LOCAL_HEAVY, local=local, standard=standard)
    pair, created = _pair_for(collection, local, standard, local_page, standard_page, entry)
    return _Result(Outcome.KEPT, local=local, standard=standard, pair=pair, pair_created=created)


def _content(session: WikiSession, facts: PageFacts, *, variant: str) -> PageContent:
    """The page's lead and text at its current revision, from the cache when that revision was fetched before."""
    # A page whose revision is unknown is never served from the cache (a lookup by NULL matches no row).
    cached = (
        None
        if facts.revision is None
        else WikiPage.objects.filter(
            wiki=facts.wiki, variant=variant, title=facts.title, revision=facts.revision
        ).first()
    )
    if cached is not None:
        return PageContent(lead=cached.lead, text=cached.text)
    content = session.content(facts.wiki, facts.title, variant=variant)
    try:
        with transaction.atomic():
            WikiPage.objects.create(
                wiki=facts.wiki,
                variant=variant,
                title=facts.title,
                revision=facts.revision or 0,
                pageid=facts.pageid,
                url=facts.url,
                lead=content.lead,
                text=content.text,
            )
    except IntegrityError:
        pass  # another worker cached the same revision meanwhile
    return content


def _pair_for(
    collection: Collection,
    local: PageFacts,
    standard: PageFacts,
    local_page: PageContent,
    standard_page: PageContent,
    entry: CollectionTitle,
) -> tuple[PagePair, bool]:
    fetched_at = timezone.now().isoformat()
    defaults = {
        "standard_title": standard.title,
        "local_url": local.url,
        "standard_url": standard.url,
        "local_lead": local_page.lead,
        "standard_lead": standard_page.lead,
        "local_text": local_page.text,
        "standard_text": standard_page.text,
        "local_lead_length": len(local_page.lead),
        "standard_lead_length": len(standard_page.lead),
        "local_text_length": len(local_page.text),
        "standard_text_length": len(standard_page.text),
        "source": PagePair.Source.WIKIPEDIA,
        "metadata": {
            "wikipedia": {
                "collection": collection.pk,
                "requested_title": entry.title,
                "local_wiki": local.wiki,
                "standard_wiki": standard.wiki,
                "standard_variant": collection.standard_variant,
                "local_revision": local.revision,
                "standard_revision": standard.revision,
                "local_pageid": local.pageid,
                "standard_pageid": standard.pageid,
                "fetched_at": fetched_at,
            }
        },
    }
    try:
        with transaction.atomic():
            # all_objects: a deleted pair keeps its title, and collecting the title again leaves it deleted.
            pair, created = PagePair.all_objects.get_or_create(
                project=collection.project, local_title=local.title, defaults=defaults
            )
    except IntegrityError:  # the same title was kept by another collection at the same moment
        pair, created = PagePair.all_objects.get(project=collection.project, local_title=local.title), False
    if not created:
        # Created for this very title by a run of this collection that died before recording the outcome:
        # it is still this collection's new pair.
        origin = (pair.metadata or {}).get("wikipedia") or {}
        created = origin.get("collection") == collection.pk and origin.get("requested_title") == entry.title
    return pair, created


def _record_outcome(run: JobRun, entry: CollectionTitle, result: _Result) -> None:
    now = timezone.now()
    with transaction.atomic():
        updated = CollectionTitle.objects.filter(pk=entry.pk, outcome=Outcome.PENDING).update(
            outcome=result.outcome,
            error=result.error,
            local_title=result.local.title if result.local and result.local.exists else "",
            standard_title=result.standard.title if result.standard and result.standard.exists else "",
            local_revision=result.local.revision if result.local else None,
            standard_revision=result.standard.revision if result.standard else None,
            pair=result.pair,
            pair_created=result.pair_created,
            processed_at=now,
        )
        if updated:  # a run that lost the collection meanwhile rolls the title's outcome back (JobLost)
            run.beat(
                progress_done=F("progress_done") + 1,
                kept=F("kept") + (1 if result.outcome == Outcome.KEPT else 0),
                created_pairs=F("created_pairs") + (1 if result.pair_created else 0),
            )

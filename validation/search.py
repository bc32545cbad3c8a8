"""Search collections (services): a validation project's seed queries sent to a search engine through SerpApi.

NativQA's collection loop, inside the project: each seed query is searched (engine, location, `gl`/`hl`); the
"people also ask" questions of each response, with their answers and source links, become validation items
(`collected_pairs_store`: what was collected before is left out, near-duplicates are marked as imports mark
them); the related questions and related searches become the queries of the next iteration, up to N.

A collection is a job row (common/jobs.py) with one `SearchQuery` row per query. A response is stored whole in
`SearchResponse` the moment it arrives, keyed by its parameters, before anything is made of it: any later
query of the project with the same parameters (a rerun, a resume after a crash) reads it there and sends no
call. Each query's items, follow-up queries, status and counters are written in one transaction, so a worker
killed mid-way leaves the query pending, and the run that takes over finds its response in the cache and
writes it once. The budget is reserved (a conditional update) before each call, retries included, so the
calls sent never exceed it, even when a call's outcome is lost.

The SerpApi key is the project's, encrypted (common/secrets.py). Every request, each redirect hop included,
must name a host of SEARCH_ALLOWED_HOSTS (entries shaped as MODEL_ALLOWED_HOSTS', endpoints/hosts.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import serpapi
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from requests.adapters import HTTPAdapter

from annotation.importers.report import ImportReport
from annotation.models import Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, pause_between_steps, stalled
from common.secrets import SecretUnreadable, secret_decrypt, secret_encrypt, secret_rotate
from endpoints.hosts import DEFAULT_PORTS, HostRefused, HostUnresolvable, addresses_allowed, allowed_host_parse
from validation.images import web_url
from validation.importers import CollectedPair
from validation.models import (
    SearchCollection,
    SearchEngine,
    SearchKey,
    SearchQuery,
    SearchResponse,
    SearchType,
    SeedQuery,
)
from validation.services.imports import collected_pairs_store
from validation.services.projects import validation_settings
from validation.text import find_duplicates, normalise

logger = logging.getLogger(__name__)

MAX_ITERATIONS = 5
MAX_BUDGET = 10_000
MAX_QUERIES = 20_000  # seed and follow-up queries of one collection
MAX_KEY_LENGTH = 200
MAX_IMAGES = 10  # image results of one response attached to its item (the rest stay in the stored response)
Status = SearchQuery.Status

# The `hl` a project's language suggests (the coordinator may change it).
LANGUAGE_HL = {"ara": "ar", "arb": "ar", "eng": "en", "yue": "zh-tw", "cmn": "zh-cn", "zho": "zh-cn"}


# The project's key


def search_key_set(*, project: Project, key: str, user: User | None) -> SearchKey:
    """Store the project's SerpApi key, encrypted; it is never shown again (the last four characters of a key of
    12 or more are)."""
    key = key.strip()
    if not key or len(key) > MAX_KEY_LENGTH or any(char.isspace() for char in key):
        raise InvalidInput(f"api_key: 1 to {MAX_KEY_LENGTH} characters, no spaces.", field="api_key")
    hint = key[-4:] if len(key) >= 12 else ""  # a short key's last four would give most of it away
    with transaction.atomic():
        row, _ = SearchKey.objects.update_or_create(
            project=project,
            defaults={
                "token": secret_encrypt(plain=key),
                "last_four": hint,
                "set_by": user,
                "set_at": timezone.now(),
            },
        )
        audit.record(user, Action.SEARCH_KEY_SET, project, project=project, last_four=hint)
    return row


def search_key_remove(*, project: Project, user: User | None) -> None:
    with transaction.atomic():
        if SearchKey.objects.filter(project=project).delete()[0]:
            audit.record(user, Action.SEARCH_KEY_REMOVED, project, project=project)


def search_keys_rotate() -> tuple[int, list[str]]:
    """Re-encrypt every project's search key under the first of ENCRYPTION_KEYS (`manage.py endpoint rotate-keys`)."""
    rotated, unreadable = 0, []
    for row in SearchKey.objects.select_related("project").order_by("pk").iterator():
        try:
            token = secret_rotate(token=row.token)
        except SecretUnreadable:
            unreadable.append(f"the SerpApi key of project {row.project.slug}")
            continue
        rotated += SearchKey.objects.filter(pk=row.pk, token=row.token).update(token=token)
    return rotated, unreadable


def search_key_hint(project: Project) -> str:
    """What a page shows of the key: "set, ends in …abcd", "set" or "not set"."""
    row = SearchKey.objects.filter(project=project).first()
    if row is None:
        return "not set"
    return f"set, ends in …{row.last_four}" if row.last_four else "set"


# Talking to SerpApi


class SearchFailed(Exception):
    """A call that did not bring a response. `stops` (a refused key, a used-up quota, a refused host): the whole
    collection stops, as every later call would fail the same way; otherwise only this query failed."""

    def __init__(self, message: str, *, stops: bool = False, retry: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.stops = stops
        self.retry = retry


class _GuardedAdapter(HTTPAdapter):
    """Checks the host of every request it sends (each redirect hop is one) and caps the size of a reply."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        parts = urlsplit(request.url or "")
        host = (parts.hostname or "").lower()
        port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
        if parts.scheme not in DEFAULT_PORTS:
            raise HostRefused(f"Only http:// and https:// are allowed, not {parts.scheme}://.")
        entries = [e for entry in settings.SEARCH_ALLOWED_HOSTS if (e := allowed_host_parse(entry))]
        matching = sorted((e for e in entries if e.matches(host, port)), key=lambda e: e.wildcard)
        if not matching:
            allowed = ", ".join(settings.SEARCH_ALLOWED_HOSTS) or "none"
            raise HostRefused(
                f"The host {host} (port {port}) is not allowed for search calls: the operator allows {allowed} "
                "(SEARCH_ALLOWED_HOSTS)."
            )
        addresses_allowed(host, port, matching[0])
        kwargs["stream"] = True
        response = super().send(request, **kwargs)
        limit = settings.SEARCH_REPLY_MAX_BYTES
        body = response.raw.read(limit + 1, decode_content=True)
        if len(body) > limit:
            response.close()
            raise SearchFailed(f"SerpApi's reply is longer than {limit:,} bytes (SEARCH_REPLY_MAX_BYTES).")
        response._content = body  # read here, capped; requests serves .json() and .text from it
        return response


def serpapi_client(api_key: str) -> serpapi.Client:
    """The official client, pointed at SERPAPI_BASE_URL, every request through the host check."""
    client = serpapi.Client(api_key=api_key, timeout=settings.SEARCH_TIMEOUT_SECONDS)
    client.BASE_DOMAIN = settings.SERPAPI_BASE_URL.rstrip("/")
    client.session.trust_env = False  # no proxy or .netrc from the environment: the host check is the rule
    client.session.max_redirects = 3
    for prefix in ("http://", "https://"):
        client.session.mount(prefix, _GuardedAdapter())
    return client


def _error_words(error: serpapi.HTTPError) -> str:
    said = f": {str(error.error)[:300]}" if error.error else ""
    return f"HTTP {error.status_code}{said}"


def serpapi_search(client: serpapi.Client, params: Mapping[str, str]) -> dict[str, Any]:
    """One call; SearchFailed (in words) for anything but a JSON response."""
    try:
        result = client.search(dict(params))
    except HostRefused as error:
        raise SearchFailed(str(error), stops=True) from None
    except HostUnresolvable as error:
        raise SearchFailed(str(error), retry=True) from None
    except serpapi.TimeoutError:
        raise SearchFailed(
            f"SerpApi did not answer within {settings.SEARCH_TIMEOUT_SECONDS:g} seconds.", retry=True
        ) from None
    except serpapi.HTTPConnectionError as error:
        raise SearchFailed(f"SerpApi could not be reached: {type(error).__name__}.", retry=True) from None
    except serpapi.HTTPError as error:
        status = error.status_code
        if status in (401, 403):
            raise SearchFailed(
                f"SerpApi refused the project's key ({_error_words(error)}). Set the key again, then resume.",
                stops=True,
            ) from None
        if status == 429:
            raise SearchFailed(
                f"SerpApi refused the call: the account's searches are used up or its rate limit was reached "
                f"({_error_words(error)}). Resume when the account has searches left.",
                stops=True,
            ) from None
        raise SearchFailed(f"SerpApi answered with an error ({_error_words(error)}).", retry=status >= 500) from None
    except requests.exceptions.RequestException as error:
        raise SearchFailed(f"The search call failed: {type(error).__name__}.", retry=True) from None
    if isinstance(result, serpapi.SerpResults):
        result = result.data
    if not isinstance(result, dict):
        raise SearchFailed("SerpApi's reply was not JSON.", retry=True)
    return result


ClientFactory = Callable[[str], serpapi.Client]


# Starting, cancelling, resuming


def search_params(collection: SearchCollection, query: str) -> dict[str, str]:
    """The request's parameters (the key aside): what the cache is keyed by."""
    engine = collection.engine
    if collection.search_type == SearchType.IMAGES:  # Google Images: the same location, gl and hl
        params = {"engine": "google_images", "q": query}
        if collection.location:
            params["location"] = collection.location
        return params | {key: value for key, value in (("gl", collection.gl), ("hl", collection.hl)) if value}
    params = {"engine": engine, ("p" if engine == SearchEngine.YAHOO else "q"): query}
    if collection.location and engine != SearchEngine.YAHOO:
        params["location"] = collection.location
    if engine == SearchEngine.GOOGLE:
        params |= {key: value for key, value in (("gl", collection.gl), ("hl", collection.hl)) if value}
    elif engine == SearchEngine.BING:
        if collection.gl:
            params["cc"] = collection.gl
        if collection.hl:
            params["setlang"] = collection.hl
    elif engine == SearchEngine.YAHOO:
        if collection.gl:
            params["vc"] = collection.gl
        if collection.hl:
            params["vl"] = f"lang_{collection.hl}"
    return params


def params_key(params: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(params), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _clean_code(value: str, field: str, *, length: int) -> str:
    value = value.strip().lower()
    if value and (len(value) > length or not all(char.isalnum() or char == "-" for char in value)):
        raise InvalidInput(f"{field}: a code such as qa or ar (letters, digits, -).", field=field)
    return value


def search_collection_start(
    *,
    project: Project,
    user: User | None,
    engine: str = SearchEngine.GOOGLE,
    search_type: str = SearchType.TEXT,
    iterations: int = 1,
    budget: int,
    location: str = "",
    gl: str = "",
    hl: str = "",
    enqueue: bool = True,
) -> SearchCollection:
    """Queue a collection of the project's seed queries (iteration 1) and what their responses suggest."""
    if project.kind != Project.Kind.VALIDATION:
        raise InvalidState("Only a validation project collects from a search engine.", field="project")
    if engine not in SearchEngine.values:
        raise InvalidInput(f"engine: use {', '.join(SearchEngine.values)}.", field="engine")
    if search_type not in SearchType.values:
        raise InvalidInput(f"search_type: use {', '.join(SearchType.values)}.", field="search_type")
    if search_type == SearchType.IMAGES and engine != SearchEngine.GOOGLE:
        raise InvalidInput("search_type: image search goes through Google Images; choose Google.", field="search_type")
    if not 1 <= int(iterations) <= MAX_ITERATIONS:
        raise InvalidInput(f"iterations: 1 to {MAX_ITERATIONS}.", field="iterations")
    if not 1 <= int(budget) <= MAX_BUDGET:
        raise InvalidInput(f"budget: 1 to {MAX_BUDGET:,} calls.", field="budget")
    location = location.strip()
    if len(location) > 200:
        raise InvalidInput("location: at most 200 characters.", field="location")
    gl, hl = _clean_code(gl, "gl", length=8), _clean_code(hl, "hl", length=16)
    if not SearchKey.objects.filter(project=project).exists():
        raise InvalidState("Set the project's SerpApi key first.", field="api_key")
    seeds = list(SeedQuery.objects.filter(project=project).order_by("id")[:MAX_QUERIES])
    if not seeds:
        raise InvalidState("The project has no seed queries to search with: add or import some first.", field="seeds")
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one start at a time per project
        if SearchCollection.objects.filter(project=project, status__in=SearchCollection.ACTIVE).exists():
            raise InvalidState("A search collection of this project is running: cancel it or wait for it.")
        collection = SearchCollection.objects.create(
            project=project,
            created_by=user,
            engine=engine,
            search_type=search_type,
            iterations=int(iterations),
            budget=int(budget),
            location=location,
            gl=gl,
            hl=hl,
            progress_total=len(seeds),
        )
        SearchQuery.objects.bulk_create(
            SearchQuery(
                collection=collection,
                position=position,
                query=seed.query,
                normalised=seed.normalised,
                iteration=1,
                origin=SearchQuery.Origin.SEED,
                topic=seed.topic,
                location=seed.location,
            )
            for position, seed in enumerate(seeds)
        )
        audit.record(
            user,
            Action.SEARCH_STARTED,
            collection,
            project=project,
            engine=engine,
            search_type=search_type,
            iterations=collection.iterations,
            budget=collection.budget,
            seeds=len(seeds),
        )
        if enqueue:
            job_enqueue("search", collection.pk)
    return collection


def search_collection_cancel(*, collection: SearchCollection, user: User | None = None) -> SearchCollection:
    """Stop a collection: at once if no worker has it, else before the worker's next query."""
    no_worker = Q(status=SearchCollection.Status.PENDING) | stalled(SearchCollection)
    stopped = SearchCollection.objects.filter(no_worker, pk=collection.pk).update(
        status=SearchCollection.Status.CANCELLED, cancel_requested=False, finished_at=timezone.now()
    ) or SearchCollection.objects.filter(pk=collection.pk, status=SearchCollection.Status.RUNNING).update(
        cancel_requested=True
    )
    if not stopped:
        raise InvalidState(f"This collection is {collection.status_words.lower()}; nothing to cancel.")
    audit.record(user, Action.SEARCH_CANCELLED, collection, project=collection.project)
    collection.refresh_from_db()
    return collection


def search_collection_resume(
    *, collection: SearchCollection, user: User | None = None, budget: int | None = None, enqueue: bool = True
) -> SearchCollection:
    """Continue a cancelled, failed, stalled or budget-ended collection from its first unanswered query.

    Queries that failed or were left for the budget are tried again; `budget` raises the budget. Queries
    already answered are not sent again (their responses are stored)."""
    if budget is not None and not collection.calls_sent <= int(budget) <= MAX_BUDGET:
        raise InvalidInput(
            f"budget: from the {collection.calls_sent:,} calls already sent to {MAX_BUDGET:,}.", field="budget"
        )
    changes: dict[str, Any] = {"cancel_requested": False, "error": "", "finished_at": None}
    if budget is not None:
        changes["budget"] = int(budget)
    finished = [SearchCollection.Status.CANCELLED, SearchCollection.Status.FAILED, SearchCollection.Status.DONE]
    with transaction.atomic():
        updated = SearchCollection.objects.filter(pk=collection.pk, status__in=finished).update(
            status=SearchCollection.Status.PENDING, **changes
        ) or SearchCollection.objects.filter(stalled(SearchCollection), pk=collection.pk).update(
            status=SearchCollection.Status.PENDING, **changes
        )
        if not updated:
            raise InvalidState(f"This collection is {collection.status_words.lower()}; it cannot be resumed now.")
        SearchQuery.objects.filter(collection=collection, status__in=[Status.FAILED, Status.OVER_BUDGET]).update(
            status=Status.PENDING
        )
        audit.record(user, Action.SEARCH_RESUMED, collection, project=collection.project, budget=budget)
        if enqueue:
            job_enqueue("search", collection.pk)
    collection.refresh_from_db()
    return collection


def search_query_counts(collection: SearchCollection) -> dict[str, int]:
    """Queries by status, in the order of the status list."""
    counts = dict(
        SearchQuery.objects.filter(collection=collection).values_list("status").annotate(n=Count("id")).order_by()
    )
    return {status.value: counts.get(status.value, 0) for status in Status}


# The job


class _Stop(Exception):
    """The collection as a whole cannot go on (its key, its quota, its host): it ends failed with this message."""


def search_collection_run(
    *, collection_id: int, client_factory: ClientFactory | None = None
) -> SearchCollection | None:
    """Answer a collection's pending queries, iteration by iteration, until done, cancelled, stopped or out of
    budget. None if another worker holds it or it has finished."""
    run = job_claim(SearchCollection, collection_id, started_at=Coalesce(F("started_at"), timezone.now()))
    if run is None:
        return None
    collection = SearchCollection.objects.select_related("project").get(pk=collection_id)
    client: serpapi.Client | None = None
    try:
        while True:
            if SearchCollection.objects.filter(pk=collection.pk, cancel_requested=True).exists():
                run.finish(status=SearchCollection.Status.CANCELLED, cancel_requested=False, stage="Cancelled.")
                break
            query = (
                SearchQuery.objects.filter(collection=collection, status=Status.PENDING)
                .order_by("iteration", "position")
                .first()
            )
            if query is None:
                run.finish(stage=_end_words(collection))
                break
            params = search_params(collection, query.query)
            cached = SearchResponse.objects.filter(project=collection.project, key=params_key(params)).first()
            if cached is not None:
                _record(run, collection, query, cached, status=Status.CACHED)
            else:
                if client is None:
                    client = (client_factory or serpapi_client)(_api_key(collection.project))
                response = _send(run, collection, query, params, client)
                if response is None:  # the budget is used up: the queries left are not sent
                    with transaction.atomic():
                        left = SearchQuery.objects.filter(collection=collection, status=Status.PENDING).update(
                            status=Status.OVER_BUDGET
                        )
                        run.finish(stage=f"Budget used up: {left:,} queries not sent (resume with a larger budget).")
                    break
                if isinstance(response, SearchResponse):
                    _record(run, collection, query, response, status=Status.SENT)
            pause_between_steps()
    except JobLost:
        pass  # cancelled while no worker seemed to hold it, or taken over: that run goes on
    except _Stop as error:
        run.fail(str(error), stage="Stopped.")
    except Exception as error:
        run.fail(error)
        raise
    finally:
        if client is not None:
            client.session.close()
    collection.refresh_from_db()
    return collection


def _end_words(collection: SearchCollection) -> str:
    failed = SearchQuery.objects.filter(collection=collection, status=Status.FAILED).count()
    return f"Finished; {failed:,} queries failed (resume to try them again)." if failed else "Finished."


def _api_key(project: Project) -> str:
    row = SearchKey.objects.filter(project=project).first()
    if row is None:
        raise _Stop("The project has no SerpApi key: set it, then resume.")
    try:
        return secret_decrypt(token=row.token)
    except SecretUnreadable as error:
        raise _Stop(str(error)) from None


def _reserve_call(run: JobRun, collection: SearchCollection) -> bool:
    """Count one call against the budget before sending it; False when the budget is used up."""
    if (
        run.rows()
        .filter(calls_sent__lt=F("budget"))
        .update(calls_sent=F("calls_sent") + 1, heartbeat_at=timezone.now())
    ):
        return True
    if not run.rows().exists():
        raise JobLost
    return False


def _send(
    run: JobRun, collection: SearchCollection, query: SearchQuery, params: dict[str, str], client: serpapi.Client
) -> SearchResponse | bool | None:
    """Send one query (tried again after a timeout or a server error): its stored response; False when it
    failed (recorded on the query); None when the budget left no call for it."""
    attempts = settings.SEARCH_MAX_ATTEMPTS
    for attempt in range(1, attempts + 1):
        if not _reserve_call(run, collection):
            return None if attempt == 1 else _query_failed(run, query, "The budget ran out while trying again.")
        run.beat(force=True, stage=f"Searching: {query.query[:150]}")
        try:
            body = serpapi_search(client, params)
        except SearchFailed as error:
            SearchQuery.objects.filter(pk=query.pk).update(failures=F("failures") + 1, error=error.message)
            if error.stops:
                raise _Stop(error.message) from None
            if not error.retry or attempt == attempts:
                tries = f" ({attempts} attempts)" if error.retry and attempts > 1 else ""
                return _query_failed(run, query, error.message + tries)
            time.sleep(settings.SEARCH_RETRY_BASE_SECONDS * 2 ** (attempt - 1))
            continue
        # Stored at once, in a commit of its own: a worker killed from here on never pays for this call again.
        try:
            with transaction.atomic():
                return SearchResponse.objects.create(
                    project=collection.project, key=params_key(params), params=params, body=body
                )
        except IntegrityError:  # another collection of the project stored the same request meanwhile
            return SearchResponse.objects.get(project=collection.project, key=params_key(params))
    return False


def _query_failed(run: JobRun, query: SearchQuery, message: str) -> bool:
    with transaction.atomic():
        SearchQuery.objects.filter(pk=query.pk, status=Status.PENDING).update(
            status=Status.FAILED, error=message, done_at=timezone.now()
        )
        run.beat(force=True, progress_done=F("progress_done") + 1)
    return False


@dataclass(frozen=True)
class Found:
    """What one response offers: QA pairs, and the queries of the next iteration."""

    pairs: list[CollectedPair]
    follow_ups: list[tuple[str, str]]  # (query, origin)
    without_answer: int


def _text(value: Any, limit: int) -> str:
    return " ".join(str(value).split())[:limit] if isinstance(value, str | int | float) else ""


def _answer_of(entry: Mapping[str, Any]) -> str:
    """A "people also ask" answer: its snippet, else its list (one line each), else its table's rows."""
    snippet = _text(entry.get("snippet") or entry.get("answer") or "", 20_000)
    if snippet:
        return snippet
    lines = entry.get("list")
    if isinstance(lines, list):
        return "\n".join(text for line in lines if (text := _text(line, 2000)))
    table = entry.get("table")
    if isinstance(table, list):
        return "\n".join(" | ".join(_text(cell, 500) for cell in row) for row in table if isinstance(row, list))
    return ""


def response_read(
    body: Mapping[str, Any], *, query: SearchQuery, collection: SearchCollection, response_id: int
) -> Found:
    """The QA pairs and follow-up queries of a stored response (hostile input: every field checked)."""
    if collection.search_type == SearchType.IMAGES:
        return images_read(body, query=query, collection=collection, response_id=response_id)
    pairs: list[CollectedPair] = []
    follow: list[tuple[str, str]] = []
    without = 0
    entries = body.get("related_questions")
    for number, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        question = _text(entry.get("question") or "", 2000)
        if not question:
            continue
        follow.append((question, SearchQuery.Origin.RELATED_QUESTION))
        answer = _answer_of(entry)
        if not answer:
            without += 1
            continue
        link = _text(entry.get("link") or "", 1000)
        pairs.append(
            CollectedPair(
                line=number + 1,
                question=question,
                answer=answer,
                source_urls=[link] if link.startswith(("http://", "https://")) else [],
                location=query.location,
                language=collection.project.standard_language,
                topic=query.topic,
                input_query=query.query,
                data_id=f"search-{collection.pk}-{query.pk}-{number + 1}",
                question_type="people_also_ask",
                metadata={
                    "search": {
                        "collection": collection.pk,
                        "engine": collection.engine,
                        "iteration": query.iteration,
                        "query_origin": query.origin,
                        "response": response_id,
                        "title": _text(entry.get("title") or "", 500),
                        "raw": entry,
                    }
                },
            )
        )
    searches = body.get("related_searches")
    for entry in searches if isinstance(searches, list) else []:
        text = _text(entry.get("query") or "", 500) if isinstance(entry, dict) else ""
        if text:
            follow.append((text, SearchQuery.Origin.RELATED_SEARCH))
    return Found(pairs, follow, without)


def images_read(
    body: Mapping[str, Any], *, query: SearchQuery, collection: SearchCollection, response_id: int
) -> Found:
    """An image search's response as one QA pair: the query as the question, the top image's title as the answer
    to check, and its image results (URL, thumbnail, source page, size) attached for validators to see beside it.
    A result without an http(s) image URL is left out (counted); its related searches feed the next iteration."""
    images: list[dict[str, Any]] = []
    left_out = 0
    entries = body.get("images_results")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            left_out += 1
            continue
        url, thumbnail = web_url(entry.get("original")), web_url(entry.get("thumbnail"))
        if not (url or thumbnail):
            left_out += 1
            continue
        if len(images) == MAX_IMAGES:
            continue
        images.append(
            {
                "position": entry.get("position") if isinstance(entry.get("position"), int) else len(images) + 1,
                "url": url,
                "thumbnail": thumbnail,
                "source": _text(entry.get("source") or "", 200),
                "source_url": web_url(entry.get("link")),
                "title": _text(entry.get("title") or "", 500),
                "width": entry.get("original_width") if isinstance(entry.get("original_width"), int) else None,
                "height": entry.get("original_height") if isinstance(entry.get("original_height"), int) else None,
                "raw": entry,
            }
        )
    follow: list[tuple[str, str]] = []
    searches = body.get("related_searches")
    for entry in searches if isinstance(searches, list) else []:
        text = _text(entry.get("query") or "", 500) if isinstance(entry, dict) else ""
        if text:
            follow.append((text, SearchQuery.Origin.RELATED_SEARCH))
    if not images:
        return Found([], follow, left_out)
    top = images[0]
    pair = CollectedPair(
        line=1,
        question=_text(query.query, 2000),
        answer=top["title"] or top["source"] or "(an image)",
        source_urls=[top["source_url"]] if top["source_url"] else [],
        location=query.location,
        language=collection.project.standard_language,
        topic=query.topic,
        input_query=query.query,
        data_id=f"search-{collection.pk}-{query.pk}-images",
        question_type="image",
        metadata={
            "search": {
                "collection": collection.pk,
                "engine": "google_images",
                "iteration": query.iteration,
                "query_origin": query.origin,
                "response": response_id,
                "images": images,
                "images_left_out": left_out,
            }
        },
    )
    return Found([pair], follow, left_out)


def _record(
    run: JobRun, collection: SearchCollection, query: SearchQuery, response: SearchResponse, *, status: str
) -> None:
    """One query's outcome in one transaction: its items, the next iteration's queries, its status, the counters."""
    found = response_read(response.body, query=query, collection=collection, response_id=response.pk)
    with transaction.atomic():
        if not SearchQuery.objects.filter(pk=query.pk, status=Status.PENDING).update(
            status=status, response=response, error="", done_at=timezone.now()
        ):
            return  # recorded by a run that held the collection before
        report = ImportReport()
        created = (
            collected_pairs_store(project=collection.project, pairs=found.pairs, user=None, report=report)
            if found.pairs
            else []
        )
        SearchQuery.objects.filter(pk=query.pk).update(items_created=len(created))
        added = _add_follow_ups(collection, query, found.follow_ups) if query.iteration < collection.iterations else 0
        run.beat(
            force=True,
            progress_done=F("progress_done") + 1,
            progress_total=F("progress_total") + added,
            calls_cached=F("calls_cached") + (1 if status == Status.CACHED else 0),
            items_created=F("items_created") + len(created),
            items_left_out=F("items_left_out") + report.already_present + found.without_answer,
        )


def _add_follow_ups(collection: SearchCollection, query: SearchQuery, follow_ups: list[tuple[str, str]]) -> int:
    """The next iteration's queries, without exact or near repeats of the collection's queries."""
    if not follow_ups:
        return 0
    room = MAX_QUERIES - SearchQuery.objects.filter(collection=collection).count()
    stored = {None: list(SearchQuery.objects.filter(collection=collection).values_list("normalised", flat=True))}
    threshold = validation_settings(collection.project).duplicate_threshold
    repeats = {d.index for d in find_duplicates([text for text, _ in follow_ups], threshold=threshold, stored=stored)}
    fresh = [(text, origin) for index, (text, origin) in enumerate(follow_ups) if index not in repeats][: max(room, 0)]
    start = (SearchQuery.objects.filter(collection=collection).aggregate(last=Max("position"))["last"] or 0) + 1
    SearchQuery.objects.bulk_create(
        SearchQuery(
            collection=collection,
            position=start + offset,
            query=text,
            normalised=normalise(text),
            iteration=query.iteration + 1,
            origin=origin,
            topic=query.topic,
            location=query.location,
        )
        for offset, (text, origin) in enumerate(fresh)
    )
    return len(fresh)

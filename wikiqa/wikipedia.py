"""The only code in localqa that talks to Wikipedia, through the wikipedia-api package (httpx).

Every request carries a User-Agent with the operator's contact (settings.WIKIPEDIA_CONTACT),
waits its turn behind a process-wide rate limit, and is retried with backoff on
timeouts, HTTP 429 (honouring Retry-After) and 5xx. A connection that cannot be made at all
(a name that does not resolve, a refused connection, no connection within CONNECT_TIMEOUT seconds)
is not retried: offline, every retry fails the same way, and the caller says so at once.
Callers get plain dataclasses and one exception type, `WikipediaError`, never library objects.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import wikipediaapi
from django.conf import settings

from annotation.languages import is_variant, is_wiki_code

USER_AGENT_NAME = "localqa/0.1"
CONNECT_TIMEOUT = 5.0  # seconds to open a connection; a reply may take the session's whole timeout
_HEADING = re.compile(r"(^|\n) *==+ .*? ==+ *(\n|$)")
_T = TypeVar("_T")


class WikipediaError(Exception):
    """A request that failed after its retries; the message says what happened, for the coordinator.
    `unreachable`: the wiki could not be reached at all (no connection: a name that does not resolve, a refused
    connection), so the failure is not the page's and every other request would fail the same way."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class LangLink:
    title: str
    url: str


@dataclass(frozen=True)
class PageFacts:
    """What one cheap request tells about a page: whether it exists, its revision, links to other wikis."""

    wiki: str
    requested_title: str
    exists: bool
    title: str = ""  # after redirects and normalisation
    pageid: int | None = None
    revision: int | None = None
    url: str = ""
    disambiguation: bool = False
    redirected: bool = False
    langlinks: dict[str, LangLink] = field(default_factory=dict)


@dataclass(frozen=True)
class PageContent:
    lead: str  # the text before the first heading (wikipedia-api's `summary`)
    text: str  # the full plain text


class RateLimitedTransport(httpx.BaseTransport):
    """Spaces requests at least `min_interval` seconds apart across every client that shares it."""

    def __init__(self, inner: httpx.BaseTransport, min_interval: float) -> None:
        self.inner = inner
        self.min_interval = min_interval
        self._lock = threading.Lock()
        self._next = 0.0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.min_interval > 0:
            with self._lock:
                now = time.monotonic()
                wait = self._next - now
                self._next = max(now, self._next) + self.min_interval
            if wait > 0:
                time.sleep(wait)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class Unreachable(Exception):
    """No connection to the wiki's host could be made. Not an httpx or wikipedia-api error, so the client's
    retries (meant for a busy or failing server) let it through at once."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"network error reaching {host}: {reason}")
        self.host = host
        self.reason = reason


class UnreachableNotRetried(httpx.BaseTransport):
    """Turns a connection that cannot be made into `Unreachable`, which the client does not retry."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return self.inner.handle_request(request)
        except httpx.ConnectTimeout:
            raise Unreachable(request.url.netloc.decode(), f"no connection within {CONNECT_TIMEOUT:g} s") from None
        except httpx.ConnectError as error:
            raise Unreachable(request.url.netloc.decode(), str(error) or "connection failed") from None

    def close(self) -> None:
        self.inner.close()


def user_agent() -> str:
    return f"{USER_AGENT_NAME} ({settings.WIKIPEDIA_CONTACT})"


class _Wikipedia(wikipediaapi.Wikipedia):
    """wikipedia-api's client with one combined request for a page's facts."""

    def _build_url(self, language: str) -> str:
        return settings.WIKIPEDIA_API_URL.format(wiki=language)

    def facts(self, title: str) -> PageFacts:
        page = self.page(title)
        params = {
            "action": "query",
            "prop": "info|pageprops|langlinks",
            "titles": title,
            "inprop": "url",
            "ppprop": "disambiguation",
            "lllimit": 500,
            "llprop": "url",
        }
        # The library's info builder copies every field of the reply onto the page, pageprops and langlinks included.
        self._dispatch_prop(page, params, page, self._build_info)
        attributes: dict[str, Any] = page._attributes
        pageid = attributes.get("pageid")
        if pageid is None or int(pageid) < 0 or "missing" in attributes or "invalid" in attributes:
            return PageFacts(wiki=self.language, requested_title=title, exists=False)
        links = {
            link["lang"]: LangLink(title=link.get("*") or link.get("title", ""), url=link.get("url", ""))
            for link in attributes.get("langlinks", [])
        }
        return PageFacts(
            wiki=self.language,
            requested_title=title,
            exists=True,
            title=attributes["title"],
            pageid=int(pageid),
            revision=attributes.get("lastrevid"),
            url=attributes.get("fullurl", ""),
            disambiguation="disambiguation" in (attributes.get("pageprops") or {}),
            redirected=bool(attributes.get("redirects")),
            langlinks=links,
        )


class WikiSession:
    """Clients for the wikis one collection needs, sharing a rate limit and an HTTP transport.

    `transport` replaces the network in tests (an `httpx.MockTransport` replaying recorded replies).
    """

    def __init__(
        self,
        *,
        transport: httpx.BaseTransport | None = None,
        min_interval: float | None = None,
        max_retries: int | None = None,
        retry_wait: float | None = None,
        timeout: float = 20.0,
    ) -> None:
        interval = settings.WIKIPEDIA_REQUEST_INTERVAL if min_interval is None else min_interval
        self.transport = RateLimitedTransport(UnreachableNotRetried(transport or httpx.HTTPTransport()), interval)
        self.max_retries = settings.WIKIPEDIA_MAX_RETRIES if max_retries is None else max_retries
        self.retry_wait = settings.WIKIPEDIA_RETRY_WAIT if retry_wait is None else retry_wait
        self.timeout = timeout
        self._clients: dict[tuple[str, str], _Wikipedia] = {}

    def _client(self, wiki: str, variant: str = "") -> _Wikipedia:
        key = (wiki, variant)
        if key not in self._clients:
            # The code becomes the host name: whatever a row or a caller says, only a wiki code gets this far.
            if not is_wiki_code(wiki) or (variant and not is_variant(variant)):
                raise WikipediaError(f"{wiki[:40]!r}/{variant[:40]!r} is not a wiki code and script variant.")
            self._clients[key] = _Wikipedia(
                user_agent=user_agent(),
                language=wiki,
                variant=variant or None,
                extract_format=wikipediaapi.ExtractFormat.WIKI,
                max_retries=self.max_retries,
                retry_wait=self.retry_wait,
                transport=self.transport,
                timeout=httpx.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT, self.timeout)),
            )
        return self._clients[key]

    def facts(self, wiki: str, title: str, *, variant: str = "") -> PageFacts:
        return _call(lambda: self._client(wiki, variant).facts(title), wiki, title)

    def content(self, wiki: str, title: str, *, variant: str = "") -> PageContent:
        def fetch() -> PageContent:
            page = self._client(wiki, variant).page(title)
            lead, text = page.summary, page.text
            if page.sections and _HEADING.search(lead):
                # No text before the first heading: wikipedia-api then returns the whole extract as the summary.
                lead = ""
                text = "".join(section.full_text(level=2) for section in page.sections).strip()
            return PageContent(lead=lead, text=text)

        return _call(fetch, wiki, title)

    def category_members(self, wiki: str, category: str) -> list[str]:
        """Titles of the articles (main namespace) in a category; `category` with or without its prefix."""

        def fetch() -> list[str]:
            client = self._client(wiki)
            name = category if ":" in category else f"Category:{category}"
            page = client.page(name, ns=wikipediaapi.Namespace.CATEGORY)
            members = client.categorymembers(page, cmnamespace=0)
            return [title for title, member in members.items() if member.ns == 0]

        return _call(fetch, wiki, category)

    def close(self) -> None:
        for client in self._clients.values():
            client._client.close()


def _call(fetch: Callable[[], _T], wiki: str, title: str) -> _T:
    try:
        return fetch()
    except wikipediaapi.WikiRateLimitError:
        raise WikipediaError(f"{wiki}.wikipedia.org kept answering 429 Too Many Requests for {title!r}") from None
    except wikipediaapi.WikiHttpError as error:
        raise WikipediaError(f"{wiki}.wikipedia.org answered HTTP {error.status_code} for {title!r}") from None
    except wikipediaapi.WikiHttpTimeoutError:
        raise WikipediaError(f"{wiki}.wikipedia.org did not answer in time for {title!r}") from None
    except Unreachable as error:
        raise WikipediaError(
            f"network error reaching {error.host} for {title!r}: {error.reason}", unreachable=True
        ) from None
    except wikipediaapi.WikiConnectionError as error:
        cause = error.__cause__
        raise WikipediaError(
            f"network error reaching {wiki}.wikipedia.org for {title!r}: {cause or 'connection failed'}",
            unreachable=True,
        ) from None
    except wikipediaapi.WikiInvalidJsonError:
        raise WikipediaError(f"{wiki}.wikipedia.org sent a reply that is not JSON for {title!r}") from None
    except (KeyError, TypeError, ValueError) as error:
        raise WikipediaError(f"{wiki}.wikipedia.org sent an unexpected reply for {title!r}: {error!r}") from None

"""Which hosts a model endpoint may reach: the operator's `MODEL_ALLOWED_HOSTS`, checked when an endpoint is
saved (`url_problem`) and on every request it sends, redirects included (`GuardedTransport`).

An entry is a host name or IP address, optionally with `:port` (no port: any), or `*.example.org` for any name
under that domain. A host listed exactly may resolve to any address, a model server on this machine or the
lab's network included. A wildcard match must resolve to public addresses only: never a private, loopback,
link-local (cloud metadata, 169.254.169.254), shared or reserved one.

`GuardedTransport` is the transport of the HTTP client the `openai` library is given. For each request (each
hop of a redirect is one) it checks the host, resolves the name once, checks every address, and connects to
the address it checked, with the name kept for TLS and the Host header: a name cannot pass the check with one
address and connect to another. It also caps the size of a reply.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import httpx2
from django.conf import settings

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


class HostRefused(Exception):
    """The URL names a host the operator does not allow (or one that resolves where it may not go)."""


class HostUnresolvable(Exception):
    """The host name does not resolve (now): a connection problem, not a refusal."""


class ReplyTooLarge(Exception):
    """The server sent more than MODEL_REPLY_MAX_BYTES."""


@dataclass(frozen=True)
class AllowedHost:
    host: str  # lower case, no trailing dot; for a wildcard the domain after "*."
    port: int | None
    wildcard: bool

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def url_host(url: httpx2.URL) -> str:
    """The URL's host as the allow-list compares it: ASCII (an international name in its xn-- form)."""
    host = normal_host(url.raw_host.decode("ascii"))
    return str(ipaddress.ip_address(host)) if _is_address(host) else host


HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


def allowed_host_parse(entry: str) -> AllowedHost | None:
    """One entry of MODEL_ALLOWED_HOSTS (`host`, `host:port`, `[v6]:port`, `*.domain`); None when it is not one
    (the system check names it)."""
    text = entry.strip().lower()
    wildcard = text.startswith("*.")
    rest = text[2:] if wildcard else text
    port_text = ""
    if rest.startswith("["):
        host, _, after = rest[1:].partition("]")
        if after:
            if not after.startswith(":"):
                return None
            port_text = after[1:]
    elif rest.count(":") == 1:
        host, port_text = rest.split(":")
    else:
        host = rest  # a name, an IPv4 address or a bare IPv6 address
    host = host.rstrip(".")
    if port_text and not (port_text.isdigit() and 0 < int(port_text) < 65536):
        return None
    port = int(port_text) if port_text else None
    if _is_address(host):
        return None if wildcard else AllowedHost(str(ipaddress.ip_address(host)), port, wildcard=False)
    if not HOST_NAME.fullmatch(host):
        return None
    return AllowedHost(host, port, wildcard)


def allowed_hosts() -> list[AllowedHost]:
    return [parsed for entry in settings.MODEL_ALLOWED_HOSTS if (parsed := allowed_host_parse(entry)) is not None]


def allowed_hosts_text() -> str:
    """The allow-list as people read it on the endpoint form."""
    return ", ".join(entry.strip() for entry in settings.MODEL_ALLOWED_HOSTS if entry.strip()) or "none"


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_allowed(host: str, port: int) -> AllowedHost:
    """The entry that allows `host:port` (an exact entry before a wildcard); HostRefused when none does."""
    entries = [entry for entry in allowed_hosts() if entry.matches(host, port)]
    if not entries:
        raise HostRefused(
            f"The host {host} (port {port}) is not allowed: the operator allows {allowed_hosts_text()} "
            "(MODEL_ALLOWED_HOSTS)."
        )
    return min(entries, key=lambda entry: entry.wildcard)


def addresses_allowed(host: str, port: int, entry: AllowedHost) -> list[str]:
    """The addresses `host` resolves to, each checked against the entry that allowed it."""
    if _is_address(host):
        found = [host]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            raise HostUnresolvable(f"The host {host} does not resolve: {error}.") from None
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if entry.wildcard:
        for address in found:
            if not is_public(address):
                raise HostRefused(
                    f"The host {host} resolves to {address}, which is not a public address: only a host the "
                    "operator lists exactly in MODEL_ALLOWED_HOSTS may reach a private, loopback or link-local one."
                )
    return found


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])  # an IPv6 zone ("fe80::1%eth0") is link-local anyway
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def url_problem(url: str, *, resolve: bool = True) -> str | None:
    """What is wrong with an endpoint's base URL, in a sentence; None when it may be saved.

    A name that does not resolve now is accepted (the model server may not be up yet): every call checks again.
    """
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError) as error:
        return f"This is not a URL: {error}."
    if parsed.scheme not in SCHEMES or not parsed.host:
        return "The base URL must start with http:// or https:// and name a host."
    if parsed.userinfo:
        return "Put no user name or password in the URL: the API key has a field of its own."
    if parsed.query or parsed.fragment:
        return "The base URL takes no query (?...) or fragment (#...)."
    host, port = url_host(parsed), parsed.port or DEFAULT_PORTS[parsed.scheme]
    try:
        entry = host_allowed(host, port)
        if resolve:
            addresses_allowed(host, port, entry)
    except HostRefused as refused:
        return str(refused)
    except HostUnresolvable:
        return None
    return None


class _CappedStream(httpx2.SyncByteStream):
    def __init__(self, stream: httpx2.SyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self._stream:
            total += len(chunk)
            if total > self._limit:
                raise ReplyTooLarge(f"The reply is longer than {self._limit:,} bytes (MODEL_REPLY_MAX_BYTES).")
            yield chunk

    def close(self) -> None:
        self._stream.close()


class GuardedTransport(httpx2.BaseTransport):
    """Checks and pins the address of every request it sends (see the module's docstring)."""

    def __init__(self, *, max_connections: int, max_bytes: int | None = None) -> None:
        limits = httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._inner = httpx2.HTTPTransport(limits=limits, trust_env=False)
        self._max_bytes = settings.MODEL_REPLY_MAX_BYTES if max_bytes is None else max_bytes

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme not in SCHEMES:
            raise HostRefused(f"Only http:// and https:// are allowed, not {url.scheme}://.")
        host, port = url_host(url), url.port or DEFAULT_PORTS[url.scheme]
        address = addresses_allowed(host, port, host_allowed(host, port))[0]
        extensions = dict(request.extensions)
        if not _is_address(host):
            extensions["sni_hostname"] = host  # TLS checks the certificate against the name, not the address
        pinned = httpx2.Request(
            request.method,
            url.copy_with(host=address),
            headers=request.headers,  # the Host header keeps the name
            stream=request.stream,
            extensions=extensions,
        )
        response = self._inner.handle_request(pinned)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        # Asked for no compression: a server that compresses anyway sends bytes that will not parse (recorded as
        # garbage) rather than a small body that unpacks past the cap.
        headers = [(name, value) for name, value in response.headers.raw if name.lower() != b"content-encoding"]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_CappedStream(response.stream, self._max_bytes),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._inner.close()

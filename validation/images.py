"""Which image URLs a page may load: image-search results come from anywhere on the web.

An image is shown inline only when its URL is https on a host of SEARCH_IMAGE_HOSTS (entries shaped as
MODEL_ALLOWED_HOSTS', endpoints/hosts.py), or plain http on a host the operator named with `http://`; the page's
Content-Security-Policy allows exactly those hosts as image sources (config/settings.py). Any other URL (another
host, another scheme, `javascript:`, a `data:` URL from a response) is never loaded: pages show it as a link, so a
validator's browser asks no unknown host for anything and leaks nothing to a tracker by merely opening the item.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from endpoints.hosts import DEFAULT_PORTS, allowed_host_parse, normal_host


def web_url(value: object) -> str:
    """The value when it is an http(s) URL with a host (what a link may point to), else ""."""
    if not isinstance(value, str):
        return ""
    url = value.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return url if parts.scheme in ("http", "https") and parts.hostname and len(url) <= 2000 else ""


def image_shown(url: str) -> bool:
    """Whether a page may load this image (see the module's docstring)."""
    url = web_url(url)
    if not url:
        return False
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return False
    host = normal_host(parts.hostname or "")
    for entry in settings.SEARCH_IMAGE_HOSTS:
        text = entry.strip()
        plain = text.lower().startswith("http://")
        if plain != (parts.scheme == "http"):
            continue
        allowed = allowed_host_parse(text[len("http://") :] if plain else text)
        if allowed is not None and allowed.matches(host, port):
            return True
    return False

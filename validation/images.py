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


MAX_SHOWN = 4  # image results beside the QA on the validation screen (the item keeps up to ten)


def item_images(metadata: object) -> list[dict[str, str]]:
    """The image results an item's search brought, as the validation screen shows them: `src` what the page loads
    (the thumbnail, else the image, when allowed; "" when neither is), `url` the image, `page` its source page."""
    search = metadata.get("search") if isinstance(metadata, dict) else None
    images = search.get("images") if isinstance(search, dict) else None
    shown = []
    for image in images if isinstance(images, list) else []:
        if not isinstance(image, dict):
            continue
        url, thumbnail = web_url(image.get("url")), web_url(image.get("thumbnail"))
        src = next((candidate for candidate in (thumbnail, url) if candidate and image_shown(candidate)), "")
        link = url or thumbnail
        shown.append(
            {
                "src": src,
                "url": link,
                "host": urlsplit(link).hostname or "",
                "page": web_url(image.get("source_url")),
                "source": str(image.get("source") or "")[:200],
                "title": str(image.get("title") or "")[:500],
            }
        )
        if len(shown) == MAX_SHOWN:
            break
    return shown

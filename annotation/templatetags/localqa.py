import functools
import json
from typing import Any

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe

from annotation import access, navigation
from annotation.articles import article_blocks
from annotation.models import Project

register = template.Library()

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody",
    "td", "th", "thead", "tr", "ul",
}  # fmt: skip


@functools.lru_cache(maxsize=64)
def _markdown_clean(text: str) -> str:
    html = markdown_lib.markdown(text, extensions=["tables", "sane_lists", "fenced_code"])
    return nh3.clean(html, tags=_ALLOWED_TAGS, url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer")


@register.filter
def render_markdown(text: str) -> SafeString:
    """Markdown to HTML, then sanitised: guidelines are user text and may carry anything. Kept per text (a
    project's guidelines are on each of its authoring pages and rarely change)."""
    return mark_safe(_markdown_clean(text or ""))  # noqa: S308 - sanitised by nh3


@register.filter
def duration(seconds: int | None) -> str:
    seconds = int(seconds or 0)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@register.filter
def get_item(mapping: dict[str, Any] | None, key: str) -> Any:
    return mapping.get(key) if mapping else None


@register.inclusion_tag("annotation/_nav_groups.html", takes_context=True)
def project_nav(context: template.Context, project: Project) -> dict:
    """The project's bar of task groups (annotation.navigation), for the member looking at it."""
    request = context.get("request")
    path = request.path if request is not None else ""
    # The view passes the membership its access check loaded; a page that does not is read here (one query).
    membership = context.get("membership")
    if membership is None and request is not None:
        membership = access.membership_of(request.user, project)
    return {
        "project": project,
        "groups": navigation.project_nav(project, membership, path),
        "home_current": path == project.get_absolute_url(),
    }


@register.filter
def diff_value(value: Any) -> str:
    """A value of a release record as text, for comparing two releases: absent is "—", lists and objects as
    JSON, long values cut at 300 characters."""
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:299] + "…"


@register.filter
def display(value: Any, kind: str = "") -> str:
    """The display name of a code (annotation.display): `{{ item.status|display:"item_status" }}`."""
    from annotation.display import display_name

    return display_name(value, kind)


@register.filter
def lang(code: str) -> SafeString:
    """` lang="…" dir="…"` of a language code, for every element holding text in it: `<td{{ code|lang }}>`."""
    from django.utils.html import format_html

    from annotation.languages import direction_of

    return format_html(' lang="{}" dir="{}"', code, direction_of(code))


@register.inclusion_tag("annotation/_article.html")
def wiki_article(text: str, lang: str = "", direction: str = "ltr") -> dict:
    """A full article with its wiki section headings shown as headings (annotation.articles)."""
    return {"blocks": article_blocks(text), "lang": lang, "direction": direction}

"""Hostile text in every user-writable field comes back as text: nothing in the HTML could run it.

The world (tests/security/hostile.py) puts one payload into project names, guidelines (Markdown), review
criteria, topics, page titles, leads and full texts, questions, answers, evidence, screening notes, review
comments, verification notes, label details, release changelogs, collection titles, import file names and
usernames, through the API where there is one. Every page that shows them is then read as HTML.
"""

from __future__ import annotations

import pytest

from annotation.templatetags.localqa import render_markdown
from tests.security.hostile import PAYLOADS, build_hostile_world, execution_risks, shows_literally


@pytest.fixture
def no_tasks(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)


@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_every_page_shows_hostile_text_as_text_and_nothing_that_could_run(client, coordinator, no_tasks, payload):
    world = build_hostile_world(payload, coordinator)
    for role, url, literal in world.pages:
        client.force_login(world.users[role])

        response = client.get(url)

        assert response.status_code == 200, f"{url} as {role}"
        page = response.content.decode()
        assert execution_risks(page) == [], f"{url} as {role}"
        if literal:
            assert shows_literally(page, payload), f"{url} as {role} does not show the text as it was written"


def test_the_inspector_notices_what_would_run():
    """The check above is only as good as this: each way in is caught when it is not escaped."""
    for name in ("script-tag", "img-onerror", "svg-onload", "javascript-url", "iframe", "style", "htmx-attributes"):
        assert execution_risks(f"<html><body><p>{PAYLOADS[name]}</p></body></html>"), name
    assert execution_risks('<body><input value="x" autofocus onfocus=alert(1)></body>')
    assert not execution_risks('<body><script type="application/json" id="x">{"a": "\\u003C/script\\u003E"}</script>')


@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_guidelines_markdown_is_sanitised(payload):
    html = render_markdown(f"Intro\n\n{payload}\n\n[x](javascript:alert(1)) <a href='javascript:alert(2)'>y</a>")

    assert execution_risks(f"<body>{html}</body>") == []
    assert '<a href="javascript' not in html


def test_usernames_with_markup_are_refused_where_people_sign_up(db):
    """Accounts come from createsuperuser and the admin, both behind Django's username validator."""
    from django.contrib.auth.validators import UnicodeUsernameValidator
    from django.core.exceptions import ValidationError

    for name in ("<b>x</b>", "a\u202eb", "x y", 'a"b'):
        with pytest.raises(ValidationError):
            UnicodeUsernameValidator()(name)

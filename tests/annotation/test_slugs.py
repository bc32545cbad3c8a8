"""A project's slug is checked on the server wherever it is set, and `/` survives a row made before the check."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from annotation.models import Project
from annotation.services.projects import project_create
from common.errors import InvalidInput
from multichoice import entities as entity_services
from multichoice.services.projects import trivia_project_create
from multichoice.views_entities import EXAMPLE_ATTRIBUTES
from tests import factories
from tests.conftest import api_as
from validation import services as validation_services

BAD_SLUGS = ["Doha Val!", "doha val", "doha/val", "dóha"]


@pytest.fixture
def creator(coordinator):
    coordinator.user_permissions.add(Permission.objects.get_by_natural_key("add_project", "annotation", "project"))
    return coordinator


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_every_kind_of_project_refuses_a_slug_that_no_url_can_hold(db, coordinator, slug):
    creators = [
        lambda: project_create(name="Doha", slug=slug, local_language="yue", standard_language="cmn"),
        lambda: validation_services.validation_project_create(name="Doha", slug=slug, language="eng"),
        lambda: trivia_project_create(
            name="Doha", slug=slug, source_language="eus", target_language="eng", categories=["Geography"]
        ),
        lambda: entity_services.entity_project_create(
            name="Doha", slug=slug, language="eng", attributes=EXAMPLE_ATTRIBUTES
        ),
    ]
    for create in creators:
        with pytest.raises(InvalidInput) as caught:
            create()
        assert caught.value.field == "slug"
        assert "letters, digits, hyphens and underscores" in caught.value.message
    assert not Project.all_objects.exists()


def test_a_slug_left_out_is_made_from_the_name(db):
    project = validation_services.validation_project_create(name="Doha Val!", language="eng")
    assert project.slug == "doha-val"


def test_a_name_with_no_latin_letters_needs_a_slug(db):
    with pytest.raises(InvalidInput, match="needs a slug") as caught:
        validation_services.validation_project_create(name="الدوحة", language="arb")
    assert caught.value.field == "slug"


@pytest.mark.parametrize(
    ("url_name", "fields"),
    [
        ("validation_project_create", {"language": "eng", "validators_per_item": "1"}),
        ("trivia_project_create", {"source_language": "eus", "target_language": "eng", "categories": "Geography"}),
        (
            "entity_project_create",
            # the attributes as the form's rows post them (`attribute-<n>-<field>`), all valid
            {
                "language": "eng",
                "grouping_fields": "market",
                "attribute_rows": str(len(EXAMPLE_ATTRIBUTES)),
                **{f"attribute-{i}-{k}": v for i, row in enumerate(EXAMPLE_ATTRIBUTES) for k, v in row.items()},
            },
        ),
    ],
)
def test_the_new_project_forms_show_a_bad_slug_beside_the_field_and_keep_the_input(client, creator, url_name, fields):
    client.force_login(creator)
    response = client.post(reverse(url_name), {"name": "Doha validation", "slug": "Doha Val!", **fields})

    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="id_slug_error"' in page and "is not a slug" in page
    assert 'aria-invalid="true"' in page
    assert 'value="Doha Val!"' in page and 'value="Doha validation"' in page
    assert not Project.all_objects.exists()
    # the coordinator's home page still works
    assert client.get("/").status_code == 200


def test_the_slug_input_pattern_is_the_server_rule(client, creator):
    client.force_login(creator)
    page = client.get(reverse("validation_project_create")).content.decode()
    assert 'pattern="[a-zA-Z0-9_\\-]+"' in page


@pytest.mark.parametrize(
    ("url_name", "body"),
    [
        ("api_projects", {"name": "Doha", "local_language": "yue", "standard_language": "cmn"}),
        ("api_validation_project_create", {"name": "Doha", "language": "eng"}),
        ("api_trivia_project_create", {"name": "Doha", "source_language": "eus", "target_language": "eng"}),
        ("api_entity_project_create", {"name": "Doha", "language": "eng", "attributes": EXAMPLE_ATTRIBUTES}),
    ],
)
def test_the_api_refuses_a_bad_slug_with_a_field_error(creator, url_name, body):
    response = api_as(creator).post(reverse(url_name), {**body, "slug": "Doha Val!"}, format="json")

    assert response.status_code == 400, response.content
    body = response.json()
    assert body.get("field") == "slug" or "slug" in body, body  # the service's error, or the serializer's
    assert not Project.all_objects.filter(name="Doha").exists()


def test_home_lists_a_project_whose_slug_no_url_can_hold_instead_of_failing(client, coordinator):
    good = factories.project(coordinator, slug="good-one")
    bad = factories.project(coordinator, slug="bad-one")
    Project.objects.filter(pk=bad.pk).update(slug="Doha Val!")  # as rows made before the check were
    client.force_login(coordinator)

    response = client.get("/")

    assert response.status_code == 200
    page = response.content.decode()
    assert f'href="{good.get_absolute_url()}"' in page
    assert "its slug “Doha Val!” cannot be used in a URL" in page


def test_the_wikipedia_form_makes_the_slug_from_the_name_as_the_other_kinds_do(client, db, coordinator):
    """Left empty, the slug is made from the name (a slug in use gets -2); a name in another script asks for one
    at the slug field."""
    coordinator.is_superuser = True  # may create projects
    coordinator.save()
    client.force_login(coordinator)
    form = {
        "name": "Cantonese – Mandarin",
        "slug": "",
        "local_language": "yue",
        "standard_language": "cmn",
        **{"lead_qa_min": 2, "lead_qa_max": 3, "reviewers_per_item": 1, "claim_minutes": 60},
    }
    for expected in ("cantonese-mandarin", "cantonese-mandarin-2"):
        response = client.post(reverse("project_create"), form)
        assert response.status_code == 302, response.context["form"].errors
        assert Project.objects.filter(slug=expected).exists()
    response = client.post(reverse("project_create"), {**form, "name": "粵語–普通話"})
    assert response.status_code == 200
    assert "needs a slug" in response.context["form"].errors["slug"][0]

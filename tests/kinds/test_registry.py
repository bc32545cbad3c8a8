"""Every project kind is one registered unit: each `Project.Kind` has one, with every part a kind needs."""

from django.urls import reverse

from annotation.models import Project
from common import kinds


def test_every_project_kind_is_registered_with_every_part():
    assert {kind.value for kind in kinds.registered()} == set(Project.Kind.values)
    for kind in kinds.registered():
        assert kind.missing() == [], kind.value
        assert kind.nav, kind.value
        for name in (kind.home, kind.settings, *(link.url_name for link in kind.nav)):
            reverse(name, args=["slug"])  # every URL name a unit holds resolves
        assert kind.release_writers is not None
        writers = kind.release_writers()
        assert type(writers[-1]).__name__ == "ManifestWriter", kind.value


def test_only_wikipedia_qa_writes_prompt_files_and_imports_page_pairs():
    from wikiqa.kind import PAIRS_IMPORTER

    assert [kind.value for kind in kinds.registered() if kind.prompt_templates] == [Project.Kind.WIKIPEDIA_QA]
    assert [kind.value for kind in kinds.registered() if kind.importer is PAIRS_IMPORTER] == [Project.Kind.WIKIPEDIA_QA]


def test_an_unregistered_kind_says_so():
    try:
        kinds.get("poetry")
    except LookupError as error:
        assert "poetry" in str(error)
    else:
        raise AssertionError("an unknown kind was found")


def test_extend_refuses_a_part_a_kind_does_not_have():
    try:
        kinds.extend(Project.Kind.TRIVIA, colour="red")
    except TypeError as error:
        assert "colour" in str(error)
    else:
        raise AssertionError("an unknown part was accepted")

"""schemathesis against our OpenAPI schema: generated requests to every operation, bounded and deterministic.

Signed in (token) as a member holding every role of a seeded project, with the URL's slug and object ids
pointed at that project's real objects so requests get past the 404 and into the code. No answer may be a
500, and every answer must match what the schema documents for its status (body and content type).
Hypothesis is derandomized: the same examples on every run, a few per operation (`MAX_EXAMPLES`).
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode, checks

from accounts.tokens import api_token_create
from annotation import ingest
from annotation.services.members import membership_set
from review import queue as review_queue
from tests import factories
from tests.exports.conftest import authored_pair
from tests.review.conftest import submitted_pair
from wikiqa import collect

MAX_EXAMPLES = 4  # per operation, positive and negative examples together
CONTENT_TYPE = checks.content_type_conformance
CHECKS = [checks.not_a_server_error, checks.response_schema_conformance, CONTENT_TYPE]


def _schema() -> schemathesis.BaseSchema:
    document = json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    schema = schemathesis.openapi.from_dict(document)
    schema.app = get_wsgi_application()
    return schema


schema = _schema()


@pytest.fixture
def keep_the_test_connection():
    """A WSGI request closes the database connection when it ends; the test's transaction lives on it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_world(keep_the_test_connection, project, coordinator, annotator, reviewer, settings, tmp_path, monkeypatch):
    """A project with one of everything the URLs name; the caller holds every role in it."""
    from exports import services as exports

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)
    monkeypatch.setattr("exports.tasks.release_build_task.delay", lambda release_id: None)
    membership_set(project=project, user=coordinator, roles={"coordinator", "annotator", "reviewer"})
    authored_pair(project, annotator)
    release = exports.release_build_now(project=project, user=coordinator, seed=1)
    pair, items = submitted_pair(project, annotator)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    job = ingest.import_job_create(
        project=project, user=coordinator, files=[SimpleUploadedFile("pairs.jsonl", b"")], dry_run=True
    )
    collection = collect.collection_create(project=project, user=coordinator, titles=["Minga"])
    factories.pair(project)
    return {
        "token": api_token_create(user=coordinator)[1],
        "path": {
            "slug": project.slug,
            "pair_id": pair.pk,
            "item_id": items[0].pk,
            "slot_id": slot.pk,
            "job_id": job.pk,
            "collection_id": collection.pk,
            "version": release.version,
            "username": reviewer.username,
            "name": "lead_qa.jsonl",
            "format_name": "wilova",
        },
    }


def _is_file_download(operation) -> bool:
    """Downloads are documented as binary; their zip/JSONL content types are not listed per operation."""
    content = operation.definition.raw.get("responses", {}).get("200", {}).get("content", {})
    return any(media.get("schema", {}).get("format") == "binary" for media in content.values())


def _runner(strategy, headers: dict[str, str], checks: list):
    @given(case=strategy)
    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
    )
    def run(case) -> None:
        case.validate_response(case.call(headers=headers), checks=checks)

    return run


@pytest.mark.postgresql(
    reason="PostgreSQL refuses what SQLite stores (NUL bytes, over-long text): the fuzz runs where a 500 can come from"
)
def test_no_generated_request_gets_a_500_or_an_answer_the_schema_does_not_describe(fuzz_world):
    headers = {"Authorization": f"Token {fuzz_world['token']}"}
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 50
    for operation in operations:
        names = {parameter.name for parameter in operation.path_parameters}
        # Path parameters stay valid (a malformed one only meets the URL resolver's HTML 404); the rest is generated.
        path = {name: fuzz_world["path"].get(name, 1) for name in names}
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE, path_parameters=path),
            operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=path),
        )
        checks = [check for check in CHECKS if not (_is_file_download(operation) and check is CONTENT_TYPE)]

        run = _runner(strategy, headers, checks)
        try:
            run()
        except (Exception, BaseExceptionGroup) as error:  # one report per failing operation, not only the first
            failures.append(f"{operation.method.upper()} {operation.path}: {str(error)[:1500]}")
    assert not failures, "\n\n".join(failures)

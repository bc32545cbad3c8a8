"""A project archive carries its endpoints, calls and cached replies; never an API key."""

from __future__ import annotations

import zipfile

from archive import services as archives
from endpoints import services
from endpoints.models import CachedReply, Endpoint, EndpointSecret, ModelCall


def test_endpoints_move_with_the_project_without_their_key(
    project, coordinator, endpoint, model_stub, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")
    out = tmp_path / "yue.zip"
    archives.archive_write_to(project=project, out=out)

    copy, _ = archives.archive_import_file(path=out, slug="yue-copy")

    moved = Endpoint.objects.get(project=copy)
    assert (moved.name, moved.base_url, moved.model) == (endpoint.name, endpoint.base_url, endpoint.model)
    assert not EndpointSecret.objects.filter(endpoint=moved).exists()
    assert EndpointSecret.objects.filter(endpoint=endpoint).exists()
    assert ModelCall.objects.filter(project=copy, endpoint=moved).count() == 1
    assert CachedReply.objects.filter(project=copy).count() == 1
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        contents = b"".join(archive.read(name) for name in names)
    assert "data/endpoints.endpoint.jsonl" in names and "data/endpoints.endpointsecret.jsonl" not in names
    stored = EndpointSecret.objects.get(endpoint=endpoint).token.encode()
    assert b"sk-test" not in contents and stored not in contents

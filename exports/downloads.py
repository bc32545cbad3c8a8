"""Streamed downloads of published releases, shared by the pages and the API."""

from __future__ import annotations

import mimetypes

from django.http import FileResponse, StreamingHttpResponse

from exports import services
from exports.models import Release

CONTENT_TYPES = {".jsonl": "application/x-ndjson; charset=utf-8", ".md": "text/markdown; charset=utf-8"}


def file_response(release: Release, name: str) -> FileResponse:
    path = services.release_file_path(release, name)
    suffix = path.suffix
    content_type = CONTENT_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    download_name = f"{release.project.slug}-v{release.version}-{name.replace('/', '-')}"
    return FileResponse(path.open("rb"), as_attachment=True, filename=download_name, content_type=content_type)


def archive_response(release: Release) -> FileResponse | StreamingHttpResponse:
    """The zip built when the release was published, sent as a file; zipped while sent for a release without one."""
    path = services.release_archive_path(release)
    if path is not None:
        return FileResponse(
            path.open("rb"),
            as_attachment=True,
            filename=services.release_archive_name(release),
            content_type="application/zip",
        )
    response = StreamingHttpResponse(services.release_archive_stream(release), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{services.release_archive_name(release)}"'
    return response

"""The archive file of a finished export, streamed (pages and API)."""

from __future__ import annotations

from django.http import FileResponse

from archive import services
from archive.models import ProjectArchive
from common.errors import InvalidState


def export_response(archive: ProjectArchive) -> FileResponse:
    path = services.archive_file(archive)
    if not archive.is_done or not archive.path or not path.is_file():
        raise InvalidState("This export is not finished (or its file was removed); there is nothing to download.")
    return FileResponse(path.open("rb"), as_attachment=True, filename=archive.file_name, content_type="application/zip")

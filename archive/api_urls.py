from django.urls import path

from archive import api

urlpatterns = [
    path("projects/<slug:slug>/archives/", api.ProjectArchiveListApi.as_view(), name="api_project_archives"),
    path(
        "projects/<slug:slug>/archives/<int:archive_id>/",
        api.ProjectArchiveDetailApi.as_view(),
        name="api_project_archive",
    ),
    path(
        "projects/<slug:slug>/archives/<int:archive_id>/download/",
        api.ProjectArchiveDownloadApi.as_view(),
        name="api_project_archive_download",
    ),
    path("archive-imports/", api.ArchiveImportListApi.as_view(), name="api_archive_imports"),
    path("archive-imports/<int:archive_id>/", api.ArchiveImportDetailApi.as_view(), name="api_archive_import"),
]

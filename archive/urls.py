from django.urls import path

from archive import views

urlpatterns = [
    path("projects/<slug:slug>/archives/", views.project_archives, name="project_archives"),
    path("projects/<slug:slug>/archives/new/", views.project_archive_start, name="project_archive_start"),
    path(
        "projects/<slug:slug>/archives/<int:archive_id>/", views.project_archive_detail, name="project_archive_detail"
    ),
    path(
        "projects/<slug:slug>/archives/<int:archive_id>/download/",
        views.project_archive_download,
        name="project_archive_download",
    ),
    path("archives/imports/", views.archive_imports, name="archive_imports"),
    path("archives/imports/new/", views.archive_import_start, name="archive_import_start"),
    path("archives/imports/<int:archive_id>/", views.archive_import_detail, name="archive_import_detail"),
]

from django.urls import path

from exports import views

urlpatterns = [
    path("projects/<slug:slug>/releases/", views.release_list, name="release_list"),
    path("projects/<slug:slug>/releases/new/", views.release_create, name="release_create"),
    path("projects/<slug:slug>/releases/compare/", views.release_diff, name="release_diff"),
    path("projects/<slug:slug>/releases/settings/", views.export_settings, name="export_settings"),
    path("projects/<slug:slug>/releases/<int:version>/", views.release_detail, name="release_detail"),
    path("projects/<slug:slug>/releases/<int:version>/rebuild/", views.release_rebuild, name="release_rebuild"),
    path("projects/<slug:slug>/releases/<int:version>/cancel/", views.release_cancel, name="release_cancel"),
    path("projects/<slug:slug>/releases/<int:version>/archive.zip", views.release_archive, name="release_archive"),
    path("projects/<slug:slug>/releases/<int:version>/files/<path:name>", views.release_file, name="release_file"),
    path("projects/<slug:slug>/formats/<slug:format_name>/", views.project_format_download, name="project_format"),
]

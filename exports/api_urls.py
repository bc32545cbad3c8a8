from django.urls import path

from exports import api

urlpatterns = [
    path("projects/<slug:slug>/releases/", api.ReleaseListApi.as_view(), name="api_releases"),
    path("projects/<slug:slug>/releases/diff/", api.ReleaseDiffApi.as_view(), name="api_release_diff"),
    path("projects/<slug:slug>/releases/readiness/", api.ReleaseReadinessApi.as_view(), name="api_release_readiness"),
    path("projects/<slug:slug>/releases/<int:version>/", api.ReleaseDetailApi.as_view(), name="api_release"),
    path(
        "projects/<slug:slug>/releases/<int:version>/rebuild/",
        api.ReleaseRebuildApi.as_view(),
        name="api_release_rebuild",
    ),
    path(
        "projects/<slug:slug>/releases/<int:version>/cancel/",
        api.ReleaseCancelApi.as_view(),
        name="api_release_cancel",
    ),
    path(
        "projects/<slug:slug>/releases/<int:version>/archive/",
        api.ReleaseArchiveApi.as_view(),
        name="api_release_archive",
    ),
    path(
        "projects/<slug:slug>/releases/<int:version>/files/<path:name>",
        api.ReleaseFileApi.as_view(),
        name="api_release_file",
    ),
    path("projects/<slug:slug>/export-settings/", api.ExportSettingsApi.as_view(), name="api_export_settings"),
    path("projects/<slug:slug>/formats/<slug:format_name>/", api.ProjectFormatApi.as_view(), name="api_project_format"),
]

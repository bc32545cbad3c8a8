from django.urls import path

from annotation import api_deleted

urlpatterns = [
    path("deleted-projects/", api_deleted.DeletedProjectListApi.as_view(), name="api_deleted_projects"),
    path("deleted-projects/<slug:slug>/restore/", api_deleted.ProjectRestoreApi.as_view(), name="api_project_restore"),
    path("projects/<slug:slug>/deleted/", api_deleted.DeletedListApi.as_view(), name="api_deleted"),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/restore/",
        api_deleted.PairRestoreApi.as_view(),
        name="api_pair_restore",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/restore/",
        api_deleted.ItemRestoreApi.as_view(),
        name="api_item_restore",
    ),
]

from django.urls import path

from annotation.views import authoring, deleted, imports, projects

urlpatterns = [
    path("", projects.home, name="home"),
    path("projects/new/", projects.project_create, name="project_create"),
    path("deleted-projects/", deleted.deleted_projects, name="deleted_projects"),
    path("deleted-projects/<slug:slug>/restore/", deleted.project_restore, name="project_restore"),
    path("projects/<slug:slug>/", projects.project_detail, name="project_detail"),
    path("projects/<slug:slug>/settings/", projects.project_settings, name="project_settings"),
    path("projects/<slug:slug>/delete/", deleted.project_delete, name="project_delete"),
    path("projects/<slug:slug>/deleted/", deleted.deleted_list, name="deleted_list"),
    path("projects/<slug:slug>/members/", projects.project_members, name="project_members"),
    path(
        "projects/<slug:slug>/members/<str:username>/remove/",
        projects.project_member_remove,
        name="project_member_remove",
    ),
    path("projects/<slug:slug>/guidelines/", projects.project_guidelines, name="project_guidelines"),
    path("projects/<slug:slug>/pairs/", projects.pair_list, name="pair_list"),
    path("projects/<slug:slug>/import/", imports.import_start, name="import_start"),
    path("projects/<slug:slug>/imports/<int:job_id>/", imports.import_detail, name="import_detail"),
    path("projects/<slug:slug>/imports/<int:job_id>/rerun/", imports.import_rerun, name="import_rerun"),
    path("projects/<slug:slug>/collect/", imports.collection_start, name="collection_start"),
    path("projects/<slug:slug>/collections/<int:collection_id>/", imports.collection_detail, name="collection_detail"),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/cancel/",
        imports.collection_cancel,
        name="collection_cancel",
    ),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/resume/",
        imports.collection_resume,
        name="collection_resume",
    ),
    path("projects/<slug:slug>/items/", projects.item_list, name="item_list"),
    path("projects/<slug:slug>/next/", authoring.queue_next, name="queue_next"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/", authoring.pair_detail, name="pair_detail"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/screen/", authoring.pair_screen, name="pair_screen"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/submit/", authoring.pair_submit, name="pair_submit"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/delete/", deleted.pair_delete, name="pair_delete"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/restore/", deleted.pair_restore, name="pair_restore"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/activity/", authoring.pair_activity, name="pair_activity"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/items/new/", authoring.item_create, name="item_create"),
    path("projects/<slug:slug>/items/<int:item_id>/save/", authoring.item_save, name="item_save"),
    path("projects/<slug:slug>/items/<int:item_id>/delete/", authoring.item_delete, name="item_delete"),
    path("projects/<slug:slug>/items/<int:item_id>/restore/", deleted.item_restore, name="item_restore"),
]

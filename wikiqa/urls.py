"""The Wikipedia QA kind's pages: imports, collections and authoring (paths and names as they were in
`annotation`)."""

from django.urls import path

from wikiqa.views import authoring, imports

urlpatterns = [
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
    path("projects/<slug:slug>/next/", authoring.queue_next, name="queue_next"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/", authoring.pair_detail, name="pair_detail"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/screen/", authoring.pair_screen, name="pair_screen"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/submit/", authoring.pair_submit, name="pair_submit"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/give-back/", authoring.pair_give_back, name="pair_give_back"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/skip/undo/", authoring.pair_skip_undo, name="pair_skip_undo"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/activity/", authoring.pair_activity, name="pair_activity"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/items/new/", authoring.item_create, name="item_create"),
    path("projects/<slug:slug>/items/<int:item_id>/save/", authoring.item_save, name="item_save"),
    path("projects/<slug:slug>/items/<int:item_id>/local-check/", authoring.item_local_check, name="item_local_check"),
    path("projects/<slug:slug>/items/<int:item_id>/delete/", authoring.item_delete, name="item_delete"),
]

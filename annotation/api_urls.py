from django.urls import path

from annotation import api, api_imports

urlpatterns = [
    path("projects/", api.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api_project"),
    path("projects/<slug:slug>/next-steps/", api.NextStepsApi.as_view(), name="api_next_steps"),
    path("projects/<slug:slug>/queue/next/", api.QueueNextApi.as_view(), name="api_queue_next"),
    path("projects/<slug:slug>/pairs/", api.PairListApi.as_view(), name="api_pairs"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/", api.PairDetailApi.as_view(), name="api_pair"),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/screening/", api.PairScreeningApi.as_view(), name="api_pair_screening"
    ),
    path("projects/<slug:slug>/pairs/<int:pair_id>/items/", api.PairItemListApi.as_view(), name="api_pair_items"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/submit/", api.PairSubmitApi.as_view(), name="api_pair_submit"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/activity/", api.PairActivityApi.as_view(), name="api_pair_activity"),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/give-back/", api.PairGiveBackApi.as_view(), name="api_pair_give_back"
    ),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/skip/undo/",
        api.PairSkipUndoApi.as_view(),
        name="api_pair_skip_undo",
    ),
    path("projects/<slug:slug>/items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api_item"),
    path("projects/<slug:slug>/items/<int:item_id>/warnings/", api.ItemWarningsApi.as_view(), name="api_item_warnings"),
    path(
        "projects/<slug:slug>/items/<int:item_id>/local-check/",
        api.ItemLocalCheckApi.as_view(),
        name="api_item_local_check",
    ),
    path("projects/<slug:slug>/imports/", api_imports.ImportListApi.as_view(), name="api_imports"),
    path("projects/<slug:slug>/imports/<int:job_id>/", api_imports.ImportDetailApi.as_view(), name="api_import"),
    path(
        "projects/<slug:slug>/imports/<int:job_id>/rerun/",
        api_imports.ImportRerunApi.as_view(),
        name="api_import_rerun",
    ),
]

from django.urls import path

from validation import model_views, search_views, views

P = "projects/<slug:slug>/validation/"

urlpatterns = [
    path("validation/new/", views.validation_project_create, name="validation_project_create"),
    path(P, views.validation_home, name="validation_home"),
    path(P + "settings/", views.validation_settings, name="validation_settings"),
    path(P + "import/", views.validation_import, name="validation_import"),
    path(P + "import/<int:job_id>/", views.validation_import_job, name="validation_import_job"),
    path(P + "seeds/", views.validation_seeds, name="validation_seeds"),
    path(P + "seeds.csv", views.validation_seeds_csv, name="validation_seeds_csv"),
    path(P + "domains/", views.validation_domains, name="validation_domains"),
    path(P + "duplicates/", views.validation_duplicates, name="validation_duplicates"),
    path(P + "duplicates/merge/", views.validation_merge, name="validation_merge"),
    path(P + "duplicates/merge-all/", views.validation_merge_all, name="validation_merge_all"),
    path(P + "items/", views.validation_items, name="validation_items"),
    path(P + "items/<int:item_id>/", views.validation_item, name="validation_item"),
    path(P + "items/<int:item_id>/final-answer/", views.validation_final_answer, name="validation_final_answer"),
    path(P + "next/", views.validation_next, name="validation_next"),
    path(P + "tasks/<int:slot_id>/", views.validation_task, name="validation_task"),
    path(P + "agreement/", views.validation_agreement, name="validation_agreement"),
    path(P + "suggestions/", model_views.validation_suggestions, name="validation_suggestions"),
    path(P + "model-jobs/<int:model_job_id>/", model_views.validation_model_job, name="validation_model_job"),
    path(P + "seeds/drafts/", model_views.validation_seed_drafts, name="validation_seed_drafts"),
    path(P + "seeds/drafts/<int:draft_id>/", model_views.validation_seed_draft, name="validation_seed_draft"),
    path(P + "search/", search_views.validation_search, name="validation_search"),
    path(P + "search/<int:collection_id>/", search_views.validation_search_detail, name="validation_search_detail"),
    path(
        P + "search/<int:collection_id>/cancel/", search_views.validation_search_cancel, name="validation_search_cancel"
    ),
    path(
        P + "search/<int:collection_id>/resume/", search_views.validation_search_resume, name="validation_search_resume"
    ),
]

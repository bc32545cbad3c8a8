from django.urls import path

from validation import api, model_api, search_api

P = "projects/<slug:slug>/validation/"

urlpatterns = [
    path("validation/projects/", api.ProjectCreateApi.as_view(), name="api_validation_project_create"),
    path(P + "settings/", api.SettingsApi.as_view(), name="api_validation_settings"),
    path(P + "import/", api.ItemImportApi.as_view(), name="api_validation_import"),
    path(P + "seeds/", api.SeedListApi.as_view(), name="api_validation_seeds"),
    path(P + "locations/", api.LocationListApi.as_view(), name="api_validation_locations"),
    path(P + "seeds/import/", api.SeedImportApi.as_view(), name="api_validation_seeds_import"),
    path(P + "seeds/csv/", api.SeedCsvApi.as_view(), name="api_validation_seeds_csv"),
    path(P + "domains/", api.DomainListApi.as_view(), name="api_validation_domains"),
    path(P + "domains/import/", api.DomainImportApi.as_view(), name="api_validation_domains_import"),
    path(P + "domains/<str:domain>/", api.DomainDetailApi.as_view(), name="api_validation_domain"),
    path(P + "duplicates/", api.DuplicateListApi.as_view(), name="api_validation_duplicates"),
    path(P + "duplicates/merge/", api.MergeApi.as_view(), name="api_validation_merge"),
    path(P + "duplicates/merge-all/", api.MergeAllApi.as_view(), name="api_validation_merge_all"),
    path(P + "items/", api.ItemListApi.as_view(), name="api_validation_items"),
    path(P + "items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api_validation_item"),
    path(P + "items/<int:item_id>/final-answer/", api.FinalAnswerApi.as_view(), name="api_validation_final_answer"),
    path(P + "next/", api.NextApi.as_view(), name="api_validation_next"),
    path(P + "tasks/<int:slot_id>/", api.TaskApi.as_view(), name="api_validation_task"),
    path(P + "tasks/<int:slot_id>/skip/", api.TaskSkipApi.as_view(), name="api_validation_task_skip"),
    path(P + "agreement/", api.AgreementApi.as_view(), name="api_validation_agreement"),
    path(P + "suggestions/", model_api.SuggestionJobListApi.as_view(), name="api_validation_suggestions"),
    path(P + "model-jobs/<int:model_job_id>/", model_api.ModelJobDetailApi.as_view(), name="api_validation_model_job"),
    path(P + "seeds/drafts/", model_api.SeedDraftListApi.as_view(), name="api_validation_seed_drafts"),
    path(P + "seeds/drafts/<int:draft_id>/", model_api.SeedDraftReviewApi.as_view(), name="api_validation_seed_draft"),
    path(P + "search/key/", search_api.SearchKeyApi.as_view(), name="api_validation_search_key"),
    path(P + "search/", search_api.SearchCollectionListApi.as_view(), name="api_validation_searches"),
    path(
        P + "search/<int:collection_id>/", search_api.SearchCollectionDetailApi.as_view(), name="api_validation_search"
    ),
    path(
        P + "search/<int:collection_id>/queries/",
        search_api.SearchQueryListApi.as_view(),
        name="api_validation_search_queries",
    ),
    path(
        P + "search/<int:collection_id>/cancel/",
        search_api.SearchCancelApi.as_view(),
        name="api_validation_search_cancel",
    ),
    path(
        P + "search/<int:collection_id>/resume/",
        search_api.SearchResumeApi.as_view(),
        name="api_validation_search_resume",
    ),
]

from django.urls import path

from multichoice import api, api_entities

P = "projects/<slug:slug>/trivia/"

urlpatterns = [
    path("trivia/projects/", api.ProjectCreateApi.as_view(), name="api_trivia_project_create"),
    path(P + "settings/", api.SettingsApi.as_view(), name="api_trivia_settings"),
    path(P + "items/", api.ItemListApi.as_view(), name="api_trivia_items"),
    path(P + "items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api_trivia_item"),
    path(P + "items/<int:item_id>/review/", api.ReviewApi.as_view(), name="api_trivia_review"),
    path(P + "items/<int:item_id>/translation/", api.TranslationApi.as_view(), name="api_trivia_translation"),
    path(P + "items/<int:item_id>/resolution/", api.ResolutionApi.as_view(), name="api_trivia_resolution"),
    path(P + "review/next/", api.ReviewNextApi.as_view(), name="api_trivia_review_next"),
    path(P + "suggestions/", api.TranslationSuggestionListApi.as_view(), name="api_trivia_suggestions"),
    path(
        P + "suggestions/<int:model_job_id>/",
        api.TranslationSuggestionJobApi.as_view(),
        name="api_trivia_suggestion_job",
    ),
    path(P + "translate/next/", api.TranslateNextApi.as_view(), name="api_trivia_translate_next"),
    path(P + "problems/", api.ProblemListApi.as_view(), name="api_trivia_problems"),
    path(P + "balance/", api.BalanceApi.as_view(), name="api_trivia_balance"),
    path(P + "import/", api.ImportApi.as_view(), name="api_trivia_import"),
    path(P + "imports/", api.ImportListApi.as_view(), name="api_trivia_imports"),
    path(P + "imports/<int:import_id>/undo/", api.ImportUndoApi.as_view(), name="api_trivia_import_undo"),
    path(P + "items/<int:item_id>/send-back/", api.SendBackApi.as_view(), name="api_trivia_send_back"),
    path(P + "export/csv/", api.ExportCsvApi.as_view(), name="api_trivia_export_csv"),
    path(P + "export/jsonl/", api.ExportJsonlApi.as_view(), name="api_trivia_export_jsonl"),
]

E = "projects/<slug:slug>/entities/"

urlpatterns += [
    path("entities/projects/", api_entities.ProjectCreateApi.as_view(), name="api_entity_project_create"),
    path(E, api_entities.EntityListApi.as_view(), name="api_entities"),
    path(E + "import/", api_entities.EntityImportApi.as_view(), name="api_entity_import"),
    path(E + "correct/", api_entities.EntityCorrectApi.as_view(), name="api_entity_correct"),
    path(E + "generate/", api_entities.GenerateApi.as_view(), name="api_entity_generate"),
    path(E + "questions/", api_entities.QuestionListApi.as_view(), name="api_entity_questions"),
    path(E + "verify/next/", api_entities.VerifyNextApi.as_view(), name="api_entity_verify_next"),
    path(E + "questions/<int:item_id>/", api_entities.VerifyApi.as_view(), name="api_entity_verify"),
]

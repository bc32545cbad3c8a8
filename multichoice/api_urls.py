from django.urls import path

from multichoice import api

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
    path(P + "translate/next/", api.TranslateNextApi.as_view(), name="api_trivia_translate_next"),
    path(P + "problems/", api.ProblemListApi.as_view(), name="api_trivia_problems"),
    path(P + "balance/", api.BalanceApi.as_view(), name="api_trivia_balance"),
    path(P + "import/", api.ImportApi.as_view(), name="api_trivia_import"),
    path(P + "export/csv/", api.ExportCsvApi.as_view(), name="api_trivia_export_csv"),
    path(P + "export/jsonl/", api.ExportJsonlApi.as_view(), name="api_trivia_export_jsonl"),
]

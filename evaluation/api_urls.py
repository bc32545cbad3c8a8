from django.urls import path

from evaluation import api

urlpatterns = [
    path("projects/<slug:slug>/evaluation/runs/", api.RunListApi.as_view(), name="api_evaluation_runs"),
    path(
        "projects/<slug:slug>/evaluation/runs/generate/", api.RunGenerateApi.as_view(), name="api_evaluation_generate"
    ),
    path("projects/<slug:slug>/evaluation/runs/<int:run_id>/", api.RunDetailApi.as_view(), name="api_evaluation_run"),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/predictions/",
        api.RunPredictionsApi.as_view(),
        name="api_evaluation_predictions",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/results.csv",
        api.RunResultsCsvApi.as_view(),
        name="api_evaluation_csv",
    ),
]

from django.urls import path

from evaluation import api, goldflags_api, judge_api, local_check_api

urlpatterns = [
    path(
        "projects/<slug:slug>/local-knowledge-check/",
        local_check_api.LocalCheckSettingApi.as_view(),
        name="api_local_check_settings",
    ),
    path("projects/<slug:slug>/evaluation/runs/", api.RunListApi.as_view(), name="api_evaluation_runs"),
    path("projects/<slug:slug>/evaluation/nativqa/", api.NativqaApi.as_view(), name="api_evaluation_nativqa"),
    path(
        "projects/<slug:slug>/evaluation/leaderboard/", api.LeaderboardApi.as_view(), name="api_evaluation_leaderboard"
    ),
    path(
        "projects/<slug:slug>/evaluation/leaderboard.<str:fmt>",
        api.LeaderboardDownloadApi.as_view(),
        name="api_evaluation_leaderboard_download",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/generate/", api.RunGenerateApi.as_view(), name="api_evaluation_generate"
    ),
    path("projects/<slug:slug>/evaluation/runs/<int:run_id>/", api.RunDetailApi.as_view(), name="api_evaluation_run"),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/predictions/",
        api.RunPredictionsApi.as_view(),
        name="api_evaluation_predictions",
    ),
    # A release item id may hold a slash (a trivia item's external id): `path`, the flags' route matched first.
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/items/<path:release_item>/gold-flags/",
        goldflags_api.GoldFlagApi.as_view(),
        name="api_evaluation_gold_flag",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/items/<path:release_item>/",
        goldflags_api.RunItemApi.as_view(),
        name="api_evaluation_item",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/results.csv",
        api.RunResultsCsvApi.as_view(),
        name="api_evaluation_csv",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/results.<str:fmt>",
        api.RunResultsDownloadApi.as_view(),
        name="api_evaluation_results",
    ),
    path("projects/<slug:slug>/evaluation/judge-prompt/", judge_api.JudgePromptApi.as_view(), name="api_judge_prompt"),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/",
        judge_api.JudgmentListApi.as_view(),
        name="api_judgments",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/",
        judge_api.JudgmentDetailApi.as_view(),
        name="api_judgment",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/verdicts.csv",
        judge_api.JudgmentCsvApi.as_view(),
        name="api_judgment_csv",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/resume/",
        judge_api.JudgmentResumeApi.as_view(),
        name="api_judgment_resume",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/items/",
        judge_api.JudgedItemListApi.as_view(),
        name="api_judged_items",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/samples/",
        judge_api.JudgmentSampleApi.as_view(),
        name="api_judgment_samples",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/check/next/",
        judge_api.JudgeCheckNextApi.as_view(),
        name="api_judge_check_next",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/items/<int:judged_id>/check/",
        judge_api.JudgedItemCheckApi.as_view(),
        name="api_judged_item_check",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/judgments/<int:judgment_id>/items/<int:judged_id>/override/",
        judge_api.JudgedItemOverrideApi.as_view(),
        name="api_judged_item_override",
    ),
    path(
        "projects/<slug:slug>/evaluation/runs/<int:run_id>/compare/",
        judge_api.RunCompareApi.as_view(),
        name="api_evaluation_compare",
    ),
]

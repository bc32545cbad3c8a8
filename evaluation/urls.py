from django.urls import path

from evaluation import judge_views, local_check_views, views

urlpatterns = [
    path(
        "projects/<slug:slug>/local-knowledge-check/",
        local_check_views.local_check_settings,
        name="local_check_settings",
    ),
    path("projects/<slug:slug>/evaluation/", views.run_list, name="evaluation_runs"),
    path("projects/<slug:slug>/evaluation/nativqa/", views.nativqa, name="evaluation_nativqa"),
    path("projects/<slug:slug>/evaluation/leaderboard/", views.leaderboard, name="evaluation_leaderboard"),
    path(
        "projects/<slug:slug>/evaluation/leaderboard.<str:fmt>",
        views.leaderboard_download,
        name="evaluation_leaderboard_download",
    ),
    path("projects/<slug:slug>/evaluation/new/", views.run_create, name="evaluation_run_create"),
    path("projects/<slug:slug>/evaluation/generate/", views.run_generate, name="evaluation_run_generate"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/", views.run_detail, name="evaluation_run"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/items/", views.run_items, name="evaluation_items"),
    # A release item id may hold a slash (a trivia item's external id): `path`, the flag's route matched first.
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/items/<path:release_item>/gold-flag/",
        views.gold_flag,
        name="evaluation_gold_flag",
    ),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/items/<path:release_item>/",
        views.run_item,
        name="evaluation_item",
    ),
    path("projects/<slug:slug>/evaluation/<int:run_id>/score/", views.run_score, name="evaluation_run_score"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/results.csv", views.run_results_csv, name="evaluation_csv"),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/results.<str:fmt>",
        views.run_results_download,
        name="evaluation_results",
    ),
    path("projects/<slug:slug>/evaluation/judge-prompt/", judge_views.judge_prompt, name="evaluation_judge_prompt"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/judge/", judge_views.judgments, name="evaluation_judgments"),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/",
        judge_views.judgment_detail,
        name="evaluation_judgment",
    ),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/verdicts.csv",
        judge_views.judgment_csv,
        name="evaluation_judgment_csv",
    ),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/resume/",
        judge_views.judgment_resume,
        name="evaluation_judgment_resume",
    ),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/sample/",
        judge_views.judgment_sample,
        name="evaluation_judgment_sample",
    ),
    path("projects/<slug:slug>/evaluation/judge-checks/", judge_views.judge_checks, name="evaluation_judge_checks"),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/check/",
        judge_views.judge_check,
        name="evaluation_judge_check",
    ),
    path(
        "projects/<slug:slug>/evaluation/<int:run_id>/judge/<int:judgment_id>/items/<int:judged_id>/override/",
        judge_views.judged_item_override,
        name="evaluation_judged_override",
    ),
    path("projects/<slug:slug>/evaluation/<int:run_id>/compare/", judge_views.run_compare, name="evaluation_compare"),
]

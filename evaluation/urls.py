from django.urls import path

from evaluation import views

urlpatterns = [
    path("projects/<slug:slug>/evaluation/", views.run_list, name="evaluation_runs"),
    path("projects/<slug:slug>/evaluation/new/", views.run_create, name="evaluation_run_create"),
    path("projects/<slug:slug>/evaluation/generate/", views.run_generate, name="evaluation_run_generate"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/", views.run_detail, name="evaluation_run"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/items/", views.run_items, name="evaluation_items"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/score/", views.run_score, name="evaluation_run_score"),
    path("projects/<slug:slug>/evaluation/<int:run_id>/results.csv", views.run_results_csv, name="evaluation_csv"),
]

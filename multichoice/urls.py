from django.urls import path

from multichoice import views, views_entities

P = "projects/<slug:slug>/trivia/"

urlpatterns = [
    path("trivia/new/", views.trivia_project_create, name="trivia_project_create"),
    path(P, views.trivia_home, name="trivia_home"),
    path(P + "settings/", views.trivia_settings, name="trivia_settings"),
    path(P + "items/", views.trivia_items, name="trivia_items"),
    path(P + "items/new/", views.trivia_item_new, name="trivia_item_new"),
    path(P + "items/<int:item_id>/", views.trivia_item, name="trivia_item"),
    path(P + "items/<int:item_id>/review/", views.trivia_review, name="trivia_review"),
    path(P + "items/<int:item_id>/resolve/", views.trivia_resolve, name="trivia_resolve"),
    path(P + "review/next/", views.trivia_review_next, name="trivia_review_next"),
    path(P + "translate/next/", views.trivia_translate_next, name="trivia_translate_next"),
    path(P + "translate/<int:item_id>/", views.trivia_translate, name="trivia_translate"),
    path(P + "problems/", views.trivia_problems, name="trivia_problems"),
    path(P + "suggestions/", views.trivia_suggestions, name="trivia_suggestions"),
    path(P + "balance/", views.trivia_balance, name="trivia_balance"),
    path(P + "import/", views.trivia_import, name="trivia_import"),
    path(P + "jobs/<int:job_id>/", views.trivia_job, name="trivia_job"),
    path(P + "imports/<int:import_id>/undo/", views.trivia_import_undo, name="trivia_import_undo"),
    path(P + "items/<int:item_id>/send-back/", views.trivia_send_back, name="trivia_send_back"),
    path(P + "export.csv", views.trivia_export_csv, name="trivia_export_csv"),
    path(P + "export.jsonl", views.trivia_export_jsonl, name="trivia_export_jsonl"),
]

E = "projects/<slug:slug>/entities/"

urlpatterns += [
    path("entities/new/", views_entities.entity_project_create, name="entity_project_create"),
    path(E, views_entities.entity_home, name="entity_home"),
    path(E + "import/", views_entities.entity_import, name="entity_import"),
    path(E + "jobs/<int:job_id>/", views_entities.entity_job, name="entity_job"),
    path(E + "correct/", views_entities.entity_correct, name="entity_correct"),
    path(E + "generate/", views_entities.entity_generate, name="entity_generate"),
    path(E + "verify/next/", views_entities.entity_verify_next, name="entity_verify_next"),
    path(E + "questions/<int:item_id>/", views_entities.entity_verify, name="entity_verify"),
]

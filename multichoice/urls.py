from django.urls import path

from multichoice import views

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
    path(P + "balance/", views.trivia_balance, name="trivia_balance"),
    path(P + "import/", views.trivia_import, name="trivia_import"),
    path(P + "export.csv", views.trivia_export_csv, name="trivia_export_csv"),
    path(P + "export.jsonl", views.trivia_export_jsonl, name="trivia_export_jsonl"),
]

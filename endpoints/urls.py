from django.urls import path

from endpoints import views

urlpatterns = [
    path("projects/<slug:slug>/model-endpoints/", views.endpoint_list, name="endpoint_list"),
    path("projects/<slug:slug>/model-endpoints/new/", views.endpoint_new, name="endpoint_new"),
    path("projects/<slug:slug>/model-endpoints/<int:endpoint_id>/", views.endpoint_edit, name="endpoint_edit"),
    path("projects/<slug:slug>/model-endpoints/<int:endpoint_id>/test/", views.endpoint_test, name="endpoint_test"),
    path(
        "projects/<slug:slug>/model-endpoints/<int:endpoint_id>/delete/",
        views.endpoint_delete,
        name="endpoint_delete",
    ),
    path(
        "projects/<slug:slug>/model-endpoints/<int:endpoint_id>/cache/clear/",
        views.endpoint_cache_clear,
        name="endpoint_cache_clear",
    ),
]

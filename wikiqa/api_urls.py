from django.urls import path

from wikiqa import api

urlpatterns = [
    path("projects/<slug:slug>/collections/", api.CollectionListApi.as_view(), name="api_collections"),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/",
        api.CollectionDetailApi.as_view(),
        name="api_collection",
    ),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/titles/",
        api.CollectionTitlesApi.as_view(),
        name="api_collection_titles",
    ),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/cancel/",
        api.CollectionCancelApi.as_view(),
        name="api_collection_cancel",
    ),
    path(
        "projects/<slug:slug>/collections/<int:collection_id>/resume/",
        api.CollectionResumeApi.as_view(),
        name="api_collection_resume",
    ),
]

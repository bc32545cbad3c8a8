from django.urls import path

from endpoints import api

urlpatterns = [
    path("projects/<slug:slug>/model-endpoints/", api.EndpointListApi.as_view(), name="api_endpoints"),
    path(
        "projects/<slug:slug>/model-endpoints/<int:endpoint_id>/", api.EndpointDetailApi.as_view(), name="api_endpoint"
    ),
    path(
        "projects/<slug:slug>/model-endpoints/<int:endpoint_id>/test/",
        api.EndpointTestApi.as_view(),
        name="api_endpoint_test",
    ),
    path(
        "projects/<slug:slug>/model-endpoints/<int:endpoint_id>/cache/",
        api.EndpointCacheApi.as_view(),
        name="api_endpoint_cache",
    ),
    path("projects/<slug:slug>/model-calls/", api.ModelCallListApi.as_view(), name="api_model_calls"),
]

from django.urls import path

from annotation import api_audit as api

urlpatterns = [
    path("audit/", api.SiteAuditApi.as_view(), name="api_audit"),
    path("projects/<slug:slug>/audit/", api.ProjectAuditApi.as_view(), name="api_project_audit"),
]

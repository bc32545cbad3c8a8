from django.urls import path

from annotation.views import audit_log as views

urlpatterns = [
    path("audit/", views.audit_site, name="audit_site"),
    path("projects/<slug:slug>/audit/", views.audit_project, name="audit_project"),
]

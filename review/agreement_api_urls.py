from django.urls import path

from review import api_agreement

P = "projects/<slug:slug>/agreement/"

urlpatterns = [
    path(P + "reports/", api_agreement.ReportListApi.as_view(), name="api_agreement_reports"),
    path(P + "reports/<int:report_id>/", api_agreement.ReportDetailApi.as_view(), name="api_agreement_report"),
]

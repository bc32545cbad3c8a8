from django.urls import path

from review.views import agreement

P = "projects/<slug:slug>/agreement/"

urlpatterns = [
    path(P, agreement.agreement, name="agreement"),
    path(P + "compute/", agreement.agreement_compute, name="agreement_compute"),
    path(P + "reports/<int:report_id>/", agreement.agreement, name="agreement_report"),
    path(P + "reports/<int:report_id>/download.<str:fmt>", agreement.agreement_download, name="agreement_download"),
]

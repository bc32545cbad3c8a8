from django.urls import path

from review import api_calculator

urlpatterns = [
    path("agreement/calculate/", api_calculator.AgreementCalculateApi.as_view(), name="api_agreement_calculate"),
]

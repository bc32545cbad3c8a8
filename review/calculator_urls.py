from django.urls import path

from review.views import calculator

urlpatterns = [
    path("agreement/calculator/", calculator.agreement_calculator, name="agreement_calculator"),
    path(
        "agreement/calculator/result.<str:fmt>",
        calculator.agreement_calculator_download,
        name="agreement_calculator_download",
    ),
]

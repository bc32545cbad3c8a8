from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.views import auth

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", auth.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("accounts/invitation/<uidb64>/<token>/", auth.InvitationAcceptView.as_view(), name="invitation_accept"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
    path("api/auth/", include("accounts.api_auth_urls")),
    path("api/", include("annotation.api_urls")),
    path("api/", include("wikiqa.api_urls")),
    path("api/", include("accounts.api_people_urls")),
    path("api/", include("review.api_urls")),
    path("api/", include("review.calculator_api_urls")),
    path("api/", include("review.agreement_api_urls")),
    path("api/", include("exports.api_urls")),
    path("api/", include("validation.api_urls")),
    path("api/", include("multichoice.api_urls")),
    path("api/", include("annotation.api_deleted_urls")),
    path("api/", include("annotation.api_audit_urls")),
    path("api/", include("archive.api_urls")),
    path("api/", include("endpoints.api_urls")),
    path("api/", include("evaluation.api_urls")),
    path("account/", include("accounts.account_urls")),
    path("", include("annotation.urls")),
    path("", include("wikiqa.urls")),
    path("", include("accounts.urls")),
    path("", include("review.urls")),
    path("", include("review.calculator_urls")),
    path("", include("review.agreement_urls")),
    path("", include("exports.urls")),
    path("", include("validation.urls")),
    path("", include("multichoice.urls")),
    path("", include("annotation.audit_urls")),
    path("", include("archive.urls")),
    path("", include("endpoints.urls")),
    path("", include("evaluation.urls")),
]

handler500 = "config.errors.server_error"

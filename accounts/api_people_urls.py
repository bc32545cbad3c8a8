from django.urls import path

from accounts import api_people

M = "projects/<slug:slug>/members/<str:username>/"

urlpatterns = [
    path("projects/<slug:slug>/members/", api_people.MemberListApi.as_view(), name="api_members"),
    path("projects/<slug:slug>/members/<str:username>/", api_people.MemberDetailApi.as_view(), name="api_member"),
    path("auth/password/", api_people.PasswordChangeApi.as_view(), name="api_password_change"),
    path("auth/password-reset/", api_people.PasswordResetApi.as_view(), name="api_password_reset"),
    path("projects/<slug:slug>/people/", api_people.PeopleApi.as_view(), name="api_people"),
    path("projects/<slug:slug>/people/import/", api_people.PeopleImportApi.as_view(), name="api_people_import"),
    path(M + "deactivate/", api_people.MemberDeactivateApi.as_view(), name="api_member_deactivate"),
    path(M + "reactivate/", api_people.MemberReactivateApi.as_view(), name="api_member_reactivate"),
    path(M + "access/", api_people.MemberAccessApi.as_view(), name="api_member_access"),
    path(
        "accounts/<str:username>/deactivate/",
        api_people.AccountActiveApi.as_view(active=False),
        name="api_account_deactivate",
    ),
    path(
        "accounts/<str:username>/reactivate/",
        api_people.AccountActiveApi.as_view(active=True),
        name="api_account_reactivate",
    ),
]

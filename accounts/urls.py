from django.urls import path

from accounts.views import auth, people

urlpatterns = [
    path("accounts/session/", auth.session_state, name="session_state"),
    path("accounts/signed-in/", auth.signed_in, name="signed_in"),
    path("projects/<slug:slug>/members/", people.project_members, name="project_members"),
    path("projects/<slug:slug>/members/import/", people.project_people_import, name="project_people_import"),
    path(
        "projects/<slug:slug>/members/<str:username>/remove/",
        people.project_member_remove,
        name="project_member_remove",
    ),
    path(
        "projects/<slug:slug>/members/<str:username>/deactivate/",
        people.project_member_deactivate,
        name="project_member_deactivate",
    ),
    path(
        "projects/<slug:slug>/members/<str:username>/reactivate/",
        people.project_member_reactivate,
        name="project_member_reactivate",
    ),
    path(
        "projects/<slug:slug>/members/<str:username>/access/",
        people.project_member_access,
        name="project_member_access",
    ),
    path(
        "projects/<slug:slug>/members/<str:username>/account/deactivate/",
        people.account_set_active,
        {"active": False},
        name="account_deactivate",
    ),
    path(
        "projects/<slug:slug>/members/<str:username>/account/reactivate/",
        people.account_set_active,
        {"active": True},
        name="account_reactivate",
    ),
]

from django.urls import path

from accounts import api_auth

urlpatterns = [
    path("token/", api_auth.TokenObtainApi.as_view(), name="api_token"),
    path("tokens/", api_auth.TokenListApi.as_view(), name="api_tokens"),
    path("tokens/revoke-all/", api_auth.TokenRevokeAllApi.as_view(), name="api_tokens_revoke_all"),
    path("tokens/<int:token_id>/", api_auth.TokenDetailApi.as_view(), name="api_token_detail"),
]

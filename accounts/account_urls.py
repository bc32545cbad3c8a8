from django.urls import path

from accounts.views import account

urlpatterns = [
    path("tokens/", account.api_tokens_page, name="api_tokens_page"),
    path("tokens/revoke-all/", account.api_tokens_revoke_all, name="api_tokens_page_revoke_all"),
    path("tokens/<int:token_id>/revoke/", account.api_token_revoke, name="api_token_page_revoke"),
]

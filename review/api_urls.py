from django.urls import path

from review import api

P = "projects/<slug:slug>/"

urlpatterns = [
    path(P + "review/items/", api.ReviewItemListApi.as_view(), name="api_review_items"),
    path(P + "my-items/", api.MyItemsApi.as_view(), name="api_my_items"),
    path(P + "review/settings/", api.ReviewSettingsApi.as_view(), name="api_review_settings"),
    path(P + "review/next/", api.ReviewNextApi.as_view(), name="api_review_next"),
    path(P + "review/items/<int:item_id>/claim/", api.ReviewClaimApi.as_view(), name="api_review_claim"),
    path(P + "review/slots/<int:slot_id>/", api.ReviewSlotApi.as_view(), name="api_review_slot"),
    path(P + "review/slots/<int:slot_id>/release/", api.ReviewReleaseApi.as_view(), name="api_review_release"),
    path(P + "review/slots/<int:slot_id>/activity/", api.ReviewActivityApi.as_view(), name="api_review_activity"),
    path(P + "items/<int:item_id>/reject/", api.ItemRejectApi.as_view(), name="api_item_reject"),
    path(P + "items/<int:item_id>/resubmit/", api.ItemResubmitApi.as_view(), name="api_item_resubmit"),
    path(
        P + "items/<int:item_id>/reviewer-rewrite/",
        api.ItemReviewerRewriteApi.as_view(),
        name="api_item_reviewer_rewrite",
    ),
    path(P + "items/<int:item_id>/history/", api.ItemHistoryApi.as_view(), name="api_item_history"),
    path(P + "items/<int:item_id>/verification/", api.ItemVerificationApi.as_view(), name="api_item_verification"),
    path(P + "pairs/<int:pair_id>/labels/", api.PairLabelsApi.as_view(), name="api_pair_labels"),
    path(P + "pairs/<int:pair_id>/labels/final/", api.FinalLabelApi.as_view(), name="api_pair_final_label"),
    path(P + "labels/adjudication/", api.AdjudicationListApi.as_view(), name="api_adjudication"),
    path(P + "dashboard/", api.DashboardApi.as_view(), name="api_dashboard"),
    path(P + "pairs/<int:pair_id>/document-qa/", api.DocumentQaApi.as_view(), name="api_document_qa"),
    path(P + "reviewers/", api.ReviewerListApi.as_view(), name="api_reviewers"),
    path(P + "reviewers/<str:username>/languages/", api.ReviewerLanguagesApi.as_view(), name="api_reviewer_languages"),
]

from django.urls import path

from review.views import items, labels, queue, settings

P = "projects/<slug:slug>/"

urlpatterns = [
    path(P + "review/", queue.review_queue, name="review_queue"),
    path(P + "review/next/", queue.review_next, name="review_next"),
    path(P + "review/items/<int:item_id>/claim/", queue.review_claim, name="review_claim"),
    path(P + "review/<int:slot_id>/", queue.review_slot, name="review_slot"),
    path(P + "review/<int:slot_id>/release/", queue.review_release, name="review_release"),
    path(P + "review/<int:slot_id>/activity/", queue.review_activity, name="review_activity"),
    path(P + "items/<int:item_id>/history/", items.item_history, name="item_history"),
    path(P + "items/<int:item_id>/reject/", items.item_reject, name="item_reject"),
    path(P + "items/<int:item_id>/rewrite/", items.item_rewrite, name="item_rewrite"),
    path(P + "items/<int:item_id>/resubmit/", items.item_resubmit, name="item_resubmit"),
    path(P + "items/<int:item_id>/reviewer-rewrite/", items.item_reviewer_rewrite, name="item_reviewer_rewrite"),
    path(P + "items/<int:item_id>/verify/", items.item_verify, name="item_verify"),
    path(P + "my-items/", items.my_items, name="my_items"),
    path(P + "pairs/<int:pair_id>/document-qa/", items.document_qa, name="document_qa"),
    path(P + "labels/", labels.label_list, name="label_list"),
    path(P + "pairs/<int:pair_id>/labels/", labels.pair_labels, name="pair_labels"),
    path(P + "adjudication/", labels.adjudication, name="adjudication"),
    path(P + "pairs/<int:pair_id>/labels/final/", labels.label_adjudicate, name="label_adjudicate"),
    path(P + "dashboard/", labels.dashboard, name="dashboard"),
    path(P + "reviewers/", labels.reviewers, name="reviewers"),
    path(P + "review/settings/", settings.review_settings, name="review_settings"),
]

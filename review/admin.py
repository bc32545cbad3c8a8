"""Read-mostly admin views of review data: history rows are never edited here."""

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from annotation.models import ItemEvent
from review.models import ArticleLabel, FinalLabel, Judgment, ReviewerLanguages, ReviewSlot, Verification


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ReviewSlot)
class ReviewSlotAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "number", "status", "reviewer", "claimed_at", "completed_at"]
    list_filter = ["status"]
    raw_id_fields = ["item", "revision", "reviewer"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "criterion", "verdict", "reviewer", "created_at"]
    list_filter = ["verdict", "criterion"]
    raw_id_fields = ["slot", "item", "revision", "reviewer"]


@admin.register(ItemEvent)
class ItemEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "action", "from_status", "to_status", "actor", "created_at"]
    list_filter = ["action"]
    raw_id_fields = ["item", "actor"]


@admin.register(Verification)
class VerificationAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "number", "result", "verifier", "created_at"]
    raw_id_fields = ["item", "verifier"]


@admin.register(ArticleLabel)
class ArticleLabelAdmin(ReadOnlyAdmin):
    list_display = ["id", "pair", "labeller", "kind", "value", "detail", "created_at", "superseded_at"]
    list_filter = ["kind"]
    raw_id_fields = ["pair", "labeller"]


@admin.register(FinalLabel)
class FinalLabelAdmin(ReadOnlyAdmin):
    list_display = ["id", "pair", "kind", "value", "method", "adjudicator", "updated_at"]
    raw_id_fields = ["pair", "adjudicator"]


@admin.register(ReviewerLanguages)
class ReviewerLanguagesAdmin(admin.ModelAdmin):
    list_display = ["membership", "languages", "version", "updated_at"]
    raw_id_fields = ["membership"]

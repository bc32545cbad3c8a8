from django.contrib import admin
from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem, QAItemRevision, Screening
from audit import services as audit
from audit.models import Action


class PurgeAdmin(admin.ModelAdmin):
    """Deleted rows are listed too (filter on "deleted at"); deleting here purges for good: superusers only.

    The app itself deletes softly (and restores); a purge is recorded in the audit log.
    """

    purge_action = ""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return self.model._base_manager.all()  # soft-deleted rows too

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return bool(request.user.is_superuser)

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        with transaction.atomic():
            audit.record(request.user, self.purge_action, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with transaction.atomic():
            for obj in queryset:
                audit.record(request.user, self.purge_action, obj)
            super().delete_queryset(request, queryset)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return Membership.all_objects.all()  # deactivated members too (the default manager hides them)


@admin.register(Project)
class ProjectAdmin(PurgeAdmin):
    purge_action = Action.PROJECT_PURGED
    list_display = ["name", "slug", "local_language", "standard_language", "created_at", "deleted_at"]
    list_filter = ["deleted_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(PagePair)
class PagePairAdmin(PurgeAdmin):
    purge_action = Action.PAIR_PURGED
    list_display = ["id", "project", "local_title", "standard_title", "status", "assignee", "deleted_at"]
    list_filter = ["status", "source", "project", "deleted_at"]
    search_fields = ["local_title", "standard_title"]
    raw_id_fields = ["assignee"]
    list_select_related = ["project", "assignee"]


class EvidenceSpanInline(admin.TabularInline):
    model = EvidenceSpan
    extra = 0


class RevisionInline(admin.TabularInline):
    model = QAItemRevision
    extra = 0
    can_delete = False
    readonly_fields = ["number", "question", "answer_standard", "answer_local", "spans", "author", "reason"]

    def has_add_permission(self, request: HttpRequest, obj: QAItem | None = None) -> bool:
        return False  # revisions are made by the review workflow, never by hand


@admin.register(QAItem)
class QAItemAdmin(PurgeAdmin):
    purge_action = Action.ITEM_PURGED
    list_display = ["id", "project", "pair", "kind", "status", "author", "updated_at", "deleted_at"]
    list_filter = ["status", "kind", "project", "deleted_at"]
    search_fields = ["question", "answer_standard", "answer_local"]
    raw_id_fields = ["pair", "author"]
    list_select_related = ["project", "pair", "author"]
    inlines = [EvidenceSpanInline, RevisionInline]


@admin.register(Screening)
class ScreeningAdmin(admin.ModelAdmin):
    list_display = ["pair", "annotator", "decision", "created_at"]
    list_filter = ["decision"]
    raw_id_fields = ["pair", "annotator"]

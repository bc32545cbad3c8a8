from django.contrib import admin

from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem, QAItemRevision, Screening


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "local_language", "standard_language", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(PagePair)
class PagePairAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "local_title", "standard_title", "status", "assignee"]
    list_filter = ["status", "source", "project"]
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

    def has_add_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False  # revisions are made by the review workflow, never by hand


@admin.register(QAItem)
class QAItemAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "pair", "kind", "status", "author", "updated_at"]
    list_filter = ["status", "kind", "project"]
    search_fields = ["question", "answer_standard", "answer_local"]
    raw_id_fields = ["pair", "author"]
    list_select_related = ["project", "pair", "author"]
    inlines = [EvidenceSpanInline, RevisionInline]


@admin.register(Screening)
class ScreeningAdmin(admin.ModelAdmin):
    list_display = ["pair", "annotator", "decision", "created_at"]
    list_filter = ["decision"]
    raw_id_fields = ["pair", "annotator"]

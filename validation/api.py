"""The validation REST API: the same services as the pages, through `validation.access`."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import ingest
from annotation.access import require_project_creator
from annotation.models import ImportJob, Project, Role
from common.api import paginated, responses, validated
from common.errors import InvalidInput
from common.pagination import BoundedLimitOffsetPagination
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from review.models import ReviewSlot
from validation import services
from validation.access import get_slot_for_validator, get_validation_item, get_validation_project
from validation.models import QUESTION_BAD_REASONS, SeedQuery, SourceDomain
from validation.serializers import (
    SuggestionOutput,
    ValidationAgreementOutput,
    ValidationDomainDetailOutput,
    ValidationDomainImportInput,
    ValidationDomainLabelInput,
    ValidationDomainOutput,
    ValidationDomainRelabelInput,
    ValidationDuplicateGroupOutput,
    ValidationFinalAnswerInput,
    ValidationImportJobOutput,
    ValidationItemDetailOutput,
    ValidationItemImportInput,
    ValidationItemOutput,
    ValidationJudgmentInput,
    ValidationJudgmentOutput,
    ValidationLocationSerializer,
    ValidationMergeAllInput,
    ValidationMergeAllOutput,
    ValidationMergeInput,
    ValidationNextInput,
    ValidationProjectCreateInput,
    ValidationSeedCreateInput,
    ValidationSeedImportInput,
    ValidationSeedQueryOutput,
    ValidationSeedReportOutput,
    ValidationSettingsOutput,
    ValidationSettingsUpdateInput,
    ValidationTaskOutput,
)

TAG = ["validation"]


def _job_accepted(project: Project, job: ImportJob) -> Response:
    """202 with the queued import job and where to poll it (called inside the transaction that queued it, so that
    a worker quicker than this answer cannot have taken it yet)."""
    body = ValidationImportJobOutput(services.validation_import_jobs(project).get(pk=job.pk)).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class ProjectCreateApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Create a validation project (needs the permission to add projects)",
        request=ValidationProjectCreateInput,
        responses=responses({201: ValidationSettingsOutput}, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        require_project_creator(request.user)
        data = validated(ValidationProjectCreateInput, request.data)
        project = services.validation_project_create(created_by=request.user, **data)
        return Response(
            ValidationSettingsOutput(services.validation_settings(project)).data, status=status.HTTP_201_CREATED
        )


class SettingsApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Validation settings (any member)",
        responses=responses({200: ValidationSettingsOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug)
        return Response(ValidationSettingsOutput(services.validation_settings(project)).data)

    @extend_schema(
        tags=TAG,
        summary="Change the validation settings (coordinator); `version` guards against a concurrent change",
        request=ValidationSettingsUpdateInput,
        responses=responses({200: ValidationSettingsOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationSettingsUpdateInput, request.data)
        settings = services.validation_settings_update(project=project, user=request.user, **data)
        settings.project.refresh_from_db()
        return Response(ValidationSettingsOutput(settings).data)


class ItemImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=TAG,
        summary="Queue an import of collected QA pairs from TSV, CSV or JSONL (coordinator); all or nothing",
        description=(
            "202 with the import job; a worker imports the file. Poll `url` (the project's import job) for "
            "`percent` and, once `status` is done or refused, the `report` (problems by file, line and field; "
            "a refused import wrote nothing). 400 when the upload itself is unusable (no file, unknown format, "
            "over IMPORT_MAX_BYTES)."
        ),
        request={"multipart/form-data": ValidationItemImportInput},
        responses=responses({202: ValidationImportJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationItemImportInput, request.data)
        with transaction.atomic():  # the job answered as accepted: the worker hears of it once this commits
            job = ingest.import_job_create(
                project=project, user=request.user, files=[data["file"]], format=data["format"], dry_run=data["dry_run"]
            )
            return _job_accepted(project, job)


class SeedListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Seed queries (coordinator)",
        responses=responses({200: ValidationSeedQueryOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        return paginated(
            self, request, SeedQuery.objects.filter(project=project).order_by("id"), ValidationSeedQueryOutput
        )

    @extend_schema(
        tags=TAG,
        summary="Add a hand-written seed query (coordinator); a duplicate is left out and counted",
        request=ValidationSeedCreateInput,
        responses=responses({200: ValidationSeedReportOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationSeedCreateInput, request.data)
        return Response(services.seed_query_create(project=project, user=request.user, **data).as_dict())


class LocationListApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Locations templates are expanded for, with their forms (coordinator)",
        responses=responses({200: ValidationLocationSerializer(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        return Response(ValidationLocationSerializer(project.locations.all(), many=True).data)

    @extend_schema(
        tags=TAG,
        summary="Add a location or change its forms (coordinator)",
        request=ValidationLocationSerializer,
        responses=responses({200: ValidationLocationSerializer}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationLocationSerializer, request.data)
        location = services.location_save(
            project=project, name=data["name"], forms=data["forms"], user=request.user, language=data.get("language")
        )
        return Response(ValidationLocationSerializer(location).data)


class SeedImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=TAG,
        summary="Queue the expansion of `topic,query` templates with [LOCATION] for each location (coordinator)",
        description=(
            "202 with the import job; a worker expands the templates and leaves out exact and near duplicates. "
            "Poll `url`: once done its `report.seeds` counts what was added and left out (a refused file: "
            "problems by line and field, nothing added). 400 at once for an unusable upload or location list."
        ),
        request={"multipart/form-data": ValidationSeedImportInput},
        responses=responses({202: ValidationImportJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationSeedImportInput, request.data)
        with transaction.atomic():  # the job answered as accepted: the worker hears of it once this commits
            job = services.seed_queries_import_start(
                project=project, user=request.user, upload=data["file"], locations=data["locations"]
            )
            return _job_accepted(project, job)


class SeedCsvApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="The seed queries as the collection tool's CSV (`topic,query`; coordinator)",
        responses=responses(
            {200: OpenApiResponse(OpenApiTypes.STR, description="text/csv")}, bad_input=False, conflict=False
        ),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> HttpResponse:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        response = HttpResponse(services.seed_queries_csv(project), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-seed-queries.csv"'
        return response


class DomainListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Labelled source domains (coordinator)",
        responses=responses({200: ValidationDomainOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        domains = SourceDomain.objects.filter(project=project).select_related("labelled_by").order_by("domain")
        return paginated(self, request, domains, ValidationDomainOutput)

    @extend_schema(
        tags=TAG,
        summary="Label a source domain (coordinator); a domain is labelled once per project (409 after)",
        request=ValidationDomainLabelInput,
        responses=responses({201: ValidationDomainOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationDomainLabelInput, request.data)
        domain = services.source_domain_label(
            project=project, user=request.user, origin=SourceDomain.Origin.COORDINATOR, **data
        )
        return Response(ValidationDomainOutput(domain).data, status=status.HTTP_201_CREATED)


class DomainDetailApi(APIView):
    parser_classes = [JSONParser]

    def _domain(self, request: SignedInApiRequest, slug: str, domain: str) -> SourceDomain:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        found = SourceDomain.objects.filter(project=project, domain=domain).select_related("labelled_by").first()
        if found is None:
            raise Http404("No label for this domain in this project.")
        return found

    @extend_schema(
        tags=TAG,
        summary="A labelled source domain with every label it had (coordinator)",
        responses=responses({200: ValidationDomainDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, domain: str) -> Response:
        return Response(ValidationDomainDetailOutput(self._domain(request, slug, domain)).data)

    @extend_schema(
        tags=TAG,
        summary="Change a domain's label (coordinator); the label before stays in its history",
        request=ValidationDomainRelabelInput,
        responses=responses({200: ValidationDomainDetailOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str, domain: str) -> Response:
        found = self._domain(request, slug, domain)
        data = validated(ValidationDomainRelabelInput, request.data)
        changed = services.source_domain_relabel(project=found.project, domain=found.domain, user=request.user, **data)
        return Response(ValidationDomainDetailOutput(changed).data)


class DomainImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=TAG,
        summary="Queue an import of already-judged domains (`base_url,label`) labelling matching sources (coordinator)",
        description="202 with the import job; poll `url` for its report (`created`, `counts.items_labelled`).",
        request={"multipart/form-data": ValidationDomainImportInput},
        responses=responses({202: ValidationImportJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationDomainImportInput, request.data)
        job = services.source_domains_import_start(project=project, user=request.user, upload=data["file"])
        return _job_accepted(project, job)


class DuplicateListApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Sets of duplicate QA pairs to merge (coordinator)",
        responses=responses({200: ValidationDuplicateGroupOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        return Response(ValidationDuplicateGroupOutput(services.duplicate_groups(project), many=True).data)


class MergeApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Merge a duplicate into the QA pair kept (coordinator)",
        request=ValidationMergeInput,
        responses=responses({200: ValidationItemOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationMergeInput, request.data)
        items = {v.item_id: v for v in project.validation_items.filter(item_id__in=[data["keep"], data["duplicate"]])}
        if data["keep"] not in items or data["duplicate"] not in items:
            raise InvalidInput("keep and duplicate must be item ids of this project.", field="duplicate")
        keep = services.validation_item_merge(
            project=project, keep=items[data["keep"]], duplicate=items[data["duplicate"]], user=request.user
        )
        return Response(ValidationItemOutput(keep).data)


class MergeAllApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Merge the duplicates of every set (or only exact repeats, or only some sets) at once (coordinator)",
        request=ValidationMergeAllInput,
        responses=responses({200: ValidationMergeAllOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(ValidationMergeAllInput, request.data)
        result = services.validation_duplicates_merge_all(
            project=project, user=request.user, which=data["which"], keep=data.get("keep")
        )
        return Response(ValidationMergeAllOutput(result).data)


class ItemListApi(APIView):
    pagination_class = BoundedLimitOffsetPagination  # the default class, named: this view pages by hand

    @extend_schema(
        tags=TAG,
        summary="QA pairs of the project, filtered by their domain's label and status (coordinator)",
        parameters=[
            OpenApiParameter("label", str, description="A domain label, or `unlabelled`."),
            OpenApiParameter("status", str, description="Item status: submitted (in validation), accepted, …"),
        ],
        responses=responses({200: ValidationItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        items = services.validation_items_filtered(
            project, label=request.query_params.get("label", ""), status=request.query_params.get("status", "")
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(items, request, view=self) or []  # None only without a limit: never here
        services.attach_domain_labels(project, page)
        return paginator.get_paginated_response(ValidationItemOutput(page, many=True).data)


class ItemDetailApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="One QA pair with its answer revisions (and diffs), judgments and their aggregate (coordinator)",
        responses=responses({200: ValidationItemDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        vitem = get_validation_item(request.user, slug, item_id)
        return Response(ValidationItemDetailOutput(vitem, context=services.item_detail_context(vitem)).data)


class FinalAnswerApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Choose which revision's answer is the item's final answer (coordinator); recorded, used by releases",
        request=ValidationFinalAnswerInput,
        responses=responses({200: ValidationItemDetailOutput}, conflict=True),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        vitem = get_validation_item(request.user, slug, item_id)
        data = validated(ValidationFinalAnswerInput, request.data)
        services.validation_final_answer_choose(
            vitem=vitem, revision_number=data["revision"], user=request.user, note=data["note"]
        )
        return Response(ValidationItemDetailOutput(vitem, context=services.item_detail_context(vitem)).data)


def _task_data(slot: ReviewSlot) -> dict[str, Any]:
    settings = services.validation_settings(slot.item.project)
    context = services.task_context(slot, settings)
    vitem = context["vitem"]
    return {
        "slot": slot.pk,
        "version": slot.version,
        "status": slot.status,
        "item": slot.item_id,
        "question": context["question"],
        "answer": context["answer"],
        "source_urls": vitem.source_urls,
        "domain": vitem.domain,
        "domain_label": context["domain"].label if context["domain"] else None,
        "language": context["language"],
        "direction": context["direction"],
        "location": settings.location,
        "tasks": settings.tasks,
        "question_bad_reasons": [reason for reason, _ in QUESTION_BAD_REASONS],
        "better_answers": [text for _, text in context["better_options"]] if context["better_options"] else None,
        "likert_criteria": settings.likert_criteria,
        "suggestion": SuggestionOutput(context["suggestion"]).data if context["suggestion"] else None,
    }


class NextApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Claim the next item to validate (reviewer role); 204 when none is waiting",
        request=ValidationNextInput,
        responses=responses({200: ValidationTaskOutput, 204: OpenApiResponse(description="Nothing waiting.")}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.REVIEWER)
        data = validated(ValidationNextInput, request.data)
        slot = services.validation_claim_next(project=project, user=request.user, skipped=data.get("skip") or ())
        if slot is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        slot = get_slot_for_validator(request.user, slug, slot.pk)
        return Response(_task_data(slot))


class TaskSkipApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Skip a task you hold: it goes back to the queue (send its item in `skip` to the next claim)",
        request=None,
        responses=responses({204: OpenApiResponse(description="Given back.")}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        slot = get_slot_for_validator(request.user, slug, slot_id)
        services.validation_skip(slot=slot, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TaskApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="A validation task you hold",
        responses=responses({200: ValidationTaskOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        return Response(_task_data(get_slot_for_validator(request.user, slug, slot_id)))

    @extend_schema(
        tags=TAG,
        summary="Submit your judgment of the item (every task the project has on)",
        request=ValidationJudgmentInput,
        responses=responses({200: ValidationJudgmentOutput}),
    )
    def post(self, request: SignedInApiRequest, slot_id: int, slug: str) -> Response:
        slot = get_slot_for_validator(request.user, slug, slot_id)
        data = validated(ValidationJudgmentInput, request.data)
        version = data.pop("version")
        judgment = services.validation_submit(slot=slot, user=request.user, version=version, data=data)
        return Response(ValidationJudgmentOutput(judgment).data)


class AgreementApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Validator agreement per task and Likert criterion (coordinator)",
        responses=responses({200: ValidationAgreementOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        return Response(services.validation_agreement(project))

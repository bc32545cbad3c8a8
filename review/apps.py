from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        """This app's background jobs, for the worker's start and the requeue (common/jobs.py)."""
        from common.jobs import job_type_register
        from review.models_reports import AgreementReport

        job_type_register(
            "agreement_report",
            model=AgreementReport,
            task="review.tasks.agreement_report_task",
            stale_setting="AGREEMENT_STALE_SECONDS",
        )

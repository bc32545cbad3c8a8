from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        """This app's background jobs (common/jobs.py) and its part of the project kinds (common/kinds.py)."""
        from common.jobs import job_type_register
        from review.models_reports import AgreementReport

        job_type_register(
            "agreement_report",
            model=AgreementReport,
            task="review.tasks.agreement_report_task",
            stale_setting="AGREEMENT_STALE_SECONDS",
        )

        from common import kinds
        from review.next_steps import wikipedia_steps

        kinds.extend("wikipedia_qa", next_steps=wikipedia_steps)  # the Wikipedia QA kind's part that lives here

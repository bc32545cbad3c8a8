from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        """Scoring a run is a background job (common/jobs.py)."""
        from common.jobs import job_type_register
        from evaluation.models import EvaluationRun

        job_type_register(
            "evaluation",
            model=EvaluationRun,
            task="evaluation.tasks.evaluation_run_score_task",
            stale_setting="EVALUATION_STALE_SECONDS",
        )

from django.apps import AppConfig

EVALUATED_KINDS = ("wikipedia_qa", "trivia", "validation")


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        """Scoring a run is a background job (common/jobs.py); the kinds it scores get a navigation link."""
        from common.jobs import job_type_register
        from evaluation.models import EvaluationRun, Judgment

        job_type_register(
            "evaluation",
            model=EvaluationRun,
            task="evaluation.tasks.evaluation_run_score_task",
            stale_setting="EVALUATION_STALE_SECONDS",
        )
        job_type_register(
            "evaluation_judge",
            model=Judgment,
            task="evaluation.tasks.judgment_run_task",
            stale_setting="EVALUATION_STALE_SECONDS",
        )

        from common import kinds

        link = kinds.Link("Data", "Evaluation", "evaluation_runs", ("researcher", "coordinator"))
        for value in EVALUATED_KINDS:
            try:
                unit = kinds.get(value)
            except LookupError:  # the kind's app is not installed
                continue
            if link not in unit.nav:
                position = next((n + 1 for n, each in enumerate(unit.nav) if each.url_name == "release_list"), None)
                nav = list(unit.nav)
                nav.insert(len(nav) if position is None else position, link)
                kinds.extend(value, nav=tuple(nav))

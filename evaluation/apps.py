from django.apps import AppConfig

EVALUATED_KINDS = ("wikipedia_qa", "trivia", "validation")


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        """Scoring a run is a background job (common/jobs.py); the kinds it scores get a navigation link."""
        from annotation.local_checks import local_check_hook_register
        from annotation.models import LocalCheck
        from common.jobs import job_type_register
        from evaluation.local_checks import JOB, local_check_request
        from evaluation.models import EvaluationRun, Judgment

        # annotation asks for a local-knowledge check on save; running one needs the model connection and metrics
        local_check_hook_register(local_check_request)
        job_type_register(
            JOB, model=LocalCheck, task="evaluation.tasks.local_check_run_task", stale_setting="JOB_STALE_SECONDS"
        )

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

        # The local-knowledge check of Wikipedia QA items: beside the model endpoints it asks.
        check = kinds.Link("Settings", "Local-knowledge check", "local_check_settings", kinds.COORD)
        try:
            wikipedia = kinds.get("wikipedia_qa")
        except LookupError:
            wikipedia = None
        if wikipedia is not None and check not in wikipedia.nav:
            nav = list(wikipedia.nav)
            after = next((n + 1 for n, each in enumerate(nav) if each.url_name == "endpoint_list"), len(nav))
            nav.insert(after, check)
            kinds.extend("wikipedia_qa", nav=tuple(nav))
        # People check the LLM judge on sampled answers: reviewers (native speakers), researchers, coordinators.
        checks = kinds.Link(
            "Review", "Judge checks", "evaluation_judge_checks", ("reviewer", "researcher", "coordinator")
        )
        if wikipedia is not None:
            wikipedia = kinds.get("wikipedia_qa")  # as extended above
        if wikipedia is not None and checks not in wikipedia.nav:
            nav = list(wikipedia.nav)
            after = max((n + 1 for n, each in enumerate(nav) if each.group == "Review"), default=len(nav))
            nav.insert(after, checks)
            kinds.extend("wikipedia_qa", nav=tuple(nav))

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

from django.apps import AppConfig


class WikiqaConfig(AppConfig):
    """The Wikipedia QA project kind's own part: collecting from Wikipedia, importing page pairs, authoring."""

    name = "wikiqa"
    label = "wikiqa"
    verbose_name = "Wikipedia QA"

    def ready(self) -> None:
        """The collection job (common/jobs.py) and the kind's importer (common/kinds.py)."""
        from common import kinds
        from common.jobs import job_type_register
        from wikiqa.kind import PAIRS_IMPORTER
        from wikiqa.models import Collection

        job_type_register(
            "collection", model=Collection, task="wikiqa.tasks.collection_run", stale_setting="JOB_STALE_SECONDS"
        )
        kinds.extend("wikipedia_qa", importer=PAIRS_IMPORTER)

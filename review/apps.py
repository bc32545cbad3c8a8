from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        """This app's background jobs (common/jobs.py), the review rounds annotation.lifecycle asks for without
        importing review (annotation sits below it), and its part of the project kinds (common/kinds.py)."""
        from annotation.lifecycle import ReviewRounds, review_rounds_register
        from common.jobs import job_type_register
        from review.models_reports import AgreementReport
        from review.routing import review_rounds_begun, review_rounds_close, review_rounds_open

        job_type_register(
            "agreement_report",
            model=AgreementReport,
            task="review.tasks.agreement_report_task",
            stale_setting="AGREEMENT_STALE_SECONDS",
        )
        review_rounds_register(
            ReviewRounds(route=review_rounds_open, close=review_rounds_close, begun=review_rounds_begun)
        )

        from annotation.review_hooks import ReviewHooks, review_hooks_register
        from review.reviewers import review_slots_release, reviewer_languages_set
        from review.views.items import latest_verifications, verification_panel

        review_hooks_register(
            ReviewHooks(
                reviewer_languages_set=reviewer_languages_set,
                review_slots_release=review_slots_release,
                latest_verifications=latest_verifications,
                verification_panel=verification_panel,
            )
        )

        from common import kinds
        from review.next_steps import wikipedia_steps

        kinds.extend("wikipedia_qa", next_steps=wikipedia_steps)  # the Wikipedia QA kind's part that lives here

        from annotation.display import display_sets_register

        display_sets_register(_display_sets)  # its codes' names (annotation/display.py)


def _display_sets() -> dict[str, dict[str, str]]:
    from annotation.models import ItemEvent
    from review.models import FinalLabel, Judgment, LabelKind, ReviewSlot, Verification

    return {
        "verdict": dict(Judgment.Verdict.choices),
        "verification": {**dict(Verification.Result.choices), "not_checked": "Not checked"},
        "label_kind": dict(LabelKind.choices),
        "label_method": dict(FinalLabel.Method.choices),
        "event": dict(ItemEvent.Action.choices),
        "slot_status": dict(ReviewSlot.Status.choices),
    }

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        # annotation.lifecycle asks for review rounds without importing review (annotation sits below it)
        from annotation.lifecycle import ReviewRounds, review_rounds_register
        from review.routing import review_rounds_begun, review_rounds_close, review_rounds_open

        review_rounds_register(
            ReviewRounds(route=review_rounds_open, close=review_rounds_close, begun=review_rounds_begun)
        )

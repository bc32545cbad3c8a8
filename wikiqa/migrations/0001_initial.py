import annotation.languages
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED = ("collection", "collectiontitle", "wikipage")


def content_types_follow(apps, schema_editor):
    """The three models' content types (and so their permissions and admin log entries) follow them here."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not ContentType.objects.filter(app_label="wikiqa", model=model).exists():
            ContentType.objects.filter(app_label="annotation", model=model).update(app_label="wikiqa")


def content_types_go_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not ContentType.objects.filter(app_label="annotation", model=model).exists():
            ContentType.objects.filter(app_label="wikiqa", model=model).update(app_label="annotation")


class Migration(migrations.Migration):
    """Collection, CollectionTitle and WikiPage, moved from `annotation` into the state of this app, on the tables
    they already have.

    State only: annotation/migrations/0025 removed them from annotation's state; the tables (annotation_collection,
    annotation_collectiontitle, annotation_wikipage) made by annotation's 0003 and later keep every row.
    """

    initial = True

    dependencies = [
        ("annotation", "0025_collections_move_to_wikiqa"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Collection",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Waiting for a worker"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                    ("cancelled", "Cancelled"),
                                    ("refused", "Refused (nothing changed)"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        (
                            "attempts",
                            models.PositiveSmallIntegerField(default=0, help_text="Runs that claimed the job."),
                        ),
                        ("progress_done", models.PositiveBigIntegerField(default=0)),
                        ("progress_total", models.PositiveBigIntegerField(default=0)),
                        (
                            "stage",
                            models.CharField(blank=True, help_text="What the worker is doing now.", max_length=200),
                        ),
                        ("error", models.TextField(blank=True)),
                        (
                            "owner",
                            models.CharField(blank=True, help_text="The worker run that holds the job.", max_length=32),
                        ),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "heartbeat_at",
                            models.DateTimeField(blank=True, help_text="Last sign of life from the worker.", null=True),
                        ),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "source",
                            models.CharField(
                                choices=[
                                    ("titles", "A list of titles"),
                                    ("category", "Members of a local-wiki category"),
                                ],
                                default="titles",
                                max_length=16,
                            ),
                        ),
                        (
                            "category",
                            models.CharField(
                                blank=True, help_text="Local-wiki category, for category sources.", max_length=500
                            ),
                        ),
                        (
                            "local_wiki",
                            models.CharField(max_length=32, validators=[annotation.languages.validate_wiki_code]),
                        ),
                        (
                            "standard_wiki",
                            models.CharField(max_length=32, validators=[annotation.languages.validate_wiki_code]),
                        ),
                        (
                            "standard_variant",
                            models.CharField(
                                blank=True, max_length=16, validators=[annotation.languages.validate_variant]
                            ),
                        ),
                        (
                            "local_heavy_only",
                            models.BooleanField(
                                default=True,
                                help_text="Keep a pair only if the local lead and full text are both longer than the standard.",
                            ),
                        ),
                        ("cancel_requested", models.BooleanField(default=False)),
                        ("kept", models.PositiveIntegerField(default=0)),
                        ("created_pairs", models.PositiveIntegerField(default=0)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="collections",
                                to="annotation.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_collection",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="CollectionTitle",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("position", models.PositiveIntegerField()),
                        ("title", models.CharField(max_length=500)),
                        (
                            "outcome",
                            models.CharField(
                                choices=[
                                    ("pending", "Not processed yet"),
                                    ("kept", "Kept"),
                                    ("no_standard_page", "Dropped: no standard page"),
                                    ("not_local_heavy", "Dropped: not local-heavy"),
                                    ("disambiguation", "Dropped: disambiguation page"),
                                    ("empty_lead", "Dropped: empty lead"),
                                    ("page_missing", "Dropped: page missing"),
                                    ("fetch_failed", "Dropped: fetch failed"),
                                ],
                                default="pending",
                                max_length=24,
                            ),
                        ),
                        ("error", models.TextField(blank=True)),
                        (
                            "local_title",
                            models.CharField(blank=True, help_text="After following redirects.", max_length=500),
                        ),
                        ("standard_title", models.CharField(blank=True, max_length=500)),
                        ("local_revision", models.BigIntegerField(blank=True, null=True)),
                        ("standard_revision", models.BigIntegerField(blank=True, null=True)),
                        ("pair_created", models.BooleanField(default=False)),
                        ("processed_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "collection",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="titles",
                                to="wikiqa.collection",
                            ),
                        ),
                        (
                            "pair",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="annotation.pagepair",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_collectiontitle",
                        "ordering": ["collection_id", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="WikiPage",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("wiki", models.CharField(max_length=32)),
                        ("variant", models.CharField(blank=True, max_length=16)),
                        ("title", models.CharField(max_length=500)),
                        ("revision", models.BigIntegerField()),
                        ("pageid", models.BigIntegerField(blank=True, null=True)),
                        ("url", models.URLField(blank=True, max_length=1000)),
                        ("lead", models.TextField(blank=True)),
                        ("text", models.TextField(blank=True)),
                        ("fetched_at", models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={
                        "db_table": "annotation_wikipage",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("wiki", "variant", "title", "revision"), name="wikipage_unique_revision"
                            )
                        ],
                    },
                ),
                migrations.AddIndex(
                    model_name="collection",
                    index=models.Index(fields=["project", "-created_at"], name="collection_project_idx"),
                ),
                migrations.AddIndex(
                    model_name="collectiontitle",
                    index=models.Index(
                        fields=["collection", "outcome", "position"], name="collection_title_outcome_idx"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="collectiontitle",
                    constraint=models.UniqueConstraint(
                        fields=("collection", "position"), name="collection_title_position"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="collectiontitle",
                    constraint=models.UniqueConstraint(fields=("collection", "title"), name="collection_title_unique"),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]

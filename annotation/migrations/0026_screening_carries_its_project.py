"""Each screening decision names its pair's project, so a project's screening agreement, WiLoVa export and
progress counts read its own decisions only (filled here; required and indexed in 0027, a transaction of its own:
PostgreSQL does not alter a table with checks pending)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_project(apps, schema_editor):
    PagePair = apps.get_model("annotation", "PagePair")
    of_pair = PagePair.objects.filter(pk=OuterRef("pair_id")).values("project_id")[:1]
    apps.get_model("annotation", "Screening").objects.filter(project__isnull=True).update(project_id=Subquery(of_pair))


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0025_collections_move_to_wikiqa"),
    ]

    operations = [
        migrations.AddField(
            model_name="screening",
            name="project",
            field=models.ForeignKey(
                null=True,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="annotation.project",
            ),
        ),
        migrations.RunPython(fill_project, migrations.RunPython.noop),
    ]

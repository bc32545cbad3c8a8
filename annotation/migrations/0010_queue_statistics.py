"""Extended statistics on (project, status) for the queue tables (PostgreSQL only).

Without them PostgreSQL multiplies the two selectivities as if independent: with two
projects it expected ten times the new pairs a project had, and claimed the next pair
by walking the primary key past every done pair (24 ms at 18,000 done pairs, growing)
instead of reading the (project, status, id) index (0.07 ms); bench/explain.py.
"""

from django.db import migrations

STATISTICS = {
    "pair_project_status_stats": "annotation_pagepair",
    "item_project_status_stats": "annotation_qaitem",
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, table in STATISTICS.items():
        schema_editor.execute(
            f"CREATE STATISTICS IF NOT EXISTS {name} (dependencies, mcv) ON project_id, status FROM {table}"
        )
        schema_editor.execute(f"ANALYZE {table}")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in STATISTICS:
        schema_editor.execute(f"DROP STATISTICS IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0009_item_review_list_index")]

    operations = [migrations.RunPython(create, drop)]

"""Importing page pairs from files, one module per concern.

`services.pairs_import` is the one way in (command, upload page, API, worker, demo data);
`sources` says what a file is and which format, `readers` turns JSONL lines, CSV rows and
WiLoVa release files into records, `checks` checks one record field by field, `report`
holds what the import says (problems by file, line or record, and field), `writer`
writes checked records in batches inside the import's transaction.
"""

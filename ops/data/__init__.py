"""Stored data: the table schemas, per-attempt staging, files on a local or S3 root."""

"""Skills in the bucket: the SKILL.md format, the catalog of revisions, publishing and installing."""

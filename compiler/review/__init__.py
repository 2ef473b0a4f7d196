"""toolc diff: two revisions compiled and compared, the access delta in words."""

"""One compiled build examined: assertions and lints, explain, declared context, ACCESS.md."""

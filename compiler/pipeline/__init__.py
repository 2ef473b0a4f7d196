"""The compile stages: load -> model -> analyze -> policy layers -> tables -> bundles ->
render -> write."""

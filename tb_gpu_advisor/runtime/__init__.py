"""Running the pipeline: the one analysis entry point (read -> steps -> metrics -> rules -> report) for the CLI, the server and precompute; worker processes with limits; the report cache."""

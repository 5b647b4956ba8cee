"""The TensorBoard plugin: routes, background report service and the static tab."""

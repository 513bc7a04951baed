"""The screens of the Cranfield UI."""

"""Small reusable widgets and cell formatters."""

"""Generated from ``graphsvc/client/_async`` by ``make generate``: do not edit."""

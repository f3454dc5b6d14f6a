"""Small builders, one per feature, each wiring its adapters and services from the parts
below it and doing no I/O. ``bootstrap`` composes them into what each process runs."""

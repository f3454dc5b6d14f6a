"""Graphs in and out: edge files read and generated, loads and bulk imports, the demo graph,
and the Parquet export."""

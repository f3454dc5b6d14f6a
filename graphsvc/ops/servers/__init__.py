"""The local servers the project runs without Docker, and the processes and HTTP server
that serve."""

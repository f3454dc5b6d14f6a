# The image of `compose.yaml`'s api and worker: the package with its serving extras.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY graphsvc ./graphsvc
RUN pip install --no-cache-dir '.[server]'

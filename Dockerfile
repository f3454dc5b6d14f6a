# The image of `compose.yaml`'s api and worker: the package with its serving extras, at the
# versions requirements.lock pins (uv, itself pinned there, installs them).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
COPY graphsvc ./graphsvc
COPY cypher ./cypher
RUN awk '/^uv==/ {p = 1} p {print; if (!/\\$/) exit}' requirements.lock > /tmp/uv.txt \
    && pip install --no-cache-dir --require-hashes --no-deps -r /tmp/uv.txt \
    && uv pip install --system --no-cache -c requirements.lock '.[server]' \
    && pip uninstall --yes uv && rm /tmp/uv.txt

"""The HTTP contract, shared by the server and ``graphsvc.client``: the JSON bodies, the user-id
rule and the scopes, written once so the two cannot drift. It imports the standard library and
pydantic only, so the client installs without anything of the server (import-linter holds it)."""

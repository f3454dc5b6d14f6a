"""What every route shares: the scope guard, the bound on bodies, the OpenAPI contract, the one
error family, the lean lane, response headers, telemetry, and the parameters and bodies."""

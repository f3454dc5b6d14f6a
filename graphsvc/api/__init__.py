"""The HTTP layer: one router per family of routes; each route parses, calls one service
method and shapes the body. Errors leave in one shape, by one handler family."""

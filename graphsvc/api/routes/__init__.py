"""The routes, one router per family: each parses, calls one service method and shapes the
body."""

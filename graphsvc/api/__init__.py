"""The HTTP layer: ``routes`` holds one router per family of routes, each parsing, calling one
service method and shaping the body; ``http`` holds what they share (the scope guard, the error
family, the contract, the lean lane); ``app`` puts them together."""

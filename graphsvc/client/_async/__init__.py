"""The hand-written asynchronous client: the source the blocking one is generated from."""

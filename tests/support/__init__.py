"""What the tests share: helpers, the suite's driver, and what tests do to the stores."""

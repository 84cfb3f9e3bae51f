# examples.mk - the example client (examples/client/) and the example
# third-party processor module (examples/pm/), built by make test.

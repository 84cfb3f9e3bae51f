# testpm.mk - processor modules used by the tests of the PM interface.

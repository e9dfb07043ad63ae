"""Builders of test inputs shared by several test modules: pin files and build matrices,
recipe texts, hand-written wheels, real uv.lock conflicts and fake engine binaries."""

"""Generated-kernel fuzzing: random well-typed programs, their kernel source and a reference evaluation."""

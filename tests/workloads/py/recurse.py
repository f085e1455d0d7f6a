# A recursive Python program for e2e/unwind_python: f recurses DEPTH
# levels, then spin burns SECONDS of CPU time (its own clock, so a loaded
# machine gives as many samples). Prints its pid (for its perf map).
import os
import sys
import time

DEPTH = 20


def spin(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x


def f(n, seconds):
    return f(n - 1, seconds) if n else spin(seconds)


print("pid", os.getpid(), flush=True)
f(DEPTH, float(sys.argv[1]) if len(sys.argv) > 1 else 0.6)

#!/usr/bin/env python3
"""The shell's start-up time: from starting `tributary repl` in a pseudo-terminal to its
first prompt, as a user at a terminal waits for it.

    cargo build --release -p tributary-cli
    python3 crates/cli/benches/startup.py target/release/tributary [RUNS]

Each run starts the binary on a catalog of its own (created by one earlier `run`, so the
catalog opens as a user's existing one does, with a profile and 100 tables) and a fresh
HOME (no history), waits for the prompt, then quits with Ctrl-D. It prints the minimum,
median, 95th percentile and maximum over the runs, after two warm-up runs that fill the
page cache as a user's earlier starts would.
"""

import os
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROMPT = b"tributary> "


def setup(binary: str, catalog: str) -> None:
    """A catalog with a profile and 100 tables."""
    script = [
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', "
        "bootstrap_servers = 'localhost:9092', validate = false);"
    ]
    for i in range(100):
        script.append(
            f"CREATE TABLE t{i:03} (id BIGINT, v TEXT) WITH (connector = 'kafka', "
            f"connection_profile = 'k', topic = 't{i}', type = 'source', format = 'json', "
            "validate = false);"
        )
    subprocess.run(
        [binary, "--catalog", catalog, "-q", "run", "-c", "\n".join(script)],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def one_start(binary: str, catalog: str, home: str) -> float:
    """Seconds from exec to the first prompt."""
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=home, TERM="xterm", PAGER="cat")
        env.pop("TRIBUTARY_CATALOG", None)
        os.execve(binary, [binary, "--catalog", catalog, "repl"], env)
    began = time.perf_counter()
    seen = b""
    try:
        while PROMPT not in seen:
            ready, _, _ = select.select([fd], [], [], 10)
            if not ready:
                raise RuntimeError(f"no prompt within 10 s; saw {seen!r}")
            seen += os.read(fd, 4096)
        elapsed = time.perf_counter() - began
        os.write(fd, b"\x04")  # Ctrl-D: quit
        while True:
            ready, _, _ = select.select([fd], [], [], 5)
            if not ready:
                break
            try:
                if not os.read(fd, 4096):
                    break
            except OSError:
                break
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return elapsed


def main() -> None:
    binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "target/release/tributary"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    work = tempfile.mkdtemp(prefix="tributary-startup-")
    try:
        catalog = os.path.join(work, "catalog")
        setup(binary, catalog)
        times = []
        for i in range(runs + 2):
            home = os.path.join(work, f"home{i}")
            os.mkdir(home)
            t = one_start(binary, catalog, home)
            if i >= 2:
                times.append(t * 1e3)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        print(
            f"start-up to prompt over {runs} runs: min {times[0]:.1f} ms, "
            f"median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
            f"max {times[-1]:.1f} ms"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

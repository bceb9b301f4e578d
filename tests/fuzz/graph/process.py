"""Running the tools: exit status, output and errors, with a time limit."""
import subprocess

TIMEOUT_S = 300


def run(cmd, timeout=TIMEOUT_S):
    """(exit status, stdout, stderr); status None after timing out twice
    (the first may be a stall of a busy machine)."""
    for _ in range(2):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            pass
    return None, "", f"timed out twice after {timeout} s"


def first_line(text, limit=300):
    lines = [l for l in text.splitlines() if l.strip()]
    return (lines[0] if lines else "(no output)")[:limit]

"""Writing generated model files, or checking that they are up to date."""
import os
import sys


def write_or_check(texts, check, script):
    """Writes {path: text}, or with `check` lists the files that differ from
    what `script` writes; returns the exit status (1 when any differs)."""
    stale = []
    for path, text in texts.items():
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(path)
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")
    if stale:
        print(f"not as {script} writes them:\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0

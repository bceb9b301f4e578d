#!/usr/bin/env python3
"""Reads a kiln event file with TensorBoard's own reader and prints its scalars.

    check_tensorboard.py PATH [--expect-tags loss,learning_rate] [--min-events N]

PATH is an event file (kiln-run --log-dir DIR writes
DIR/events.out.tfevents.<time>.<host>) or a log directory. Prints the file
version, then one line per scalar: `<step> <tag> <value>`. Exit status: 0 when
there are scalars (every tag of --expect-tags among them, each with at least
--min-events events), 1 otherwise, 3 when tensorboard cannot be imported.
"""

import argparse
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="event file or log directory")
    parser.add_argument("--expect-tags", default="",
                        help="comma-separated tags that must be present")
    parser.add_argument("--min-events", type=int, default=1,
                        help="events each expected tag must have")
    args = parser.parse_args()
    try:
        from tensorboard.backend.event_processing.event_accumulator import (
            EventAccumulator)
    except ImportError as error:
        print(f"check_tensorboard: tensorboard is not installed ({error})",
              file=sys.stderr)
        return 3
    # size_guidance 0: keep every event (the default samples 10000 scalars).
    accumulator = EventAccumulator(args.path, size_guidance={"scalars": 0})
    accumulator.Reload()
    print(f"file_version {getattr(accumulator, 'file_version', None)}")
    tags = sorted(accumulator.Tags().get("scalars", []))
    for tag in tags:
        for event in accumulator.Scalars(tag):
            print(f"{event.step} {tag} {event.value:.9g}")
    failures = []
    if not tags:
        failures.append("no scalars")
    for tag in filter(None, args.expect_tags.split(",")):
        if tag not in tags:
            failures.append(f"no scalar '{tag}'")
        elif len(accumulator.Scalars(tag)) < args.min_events:
            failures.append(f"'{tag}' has {len(accumulator.Scalars(tag))} "
                            f"events, fewer than {args.min_events}")
    for failure in failures:
        print(f"check_tensorboard: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""with_tty.py COMMAND...: runs COMMAND with its standard output on a
pseudo-terminal; prints its standard error, how many bytes it wrote to the
terminal and its exit status, for FileCheck."""
import os
import pty
import subprocess
import sys
import threading

master, slave = pty.openpty()
written = []


def drain():
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer closed it
            return
        if not chunk:
            return
        written.append(len(chunk))


reader = threading.Thread(target=drain)
reader.start()
process = subprocess.run(sys.argv[1:], stdout=slave, stderr=subprocess.PIPE)
os.close(slave)
reader.join()
sys.stdout.write(process.stderr.decode())
print(f"{sum(written)} bytes on the terminal")
print(f"exit status {process.returncode}")

"""Drives a program through a pseudo-terminal, like a person at a keyboard.

Reads JSON from stdin: {"command": [...], "env": {...}, "cwd": "...", "columns": N (optional), "steps": [
  {"send": "text" (optional), "expect": "regex" (optional), "timeout": seconds}, ...]}
Each step sends its text, then waits until the output since the step began matches
"expect" (without one, it waits "timeout" seconds: typed-ahead input is lost when the
terminal turns a later Ctrl-C into SIGINT). Prints JSON: {"ok", "failed_step", "transcript", "status"}; the program is
waited for (and killed after the last step's timeout) at the end.
"""
import fcntl, json, os, pty, re, select, signal, struct, sys, termios, time

spec = json.load(sys.stdin)
env = dict(os.environ, **spec.get("env", {}), TERM="xterm")
pid, fd = pty.fork()
if pid == 0:
    if spec.get("cwd"):
        os.chdir(spec["cwd"])
    os.execvpe(spec["command"][0], spec["command"], env)
if spec.get("columns"):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, spec["columns"], 0, 0))

transcript = b""

def read_for(seconds):
    global transcript
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], max(0, min(0.05, end - time.time())))
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            transcript += chunk
            return True
    return True

failed = None
for index, step in enumerate(spec["steps"]):
    start = len(transcript)
    if "send" in step:
        # A person never types within a millisecond of the prompt; libedit prints it just
        # before it puts the terminal in raw mode, and text typed in between is echoed twice.
        read_for(0.15)
        start = len(transcript)
        os.write(fd, step["send"].encode())
    pattern = step.get("expect")
    if pattern is None:
        read_for(step.get("timeout", 0.5))
        continue
    deadline = time.time() + step.get("timeout", 10)
    while not re.search(pattern, transcript[start:].decode("utf-8", "replace")):
        if time.time() > deadline or not read_for(0.05) and not select.select([fd], [], [], 0)[0]:
            if not re.search(pattern, transcript[start:].decode("utf-8", "replace")):
                failed = index
            break
    if failed is not None:
        break

status = None
deadline = time.time() + 5
while time.time() < deadline:
    read_for(0.05)
    done, code = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(code)
        break
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(json.dumps({"ok": failed is None, "failed_step": failed, "status": status,
                  "transcript": transcript.decode("utf-8", "replace")}))

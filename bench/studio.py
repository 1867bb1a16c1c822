#!/usr/bin/env python3
"""The studio measured as a user meets it: the release `moonreel studio` and its page in
headless Chromium (driven over the DevTools protocol on a pipe), on the lyrics job.

  playback   the 20 s 1080p lyrics job at the 960x540 preview, from the first second: frames
             shown and dropped, and how far the sound's clock is past each picture's start
             when it is drawn (the page's clock is the AudioContext)
  scrub      50 random times: from seek() to the exact frame on the canvas
  save       a 3-minute 1080p lyric video: from rewriting its CSV to the new picture on the canvas

Usage: bench/studio.py   (after `swift build -c release --static-swift-stdlib`; media in
$BENCH_DIR, default /tmp/moonreel-bench, made by bench/run.sh's helpers or here)
"""
import json, os, random, statistics, subprocess, sys, tempfile, time

checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = os.environ.get("BENCH_DIR", "/tmp/moonreel-bench")
moonreel = os.path.join(checkout, ".build/release/moonreel")
os.makedirs(work, exist_ok=True)


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def source(seconds, preset):
    path = f"{work}/source-1080p-{seconds}s.mp4"
    if not os.path.exists(path):
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:duration={seconds}",
               "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}",
               "-c:v", "libx264", "-preset", preset, "-crf", "20", "-pix_fmt", "yuv420p", "-g", "60",
               "-c:a", "aac", "-b:a", "192k", path)
    return path


def lyrics(seconds, first_line="きらきら光る お空の星よ"):
    """A line every 2 s for 1.8 s, as bench/run.sh writes them."""
    lines = [first_line, "Twinkle, twinkle, little star", "まばたきしては みんなを見てる", "How I wonder what you are"]
    rows = ["id,lyric,start_at,end_at"]
    for i in range(seconds // 2):
        rows.append(f'{i + 1},"{lines[i % 4]}",{i * 2:.1f},{i * 2 + 1.8:.1f}')
    return "\n".join(rows) + "\n"


class Studio:
    def __init__(self, *arguments):
        self.process = subprocess.Popen([moonreel, "studio", *arguments], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.process.stdout.readline().split()[-1]

    def close(self):
        self.process.kill()
        self.process.wait()


class Chromium:
    """CDP over --remote-debugging-pipe: commands on fd 3, replies on fd 4, NUL-separated."""

    def __init__(self):
        to_chrome, self.send_end = os.pipe()
        self.read_end, from_chrome = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="studio-bench-")

        def wire():
            os.dup2(to_chrome, 3)
            os.dup2(from_chrome, 4)

        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--autoplay-policy=no-user-gesture-required", "--window-size=1280,800", f"--user-data-dir={self.profile}",
             "--disable-background-timer-throttling", "--disable-renderer-backgrounding"],
            pass_fds=(3, 4), preexec_fn=wire, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(to_chrome)
        os.close(from_chrome)
        self.buffer, self.next_id, self.session = b"", 0, None
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.command("Page.enable")

    def command(self, method, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.send_end, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.read_end, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression):
        result = self.command("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait(self, expression, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.02)
        raise RuntimeError(f"timed out waiting for {expression}")

    def open(self, url):
        self.command("Page.navigate", url=url)
        self.wait("window.studio && window.studio.ready")

    def close(self):
        os.killpg(self.process.pid, 9)
        self.process.wait()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    clip = source(20, "fast")
    cues = f"{work}/studio-lyrics-20.csv"
    with open(cues, "w") as f:
        f.write(lyrics(20))
    script = os.path.join(checkout, "scripts/examples/lyrics.lua")
    studio = Studio(script, clip, cues, f"{work}/studio-out.mp4")
    browser = Chromium()
    try:
        browser.open(studio.url)
        started = time.time()
        browser.evaluate("studio.play()")
        browser.wait("studio.position > 0.5")
        first_second = browser.evaluate("studio.framesShown")
        browser.wait("!studio.playing", timeout=60)
        wall = time.time() - started
        stats = browser.evaluate("({shown: studio.framesShown, dropped: studio.framesDropped, lags: studio.lags, audio: studio.audioClock})")
        lags = [1000 * lag for lag in stats["lags"]]
        print(f"playback: 20 s in {wall:.2f} s wall; {stats['shown']} frames shown, {stats['dropped']} dropped "
              f"({first_second} in the first 0.5 s); sound clock past the picture's start when drawn: "
              f"median {statistics.median(lags):.1f} ms, p95 {percentile(lags, 0.95):.1f} ms, max {max(lags):.1f} ms; "
              f"audio clock: {stats['audio']}")
        random.seed(21)
        times = [round(random.uniform(0, 19.9), 3) for _ in range(50)]
        latencies = browser.evaluate(f"""(async () => {{
            const fd = 1 / 30, out = [];
            performance.clearResourceTimings();
            performance.setResourceTimingBufferSize(10000);
            for (const t of {json.dumps(times)}) {{
              const start = performance.now();
              const shown = studio.whenShown(Math.floor(t / fd + 1e-6));
              studio.seek(t);
              await shown;
              out.push(performance.now() - start);
              const entry = performance.getEntriesByType('resource').filter(e => e.name.includes('frame?')).pop();
              (window.renderTimes ??= []).push(entry?.serverTiming?.[0]?.duration ?? -1);
            }}
            return out;
        }})()""")
        renders = browser.evaluate("window.renderTimes")
        print(f"scrub: 50 random times, seek to exact frame on the canvas: median {statistics.median(latencies):.0f} ms, "
              f"p95 {percentile(latencies, 0.95):.0f} ms, max {max(latencies):.0f} ms "
              f"(of which the server's render: median {statistics.median(renders):.0f} ms, p95 {percentile(renders, 0.95):.0f} ms)")
    finally:
        browser.close()
        studio.close()

    long_clip = source(180, "ultrafast")
    long_cues = f"{work}/studio-lyrics-180.csv"
    with open(long_cues, "w") as f:
        f.write(lyrics(180))
    studio = Studio(script, long_clip, long_cues, f"{work}/studio-out-180.mp4")
    browser = Chromium()
    try:
        browser.open(studio.url)
        browser.evaluate("studio.seek(100.5)")
        browser.wait("studio.frameNumber === 3015")
        delays = []
        for run in range(5):
            generation = browser.evaluate("studio.generation")
            saved = time.time()
            with open(long_cues, "w") as f:
                f.write(lyrics(180, first_line=f"edit {run}"))
            browser.wait(f"studio.shownGeneration > {generation}")
            delays.append(browser.evaluate("studio.drawnAt") / 1000 - saved)
        print(f"save to picture (3-minute lyric video, 90 cues): " + ", ".join(f"{1000 * d:.0f}" for d in delays)
              + f" ms; median {1000 * statistics.median(delays):.0f} ms")
    finally:
        browser.close()
        studio.close()


if __name__ == "__main__":
    sys.exit(main())

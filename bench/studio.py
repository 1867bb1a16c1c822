#!/usr/bin/env python3
"""The studio measured as a user meets it: the release `moonreel studio` and its page in
headless Chromium (driven over the DevTools protocol on a pipe).

Generated source (the default): the lyrics job on SECONDS (default 20) of 1080p30 testsrc2
with a 440 Hz tone, keyframes every GOP frames (default 60, i.e. 2-second GOPs; issue 41's
hard case is --gop 300), preview at 960x540:

  playback   from the first second: frames shown and dropped, and how far the sound's clock
             is past each picture's start when it is drawn (the page's clock is the
             AudioContext)
  scrub      50 random times: from seek() to the exact frame on the canvas
  save       a 3-minute 1080p lyric video: from rewriting its CSV to the new picture on the canvas

Phone-file mode (--source FILE, e.g. Tests/Fixtures/real/04_android12_portrait_4k60_rot90_yuvj.mp4
or 03_iphone_trimmed_hevc10_editlist_vfr.mp4): scripts/examples/portrait.lua with the file alone
(the file upright at its own size and frame rate), playback (at the file's own frame rate,
played several times over when it is short) and scrub; no save test.

Proxies (issue 41): without --proxied, `moonreel studio --no-proxies` (the source path: the
"before proxy" figures). With --proxied, the benchmark waits until the studio's state lists every
proxy as ready and every item as reading one, prints how long that took, then measures. The
studio runs with XDG_CACHE_HOME in a fresh temporary folder, so proxies are made from scratch,
unless --keep-cache.

Usage: bench/studio.py [--gop N] [--seconds S] [--source FILE] [--proxied] [--keep-cache] [--tests …]
(after `swift build -c release --static-swift-stdlib`; media in $BENCH_DIR, default
/tmp/moonreel-bench, made here; $MOONREEL picks another binary; MOONREEL_BENCH_NO_PROXY_FLAG=1
leaves out --no-proxies, for builds that do not know it)
"""
import argparse, json, math, os, random, shlex, shutil, statistics, subprocess, sys, tempfile, threading, time
import urllib.request

checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = os.environ.get("BENCH_DIR", "/tmp/moonreel-bench")
moonreel = os.environ.get("MOONREEL") or os.path.join(checkout, ".build/release/moonreel")
# Straight to the studio on loopback, whatever http_proxy says.
http = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def source(seconds, preset, gop):
    path = f"{work}/source-1080p-{seconds}s-g{gop}.mp4"
    legacy = f"{work}/source-1080p-{seconds}s.mp4"   # the name before --gop: the same file at -g 60
    if gop == 60 and not os.path.exists(path) and os.path.exists(legacy):
        return legacy
    if not os.path.exists(path):
        os.makedirs(work, exist_ok=True)
        partial = path + ".part.mp4"
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:duration={seconds}",
               "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}",
               "-c:v", "libx264", "-preset", preset, "-crf", "20", "-pix_fmt", "yuv420p", "-g", str(gop),
               "-c:a", "aac", "-b:a", "192k", partial)
        os.replace(partial, path)
    return path


def probe(path):
    """Duration (s) and the first video stream's codec, size, pixel format and frame rate, or {}."""
    try:
        out = subprocess.run(["ffprobe", "-v", "error", "-show_entries",
                              "format=duration:stream=codec_type,codec_name,width,height,pix_fmt,r_frame_rate",
                              "-of", "json", path], capture_output=True, text=True, check=True).stdout
        info = json.loads(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return {}
    result = {}
    try:
        result["duration"] = float(info.get("format", {}).get("duration"))
    except (TypeError, ValueError):
        pass
    video = next((s for s in info.get("streams", []) if s.get("codec_type") == "video"), None)
    if video:
        num, _, den = video.get("r_frame_rate", "0/1").partition("/")
        rate = float(num) / float(den or 1) if float(den or 1) else 0
        result["video"] = f"{video.get('codec_name')} {video.get('width')}x{video.get('height')} {video.get('pix_fmt')} {rate:.3g} fps"
    return result


def lyrics(seconds, first_line="きらきら光る お空の星よ"):
    """A line every 2 s for 1.8 s, as bench/run.sh writes them."""
    lines = [first_line, "Twinkle, twinkle, little star", "まばたきしては みんなを見てる", "How I wonder what you are"]
    rows = ["id,lyric,start_at,end_at"]
    for i in range(seconds // 2):
        rows.append(f'{i + 1},"{lines[i % 4]}",{i * 2:.1f},{i * 2 + 1.8:.1f}')
    return "\n".join(rows) + "\n"


class Studio:
    def __init__(self, options, *arguments):
        flags = []
        if not options.proxied and os.environ.get("MOONREEL_BENCH_NO_PROXY_FLAG") != "1":
            flags.append("--no-proxies")
        environment = dict(os.environ)
        if options.cache:
            environment["XDG_CACHE_HOME"] = options.cache
        self.log = tempfile.TemporaryFile(mode="w+")
        self.command = [moonreel, "studio", *flags, *arguments]
        self.started = time.time()
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self.log, text=True, env=environment)
        line = self.process.stdout.readline()
        if not line.strip():
            self.process.wait()
            self.log.seek(0)
            raise RuntimeError(f"{shlex.join(self.command)} printed no address (exit {self.process.returncode}): "
                               + self.log.read().strip()[-2000:])
        self.url = line.split()[-1]

    def state(self):
        with http.open(self.url + "state", timeout=10) as reply:
            return json.load(reply)

    def close(self):
        self.process.kill()
        self.process.wait()
        self.log.close()


class ProxyWatch(threading.Thread):
    """Polls GET <url>state from the studio's start until every listed proxy is ready and every
    item reads one, noting when each proxy was first seen making and ready."""

    def __init__(self, studio, timeout):
        super().__init__(daemon=True)
        self.studio, self.timeout = studio, timeout
        self.proxies = {}          # source -> {name, first, queued, making, ready, state, message}
        self.items = (0, 0)        # (proxied, all)
        self.done = None           # time all was ready
        self.error = None
        self.stop = threading.Event()
        self.start()

    def run(self):
        started = self.studio.started
        try:
            while not self.stop.is_set():
                now = time.time()
                try:
                    state = self.studio.state()
                except OSError:
                    if self.studio.process.poll() is not None or now - started > self.timeout:
                        raise
                    time.sleep(0.1)
                    continue
                listed = state.get("proxies")
                if listed is None and now - started > 15:
                    raise RuntimeError("the studio's state has no \"proxies\": this moonreel does not make proxies")
                for entry in listed or []:
                    seen = self.proxies.setdefault(entry.get("source"), {"first": now})
                    seen.update(name=entry.get("name"), state=entry.get("state"), message=entry.get("message"))
                    if entry.get("state") == "queued":
                        seen["queued"] = now
                    elif entry.get("state") == "making":
                        seen.setdefault("making", now)
                    elif entry.get("state") == "ready":
                        seen.setdefault("ready", now)
                    elif entry.get("state") == "failed":
                        raise RuntimeError(f"proxy of {entry.get('source')} failed: {entry.get('message')}")
                items = state.get("items") or []
                self.items = (sum(1 for item in items if item.get("proxied")), len(items))
                if listed and all(p.get("state") == "ready" for p in listed) and items and all(i.get("proxied") for i in items):
                    self.done = now
                    return
                if now - started > self.timeout:
                    states = ", ".join(f"{p.get('name') or p.get('source')}: {p.get('state')} {float(p.get('fraction') or 0):.0%}"
                                       for p in listed or []) or "none listed"
                    raise RuntimeError(f"proxies not ready after {self.timeout:.0f} s ({states}; items proxied "
                                       f"{self.items[0]}/{self.items[1]})")
                time.sleep(0.05)
        except Exception as failure:       # reported by the main thread
            self.error = failure

    def finish(self, browser):
        """Waits for the proxies, then for the page to say it shows one if it can say so; prints the times."""
        self.join()
        if self.error:
            raise self.error
        if browser.evaluate("typeof window.studio.proxied !== 'undefined'"):
            browser.wait("window.studio.proxied", timeout=30)
        started = self.studio.started
        total_duration, first_making = 0.0, None
        lines = []
        for path, seen in self.proxies.items():
            # Made between the last poll that saw it waiting (or its first sighting) and the first that saw it ready.
            began = seen.get("making") or seen.get("queued") or seen["first"]
            first_making = began if first_making is None else min(first_making, began)
            duration = probe(path).get("duration") or 0.0
            total_duration += duration
            took = seen["ready"] - began
            already = "ready at the first look (a kept cache?); " if seen["first"] >= seen["ready"] and "making" not in seen else ""
            lines.append(f"  proxy {seen.get('name') or os.path.basename(path)}: {already}made in {took:.2f} s"
                         + (f" for {duration:.2f} s of source ({duration / took:.2f}x real time)" if took > 0 and duration else ""))
        making = self.done - first_making if first_making is not None else 0.0
        self.summary = {"proxies": len(self.proxies), "ready_after": self.done - started, "making": making,
                        "rtf": total_duration / making if making > 0 else float("nan")}
        print(f"proxies: {len(self.proxies)} ready {self.done - started:.2f} s after the studio started "
              f"(making: {making:.2f} s for {total_duration:.2f} s of source, "
              f"{self.summary['rtf']:.2f}x real time); items reading a proxy: {self.items[0]}/{self.items[1]}")
        for line in lines:
            print(line)
        return self.summary


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
        shutil.rmtree(self.profile, ignore_errors=True)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def playback(browser, length, plays):
    """Plays the item (`length` s, from the server's state) from the top `plays` times; prints and returns the totals."""
    rate = browser.evaluate("studio.frameRate")
    frame = 1 / rate
    expected = max(1, math.ceil(length / frame - 1e-6))
    shown = dropped = 0
    lags, walls, dropped_each, starts, paces, drop_places = [], [], [], [], [], []
    early = min(0.5, length / 2)
    first_half_second = None
    for run in range(plays):
        # From the top (a scrub before may have left the playhead anywhere).
        browser.evaluate("studio.seek(0)")
        browser.wait("studio.frameNumber === 0", timeout=60)
        # Timed in the page, one look a tick: play() to the first picture drawn (the first
        # sound and pictures are fetched before the clock starts) apart from the pace after
        # it, and where in the item frames were dropped.
        run_stats = browser.evaluate(f"""(async () => {{
            const asked = performance.now();
            const tick = () => new Promise((next) => requestAnimationFrame(next));
            let first = null, early = null, dropped = 0, moving = null, last = null;
            const drops = [];
            studio.play();
            while (studio.playing) {{
              await tick();
              if (first === null && studio.framesShown > 0) first = performance.now();
              // The position stops at the last frame's start: the pace is read while it moves.
              const position = studio.position;
              if (position > 0 && studio.playing && position > (last?.[1] ?? 0)) {{ moving ??= [performance.now(), position]; last = [performance.now(), position]; }}
              if (early === null && studio.position > {early}) early = studio.framesShown;
              // Frames waiting count as dropped until a newer one comes, and may be taken back
              // when it does: only new highs are new drops.
              if (studio.framesDropped > dropped) {{
                drops.push([Math.round(studio.position * 1000) / 1000, studio.framesDropped - dropped]);
                dropped = studio.framesDropped;
              }}
            }}
            const end = performance.now();
            // The clock's pace: how far the item's time moved while the wall's moved.
            const pace = moving && last[0] > moving[0] ? (last[1] - moving[1]) / ((last[0] - moving[0]) / 1000) : NaN;
            return {{ start: ((first ?? end) - asked) / 1000, wall: (end - asked) / 1000, pace, early: early ?? studio.framesShown, drops }};
        }})()""")
        starts.append(run_stats["start"])
        paces.append(run_stats["pace"])
        walls.append(run_stats["wall"])
        if run == 0:
            first_half_second = run_stats["early"]
        drop_places.append(run_stats["drops"])
        stats = browser.evaluate("({shown: studio.framesShown, dropped: studio.framesDropped, lags: studio.lags, audio: studio.audioClock})")
        shown += stats["shown"]
        dropped += stats["dropped"]
        dropped_each.append(stats["dropped"])
        lags += [1000 * lag for lag in stats["lags"]]
        audio = stats["audio"]
    wall = sum(walls)
    rtf = plays * length / wall
    pace = statistics.median(paces)
    over = f"{plays} plays of {length:.4g} s" if plays > 1 else f"{length:.4g} s"
    lag_text = (f"median {statistics.median(lags):.1f} ms, p95 {percentile(lags, 0.95):.1f} ms, max {max(lags):.1f} ms"
                if lags else "none measured")
    print(f"playback: {over} ({expected} frames each at {rate:.3f} fps) in {wall:.2f} s wall, {rtf:.3f}x real time "
          f"({1000 * statistics.median(starts):.0f} ms from play() to the first picture; the clock's pace then {pace:.3f}x); "
          f"{shown} frames shown, {dropped} dropped ({100 * dropped / (plays * expected):.1f} % of {plays * expected})"
          f" ({first_half_second} in the first {early:.2g} s)"
          + (f"; dropped per play: {' '.join(map(str, dropped_each))}" if plays > 1 else "")
          + f"; sound clock past the picture's start when drawn: {lag_text}; audio clock: {audio}")
    for run, places in enumerate(drop_places):
        if places:
            print(f"  dropped (item time s: frames){' in play ' + str(run + 1) if plays > 1 else ''}: "
                  + " ".join(f"{t:g}:{n}" for t, n in places[:40]) + (" …" if len(places) > 40 else ""))
    return {"shown": shown, "dropped": dropped, "expected": plays * expected, "rtf": rtf, "pace": pace, "plays": plays,
            "lag_p95": percentile(lags, 0.95) if lags else float("nan")}


def scrub(browser, length, count):
    """`count` random times (no two running the same frame, none on the frame shown): seek() until
    that exact frame is on the canvas."""
    frame = 1 / browser.evaluate("studio.frameRate")
    random.seed(21)
    previous = browser.evaluate("studio.frameNumber")
    targets = []
    while len(targets) < count:
        t = round(random.uniform(0, max(0.0, length - 3 * frame)), 3)
        number = math.floor(t / frame + 1e-6)
        if number == previous and length > 4 * frame:
            continue
        targets.append([t, number])
        previous = number
    latencies = browser.evaluate(f"""(async () => {{
        const out = [];
        performance.clearResourceTimings();
        performance.setResourceTimingBufferSize(10000);
        window.renderTimes = [];
        for (const [t, number] of {json.dumps(targets)}) {{
          const start = performance.now();
          const shown = studio.whenShown(number);
          studio.seek(t);
          await shown;
          out.push(performance.now() - start);
          const entry = performance.getEntriesByType('resource').filter(e => e.name.includes('frame?')).pop();
          window.renderTimes.push(entry?.serverTiming?.[0]?.duration ?? -1);
        }}
        return out;
    }})()""")
    renders = browser.evaluate("window.renderTimes")
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(f"scrub: {count} random times, seek to exact frame on the canvas: median {p50:.0f} ms, "
          f"p95 {p95:.0f} ms, max {max(latencies):.0f} ms "
          f"(of which the server's render: median {statistics.median(renders):.0f} ms, p95 {percentile(renders, 0.95):.0f} ms)")
    return {"p50": p50, "p95": p95, "max": max(latencies)}


def session(options, arguments, measure):
    """Starts the studio with `arguments`, opens the page, waits for proxies with --proxied, then runs `measure(browser, studio)`."""
    studio = Studio(options, *arguments)
    browser = None
    watch = ProxyWatch(studio, options.proxy_timeout) if options.proxied else None
    try:
        browser = Chromium()
        browser.open(studio.url)
        proxies = watch.finish(browser) if watch else None
        if not options.proxied:
            try:
                proxied = [item.get("proxied") for item in studio.state().get("items") or []]
                if any(proxied):
                    print(f"warning: {sum(map(bool, proxied))} of {len(proxied)} items read a proxy without --proxied")
            except (OSError, ValueError):
                pass
        return measure(browser, studio), proxies
    finally:
        if watch:
            watch.stop.set()
        if browser:
            browser.close()
        studio.close()


def item_duration(studio):
    items = studio.state().get("items") or []
    return items[0].get("duration") if items else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gop", type=int, default=60, metavar="N", help="keyframe every N frames in the generated 1080p30 sources (default 60)")
    parser.add_argument("--seconds", type=int, default=20, metavar="S", help="length of the generated source for playback and scrub (default 20)")
    parser.add_argument("--source", metavar="FILE", help="measure this file (playback and scrub, through scripts/examples/portrait.lua) instead of the generated source")
    parser.add_argument("--proxied", action="store_true", help="let the studio make proxies; wait until every one is ready before measuring")
    parser.add_argument("--keep-cache", action="store_true", help="use the studio's usual cache folder (proxies already made are used) instead of a fresh temporary one")
    parser.add_argument("--tests", default=None, metavar="LIST", help="comma-separated: playback,scrub,save (default all; playback,scrub with --source)")
    parser.add_argument("--plays", type=int, default=None, metavar="N", help="times to play the item (default 1, or enough for 10 s of playback with --source)")
    parser.add_argument("--scrubs", type=int, default=50, metavar="N", help="random times to scrub to (default 50)")
    parser.add_argument("--proxy-timeout", type=float, default=900, metavar="S", help="seconds to wait for the proxies (default 900)")
    options = parser.parse_args()
    tests = (options.tests or ("playback,scrub" if options.source else "playback,scrub,save")).split(",")
    unknown = set(tests) - {"playback", "scrub", "save"}
    if unknown:
        parser.error(f"unknown tests: {', '.join(sorted(unknown))}")
    if options.source and "save" in tests:
        parser.error("the save test runs on the generated lyrics job, not with --source")
    if options.source and not os.path.isfile(options.source):
        parser.error(f"no such file: {options.source}")
    if options.gop < 1 or options.seconds < 2 or (options.plays is not None and options.plays < 1) or options.scrubs < 1:
        parser.error("--gop, --plays and --scrubs must be at least 1 and --seconds at least 2")
    if not os.path.exists(moonreel):
        sys.exit(f"studio.py: no {moonreel}: build it first (swift build -c release --static-swift-stdlib) or set MOONREEL")
    os.makedirs(work, exist_ok=True)

    options.cache = None
    if not options.keep_cache:
        options.cache = tempfile.mkdtemp(prefix="studio-bench-cache-")
        # Only Moonreel's own cache is to be fresh: keep fontconfig's, or the first text would wait for a font scan.
        fonts = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fontconfig")
        if os.path.isdir(fonts):
            os.symlink(fonts, os.path.join(options.cache, "fontconfig"))
    flag = "" if options.proxied else (" (--no-proxies not passed: MOONREEL_BENCH_NO_PROXY_FLAG=1)"
                                       if os.environ.get("MOONREEL_BENCH_NO_PROXY_FLAG") == "1" else " --no-proxies")
    results = {}
    try:
        if options.source or {"playback", "scrub"} & set(tests):
            if options.source:
                clip = os.path.abspath(options.source)
                info = probe(clip)
                print(f"source: {clip}: {info.get('video', '?')}, {info.get('duration', float('nan')):.3f} s")
                arguments = [os.path.join(checkout, "scripts/examples/portrait.lua"), f"{work}/studio-out-source.mp4", clip]
            else:
                clip = source(options.seconds, "fast", options.gop)
                cues = f"{work}/studio-lyrics-{options.seconds}.csv"
                with open(cues, "w") as f:
                    f.write(lyrics(options.seconds))
                print(f"source: {clip}: 1080p30 testsrc2, {options.seconds} s, keyframe every {options.gop} frames")
                arguments = [os.path.join(checkout, "scripts/examples/lyrics.lua"), clip, cues, f"{work}/studio-out.mp4"]
            print(f"studio: moonreel studio{flag} {' '.join(map(shlex.quote, arguments))}")

            def measure(browser, studio):
                length = item_duration(studio) or float(options.seconds)
                plays = options.plays or (max(1, min(30, math.ceil(10 / length))) if options.source else 1)
                found = {}
                # Scrubbing first: after playback every frame would be in the studio's frame
                # cache, and the scrub would measure the cache, not the decoding.
                if "scrub" in tests:
                    found["scrub"] = scrub(browser, length, options.scrubs)
                if "playback" in tests:
                    found["playback"] = playback(browser, length, plays)
                return found

            found, proxies = session(options, arguments, measure)
            results.update(found)
            if proxies:
                results["proxies"] = proxies

        if "save" in tests:
            long_clip = source(180, "ultrafast", options.gop)
            long_cues = f"{work}/studio-lyrics-180.csv"
            with open(long_cues, "w") as f:
                f.write(lyrics(180))
            arguments = [os.path.join(checkout, "scripts/examples/lyrics.lua"), long_clip, long_cues, f"{work}/studio-out-180.mp4"]

            def save(browser, studio):
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
                return statistics.median(delays)

            results["save"], proxies = session(options, arguments, save)
            if proxies:
                results["save proxies"] = proxies
    finally:
        if options.cache:
            shutil.rmtree(options.cache, ignore_errors=True)

    try:
        commit = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    parts = [f"source={os.path.relpath(os.path.abspath(options.source), checkout) if options.source else f'generated 1080p30 {options.seconds}s'}"]
    if not options.source:
        parts.append(f"gop={options.gop}")
    parts.append("proxies=on" if options.proxied else "proxies=off" + ("" if flag.strip() == "--no-proxies" else " (flag not passed)"))
    parts.append("cache=kept" if options.keep_cache else "cache=fresh")
    if "proxies" in results:
        p = results["proxies"]
        parts.append(f"proxy ready {p['ready_after']:.2f}s after start, making {p['making']:.2f}s ({p['rtf']:.2f}x)")
    if "playback" in results:
        p = results["playback"]
        parts.append(f"playback {p['shown']}/{p['expected']} shown, {p['dropped']} dropped ({100 * p['dropped'] / p['expected']:.1f}%), "
                     f"{p['rtf']:.3f}x real time with the start, clock at {p['pace']:.3f}x" + (f" over {p['plays']} plays" if p["plays"] > 1 else ""))
    if "scrub" in results:
        parts.append(f"scrub p50 {results['scrub']['p50']:.0f} ms p95 {results['scrub']['p95']:.0f} ms")
    if "save proxies" in results:
        p = results["save proxies"]
        parts.append(f"3-min proxy making {p['making']:.2f}s ({p['rtf']:.2f}x)")
    if "save" in results:
        parts.append(f"save median {1000 * results['save']:.0f} ms")
    parts.append(f"commit {commit}" if commit else "commit ?")
    parts.append(time.strftime("%Y-%m-%d"))
    print(f"summary: bench/studio.py {' '.join(map(shlex.quote, sys.argv[1:]))} | " + "; ".join(parts))


if __name__ == "__main__":
    sys.exit(main())

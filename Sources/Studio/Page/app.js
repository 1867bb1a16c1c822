// Moonreel Studio: the page.
//
// The server does the rendering: pictures (one JPEG per frame, asked for by time), sound
// (float samples mixed as the export mixes them) and the edit's outline. The page keeps
// the clock, asks for what the clock needs, draws it, and sends parameter changes back.
// Every URL is relative, so the token in the page's path goes with each request.

const $ = (selector) => document.querySelector(selector);

/** A new element with `properties` assigned and `children` appended. */
function element(tag, properties = {}, ...children) {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

const clamp = (value, low, high) => Math.min(Math.max(value, low), high);
const pad2 = (number) => String(number).padStart(2, '0');
const span = (start, end) => `${start.toFixed(2)}–${end.toFixed(2)} s`;
const formatNumber = (value) => String(Number.isInteger(value) ? value : +Number(value).toFixed(6));

/** Sets a node's text only when it differs (the readouts change up to 60 times a second). */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** A value of a custom property of style.css (the canvases draw in the page's colours). */
const tones = new Map();
function tone(name) {
  if (!tones.has(name)) tones.set(name, getComputedStyle(document.documentElement).getPropertyValue(`--${name}`).trim() || '#888');
  return tones.get(name);
}
const fontFamily = () => getComputedStyle(document.body).fontFamily;

/** Runs the last action given after `milliseconds` of quiet; `flush` runs it at once. */
function debounced(milliseconds) {
  let timer = 0;
  let pending = null;
  const flush = () => {
    clearTimeout(timer);
    const action = pending;
    pending = null;
    action?.();
  };
  const later = (action) => {
    pending = action;
    clearTimeout(timer);
    timer = setTimeout(flush, milliseconds);
  };
  later.flush = flush;
  later.pending = () => pending !== null;
  return later;
}

// Elements ---------------------------------------------------------------------------------

const player = $('#player');
const picture = player.getContext('2d', { alpha: false });
const stage = $('#stage');
const banner = $('#error-banner');
const playButton = $('#play');
const exportButton = $('#export');
const itemSelect = $('#item-select');
const panel = $('#parameters');
const timelineBox = $('#timeline-box');
const timeline = $('#timeline');
const help = $('#help');

// What is shown ----------------------------------------------------------------------------

const view = {
  state: null,                 // the newest state applied
  item: 0,                     // index of the item previewed
  position: 0,                 // seconds at the playhead
  inPoint: null,               // loop range (seconds); null: the item's start / end
  outPoint: null,
  loop: false,
  shown: { number: -1, time: 0, generation: -1, item: -1, at: 0 },  // the frame on the canvas
  note: null,                  // a failed request's message, shown until the next state
  exportState: 'idle',
  exportEvents: 0,             // export messages seen on the socket
  ready: false,
};

const item = () => view.state?.items?.[view.item] ?? null;
const generation = () => view.state?.generation ?? -1;
const duration = () => item()?.duration ?? 0;
// Sound-only items have no frame grid of their own: stepping and timecode use 30 fps.
const frameDuration = () => item()?.frameDuration || 1 / 30;
// A rate within 0.5 % of a whole number (29.97 is 30) counts that many frames per second of
// timecode, as editors do; another (a phone clip's 10.5 fps average) counts each second's
// frames from the first frame at or after it, so the timecode stays on the clock.
const nominalRate = () => Math.round(item()?.frameRate || 1 / frameDuration()) || 30;
const countsWholeFrames = () => Math.abs(1 / frameDuration() - nominalRate()) < 0.005 * nominalRate();
const frameCount = () => Math.max(1, Math.ceil(duration() / frameDuration() - 1e-6));
// The tolerance keeps a time computed as n × frameDuration in frame n despite rounding.
const frameAt = (time) => Math.floor(time / frameDuration() + 1e-6);
const frameStart = (number) => number * frameDuration();
const lastFrameStart = () => frameStart(frameCount() - 1);
const lastFrameBefore = (end) => Math.max(0, Math.ceil(end / frameDuration() - 1e-6) - 1);
const clampTime = (time) => clamp(time, 0, lastFrameStart());
const showsPictures = () => Boolean(item()?.hasVideo && item().width > 0 && item().height > 0);

/** Frame `number` as whole seconds and the frame into that second. */
function secondAndFrame(number) {
  if (countsWholeFrames()) return [Math.floor(number / nominalRate()), number % nominalRate()];
  const whole = Math.floor(frameStart(number) + 1e-6);
  return [whole, number - Math.ceil(whole / frameDuration() - 1e-6)];
}

function timecode(number) {
  const [whole, frame] = secondAndFrame(number);
  return `${pad2(Math.floor(whole / 3600))}:${pad2(Math.floor(whole / 60) % 60)}:${pad2(whole % 60)}:${pad2(frame)}`;
}

// Server -----------------------------------------------------------------------------------

const postJSON = (url, body) =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function failureText(response) {
  return (await response.text()).trim() || `${response.status} ${response.statusText}`;
}

/** A reply that is a state, or `{ error }` (JSON, or the server's one-line text). */
async function readReply(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: text.trim() || `${response.status} ${response.statusText}` } };
  }
}

// One state request at a time; events during it ask for one more afterwards.
const stateRequest = { busy: false, again: false };

async function refreshState() {
  if (stateRequest.busy) {
    stateRequest.again = true;
    return;
  }
  stateRequest.busy = true;
  try {
    do {
      stateRequest.again = false;
      const response = await fetch('state', { cache: 'no-store' });
      if (response.ok) applyState(await response.json());
    } while (stateRequest.again);
  } catch (error) {
    console.warn('state:', error.message);
  } finally {
    stateRequest.busy = false;
  }
}

/** Frame `number` of the current item as a bitmap, with the server's number and start time. */
async function fetchFrame(number, lane, signal) {
  const itemIndex = view.item;
  const requested = generation();
  // The middle of the frame (or of what is left of a last, partial one): no rounding puts
  // it in a neighbour.
  const start = frameStart(number);
  const time = start + Math.min(frameDuration(), duration() - start) / 2;
  // lane: the server keeps playback and scrubbing on decoders of their own.
  const response = await fetch(`frame?item=${itemIndex}&t=${time.toFixed(6)}&lane=${lane}`, { cache: 'no-store', signal });
  if (!response.ok) throw new Error(await failureText(response));
  return {
    number: Number(response.headers.get('X-Frame-Number')),
    time: Number(response.headers.get('X-Frame-Time')),
    bitmap: await createImageBitmap(await response.blob()),
    item: itemIndex,
    generation: requested,
  };
}

// Pictures ---------------------------------------------------------------------------------

const shownWaiters = new Set();  // studio.whenShown promises

function draw(frame) {
  picture.drawImage(frame.bitmap, 0, 0, player.width, player.height);
  frame.bitmap.close();
  view.shown = { number: frame.number, time: frame.time, generation: frame.generation, item: frame.item, at: Date.now() };
  view.ready = true;
  for (const waiter of shownWaiters) {
    if (waiter.number === frame.number) {
      shownWaiters.delete(waiter);
      waiter.resolve(view.shown.at);
    }
  }
  updateReadouts();
}

function drawPlaceholder(text) {
  picture.fillStyle = '#000';
  picture.fillRect(0, 0, player.width, player.height);
  picture.fillStyle = tone('dim');
  picture.font = `${Math.round(player.height / 24)}px ${fontFamily()}`;
  picture.textAlign = 'center';
  picture.textBaseline = 'middle';
  picture.fillText(text, player.width / 2, player.height / 2);
  view.shown = { ...view.shown, number: -1 };
  view.ready = true;
}

/** The canvas takes the item's preview size (setting it clears the canvas). */
function fitCanvas() {
  const [width, height] = showsPictures() ? [item().width, item().height] : [960, 540];
  if (player.width === width && player.height === height) return;
  player.width = width;
  player.height = height;
  view.shown = { ...view.shown, number: -1 };
}

// Paused and scrubbing: one request in flight at most. When it completes, the newest
// wanted frame is asked for if it is not the one shown; times wanted in between are
// skipped, so a fast drag never builds a queue.
const still = { busy: false, wanted: null };

function showStill() {
  if (!showsPictures()) {
    drawPlaceholder(item() ? 'sound only' : '');
    return;
  }
  still.wanted = { number: frameAt(view.position), item: view.item, generation: generation() };
  if (!still.busy) pumpStill();
}

async function pumpStill() {
  still.busy = true;
  while (still.wanted) {
    const wanted = still.wanted;
    still.wanted = null;
    const { shown } = view;
    if (shown.number === wanted.number && shown.item === wanted.item && shown.generation === wanted.generation) continue;
    stage.classList.add('busy');
    try {
      const frame = await fetchFrame(wanted.number, 'scrub');
      if (playback.playing || frame.item !== view.item || !showsPictures()) frame.bitmap.close();
      else draw(frame);
    } catch (error) {
      console.warn('frame:', error.message);
    }
    stage.classList.remove('busy');
  }
  still.busy = false;
}

// Playback ---------------------------------------------------------------------------------
//
// A run is one stretch of playing from a position; seeking, a new state or a changed loop
// starts a new one. Its clock is the AudioContext when the item has sound (the sound is
// the master and pictures follow it), else performance.now(). Run time maps to the item's
// time straight on, or around the loop range; a pass counts the times round.
//
// Pictures are asked for in order, from where the clock will be when a reply typically comes
// to FRAMES_LEAD frames beyond (FRAMES_IN_FLIGHT at most), held until the clock reaches them
// (phaseShift may draw one up to half a frame early), then drawn; every frame number passed
// over between two frames drawn is counted dropped. The clock waits only for a run's first
// pictures (a second at most), never for a picture once it runs.

const CHUNK = 1;             // seconds of sound per request
const SOUND_AHEAD = 2;       // seconds of sound kept scheduled
const SOUND_LEAD = 0.05;     // seconds from the first sound's arrival to its start
const FRAMES_IN_FLIGHT = 3;
const FRAMES_LEAD = 2;       // frames asked for beyond where the clock will be when they come
const PREROLL_WAIT = 1;      // seconds a run's start waits at most for its first pictures
const PASS = 2 ** 26;        // frame sequence numbers: pass × PASS + frame number

const playback = {
  playing: false,
  tick: 0,                   // the pending requestAnimationFrame (one chain at a time)
  run: 0,                    // bumped at every (re)start: replies for older runs are dropped
  origin: null,              // { clock, position, loop, start, end }; null until the clock starts
  context: null,             // the AudioContext, kept from run to run
  audioClock: false,         // whether the last run's clock was the AudioContext
  sources: new Set(),        // sound scheduled and not yet ended
  soundNext: 0,              // run time of the next chunk of sound to fetch
  frames: { inFlight: 0, requested: -1, shown: -1, firstDue: -1, ready: new Map(), latency: 0.06 },
  framesShown: 0,
  framesDropped: 0,
  framesWaiting: 0,                // passed since the last frame shown, none newer come yet
  lags: [],                  // clock minus the start of each frame drawn, seconds
  phase: {},                 // phaseShift's lock on where ticks fall in frames (a run's)
  tickInterval: 0,           // seconds between vsyncs, averaged (kept from run to run)
  lastElapsed: 0,            // the run's clock at the last tick: it never goes back
  abort: new AbortController(),  // the run's picture requests, aborted when it stops
};

/** The run's clock in seconds at `at` (a performance.now() time: a tick's is its frame's
 *  vsync time). With sound it is the AudioContext's time of the sample heard at `at`.
 *  `currentTime` moves in steps of the device's buffer (10.7 ms in headless Chromium against
 *  16.7 ms frames at 60 fps: pictures skipped and repeated at random), so the clock is the
 *  context's last output timestamp carried on by the page's own clock. */
function clockNow(at = performance.now()) {
  if (!playback.audioClock) return at / 1000;
  const context = playback.context;
  const stamp = context.getOutputTimestamp?.();
  // Only while the context runs: a suspended one's stamp must not run the pictures on past
  // the sound. (Between two stamps the page's clock carries on, as video players carry the
  // sound card's clock; changing formulas there would make the pictures jump.)
  if (context.state === 'running' && stamp?.performanceTime > 0) {
    return stamp.contextTime + (at - stamp.performanceTime) / 1000;
  }
  // Sound leaves the graph this long before it is heard: the picture follows the ear.
  return context.currentTime - (context.outputLatency || 0) - (context.baseLatency || 0);
}

/** Where a run is `elapsed` seconds in: the item's time and how many times it looped. */
function mediaAt(origin, elapsed) {
  const time = origin.position + elapsed;
  if (!origin.loop || time < origin.end) return { time, pass: 0 };
  const length = origin.end - origin.start;
  const over = time - origin.end;
  return { time: origin.start + (over % length), pass: 1 + Math.floor(over / length) };
}

const runElapsed = (at) => Math.max(0, clockNow(at) - playback.origin.clock);

function loopBounds() {
  return { start: view.inPoint ?? 0, end: view.outPoint ?? duration() };
}

function play() {
  if (playback.playing || !item() || duration() <= 0) return;
  if (!view.loop && frameAt(view.position) >= frameCount() - 1) view.position = 0;  // at the end: from the top
  playback.playing = true;
  playback.framesShown = 0;
  playback.framesDropped = 0;
  playback.framesWaiting = 0;
  playback.lags = [];
  playButton.classList.add('playing');
  playButton.title = 'Pause (Space)';
  startRun();
  cancelAnimationFrame(playback.tick);
  playback.tick = requestAnimationFrame(tick);
}

function pause() {
  if (!playback.playing) return;
  if (playback.origin) view.position = clampTime(mediaAt(playback.origin, runElapsed()).time);
  playback.playing = false;
  stopRun();
  playButton.classList.remove('playing');
  playButton.title = 'Play (Space)';
  showStill();
  updateReadouts();
}

const togglePlay = () => (playback.playing ? pause() : play());

function stopRun() {
  playback.run++;
  playback.origin = null;
  for (const source of playback.sources) {
    source.onended = null;
    source.stop();
  }
  playback.sources.clear();
  playback.phase = { x: 0, y: 0 };
  playback.lastElapsed = 0;
  playback.abort.abort();
  playback.abort = new AbortController();
  const { frames } = playback;
  for (const frame of frames.ready.values()) frame.bitmap.close();
  frames.ready.clear();
  frames.inFlight = 0;
  frames.requested = -1;
  frames.shown = -1;
  frames.firstDue = -1;
}

async function startRun() {
  stopRun();
  const run = playback.run;
  const current = item();
  const { start, end } = loopBounds();
  if (view.loop && (view.position < start || view.position >= end)) view.position = start;
  const origin = { clock: 0, position: view.position, loop: view.loop, start, end };
  playback.audioClock = false;
  const pictures = Promise.race([preroll(origin, run), new Promise((resolve) => setTimeout(resolve, PREROLL_WAIT * 1000))]);
  if (current.hasAudio && (await runningAudioContext(current)) && run === playback.run) {
    // The first second of sound comes before the clock starts, so none of it is cut.
    const first = chunkAt(origin, 0);
    const buffer = await fetchSound(first.time, first.length);
    await pictures;
    if (run !== playback.run) return;
    if (buffer) {
      playback.audioClock = true;
      origin.clock = playback.context.currentTime + SOUND_LEAD;
      playback.origin = origin;
      schedule(buffer, origin.clock);
      playback.soundNext = first.length;
      pumpSound(run, origin);
      return;
    }
  }
  await pictures;
  if (run !== playback.run) return;
  origin.clock = performance.now() / 1000;
  playback.origin = origin;
}

/** The AudioContext, running, at the item's sample rate when known (no resampling
 *  seams between chunks); null when the browser will not start it. */
async function runningAudioContext(current) {
  try {
    const rate = current.sampleRate || undefined;
    if (playback.context && rate && playback.context.sampleRate !== rate) {
      playback.context.close();
      playback.context = null;
    }
    playback.context ??= new AudioContext({ latencyHint: 'interactive', sampleRate: rate });
    if (playback.context.state !== 'running') {
      // Without a user gesture resume() waits for one: give up soon and use the wall clock.
      await Promise.race([playback.context.resume(), new Promise((resolve) => setTimeout(resolve, 300))]);
    }
    return playback.context.state === 'running' ? playback.context : null;
  } catch (error) {
    console.warn('no sound:', error.message);
    return null;
  }
}

/** The sound a run plays from `elapsed` on: a chunk, never across its end or loop point. */
function chunkAt(origin, elapsed) {
  const { time } = mediaAt(origin, elapsed);
  return { time, length: Math.min(CHUNK, (origin.loop ? origin.end : duration()) - time) };
}

async function fetchSound(start, length) {
  try {
    const response = await fetch(`audio?item=${view.item}&start=${start.toFixed(6)}&duration=${length.toFixed(6)}`, { cache: 'no-store' });
    if (!response.ok) throw new Error(await failureText(response));
    const channels = Number(response.headers.get('X-Channels')) || 1;
    const rate = Number(response.headers.get('X-Sample-Rate'));
    const samples = new Float32Array(await response.arrayBuffer());
    const frames = Math.floor(samples.length / channels);
    if (!frames) return null;
    // The server interleaves the channels; Web Audio keeps each in a plane of its own.
    const buffer = playback.context.createBuffer(channels, frames, rate);
    for (let channel = 0; channel < channels; channel++) {
      const plane = buffer.getChannelData(channel);
      for (let i = 0; i < frames; i++) plane[i] = samples[i * channels + channel];
    }
    return buffer;
  } catch (error) {
    console.warn('sound:', error.message);
    return null;
  }
}

/** Keeps about SOUND_AHEAD seconds of the run's sound scheduled, one chunk at a time. */
async function pumpSound(run, origin) {
  while (run === playback.run) {
    const elapsed = playback.soundNext;
    if (elapsed > runElapsed() + SOUND_AHEAD) {
      setTimeout(() => pumpSound(run, origin), 250);
      return;
    }
    const chunk = chunkAt(origin, elapsed);
    if (chunk.length <= 0) return;                 // the end, not looping: nothing more to play
    playback.soundNext = elapsed + chunk.length;
    if (chunk.length < 1e-3) continue;             // a rounding sliver before the loop point
    const buffer = await fetchSound(chunk.time, chunk.length);
    if (run !== playback.run || !buffer) return;
    schedule(buffer, origin.clock + elapsed);
  }
}

function schedule(buffer, when) {
  const context = playback.context;
  const late = context.currentTime - when;
  if (late >= buffer.duration) return;
  const source = new AudioBufferSourceNode(context, { buffer });
  source.connect(context.destination);
  // A chunk that came late starts part-way in, so the sound stays on the clock.
  source.start(Math.max(when, context.currentTime), Math.max(0, late));
  source.onended = () => playback.sources.delete(source);
  playback.sources.add(source);
}

function tick(vsync) {
  if (!playback.playing) return;
  playback.tick = requestAnimationFrame(tick);
  const origin = playback.origin;
  if (!origin) return;                             // the run's first sound and pictures are on their way
  // Never back within a run: a late output timestamp must not show an earlier frame again.
  const elapsed = playback.lastElapsed = Math.max(playback.lastElapsed, runElapsed(vsync));
  const now = mediaAt(origin, elapsed);
  if (!origin.loop && now.time >= duration()) {
    pause();                                       // stops on the last frame
    return;
  }
  view.position = clampTime(now.time);
  if (showsPictures()) {
    presentFrame(origin, now, mediaAt(origin, elapsed + phaseShift(vsync, now, elapsed)));
    requestFrames(origin, elapsed);
  }
  updateReadouts();
}

/** Seconds to move the time a tick shows so that ticks fall mid-frame, when the screen
 *  refreshes at the frame rate (60 fps on a 60 Hz screen). Ticks there keep one place in
 *  their frames; near a frame's start, a tick's few milliseconds of jitter show that frame
 *  or its neighbour at random (one repeated, the next skipped). Moved, a picture is at most
 *  half a frame off the sound. Other rates: no move (nothing to lock to). */
function phaseShift(vsync, now, elapsed) {
  const lock = playback.phase;
  const frame = frameDuration();
  const interval = lock.vsync === undefined ? 0 : (vsync - lock.vsync) / 1000;
  lock.vsync = vsync;
  // A missed vsync (a tick twice as long) says nothing of the screen's rate.
  if (interval > 0 && (!playback.tickInterval || interval < 1.5 * playback.tickInterval)) {
    playback.tickInterval = playback.tickInterval ? 0.9 * playback.tickInterval + 0.1 * interval : interval;
  }
  if (!playback.tickInterval || Math.abs(playback.tickInterval - frame) > 0.05 * frame) return 0;
  // A loop's wrap moves the ticks' place in the frames (a loop need not be whole frames).
  if (lock.pass !== now.pass) Object.assign(lock, { pass: now.pass, x: 0, y: 0 });
  // Before the clock starts (the first sound's lead) every tick reads 0: nothing to learn.
  if (elapsed > 0) {
    // Where in its frame a tick falls, averaged round the circle (0.99 and 0.01 are neighbours).
    const angle = 2 * Math.PI * (now.time / frame);
    lock.x = 0.95 * lock.x + 0.05 * Math.cos(angle);
    lock.y = 0.95 * lock.y + 0.05 * Math.sin(angle);
  }
  if (!lock.x && !lock.y) return 0;
  const place = Math.atan2(lock.y, lock.x) / (2 * Math.PI);
  return (0.5 - (place - Math.floor(place))) * frame;
}

/** Seconds between the frames asked for: a frame's, or a tick's when frames come much faster
 *  than the screen shows them (120 fps on 60 Hz: only every other one can be drawn). A step
 *  a little over a frame would skip frame numbers now and then. */
const requestStep = () => (playback.tickInterval > 1.5 * frameDuration() ? playback.tickInterval : frameDuration());

/** Asks, in order, for the frames from where the clock will be when a reply comes to
 *  FRAMES_LEAD beyond: a late tick or a slow reply then skips none. */
function requestFrames(origin, elapsed) {
  const { frames } = playback;
  for (let lead = 0; lead <= FRAMES_LEAD && frames.inFlight < FRAMES_IN_FLIGHT; lead++) {
    requestFrameAt(origin, elapsed + frames.latency + lead * requestStep(), playback.run);
  }
}

/** Asks for the frame a run shows `elapsed` seconds in, unless it or a later one was asked
 *  for; `timed`: its reply counts in how long replies take. */
function requestFrameAt(origin, elapsed, run, timed = true) {
  const { frames } = playback;
  const ahead = mediaAt(origin, elapsed);
  const number = frameAt(origin.loop ? ahead.time : Math.min(ahead.time, lastFrameStart()));
  const sequence = ahead.pass * PASS + number;
  if (sequence <= frames.requested) return null;
  frames.requested = sequence;
  return requestPlaybackFrame(sequence, number, run, timed);
}

/** The run's first pictures, up to where its first tick asks (FRAMES_IN_FLIGHT + FRAMES_LEAD
 *  at most), fetched before its clock starts: a run does not start with frames still to
 *  come (7 of a 60 fps run's first 30 were dropped). They wait behind one another at the
 *  server, so their replies do not count in how long a reply takes. */
function preroll(origin, run) {
  if (!showsPictures()) return Promise.resolve();
  const asked = [];
  const until = Math.min(playback.frames.latency + FRAMES_LEAD * requestStep(), (FRAMES_IN_FLIGHT + FRAMES_LEAD - 1) * requestStep());
  for (let elapsed = 0; elapsed <= until + 1e-9; elapsed += requestStep()) asked.push(requestFrameAt(origin, elapsed, run, false));
  return Promise.all(asked);
}

async function requestPlaybackFrame(sequence, number, run, timed) {
  const { frames } = playback;
  frames.inFlight++;
  const asked = performance.now();
  try {
    const frame = await fetchFrame(number, 'play', playback.abort.signal);
    // How long replies take: how far ahead of the clock to ask.
    if (timed && run === playback.run) {
      frames.latency = clamp(0.8 * frames.latency + 0.2 * ((performance.now() - asked) / 1000), 0.01, 0.5);
    }
    if (run !== playback.run || sequence <= frames.shown) frame.bitmap.close();
    else frames.ready.set(sequence, frame);
  } catch (error) {
    if (error.name !== 'AbortError') console.warn('frame:', error.message);
  } finally {
    if (run === playback.run) frames.inFlight--;
  }
}

/** Draws the newest frame that has come and whose time (`shown`: the clock's, phase-locked)
 *  has come; older ones are let go.
 *  Frames the clock has passed while none came count as dropped at once (a starved server
 *  shows in the counter while it lasts, not only once a frame comes). */
function presentFrame(origin, now, shown) {
  const { frames } = playback;
  const due = shown.pass * PASS + frameAt(shown.time);
  let best = -1;
  for (const sequence of frames.ready.keys()) if (sequence <= due && sequence > best) best = sequence;
  // Before this run's first picture comes, every frame the clock has reached is waiting
  // (a slow machine's first seconds are otherwise counted as nothing).
  if (frames.firstDue < 0) frames.firstDue = due;
  // Frames from the run's first due one up to `to` (not included), none shown yet.
  const sinceFirst = (to) => (to === frames.firstDue ? 0 : skippedBetween(frames.firstDue, to, origin) + 1);
  const waiting = () => Math.max(0, frames.shown >= 0 ? skippedBetween(frames.shown, due, origin) : sinceFirst(due) + 1);
  if (best < 0) {
    playback.framesWaiting = waiting();
    return;
  }
  const frame = frames.ready.get(best);
  for (const [sequence, older] of frames.ready) {
    if (sequence > best) continue;
    frames.ready.delete(sequence);
    if (older !== frame) older.bitmap.close();
  }
  playback.framesDropped += Math.max(0, frames.shown >= 0 ? skippedBetween(frames.shown, best, origin) : sinceFirst(best));
  frames.shown = best;
  playback.framesShown++;
  playback.framesWaiting = waiting();
  if (playback.lags.length < 100_000) playback.lags.push(now.time - frame.time);
  draw(frame);
}

/** Frames the clock passed without showing them, those still waiting for a newer frame included. */
function framesDropped() { return playback.framesDropped + playback.framesWaiting; }

/** Frame numbers passed over between two frames drawn (across the loop point: before it and after it). */
function skippedBetween(from, to, origin) {
  const [fromPass, fromNumber] = [Math.floor(from / PASS), from % PASS];
  const [toPass, toNumber] = [Math.floor(to / PASS), to % PASS];
  if (fromPass === toPass) return toNumber - fromNumber - 1;
  const first = frameAt(origin.start);
  const last = lastFrameBefore(origin.end);
  return (last - fromNumber) + (toNumber - first) + (toPass - fromPass - 1) * (last - first + 1);
}

// Moving the playhead ----------------------------------------------------------------------

function seek(time) {
  if (!item()) return;
  view.position = clampTime(time);
  if (playback.playing) startRun();
  else showStill();
  updateReadouts();
}

/** Frame steps stop playback first, as in an editor. */
function step(frames) {
  pause();
  seek(frameStart(frameAt(view.position) + frames));
}

/** To the previous or next edit point or cue boundary. */
function jump(direction) {
  const current = item();
  if (!current) return;
  const here = frameAt(view.position);
  const last = frameCount() - 1;
  const points = [...(current.editPoints ?? []), ...(current.cues ?? []).flatMap((cue) => [cue.start, cue.end])]
    .map((time) => Math.min(frameAt(time), last));
  const target = direction > 0
    ? Math.min(...points.filter((number) => number > here))
    : Math.max(...points.filter((number) => number < here));
  if (Number.isFinite(target)) seek(frameStart(target));
}

function setRange(inPoint, outPoint) {
  view.inPoint = inPoint;
  view.outPoint = outPoint;
  loopChanged();
}

function setIn() {
  const inPoint = frameStart(frameAt(view.position));
  setRange(inPoint, view.outPoint != null && view.outPoint <= inPoint ? null : view.outPoint);
}

function setOut() {
  const outPoint = Math.min(duration(), frameStart(frameAt(view.position) + 1));
  setRange(view.inPoint != null && view.inPoint >= outPoint ? null : view.inPoint, outPoint);
}

function toggleLoop() {
  view.loop = !view.loop;
  loopChanged();
}

function loopChanged() {
  // A run keeps the loop it started with: start another so the change holds at once.
  if (playback.playing && (view.loop || playback.origin?.loop)) {
    if (playback.origin) view.position = clampTime(mediaAt(playback.origin, runElapsed()).time);
    startRun();
  }
  renderLoop();
}

function renderLoop() {
  const ranged = view.inPoint != null || view.outPoint != null;
  $('#loop').setAttribute('aria-pressed', String(view.loop));
  $('#clear-range').hidden = !ranged;
  setText($('#loop-range'), ranged ? `${timecode(frameAt(view.inPoint ?? 0))} – ${timecode(lastFrameBefore(view.outPoint ?? duration()))}` : '');
  invalidateTimeline();
}

function updateReadouts() {
  const number = frameAt(view.position);
  setText($('#timecode'), timecode(number));
  setText($('#frame-number'), item() ? `frame ${number} / ${frameCount()}` : '');
  const dropped = $('#dropped');
  dropped.hidden = !playback.playing && playback.framesShown === 0;
  setText(dropped, `dropped ${framesDropped()}`);
  dropped.classList.toggle('some', framesDropped() > 0);
  keepPlayheadInView();
  drawTimelineSoon();
}

// State ------------------------------------------------------------------------------------

function applyState(state) {
  if (state.generation < generation()) return;     // a reply overtaken by a newer state
  const fresh = state.generation !== generation();
  view.state = state;
  if (fresh) view.note = null;
  if (!item()) view.item = 0;
  document.title = state.script ? `${state.script} — Moonreel Studio` : 'Moonreel Studio';
  setText($('#script-name'), state.script ?? '');
  setText($('#generation'), `run ${state.generation}`);
  renderBanner();
  renderPrints(state.prints ?? []);
  renderDiagnostics(state.diagnostics ?? [], state.diagnosticCounts);
  renderItems();
  renderProxies();
  renderParameters();
  renderExport(state.export ?? { state: 'idle' });
  if (fresh) itemChanged();
}

/** After a new run or a change of item: canvas, timeline, playhead and picture follow.
 *  The play state, position and loop range stay (clamped to the new length). */
function itemChanged() {
  const current = item();
  renderItemInfo();
  fitCanvas();
  view.position = clampTime(view.position);
  if (view.inPoint != null && view.inPoint >= duration()) view.inPoint = null;
  if (view.outPoint != null && view.outPoint > duration()) view.outPoint = duration();
  buildLanes();
  renderLoop();
  // The picture may have changed even at the same time: it is asked for again.
  if (!current) pause();
  if (playback.playing) startRun();
  else showStill();
  updateReadouts();
}

function renderBanner() {
  const error = view.state?.error?.message ?? null;
  const message = error ?? view.note;
  banner.hidden = !message;
  banner.title = message ?? '';
  banner.replaceChildren(
    ...(message ? [element('span', { className: 'message', textContent: message })] : []),
    ...(error && item() ? [element('span', { className: 'kept', textContent: 'showing the last good run' })] : []),
  );
}

function showNote(message) {
  view.note = message || 'request failed';
  renderBanner();
}

function renderPrints(prints) {
  setText($('#prints'), prints.join('\n'));
  setText($('#print-count'), prints.length ? String(prints.length) : '');
}

/** What the run did other than asked, each with its time: a click goes there. */
function renderDiagnostics(diagnostics, counts) {
  const warnings = counts?.warning ?? 0, notes = counts?.note ?? 0, leftOut = warnings + notes - diagnostics.length;
  $('#diagnostics-box').hidden = !diagnostics.length;
  setText($('#diagnostic-count'), diagnostics.length ? `${warnings} warning${warnings === 1 ? '' : 's'}, ${notes} note${notes === 1 ? '' : 's'}` : '');
  const more = leftOut > 0 ? [element('li', { className: 'more', textContent: `… and ${leftOut} more, not listed (warnings come first); moonreel run prints them all` })] : [];
  $('#diagnostics').replaceChildren(...diagnostics.map((entry) => {
    const at = entry.time == null ? '' : `${formatNumber(Math.round(entry.time * 100) / 100)} s`;
    const button = element('button', { className: `diagnostic ${entry.level}`, disabled: entry.time == null,
                                        title: entry.time == null ? entry.message : `Go to ${at}` },
      element('span', { className: 'at mono', textContent: at }),
      element('span', { className: 'text', textContent: `${entry.message} [${entry.kind}]` }));
    button.addEventListener('click', () => seek(entry.time));
    return element('li', {}, button);
  }), ...more);
}

function renderItems() {
  const items = view.state.items ?? [];
  itemSelect.hidden = items.length < 2;
  const labels = items.map((entry, index) => `${index + 1}. ${entry.output.split('/').pop() || 'export'} · ${entry.preset}`);
  if (labels.join('\n') !== [...itemSelect.options].map((option) => option.text).join('\n')) {
    itemSelect.replaceChildren(...labels.map((label, index) => new Option(label, String(index))));
  }
  itemSelect.value = String(view.item);
}

function renderItemInfo() {
  const current = item();
  const parts = [];
  if (current?.hasVideo) parts.push(`${current.renderWidth}×${current.renderHeight}`, `${+current.frameRate.toFixed(3)} fps`);
  else if (current) parts.push('sound only');
  if (current) parts.push(`${current.duration.toFixed(2)} s`);
  setText($('#item-info'), parts.join(' · '));
  $('#item-info').title = current ? `${current.output} (${current.preset})` : '';
}

/** Whether the picture comes from proxies, or how far they are. */
function renderProxies() {
  const proxies = view.state?.proxies ?? [];
  const making = proxies.find((proxy) => proxy.state === 'making');
  const waiting = proxies.filter((proxy) => proxy.state === 'queued').length;
  const failed = proxies.find((proxy) => proxy.state === 'failed');
  const badge = $('#proxy-status');
  let text = '';
  let title = '';
  if (item()?.proxied) {
    text = 'proxy';
    title = 'Shown from preview proxies (small copies with a keyframe every half second); the export reads the sources';
  } else if (making) {
    text = `making proxy ${Math.round(making.fraction * 100)}%`;
    title = `${making.name}: ${making.message}; the preview reads the source until it is made`;
  } else if (waiting) {
    text = 'proxy queued';
    title = `${waiting} source${waiting === 1 ? '' : 's'} waiting for a proxy`;
  } else if (failed) {
    text = 'no proxy';
    title = `${failed.name}: ${failed.message}`;
  }
  badge.hidden = !text;
  badge.classList.toggle('warn', Boolean(failed) && !item()?.proxied);
  setText(badge, text);
  badge.title = title;
}

function selectItem(index) {
  view.item = index;
  view.inPoint = view.outPoint = null;
  zoom.start = 0;
  zoom.span = null;
  itemChanged();
  renderProxies();
}

// Export -----------------------------------------------------------------------------------

function renderExport(progress) {
  view.exportState = progress.state;
  const running = progress.state === 'running';
  const refusal = view.state?.exportRefusal;
  exportButton.disabled = running || !item() || Boolean(refusal);
  exportButton.title = refusal ?? 'Export the item shown, as the script would';
  const bar = $('#export-progress');
  bar.hidden = !running;
  bar.value = progress.fraction ?? 0;
  const message = $('#export-message');
  setText(message, progress.message ?? '');
  message.title = progress.message ?? '';
  message.className = progress.state;
}

async function startExport() {
  const seen = view.exportEvents;
  exportButton.disabled = true;
  try {
    const response = await postJSON('export', { item: view.item });
    if (!response.ok) renderExport({ state: 'failed', message: await failureText(response) });
    // Running, unless the socket has already told more (a short export may be done by now).
    else if (view.exportEvents === seen) renderExport({ state: 'running', fraction: 0, message: 'starting export…' });
  } catch (error) {
    renderExport({ state: 'failed', message: error.message });
  }
}

// Parameters -------------------------------------------------------------------------------

// Changes go to the server one at a time (each re-runs the script); a newer value for a
// parameter still waiting replaces the older one.
const changes = { queue: new Map(), current: null };
const changeKey = (effect, name) => `${effect ?? ''}\n${name}`;
const changePending = (key) => changes.queue.has(key) || changes.current === key;

/** Sends a value (`undefined`: back to the script's own); `effect` null for one of the
 *  script's own parameters. Resolves once applied. */
function setParameter(effect, name, value) {
  const key = changeKey(effect, name);
  const change = value === undefined ? { reset: true } : { value };
  const body = effect == null ? { script: true, name, ...change } : { effect, name, ...change };
  return new Promise((resolve) => {
    const waiting = changes.queue.get(key)?.waiters ?? [];
    changes.queue.set(key, { body, waiters: [...waiting, resolve] });
    if (changes.current === null) sendChanges();
  });
}

async function sendChanges() {
  $('#status').hidden = false;
  while (changes.queue.size) {
    const [key, change] = changes.queue.entries().next().value;
    changes.queue.delete(key);
    changes.current = key;
    let reply;
    try {
      reply = await readReply(await postJSON('parameters', change.body));
    } catch (error) {
      reply = { error: { message: error.message } };
    }
    // The answer is in, so the control shows what the server now uses (a newer value still
    // queued keeps it): the run's own state event may have come first and been held back.
    changes.current = null;
    if (reply.generation != null) applyState(reply);
    else {
      // Refused: the server took the value back; its state puts the control back too.
      if (reply.state?.generation != null) applyState(reply.state);
      showNote(reply.error?.message);
    }
    // A reply overtaken by a newer state (a proxy made meanwhile) is not applied: the
    // controls show that state's values.
    if (view.state) renderParameters();
    for (const resolve of change.waiters) resolve();
  }
  $('#status').hidden = true;
}

// Each group registers how to refresh itself, so a new state with the same controls
// updates values in place (no focus lost, no slider dropped mid-drag).
const refreshers = new Map();
let panelSignature = '';

function renderParameters() {
  const state = view.state;
  const groups = [];
  if (state.scriptParameters?.length) {
    groups.push({ effect: null, module: 'Script parameters', location: '', parameters: state.scriptParameters });
  }
  for (const effect of state.effects ?? []) {
    groups.push({ effect: effect.id, module: effect.module, location: effect.location, lua: effect.lua, parameters: effect.parameters });
  }
  const signature = JSON.stringify(groups.map((group) =>
    [group.effect, group.module, group.location, group.parameters.map((p) => [p.name, p.type, p.min, p.max])]));
  if (signature !== panelSignature) {
    panelSignature = signature;
    refreshers.clear();
    panel.replaceChildren(...(groups.length
      ? [resetAllButton, ...groups.map(parameterGroup)]
      : [element('p', { className: 'empty', textContent: 'No effect calls or script parameters to adjust.' })]));
  }
  for (const group of groups) refreshers.get(group.effect)(group);
  resetAllButton.disabled = !groups.some((group) => group.parameters.some((parameter) => parameter.changed));
}

const resetAllButton = element('button', { id: 'reset-all', className: 'small', textContent: 'Reset all',
                                           title: 'Put back every value the script gives' });
resetAllButton.addEventListener('click', async () => {
  const reply = await readReply(await postJSON('parameters', { resetAll: true }));
  if (reply.generation != null) applyState(reply);
  else showNote(reply.error?.message);
});

function parameterGroup(group) {
  const heading = element('h3', {}, element('span', { className: 'module', textContent: group.module }));
  if (group.location) heading.append(element('span', { className: 'where', textContent: `— ${group.location}` }));
  const card = element('section', { className: 'group-card' }, heading);
  const controls = group.parameters.map((parameter) => parameterControl(group.effect, parameter));
  card.append(...controls.map((control) => control.row));
  if (!controls.length) card.append(element('p', { className: 'empty', textContent: 'No options the page can change.' }));
  let lua = null;
  if (group.lua != null) {
    lua = element('textarea', { className: 'lua', readOnly: true, spellcheck: false, rows: 1, hidden: true });
    const copy = element('button', { className: 'small', textContent: 'Copy Lua', title: 'Copy this call with the values shown' });
    let timer = 0;
    const flash = (text) => {
      copy.textContent = text;
      clearTimeout(timer);
      timer = setTimeout(() => { copy.textContent = 'Copy Lua'; }, 1500);
    };
    copy.addEventListener('click', async () => {
      lua.hidden = false;
      try {
        await navigator.clipboard.writeText(lua.value);
        flash('Copied');
      } catch {
        // No clipboard access (another host over plain http, headless): select it for Ctrl+C.
        lua.focus();
        lua.select();
        flash(document.execCommand('copy') ? 'Copied' : 'Press Ctrl+C');
      }
    });
    heading.append(copy);
    card.append(lua);
  }
  refreshers.set(group.effect, (fresh) => {
    fresh.parameters.forEach((parameter, index) => controls[index].update(parameter));
    if (lua) lua.value = fresh.lua;
    card.classList.toggle('changed', fresh.parameters.some((parameter) => parameter.changed));
  });
  return card;
}

function parameterControl(effect, parameter) {
  const key = changeKey(effect, parameter.name);
  const send = (value) => setParameter(effect, parameter.name, value);
  const type = parameter.type === 'integer' ? 'number' : parameter.type;  // the number editor steps integers by 1
  const editor = (parameter.choices ? editors.choice : editors[type] ?? editors.string)(parameter, send);
  const label = element('label', { textContent: parameter.name });
  const reset = element('button', { className: 'reset small', textContent: '↺', title: `Put back the script's ${parameter.name}` });
  reset.addEventListener('click', () => setParameter(effect, parameter.name, undefined));
  const row = element('div', { className: 'parameter' }, label, editor.inputs, reset);
  return {
    row,
    update(fresh) {
      row.classList.toggle('changed', Boolean(fresh.changed));
      reset.hidden = !fresh.changed;
      label.title = [fresh.name, fresh.doc, fresh.changed ? '(changed here)' : ''].filter(Boolean).join(' — ');
      // Leave alone what the user is working on or a value still on its way.
      if (!editor.editing() && !changePending(key)) editor.show(fresh.value);
    },
  };
}

// One editor per parameter type: its inputs, how to show a value, and whether the user
// is in the middle of an edit.
const editors = {
  number(parameter, send) {
    const integer = parameter.type === 'integer';
    const read = (text) => (integer ? Math.round(Number(text)) : Number(text));
    const inputs = element('div', { className: 'inputs' });
    const number = element('input', { type: 'number', step: integer ? '1' : 'any' });
    if (parameter.min != null) number.min = parameter.min;
    if (parameter.max != null) number.max = parameter.max;
    const later = debounced(150);
    let slider = null;
    if (parameter.min != null && parameter.max != null) {
      slider = element('input', {
        type: 'range', min: parameter.min, max: parameter.max,
        step: integer ? 1 : (parameter.max - parameter.min) / 1000,
      });
      slider.addEventListener('input', () => {
        const value = read(slider.value);
        number.value = formatNumber(value);
        later(() => send(value));
      });
      slider.addEventListener('change', later.flush);  // let go: no need to wait
      inputs.append(slider);
    }
    number.addEventListener('change', () => {
      const value = read(number.value);
      if (number.value === '' || !Number.isFinite(value)) return;
      if (slider) slider.value = value;
      send(value);
    });
    inputs.append(number);
    return {
      inputs,
      show(value) {
        number.value = formatNumber(value);
        if (slider) slider.value = value;
      },
      editing: () => document.activeElement === number || later.pending(),
    };
  },

  color(parameter, send) {
    const picker = element('input', { type: 'color' });
    const code = element('span', { className: 'code' });
    let alpha = '';  // "#RRGGBBAA" keeps its AA: the picker has no alpha
    const value = () => (picker.value + alpha).toUpperCase();
    const later = debounced(150);
    picker.addEventListener('input', () => {
      setText(code, value());
      later(() => send(value()));
    });
    picker.addEventListener('change', later.flush);
    return {
      inputs: element('div', { className: 'inputs' }, picker, code),
      show(text) {
        const hex = String(text);
        alpha = hex.length === 9 ? hex.slice(7) : '';
        picker.value = hex.slice(0, 7).toLowerCase();
        setText(code, hex.toUpperCase());
      },
      editing: later.pending,
    };
  },

  // A string with fixed values (`choices = {…}` where it is declared): only those can be picked.
  choice(parameter, send) {
    const list = element('select', {}, ...parameter.choices.map((choice) => element('option', { value: choice, textContent: choice })));
    list.addEventListener('change', () => send(list.value));
    return {
      inputs: element('div', { className: 'inputs' }, list),
      show(value) { list.value = String(value); },
      editing: () => false,
    };
  },

  boolean(parameter, send) {
    const box = element('input', { type: 'checkbox' });
    box.addEventListener('change', () => send(box.checked));
    return {
      inputs: element('div', { className: 'inputs' }, box),
      show(value) { box.checked = Boolean(value); },
      editing: () => false,
    };
  },

  string(parameter, send) {
    const text = element('input', { type: 'text', spellcheck: false });
    let committed = '';
    // 'change' comes on Enter and on leaving the field with a new value.
    text.addEventListener('change', () => {
      committed = text.value;
      send(text.value);
    });
    text.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') text.value = committed;
      if (event.key === 'Enter' || event.key === 'Escape') text.blur();
    });
    return {
      inputs: element('div', { className: 'inputs' }, text),
      show(value) { committed = text.value = String(value); },
      editing: () => document.activeElement === text,
    };
  },
};

// Timeline ---------------------------------------------------------------------------------
//
// One canvas: a ruler (kept at the top of the scrolled box), then lanes: one per track,
// the video composition's instructions with their ramps, the animation tool's layers by
// depth and the cues. Everything but the playhead is drawn once into an offscreen layer,
// redrawn only when it changes; playing redraws just the playhead over it.

const LANE = { ruler: 24, height: 18, gap: 3, label: 72, right: 10 };
const MAX_LAYER_ROWS = 4;    // per depth; more overlapping spans share the last row
const MAX_CUE_ROWS = 3;

const lanes = { list: [], height: LANE.ruler };
const zoom = { start: 0, span: null };  // span null: the whole item fits
const scrub = { active: false, resume: false };
let timelineWidth = 0;
let staticLayer = null;
let hits = [];               // blocks as drawn, for tooltips and double-click
let timelineQueued = 0;

// Empty edits are hatched: a tile with one diagonal stroke, repeated.
const hatchTile = new OffscreenCanvas(6, 6);
{
  const g = hatchTile.getContext('2d');
  g.strokeStyle = 'rgba(255, 255, 255, 0.18)';
  g.beginPath();
  g.moveTo(-1, 7);
  g.lineTo(7, -1);
  g.stroke();
}

function invalidateTimeline() {
  staticLayer = null;
  drawTimelineSoon();
}

function drawTimelineSoon() {
  timelineQueued ||= requestAnimationFrame(() => {
    timelineQueued = 0;
    drawTimeline();
  });
}

const trackWidth = () => Math.max(1, timelineWidth - LANE.label - LANE.right);

function visibleRange() {
  const total = Math.max(duration(), 1e-3);
  const length = Math.min(zoom.span ?? total, total);
  return { start: clamp(zoom.start, 0, total - length), length };
}

function timeToX(time) {
  const { start, length } = visibleRange();
  return LANE.label + ((time - start) / length) * trackWidth();
}

function xToTime(x) {
  const { start, length } = visibleRange();
  return start + ((x - LANE.label) / trackWidth()) * length;
}

const laneTop = (index) => LANE.ruler + LANE.gap + index * (LANE.height + LANE.gap);

/** Greedy rows: each span goes in the first row it fits in; past `limit` rows, in the last. */
function packRows(spans, limit) {
  const rows = [];
  for (const entry of [...spans].sort((a, b) => a.start - b.start)) {
    let row = rows.find((candidate) => candidate.end <= entry.start + 1e-9);
    if (!row && rows.length < limit) rows.push((row = { end: -Infinity, spans: [] }));
    row ??= rows.at(-1);
    row.spans.push(entry);
    row.end = Math.max(row.end, entry.end);
  }
  return rows.map((row) => row.spans);
}

function buildLanes() {
  const current = item();
  const list = [];
  if (current) {
    for (const track of current.tracks ?? []) {
      list.push({
        title: `${track.mediaType[0].toUpperCase()}${track.id}`,
        blocks: track.segments.map((segment) => {
          const end = segment.start + segment.duration;
          return {
            start: segment.start, end, color: tone(`tl-${track.mediaType}`),
            label: segment.source ?? 'empty', hatched: segment.source == null,
            tip: segment.source
              ? `${segment.source} from ${segment.sourceStart.toFixed(2)} s · ${span(segment.start, end)}`
              : `empty edit · ${span(segment.start, end)}`,
          };
        }),
        volume: track.mediaType === 'audio' ? volumeEnvelope(current, track.id) : null,
      });
    }
    if (current.instructions?.length) list.push({ title: 'FX', blocks: current.instructions.map(instructionBlock) });
    const byDepth = Map.groupBy(current.layers ?? [], (layer) => layer.depth);
    [...byDepth.keys()].sort((a, b) => a - b).forEach((depth, group) => {
      packRows(byDepth.get(depth), MAX_LAYER_ROWS).forEach((row, index) => {
        list.push({ title: index ? '' : group ? `└ depth ${depth}` : 'layers', blocks: row.map(layerBlock) });
      });
    });
    packRows(current.cues ?? [], MAX_CUE_ROWS).forEach((row, index) => {
      list.push({
        title: index ? '' : 'cues',
        blocks: row.map((cue) => ({ start: cue.start, end: cue.end, color: tone('tl-cue'), label: cue.text, tip: `${cue.text}\n${span(cue.start, cue.end)}` })),
      });
    });
  }
  lanes.list = list;
  lanes.height = laneTop(list.length) + LANE.gap;
  invalidateTimeline();
}

function instructionBlock(instruction) {
  const end = instruction.start + instruction.duration;
  const ramps = instruction.layers.flatMap((layer) => layer.ramps.map((ramp) => ({ ...ramp, trackID: layer.trackID })));
  return {
    start: instruction.start, end, color: tone('tl-fx'), ramps,
    // Layer instructions are listed top first.
    label: instruction.layers.map((layer) => `V${layer.trackID}`).join(' over ') || 'background',
    tip: [`instruction · ${span(instruction.start, end)}`,
      ...ramps.map((ramp) => `V${ramp.trackID} ${ramp.kind} ${ramp.from} → ${ramp.to} · ${span(ramp.start, ramp.start + ramp.duration)}`)].join('\n'),
  };
}

function layerBlock(layer) {
  return {
    start: layer.start, end: layer.end, color: tone(`tl-${layer.kind}`), label: layer.name,
    tip: `${layer.name} (${layer.kind}, depth ${layer.depth}) visible ${span(layer.start, layer.end)}`,
  };
}

/** The mix's volume over a track: 1 until the first change, then each ramp, its last value held. */
function volumeEnvelope(current, trackID) {
  const ramps = (current.audioRamps ?? []).filter((ramp) => ramp.trackID === trackID).sort((a, b) => a.start - b.start);
  if (!ramps.length) return null;
  const points = [[0, 1]];
  for (const ramp of ramps) points.push([ramp.start, points.at(-1)[1]], [ramp.start, ramp.from], [ramp.start + ramp.duration, ramp.to]);
  points.push([current.duration, points.at(-1)[1]]);
  return { points, top: Math.max(1, ...points.map(([, volume]) => volume)) };
}

function drawTimeline() {
  const scale = devicePixelRatio || 1;
  timelineWidth = timelineBox.clientWidth;
  const height = lanes.height;
  if (timelineWidth === 0) return;                 // not laid out yet
  const pixelWidth = Math.round(timelineWidth * scale);
  const pixelHeight = Math.round(height * scale);
  if (timeline.width !== pixelWidth || timeline.height !== pixelHeight) {
    timeline.width = pixelWidth;
    timeline.height = pixelHeight;
    timeline.style.height = `${height}px`;
    staticLayer = null;
  }
  staticLayer ??= renderStatic(pixelWidth, pixelHeight, scale);
  const g = timeline.getContext('2d');
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.drawImage(staticLayer, 0, 0);
  if (!item()) return;
  g.setTransform(scale, 0, 0, scale, 0, 0);
  const x = Math.round(timeToX(view.position)) + 0.5;
  if (x < LANE.label || x > timelineWidth) return;
  const top = timelineBox.scrollTop;
  g.fillStyle = g.strokeStyle = tone('playhead');
  g.beginPath();
  g.moveTo(x, top);
  g.lineTo(x, height);
  g.stroke();
  g.beginPath();
  g.moveTo(x - 5, top);
  g.lineTo(x + 5, top);
  g.lineTo(x + 5, top + 8);
  g.lineTo(x, top + 13);
  g.lineTo(x - 5, top + 8);
  g.fill();
}

function renderStatic(pixelWidth, pixelHeight, scale) {
  const layer = new OffscreenCanvas(pixelWidth, pixelHeight);
  const g = layer.getContext('2d');
  const width = timelineWidth;
  const height = lanes.height;
  g.scale(scale, scale);
  g.fillStyle = tone('tl-lane');
  g.fillRect(0, 0, width, height);
  g.font = `11px ${fontFamily()}`;
  g.textBaseline = 'middle';
  hits = [];
  const current = item();
  if (!current) {
    g.fillStyle = tone('faint');
    g.fillText('No export to show yet.', LANE.label, LANE.ruler + 16);
    return layer;
  }
  // Lane titles in the left column; blocks clipped to the track area right of it.
  g.fillStyle = tone('panel');
  g.fillRect(0, 0, LANE.label, height);
  lanes.list.forEach((lane, index) => {
    const y = laneTop(index);
    g.fillStyle = tone('panel');
    g.fillRect(LANE.label, y, width - LANE.label, LANE.height);
    g.fillStyle = tone('dim');
    g.fillText(lane.title, 8, y + LANE.height / 2 + 1);
  });
  g.save();
  g.beginPath();
  g.rect(LANE.label, 0, width - LANE.label, height);
  g.clip();
  const hatch = g.createPattern(hatchTile, 'repeat');
  lanes.list.forEach((lane, index) => {
    const y = laneTop(index);
    for (const block of lane.blocks) drawBlock(g, block, y, hatch);
    if (lane.volume) drawVolume(g, lane.volume, y);
  });
  drawLoopShade(g, height);
  g.restore();
  drawRuler(g, width, timelineBox.scrollTop);
  return layer;
}

function drawBlock(g, block, y, hatch) {
  const x0 = timeToX(block.start);
  const x1 = timeToX(block.end);
  if (x1 < LANE.label || x0 > timelineWidth) return;
  const width = Math.max(2, x1 - x0 - 1);          // a pixel between neighbours
  g.fillStyle = block.color;
  g.globalAlpha = block.hatched ? 0.35 : 1;
  g.beginPath();
  g.roundRect(x0, y, width, LANE.height, 3);
  g.fill();
  g.globalAlpha = 1;
  if (block.hatched) {
    g.fillStyle = hatch;
    g.fill();
  }
  hits.push({ x0, x1: x0 + width, y, block });
  for (const ramp of block.ramps ?? []) {
    // A value set where the block starts is just its first value: nothing to mark.
    if (ramp.duration > 0 || ramp.start > block.start + 1e-6) drawRamp(g, ramp, y);
  }
  if (width > 24) {
    g.save();
    g.beginPath();
    g.rect(x0, y, width - 3, LANE.height);
    g.clip();
    g.fillStyle = block.hatched ? tone('dim') : 'rgba(255, 255, 255, 0.92)';
    // The label sticks to the left edge of the view when the block starts before it.
    g.fillText(block.label, Math.max(x0, LANE.label) + 5, y + LANE.height / 2 + 1);
    g.restore();
  }
}

function drawRamp(g, ramp, y) {
  const x0 = timeToX(ramp.start);
  const x1 = timeToX(ramp.start + ramp.duration);
  const from = Number.parseFloat(ramp.from);
  const to = Number.parseFloat(ramp.to);
  // Opacity is a level from 0 to 1; a transform or crop has no one level and is drawn rising.
  const level = ramp.kind === 'opacity' && Number.isFinite(from) && Number.isFinite(to);
  const yAt = (value) => y + LANE.height - 3 - clamp(value, 0, 1) * (LANE.height - 6);
  g.strokeStyle = tone(`tl-${ramp.kind}`);
  g.lineWidth = 1.5;
  g.beginPath();
  if (ramp.duration > 0) {
    g.moveTo(x0, yAt(level ? from : 0));
    g.lineTo(x1, yAt(level ? to : 1));
  } else {
    g.moveTo(x0, y + 2);                           // a value set at one instant
    g.lineTo(x0, y + LANE.height - 2);
  }
  g.stroke();
  g.lineWidth = 1;
}

function drawVolume(g, envelope, y) {
  g.strokeStyle = tone('tl-volume');
  g.beginPath();
  envelope.points.forEach(([time, volume], index) => {
    const x = timeToX(time);
    const level = y + LANE.height - 2 - (volume / envelope.top) * (LANE.height - 4);
    if (index) g.lineTo(x, level);
    else g.moveTo(x, level);
  });
  g.stroke();
}

function drawLoopShade(g, height) {
  if (view.inPoint == null && view.outPoint == null) return;
  const x0 = timeToX(view.inPoint ?? 0);
  const x1 = timeToX(view.outPoint ?? duration());
  g.fillStyle = tone('tl-loop');
  g.globalAlpha = view.loop ? 0.16 : 0.07;
  g.fillRect(x0, 0, x1 - x0, height);
  g.globalAlpha = 0.7;
  g.fillRect(Math.round(x0), 0, 1, height);
  g.fillRect(Math.round(x1) - 1, 0, 1, height);
  g.globalAlpha = 1;
}

/** Major ticks at least 70 px apart, on frames when zoomed in close. */
function rulerStep(pixelsPerSecond) {
  const frame = frameDuration();
  // Steps of several frames meet whole seconds only when a second holds whole frames.
  const frames = countsWholeFrames() ? [frame, 2 * frame, 5 * frame, 10 * frame] : [frame];
  const steps = [...frames, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600];
  return steps.find((seconds) => seconds * pixelsPerSecond >= 70) ?? 3600;
}

/** Whole seconds as m:ss (h:mm:ss), ticks between them as frames into the second ("10f"). */
function rulerLabel(time) {
  const [whole, frame] = secondAndFrame(Math.round(time / frameDuration()));
  if (frame) return `${frame}f`;
  return whole >= 3600
    ? `${Math.floor(whole / 3600)}:${pad2(Math.floor(whole / 60) % 60)}:${pad2(whole % 60)}`
    : `${Math.floor(whole / 60)}:${pad2(whole % 60)}`;
}

function drawRuler(g, width, top) {
  g.fillStyle = tone('panel');
  g.fillRect(0, top, width, LANE.ruler);
  g.fillStyle = tone('line');
  g.fillRect(0, top + LANE.ruler - 1, width, 1);
  g.save();
  g.beginPath();
  g.rect(LANE.label, top, width - LANE.label, LANE.ruler);
  g.clip();
  const { start, length } = visibleRange();
  const step = rulerStep(trackWidth() / length);
  // Minor ticks split a major step in five or two, never finer than a frame.
  const minor = [step / 5, step / 2, step].find((candidate) =>
    candidate >= frameDuration() - 1e-9 && (candidate / length) * trackWidth() >= 6);
  g.fillStyle = tone('dim');
  for (let k = Math.ceil(start / minor - 1e-9); k * minor <= start + length + 1e-9; k++) {
    const time = k * minor;
    const x = Math.round(timeToX(time));
    const major = Math.abs(time / step - Math.round(time / step)) < 1e-6;
    g.fillRect(x, top + LANE.ruler - (major ? 9 : 4), 1, major ? 8 : 3);
    if (major) g.fillText(rulerLabel(time), x + 4, top + 8);
  }
  // Edit points as small marks; the loop range as a bar along the bottom.
  g.fillStyle = tone('tl-edit');
  for (const point of item().editPoints ?? []) {
    const x = timeToX(point);
    g.beginPath();
    g.moveTo(x - 3, top + LANE.ruler - 1);
    g.lineTo(x + 3, top + LANE.ruler - 1);
    g.lineTo(x, top + LANE.ruler - 5);
    g.fill();
  }
  if (view.inPoint != null || view.outPoint != null) {
    const x0 = timeToX(view.inPoint ?? 0);
    g.fillStyle = tone('tl-loop');
    g.fillRect(x0, top + LANE.ruler - 3, timeToX(view.outPoint ?? duration()) - x0, 3);
  }
  g.restore();
}

function keepPlayheadInView() {
  if (zoom.span == null) return;
  const { start, length } = visibleRange();
  if (view.position >= start && view.position <= start + length) return;
  zoom.start = view.position - length * 0.1;
  invalidateTimeline();
}

function pointerSpot(event) {
  const box = timeline.getBoundingClientRect();
  return { x: event.clientX - box.left, y: event.clientY - box.top };
}

function hitAt(event) {
  const { x, y } = pointerSpot(event);
  if (y < timelineBox.scrollTop + LANE.ruler) return null;   // the ruler covers what is under it
  return hits.findLast((hit) => x >= hit.x0 && x <= hit.x1 && y >= hit.y && y <= hit.y + LANE.height) ?? null;
}

// Click or drag anywhere scrubs; playing stops while the pointer is down and goes on after.
timeline.addEventListener('pointerdown', (event) => {
  if (event.button !== 0 || !item()) return;
  timeline.setPointerCapture(event.pointerId);
  scrub.active = true;
  scrub.resume = playback.playing;
  pause();
  seek(xToTime(pointerSpot(event).x));
});

timeline.addEventListener('pointermove', (event) => {
  if (scrub.active) seek(xToTime(pointerSpot(event).x));
  else timeline.title = hitAt(event)?.block.tip ?? '';
});

function endScrub() {
  if (!scrub.active) return;
  scrub.active = false;
  if (scrub.resume) play();
}
timeline.addEventListener('pointerup', endScrub);
timeline.addEventListener('pointercancel', endScrub);

timeline.addEventListener('dblclick', (event) => {
  const hit = hitAt(event);
  if (hit) setRange(hit.block.start, Math.min(hit.block.end, duration()));
});

// Ctrl+wheel zooms around the pointer; Shift+wheel or a sideways wheel pans when zoomed.
timelineBox.addEventListener('wheel', (event) => {
  if (!item()) return;
  const { start, length } = visibleRange();
  const total = duration();
  if (event.ctrlKey) {
    const at = clamp(xToTime(pointerSpot(event).x), 0, total);
    const wanted = clamp(length * Math.exp(event.deltaY * 0.002), Math.min(total, 20 * frameDuration()), total);
    zoom.span = wanted >= total ? null : wanted;
    zoom.start = at - (at - start) * (wanted / length);
  } else if (zoom.span != null && (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY))) {
    zoom.start = start + ((event.shiftKey ? event.deltaY : event.deltaX) / trackWidth()) * length;
  } else {
    return;                                        // an ordinary wheel scrolls the lanes
  }
  event.preventDefault();
  zoom.start = clamp(zoom.start, 0, total - (zoom.span ?? total));
  invalidateTimeline();
}, { passive: false });

timelineBox.addEventListener('scroll', invalidateTimeline);
new ResizeObserver(invalidateTimeline).observe(timelineBox);

// Events -----------------------------------------------------------------------------------

function connectEvents(delay = 500) {
  const url = new URL('events', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(url);
  socket.addEventListener('open', () => {
    delay = 500;
    $('#connection').hidden = true;
    refreshState();                                // catch up on what happened while away
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    if (message.type === 'state' && message.generation > generation()) refreshState();
    if (message.type === 'proxy') refreshState();
    if (message.type === 'export') {
      view.exportEvents++;
      renderExport(message);
    }
  });
  socket.addEventListener('close', () => {
    $('#connection').hidden = false;
    setTimeout(() => connectEvents(Math.min(delay * 2, 10_000)), delay);
  });
}

// Keys and buttons -------------------------------------------------------------------------

const keys = {
  ' ': togglePlay,
  ArrowLeft: (event) => (event.shiftKey ? seek(view.position - 1) : step(-1)),
  ArrowRight: (event) => (event.shiftKey ? seek(view.position + 1) : step(1)),
  ArrowUp: () => jump(-1),
  ArrowDown: () => jump(1),
  Home: () => seek(0),
  End: () => seek(lastFrameStart()),
  i: setIn,
  o: setOut,
  l: toggleLoop,
  '?': () => help.togglePopover(),
};

document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest?.('input, select, textarea, [contenteditable]')) return;
  const action = keys[event.key.length === 1 ? event.key.toLowerCase() : event.key];
  if (!action) return;
  event.preventDefault();
  action(event);
});

// Buttons never keep the focus from a click, so Space stays play/pause.
$('#transport').addEventListener('mousedown', (event) => {
  if (event.target.closest('button')) event.preventDefault();
});

playButton.addEventListener('click', togglePlay);
player.addEventListener('click', togglePlay);
$('#step-back').addEventListener('click', () => step(-1));
$('#step-forward').addEventListener('click', () => step(1));
$('#previous-point').addEventListener('click', () => jump(-1));
$('#next-point').addEventListener('click', () => jump(1));
$('#set-in').addEventListener('click', setIn);
$('#set-out').addEventListener('click', setOut);
$('#clear-range').addEventListener('click', () => setRange(null, null));
$('#loop').addEventListener('click', toggleLoop);
exportButton.addEventListener('click', startExport);
itemSelect.addEventListener('change', () => selectItem(Number(itemSelect.value)));

// Test hooks, and a handle for people at the console: the same paths the controls take.
// The effects panel: listed when first opened, each still drawn by the server on request
// (one at a time there, kept once drawn), with the Lua that makes it.

let effectsListed = false;

async function listEffects() {
  effectsListed = true;
  const list = $('#effects');
  const response = await fetch('effects', { cache: 'no-store' });
  if (!response.ok) {
    list.replaceChildren(element('li', { className: 'problem', textContent: await failureText(response) }));
    return;
  }
  const { effects } = await response.json();
  setText($('#effect-count'), String(effects.length));
  list.replaceChildren(...effects.map(effectEntry));
  for (const entry of list.children) if (entry.dataset.name) await drawEffect(entry);
}

function effectEntry(effect) {
  if (effect.error) {
    return element('li', {}, element('div', { className: 'name', textContent: effect.name }),
                   element('div', { className: 'problem', textContent: `cannot be loaded: ${effect.error}` }));
  }
  const about = [effect.version && `version ${effect.version}`, effect.author && `by ${effect.author}`, effect.license].filter(Boolean).join(' · ');
  const entry = element('li', {},
    element('div', { className: 'name', textContent: effect.name }),
    element('div', { className: 'about', textContent: effect.description }),
    element('img', { alt: `${effect.name}, drawn with its example` }),
    element('div', { className: 'about', textContent: about }),
    element('pre', { textContent: `local ${effect.name} = require "effects.${effect.name}"` }));
  entry.dataset.name = effect.name;
  return entry;
}

async function drawEffect(entry) {
  const name = entry.dataset.name;
  const response = await fetch(`effect-still?name=${encodeURIComponent(name)}`, { cache: 'no-store' });
  if (!response.ok) {
    entry.querySelector('img').replaceWith(element('div', { className: 'problem', textContent: `not drawn: ${await failureText(response)}` }));
    return;
  }
  entry.querySelector('pre').textContent = decodeURIComponent(response.headers.get('X-Effect-Usage') || '');
  entry.querySelector('img').src = URL.createObjectURL(await response.blob());
}

$('#effects-panel').addEventListener('toggle', (event) => {
  if (event.target.open && !effectsListed) listEffects();
});

window.studio = {
  get ready() { return view.ready; },
  get generation() { return view.state?.generation ?? 0; },
  get item() { return view.item; },
  // While playing, where the clock is now (the view catches up at its next tick, which a
  // starved page may draw late).
  get position() { return playback.playing && playback.origin ? clampTime(mediaAt(playback.origin, runElapsed()).time) : view.position; },
  get frameNumber() { return view.shown.number; },
  get frameRate() { return 1 / frameDuration(); },
  get shownFrameTime() { return view.shown.time; },
  get shownGeneration() { return view.shown.generation; },
  get drawnAt() { return view.shown.at; },
  get playing() { return playback.playing; },
  get framesShown() { return playback.framesShown; },
  get framesDropped() { return framesDropped(); },
  get lags() { return playback.lags; },
  get audioClock() { return playback.audioClock; },
  get error() { return view.state?.error?.message ?? view.note; },
  get exportState() { return view.exportState; },
  /** Whether the item shown reads proxies, and each proxy's state as the server tells it. */
  get proxied() { return Boolean(item()?.proxied); },
  get proxies() { return view.state?.proxies ?? []; },
  seek,
  play,
  pause,
  /** Frame `number`'s timecode, and the ruler's label at a time, as the page shows them. */
  timecode,
  rulerLabel,
  /** Sets a parameter as its control does; `effectId` null for a script parameter. */
  setParameter,
  /** Resolves with Date.now() once frame `number` is on the canvas. */
  whenShown: (number) => new Promise((resolve) => {
    if (view.shown.number === number) resolve(view.shown.at);
    else shownWaiters.add({ number, resolve });
  }),
};

connectEvents();
refreshState();

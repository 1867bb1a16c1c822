// Moonreel Studio: plays the script's exports with pictures from the server's render core
// (JPEG frames chosen by time) and sound mixed by it (float samples into Web Audio), draws
// the timeline from the edit's outline, and shows the effects' parameters as controls.
// Every URL is relative: the token in the page's path stays in each request.

const $ = (selector) => document.querySelector(selector);
const player = $('#player');
const picture = player.getContext('2d');
const timeline = $('#timeline');

const view = {
  data: null,          // the last state from the server
  item: 0,             // index of the item shown
  position: 0,         // seconds at the playhead
  inPoint: null, outPoint: null, loop: false,
  shown: { number: -1, time: 0, generation: -1 },
  wantedGeneration: 0, // the generation whose pictures the canvas should show
  error: null,
  exportState: 'idle',
  ready: false,
};

const current = () => view.data?.items?.[view.item] ?? null;
const frameDuration = () => current()?.frameDuration || 1 / 30;
const duration = () => current()?.duration ?? 0;
const lastFrameTime = () => Math.max(0, duration() - frameDuration());
const clamp = (t) => Math.min(Math.max(t, 0), lastFrameTime());
const frameNumberAt = (t) => Math.floor(t / frameDuration() + 1e-6);

// Server ---------------------------------------------------------------------------------

async function fetchState() {
  const response = await fetch('state', { cache: 'no-store' });
  if (response.ok) applyState(await response.json());
}

async function fetchFrame(time, lane) {
  const response = await fetch(`frame?item=${view.item}&t=${time.toFixed(6)}&lane=${lane}`, { cache: 'no-store' });
  if (!response.ok) throw new Error(await response.text());
  return {
    number: Number(response.headers.get('X-Frame-Number')),
    time: Number(response.headers.get('X-Frame-Time')),
    bitmap: await createImageBitmap(await response.blob()),
  };
}

function draw(frame, generation) {
  picture.drawImage(frame.bitmap, 0, 0, player.width, player.height);
  frame.bitmap.close();
  view.shown = { number: frame.number, time: frame.time, generation };
  updateClock();
}

// Still pictures (paused, scrubbing): one request at a time, the newest wanted time wins.
const still = { busy: false, wanted: null };

function showStill(time) {
  still.wanted = { time, generation: view.wantedGeneration };
  if (!still.busy) pumpStill();
}

async function pumpStill() {
  still.busy = true;
  while (still.wanted) {
    const { time, generation } = still.wanted;
    still.wanted = null;
    try {
      const frame = await fetchFrame(time, 'scrub');
      if (!playback.active) draw(frame, generation);
      else frame.bitmap.close();
    } catch (error) {
      console.warn('frame', error.message);
    }
  }
  still.busy = false;
  view.ready = view.ready || view.shown.number >= 0;
}

// Playback -------------------------------------------------------------------------------
// The clock is an AudioContext when the item has sound (the sound is the master: pictures
// follow it), else performance.now(). Pictures are requested for the clock's frame, two at
// most in flight; frames the clock passed before their picture came are counted dropped.

const playback = {
  active: false, session: 0, startPosition: 0, startClock: 0,
  audio: null, sources: [], nextChunk: 0, inFlight: 0, lastRequested: -1, lastShown: -1,
  framesShown: 0, framesDropped: 0, lag: { max: 0, sum: 0, count: 0 },
};
const chunkSeconds = 1, audioAhead = 2, startDelay = 0.08;

function usesAudioClock() {
  return current()?.hasAudio && playback.audio && playback.audio.state === 'running';
}

function clockNow() {
  return usesAudioClock() ? playback.audio.currentTime : performance.now() / 1000;
}

function playbackPosition() {
  return playback.startPosition + Math.max(0, clockNow() - playback.startClock);
}

async function play() {
  if (playback.active || !current()) return;
  if (view.position >= lastFrameTime() - 1e-6) view.position = view.loop && view.inPoint != null ? view.inPoint : 0;
  playback.active = true;
  playback.framesShown = 0;
  playback.framesDropped = 0;
  playback.lag = { max: 0, sum: 0, count: 0 };
  $('#play').textContent = '❚❚';
  await startClock(view.position);
  requestAnimationFrame(tick);
}

async function startClock(position) {
  const session = ++playback.session;
  stopSound();
  playback.startPosition = position;
  playback.lastRequested = -1;
  playback.lastShown = -1;
  if (current()?.hasAudio) {
    try {
      playback.audio ??= new AudioContext({ latencyHint: 'interactive' });
      if (playback.audio.state !== 'running') await playback.audio.resume();
    } catch (error) {
      console.warn('no sound:', error.message);
    }
  }
  if (session !== playback.session) return;
  playback.startClock = clockNow() + (usesAudioClock() ? startDelay : 0);
  playback.nextChunk = position;
  if (usesAudioClock()) scheduleSound(session);
}

function pause() {
  if (!playback.active) return;
  view.position = clamp(playbackPosition());
  playback.active = false;
  playback.session++;
  stopSound();
  $('#play').textContent = '▶';
  showStill(view.position);
  updateClock();
}

function stopSound() {
  for (const source of playback.sources) { try { source.stop(); } catch { /* already ended */ } }
  playback.sources = [];
}

async function scheduleSound(session) {
  const item = current();
  while (session === playback.session && playback.nextChunk < duration() && playback.nextChunk < playbackPosition() + audioAhead) {
    const start = playback.nextChunk;
    const length = Math.min(chunkSeconds, duration() - start);
    playback.nextChunk = start + length;
    try {
      const response = await fetch(`audio?item=${view.item}&start=${start.toFixed(6)}&duration=${length.toFixed(6)}`, { cache: 'no-store' });
      if (!response.ok) throw new Error(await response.text());
      const channels = Number(response.headers.get('X-Channels'));
      const rate = Number(response.headers.get('X-Sample-Rate'));
      const samples = new Float32Array(await response.arrayBuffer());
      if (session !== playback.session || item !== current()) return;
      const frames = samples.length / channels;
      if (frames < 1) continue;
      const buffer = playback.audio.createBuffer(channels, frames, rate);
      for (let c = 0; c < channels; c++) {
        const plane = buffer.getChannelData(c);
        for (let i = 0; i < frames; i++) plane[i] = samples[i * channels + c];
      }
      const source = playback.audio.createBufferSource();
      source.buffer = buffer;
      source.connect(playback.audio.destination);
      const when = playback.startClock + (start - playback.startPosition);
      const late = playback.audio.currentTime - when;
      if (late > 0) source.start(0, late); else source.start(when);
      playback.sources.push(source);
      source.onended = () => { playback.sources = playback.sources.filter((s) => s !== source); };
    } catch (error) {
      console.warn('sound', error.message);
      return;
    }
  }
  if (session === playback.session && playback.nextChunk < duration()) setTimeout(() => scheduleSound(session), 250);
}

function tick() {
  if (!playback.active) return;
  let position = playbackPosition();
  const end = view.loop && view.outPoint != null ? view.outPoint : duration();
  if (position >= end) {
    if (view.loop) {
      view.position = view.inPoint ?? 0;
      startClock(view.position);
      requestAnimationFrame(tick);
      return;
    }
    view.position = lastFrameTime();
    pause();
    return;
  }
  view.position = clamp(position);
  const number = frameNumberAt(view.position);
  if (number !== playback.lastRequested && playback.inFlight < 2) {
    playback.lastRequested = number;
    requestPlaybackFrame(number, playback.session);
  }
  updateClock();
  requestAnimationFrame(tick);
}

async function requestPlaybackFrame(number, session) {
  playback.inFlight++;
  const generation = view.wantedGeneration;
  try {
    const frame = await fetchFrame((number + 0.5) * frameDuration(), 'play');
    if (session !== playback.session || frame.number <= playback.lastShown) {
      frame.bitmap.close();
      return;
    }
    if (playback.lastShown >= 0) playback.framesDropped += frame.number - playback.lastShown - 1;
    playback.lastShown = frame.number;
    const lag = playbackPosition() - frame.time;
    playback.lag.max = Math.max(playback.lag.max, lag);
    playback.lag.sum += lag;
    playback.lag.count++;
    playback.framesShown++;
    draw(frame, generation);
  } catch (error) {
    console.warn('frame', error.message);
  } finally {
    playback.inFlight--;
  }
}

function seek(time) {
  view.position = clamp(time);
  if (playback.active) startClock(view.position);
  else showStill(view.position);
  updateClock();
}

function togglePlay() { playback.active ? pause() : play(); }

// State ----------------------------------------------------------------------------------

function applyState(state) {
  const firstTime = view.data === null;
  const changed = !view.data || state.generation !== view.data.generation;
  view.data = state;
  view.error = state.error ? state.error.message : null;
  view.item = Math.min(view.item, Math.max(0, (state.items?.length ?? 1) - 1));
  $('#script-name').textContent = state.script;
  $('#generation').textContent = `run ${state.generation}`;
  const banner = $('#error-banner');
  banner.textContent = view.error ?? '';
  banner.classList.toggle('shown', view.error !== null);
  $('#prints').textContent = (state.prints ?? []).join('\n');
  renderItems();
  renderParameters();
  setExport(state.export ?? { state: 'idle' });
  const item = current();
  if (item) {
    if (player.width !== item.width || player.height !== item.height) {
      player.width = Math.max(2, item.width);
      player.height = Math.max(2, item.height);
    }
    view.position = clamp(view.position);
  }
  drawTimeline();
  if (changed && item) {
    // The picture may have changed even at the same time: fetch it again.
    view.wantedGeneration = state.generation;
    if (playback.active) startClock(view.position); else showStill(view.position);
  }
  if (firstTime && !item) view.ready = true;
  updateClock();
}

function renderItems() {
  const select = $('#item-select');
  const items = view.data.items ?? [];
  select.hidden = items.length < 2;
  const labels = items.map((item) => `${item.output || 'export'} (${item.preset})`);
  if ([...select.options].map((o) => o.textContent).join('\n') !== labels.join('\n')) {
    select.replaceChildren(...labels.map((label, index) => new Option(label, index)));
  }
  select.value = String(view.item);
}

// Parameters -----------------------------------------------------------------------------

function renderParameters() {
  const panel = $('#parameters');
  const focused = document.activeElement && panel.contains(document.activeElement);
  if (focused) return; // do not rebuild under the user's cursor; the next state will
  const groups = [];
  const scriptParameters = view.data.scriptParameters ?? [];
  if (scriptParameters.length) groups.push(parameterGroup('Script parameters', '', scriptParameters, null, null));
  for (const effect of view.data.effects ?? []) {
    if (effect.parameters.length) groups.push(parameterGroup(effect.module, effect.location, effect.parameters, effect.id, effect.lua));
  }
  if (!groups.length) {
    const empty = document.createElement('p');
    empty.className = 'dim';
    empty.textContent = 'The script calls no effect with parameters.';
    groups.push(empty);
  }
  panel.replaceChildren(...groups);
}

function parameterGroup(title, where, parameters, effectId, lua) {
  const group = document.createElement('div');
  group.className = 'group';
  const heading = document.createElement('h3');
  heading.append(title);
  if (where) {
    const place = document.createElement('span');
    place.className = 'where';
    place.textContent = '— ' + where;
    heading.append(place);
  }
  group.append(heading);
  let luaBox = null;
  if (lua) {
    const copy = document.createElement('button');
    copy.textContent = 'Copy Lua';
    copy.title = 'Copy the call with the values shown';
    copy.addEventListener('click', () => copyText(lua, luaBox));
    heading.append(copy);
  }
  for (const parameter of parameters) group.append(control(parameter, effectId));
  if (lua) {
    luaBox = document.createElement('pre');
    luaBox.className = 'lua';
    luaBox.textContent = lua;
    luaBox.hidden = !parameters.some((p) => p.changed);
    group.append(luaBox);
  }
  return group;
}

function control(parameter, effectId) {
  const row = document.createElement('div');
  row.className = 'control' + (parameter.changed ? ' changed' : '');
  const label = document.createElement('label');
  label.textContent = parameter.name;
  label.title = parameter.doc || parameter.name;
  const inputs = document.createElement('div');
  inputs.className = 'inputs';
  const send = (value) => setParameter(effectId, parameter.name, value);
  switch (parameter.type) {
    case 'number':
    case 'integer': {
      const integer = parameter.type === 'integer';
      const number = document.createElement('input');
      number.type = 'number';
      number.value = parameter.value;
      number.step = integer ? 1 : 'any';
      if (parameter.min != null) number.min = parameter.min;
      if (parameter.max != null) number.max = parameter.max;
      number.addEventListener('change', () => send(Number(number.value)));
      if (parameter.min != null && parameter.max != null) {
        const range = document.createElement('input');
        range.type = 'range';
        range.min = parameter.min;
        range.max = parameter.max;
        range.step = integer ? 1 : (parameter.max - parameter.min) / 1000;
        range.value = parameter.value;
        const later = debounced((value) => send(value), 150);
        range.addEventListener('input', () => { number.value = range.value; later(Number(range.value)); });
        inputs.append(range);
      }
      inputs.append(number);
      break;
    }
    case 'boolean': {
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = Boolean(parameter.value);
      box.addEventListener('change', () => send(box.checked));
      inputs.append(box);
      break;
    }
    case 'color': {
      const picker = document.createElement('input');
      picker.type = 'color';
      const hex = String(parameter.value);
      picker.value = hex.slice(0, 7);
      const alpha = hex.length === 9 ? hex.slice(7) : '';
      picker.addEventListener('change', () => send(picker.value + alpha));
      inputs.append(picker);
      break;
    }
    default: {
      const text = document.createElement('input');
      text.type = 'text';
      text.value = parameter.value;
      text.addEventListener('change', () => send(text.value));
      text.addEventListener('keydown', (event) => { if (event.key === 'Enter') text.blur(); });
      inputs.append(text);
    }
  }
  row.append(label, inputs);
  return row;
}

async function setParameter(effectId, name, value) {
  const body = effectId ? { effect: effectId, name, value } : { script: true, name, value };
  const response = await fetch('parameters', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (response.ok) {
    document.activeElement?.blur?.();
    applyState(await response.json());
  } else {
    showBannerNote(await response.text());
  }
}

function showBannerNote(message) {
  const banner = $('#error-banner');
  banner.textContent = message.trim();
  banner.classList.add('shown');
}

async function copyText(text, box) {
  if (box) box.hidden = false;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (plain HTTP, headless): select it for Ctrl+C.
    if (box) getSelection().selectAllChildren(box);
  }
}

function debounced(action, milliseconds) {
  let timer = null;
  return (value) => {
    clearTimeout(timer);
    timer = setTimeout(() => action(value), milliseconds);
  };
}

// Export ---------------------------------------------------------------------------------

function setExport(exportState) {
  view.exportState = exportState.state;
  const running = exportState.state === 'running';
  $('#export').disabled = running || !current();
  const bar = $('#export-progress');
  bar.hidden = !running;
  bar.value = exportState.fraction ?? 0;
  $('#export-message').textContent = exportState.message ?? '';
}

async function startExport() {
  const response = await fetch('export', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ item: view.item }) });
  if (!response.ok) setExport({ state: 'failed', message: (await response.text()).trim() });
}

// Events ---------------------------------------------------------------------------------

function connectEvents(delay = 500) {
  const url = location.href.replace(/^http/, 'ws').replace(/[?#].*$/, '').replace(/\/?$/, '/') + 'events';
  const socket = new WebSocket(url);
  socket.onopen = () => { $('#connection').hidden = true; delay = 500; fetchState(); };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === 'state' && message.generation !== view.data?.generation) fetchState();
    if (message.type === 'export') setExport(message);
  };
  socket.onclose = () => {
    $('#connection').hidden = false;
    setTimeout(() => connectEvents(Math.min(delay * 2, 8000)), delay);
  };
}

// Timeline -------------------------------------------------------------------------------
// Drawn on a canvas: a ruler, one lane per track, the instructions with their ramps, the
// layers (packed into rows) and the cues. Dragging anywhere scrubs.

const lane = { ruler: 22, height: 20, gap: 2, label: 64 };
const colours = { video: '#3a6ea5', audio: '#3f8f5f', instruction: '#555c68', layer: '#8a63d2', text: '#8a63d2', image: '#b0568f', video_layer: '#3a6ea5', cue: '#b07d2b' };

function timeToX(time, width) { return lane.label + (time / Math.max(duration(), 1e-9)) * (width - lane.label - 8); }
function xToTime(x, width) { return ((x - lane.label) / (width - lane.label - 8)) * duration(); }

// Greedy rows: each span goes in the first row where it fits.
function pack(spans) {
  const rows = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    let row = rows.find((r) => r.end <= span.start + 1e-9);
    if (!row) { row = { end: 0, spans: [] }; rows.push(row); }
    row.spans.push(span);
    row.end = span.end;
  }
  return rows.map((row) => row.spans);
}

function timelineLanes(item) {
  const lanes = [];
  for (const track of item.tracks) {
    lanes.push({ title: `${track.mediaType} ${track.id}`, blocks: track.segments.map((s) => ({
      start: s.start, end: s.start + s.duration, label: s.source ?? '(empty)', colour: colours[track.mediaType] ?? '#666', hatched: s.source == null,
    })) });
  }
  if (item.instructions.length) {
    lanes.push({ title: 'instructions', blocks: item.instructions.map((instruction) => ({
      start: instruction.start, end: instruction.start + instruction.duration, colour: colours.instruction,
      label: instruction.layers.map((l) => `track ${l.trackID}`).join(' + '),
      ramps: instruction.layers.flatMap((l) => l.ramps),
    })) });
  }
  for (const ramp of item.audioRamps) {
    lanes.push({ title: `volume ${ramp.trackID}`, blocks: [{ start: ramp.start, end: ramp.start + Math.max(ramp.duration, frameDuration()), colour: colours.audio,
      label: `${ramp.from} → ${ramp.to}`, ramps: [{ start: ramp.start, duration: ramp.duration, from: String(ramp.from), to: String(ramp.to), kind: 'volume' }] }] });
  }
  const layers = item.layers.filter((l) => l.kind !== 'layer' || l.depth > 0);
  pack(layers).slice(0, 8).forEach((row, index) => {
    lanes.push({ title: index === 0 ? 'layers' : '', blocks: row.map((l) => ({
      start: l.start, end: l.end, label: l.name, colour: l.kind === 'video' ? colours.video_layer : colours[l.kind] ?? colours.layer,
    })) });
  });
  pack(item.cues.map((c) => ({ ...c }))).slice(0, 4).forEach((row, index) => {
    lanes.push({ title: index === 0 ? 'cues' : '', blocks: row.map((c) => ({ start: c.start, end: c.end, label: c.text, colour: colours.cue })) });
  });
  return lanes;
}

function drawTimeline() {
  const item = current();
  const width = timeline.parentElement.clientWidth || 800;
  const lanes = item ? timelineLanes(item) : [];
  const height = lane.ruler + lanes.length * (lane.height + lane.gap) + 6;
  const scale = devicePixelRatio || 1;
  if (timeline.width !== Math.round(width * scale) || timeline.height !== Math.round(height * scale)) {
    timeline.width = Math.round(width * scale);
    timeline.height = Math.round(height * scale);
    timeline.style.height = `${height}px`;
  }
  const g = timeline.getContext('2d');
  g.setTransform(scale, 0, 0, scale, 0, 0);
  g.fillStyle = '#15171b';
  g.fillRect(0, 0, width, height);
  if (!item) return;
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  // Loop range.
  if (view.inPoint != null || view.outPoint != null) {
    const from = timeToX(view.inPoint ?? 0, width), to = timeToX(view.outPoint ?? duration(), width);
    g.fillStyle = view.loop ? 'rgba(245,184,0,0.12)' : 'rgba(255,255,255,0.05)';
    g.fillRect(from, 0, to - from, height);
  }
  drawRuler(g, width);
  lanes.forEach((entry, index) => {
    const y = lane.ruler + index * (lane.height + lane.gap);
    g.fillStyle = '#8a919c';
    g.fillText(entry.title, 6, y + lane.height / 2);
    for (const block of entry.blocks) drawBlock(g, block, y, width);
  });
  // Cue and edit-point ticks, then the playhead.
  g.fillStyle = '#f5b800';
  const x = timeToX(view.position, width);
  g.fillRect(Math.round(x) - 1, 0, 2, height);
  g.beginPath();
  g.moveTo(x - 6, 0); g.lineTo(x + 6, 0); g.lineTo(x, 8); g.fill();
}

function drawRuler(g, width) {
  g.fillStyle = '#1d2026';
  g.fillRect(0, 0, width, lane.ruler);
  const seconds = duration();
  const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600];
  const step = steps.find((s) => (s / Math.max(seconds, 1e-9)) * (width - lane.label) >= 70) ?? 600;
  g.fillStyle = '#8a919c';
  for (let t = 0; t <= seconds + 1e-9; t += step) {
    const x = timeToX(t, width);
    g.fillRect(Math.round(x), lane.ruler - 7, 1, 7);
    g.fillText(formatSeconds(t), x + 3, lane.ruler / 2 - 1);
  }
  for (const point of current().editPoints ?? []) g.fillRect(Math.round(timeToX(point, width)), lane.ruler - 3, 1, 3);
}

function drawBlock(g, block, y, width) {
  const x0 = timeToX(block.start, width), x1 = Math.max(x0 + 2, timeToX(block.end, width));
  g.fillStyle = block.colour;
  g.globalAlpha = block.hatched ? 0.35 : 0.85;
  g.fillRect(x0, y, x1 - x0 - 1, lane.height);
  g.globalAlpha = 1;
  if (block.hatched) {
    g.strokeStyle = 'rgba(255,255,255,0.25)';
    g.beginPath();
    for (let x = x0; x < x1; x += 6) { g.moveTo(x, y + lane.height); g.lineTo(Math.min(x + lane.height, x1), y); }
    g.stroke();
  }
  for (const ramp of block.ramps ?? []) {
    const from = Number.parseFloat(ramp.from), to = Number.parseFloat(ramp.to);
    if (!Number.isFinite(from) || !Number.isFinite(to)) continue;
    const rx0 = timeToX(ramp.start, width), rx1 = Math.max(rx0 + 1, timeToX(ramp.start + ramp.duration, width));
    const level = (v) => y + lane.height - 2 - Math.min(Math.max(v, 0), 1) * (lane.height - 4);
    g.strokeStyle = '#f5b800';
    g.lineWidth = 1.5;
    g.beginPath(); g.moveTo(rx0, level(from)); g.lineTo(rx1, level(to)); g.stroke();
    g.lineWidth = 1;
  }
  if (x1 - x0 > 24) {
    g.save();
    g.beginPath(); g.rect(x0, y, x1 - x0 - 3, lane.height); g.clip();
    g.fillStyle = '#fff';
    g.fillText(block.label, x0 + 4, y + lane.height / 2);
    g.restore();
  }
}

function scrubFromPointer(event) {
  const box = timeline.getBoundingClientRect();
  seek(xToTime(event.clientX - box.left, box.width));
}

timeline.addEventListener('pointerdown', (event) => {
  timeline.setPointerCapture(event.pointerId);
  scrubFromPointer(event);
  const move = (e) => scrubFromPointer(e);
  const up = () => { timeline.removeEventListener('pointermove', move); timeline.removeEventListener('pointerup', up); };
  timeline.addEventListener('pointermove', move);
  timeline.addEventListener('pointerup', up);
});

// Clock display --------------------------------------------------------------------------

function formatSeconds(t) {
  const minutes = Math.floor(t / 60), seconds = t - minutes * 60;
  return `${minutes}:${seconds < 10 ? '0' : ''}${seconds.toFixed(seconds % 1 ? 1 : 0)}`;
}

function timecode(t) {
  const rate = Math.round(1 / frameDuration());
  const frames = frameNumberAt(t);
  const wholeSeconds = Math.floor(frames / rate);
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(Math.floor(wholeSeconds / 3600))}:${pad(Math.floor(wholeSeconds / 60) % 60)}:${pad(wholeSeconds % 60)}:${pad(frames % rate)}`;
}

let lastTimelineDraw = 0;
function updateClock() {
  if (!current()) return;
  $('#timecode').textContent = timecode(view.position);
  const total = Math.max(1, Math.round(duration() / frameDuration()));
  $('#frame-number').textContent = `frame ${frameNumberAt(view.position)} / ${total}`;
  const dropped = $('#dropped');
  dropped.textContent = playback.active || playback.framesDropped ? `dropped ${playback.framesDropped}` : '';
  dropped.classList.toggle('some', playback.framesDropped > 0);
  // The timeline is cheap but not free: at most 30 redraws a second.
  const now = performance.now();
  if (now - lastTimelineDraw > 33 || !playback.active) {
    lastTimelineDraw = now;
    drawTimeline();
  }
}

// Keys and buttons -----------------------------------------------------------------------

function stepFrames(count) { seek(frameNumberAt(view.position) * frameDuration() + count * frameDuration() + frameDuration() / 2); }

function jumpToPoint(direction) {
  const item = current();
  if (!item) return;
  const points = [...new Set([...(item.editPoints ?? []), ...item.cues.flatMap((c) => [c.start, c.end])])].sort((a, b) => a - b);
  const here = frameNumberAt(view.position) * frameDuration();
  const target = direction > 0 ? points.find((p) => p > here + frameDuration() / 2) : points.reverse().find((p) => p < here - frameDuration() / 2);
  if (target != null) seek(target + frameDuration() / 2);
}

function setIn() { view.inPoint = frameNumberAt(view.position) * frameDuration(); if (view.outPoint != null && view.outPoint <= view.inPoint) view.outPoint = null; drawTimeline(); }
function setOut() { view.outPoint = (frameNumberAt(view.position) + 1) * frameDuration(); if (view.inPoint != null && view.inPoint >= view.outPoint) view.inPoint = null; drawTimeline(); }
function toggleLoop() { view.loop = !view.loop; $('#loop').checked = view.loop; drawTimeline(); }

document.addEventListener('keydown', (event) => {
  if (event.target.closest?.('input, select, textarea')) return;
  const actions = {
    ' ': togglePlay,
    ArrowLeft: () => (event.shiftKey ? seek(view.position - 1) : stepFrames(-1)),
    ArrowRight: () => (event.shiftKey ? seek(view.position + 1) : stepFrames(1)),
    ArrowUp: () => jumpToPoint(-1),
    ArrowDown: () => jumpToPoint(1),
    Home: () => seek(0),
    End: () => seek(lastFrameTime()),
    i: setIn, I: setIn, o: setOut, O: setOut, l: toggleLoop, L: toggleLoop,
  };
  const action = actions[event.key];
  if (action && !event.ctrlKey && !event.metaKey && !event.altKey) {
    event.preventDefault();
    action();
  }
});

$('#play').addEventListener('click', togglePlay);
$('#step-back').addEventListener('click', () => stepFrames(-1));
$('#step-forward').addEventListener('click', () => stepFrames(1));
$('#prev-point').addEventListener('click', () => jumpToPoint(-1));
$('#next-point').addEventListener('click', () => jumpToPoint(1));
$('#set-in').addEventListener('click', setIn);
$('#set-out').addEventListener('click', setOut);
$('#loop').addEventListener('change', (event) => { view.loop = event.target.checked; drawTimeline(); });
$('#export').addEventListener('click', startExport);
$('#help-button').addEventListener('click', () => { $('#help').hidden = !$('#help').hidden; });
$('#item-select').addEventListener('change', (event) => {
  pause();
  view.item = Number(event.target.value);
  applyState({ ...view.data, generation: view.data.generation });
  view.wantedGeneration = view.data.generation;
  player.width = current()?.width ?? player.width;
  player.height = current()?.height ?? player.height;
  showStill(clamp(view.position));
});
addEventListener('resize', drawTimeline);

// For tests and people at the console: the same paths the controls take.
window.studio = {
  get ready() { return view.ready; },
  get generation() { return view.data?.generation ?? 0; },
  get item() { return view.item; },
  get position() { return view.position; },
  get frameNumber() { return view.shown.number; },
  get shownFrameTime() { return view.shown.time; },
  get shownGeneration() { return view.shown.generation; },
  get playing() { return playback.active; },
  get framesShown() { return playback.framesShown; },
  get framesDropped() { return playback.framesDropped; },
  get lag() { return { max: playback.lag.max, mean: playback.lag.count ? playback.lag.sum / playback.lag.count : 0 }; },
  get audioClock() { return Boolean(usesAudioClock()); },
  get error() { return view.error; },
  get exportState() { return view.exportState; },
  seek, play, pause,
  setParameter: (effectId, name, value) => setParameter(effectId, name, value),
};

connectEvents();
fetchState();

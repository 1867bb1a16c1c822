-- moonreel effects preview: an effect applied with its example over the test pattern.
-- arg: effect name, the picture to draw over (a video or still), output (.png/.jpg/.webp: the frame at `at`; else a
-- clip as long as the picture), at (seconds, or "" for the effect's previewAt, else 1),
-- width, height, extra options (Lua table text, or ""). Returns what `effects gallery`
-- shows: { kind = "layer" | "look", options = the options as Lua text, at = seconds }.
local name, pattern, output, at, width, height, extra = ...
width, height = math.tointeger(tonumber(width)), math.tointeger(tonumber(height))

-- The effect's own errors, without this file's line in front.
local function attempt(call, ...)
  local results = table.pack(pcall(call, ...))
  if not results[1] then error((tostring(results[2]):gsub("^effects preview:%d+: ", "")), 0) end
  return table.unpack(results, 2, results.n)
end

local effect = attempt(require, "effects." .. name)
-- The example comes as read-only views of the effect's tables: copied as plain tables, as
-- `effects install` does, so they cross back into the effect whole.
local function plain(value, depth)
  if type(value) ~= "table" then return value end
  if depth > 16 then error(('effect "%s": example is nested more than 16 tables deep'):format(name), 0) end
  local copy = {}
  for key, field in pairs(value) do copy[key] = plain(field, depth + 1) end
  return copy
end
local options = plain(effect.example or {}, 0)
if extra ~= "" then
  -- Plain values only: the text runs with no globals at all.
  local chunk, problem = load("return " .. extra, "=--with", "t", {})
  if not chunk then error("--with: " .. problem, 0) end
  local ok, given = pcall(chunk)
  if not ok or type(given) ~= "table" then error("--with must be a Lua table of options, e.g. '{ text = \"Hi\" }'", 0) end
  for key, value in pairs(given) do options[key] = value end
end
-- A picture given with --over is shown for 8 s, as the test pattern is.
local still = ({ png = true, jpg = true, jpeg = true, webp = true })[(pattern:match("%.(%w+)$") or ""):lower()]
local comp, vc = av.join({ { av.asset(pattern), duration = still and 8 or nil } },
                         { renderSize = { width, height }, fit = "fill" })

local picture
for _, parameter in ipairs(effect.parameters) do
  -- Drawn at the preview's size, whatever size the example was written for.
  if parameter.name == "renderSize" then options.renderSize = { width, height } end
  -- An example cannot hold an image: the first picture of the background stands in.
  if parameter.type == "image" and options[parameter.name] == nil then
    if not picture then
      local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
      picture = generator:copyCGImageAtTime(0)
    end
    options[parameter.name] = picture
  end
  -- Nor a sound: the background itself stands in (the test pattern has a tone).
  if parameter.type == "asset" and options[parameter.name] == nil then
    options[parameter.name] = av.asset(pattern)
  end
end

local made, kind, transitionStart, transitionEntry
if effect.kind == "transition" then
  -- A transition joins the picture to a 4 s title card, drawn by the
  -- effect with its options; the join gives renderSize, start and duration.
  local entry = { name }
  for key, value in pairs(options) do
    if key ~= "renderSize" and key ~= "start" then entry[key] = value end
  end
  transitionEntry = entry
  local parts
  comp, vc, _, parts = av.join({ { av.asset(pattern), duration = still and 8 or nil }, av.titleCard{ title = "Next", duration = 4, backgroundColor = "#1E3A8A" } },
                               { transitions = { entry }, renderSize = { width, height }, fit = "fill" })
  transitionStart, kind = parts[2].timeRange.start, "transition"
else
  made = attempt(effect, options)
  kind = getmetatable(made) and getmetatable(made).__name or type(made)
end
if kind == "transition" then
  -- drawn by the join
elseif kind == "moonreel.Layer" or kind == "moonreel.TextLayer" then
  local parent, video = av.layer{ frame = { 0, 0, width, height } }, av.layer{ frame = { 0, 0, width, height } }
  parent:addSublayer(video)
  parent:addSublayer(made)
  vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
elseif type(made) == "table" and #made > 0 then
  vc.filters = made     -- a look: filters for the whole picture
else
  error(('effect "%s" returned %s: a preview needs a layer or a list of filters'):format(name, kind), 0)
end

local time = tonumber(at) or effect.previewAt or 1
-- A transition's previewAt counts from its start.
if transitionStart and tonumber(at) == nil then time = transitionStart + time end
if math.type(time) == nil or time < 0 then
  error(('effect "%s": previewAt must be a number of seconds from 0, got %s'):format(name, tostring(time)), 0)
end
local extension = output:match("%.([%w]+)$")
extension = extension and extension:lower()
if extension == "png" or extension == "jpg" or extension == "jpeg" or extension == "webp" then
  local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
  attempt(generator.copyImage, generator, time, output)
else
  local session = av.exportSession(comp, "MediumQuality")
  session.videoComposition, session.outputURL = vc, output
  local ok, problem = session:export()
  if not ok then error(problem, 0) end
end

-- The options as a script would write them (renderSize shown as a 1920x1080 video's).
local function lua(value, depth)
  if type(value) == "string" then return ("%q"):format(value) end
  if type(value) == "userdata" and (getmetatable(value) or {}).__name == "moonreel.Image" then return 'av.image("picture.png")' end
  if type(value) == "userdata" and (getmetatable(value) or {}).__name == "moonreel.Asset" then return 'av.asset("episode.m4a")' end
  if type(value) ~= "table" then return tostring(value) end
  if depth > 4 then return "{ … }" end
  local parts, count = {}, #value
  for i = 1, count do parts[#parts + 1] = lua(value[i], depth + 1) end
  local keys = {}
  for key in pairs(value) do
    if not (math.type(key) == "integer" and key >= 1 and key <= count) then keys[#keys + 1] = key end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, key in ipairs(keys) do
    local shown = type(key) == "string" and key:match("^[%a_][%w_]*$") and key or "[" .. lua(key, depth + 1) .. "]"
    parts[#parts + 1] = shown .. " = " .. lua(value[key], depth + 1)
  end
  return #parts == 0 and "{}" or "{ " .. table.concat(parts, ", ") .. " }"
end
if options.renderSize then options.renderSize = { 1920, 1080 } end
-- A transition is shown as the join's entry: { "name", duration = …, its options }.
return { kind = transitionStart and "transition" or vc.filters and #vc.filters > 0 and "look" or "layer",
         options = lua(transitionEntry or options, 0), at = time }

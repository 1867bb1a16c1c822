-- Prints av.analyze's music analysis of a file as one JSON object, for bench/analysis.py (issue 36):
-- {"duration":…, "tempo":… or null, "tempoConfidence":…, "beats":[…], "downbeats":[…],
--  "onsets":[[time, strength], …], plus any of beatConfidence, steady, meter when the build reports them}.
-- The caller points XDG_CACHE_HOME at an empty folder, so nothing comes from the cache.
-- usage: moonreel run bench/beats.lua SONG
local a = av.analyze(av.asset(arg[1]), { video = false })

local function num(v)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then return "null" end
  return string.format("%.4f", v)
end

local function list(t, f)
  local out = {}
  for i, v in ipairs(t or {}) do out[i] = f(v) end
  return "[" .. table.concat(out, ",") .. "]"
end

local parts = {
  '"duration":' .. num(a.duration),
  '"tempo":' .. num(a.tempo),
  '"tempoConfidence":' .. num(a.tempoConfidence),
  '"beats":' .. list(a.beats, num),
  '"downbeats":' .. list(a.downbeats, num),
  '"onsets":' .. list(a.onsets, function(o) return "[" .. num(o.time) .. "," .. num(o.strength) .. "]" end),
}
-- fields a later build may add (issue 36); left out when absent
if a.beatConfidence ~= nil then parts[#parts + 1] = '"beatConfidence":' .. num(a.beatConfidence) end
if a.steady ~= nil then parts[#parts + 1] = '"steady":' .. (a.steady and "true" or "false") end
if a.meter ~= nil then parts[#parts + 1] = '"meter":' .. num(a.meter) end
if a.meterConfidence ~= nil then parts[#parts + 1] = '"meterConfidence":' .. num(a.meterConfidence) end
if type(a.tempoCandidates) == "table" then
  parts[#parts + 1] = '"tempoCandidates":' .. list(a.tempoCandidates, function(c)
    if type(c) == "table" then return "[" .. num(c.bpm or c[1]) .. "," .. num(c.score or c[2]) .. "]" end
    return num(c)
  end)
end
io.write("{" .. table.concat(parts, ",") .. "}\n")

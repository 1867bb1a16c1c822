-- Prints av.analyze's scene analysis of a video as one JSON object, for bench/transitions.py (issue 36 §6):
-- {"cuts":[[time, score], …], "transitions":[[time, duration, "kind"], …]}.
-- The caller points XDG_CACHE_HOME at an empty folder, so nothing comes from the cache.
-- usage: moonreel run bench/transitions.lua VIDEO
local a = av.analyze(av.asset(arg[1]), { audio = false })

local function list(t, f)
  local out = {}
  for i, v in ipairs(t or {}) do out[i] = f(v) end
  return "[" .. table.concat(out, ",") .. "]"
end

io.write("{" .. '"cuts":' .. list(a.sceneCuts, function(c) return string.format("[%.4f,%.4f]", c.time, c.score) end)
  .. ',"transitions":' .. list(a.transitions, function(t) return string.format('[%.4f,%.4f,"%s"]', t.time, t.duration, t.kind) end)
  .. "}\n")

-- An effect making 4 000 animated text layers while it keeps 0, 10 000 and 50 000 tables
-- alive: what each call into the engine costs as an effect's heap grows (bench/RESULTS.md).
local heavy = require "effects.heavy"
for _, keep in ipairs({ 0, 10000, 50000 }) do
  local t = os.clock()
  local ok, e = pcall(heavy, { keep = keep })
  print(keep, ok and "ok" or e, os.clock() - t)
end

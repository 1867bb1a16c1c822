-- `print` for a host that takes the lines itself: the arguments through tostring, joined
-- by tabs, as one line (without the newline) to the host's `write`. In Lua so that
-- tostring and __tostring run in the caller's coroutine, under its limits, and an error
-- there is an ordinary Lua error at the calling line.
local write = ...
local tostring, select, concat = tostring, select, table.concat
return function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  write(concat(parts, "\t"))
end

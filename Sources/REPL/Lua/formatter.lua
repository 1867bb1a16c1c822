-- Formats a REPL statement's results as lua.c prints them (tab-separated tostrings), with
-- a short preview of tables ({AssetTrack(video …), AssetTrack(audio …)}) instead of their
-- address, since arrays of engine objects are what the API returns most.
local tostring, type, select, next, rawget, rawlen = tostring, type, select, next, rawget, rawlen
local getmetatable, concat, format, min, mathtype = getmetatable, table.concat, string.format, math.min, math.type
local limit = 8
local function short(value)
  if type(value) == "string" then return format("%q", value) end
  if type(value) == "table" then return "{…}" end
  return tostring(value)
end
local function preview(t)
  local mt = getmetatable(t)
  if type(mt) == "table" and rawget(mt, "__tostring") ~= nil then return tostring(t) end
  local parts, n = {}, rawlen(t)
  for i = 1, min(n, limit) do parts[#parts + 1] = short(rawget(t, i)) end
  local shown = #parts
  for k, v in next, t do
    if not (mathtype(k) == "integer" and k >= 1 and k <= n) then
      if shown >= limit then parts[#parts + 1] = "…" break end
      local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. short(k) .. "]"
      parts[#parts + 1] = key .. " = " .. short(v)
      shown = shown + 1
    end
  end
  if n > limit then parts[#parts + 1] = "… (" .. n .. " items)" end
  return "{" .. concat(parts, ", ") .. "}"
end
return function(...)
  local parts = {}
  for i = 1, select("#", ...) do
    local value = select(i, ...)
    parts[i] = type(value) == "table" and preview(value) or tostring(value)
  end
  return concat(parts, "\t")
end

-- One filter of the video composition over seconds START..START+DURATION, for bench/run.sh
-- (re-encoded with HighestQuality, as ffmpeg's side is).
-- usage: moonreel run bench/filter.lua IN OUT START DURATION FILTER [KEY=VALUE ...]
local asset = av.asset(arg[1])
local comp = av.composition()
comp:insertTimeRange(av.range(tonumber(arg[3]), tonumber(arg[4])), asset, 0)
local parameters = {}
for i = 6, #arg do
  local key, value = arg[i]:match("^(%w+)=(.+)$")
  parameters[key] = tonumber(value) or value
end
local vc = av.videoComposition(comp, { filters = { av.filter(arg[5], parameters) } })
local session = av.exportSession(comp, "HighestQuality")
session.outputURL = arg[2]
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end

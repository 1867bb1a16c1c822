-- The passthrough cut for bench/run.sh: seconds START..START+DURATION copied, not re-encoded.
-- usage: moonreel run bench/passthrough.lua IN OUT START DURATION
local asset = av.asset(arg[1])
local comp = av.composition()
comp:insertTimeRange(av.range(tonumber(arg[3]), tonumber(arg[4])), asset, 0)
local session = av.exportSession(comp, "Passthrough")
session.outputURL = arg[2]
local ok, err = session:export()
if not ok then error(err, 0) end

-- Join clips one after another, with their audio. Clips of other shapes (a portrait
-- phone clip after a landscape one) are fitted into the first clip's frame.
--
-- usage: moonreel run concat.lua OUT.mp4 CLIP1 CLIP2 [CLIP3 ...]
local output = arg[1]
if not (output and arg[3]) then
  error("usage: moonreel run concat.lua OUT.mp4 CLIP1 CLIP2 [CLIP3 ...]", 0)
end

local comp = av.composition()
for i = 2, #arg do
  local asset = av.asset(arg[i])
  -- Every track of the clip goes into the matching composition track, at the end.
  comp:insertTimeRange(av.range(0, asset.durationTime), asset, comp.durationTime)
end

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = av.videoComposition(comp, { fit = "fit" })
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %d clips, %.3f s"):format(output, #arg - 1, comp.duration))

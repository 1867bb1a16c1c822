-- A portrait phone clip, exported upright; or, given a landscape clip too, both one after
-- the other in one landscape export: the portrait clip is fitted into the landscape frame
-- (aspect kept) with COLOR bars left and right.
--
-- usage: moonreel run portrait.lua OUT.mp4 PORTRAIT [LANDSCAPE [COLOR]]
--        (default COLOR: "black")
local output, portraitPath, landscapePath = arg[1], arg[2], arg[3]
if not (output and portraitPath) then
  error("usage: moonreel run portrait.lua OUT.mp4 PORTRAIT [LANDSCAPE [COLOR]]", 0)
end

local comp = av.composition()
local vc
if landscapePath then
  local landscape, portrait = av.asset(landscapePath), av.asset(portraitPath)
  comp:insertTimeRange(av.range(0, landscape.durationTime), landscape, 0)
  comp:insertTimeRange(av.range(0, portrait.durationTime), portrait, comp.durationTime)
  -- The first (landscape) clip's upright size is the frame; every clip is scaled to fit it.
  vc = av.videoComposition(comp, { fit = "fit" })
  vc.instructions[1].backgroundColor = arg[4] or "black"
else
  local portrait = av.asset(portraitPath)
  comp:insertTimeRange(av.range(0, portrait.durationTime), portrait, 0)
  -- Size, rate and the turn that makes it upright come from the file itself.
  vc = av.videoComposition(comp)
end

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
local size = vc.renderSize
print(("wrote %s: %d×%d, %.3f s"):format(output, size.width, size.height, comp.duration))

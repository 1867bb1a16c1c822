-- Trim a long recording to the part worth keeping, frame-exact, in seconds rather than
-- minutes: the SmartCut preset copies every whole GOP of H.264 or HEVC video as it is and
-- re-encodes only the frames between each cut and the nearest keyframe. Other sources
-- (other codecs, a video composition, speed changes) are re-encoded whole, with a note
-- saying why.
--
-- usage: moonreel run trim.lua IN.mp4 OUT.mp4 START DURATION [PRESET]   (default: SmartCut)
local input, output = arg[1], arg[2]
local start, duration = tonumber(arg[3]), tonumber(arg[4])
if not (input and output and start and duration) then
  error("usage: moonreel run trim.lua IN.mp4 OUT.mp4 START DURATION [PRESET]", 0)
end

local asset = av.asset(input)
local comp = av.composition()
comp:insertTimeRange(av.range(start, duration), asset, 0)

local session = av.exportSession(comp, arg[5] or "SmartCut")
session.outputURL = output
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s from %s"):format(output, comp.duration, input))

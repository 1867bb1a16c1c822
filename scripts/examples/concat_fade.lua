-- Two clips joined with a one-second cross-dissolve; the sound crossfades with the
-- pictures and fades out over the last three seconds.
--
-- usage: moonreel run concat_fade.lua OUT.mp4 CLIP1 CLIP2 [SECONDS_OF_EACH]
local output, firstPath, secondPath = arg[1], arg[2], arg[3]
if not (output and firstPath and secondPath) then
  error("usage: moonreel run concat_fade.lua OUT.mp4 CLIP1 CLIP2 [SECONDS_OF_EACH]", 0)
end
local dissolve = 1
local first, second = av.asset(firstPath), av.asset(secondPath)
local limit = tonumber(arg[4]) or math.huge
local firstLength = math.min(limit, first.duration)
local secondLength = math.min(limit, second.duration)
local total = firstLength + secondLength - dissolve
local join = firstLength - dissolve          -- where the dissolve starts

local comp = av.composition()
local function place(asset, length, at, mediaType)
  local source = asset:tracksWithMediaType(mediaType)[1]
  if not source then return nil end
  local track = comp:addMutableTrack(mediaType)
  track:insertTimeRange(av.range(0, length), source, at)
  return track
end
local video1 = place(first, firstLength, 0, "video")
local video2 = place(second, secondLength, join, "video")
local audio1 = place(first, firstLength, 0, "audio")
local audio2 = place(second, secondLength, join, "audio")
assert(video1 and video2, "both clips need a video track")

-- Frame size and rate from the first clip; each clip upright and fitted into that frame
-- (a portrait clip after a landscape one keeps its shape). The layer instructions made for
-- the two tracks carry those transforms; the first one fades out over the second.
local vc = av.videoComposition(comp, { fit = "fit" })
local top, under = table.unpack(vc.instructions[1].layerInstructions)
top:setOpacityRamp(1, 0, av.range(join, dissolve))
vc.instructions = {
  av.videoCompositionInstruction{ timeRange = av.range(0, join), layerInstructions = { top } },
  av.videoCompositionInstruction{ timeRange = av.range(join, dissolve), layerInstructions = { top, under } },
  av.videoCompositionInstruction{ timeRange = av.rangeFromTo(firstLength, total), layerInstructions = { under } },
}

local mix = {}
if audio1 then
  local p = av.audioMixInputParameters(audio1)
  p:setVolumeRamp(1, 0, av.range(join, dissolve))
  mix[#mix + 1] = p
end
if audio2 then
  local p = av.audioMixInputParameters(audio2)
  p:setVolumeRamp(0, 1, av.range(join, dissolve))
  p:setVolumeRamp(1, 0, av.range(math.max(total - 3, firstLength), math.min(3, total - firstLength)))
  mix[#mix + 1] = p
end

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
session.audioMix = av.audioMix{ inputParameters = mix }
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s with a %d s cross-dissolve at %.3f s"):format(output, total, dissolve, join))

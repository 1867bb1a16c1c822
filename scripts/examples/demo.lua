-- The built-in demo (`moonreel demo`): runs on a test clip Moonreel makes itself.
-- usage: moonreel run demo.lua CLIP OUTPUT_FOLDER
local clip, folder = arg[1], arg[2] or "."
if not clip then error("usage: moonreel run demo.lua CLIP OUTPUT_FOLDER", 0) end

local asset = av.asset(clip)
print(("source: %s"):format(tostring(asset)))

-- 1. Cut seconds 2–5 (video and audio).
local cut = av.composition()
cut:insertTimeRange(av.range(2, 3), asset, 0)
local session = av.exportSession(cut, "HighestQuality")
session.outputURL = folder .. "/cut.mp4"
session.overwrite = true
assert(session:export())
print(("cut:    %s (%.3f s)"):format(session.outputURL, cut.duration))

-- 2. Two pieces joined with a one-second cross-dissolve and a fade-out of the audio.
local comp = av.composition()
local first = comp:addMutableTrack("video")
local second = comp:addMutableTrack("video")
local audio = comp:addMutableTrack("audio")
local videoTrack = asset:tracksWithMediaType("video")[1]
local audioTrack = asset:tracksWithMediaType("audio")[1]
first:insertTimeRange(av.range(0, 3), videoTrack, 0)
second:insertTimeRange(av.range(5, 3), videoTrack, 2)
audio:insertTimeRange(av.range(0, 5), audioTrack, 0)

local vc = av.videoComposition{ renderSize = videoTrack.naturalSize, frameDuration = av.time(1, 30) }
local fadeOut = av.layerInstruction(first)
fadeOut:setOpacityRamp(1, 0, av.range(2, 1))
local underneath = av.layerInstruction(second)
vc.instructions = {
  av.videoCompositionInstruction{ timeRange = av.range(0, 2), layerInstructions = { av.layerInstruction(first) } },
  av.videoCompositionInstruction{ timeRange = av.range(2, 1), layerInstructions = { fadeOut, underneath } },
  av.videoCompositionInstruction{ timeRange = av.range(3, 2), layerInstructions = { av.layerInstruction(second) } },
}
local volume = av.audioMixInputParameters(audio)
volume:setVolumeRamp(1, 0, av.range(comp.duration - 3, 3))

session = av.exportSession(comp, "HighestQuality")
session.outputURL = folder .. "/dissolve.mp4"
session.videoComposition = vc
session.audioMix = av.audioMix{ inputParameters = { volume } }
session.overwrite = true
assert(session:export())
print(("dissolve: %s (%.3f s)"):format(session.outputURL, comp.duration))

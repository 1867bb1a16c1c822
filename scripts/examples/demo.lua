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

-- 3. Lyrics from a CSV (Japanese and English lines) and a copyright line over the clip.
local csv = folder .. "/lyrics.csv"
local file = assert(io.open(csv, "w"))
file:write("id,lyric,start_at,end_at\n",
           "1,きらきら光る お空の星よ,0.5,2.5\n",
           '2,"Twinkle, twinkle, little star",2.5,4.5\n',
           "3,まばたきしては みんなを見てる,4.5,6.5\n",
           "4,How I wonder what you are,6.5,8.0\n")
file:close()

local whole = av.composition()
whole:insertTimeRange(av.range(0, asset.durationTime), asset, 0)
local lyricsComposition = av.videoComposition(whole)
local size = lyricsComposition.renderSize
local parent = av.layer{ frame = { 0, 0, size.width, size.height } }
local video = av.layer{ frame = { 0, 0, size.width, size.height } }
parent:addSublayer(video)
parent:addSublayer(require("effects.lyrics"){
  cues = av.readCues(csv), renderSize = { size.width, size.height }, fadeIn = 0.2, fadeOut = 0.2,
})
parent:addSublayer(require("effects.watermark"){ renderSize = { size.width, size.height }, text = "© 2026 Moonreel demo" })
lyricsComposition.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

session = av.exportSession(whole, "HighestQuality")
session.outputURL = folder .. "/lyrics.mp4"
session.videoComposition = lyricsComposition
session.overwrite = true
assert(session:export())
print(("lyrics: %s (%.3f s)"):format(session.outputURL, whole.duration))
av.imageGenerator(whole, { videoComposition = lyricsComposition }):copyImage(3, folder .. "/lyrics-at-3s.png")
print(("still:  %s"):format(folder .. "/lyrics-at-3s.png"))

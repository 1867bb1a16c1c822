-- Cut a few seconds out of a movie: the classic AVFoundation example, in Lua.
-- AVURLAsset → AVMutableComposition (a video and an audio track) → insertTimeRange →
-- a layer instruction with the track's preferredTransform → AVAssetExportSession.
--
-- usage: moonreel run cut.lua IN.mov OUT.mov [START [DURATION]]   (default: 2 s for 3 s)
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run cut.lua IN.mov OUT.mov [START [DURATION]]", 0)
end
local start = tonumber(arg[3] or "2")
local duration = tonumber(arg[4] or "3")

local asset = av.asset(input)
local videoTrack = asset:tracksWithMediaType("video")[1]
if not videoTrack then error(input .. " has no video track", 0) end
local audioTrack = asset:tracksWithMediaType("audio")[1]

local comp = av.composition()
local range = av.range(start, duration)
local video = comp:addMutableTrack("video")
video:insertTimeRange(range, videoTrack, 0)
if audioTrack then
  -- Audio that ends before the video (common on phones) leaves silence, as in AVFoundation.
  comp:addMutableTrack("audio"):insertTimeRange(range, audioTrack, 0)
end

-- Show the clip upright: the preferred transform maps the stored picture (portrait phone
-- video is stored sideways) onto the upright one, top-left corner at (0, 0).
local t = videoTrack.preferredTransform
local size = videoTrack.naturalSize
local portrait = t.a == 0 and t.d == 0 and (t.b == 1 or t.b == -1) and (t.c == 1 or t.c == -1)
-- The clip's own frame duration, exactly (1001/30000 s at 29.97 fps), so every frame is kept
-- and a camera's timecode can be carried over.
local vc = av.videoComposition{
  renderSize = portrait and { size.height, size.width } or { size.width, size.height },
  frameDuration = videoTrack.nominalFrameDuration,
}
local instruction = av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration) }
local layer = av.layerInstruction(video)
layer:setTransform(t, 0)
instruction.layerInstructions = { layer }
vc.instructions = { instruction }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s, %dx%d"):format(output, comp.duration, vc.renderSize.width, vc.renderSize.height))

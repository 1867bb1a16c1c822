-- Slow motion in the middle of a clip: START..START+LENGTH plays at SPEED (0.5 = half
-- speed), pictures and sound together; the sound keeps its pitch unless PITCH is
-- "varispeed" (then it drops like a tape slowed down). Phone video comes out upright.
--
-- usage: moonreel run slowmo.lua IN.mov OUT.mov [START [LENGTH [SPEED [PITCH]]]]
--        (default: 2 s for 2 s at 0.5, PITCH "spectral")
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run slowmo.lua IN.mov OUT.mov [START [LENGTH [SPEED [PITCH]]]]", 0)
end
local start = tonumber(arg[3] or "2")
local length = tonumber(arg[4] or "2")
local speed = tonumber(arg[5] or "0.5")
local pitch = arg[6] or "spectral"
if not (start and length and speed and speed > 0) then
  error("START and LENGTH must be numbers of seconds and SPEED a positive number", 0)
end

local asset = av.asset(input)
if start + length > asset.duration then
  error(("%s is %.3f s long: it has no %.3f…%.3f s to slow down"):format(input, asset.duration, start, start + length), 0)
end

-- Every track of the clip, then the section stretched: scaleTimeRange moves what follows.
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.duration), asset, 0)
comp:scaleTimeRange(av.range(start, length), length / speed)

-- Size, frame rate and the upright transform come from the clip itself.
local vc = av.videoComposition(comp)

local mix = {}
for _, track in ipairs(comp:tracksWithMediaType("audio")) do
  local p = av.audioMixInputParameters(track)
  p.audioTimePitchAlgorithm = pitch
  mix[#mix + 1] = p
end

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
session.audioMix = av.audioMix{ inputParameters = mix }
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s, %.3f…%.3f s at %gx"):format(output, comp.duration, start, start + length / speed, speed))
